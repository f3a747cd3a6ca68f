"""The stateless fast path: a plain `tools/call` or `tools/list` answered without the SDK's dispatch.

Without sessions (`[serve] sessions = false`) nearly every request is a client listing the
meta-tools or calling one and waiting for the answer. The SDK reaches that answer through a
per-request connection (for a handshake-era client, a transport and a server task of its own),
a dispatch context, its middleware chain, a handler context, and two rounds of validating and
dumping the result; over loopback that is most of the server's CPU a call (docs/mcp.md#load).
This answers such a request from the same handlers (`Answers`, the MCP server's own), checked by
the SDK's own rules, with the bytes the SDK would send, and hands every other request to the SDK
as it came:

- answered here: one JSON-RPC request (with an id) `tools/call` or `tools/list`, posted with
  `Content-Type: application/json`, an `Accept` that takes JSON, and one `MCP-Protocol-Version`
  header naming 2026-07-28 or a handshake-era version in `LEGACY`; params that the SDK's request
  ladder accepts and that carry nothing but the tool's name and arguments (a `tools/list` no
  cursor), and for 2026-07-28 the per-request envelope (`_meta`: protocol version, client info
  and capabilities) with routing headers that agree with the body and appear once;
- handed on: everything else, among it any `Mcp-Param-*` header, a progress token,
  `requestState` or input responses (an elicitation's second round), a 2026-07-28 client that
  declares elicitation to a gate that asks through it (the call may need its question), any other
  `_meta` key (trace context), and every request while OpenTelemetry records spans in this process
  (the SDK's middleware makes them).

A call is the same call either way: the caller's principal and toolsets, the session its
`Mcp-Session-Id` names (`Answers.session_of`), a cancel by request id (`RunningCalls`), and
`Gateway.call`, the chokepoint. `[serve] fast_path = false` sends every request through the SDK;
the tests send the same requests both ways and compare the bytes.
"""

from __future__ import annotations

import json
import weakref
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass
from typing import Any, Protocol

import mcp_types as types
import pydantic_core
from mcp.server import Server
from mcp.server.caching import apply_cache_hint
from mcp.server.request_state import RequestStateBoundary
from mcp.server.runner import modern_error_data
from mcp.shared.exceptions import MCPError
from mcp.shared.inbound import (
    ERROR_CODE_HTTP_STATUS,
    MCP_PARAM_HEADER_PREFIX,
    InboundModernRoute,
    classify_inbound_request,
)
from mcp.shared.jsonrpc_dispatcher import handler_exception_to_error_data
from mcp_types import methods
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from ..context import Principal, ToolContext
from ..engine import Gateway
from ..telemetry.setup import spans_recorded
from . import mcp
from .mcp_calls import REQUEST_CANCELLED, RunningCalls

Scope = MutableMapping[str, Any]
Send = Any  # the ASGI send callable

ENVELOPE = frozenset(
    {types.PROTOCOL_VERSION_META_KEY, types.CLIENT_INFO_META_KEY, types.CLIENT_CAPABILITIES_META_KEY}
)
"""The `_meta` keys of a 2026-07-28 request's per-request envelope: the only ones a claimed request carries."""

LEGACY = frozenset({"2025-06-18", "2025-11-25"})
"""The handshake-era versions answered here: those whose tool results the fast path writes as the SDK does
(earlier ones have no structured content; their answers are the SDK's to shape)."""

_ENVELOPE_KEYS = frozenset({"jsonrpc", "id", "method", "params"})
_PARAMS = {"tools/call": frozenset({"name", "arguments", "_meta"}), "tools/list": frozenset({"_meta"})}
"""The params a claimed request may carry (`_meta` only in the 2026-07-28 envelope)."""
_PARAM_PREFIX = MCP_PARAM_HEADER_PREFIX.lower().encode()
_JSON_HEADERS = [(b"content-type", b"application/json")]

_FAST: weakref.WeakKeyDictionary[Server[Any], FastPath] = weakref.WeakKeyDictionary()


class Answers(Protocol):
    """What the fast path answers from: the MCP server's own handlers (`mcp_server`)."""

    gw: Gateway
    running: RunningCalls
    tools: types.ListToolsResult

    def principal(self) -> Principal:
        """The current caller, confined to its token's and endpoint's toolsets."""
        ...

    def session_of(self, header: str | None) -> str:
        """The usage session a request belongs to, from its `Mcp-Session-Id` header (None: none sent)."""
        ...


def register(server: Server[Any], fast: FastPath) -> None:
    """Record `fast` as the fast path of `server`, for its HTTP application to put in front (`fast_path`)."""
    _FAST[server] = fast


def fast_path(server: Server[Any]) -> FastPath | None:
    """The fast path `register` recorded for `server`, if any."""
    return _FAST.get(server)


@dataclass(frozen=True, slots=True)
class Claim:
    """A request the fast path answers: its id, method, protocol version, and (for a call) tool and arguments."""

    request_id: int | str
    method: str
    version: str
    name: str = ""
    arguments: Mapping[str, Any] | None = None
    session: str | None = None


class FastPath:
    """Claims the plain stateless requests (`claim`) and answers them as the SDK would (`answer`).

    Args:
        server: the MCP server whose requests these are (its middleware, cache hints, identity).
        answers: its handlers.
    """

    def __init__(self, server: Server[Any], answers: Answers) -> None:
        self.server = server
        self.answers = answers
        self._lists: dict[str, dict[str, Any]] = {}
        # Middleware the fast path knows to do nothing for a claimed request; any other (added by a
        # host) must see every request, so then nothing is claimed.
        known = (RequestStateBoundary, type(server.middleware[0])) if server.middleware else ()
        self._plain_middleware = all(isinstance(m, known) for m in server.middleware)
        # The server's identity, as the SDK stamps each answer; written out at once, never changed.
        self._stamp = {types.SERVER_INFO_META_KEY: server.server_info_stamp}

    def claim(self, scope: Scope, message: Any) -> Claim | None:
        """The request in `message` (posted with `scope`'s headers) if the fast path answers it, else None.

        `message` is any JSON value; a claimed one is a well-formed request of a version served.
        """
        if not isinstance(message, dict):
            return None
        if not message.keys() <= _ENVELOPE_KEYS or message.get("jsonrpc") != "2.0":
            return None
        method, request_id = message.get("method"), message.get("id")
        if not isinstance(method, str) or (allowed := _PARAMS.get(method)) is None:
            return None
        if not isinstance(request_id, int | str) or isinstance(request_id, bool):
            return None
        params = message.get("params", {} if method == "tools/list" else None)
        if not isinstance(params, dict) or not params.keys() <= allowed:
            return None
        headers = _headers(scope)
        if headers is None or not self._plain_middleware or spans_recorded():
            return None
        legacy = headers["mcp-protocol-version"] in LEGACY
        version = self._legacy(params, headers) if legacy else self._modern(message, params, headers)
        if version is None:
            return None
        try:
            methods.validate_client_request(method, version, params)
        except Exception:  # the SDK answers what its ladder refuses
            return None
        if method == "tools/list":
            return Claim(request_id, method, version)
        arguments = params.get("arguments")
        return Claim(request_id, method, version, params["name"], arguments, headers.get("mcp-session-id"))

    def _modern(self, message: dict[str, Any], params: dict[str, Any], headers: dict[str, str]) -> str | None:
        """The version of a 2026-07-28 request the fast path answers, or None."""
        meta = params.get("_meta")
        if not isinstance(meta, dict) or not meta.keys() <= ENVELOPE:
            return None
        if not headers.get("content-type", "").lower().startswith("application/json"):
            return None
        verdict = classify_inbound_request(message, headers=headers)
        if (
            not isinstance(verdict, InboundModernRoute)
            or verdict.protocol_version not in MODERN_PROTOCOL_VERSIONS
        ):
            return None
        capabilities = verdict.client_capabilities
        if (
            message["method"] == "tools/call"
            and isinstance(capabilities, Mapping)
            and capabilities.get("elicitation") is not None
            and self.answers.gw.gate.allows("elicitation")
        ):
            return None  # a pending call would ask its question through the SDK's elicitation round
        return verdict.protocol_version

    def _legacy(self, params: dict[str, Any], headers: dict[str, str]) -> str | None:
        """The version of a handshake-era request the fast path answers, or None.

        Stateless, such a request comes without the `initialize` of its connection, so its client
        has declared no capabilities here: the SDK's server asks it nothing either.
        """
        if "_meta" in params:
            return None  # a progress token, or anything else the SDK reads
        content_type = headers.get("content-type", "")
        # The SDK's transport checks the type exactly, its security check by prefix.
        parts = [part.strip() for part in content_type.split(";")[0].split(",")]
        if "application/json" not in parts or not content_type.lower().startswith("application/json"):
            return None
        return headers["mcp-protocol-version"]

    async def answer(self, claim: Claim, send: Send) -> None:
        """Answer `claim` on `send`: status, headers and body as the SDK's stateless JSON answer."""
        modern = claim.version in MODERN_PROTOCOL_VERSIONS
        try:
            result = (
                await self._call(claim, modern) if claim.method == "tools/call" else self._list(claim.version)
            )
        except Exception as exc:  # as the SDK maps a handler's failure to the wire
            if modern:
                error = types.JSONRPCError(jsonrpc="2.0", id=claim.request_id, error=modern_error_data(exc))
                await _send(send, ERROR_CODE_HTTP_STATUS.get(error.error.code, 200), _dump(error))
            else:  # the handshake-era transport answers an error with 200, as a result
                data = handler_exception_to_error_data(exc) or modern_error_data(exc)
                error = types.JSONRPCError(jsonrpc="2.0", id=claim.request_id, error=data)
                await _send_legacy(send, error.model_dump_json(by_alias=True, exclude_unset=True).encode())
            return
        body = {"jsonrpc": "2.0", "id": claim.request_id, "result": result}
        if modern:
            await _send(send, 200, body)
        else:
            await _send_legacy(send, pydantic_core.to_json(body))

    async def _call(self, claim: Claim, modern: bool) -> dict[str, Any]:
        answers = self.answers
        principal = answers.principal()
        context = ToolContext(principal=principal, session_id=answers.session_of(claim.session))
        with answers.running.track(claim.request_id, principal.id) as scope:
            result = await answers.gw.call(claim.name, dict(claim.arguments or {}), context)
        if scope.cancelled_caught:  # cancelled by the client, which has stopped waiting
            raise MCPError(REQUEST_CANCELLED, "Request cancelled")
        shown = mcp.call_result(result)
        # The key order of the SDK's result sieve for each era (tested both ways, byte for byte).
        content = [{"text": item["text"], "type": item["type"]} for item in shown["content"]]
        if not modern:
            return {
                "content": content,
                "isError": shown["isError"],
                "structuredContent": shown["structuredContent"],
            }
        return {
            "content": content,
            "isError": shown["isError"],
            "resultType": "complete",
            "structuredContent": shown["structuredContent"],
            "_meta": self._stamp,
        }

    def _list(self, version: str) -> dict[str, Any]:
        """The tools/list result: the same three tools for every caller, so shaped once per version."""
        if version not in self._lists:
            result: Any = self.answers.tools
            if (hint := self.server.cache_hints.get("tools/list")) is not None:
                result = apply_cache_hint(result, hint)
            dumped = result.model_dump(by_alias=True, mode="json", exclude_none=True)
            shaped = methods.serialize_server_result("tools/list", version, dumped)
            if version in MODERN_PROTOCOL_VERSIONS:
                shaped.setdefault("resultType", "complete")
            self._lists[version] = shaped
        listed: dict[str, Any] = json.loads(json.dumps(self._lists[version]))  # the caller owns its copy
        if version in MODERN_PROTOCOL_VERSIONS:
            listed["_meta"] = self._stamp
        return listed


_READ = frozenset(
    {b"content-type", b"accept", b"mcp-protocol-version", b"mcp-method", b"mcp-name", b"mcp-session-id"}
)
"""The headers a claim reads (the SDK's checks read these and the `Mcp-Param-*` ones)."""


def _headers(scope: Scope) -> dict[str, str] | None:
    """The headers a claim reads, by lowercase name, or None when the SDK must answer for them."""
    folded: dict[str, str] = {}
    for key, value in scope.get("headers", ()):
        if key in _READ:
            name = key.decode("latin-1")
            if name in folded:
                return None  # a routing header twice (the SDK refuses it), or an ambiguous one
            folded[name] = value.decode("latin-1")
        elif key.startswith(_PARAM_PREFIX):
            return None  # validated against the tool's schema by the SDK
    if "mcp-protocol-version" not in folded:
        return None
    return folded if _accepts_json(folded.get("accept", "")) else None


def _accepts_json(accept: str) -> bool:
    kinds = [part.split(";")[0].strip().lower() for part in accept.split(",")]
    return any(kind in ("*/*", "application/*", "application/json") for kind in kinds)


def _dump(message: types.JSONRPCError) -> dict[str, Any]:
    return message.model_dump(mode="json", by_alias=True, exclude_none=True)


async def _send_legacy(send: Send, data: bytes) -> None:
    """A handshake-era transport's JSON answer: its headers in its order, the body as pydantic writes it."""
    headers = [*_JSON_HEADERS, (b"content-length", str(len(data)).encode())]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": data})


async def _send(send: Send, status: int, body: Mapping[str, Any]) -> None:
    data = json.dumps(body, separators=(",", ":")).encode()
    headers = [(b"content-length", str(len(data)).encode()), *_JSON_HEADERS]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": data})

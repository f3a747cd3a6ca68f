"""Malformed JSON-RPC answered as JSON-RPC 2.0 says, over stdio and Streamable HTTP.

The SDK drops what it cannot parse on stdio, accepts `"id": null` as a notification (and so never
answers it), and over HTTP answers structural errors with -32602 and a validation dump. Every
message is checked here first, before the SDK sees it:

- not JSON: -32700 (parse error), id null;
- JSON but not one request or notification object (a batch array, a number, no `method`, an id
  that is null, a boolean or a fraction, `jsonrpc` other than "2.0"): -32600 (invalid request),
  with the message's id when it has a usable one, else null;
- over HTTP, an `MCP-Protocol-Version` header naming a version the server does not speak: 400.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import TYPE_CHECKING, Any

import mcp_types as types
import pydantic_core
from mcp_types.version import SUPPORTED_PROTOCOL_VERSIONS
from pydantic import ValidationError

if TYPE_CHECKING:
    from .mcp_fast import FastPath

PARSE_ERROR = -32700
INVALID_REQUEST = -32600

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]


def _error(code: int, message: str, request_id: types.RequestId | None = None) -> types.JSONRPCError:
    return types.JSONRPCError(jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=message))


def _usable_id(value: Any) -> bool:
    return (isinstance(value, int) and not isinstance(value, bool)) or isinstance(value, str)


def check(raw: str | bytes) -> types.JSONRPCError | None:
    """The error `raw` deserves as a JSON-RPC message, or None when it is a well-formed one."""
    try:
        message = pydantic_core.from_json(raw)  # as the SDK parses: bounded nesting, no RecursionError
    except ValueError:
        return _error(PARSE_ERROR, "Parse error: the message is not JSON")
    return check_parsed(message)


def check_parsed(message: Any) -> types.JSONRPCError | None:
    """`check` of a message already parsed from JSON."""
    if isinstance(message, list):
        return _error(INVALID_REQUEST, "Invalid Request: batches are not supported; send one message")
    if not isinstance(message, dict):
        return _error(INVALID_REQUEST, "Invalid Request: a message is a JSON object")
    has_id = "id" in message
    request_id = message.get("id")
    if has_id and not _usable_id(request_id):
        return _error(INVALID_REQUEST, "Invalid Request: id must be a string or an integer")
    answer_id = request_id if has_id else None
    if message.get("jsonrpc") != "2.0":
        return _error(INVALID_REQUEST, 'Invalid Request: jsonrpc must be "2.0"', answer_id)
    try:
        types.jsonrpc_message_adapter.validate_python(message, by_name=False)
    except ValidationError:
        return _error(
            INVALID_REQUEST, "Invalid Request: not a JSON-RPC request, notification or response", answer_id
        )
    return None


def is_response(raw: str) -> bool:
    try:
        message = pydantic_core.from_json(raw)
    except ValueError:
        return False
    return (
        isinstance(message, dict) and "method" not in message and ("result" in message or "error" in message)
    )


def _body(error: types.JSONRPCError) -> bytes:
    return error.model_dump_json(by_alias=True, exclude_unset=True).encode()


class JsonRpcGuard:
    """ASGI middleware: malformed messages and unknown protocol versions at `path` answered as the spec says.

    Well-formed messages go on to `app`, except two kinds (`mcp_calls`): a `tools/call` with a
    progress token from a client that accepts `text/event-stream` goes to `streaming`, which answers
    as an SSE stream that can carry the progress; a `notifications/cancelled` is handed to
    `cancel` first, so the call has been stopped when the client reads its 202. With `sessions`,
    a cancel sent in a session is left to the session itself: request ids are the session's own,
    so another session's call with the same id is not this one.

    Args:
        app: the application behind (the SDK's Streamable HTTP one, answering plain JSON).
        path: the MCP endpoint's path; other routes pass untouched.
        streaming: the same, answering requests with SSE streams.
        cancel: stops the current caller's call of that request id.
        sessions: `app` keeps MCP sessions (a request with `Mcp-Session-Id` belongs to one).
        fast: answers the plain stateless requests it claims itself (`mcp_fast`), before `app`.
    """

    def __init__(
        self,
        app: Callable[[Scope, Receive, Send], Awaitable[None]],
        path: str,
        *,
        streaming: Callable[[Scope, Receive, Send], Awaitable[None]] | None = None,
        cancel: Callable[[Any], object] | None = None,
        sessions: bool = False,
        fast: FastPath | None = None,
    ) -> None:
        self.app = app
        self.path = path.rstrip("/") or "/"
        self.streaming = streaming
        self.cancel = cancel
        self.sessions = sessions
        self.fast = fast

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = str(scope.get("path", "")).rstrip("/") or "/"
        if scope["type"] != "http" or scope.get("method") != "POST" or path != self.path:
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        while True:
            event = await receive()
            if event["type"] == "http.disconnect":
                return
            chunks.append(event.get("body", b""))
            if not event.get("more_body", False):
                break
        body = b"".join(chunks)
        try:
            message = pydantic_core.from_json(body)
        except ValueError:
            message, error = None, check(body)
        else:
            # A claimed request is well-formed and of a version served (what the checks would find).
            if self.fast is not None and (claim := self.fast.claim(scope, message)) is not None:
                await self.fast.answer(claim, send)
                return
            error = check_parsed(message) or _unsupported_version(scope, message)
        if error is not None:
            await _answer(send, error)
            return
        params = message.get("params")
        params = params if isinstance(params, dict) else {}
        cancelled = message.get("method") == "notifications/cancelled" and params.get("requestId")
        in_session = self.sessions and any(k == b"mcp-session-id" for k, _ in scope.get("headers", []))
        if self.cancel is not None and _usable_id(cancelled) and not in_session:
            self.cancel(cancelled)
        app = self.app
        if self.streaming is not None and message.get("method") == "tools/call" and _accepts_sse(scope):
            meta = params.get("_meta")
            if isinstance(meta, dict) and meta.get("progressToken") is not None:
                app = self.streaming
        replayed = False

        async def replay() -> MutableMapping[str, Any]:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()  # later reads wait for the disconnect, as the server's own would

        await app(scope, replay, send)


def _accepts_sse(scope: Scope) -> bool:
    accept = b",".join(v for k, v in scope.get("headers", []) if k == b"accept")
    return b"text/event-stream" in accept.lower()


def _unsupported_version(scope: Scope, message: dict[str, Any]) -> types.JSONRPCError | None:
    given = next(
        (v.decode("latin-1") for k, v in scope.get("headers", []) if k == b"mcp-protocol-version"), None
    )
    if given is None or given in SUPPORTED_PROTOCOL_VERSIONS:
        return None
    request_id = message.get("id")
    supported = ", ".join(SUPPORTED_PROTOCOL_VERSIONS)
    return _error(
        INVALID_REQUEST,
        f"Unsupported MCP-Protocol-Version: {given[:40]!r}; this server speaks {supported}",
        request_id if _usable_id(request_id) else None,
    )


async def _answer(send: Send, error: types.JSONRPCError) -> None:
    body = _body(error)
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 400, "headers": headers})
    await send({"type": "http.response.body", "body": body})

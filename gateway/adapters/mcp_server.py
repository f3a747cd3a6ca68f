"""`gateway serve`: the three meta-tools as an MCP server, over stdio or Streamable HTTP.

The server lists exactly discover_tools, get_tool_schema and invoke_tool (and run_code in code mode,
docs/code-mode.md), and sends every call through `Gateway.call`, the one chokepoint. A destructive call asks the human through MCP
elicitation when the client can show one, in the way the negotiated protocol allows:

- 2026-07-28 and later: the call answers `InputRequiredResult` with the question; the client
  asks the user and calls again with the answer and the (sealed) `requestState`, which carries
  only the pending confirmation's id. Any replica that shares the confirmation store and the
  secret can take that second round.
- earlier versions: an `elicitation/create` request on the call's own channel, when the
  transport has one (stdio and HTTP sessions do; stateless HTTP does not).

Elicitation is offered only when `[confirmation] approvers` lists "elicitation" (not by default:
the client that made the call would answer its own question). A client that cannot or may not be
asked gets the confirmation gate's own answer (a pending id in "host" and "model" modes, a refusal
in "deny" mode), and the call waits for the console or `gateway approve ID`. The model never
answers an elicitation.

Over HTTP, sessions (`[serve] sessions`) only carry that channel: replicas share the same
confirmation store and secret, and route by session. Bearer tokens map to principals: static
ones by `[[serve.tokens]]`, JWT access tokens by their claims (`oauth.py`).

Longer than 400 lines because a call's elicitation, in both protocols' shapes and again for each
pause of a program (run_code), stays beside the handler that starts it.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import json
import logging
import os
import signal
import sys
import threading
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import anyio
import mcp_types as types
from mcp.server import CacheHint, Server, ServerRequestContext
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken
from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from ..config import APP_NAME, Settings
from ..confirmation import DecidedBy
from ..context import PendingConfirmation, Principal, ToolContext, ToolResult
from ..engine import Gateway
from ..named_toolsets import confine
from ..rendering import ShownFormatter, safe_text
from ..runtime import open_gateway, principal_from
from ..stores import resolve_auto_store
from ..usage import NO_SESSION
from . import mcp
from .admin import approval_hint, metrics_route
from .jsonrpc_checks import checked_stdio
from .listening import listening_socket
from .mcp_calls import REQUEST_CANCELLED, RunningCalls, register, with_progress
from .mcp_http import serve_http
from .mcp_toolsets import ToolsetServer, bound_token, confined, token_entries, token_toolsets
from .oauth import MappedToken, check_resource
from .origins import allowed_hosts

log = logging.getLogger("gateway.mcp")

CONFIRM_KEY = "confirm"
"""Key of the approval question in an `InputRequiredResult`."""

_CONFIRM_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "approve": {
            "type": "boolean",
            "title": "Approve",
            "description": "Run this action now.",
            "default": True,
        }
    },
    "required": ["approve"],
}


class TokenVerifier:
    """Static bearer tokens, known by their SHA-256 digests, each mapped to a principal id.

    Only digests are held; the token itself is never stored, logged or put in a result.
    """

    def __init__(self, digests: Mapping[str, str], toolsets: Mapping[str, str] | None = None) -> None:
        self._digests = dict(digests)
        self._toolsets = dict(toolsets or {})  # digest -> the toolset the token is bound to

    async def verify_token(self, token: str) -> AccessToken | None:
        digest = hashlib.sha256(token.encode()).hexdigest()
        found = None
        for known, principal in self._digests.items():  # every entry, in constant time each
            if hmac.compare_digest(known, digest):
                found = principal, self._toolsets.get(known)
        return None if found is None else bound_token(*found)


def token_digests(settings: Settings, environ: Mapping[str, str]) -> dict[str, str]:
    """`serve.tokens` as {sha256 hex digest: principal id}.

    Raises:
        UserError: a token names an environment variable that is not set.
    """
    return {digest: principal for digest, (principal, _) in token_entries(settings, environ).items()}


def category_counts(
    gw: Gateway, principals: list[Principal], toolsets: frozenset[str] = frozenset()
) -> dict[str, int]:
    """Tools per category, counting only tools every one of `principals` may see (confined to `toolsets`)."""
    shared: set[str] | None = None
    for principal in principals:
        names = {d.name for d in gw.visible(confine(principal, toolsets))}
        shared = names if shared is None else shared & names
    counts: dict[str, int] = {}
    for d in gw.catalog:
        if shared is not None and d.name in shared:
            counts[d.category] = counts.get(d.category, 0) + 1
    return counts


def request_state_key(secret: bytes) -> bytes:
    """The key that seals `requestState`, derived so it differs from the gate's HMAC key."""
    return hmac.new(secret, b"metatool-gateway/request-state", hashlib.sha256).digest()


class _Handlers:
    def __init__(self, gw: Gateway, settings: Settings, transport: str) -> None:
        self.gw = gw
        self.settings = settings
        # stdio: one client per process, one session. HTTP: the client's Mcp-Session-Id when it sends
        # one (learning keys it by principal too), else no session: stateless calls pair with nothing.
        self.session_id = f"mcp-stdio-{uuid.uuid4().hex[:12]}" if transport == "stdio" else "mcp-http"
        self.default_principal = principal_from(settings)
        listed = [types.Tool.model_validate(t) for t in mcp.tools(gw.meta)]
        self.tools = types.ListToolsResult(tools=listed)
        self.schemas = {d.name: d.json_schema for d in gw.meta}
        self.running = RunningCalls(lambda: self.principal().id)

    def principal(self) -> Principal:
        """The caller: its token's principal, confined to the toolsets its token and endpoint name."""
        return confined(self._caller(), get_access_token())

    def _caller(self) -> Principal:
        token = get_access_token()
        if token is None:
            return self.default_principal
        if isinstance(token, MappedToken):  # a JWT (its claims name the principal, roles) or a bound token
            known = principal_from(self.settings, token.principal)
            return replace(known, roles=known.roles | frozenset(token.roles))
        return principal_from(self.settings, token.client_id)

    async def list_tools(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        if params is not None and params.cursor is not None:  # one page: no cursor was ever handed out
            raise MCPError(types.INVALID_PARAMS, "Invalid params: unknown cursor")
        return self.tools

    def session(self, ctx: ServerRequestContext[Any], principal: Principal) -> str:
        if self.session_id != "mcp-http":
            return self.session_id
        request = ctx.request
        headers = getattr(request, "headers", None)
        given = headers.get("mcp-session-id") if headers is not None else None
        if given:
            return f"mcp-http:{safe_text(given, 100)}"
        return NO_SESSION

    async def call_tool(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        with self.running.track(ctx.request_id):
            return await with_progress(lambda: self._call_tool(ctx, params), _reporter(ctx))
        # Cancelled by the client (`RunningCalls.cancel`): it has stopped waiting for an answer.
        raise MCPError(REQUEST_CANCELLED, "Request cancelled")

    async def _call_tool(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        principal = self.principal()
        session = self.session(ctx, principal)
        context = ToolContext(principal=principal, session_id=session)
        arguments = dict(params.arguments or {})
        if params.name in _PAUSING and params.request_state is not None:
            pending_id, call_id = _resumed(params.request_state)
            answer = (params.input_responses or {}).get(CONFIRM_KEY)
            record = self.gw.gate.store.get(pending_id) if pending_id else None
            # The state is sealed and bound to these arguments and caller; checked again all the same.
            if record is not None and record.pending.principal == context.principal.id:
                context = ToolContext(principal=context.principal, session_id=session, call_id=call_id)
                if not self.gw.gate.allows("elicitation"):  # no longer asked: redeem what others decided
                    arguments = {**arguments, "confirmation": record.pending.pending_id}
                    return _result(await self.gw.call(params.name, arguments, context))
                if not isinstance(answer, types.ElicitResult):  # retried without an answer: ask again
                    return _input_required(record.pending, call_id)
                decided = await self._decide(
                    params.name, record.pending.pending_id, answer, arguments, context
                )
                return await self._settle(ctx, params.name, decided, arguments, context)
        result = await self.gw.call(params.name, arguments, context)
        return await self._settle(ctx, params.name, result, arguments, context)

    async def _settle(
        self,
        ctx: ServerRequestContext[Any],
        name: str,
        result: ToolResult,
        arguments: dict[str, Any],
        context: ToolContext,
    ) -> types.CallToolResult | types.InputRequiredResult:
        """Ask the client's user about a pending call; a program (run_code) may pause again after it."""
        while (pending := result.pending) is not None and result.status == "confirmation_required":
            if not self._may_elicit(ctx):
                break
            if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
                return _input_required(pending, context.call_id)
            try:
                # No answer before the confirmation expires is as good as none.
                with anyio.fail_after(self.gw.gate.ttl_seconds):
                    answer = await ctx.session.elicit_form(
                        _question(pending), _CONFIRM_SCHEMA, related_request_id=ctx.request_id
                    )
            except Exception:
                # The client could not ask after all: the call stays pending, as without elicitation.
                log.warning("elicitation failed for %s; leaving it pending", pending.tool, exc_info=True)
                break
            result = await self._decide(name, pending.pending_id, answer, arguments, context)
        return _result(result)

    def _may_elicit(self, ctx: ServerRequestContext[Any]) -> bool:
        # Allowed by the operator, and the client can show a form.
        return self.gw.gate.allows("elicitation") and _can_elicit(ctx)

    async def _decide(
        self,
        name: str,
        pending_id: str,
        answer: types.ElicitResult,
        arguments: dict[str, Any],
        context: ToolContext,
    ) -> ToolResult:
        """Record the human's answer, then redeem the confirmation: the gate runs or refuses the call."""
        content = answer.content or {}
        # The client's user answered; the audit log says so, and as whom the client is signed in.
        decided_by = DecidedBy("elicitation", context.principal.id)
        if answer.action == "accept" and content.get("approve") is True:
            self.gw.approve(pending_id, decided_by=decided_by)
        else:
            self.gw.deny(pending_id, decided_by=decided_by)
        return await self.gw.call(name, {**arguments, "confirmation": pending_id}, context)


_PAUSING = ("invoke_tool", "run_code")
"""The meta-tools whose call may wait for a person's approval, and be asked again with its answer."""


def _reporter(ctx: ServerRequestContext[Any]) -> Callable[[float, str], Awaitable[None]] | None:
    """How to report the call's progress: None when the client gave no progress token."""
    meta: Mapping[str, Any] = ctx.meta or {}
    if meta.get("progress_token", meta.get("progressToken")) is None:
        return None

    async def report(progress: float, message: str) -> None:
        await ctx.session.report_progress(progress, None, message)

    return report


def _resumed(request_state: str) -> tuple[str, str]:
    """(pending id, call id) from a second round's state; empty strings when it holds none."""
    # The boundary has verified and unsealed the state, so it is the text a replica minted.
    try:
        state = json.loads(request_state)
    except ValueError:
        return "", ""
    if not isinstance(state, dict):
        return "", ""
    pending_id, call_id = state.get("pending_id"), state.get("call_id")
    return (pending_id, call_id) if isinstance(pending_id, str) and isinstance(call_id, str) else ("", "")


def _can_elicit(ctx: ServerRequestContext[Any]) -> bool:
    capabilities = ctx.session.client_capabilities
    elicitation = capabilities.elicitation if capabilities is not None else None
    # A bare `elicitation: {}` (from before modes existed) means form support; URL-only does not.
    if elicitation is None or (elicitation.form is None and elicitation.url is not None):
        return False
    return ctx.protocol_version in MODERN_PROTOCOL_VERSIONS or ctx.session.can_send_request


def _question(pending: PendingConfirmation) -> str:
    # In full: the preview is escaped already, and a call whose preview is too long was refused.
    return f"Approve this action? {pending.preview}"


def _input_required(pending: PendingConfirmation, call_id: str) -> types.InputRequiredResult:
    """Ask the user through the client; the state brings back which confirmation, for which call."""
    request = types.ElicitRequest(
        params=types.ElicitRequestFormParams(message=_question(pending), requested_schema=_CONFIRM_SCHEMA)
    )
    state = json.dumps({"pending_id": pending.pending_id, "call_id": call_id})
    return types.InputRequiredResult(input_requests={CONFIRM_KEY: request}, request_state=state)


def _result(result: ToolResult) -> types.CallToolResult:
    return types.CallToolResult.model_validate(mcp.call_result(result))


def build_server(gw: Gateway, settings: Settings, *, transport: str = "stdio") -> Server[Any]:
    """The MCP server for `gw`: three meta-tools, instructions, elicitation, sealed request state."""
    handlers = _Handlers(gw, settings, transport)
    principals = [handlers.default_principal]
    if transport == "http" and settings.serve.tokens:
        principals = [principal_from(settings, t.principal) for t in settings.serve.tokens]
    if transport == "http" and settings.serve.oauth is not None:
        principals.append(Principal(id="oauth", agent=settings.agent))  # a token naming no roles
    try:
        server_version = version("metatool-gateway")
    except PackageNotFoundError:
        server_version = ""
    server = ToolsetServer(
        APP_NAME,
        version=server_version,
        instructions=mcp.instructions(category_counts(gw, principals)),
        # The list is three fixed tools, the same for every caller, so clients may keep it.
        cache_hints={"tools/list": CacheHint(ttl_ms=24 * 3600 * 1000, scope="public")},
        on_list_tools=handlers.list_tools,
        on_call_tool=handlers.call_tool,
        get_tool_input_schema=handlers.schemas.get,
    )
    secret = settings.confirmation.secret
    ttl = settings.confirmation.ttl_seconds
    security = (
        RequestStateSecurity(keys=[request_state_key(secret.get_secret_value().encode())], ttl=ttl)
        if secret is not None
        else RequestStateSecurity.ephemeral(ttl=ttl)
    )
    # A caller confined to toolsets reads of their tools only (counted for every principal, as above).
    server.instructions_for = functools.cache(
        lambda ts: mcp.instructions(category_counts(gw, principals, ts))
    )
    server.toolsets = lambda: handlers.principal().toolsets
    server.middleware.append(RequestStateBoundary(security, default_audience=APP_NAME))
    register(server, handlers.running)
    return server


def serve(
    settings: Settings,
    *,
    transport: str | None = None,
    host: str | None = None,
    port: int | None = None,
    environ: Mapping[str, str] | None = None,
    console: Callable[[Gateway], Any] | None = None,
) -> int:
    """Serve until stopped (end of stdin, or SIGINT/SIGTERM for HTTP). Returns the exit status.

    Over HTTP, `console` (given the gateway, an ASGI application) is mounted at `/console`.

    With the default confirmation store ("auto"), pending calls live in a SQLite file in the data
    directory, so `gateway pending` and `gateway approve ID` answer them from another terminal.
    """
    transport = transport or settings.serve.transport
    settings = resolve_auto_store(settings, shared=True)
    environ = os.environ if environ is None else environ
    digests = token_digests(settings, environ) if transport == "http" else {}
    if transport == "http":
        allowed_hosts(settings, host or settings.serve.host)  # a bind that needs names fails now
        check_resource(settings.serve.oauth, host or settings.serve.host)
    if transport == "http" and threading.current_thread() is threading.main_thread():
        # uvicorn handles SIGINT/SIGTERM while serving (a graceful stop) and raises them again once
        # stopped. Either way they end up here and exit cleanly: the store and audit log get closed
        # (SIGTERM with status 0, Ctrl-C with 130).
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, _exit)
    stderr = logging.StreamHandler(sys.stderr)  # a logged name or message may come from a client
    stderr.setFormatter(ShownFormatter("gateway: %(levelname)s %(message)s"))
    logging.basicConfig(level=logging.WARNING, handlers=[stderr])
    # Bound before the catalogs load, so a port in use is said at once.
    port = settings.serve.port if port is None else port
    sock = (
        listening_socket(host or settings.serve.host, port, setting="[serve] port")
        if transport == "http"
        else None
    )
    with open_gateway(settings, prometheus=transport == "http") as gw:
        gw.index()  # build the search index now, not in the first client's discover_tools call
        server = build_server(gw, settings, transport=transport)
        if transport == "stdio":
            if (hint := approval_hint(settings)) is not None:
                print(hint, file=sys.stderr, flush=True)
            anyio.run(_serve_stdio, server)
        else:
            app = console(gw) if console is not None else None
            routes = [metrics_route(gw.telemetry, settings, environ)]
            verifier = TokenVerifier(digests, token_toolsets(settings, environ)) if digests else None
            run = functools.partial(serve_http, console=app, routes=routes)
            assert sock is not None
            anyio.run(run, server, settings, host or settings.serve.host, sock, verifier)
    return 0


def _exit(signum: int, frame: object) -> None:
    if signum == signal.SIGINT:  # Ctrl-C: one line, and the status shells give an interrupted command
        print("gateway: interrupted", file=sys.stderr, flush=True)
        raise SystemExit(128 + signal.SIGINT)
    raise SystemExit(0)


async def _serve_stdio(server: Server[Any]) -> None:
    async with checked_stdio() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())

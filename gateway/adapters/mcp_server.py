"""`gateway serve`: the three meta-tools as an MCP server, over stdio or Streamable HTTP.

The server lists exactly discover_tools, get_tool_schema and invoke_tool (and run_code in code mode,
or run_code alone with `[code] only`, docs/code-mode.md), and sends every call through
`Gateway.call`, the one chokepoint. A destructive call asks the human through MCP elicitation
when the client can show one and the operator allows it (`mcp_elicitation.py`).

Over HTTP, sessions (`[serve] sessions`) only carry that channel to the client: replicas share the same
confirmation store and secret, and route by session. Bearer tokens map to principals: static
ones by `[[serve.tokens]]`, JWT access tokens by their claims (`oauth.py`).
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import logging
import os
import signal
import sys
import threading
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
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

from ..context import Principal, ToolContext
from ..engine import Gateway
from ..errors import UserError
from ..gate.stores import resolve_auto_store
from ..named_toolsets import confine
from ..rendering import ShownFormatter, safe_text
from ..runtime import open_gateway, principal_from
from ..settings.loading import APP_NAME, Settings
from ..usage import NO_SESSION
from . import mcp
from .admin import approval_hint, metrics_route
from .listening import listening_socket
from .mcp_calls import REQUEST_CANCELLED, RunningCalls, register, with_progress
from .mcp_elicitation import Elicitation
from .mcp_fast import FastPath
from .mcp_fast import register as register_fast
from .mcp_http import announce, serve_http
from .mcp_stdio import checked_stdio
from .mcp_toolsets import ToolsetServer, bound_token, confined, token_entries, token_toolsets
from .mcp_workers import Worker, refusal, serve_workers
from .oauth import MappedToken, check_resource
from .origins import allowed_hosts

log = logging.getLogger("gateway.mcp")


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
        self.elicitation = Elicitation(gw)

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

    def session(self, ctx: ServerRequestContext[Any]) -> str:
        headers = getattr(ctx.request, "headers", None)
        return self.session_of(headers.get("mcp-session-id") if headers is not None else None)

    def session_of(self, header: str | None) -> str:
        """The usage session of a request whose `Mcp-Session-Id` header is `header` (None: not sent)."""
        if self.session_id != "mcp-http":
            return self.session_id
        if header:
            return f"mcp-http:{safe_text(header, 100)}"
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
        session = self.session(ctx)
        context = ToolContext(principal=principal, session_id=session)
        arguments = dict(params.arguments or {})
        if (resumed := await self.elicitation.resumed(ctx, params, arguments, context)) is not None:
            return resumed
        result = await self.gw.call(params.name, arguments, context)
        return await self.elicitation.settle(ctx, params.name, result, arguments, context)


def _reporter(ctx: ServerRequestContext[Any]) -> Callable[[float, str], Awaitable[None]] | None:
    """How to report the call's progress: None when the client gave no progress token."""
    meta: Mapping[str, Any] = ctx.meta or {}
    if meta.get("progress_token", meta.get("progressToken")) is None:
        return None

    async def report(progress: float, message: str) -> None:
        await ctx.session.report_progress(progress, None, message)

    return report


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
    # run_code listed with the three meta-tools (code mode), or alone (`[code] only`)
    code = {"code": "run_code" in handlers.schemas, "alone": "invoke_tool" not in handlers.schemas}
    server = ToolsetServer(
        APP_NAME,
        version=server_version,
        instructions=mcp.instructions(category_counts(gw, principals), **code),
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
        lambda ts: mcp.instructions(category_counts(gw, principals, ts), **code)
    )
    server.toolsets = lambda: handlers.principal().toolsets
    server.middleware.append(RequestStateBoundary(security, default_audience=APP_NAME))
    register(server, handlers.running)
    register_fast(server, FastPath(server, handlers))
    return server


def serve(
    settings: Settings,
    *,
    transport: str | None = None,
    host: str | None = None,
    port: int | None = None,
    environ: Mapping[str, str] | None = None,
    console: Callable[[Gateway], Any] | None = None,
    argv: Sequence[str] = (),
    worker: Worker | None = None,
) -> int:
    """Serve until stopped (end of stdin, or SIGINT/SIGTERM for HTTP). Returns the exit status.

    Over HTTP, `console` (given the gateway, an ASGI application) is mounted at `/console`. With
    `[serve] workers` above 1 this process supervises that many workers (`mcp_workers.py`), each
    started with the command line `argv` and served here as `worker`.

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
    port = settings.serve.port if port is None else port
    bind = host or settings.serve.host
    if worker is None and settings.serve.workers > 1:
        if (why := refusal(settings, transport)) is not None:
            raise UserError(why)

        def banner(bound: int, pids: list[int]) -> None:
            announce(settings, bind, bound, tokens=bool(digests), console=console is not None, workers=pids)

        return serve_workers(
            settings, argv, count=settings.serve.workers, host=bind, port=port, banner=banner
        )
    if worker is not None:
        worker.watch_parent()
    # Bound before the catalogs load, so a port in use is said at once.
    sock = (
        listening_socket(bind, port, setting="[serve] port", reuse_port=worker is not None)
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
            ready = worker.ready if worker is not None else None
            run = functools.partial(serve_http, console=app, routes=routes, ready=ready)
            assert sock is not None
            anyio.run(run, server, settings, bind, sock, verifier)
    return 0


def _exit(signum: int, frame: object) -> None:
    if signum == signal.SIGINT:  # Ctrl-C: one line, and the status shells give an interrupted command
        print("gateway: interrupted", file=sys.stderr, flush=True)
        raise SystemExit(128 + signal.SIGINT)
    raise SystemExit(0)


async def _serve_stdio(server: Server[Any]) -> None:
    async with checked_stdio() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())

"""`gateway serve --transport http`: the application it runs and the socket it listens on.

One Starlette application holds MCP (Streamable HTTP at `[serve] path`), the extra routes
(`/metrics`) and the console (`/console`), all behind one Host and Origin check
(`origins.HostOriginGuard`); only the probes `/healthz` and `/readyz` answer before it (`health`).
MCP messages are checked first (`jsonrpc_checks.JsonRpcGuard`).

With sessions (`[serve] sessions`, the default) a handshake-era client gets an `Mcp-Session-Id`
bound to its token's identity, and every answer is an SSE stream, which can carry an elicitation
request and progress. Without them the server is stateless: a call with a progress token is
answered as an SSE stream, everything else as plain JSON (`mcp_calls`).
Each named toolset is served at `[serve] path`/<name> through the same checks (`mcp_toolsets`); a
session answers only at the endpoint that opened it (`mcp_session_endpoints`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import sys
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from mcp.server import Server
from mcp.server.auth.middleware.bearer_auth import RequireAuthMiddleware
from mcp.server.auth.provider import TokenVerifier
from mcp.server.auth.settings import AuthSettings
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import (
    DEFAULT_MAX_REQUEST_BODY_SIZE,
    RequestBodyLimitMiddleware,
    TransportSecuritySettings,
)
from starlette.routing import Mount, Route

from ..runtime import toolsets_from
from ..settings.loading import Settings
from .admin import approval_hint, sign_in_hint
from .health import Health, Readiness, redis_stores
from .jsonrpc_checks import JsonRpcGuard
from .mcp_calls import running_calls
from .mcp_fast import FastPath, fast_path
from .mcp_session_endpoints import own_sessions
from .mcp_toolsets import add_routes as add_toolset_routes
from .mcp_toolsets import resources as toolset_resources
from .oauth import JwtVerifier, ScopeChallenge, Verifiers, root_metadata_route
from .origins import LOOPBACK_BINDS, HostOriginGuard, allowed_hosts

log = logging.getLogger("gateway.mcp")


def http_app(
    server: Server[Any],
    settings: Settings,
    host: str,
    url: str,
    verifier: TokenVerifier | None,
    *,
    console: Any = None,
    routes: list[Route] | None = None,
) -> Any:
    """The ASGI application `gateway serve` runs: MCP at `[serve] path`, `routes`, the console.

    Args:
        server: the MCP server (`mcp_server.build_server`).
        settings: `[serve]`: the path, the allowed hosts and origins.
        host: the address the server is bound to (the allowed hosts' default).
        url: the MCP endpoint's URL (the issuer named to clients when tokens are checked).
        verifier: checks static bearer tokens (None: none configured); with `[serve.oauth]`,
            JWT access tokens from its issuer are checked too.
        console: the console application to mount at `/console`.
        routes: more routes, e.g. `/metrics`.

    Every route sits behind one Host and Origin check (`origins.HostOriginGuard`), but for the
    probes `/healthz` and `/readyz` (`health.Health`).

    Raises:
        UserError: bound to every address with no `[serve] allowed_hosts`.
    """
    hosts = allowed_hosts(settings, host)
    # The SDK's own check covers /mcp on loopback only; ours covers every route, whatever the bind.
    unchecked = TransportSecuritySettings(enable_dns_rebinding_protection=False)
    routes = list(routes or [])
    oauth = settings.serve.oauth
    auth: AuthSettings | None = None
    if oauth is not None:
        # A resource server: the SDK serves the metadata and the 401/403 challenges; ours checks tokens.
        resource = oauth.resource or url
        auth = AuthSettings.model_validate(
            {
                "issuer_url": oauth.issuer,
                "resource_server_url": resource,
                "required_scopes": oauth.scopes or None,
                "validate_token_resource": False,  # the verifier checks `aud` itself
            }
        )
        toolsets, resources = toolsets_from(settings), toolset_resources(resource, settings)
        jwts = JwtVerifier(oauth, oauth.audience or resource, toolsets=toolsets, resources=resources)
        verifier = Verifiers(verifier, jwts, oauth.scopes)
        routes.append(root_metadata_route(auth))
    else:
        # The SDK wants an issuer; static tokens have none, so the server names itself.
        auth = (
            AuthSettings.model_validate({"issuer_url": url, "resource_server_url": None})
            if verifier
            else None
        )
    sessions = settings.serve.sessions
    app = server.streamable_http_app(
        streamable_http_path=settings.serve.path,
        # A session answers as SSE streams, so a call can ask its client a question (elicitation).
        stateless_http=not sessions,
        json_response=not sessions,
        transport_security=unchecked,
        host=host,
        auth=auth,
        token_verifier=verifier,
        custom_starlette_routes=routes,
    )
    fast = fast_path(server) if not sessions and settings.serve.fast_path else None
    _check_messages(app, server, settings.serve.path, unchecked, streams=not sessions, fast=fast)
    if sessions:  # before the toolsets' endpoints, which take the endpoint as built
        own_sessions(
            app,
            settings.serve.path,
            server.session_manager,
            max_per_principal=settings.serve.max_sessions_per_principal,
        )
    add_toolset_routes(app, settings, auth)  # /mcp/<toolset>
    if console is not None:  # the operator console, on the same port (docs/console.md)
        app.router.routes.append(Mount("/console", app=console))
    guarded = ScopeChallenge(app, oauth.scopes) if oauth is not None and oauth.scopes else app
    # The probes answer by address, before the Host check (`health.py`: they hold nothing else).
    return Health(
        HostOriginGuard(guarded, hosts, settings.serve.allowed_origins), Readiness(redis_stores(settings))
    )


def _check_messages(
    app: Any,
    server: Server[Any],
    path: str,
    security: TransportSecuritySettings,
    *,
    streams: bool,
    fast: FastPath | None = None,
) -> None:
    """Put `JsonRpcGuard` in front of the MCP endpoint, behind its token check (if any).

    Without sessions (`streams`), calls with a progress token get answered by a second, streaming
    (SSE) session manager, run alongside the first in the application's lifespan; `fast` answers
    the plain requests it claims before either (`mcp_fast`).
    """
    streaming = StreamableHTTPSessionManager(
        app=server, json_response=False, stateless=True, security_settings=security
    )
    running = running_calls(server)
    cancel = running.cancel if running is not None else None
    sse = StreamableHTTPASGIApp(streaming) if streams else None

    def guard(endpoint: Any) -> Any:
        checked = JsonRpcGuard(endpoint, path, streaming=sse, cancel=cancel, sessions=not streams, fast=fast)
        # The guard reads the whole body, so the SDK's own size limit comes first (413).
        return RequestBodyLimitMiddleware(checked, DEFAULT_MAX_REQUEST_BODY_SIZE)

    for route in app.router.routes:
        if isinstance(route, Route) and route.path == path:
            endpoint = route.app
            if isinstance(endpoint, RequireAuthMiddleware):  # unauthenticated callers get 401 first
                endpoint.app = guard(endpoint.app)
            else:
                route.app = guard(endpoint)
    plain = app.router.lifespan_context

    @contextlib.asynccontextmanager
    async def lifespan(application: Any) -> AsyncIterator[Any]:
        async with plain(application) as state, streaming.run():
            yield state

    app.router.lifespan_context = lifespan


async def serve_http(
    server: Server[Any],
    settings: Settings,
    host: str,
    sock: socket.socket,
    verifier: TokenVerifier | None,
    *,
    console: Any = None,
    routes: list[Route] | None = None,
    ready: Callable[[], None] | None = None,
) -> None:
    """Serve `server` on `sock` until stopped; `ready` (a worker's) instead of saying where it listens."""
    import uvicorn

    # asyncio sets TCP_NODELAY only on sockets whose proto is IPPROTO_TCP, and create_server leaves
    # it 0; without it each keep-alive response waits out the client's delayed ACK (about 40 ms).
    # Accepted sockets inherit the option from the listening one.
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    bound = sock.getsockname()[1]
    app = http_app(
        server, settings, host, url_of(settings, host, bound), verifier, console=console, routes=routes
    )
    stop = settings.serve.stop_seconds  # then running calls are cancelled, each audited (engine)
    logging.getLogger("uvicorn.error").addFilter(_no_traceback_for_a_stop)
    config = uvicorn.Config(
        app, log_level="warning", access_log=False, lifespan="on", timeout_graceful_shutdown=stop
    )
    if ready is None:
        announce(settings, host, bound, tokens=verifier is not None, console=console is not None)
    else:
        ready()
    await uvicorn.Server(config).serve(sockets=[sock])


def _no_traceback_for_a_stop(record: logging.LogRecord) -> bool:
    """Drop uvicorn's traceback of a request it cancelled as it stopped: its line before says how
    many it cancelled, and each call's audit line says cancelled."""
    error = record.exc_info[1] if record.exc_info else None
    return not (isinstance(error, asyncio.CancelledError) and "graceful shutdown" in str(error))


def url_of(settings: Settings, host: str, port: int) -> str:
    """The MCP endpoint's address when serving on `host`:`port`."""
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}{settings.serve.path}"


def announce(
    settings: Settings, host: str, port: int, *, tokens: bool, console: bool, workers: Sequence[int] = ()
) -> None:
    """Say on stderr where the server listens (its console too), and how to approve calls.

    `tokens`: whether static bearer tokens are configured (without, a bind off loopback is warned of).
    `workers`: the process ids of `gateway serve --workers`, when this is their parent.
    """
    if not tokens and host not in LOOPBACK_BINDS:
        log.warning(
            "serving on %s without tokens: anyone who can reach it acts as %s", host, settings.principal
        )
    if workers:
        pids = ", ".join(str(pid) for pid in workers)
        print(f"gateway: {len(workers)} workers share the port (pids {pids})", file=sys.stderr, flush=True)
    print(f"gateway: serving MCP on {url_of(settings, host, port)}", file=sys.stderr, flush=True)
    if console:
        shown = f"[{host}]" if ":" in host else host
        print(
            f"gateway: console on http://{shown}:{port}/console/{sign_in_hint(settings)}",
            file=sys.stderr,
            flush=True,
        )
    if (hint := approval_hint(settings)) is not None:
        print(hint, file=sys.stderr, flush=True)

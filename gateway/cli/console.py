"""`gateway console`: the operator console on its own, and the console `gateway serve` mounts.

On its own it serves the same data directory and shared stores as the server (the SQLite or Redis
confirmation store, the audit log, the usage store): the way to approve calls and read the activity
of a gateway an MCP client started over stdio.
"""

from __future__ import annotations

import argparse
import os
import socket
import sys
from collections.abc import Callable
from typing import Any

from ..admin import local_token_path, uses_local_token
from ..engine import Gateway
from ..errors import UserError
from ..gate.stores import resolve_auto_store
from ..runtime import open_gateway
from ..settings.loading import Settings

_LOOPBACK = ("127.0.0.1", "localhost", "::1")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", help="address to listen on (default: [console] host, 127.0.0.1)")
    parser.add_argument("--port", type=int, help="port (default: [console] port, 8766; 0 picks a free one)")


def mountable(settings: Settings) -> Callable[[Gateway], Any] | None:
    """What `gateway serve --transport http` mounts at /console; None without the console extra."""
    try:
        from ..console import console_app
    except ImportError as exc:
        print(
            f"gateway: no console ({exc.name} is missing): pip install 'metatool-gateway[console]'",
            file=sys.stderr,
        )
        return None
    return lambda gw: console_app(gw, settings)


def run(settings: Settings, args: argparse.Namespace) -> int:
    """Serve the console until stopped (Ctrl-C or SIGTERM)."""
    try:
        import anyio
        import uvicorn
        from starlette.applications import Starlette
        from starlette.responses import RedirectResponse
        from starlette.routing import Mount, Route

        from ..adapters.listening import listening_socket
        from ..adapters.origins import HostOriginGuard, allowed_hosts
        from ..console import console_app
        from ..console.auth import AdminTokens
    except ImportError as exc:
        raise UserError(
            f"gateway console needs the console extra: pip install 'metatool-gateway[console]' "
            f"({exc.name} is missing)"
        ) from None
    settings = resolve_auto_store(settings, shared=True)
    AdminTokens.from_settings(settings, os.environ)  # a misconfigured token fails now, not at sign-in
    host = args.host or settings.console.host
    port = settings.console.port if args.port is None else args.port
    hosts = allowed_hosts(settings, host)  # the same Host and Origin rules as gateway serve
    sock = listening_socket(
        host, port, setting="[console] port"
    )  # before loading: a port in use fails at once
    with open_gateway(settings) as gw:
        console = console_app(gw, settings)

        async def home(request: Any) -> Any:
            return RedirectResponse("/console/", status_code=303)

        routes = [Route("/", home), Mount("/console", app=console)]
        app = HostOriginGuard(Starlette(routes=routes), hosts, settings.serve.allowed_origins)
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        bound = sock.getsockname()[1]
        shown = f"[{host}]" if family == socket.AF_INET6 else host
        if host not in _LOOPBACK:
            print(
                f"gateway: the console listens on {host} over plain HTTP: put it behind TLS", file=sys.stderr
            )
        where = f"http://{shown}:{bound}/console/"
        if uses_local_token(settings, os.environ):
            where += f" (sign in with the token in {local_token_path(settings)})"
        config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off")

        async def serve() -> None:
            # Said from inside the running loop: a Ctrl-C after this line never meets a loop half made.
            print(f"gateway: console on {where}", file=sys.stderr, flush=True)
            await uvicorn.Server(config).serve(sockets=[sock])

        # uvicorn stops gracefully on Ctrl-C, then raises it again: `run` ends it with one line and 130.
        anyio.run(serve)
    return 0

"""Which Host and Origin headers the HTTP server answers: one check in front of every route.

`/mcp`, `/metrics` and `/console` share it. The Host check stops DNS rebinding (a web page whose
name is made to resolve to the gateway's address); the Origin check stops a page on another site
from making a visitor's browser call the gateway. A request with no Origin header (a program, not
a browser page) is not refused for that.

Defaults, by the address the server is bound to (`[serve] allowed_hosts` replaces them):

- a loopback address (127.0.0.1, localhost, ::1): the loopback names, any port;
- another address: that address itself, any port;
- every address (0.0.0.0 or ::): nothing can be assumed, so the names must be configured
  (`["*"]` accepts any Host, for a server behind a proxy that checks it).

An Origin is accepted when it is the request's own (same host and port as the Host header), or is
listed in `[serve] allowed_origins`, or is "null" on a request the browser marks same-origin.
Public metadata (`/.well-known/`, e.g. the OAuth protected resource metadata) answers any Origin,
with CORS headers, so a browser client on another site can discover how to sign in; it reveals
nothing and acts on nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from urllib.parse import urlsplit

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from ..errors import UserError
from ..rendering import safe_text
from ..settings.loading import Settings

log = logging.getLogger("gateway.http")

LOOPBACK_BINDS = ("127.0.0.1", "localhost", "::1")
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")
_EVERY_ADDRESS = ("0.0.0.0", "::", "")
_DEFAULT_PORTS = {"http": "80", "https": "443"}
_PUBLIC = "/.well-known/"  # its routes answer with their own CORS headers (the MCP SDK's)


def allowed_hosts(settings: Settings, bind: str) -> tuple[str, ...]:
    """The Host names the server answers: `[serve] allowed_hosts`, else the default for `bind`.

    Raises:
        UserError: bound to every address with no `allowed_hosts` configured.
    """
    if settings.serve.allowed_hosts is not None:
        return tuple(settings.serve.allowed_hosts)
    if bind in LOOPBACK_BINDS:
        return LOOPBACK_HOSTS
    if bind in _EVERY_ADDRESS:
        raise UserError(
            f"listening on every address ({bind or 'all'}): say which names clients reach the gateway by, "
            'e.g. [serve] allowed_hosts = ["gateway.example.internal", "10.0.0.7"] '
            '(["*"] accepts any Host, for a proxy that checks it)'
        )
    return (f"[{bind}]" if ":" in bind else bind,)


def _split(host: str) -> tuple[str, str | None]:
    """(name, port or None) of a Host header value or an allowed entry; IPv6 names keep brackets."""
    host = host.strip().lower()
    if host.startswith("["):
        end = host.find("]")
        if end < 0:
            return host, None
        name, rest = host[: end + 1], host[end + 1 :]
        port = rest[1:] if rest.startswith(":") else None
    else:
        name, sep, port_text = host.partition(":")
        port = port_text if sep else None
    return name.rstrip("."), None if port in (None, "*") else port


class HostOriginGuard:
    """ASGI middleware: refuses a Host not allowed (421) and a foreign Origin (403) on every route.

    Args:
        app: the application it guards.
        hosts: allowed Host entries: `name` or `name:*` (any port), `name:port`, or `*` (any).
        origins: Origins allowed besides the request's own, e.g. `https://app.example.com`.
    """

    def __init__(self, app: ASGIApp, hosts: Sequence[str], origins: Sequence[str] = ()) -> None:
        self.app = app
        self.any_host = "*" in hosts
        self.hosts = [_split(h) for h in hosts if h != "*"]
        self.origins = {o.strip().lower().rstrip("/") for o in origins}

    def host_allowed(self, host: str) -> bool:
        if self.any_host:
            return True
        name, port = _split(host)
        return any(name == n and (p is None or p == port) for n, p in self.hosts)

    def origin_allowed(self, origin: str, host: str) -> bool:
        origin = origin.strip().lower().rstrip("/")
        if origin in self.origins:
            return True
        try:
            parts = urlsplit(origin)
        except ValueError:
            return False
        if parts.scheme not in _DEFAULT_PORTS or not parts.netloc:
            return False  # "null", a file page, an extension
        default = _DEFAULT_PORTS[parts.scheme]
        origin_name, origin_port = _split(parts.netloc)
        host_name, host_port = _split(host)
        return origin_name == host_name and (origin_port or default) == (host_port or default)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # lifespan; the server has no websocket route
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope.get("headers", [])}
        host = headers.get("host", "")
        if not self.host_allowed(host):
            log.warning("refused a request for Host %s (not in [serve] allowed_hosts)", safe_text(host, 100))
            refusal = JSONResponse(
                {"error": "misdirected", "message": "This server does not answer that Host name."},
                status_code=421,
            )
            await refusal(scope, receive, send)
            return
        origin = headers.get("origin")
        # A page sent with `Referrer-Policy: no-referrer` (the console's) posts its forms with
        # "Origin: null"; the browser's own Sec-Fetch-Site, which no page can set, says it is ours.
        if origin == "null" and headers.get("sec-fetch-site") == "same-origin":
            origin = None
        public = scope.get("path", "").startswith(_PUBLIC)
        if origin is not None and not public and not self.origin_allowed(origin, host):
            log.warning(
                "refused a request from Origin %s (not in [serve] allowed_origins)", safe_text(origin, 100)
            )
            refusal = JSONResponse(
                {"error": "forbidden_origin", "message": "Requests from that web page's origin are refused."},
                status_code=403,
            )
            await refusal(scope, receive, send)
            return
        await self.app(scope, receive, send)

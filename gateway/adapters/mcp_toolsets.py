"""Named toolsets over MCP: each at its own endpoint (`/mcp/<toolset>`), and tokens bound to one.

A caller is confined to every toolset something it connects with binds it to (`gateway.named_toolsets`):

- the endpoint: `[serve] path` + `/<toolset>` serves the same three meta-tools over that toolset; a
  name no `[[toolsets]]` entry has is a 404. With `[serve.oauth]` each endpoint is a resource of its
  own: its metadata (RFC 9728) names its URL, and its 401 points there;
- a static token whose `[[serve.tokens]]` entry names a toolset;
- an OAuth access token whose client id or a scope a toolset lists, or whose audience is a toolset's
  resource URL (a token issued for `/mcp/support` is confined to it wherever it is used).

The endpoint reaches the handlers through a context variable, as the SDK hands them the token.
The server's instructions, which count tools by category, are counted for the caller's toolsets.
"""

from __future__ import annotations

import contextvars
import hashlib
from collections.abc import Callable, Mapping
from typing import Any

from mcp.server import Server
from mcp.server.auth.middleware.bearer_auth import RequireAuthMiddleware
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.routes import build_resource_metadata_url, create_protected_resource_routes
from mcp.server.auth.settings import AuthSettings
from pydantic import AnyHttpUrl
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from ..context import Principal
from ..errors import UserError
from ..named_toolsets import confine
from ..rendering import safe_text
from ..settings.loading import Settings
from .oauth import MappedToken

AT_TOOLSET: contextvars.ContextVar[frozenset[str]] = contextvars.ContextVar(
    "gateway_at_toolset", default=frozenset()
)
"""The toolsets the current request is served in: its endpoint's, and the server's own (`gateway serve
--toolset`); empty at the whole catalog's endpoint of a whole server. An endpoint adds to them, never
replaces them."""


def token_toolsets(settings: Settings, environ: Mapping[str, str]) -> dict[str, str]:
    """{sha256 hex digest: toolset} of the `serve.tokens` bound to a toolset."""
    return {digest: toolset for digest, (_, toolset) in token_entries(settings, environ).items() if toolset}


def token_entries(settings: Settings, environ: Mapping[str, str]) -> dict[str, tuple[str, str | None]]:
    """`serve.tokens` as {sha256 hex digest: (principal id, toolset or None)}.

    Raises:
        UserError: a token names an environment variable that is not set.
    """
    entries: dict[str, tuple[str, str | None]] = {}
    for entry in settings.serve.tokens:
        if entry.env is not None:
            value = environ.get(entry.env, "")
            if not value:
                raise UserError(
                    f"serve.tokens: environment variable {entry.env} (for {entry.principal}) is not set"
                )
            entries[hashlib.sha256(value.encode()).hexdigest()] = (entry.principal, entry.toolset)
        elif entry.sha256 is not None:
            entries[entry.sha256] = (entry.principal, entry.toolset)
    return entries


def bound_token(principal: str, toolset: str | None) -> AccessToken:
    """A verified static token: its principal, and the toolset it is bound to."""
    if toolset is None:
        return AccessToken(token="", client_id=principal, subject=principal, scopes=[])
    return MappedToken(
        token="",
        client_id=principal,
        subject=principal,
        scopes=[],
        principal=principal,
        roles=[],
        toolsets=[toolset],
    )


def confined(principal: Principal, token: AccessToken | None) -> Principal:
    """`principal` confined to its token's toolsets and to the endpoint's."""
    toolsets = list(token.toolsets) if isinstance(token, MappedToken) else []
    return confine(principal, [*toolsets, *AT_TOOLSET.get()])


def resources(resource: str, settings: Settings) -> dict[str, str]:
    """{a toolset endpoint's resource URL: the toolset}, from the whole catalog's resource URL."""
    return {f"{resource.rstrip('/')}/{t.name}": t.name for t in settings.toolsets}


class ToolsetServer(Server[Any]):
    """An MCP server whose instructions count the tools of the caller's toolsets.

    `instructions_for(toolsets)` gives them (kept per set of toolsets); `toolsets()` says the
    current caller's, from its token and the endpoint.
    """

    instructions_for: Callable[[frozenset[str]], str | None] | None = None
    toolsets: Callable[[], frozenset[str]] = staticmethod(frozenset)

    @property
    def instructions(self) -> str | None:
        toolsets = self.toolsets()
        if toolsets and self.instructions_for is not None:
            return self.instructions_for(toolsets)
        return self._whole_instructions

    @instructions.setter
    def instructions(self, value: str | None) -> None:
        self._whole_instructions = value


class _AtToolset:
    """ASGI: a request to a toolset's endpoint, handed on as one to the whole catalog's, with the toolset said."""

    def __init__(self, app: ASGIApp, name: str, path: str) -> None:
        self.app, self.name, self.path = app, name, path

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        token = AT_TOOLSET.set(AT_TOOLSET.get() | {self.name})  # within the server's own, if any
        try:
            # The same path as the whole catalog's, so every check made there (JSON-RPC) is made here.
            await self.app({**scope, "path": self.path}, receive, send)
        finally:
            AT_TOOLSET.reset(token)


def add_routes(app: Any, settings: Settings, auth: AuthSettings | None) -> None:
    """Each toolset's endpoint at `[serve] path`/<name>, its resource metadata, and 404 for other names.

    The endpoints take the whole catalog's route as built (its token check, its message checks);
    with OAuth, each answers a 401 with its own metadata URL.
    """
    path = settings.serve.path
    base = next(r for r in app.router.routes if isinstance(r, Route) and r.path == path)
    prefix = path.rstrip("/")
    routes: list[Route] = []
    for toolset in sorted(t.name for t in settings.toolsets):
        endpoint = base.app
        if isinstance(endpoint, RequireAuthMiddleware) and auth is not None and auth.resource_server_url:
            resource = AnyHttpUrl(f"{str(auth.resource_server_url).rstrip('/')}/{toolset}")
            metadata = build_resource_metadata_url(resource)
            endpoint = RequireAuthMiddleware(endpoint.app, endpoint.required_scopes, metadata)
            routes += create_protected_resource_routes(
                resource_url=resource,
                authorization_servers=[auth.issuer_url],
                scopes_supported=auth.required_scopes,
            )
        routes.append(Route(f"{prefix}/{toolset}", endpoint=_AtToolset(endpoint, toolset, path)))

    async def unknown(request: Request) -> Response:
        name = safe_text(request.path_params.get("name", ""), 64)
        message = f"No toolset named {name!r} is served here; the whole catalog is at {path}."
        return JSONResponse({"error": "not_found", "message": message}, status_code=404)

    routes.append(
        Route(f"{prefix}/{{name:path}}", endpoint=unknown, methods=["GET", "HEAD", "POST", "DELETE"])
    )
    app.router.routes.extend(routes)

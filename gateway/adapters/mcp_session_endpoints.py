"""An MCP session answers only at the endpoint that opened it (`/mcp` or one toolset's `/mcp/<name>`).

Each request is confined by its own endpoint whatever session it names, so a session carried to
another endpoint could never see more than that endpoint serves; but one session spread over two
catalogs mixes what it learns and confuses its client. Presented anywhere else, a session id answers
404 as an unknown one does, which the MCP specification tells a client to answer by opening a new
session (at the endpoint it now calls).

The SDK's session manager owns the sessions; this wrapper only remembers where each was opened, from
the `Mcp-Session-Id` header of the answer that opened it, and forgets it when the session ends.

It also bounds the sessions one principal holds open (`[serve] max_sessions_per_principal`): the
SDK bounds them all together, so without this one token could open them all and leave every other
principal unable to open one. A principal at its bound gets 503, as the SDK answers at its own.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Container, Iterable
from typing import Any

from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser, RequireAuthMiddleware
from mcp.server.auth.provider import principal_components
from mcp.types import INTERNAL_ERROR, INVALID_REQUEST, ErrorData, JSONRPCError
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .mcp_toolsets import AT_TOOLSET

log = logging.getLogger("gateway.mcp")

_HEADER = b"mcp-session-id"
_VERSION = b"mcp-protocol-version"
_PRUNE_EVERY = 1024  # openings between two looks at which sessions are still open
DEFAULT_MAX_PER_PRINCIPAL = 1000
"""Sessions one principal may hold open: a tenth of the SDK's 10,000 for all together."""


def _header(headers: Iterable[tuple[bytes, bytes]]) -> str | None:
    return next((v.decode("latin-1") for k, v in headers if k.lower() == _HEADER), None)


# The SDK's own answer for a session it does not know, byte for byte, so the two cannot be told apart.
_not_found = Response(
    JSONRPCError(
        jsonrpc="2.0", id=None, error=ErrorData(code=INVALID_REQUEST, message="Session not found")
    ).model_dump_json(by_alias=True, exclude_unset=True),
    status_code=404,
    media_type="application/json",
)
# The SDK's answer at its own bound of open sessions.
_too_many = Response(
    JSONRPCError(
        jsonrpc="2.0", id=None, error=ErrorData(code=INTERNAL_ERROR, message="Too many open sessions")
    ).model_dump_json(by_alias=True, exclude_unset=True),
    status_code=503,
    media_type="application/json",
)


def _owner(scope: Scope) -> str | None:
    """The principal a request's token names, as the SDK binds sessions (None: no token)."""
    user = scope.get("user")
    return repr(principal_components(user.access_token)) if isinstance(user, AuthenticatedUser) else None


def _opens(scope: Scope) -> bool:
    """Whether the SDK opens a session for this request: no session named, and a handshake-era
    protocol (a request of a later protocol carries its version and needs no session)."""
    version = next((v.decode("latin-1") for k, v in scope.get("headers", []) if k.lower() == _VERSION), None)
    return _header(scope.get("headers", [])) is None and (
        version is None or version in HANDSHAKE_PROTOCOL_VERSIONS
    )


class SessionEndpoints:
    """ASGI: remembers the endpoint each session was opened at and refuses it at any other.

    Args:
        app: the MCP endpoint (behind its token check, so a caller without a token gets 401 first).
        open_sessions: the ids of the sessions still open (the SDK forgets expired ones itself).
        prune_every: after this many sessions opened, those no longer open are forgotten.
        max_per_principal: sessions one principal (a token's client, issuer and subject) may hold open.
    """

    def __init__(
        self,
        app: ASGIApp,
        open_sessions: Callable[[], Container[str]],
        *,
        prune_every: int = _PRUNE_EVERY,
        max_per_principal: int = DEFAULT_MAX_PER_PRINCIPAL,
    ) -> None:
        self.app = app
        self.open_sessions = open_sessions
        self.prune_every = prune_every
        self.max_per_principal = max_per_principal
        self.opened_at: dict[str, frozenset[str]] = {}  # session id -> the toolsets it was opened in
        self.owned: dict[str, set[str]] = {}  # principal -> the sessions it opened
        self._opening: dict[str, int] = {}  # principal -> its requests opening a session right now
        self._openings = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        at = AT_TOOLSET.get()
        session = _header(scope.get("headers", []))
        if session is None:
            await self._open(scope, receive, send, at)
            return
        if session in self.opened_at and self.opened_at[session] != at:
            await _not_found(scope, receive, send)
            return
        status = 0

        async def watching(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        await self.app(scope, receive, watching)
        ended = scope["method"] == "DELETE" and 200 <= status < 300
        # A 404 may be the SDK refusing another principal's token: the session then goes on.
        if ended or (status == 404 and session not in self.open_sessions()):
            self.opened_at.pop(session, None)  # ended by its client, or expired
            for held in self.owned.values():
                held.discard(session)

    async def _open(self, scope: Scope, receive: Receive, send: Send, at: frozenset[str]) -> None:
        owner = _owner(scope) if _opens(scope) else None
        if owner is None:
            await self.app(scope, receive, self._recording(send, at, None))
            return
        if self._held(owner) >= self.max_per_principal:
            log.warning(
                "refused to open a session: its principal holds %d open already", self.max_per_principal
            )
            await _too_many(scope, receive, send)
            return
        self._opening[owner] = self._opening.get(owner, 0) + 1
        opening = True

        def done() -> None:  # opened (then held), or not opened after all
            nonlocal opening
            if opening:
                opening = False
                self._opening[owner] -= 1
                if not self._opening[owner]:
                    del self._opening[owner]

        try:
            await self.app(scope, receive, self._recording(send, at, owner, done))
        finally:
            done()

    def _held(self, owner: str) -> int:
        """The sessions `owner` holds open, and those it is opening now."""
        mine = self.owned.get(owner)
        if mine:
            still = self.open_sessions()
            mine.intersection_update(s for s in list(mine) if s in still)
        return len(mine or ()) + self._opening.get(owner, 0)

    def _recording(
        self, send: Send, at: frozenset[str], owner: str | None, done: Callable[[], None] | None = None
    ) -> Send:
        async def recording(message: Message) -> None:
            if message["type"] == "http.response.start" and (opened := _header(message.get("headers", []))):
                self._opened(opened, at, owner)
                if done is not None:
                    done()
            await send(message)

        return recording

    def _opened(self, session: str, at: frozenset[str], owner: str | None) -> None:
        self.opened_at[session] = at
        if owner is not None:
            self.owned.setdefault(owner, set()).add(session)
        self._openings += 1
        if self._openings % self.prune_every == 0:  # sessions that expired unused are never presented again
            still = self.open_sessions()
            self.opened_at = {s: t for s, t in self.opened_at.items() if s in still}
            self.owned = {
                o: live for o, held in self.owned.items() if (live := {s for s in held if s in still})
            }


def own_sessions(
    app: Any, path: str, manager: Any, *, max_per_principal: int = DEFAULT_MAX_PER_PRINCIPAL
) -> None:
    """Wrap the MCP endpoint at `path` (inside its token check) in `SessionEndpoints`.

    Call it before the toolsets' endpoints are added: they take the same endpoint as built.
    """

    def open_sessions() -> Container[str]:
        # The SDK keeps its open sessions in a private mapping; without it nothing is pruned early.
        found = getattr(manager, "_server_instances", None)
        return _Everything() if found is None else found

    for route in app.router.routes:
        if isinstance(route, Route) and route.path == path:
            endpoint = route.app
            if isinstance(endpoint, RequireAuthMiddleware):
                endpoint.app = SessionEndpoints(
                    endpoint.app, open_sessions, max_per_principal=max_per_principal
                )
            else:
                route.app = SessionEndpoints(endpoint, open_sessions, max_per_principal=max_per_principal)


class _Everything:
    def __contains__(self, item: object) -> bool:
        return True

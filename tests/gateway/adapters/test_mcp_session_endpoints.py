"""`SessionEndpoints` keeps no memory of sessions the SDK has let go (expired unused): a real ASGI app
on a loopback port, standing in for the SDK's session manager, whose open sessions the test decides.

The endpoint rule itself is tested against a real `gateway serve` in test_mcp_sessions_http.py.
"""

from __future__ import annotations

import itertools

import httpx2
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from gateway.adapters.mcp_session_endpoints import SessionEndpoints
from gateway.adapters.mcp_toolsets import AT_TOOLSET

from ..loopback_http import loopback


class AtToolset:
    """ASGI: `app` as a toolset's endpoint (the route `mcp_toolsets` adds says the toolset the same way)."""

    def __init__(self, app: ASGIApp, name: str) -> None:
        self.app, self.name = app, name

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        token = AT_TOOLSET.set(AT_TOOLSET.get() | {self.name})
        try:
            await self.app(scope, receive, send)
        finally:
            AT_TOOLSET.reset(token)


def test_sessions_the_manager_no_longer_holds_are_forgotten_and_open_ones_stay_bound() -> None:
    numbers = itertools.count(1)
    still_open: set[str] = set()

    async def manager(scope: Scope, receive: Receive, send: Send) -> None:
        session = Request(scope, receive).headers.get("mcp-session-id")
        if session is None:  # an opening request: a new session
            session = f"s{next(numbers)}"
            still_open.add(session)
            answer = Response("opened", headers={"mcp-session-id": session})
        else:
            answer = Response("ok") if session in still_open else Response("Session not found", 404)
        await answer(scope, receive, send)

    ours = SessionEndpoints(manager, lambda: still_open, prune_every=3)

    app = Starlette(
        routes=[
            Route("/mcp", ours, methods=["POST"]),
            Route("/mcp/notes", AtToolset(ours, "notes"), methods=["POST"]),
        ]
    )
    with loopback(app) as url, httpx2.Client(base_url=url) as http:
        first = http.post(f"{url}/mcp/notes").headers["mcp-session-id"]
        second = http.post(f"{url}/mcp").headers["mcp-session-id"]
        assert ours.opened_at == {first: {"notes"}, second: set()}
        still_open.discard(first)  # expired unused: the manager let it go and no client presents it again
        third = http.post(f"{url}/mcp/notes").headers["mcp-session-id"]  # the third opening prunes
        assert ours.opened_at == {second: set(), third: {"notes"}}
        assert http.post(f"{url}/mcp/notes", headers={"mcp-session-id": second}).status_code == 404
        assert http.post(f"{url}/mcp", headers={"mcp-session-id": second}).text == "ok"


def test_the_sdks_session_manager_still_keeps_its_open_sessions_where_they_are_read() -> None:
    # `own_sessions` reads them there to prune; were they moved, nothing would be pruned before shutdown.
    from mcp.server import Server
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

    assert isinstance(StreamableHTTPSessionManager(app=Server("probe"))._server_instances, dict)

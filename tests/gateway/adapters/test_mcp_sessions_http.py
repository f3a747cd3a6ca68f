"""MCP sessions over Streamable HTTP: the real SDK client, in the handshake era (2025-11-25).

With sessions (the default), a destructive call from a client that declared elicitation asks its
user through an `elicitation/create` request, as over stdio; without them it gets the gate's
pending id. A session belongs to the principal that opened it.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import anyio
import httpx2
import pytest
from starlette.types import Receive, Scope, Send

from ..loopback_http import loopback
from .mcp_server_support import (
    APPROVE,
    DECLINE,
    DELETE_NOTE,
    SECRET,
    Human,
    audit_outcomes,
    http_client,
    http_server,
    text_of,
    write_config,
)

NO_SESSIONS = {"GATEWAY_SERVE_SESSIONS": "false"}
LEGACY = "2025-11-25"
ALICE, BOB = "alice-token-0123456789", "bob-token-9876543210"
TOKENS = "".join(
    f'\n[[serve.tokens]]\nprincipal = "{name}"\nsha256 = "{hashlib.sha256(token.encode()).hexdigest()}"\n'
    for name, token in (("alice", ALICE), ("bob", BOB))
)


@pytest.mark.parametrize("token", [None, ALICE], ids=["no-tokens", "a-principals-token"])
def test_a_handshake_era_client_in_a_session_is_asked_and_its_answer_decides(
    tmp_path: Path, token: str | None
) -> None:
    human = Human([APPROVE, DECLINE])

    async def scenario(url: str) -> None:
        async with http_client(url, token, mode="legacy", elicitation_callback=human) as client:
            approved = await client.call_tool("invoke_tool", DELETE_NOTE)
            assert approved.structured_content == {"deleted": "n1", "by": "alice" if token else "local"}
            declined = await client.call_tool("invoke_tool", DELETE_NOTE)
            assert text_of(declined)["error"]["code"] == "declined"

    with http_server(write_config(tmp_path, TOKENS if token else "", elicitation=True)) as server:
        anyio.run(scenario, server.url)
    assert [q.split(" [")[0] for q in human.asked] == ["Approve this action? Delete a note for good"] * 2
    assert audit_outcomes(tmp_path, "notes_delete") == [
        "pending_confirmation",
        "approved_by_host",
        "approved",
        "attempt",
        "executed",
        "pending_confirmation",
        "denied_by_host",
        "declined",
    ]


@pytest.mark.parametrize(
    ("elicitation", "env"),
    [(True, NO_SESSIONS), (False, {})],
    ids=["without-sessions", "elicitation-not-an-approver"],
)
def test_a_handshake_era_client_that_may_not_be_asked_gets_the_pending_id(
    tmp_path: Path, elicitation: bool, env: dict[str, str]
) -> None:
    human = Human([APPROVE])

    async def scenario(url: str) -> None:
        async with http_client(url, mode="legacy", elicitation_callback=human) as client:
            body = text_of(await client.call_tool("invoke_tool", DELETE_NOTE))
            assert body["status"] == "confirmation_required"

    with http_server(write_config(tmp_path, elicitation=elicitation), env=env) as server:
        anyio.run(scenario, server.url)
    assert human.asked == []
    assert audit_outcomes(tmp_path) == ["pending_confirmation"]


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": LEGACY,
        "capabilities": {"elicitation": {}},
        "clientInfo": {"name": "probe", "version": "1"},
    },
}
LIST_TOOLS = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}


def _headers(token: str, session: str | None = None) -> dict[str, str]:
    headers = {
        "Authorization": f"Bearer {token}",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": LEGACY,
    }
    return headers | ({"Mcp-Session-Id": session} if session else {})


def test_a_session_id_presented_by_another_principal_is_not_found(tmp_path: Path) -> None:
    with (
        http_server(write_config(tmp_path, TOKENS, elicitation=True)) as server,
        httpx2.Client(timeout=30) as http,
    ):
        opened = http.post(server.url, json=INITIALIZE, headers=_headers(ALICE))
        assert opened.status_code == 200
        session = opened.headers["mcp-session-id"]
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert http.post(server.url, json=initialized, headers=_headers(ALICE, session)).status_code == 202

        stolen = http.post(server.url, json=LIST_TOOLS, headers=_headers(BOB, session))
        assert stolen.status_code == 404
        assert "invoke_tool" not in stolen.text
        # Bob's attempt changed nothing for alice: her session still answers her.
        own = http.post(server.url, json=LIST_TOOLS, headers=_headers(ALICE, session))
        assert own.status_code == 200 and "invoke_tool" in own.text


def test_one_principal_cannot_hold_every_session_open_and_lock_the_others_out(tmp_path: Path) -> None:
    config = "\n[serve]\nmax_sessions_per_principal = 2\n" + TOKENS
    with http_server(write_config(tmp_path, config)) as server, httpx2.Client(timeout=30) as http:

        def open_session(token: str) -> httpx2.Response:
            return http.post(server.url, json=INITIALIZE, headers=_headers(token))

        held = [open_session(BOB).headers["mcp-session-id"] for _ in range(2)]
        refused = open_session(BOB)
        assert refused.status_code == 503
        assert refused.json()["error"]["message"] == "Too many open sessions"
        assert open_session(ALICE).status_code == 200  # the others still get theirs
        # A request of a later protocol opens no session, so it is never refused for this.
        assert (
            http.post(
                server.url, json=LIST_TOOLS, headers=_headers(BOB) | {"MCP-Protocol-Version": "2026-07-28"}
            ).status_code
            != 503
        )
        # Ending one of its sessions gives it room again.
        assert http.delete(server.url, headers=_headers(BOB, held[0])).status_code == 200
        assert open_session(BOB).status_code == 200


def test_a_session_id_presented_at_another_endpoint_is_not_found(tmp_path: Path) -> None:
    config = TOKENS + '\n[[toolsets]]\nname = "notes"\ncategories = ["notes"]\n'
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    with (
        http_server(write_config(tmp_path, config, elicitation=True)) as server,
        httpx2.Client(timeout=30) as http,
    ):
        notes = f"{server.url}/notes"
        sessions = {}
        for url in (notes, server.url):
            opened = http.post(url, json=INITIALIZE, headers=_headers(ALICE))
            sessions[url] = opened.headers["mcp-session-id"]
            assert http.post(url, json=initialized, headers=_headers(ALICE, sessions[url])).status_code == 202
        unknown = http.post(server.url, json=LIST_TOOLS, headers=_headers(ALICE, "0" * 32))
        assert unknown.status_code == 404
        for opened_at, elsewhere in ((notes, server.url), (server.url, notes)):
            moved = http.post(elsewhere, json=LIST_TOOLS, headers=_headers(ALICE, sessions[opened_at]))
            # Word for word the answer for a session that does not exist, so the client opens a new one.
            assert (moved.status_code, moved.content) == (404, unknown.content)
            assert moved.headers["content-type"] == unknown.headers["content-type"]
            assert http.delete(elsewhere, headers=_headers(ALICE, sessions[opened_at])).status_code == 404
            # The session still answers at its own endpoint, with its own catalog.
            own = http.post(opened_at, json=LIST_TOOLS, headers=_headers(ALICE, sessions[opened_at]))
            assert own.status_code == 200 and "invoke_tool" in own.text
        # Another principal's token at the right endpoint is refused, and the session stays bound to it.
        assert http.post(notes, json=LIST_TOOLS, headers=_headers(BOB, sessions[notes])).status_code == 404
        assert (
            http.post(server.url, json=LIST_TOOLS, headers=_headers(ALICE, sessions[notes])).status_code
            == 404
        )
        # Ended at its own endpoint, it is gone everywhere.
        assert http.delete(notes, headers=_headers(ALICE, sessions[notes])).status_code == 200
        assert http.post(notes, json=LIST_TOOLS, headers=_headers(ALICE, sessions[notes])).status_code == 404


# -- replicas behind a router that learns session ids ----------------------------------------


class StickyRouter:
    """The load balancer of docs/mcp.md's sessions: it learns each session id from the answer.

    A request with a known `Mcp-Session-Id` goes to the replica that issued it; any other goes to
    the next replica in turn. Bodies stream both ways (SSE).
    """

    def __init__(self, replicas: list[str]) -> None:
        self.replicas = replicas
        self.sessions: dict[str, str] = {}
        self.turn = 0
        self.routed: list[tuple[str, str]] = []  # (method, replica)

    def pick(self, session: str | None) -> str:
        if session is not None and session in self.sessions:
            return self.sessions[session]
        self.turn += 1
        return self.replicas[self.turn % len(self.replicas)]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        headers = [(k, v) for k, v in scope["headers"] if k not in (b"host", b"connection")]
        session = next((v.decode() for k, v in headers if k == b"mcp-session-id"), None)
        target = self.pick(session)
        self.routed.append((scope["method"], target))
        body = b""
        while True:
            event = await receive()
            body += event.get("body", b"")
            if not event.get("more_body", False):
                break
        async with httpx2.AsyncClient(timeout=None) as upstream:
            request = upstream.build_request(
                scope["method"], target + scope["path"], headers=headers, content=body
            )
            response = await upstream.send(request, stream=True)
            issued = response.headers.get("mcp-session-id")
            if issued:
                self.sessions[issued] = target
            passed = [
                (k.encode(), v.encode())
                for k, v in response.headers.multi_items()
                if k.lower() not in ("transfer-encoding", "connection")
            ]
            await send({"type": "http.response.start", "status": response.status_code, "headers": passed})
            async for chunk in response.aiter_raw():
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await response.aclose()
        await send({"type": "http.response.body", "body": b"", "more_body": False})


def test_behind_a_router_that_learns_session_ids_each_replicas_sessions_get_their_dialogs(
    tmp_path: Path,
) -> None:
    store = f'\n[confirmation]\nstore = "sqlite"\npath = "{tmp_path / "shared" / "confirmations.sqlite3"}"\n'
    humans = [Human([APPROVE]), Human([APPROVE])]

    def replica(name: str) -> Path:
        audit = f'\n[audit]\npath = "{tmp_path / name / "audit.jsonl"}"\n'
        return write_config(tmp_path / name, store + audit, data_dir=tmp_path / "shared", elicitation=True)

    async def scenario(url: str) -> None:
        # A request sent to the wrong replica would leave the client waiting: fail instead.
        with anyio.fail_after(60):
            async with (
                http_client(url, mode="legacy", elicitation_callback=humans[0]) as first,
                http_client(url, mode="legacy", elicitation_callback=humans[1]) as second,
            ):
                for client in (first, second):
                    done = await client.call_tool("invoke_tool", DELETE_NOTE)
                    assert done.structured_content == {"deleted": "n1", "by": "local"}

    env = {"GATEWAY_CONFIRMATION_SECRET": SECRET}
    with (
        http_server(replica("a"), env=env) as a,
        http_server(replica("b"), env=env) as b,
    ):
        router = StickyRouter([a.url.removesuffix("/mcp"), b.url.removesuffix("/mcp")])
        with loopback(router) as front:
            anyio.run(scenario, front + "/mcp")
    assert [len(h.asked) for h in humans] == [1, 1]
    assert len(router.sessions) == 2 and set(router.sessions.values()) == set(router.replicas)
    for name in ("a", "b"):  # one session on each: its call asked, approved and ran there
        assert audit_outcomes(tmp_path / name) == [
            "pending_confirmation",
            "approved_by_host",
            "approved",
            "attempt",
            "executed",
        ]

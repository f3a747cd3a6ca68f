"""Learning from use, end to end: real MCP clients and the agent loop teach; Redis replicas share it."""

from __future__ import annotations

import hashlib
import json
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from gateway import Catalog, Gateway, Principal
from gateway.usage import RedisUsageStore, SqliteUsageStore, Usage
from tests.discovery_answers import as_page

from ..sample_tools import ALL_TOOLS
from .mcp_server_support import http_client, http_server, redis_server, stdio_server, write_config
from .replay import Replay, anthropic_turn
from .vendors import ANTHROPIC, call, converse

WORDS = "the gazebo errand, sorted"  # words no tool's text uses, and no verb of any vocabulary
ANYONE = Principal()


def _pairs(data_dir: Path) -> list[dict[str, object]]:
    store = SqliteUsageStore(data_dir / "usage.sqlite3")
    try:
        return store.export()
    finally:
        store.close()


def test_an_mcp_client_session_over_stdio_teaches_the_server(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with Client(stdio_server(write_config(tmp_path))) as client:
            await client.call_tool("discover_tools", {"query": WORDS})
            await client.call_tool(
                "invoke_tool", {"tool_name": "notes_create", "parameters": {"title": "eggs"}}
            )
            await client.call_tool("invoke_tool", {"tool_name": "notes_create", "parameters": {"title": 5}})

    anyio.run(scenario)
    assert _pairs(tmp_path) == [{"query": WORDS, "tools": ["notes_create"]}]


@asynccontextmanager
async def session_client(url: str, token: str | None, session: str | None) -> AsyncIterator[Client]:
    """The SDK client over Streamable HTTP, sending `token` and naming `session` (Mcp-Session-Id)."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    if session:
        headers["Mcp-Session-Id"] = session
    async with (
        create_mcp_http_client(headers=headers) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        yield client


def test_http_clients_teach_per_principal_and_a_later_client_finds_the_tool(tmp_path: Path) -> None:
    async def scenario(url: str) -> None:
        async with session_client(url, None, "conversation-1") as client:
            missed = await client.call_tool("discover_tools", {"query": WORDS})
            assert missed.structured_content["total"] == 0
            await client.call_tool(
                "invoke_tool", {"tool_name": "notes_create", "parameters": {"title": "eggs"}}
            )
        async with http_client(url) as later:
            for _ in range(50):  # the server re-reads its store in the background, never in a search
                found = await later.call_tool("discover_tools", {"query": WORDS})
                if found.structured_content["total"]:
                    break
                await anyio.sleep(0.1)
            assert [t["name"] for t in found.structured_content["tools"]] == ["notes_create"]

    with http_server(write_config(tmp_path)) as server:
        anyio.run(scenario, server.url)
    assert _pairs(tmp_path) == [{"query": WORDS, "tools": ["notes_create"]}]


ANA_TOKEN, BOB_TOKEN = "ana-token-0123456789", "bob-token-9876543210"
TOKENS = "".join(
    f'[[serve.tokens]]\nprincipal = "{who}"\nsha256 = "{hashlib.sha256(token.encode()).hexdigest()}"\n\n'
    for who, token in (("ana", ANA_TOKEN), ("bob", BOB_TOKEN))
)
NOTE = {"tool_name": "notes_create", "parameters": {"title": "eggs"}}


def test_a_session_id_presented_by_another_principal_is_another_session(tmp_path: Path) -> None:
    async def scenario(url: str) -> None:
        async with session_client(url, ANA_TOKEN, "shared-id") as ana:
            await ana.call_tool("discover_tools", {"query": WORDS})
        async with session_client(url, BOB_TOKEN, "shared-id") as bob:
            # Bob names Ana's session: his call does not pair with her search.
            assert not (await bob.call_tool("invoke_tool", NOTE)).is_error
        async with session_client(url, BOB_TOKEN, None) as stateless:
            await stateless.call_tool("discover_tools", {"query": "jot down the gazebo plan"})
            # No session: the call pairs with nothing, not even with its own principal's search.
            assert not (await stateless.call_tool("invoke_tool", NOTE)).is_error

    with http_server(write_config(tmp_path, TOKENS)) as server:
        anyio.run(scenario, server.url)
    assert _pairs(tmp_path) == []


def test_one_principals_flood_of_session_ids_over_http_does_not_drop_anothers_pair(tmp_path: Path) -> None:
    """A client naming a new Mcp-Session-Id with each call forgets only its own sessions' searches."""
    bounds = "\n[usage]\nmax_sessions = 3\nmax_sessions_per_principal = 2\n"

    async def scenario(url: str) -> None:
        async with session_client(url, BOB_TOKEN, "bobs-conversation") as bob:
            await bob.call_tool("discover_tools", {"query": WORDS})
            for n in range(6):  # ana's flood: a session id of her own making each time
                async with session_client(url, ANA_TOKEN, f"flood-{n}") as ana:
                    await ana.call_tool("discover_tools", {"query": "anything at all"})
            assert not (await bob.call_tool("invoke_tool", NOTE)).is_error

    with http_server(write_config(tmp_path, TOKENS + bounds)) as server:
        anyio.run(scenario, server.url)
    assert _pairs(tmp_path) == [{"query": WORDS, "tools": ["notes_create"]}]


def test_the_agent_loop_conversation_is_a_session(replay: Replay) -> None:
    usage = Usage(SqliteUsageStore(), check_seconds=0.0)
    gw = Gateway(Catalog(ALL_TOOLS), usage=usage)
    replay.script(
        anthropic_turn("", [call("toolu_1", "discover_tools", {"query": WORDS})]),
        anthropic_turn(
            "",
            [call("toolu_2", "invoke_tool", {"tool_name": "notes_create", "parameters": {"title": "eggs"}})],
        ),
        anthropic_turn("Noted."),
    )
    converse(ANTHROPIC, replay, gw, ["Remember the gazebo errand: eggs"])
    assert usage.export() == [{"query": WORDS, "tools": ["notes_create"]}]


@pytest.fixture
def redis_url(tmp_path: Path) -> Iterator[str]:
    with redis_server(tmp_path / "redis") as url:
        yield url


def test_replicas_sharing_a_redis_store_learn_from_each_other(redis_url: str) -> None:
    a, b = (Usage(RedisUsageStore(redis_url, prefix="test:usage"), check_seconds=0.0) for _ in range(2))
    replica_b = Gateway(Catalog(ALL_TOOLS), usage=b)
    visible = replica_b.visible(ANYONE)
    before = as_page(replica_b.discover(ANYONE, query=WORDS))
    assert before["total"] == 0
    a.import_lines([json.dumps({"query": WORDS, "tools": ["notes_create"]})])  # taught on replica a
    b.learned(visible, wait=True)
    after = as_page(replica_b.discover(ANYONE, query=WORDS))
    assert [t["name"] for t in after["tools"]] == ["notes_create"]
    stats = b.stats()
    assert stats["pairs"] == 1
    assert stats["found_nothing"] == [{"query": WORDS, "searches": 1}]  # counted in one round trip
    a.forget()  # forgotten on a: gone on b too
    b.learned(visible, wait=True)
    assert replica_b.discover(ANYONE, query=WORDS) == before
    a.close()
    b.close()

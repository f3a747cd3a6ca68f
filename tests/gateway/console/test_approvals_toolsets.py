"""The approvals page names the toolsets a waiting call came through: a real served gateway, a real MCP
client at a toolset's endpoint, and the real browser (Debian's chromium)."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import anyio
import pytest
from playwright.sync_api import expect

from ..adapters.mcp_server_support import HttpServer, http_client, http_server, text_of, write_config
from .conftest import ADMIN_TOKEN, CONFIG, sign_in

TOOLSETS = '\n[[toolsets]]\nname = "notes"\ncategories = ["notes"]\n'
LIVE_SECONDS = 15_000  # a deadline for the page to show a change, in milliseconds (not a timing)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[HttpServer]:
    with http_server(write_config(tmp_path, CONFIG + TOOLSETS), env={"CONSOLE_TOKEN": ADMIN_TOKEN}) as served:
        yield served


def _hold(url: str, note: str) -> str:
    async def scenario() -> str:
        async with http_client(url) as client:
            args = {"tool_name": "notes_delete", "parameters": {"note_id": note}}
            held: str = text_of(await client.call_tool("invoke_tool", args))["pending_id"]
            return held

    with ThreadPoolExecutor(1) as pool:  # the browser's event loop owns this thread
        return pool.submit(anyio.run, scenario).result()


def test_a_waiting_call_shows_the_toolsets_it_came_through_and_an_unconfined_one_none(
    server: HttpServer, page: Any
) -> None:
    confined = _hold(f"{server.url}/notes", "n1")  # the notes toolset's endpoint
    free = _hold(server.url, "n2")
    console = server.url.removesuffix("/mcp") + "/console"
    sign_in(page, console)
    row = page.locator(f'tr[data-pending-id="{confined}"]')
    expect(row).to_be_visible(timeout=LIVE_SECONDS)
    expect(row.locator(".toolsets")).to_have_text("toolsets: notes")
    other = page.locator(f'tr[data-pending-id="{free}"]')
    expect(other).to_be_visible()
    expect(other.locator(".toolsets")).to_have_count(0)
    listed = page.request.get(f"{console}/api/pending").json()["pending"]
    assert {p["pending_id"]: p["toolsets"] for p in listed} == {confined: ["notes"], free: []}

"""A real `gateway serve --transport http` with its console, a real MCP client, and Debian's chromium.

The browser is Debian's `chromium` package driven by Playwright (never `playwright install`): the
tests skip with the command to run when it is missing.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import anyio
import pytest

from ..adapters.mcp_server_support import HttpServer, http_client, http_server, text_of, write_config

T = TypeVar("T")

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ADMIN_TOKEN = "console-admin-token-0123456789"
CONFIG = """
[console]
admin_token_env = "CONSOLE_TOKEN"
"""


@dataclass
class Served:
    server: HttpServer
    data_dir: Path

    @property
    def console(self) -> str:
        return self.server.url.removesuffix("/mcp") + "/console"

    def call(self, name: str, arguments: dict[str, Any]) -> Any:
        """One tool call by the real MCP client (a client that cannot be asked: the call is held)."""

        async def scenario() -> Any:
            async with http_client(self.server.url) as client:
                return text_of(await client.call_tool(name, arguments))

        return off_the_browsers_loop(anyio.run, scenario)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    config = write_config(tmp_path, CONFIG)
    text = config.read_text().replace(
        "tests.gateway.sample_tools:provide", "tests.gateway.console.hostile_tools:provide"
    )
    config.write_text(text)
    with http_server(config, env={"CONSOLE_TOKEN": ADMIN_TOKEN}) as server:
        yield Served(server, tmp_path)
    assert ADMIN_TOKEN not in "".join(server.output)


def off_the_browsers_loop(run: Callable[..., T], *args: Any) -> T:
    """`run(*args)` in a thread of its own: a module's browser (Playwright's sync API), once a test
    has started it, holds a running event loop in this thread for the rest of the module, whatever
    the order its tests run in; `asyncio.run` and `anyio.run` cannot start another one here."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(run, *args).result()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not (os.access(CHROMIUM, os.X_OK) or shutil.which("chromium")):
        pytest.skip("no chromium: apt-get install chromium (Debian's package; Playwright drives it)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context()
    opened = context.new_page()
    yield opened
    context.close()


def sign_in(page: Any, console: str, token: str = ADMIN_TOKEN) -> None:
    page.goto(f"{console}/approvals")
    page.fill("input[name=token]", token)
    page.click("button[type=submit]")

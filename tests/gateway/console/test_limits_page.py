"""The console's catalog page shows each rate limit's state, as the served gateway counts it.

A real uvicorn serves the console on a loopback port and a real httpx client signs in with the form.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx2 as httpx
import pytest
from starlette.applications import Starlette
from starlette.routing import Mount

from gateway import Catalog, Gateway, Principal, ToolContext, run_sync
from gateway.console import console_app
from gateway.limits import Limit, Limiter, RedisBackend
from gateway.settings.loading import load_settings

from ..adapters.mcp_server_support import _free_port
from ..loopback_http import loopback
from ..sample_tools import ALL_TOOLS
from .test_sessions import TOKEN, sign_in


def _served(tmp_path: Path, limiter: Limiter) -> Iterator[tuple[str, Gateway]]:
    config = tmp_path / "config.toml"
    config.write_text(
        f'data_dir = "{tmp_path}"\nprincipal = "alice"\n[principals.bob]\nroles = []\n'
        '[console]\nadmin_token_env = "CONSOLE_TOKEN"\n'
    )
    gw = Gateway(Catalog(ALL_TOOLS), limits=limiter)
    app = console_app(gw, load_settings(config, environ={}), environ={"CONSOLE_TOKEN": TOKEN})
    with loopback(Starlette(routes=[Mount("/console", app=app)])) as url:
        yield f"{url}/console", gw


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, Gateway]]:
    clock = lambda: 1_000_000.0  # noqa: E731 (a fixed clock: 2,800 s into the hour)
    yield from _served(tmp_path, Limiter([Limit("searches", quota=2, window_seconds=3600)], clock=clock))


def test_the_catalog_page_shows_what_each_principal_has_left(served: tuple[str, Gateway]) -> None:
    console, gw = served
    for _ in range(2):
        assert run_sync(gw.invoke("notes_search", {"title": "x"}, context=ToolContext(Principal("alice")))).ok
    with httpx.Client() as client:
        sign_in(client, console)
        page = client.get(f"{console}/catalog").text
    assert "Rate limits and quotas" in page
    assert "<td>searches</td><td>2 per hour</td><td>alice</td><td>0</td>\n<td>in 800 s</td>" in page
    assert "<td>searches</td><td>2 per hour</td><td>bob</td><td>2</td>\n<td>now</td>" in page


def test_the_catalog_page_says_when_the_limits_store_cannot_be_reached(tmp_path: Path) -> None:
    backend = RedisBackend(f"redis://127.0.0.1:{_free_port()}/0")
    for console, _ in _served(tmp_path, Limiter([Limit("x", quota=1)], backend, on_error="closed")):
        with httpx.Client() as client:
            sign_in(client, console)
            page = client.get(f"{console}/catalog").text
        assert "cannot be reached: calls are refused until it answers" in page

"""The console's findability page: the report of `gateway catalog --findability` for the principal or
toolset chosen, made in a thread for a large catalog while the page says how far it is; a real
uvicorn, a real httpx client signed in by the form, and the real browser following the refresh."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest
from playwright.sync_api import expect
from starlette.applications import Starlette
from starlette.routing import Mount

from gateway import Catalog, Gateway
from gateway.console import console_app
from gateway.console import findability as console_findability
from gateway.runtime import policy_from
from gateway.search import findability as search_findability
from gateway.settings.loading import load_settings

from ..loopback_http import loopback
from ..search.findable_tools import TOOLS
from .conftest import sign_in as browser_sign_in
from .test_sessions import TOKEN, sign_in


@pytest.fixture
def console(tmp_path: Path) -> Iterator[str]:
    config = tmp_path / "config.toml"
    config.write_text(
        f'data_dir = "{tmp_path}"\n[console]\nadmin_token_env = "CONSOLE_TOKEN"\n'
        '[[toolsets]]\nname = "files"\ncategories = ["files"]\n'
    )
    settings = load_settings(config, environ={})
    gw = Gateway(Catalog(TOOLS), policy=policy_from(settings), search_cache_dir=False)
    app = console_app(gw, settings, environ={"CONSOLE_TOKEN": TOKEN})
    with loopback(Starlette(routes=[Mount("/console", app=app)])) as url:
        yield f"{url}/console"


def _items(page: str, list_id: str) -> list[str]:
    listed = re.search(rf'<ul id="{list_id}">(.*?)</ul>', page, re.S)
    assert listed is not None, page
    return re.findall(r"<li><a href=\"[^\"]+\"><code>(\w+)</code>", listed.group(1))


def test_the_page_reports_the_catalog_and_a_toolset_apart(console: str) -> None:
    with httpx.Client() as client:
        sign_in(client, console)
        whole = client.get(f"{console}/findability").text
        files = client.get(f"{console}/findability", params={"toolset": "files"}).text
    assert _items(whole, "never-found") == ["notes_the"]
    assert re.search(r'id="found">12 \(92\.3%\)<', whole)
    assert "files_folder_copy" in _items(whole, "indistinct") and "notes_search_the" in _items(
        whole, "indistinct"
    )
    assert 'http-equiv="refresh"' not in whole  # a small catalog: made at once
    assert _items(files, "never-found") == [] and re.search(r'id="found">2 \(100\.0%\)<', files)
    assert sorted(_items(files, "indistinct")) == ["files_drive_copy", "files_folder_copy"]


def test_without_signing_in_the_page_shows_nothing(console: str) -> None:
    with httpx.Client() as client:
        answer = client.get(f"{console}/findability")
    assert answer.status_code == 303 and "/console/login" in answer.headers["location"]
    assert "notes_the" not in answer.text


def test_a_large_catalogs_report_is_made_in_a_thread_the_page_waits_for(
    console: str, monkeypatch: pytest.MonkeyPatch, page: Any
) -> None:
    """The first view starts the report and says how far it is; the page looks again by itself (a
    refresh, no script) and shows the report once it is made."""
    monkeypatch.setattr(console_findability, "AT_ONCE", 0)
    release = threading.Event()
    real = search_findability.report

    def held(*args: Any, **kwargs: Any) -> Any:
        assert release.wait(60)
        return real(*args, **kwargs)

    monkeypatch.setattr(search_findability, "report", held)
    browser_sign_in(page, console, token=TOKEN)
    page.goto(f"{console}/findability")
    expect(page.locator("#progress")).to_contain_text("Ranking the requests of 13 tools: 0 done")
    assert page.locator('meta[http-equiv="refresh"]').count() == 1
    release.set()
    expect(page.locator("#never-found")).to_have_text("notes_the", timeout=30_000)
    expect(page.locator("#found")).to_have_text("12 (92.3%)")

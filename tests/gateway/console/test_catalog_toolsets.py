"""The console's catalog filtered by a named toolset: a real uvicorn, a real httpx client signed in by the
form, and the real browser (Debian's chromium) following the links."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest
from playwright.sync_api import expect
from starlette.applications import Starlette
from starlette.routing import Mount

from gateway import Catalog, Gateway, Principal, ToolContext, run_sync
from gateway.audit import JsonlAuditLog
from gateway.console import console_app
from gateway.runtime import policy_from
from gateway.settings.loading import load_settings

from ..loopback_http import loopback
from ..sample_tools import ALL_TOOLS
from .conftest import off_the_browsers_loop
from .conftest import sign_in as browser_sign_in
from .test_sessions import TOKEN, sign_in


@pytest.fixture
def console(tmp_path: Path) -> Iterator[str]:
    config = tmp_path / "config.toml"
    config.write_text(
        f'data_dir = "{tmp_path}"\n[console]\nadmin_token_env = "CONSOLE_TOKEN"\n'
        '[[toolsets]]\nname = "reading"\ntools = ["files_*", "notes_search"]\n'
        '[[toolsets]]\nname = "notes"\ncategories = ["notes"]\n'
    )
    settings = load_settings(config, environ={})
    gw = Gateway(Catalog(ALL_TOOLS), policy=policy_from(settings))
    app = console_app(gw, settings, environ={"CONSOLE_TOKEN": TOKEN})
    with loopback(Starlette(routes=[Mount("/console", app=app)])) as url:
        yield f"{url}/console"


def _listed(page: str) -> list[str]:
    return re.findall(r'<a href="/console/catalog/tools/(\w+)">', page)


def test_the_catalog_lists_a_toolsets_tools_and_links_every_toolset(console: str) -> None:
    with httpx.Client() as client:
        sign_in(client, console)
        whole = client.get(f"{console}/catalog").text
        reading = client.get(f"{console}/catalog", params={"toolset": "reading"}).text
        files = client.get(f"{console}/catalog", params={"toolset": "reading", "category": "files"}).text
        unknown = client.get(f"{console}/catalog", params={"toolset": "nosuch"})
    assert len(_listed(whole)) == len(ALL_TOOLS)
    assert 'href="/console/catalog?toolset=reading">reading</a>' in whole
    assert _listed(reading) == ["files_boom", "files_read", "notes_search"]
    assert "3 tools in toolset <code>reading</code>" in reading
    # The overview counts the toolset's tools, and its links keep the toolset.
    assert 'href="/console/catalog?category=notes&amp;toolset=reading">notes</a></td><td>1</td>' in reading
    assert _listed(files) == ["files_boom", "files_read"]
    assert unknown.status_code == 404 and "No toolset by that name." in unknown.text


def test_a_tools_page_names_the_toolsets_that_hold_it(console: str) -> None:
    with httpx.Client() as client:
        sign_in(client, console)
        search = client.get(f"{console}/catalog/tools/notes_search").text
        delete = client.get(f"{console}/catalog/tools/notes_delete").text
        boom = client.get(f"{console}/catalog/tools/files_boom").text
    assert "<dt>Toolsets that hold it</dt><dd>notes, reading</dd>" in search  # by name
    assert "<dt>Toolsets that hold it</dt><dd>notes</dd>" in delete
    assert "<dt>Toolsets that hold it</dt><dd>reading</dd>" in boom


def test_an_activity_line_shows_the_toolsets_its_call_came_through(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(
        f'data_dir = "{tmp_path}"\n[console]\nadmin_token_env = "CONSOLE_TOKEN"\n'
        '[[toolsets]]\nname = "reading"\ntools = ["notes_search"]\n'
        '[[toolsets]]\nname = "notes"\ncategories = ["notes"]\n'
    )
    settings = load_settings(config, environ={})
    gw = Gateway(Catalog(ALL_TOOLS), policy=policy_from(settings), audit=JsonlAuditLog(settings.audit_path))
    for toolsets in (frozenset({"reading", "notes"}), frozenset()):
        ctx = ToolContext(principal=Principal("bot", toolsets=toolsets))
        assert off_the_browsers_loop(run_sync, gw.invoke("notes_search", {"title": "milk"}, context=ctx)).ok
    second = len(settings.audit_path.read_bytes().splitlines(keepends=True)[0])
    app = console_app(gw, settings, environ={"CONSOLE_TOKEN": TOKEN})
    with loopback(Starlette(routes=[Mount("/console", app=app)])) as url, httpx.Client() as client:
        sign_in(client, f"{url}/console")
        confined = client.get(f"{url}/console/activity/0").text
        whole = client.get(f"{url}/console/activity/{second}").text
    assert "<dt>Toolsets</dt><dd>notes, reading</dd>" in confined
    assert "<dt>Principal</dt><dd>bot</dd>" in whole and "Toolsets" not in whole


def test_the_discovery_playground_ranks_as_a_client_confined_to_a_toolset(console: str) -> None:
    with httpx.Client() as client:
        sign_in(client, console)
        confined = client.get(f"{console}/discovery", params={"query": "note", "toolset": "reading"}).text
        whole = client.get(f"{console}/discovery", params={"query": "note"}).text
    ranked = re.compile(r'<a href="/console/catalog/tools/(\w+)"><code>')
    assert ranked.findall(confined)[0] == "notes_search"
    assert set(ranked.findall(confined)) <= {"notes_search", "files_read", "files_boom"}
    assert {"notes_create", "notes_delete"} <= set(ranked.findall(whole))
    assert "<option selected>reading</option>" in confined


def test_in_a_browser_a_toolset_is_chosen_by_its_link_and_kept_by_the_category_links(
    console: str, page: Any
) -> None:
    browser_sign_in(page, console)
    page.goto(f"{console}/catalog")
    page.click("p.toolsets >> text=reading")
    page.wait_for_url("**/catalog?toolset=reading")  # the click's navigation, done
    expect(page.locator("table.tools code")).to_have_text(["files_boom", "files_read", "notes_search"])
    page.click("table.overview >> text=notes")
    page.wait_for_url("**/catalog?category=notes&toolset=reading")
    expect(page.locator("table.tools code")).to_have_text(["notes_search"])

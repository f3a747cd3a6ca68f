"""Every console page at a desktop's width and a phone's, in Debian's chromium, with long values.

The page itself never scrolls sideways; a long unbroken value wraps inside its cell; the controls
that decide a call stay in view; labels stay beside their values.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from ..adapters.mcp_server_support import http_server, write_config
from .conftest import Served, sign_in

LIVE = 15_000  # a deadline for the page to show a change, in milliseconds (not a timing)
LONG = "n" + "x" * 1500  # one unbroken word: a token, a base64 blob, a path


@pytest.fixture(params=[1280, 390], ids=["desktop", "phone"])
def sized(browser: Any, request: pytest.FixtureRequest) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": request.param, "height": 900})
    page = context.new_page()
    failed: list[str] = []
    page.on("response", lambda r: failed.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    page.failed = failed
    yield page
    context.close()


def _fits(page: Any) -> None:
    """The page is no wider than the window: nothing to scroll sideways to."""
    page.wait_for_load_state("load")  # its stylesheet applied
    width = page.viewport_size["width"]
    assert page.evaluate("document.documentElement.scrollWidth") <= width, page.url


def test_a_long_parameter_wraps_and_approve_and_deny_stay_in_view(served: Served, sized: Any) -> None:
    held = served.call("invoke_tool", {"tool_name": "notes_delete", "parameters": {"note_id": LONG}})
    sign_in(sized, served.console)
    row = sized.locator(f'tr[data-pending-id="{held["pending_id"]}"]')
    expect(row).to_be_visible(timeout=LIVE)
    _fits(sized)
    width = sized.viewport_size["width"]
    for name in ("Approve", "Deny"):
        box = row.get_by_role("button", name=name).bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width, (name, box)
    parameters = row.locator("pre").bounding_box()
    assert parameters is not None and parameters["width"] >= min(250, width * 0.6)  # a column, not a ribbon
    if width >= 1280:  # the tool's name is read whole, beside a value that takes the rest of the row
        assert _lines(sized, "table.pending td:first-child code") == [1]
    assert sized.failed == []


def test_the_activity_detail_keeps_each_label_beside_its_value_when_agent_is_empty(
    served: Served, sized: Any
) -> None:
    served.call("invoke_tool", {"tool_name": "notes_create", "parameters": {"title": LONG[:200]}})
    sign_in(sized, served.console)
    sized.goto(f"{served.console}/activity")
    sized.goto(
        served.console.removesuffix("/console")
        + sized.locator("table.activity a", has_text="detail").first.get_attribute("href")
    )
    pairs = sized.evaluate(
        """[...document.querySelectorAll('.detail dt')].map(dt => [
            dt.textContent, dt.getBoundingClientRect().top, dt.nextElementSibling.getBoundingClientRect().top,
            dt.nextElementSibling.textContent])"""
    )
    labels = {label: value for label, _, _, value in pairs}
    assert labels["Agent"] == "" and labels["Error"] == "none", labels
    assert [(label, round(top)) for label, top, _, _ in pairs] == [
        (label, round(value_top)) for label, _, value_top, _ in pairs
    ]
    _fits(sized)
    assert sized.failed == []


def test_the_playground_shows_the_score_the_page_is_ordered_by(served: Served, sized: Any) -> None:
    served.call("invoke_tool", {"tool_name": "notes_create", "parameters": {"title": "by name, no search"}})
    sign_in(sized, served.console)
    sized.goto(f"{served.console}/discovery?query=delete+a+note")
    headers = sized.locator("table.ranked th").all_inner_texts()
    assert headers[-2:] == ["Score", "Placed"] and "Name match" in headers
    scores = [float(s) for s in sized.locator("table.ranked td.score").all_inner_texts()]
    assert scores and scores == sorted(scores, reverse=True)
    assert set(sized.locator("table.ranked td.placed").all_inner_texts()) == {"by score"}
    matches = sized.evaluate(
        "[...document.querySelectorAll('table.ranked tbody tr')].map(r => r.cells[3].textContent)"
    )
    assert matches and all(matches), matches
    never = sized.locator("section", has_text="Tools never found").inner_text()
    assert "notes_delete" in never and "notes_create" not in never  # it was called, by its name
    _fits(sized)
    assert sized.failed == []


def _lines(page: Any, selector: str) -> list[int]:
    """How many lines each matched element's text takes (its text's client rectangles, one a line)."""
    lines: list[int] = page.evaluate(
        """s => [...document.querySelectorAll(s)].map(e => {
            const r = document.createRange(); r.selectNodeContents(e);
            return new Set([...r.getClientRects()].map(c => Math.round(c.top))).size; })""",
        selector,
    )
    return lines


def test_a_row_the_lead_rule_moves_says_so_and_the_numbers_keep_to_one_line(
    served: Served, sized: Any
) -> None:
    """ "the note" scores notes_delete best, but a tool that deletes never leads a request that does not
    ask to delete: the page shows the order it uses and says why the first two are not by score."""
    sign_in(sized, served.console)
    sized.goto(f"{served.console}/discovery?query=the+note")
    rows = sized.locator("table.ranked tbody tr")
    first, second = rows.nth(0), rows.nth(1)
    assert first.locator("td.tool code").inner_text() != "notes_delete"
    assert second.locator("td.tool code").inner_text() == "notes_delete"
    assert first.locator("td.placed").inner_text().startswith("first by the lead rule")
    assert second.locator("td.placed").inner_text().startswith("down one: it deletes")
    assert float(second.locator("td.score").inner_text()) > float(first.locator("td.score").inner_text())
    if sized.viewport_size["width"] >= 1280:  # the phone's table scrolls within itself
        assert set(_lines(sized, "table.ranked td.num")) == {1}
        assert set(_lines(sized, "table.ranked td.tool code")) == {1}
    _fits(sized)
    assert sized.failed == []


def test_more_matches_than_a_page_have_a_next_page(served: Served, sized: Any) -> None:
    sign_in(sized, served.console)
    sized.goto(f"{served.console}/discovery?query=note&limit=2")
    shown = sized.locator("#shown").inner_text()
    assert shown.startswith("1 to 2 of 4 matching tools"), shown
    first = sized.locator("table.ranked td.tool code").all_inner_texts()
    assert len(first) == 2
    expect(sized.locator("#next")).to_have_text("Next 2")
    sized.locator("#next").click()
    second = sized.locator("table.ranked td.tool code").all_inner_texts()
    ranks = sized.locator("table.ranked td.rank").all_inner_texts()
    assert ranks[0] == str(len(first) + 1) and not set(first) & set(second)
    assert sized.locator("#shown").inner_text().startswith(f"{len(first) + 1} to ")


def test_an_unknown_address_is_a_console_page_and_no_request_fails(served: Served, sized: Any) -> None:
    sign_in(sized, served.console)
    answer = sized.goto(f"{served.console}/catalog/nosuch")
    assert answer is not None and answer.status == 404
    expect(sized.locator("h1")).to_have_text("Not found")
    expect(sized.locator("header nav")).to_be_visible()
    _fits(sized)
    for where in ("/approvals", "/catalog", "/catalog/tools/hostile_lookup"):
        sized.goto(f"{served.console}{where}")
        _fits(sized)
    assert sized.failed == [f"404 {served.console}/catalog/nosuch"]  # the browser asked for no missing icon


def test_the_login_page_says_where_the_generated_token_is(tmp_path: Path, sized: Any) -> None:
    config = write_config(tmp_path)  # no operator token configured: the data directory's own
    with http_server(config) as server:
        console = server.url.removesuffix("/mcp") + "/console"
        sized.goto(f"{console}/login")
        where = sized.locator("#token-file")
        expect(where).to_contain_text(str(tmp_path))
        _fits(sized)
        token = next(tmp_path.glob("*token*")).read_text().strip()
        sign_in(sized, console, token)
        expect(sized.locator("h1")).to_have_text("Approvals")

"""The console in a real browser against a real served gateway and a real MCP client's calls."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from playwright.sync_api import expect

from .conftest import Served, sign_in
from .hostile_tools import PAYLOAD

DELETE_NOTE = {"tool_name": "notes_delete", "parameters": {"note_id": "n1"}}
LIVE_SECONDS = 15_000  # a deadline for the page to show a change, in milliseconds (not a timing)


def _audit(data_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (data_dir / "audit.jsonl").read_text().splitlines()]


def test_a_held_call_is_listed_live_approved_by_a_click_and_runs_once(served: Served, page: Any) -> None:
    sign_in(page, served.console)
    expect(page.locator("#pending-rows")).to_contain_text("No call is waiting")
    held = served.call("invoke_tool", DELETE_NOTE)  # made after the page loaded: it must appear by itself
    assert held["status"] == "confirmation_required"
    pending_id = held["pending_id"]
    row = page.locator(f'tr[data-pending-id="{pending_id}"]')
    expect(row).to_be_visible(timeout=LIVE_SECONDS)
    expect(row).to_contain_text("notes_delete")
    expect(row).to_contain_text('"note_id": "n1"')
    expect(row).to_contain_text("local")
    row.get_by_role("button", name="Approve").click()
    expect(page.locator("#done")).to_contain_text(f"Approved {pending_id}")

    ran = served.call("invoke_tool", {**DELETE_NOTE, "confirmation": pending_id})
    assert ran == {"deleted": "n1", "by": "local"}
    again = served.call("invoke_tool", {**DELETE_NOTE, "confirmation": pending_id})
    assert again["error"]["code"] == "confirmation_used"

    decided = [r for r in _audit(served.data_dir) if r["outcome"] == "approved_by_host"]
    assert [(r["call_id"], r["tool"], r["decided_by"], r["params"]) for r in decided] == [
        (pending_id, "notes_delete", {"channel": "console", "operator": "admin-token"}, {"note_id": "n1"})
    ]
    outcomes = [r["outcome"] for r in _audit(served.data_dir) if r["tool"] == "notes_delete"]
    assert outcomes.count("executed") == 1

    # The activity says it in words, each time with its zone; the filter keeps the codes as values.
    page.goto(f"{served.console}/activity?tool=notes_delete")
    cells = page.locator("table.activity tbody tr td:nth-child(5)").all_inner_texts()
    assert cells == [
        "refused",  # the second redemption (its error column: confirmation_used)
        "ran",
        "approval redeemed",
        "approved at the console by admin-token",
        "held for approval",
    ], cells
    assert page.locator("table.activity th").first.inner_text() == "Time (UTC)"
    assert all(
        t.endswith(" UTC") for t in page.locator("table.activity tbody tr td:nth-child(1)").all_inner_texts()
    )
    assert page.locator("select[name=outcome] option[value=approved_by_host]").inner_text() == "approved"


def test_deny_makes_the_retry_fail_as_declined(served: Served, page: Any) -> None:
    held = served.call("invoke_tool", DELETE_NOTE)
    sign_in(page, served.console)
    page.locator(f'tr[data-pending-id="{held["pending_id"]}"]').get_by_role("button", name="Deny").click()
    expect(page.locator("#done")).to_contain_text(f"Denied {held['pending_id']}")
    refused = served.call("invoke_tool", {**DELETE_NOTE, "confirmation": held["pending_id"]})
    assert refused["error"]["code"] == "declined"
    assert "denied_by_host" in [r["outcome"] for r in _audit(served.data_dir)]
    assert "executed" not in [r["outcome"] for r in _audit(served.data_dir)]


def test_an_approval_is_for_its_own_pending_id_only(served: Served, page: Any) -> None:
    first = served.call("invoke_tool", DELETE_NOTE)
    second = served.call("invoke_tool", {"tool_name": "notes_delete", "parameters": {"note_id": "n2"}})
    sign_in(page, served.console)
    page.locator(f'tr[data-pending-id="{first["pending_id"]}"]').get_by_role("button", name="Approve").click()
    expect(page.locator("#done")).to_contain_text("Approved")
    expect(page.locator(f'tr[data-pending-id="{second["pending_id"]}"]')).to_be_visible()
    other = served.call(
        "invoke_tool",
        {"tool_name": "notes_delete", "parameters": {"note_id": "n2"}, "confirmation": second["pending_id"]},
    )
    assert other["error"]["code"] == "confirmation_pending"
    wrong = served.call(
        "invoke_tool",
        {"tool_name": "notes_delete", "parameters": {"note_id": "n2"}, "confirmation": first["pending_id"]},
    )
    assert wrong["error"]["code"] == "confirmation_mismatch"


def test_a_script_in_a_tool_description_renders_as_inert_text(served: Served, page: Any) -> None:
    dialogs: list[str] = []

    def on_dialog(dialog: Any) -> None:
        dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", on_dialog)
    sign_in(page, served.console)
    for path in (
        "/catalog?category=hostile",
        "/catalog/tools/hostile_lookup",
        "/discovery?query=look+things+up",
    ):
        page.goto(served.console + path)
        expect(page.locator("main")).to_contain_text("Look things up")
        assert page.evaluate("window.__pwned") is None, path
        assert page.locator("main script").count() == 0 and page.locator("main img").count() == 0, path
    page.goto(served.console + "/catalog/tools/hostile_lookup")
    expect(page.locator("pre.description")).to_contain_text(PAYLOAD)
    assert dialogs == []


def test_a_post_without_the_csrf_token_is_refused_and_changes_nothing(served: Served, page: Any) -> None:
    held = served.call("invoke_tool", DELETE_NOTE)
    sign_in(page, served.console)
    url = f"{served.console}/approvals/{held['pending_id']}/approve"
    assert page.request.post(url, form={}).status == 403
    assert page.request.post(url, form={"csrf": "0" * 64}).status == 403
    listed = page.request.get(f"{served.console}/api/pending").json()["pending"]
    assert [p["pending_id"] for p in listed] == [held["pending_id"]]
    still = served.call("invoke_tool", {**DELETE_NOTE, "confirmation": held["pending_id"]})
    assert still["error"]["code"] == "confirmation_pending"


def test_without_the_token_nothing_is_shown(served: Served, page: Any) -> None:
    served.call("invoke_tool", DELETE_NOTE)
    for path in (
        "/approvals",
        "/activity",
        "/catalog",
        "/discovery",
        "/findability",
        "/catalog/tools/notes_delete",
    ):
        page.goto(served.console + path)
        assert page.url.startswith(f"{served.console}/login"), path
        assert "notes_delete" not in page.inner_text("body"), path
        assert page.locator("table").count() == 0, path
    for path in ("/api/pending", "/api/activity", "/approvals/rows", "/activity/export.jsonl"):
        response = page.request.get(served.console + path, max_redirects=0)
        assert response.status in (401, 303), path
        assert "notes_delete" not in response.text(), path
    assert page.request.get(served.console + "/api/pending").status == 401
    assert page.request.post(served.console + "/api/pending/ab12/approve").status == 401
    sign_in(page, served.console, token="not-the-token")
    expect(page.locator("#login-failed")).to_be_visible()
    assert page.context.cookies() == [] or all(c["name"] != "gateway_console" for c in page.context.cookies())


def test_pages_forbid_inline_scripts_and_the_session_cookie_is_strict(served: Served, page: Any) -> None:
    sign_in(page, served.console)
    response = page.goto(served.console + "/activity")
    assert response is not None
    policy = response.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "unsafe-inline" not in policy
    (session,) = [c for c in page.context.cookies() if c["name"] == "gateway_console"]
    assert session["httpOnly"] and session["sameSite"] == "Strict"
    assert page.evaluate("document.cookie") == ""

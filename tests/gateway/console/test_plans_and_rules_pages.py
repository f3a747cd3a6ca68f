"""A program's plan at the console, in Debian's chromium: listed live with every write, grouped by
tool; the person unchecks one (the choice outlives the page's refresh), approves the rest, and the
program run for real by the real MCP client makes only those writes. And a standing approval,
listed with the pending calls and revoked by a click."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from ..adapters.mcp_server_support import THREE_DELETES as _THREE
from ..adapters.mcp_server_support import gateway_cli, http_server, write_config
from .conftest import ADMIN_TOKEN, CONFIG, Served, sign_in

LIVE = 15_000  # a deadline for the page to show a change, in milliseconds (not a timing)
THREE_DELETES = _THREE + "\ncall('notes_archive', {'note_id': 'box'})\ndone"


@pytest.fixture
def coded(tmp_path: Path) -> Iterator[Served]:
    config = write_config(tmp_path, CONFIG + "\n[code]\nenabled = true\n")
    with http_server(config, env={"CONSOLE_TOKEN": ADMIN_TOKEN}) as server:
        yield Served(server, tmp_path)


def test_a_plan_is_approved_in_part_at_the_console_and_only_those_writes_run(
    coded: Served, page: Any
) -> None:
    sign_in(page, coded.console)
    drawn = coded.call("run_code", {"code": THREE_DELETES, "plan": True})
    assert drawn["status"] == "confirmation_required"
    plan_id = drawn["pending_id"]
    row = page.locator(f'tr[data-pending-id="{plan_id}"]')
    expect(row).to_be_visible(timeout=LIVE)
    expect(row).to_contain_text("A program's plan of 4 writes: 3 x notes_delete, 1 x notes_archive.")
    expect(row.locator("p.group")).to_have_text(["notes_delete (3)", "notes_archive (1)"])
    expect(row.locator("ul.writes li")).to_have_count(4)
    expect(row).to_contain_text("for n in ['n1', 'n2', 'n3']:")  # the program, as it will run
    assert page.locator("tr[data-pending-id]").count() == 1  # its writes are within it, not rows of their own
    second = row.locator('input[name=only][value="2"]')
    second.uncheck()
    old = row.element_handle()
    page.wait_for_function("el => !el.isConnected", arg=old, timeout=LIVE)  # the rows were refreshed
    expect(row.locator('input[name=only][value="2"]')).not_to_be_checked()
    expect(row.locator('input[name=only][value="1"]')).to_be_checked()
    row.get_by_role("button", name="Approve checked").click()
    expect(page.locator("#done")).to_contain_text(f"Approved {plan_id}")
    expect(page.locator("#pending-rows")).to_contain_text("No call is waiting")

    ran = coded.call("run_code", {"confirmation": plan_id})
    assert ran["result"] == ["n1", "kept n2", "n3"], ran
    lines = [json.loads(line) for line in (coded.data_dir / "audit.jsonl").read_text().splitlines()]
    executed = [
        (r["tool"], r["params"]) for r in lines if r["outcome"] == "executed" and r["tool"] != "run_code"
    ]
    assert executed == [
        ("notes_delete", {"note_id": "n1"}),
        ("notes_delete", {"note_id": "n3"}),
        ("notes_archive", {"note_id": "box"}),
    ]
    decided = [
        (r["tool"], r["outcome"], r["decided_by"]["channel"])
        for r in lines
        if r["outcome"].endswith("_by_host")
    ]
    assert ("notes_delete", "denied_by_host", "console") in decided
    assert decided[0] == ("run_code", "approved_by_host", "console")


def test_the_api_takes_a_plans_chosen_writes_and_refuses_a_number_it_does_not_have(coded: Served) -> None:
    import httpx2

    drawn = coded.call("run_code", {"code": THREE_DELETES, "plan": True})
    plan_id = drawn["pending_id"]
    auth = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
    listed = httpx2.get(f"{coded.console}/api/pending", headers=auth).json()["pending"]
    assert [p["pending_id"] for p in listed] == [plan_id]
    assert [w["number"] for w in listed[0]["writes"]] == [1, 2, 3, 4]
    assert listed[0]["writes"][1]["parameters"] == {"note_id": "n2"}
    wrong = httpx2.post(f"{coded.console}/api/pending/{plan_id}/approve?only=1,7", headers=auth)
    assert wrong.status_code == 400 and "no write 7" in wrong.json()["message"]
    approved = httpx2.post(f"{coded.console}/api/pending/{plan_id}/approve?only=4", headers=auth)
    assert approved.status_code == 200 and approved.json()["result"] == "approved"
    ran = coded.call("run_code", {"confirmation": plan_id})
    assert ran["result"] == ["kept n1", "kept n2", "kept n3"], ran


def test_a_standing_approval_is_listed_and_revoked_at_once_by_a_click(coded: Served, page: Any) -> None:
    rule = ["rules", "add", "notes_delete", "--for", "30m", "--prefix", "note_id=n"]
    made = gateway_cli(*rule, config=coded.data_dir / "config.toml")
    assert made.returncode == 0, made.stderr
    rule_id = made.stdout.split()[1]
    delete = {"tool_name": "notes_delete", "parameters": {"note_id": "n1"}}
    assert coded.call("invoke_tool", delete) == {"deleted": "n1", "by": "local"}
    sign_in(page, coded.console)
    row = page.locator(f'tr[data-rule-id="{rule_id}"]')
    expect(row).to_contain_text('notes_delete for local where note_id starting with "n"')
    row.get_by_role("button", name="Revoke").click()
    expect(page.locator("#done")).to_contain_text(f"Revoked {rule_id}")
    expect(page.locator("table.rules")).to_contain_text("No standing approval is in force.")
    assert coded.call("invoke_tool", delete)["status"] == "confirmation_required"
    lines = [json.loads(line) for line in (coded.data_dir / "audit.jsonl").read_text().splitlines()]
    revoked = [r for r in lines if r["outcome"] == "rule_revoked"]
    assert [(r["call_id"], r["decided_by"]["channel"]) for r in revoked] == [(rule_id, "console")]

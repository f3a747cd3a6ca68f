"""The whole product on the real local workspace: settings -> gateway -> meta-tools -> SQLite."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from gateway import Gateway, ToolResult, render, run_sync
from gateway.cli import main
from gateway.runtime import open_gateway
from gateway.settings.loading import load_settings

BERLIN = ZoneInfo("Europe/Berlin")


def clock() -> datetime:
    return datetime(2026, 11, 23, 9, 0, tzinfo=BERLIN)


@pytest.fixture
def gw(tmp_path: Path) -> Iterator[Gateway]:
    settings = load_settings(overrides={"data_dir": str(tmp_path), "timezone": "Europe/Berlin"}, environ={})
    with open_gateway(settings, clock=clock) as gateway:
        yield gateway


def call(gw: Gateway, tool: str, args: dict[str, Any]) -> ToolResult:
    return run_sync(gw.call(tool, args))


def test_an_agent_shaped_session_creates_and_deletes_an_event(gw: Gateway, tmp_path: Path) -> None:
    found = call(gw, "discover_tools", {"categories": ["calendar"], "actions": ["create"]}).output
    assert "calendar_create_event" in [t["name"] for t in found["tools"]]
    schema = call(gw, "get_tool_schema", {"tool_name": "calendar_create_event"}).output
    assert "title" in schema["parameters"]["required"]

    bad = call(
        gw,
        "invoke_tool",
        {
            "tool_name": "calendar_create_event",
            "parameters": {"title": "Dentist", "start": "the day after never"},
        },
    )
    assert json.loads(render(bad))["error"]["problems"][0]["loc"] == "start"

    created = call(
        gw,
        "invoke_tool",
        {"tool_name": "calendar_create_event", "parameters": {"title": "Dentist", "start": "friday 3pm"}},
    )
    assert created.ok and created.output["start"] == "2026-11-27T15:00:00+01:00"
    event_id = created.output["id"]

    delete = {"tool_name": "calendar_delete_event", "parameters": {"event_id": event_id}}
    pending = call(gw, "invoke_tool", delete)
    assert pending.status == "confirmation_required" and pending.pending is not None
    still_there = call(
        gw, "invoke_tool", {"tool_name": "calendar_get_event", "parameters": {"event_id": event_id}}
    )
    assert still_there.ok

    gw.approve(pending.pending.pending_id)
    assert call(gw, "invoke_tool", {**delete, "confirmation": pending.pending.pending_id}).ok
    gone = call(gw, "invoke_tool", {"tool_name": "calendar_get_event", "parameters": {"event_id": event_id}})
    assert json.loads(render(gone))["error"]["code"] == "not_found"

    outcomes = [json.loads(line)["outcome"] for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    # An attempt precedes each run of a tool that changes something, even one its handler refuses.
    assert outcomes == [
        "attempt",
        "invalid",
        "attempt",
        "executed",
        "pending_confirmation",
        "executed",
        "approved_by_host",  # the host's decision, with who made it
        "approved",
        "attempt",
        "executed",
        "failed",
    ]


def test_what_one_process_writes_another_reads(tmp_path: Path) -> None:
    script = (
        "import sys; from gateway.cli import main; "
        "sys.exit(main(['invoke', 'tasks_create_task', sys.argv[1], '--data-dir', sys.argv[2], '--json']))"
    )
    params = json.dumps({"title": "Water the plants ☘ '; DROP TABLE tasks; --"})
    done = subprocess.run(
        [sys.executable, "-c", script, params, str(tmp_path)], capture_output=True, text=True, check=True
    )
    task_id = json.loads(done.stdout)["id"]
    settings = load_settings(overrides={"data_dir": str(tmp_path)}, environ={})
    with open_gateway(settings) as gw:
        listed = run_sync(gw.invoke("tasks_list_tasks", {}))
    assert [t["title"] for t in listed.output["tasks"] if t["id"] == task_id] == [
        "Water the plants ☘ '; DROP TABLE tasks; --"
    ]


def test_the_demo_command_walks_discover_schema_invoke_and_the_gate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    assert main(["demo", "--data-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.count(">>> discover_tools") >= 4
    assert ">>> get_tool_schema" in out and ">>> invoke_tool" in out
    assert "confirmation_required" in out and "--- host: the user approves" in out


def test_the_demo_fills_each_call_from_its_request_and_cuts_no_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    calls = [
        json.loads(line.removeprefix(">>> invoke_tool(")[:-1])
        for line in out.splitlines()
        if line.startswith(">>> invoke_tool(")
    ]
    assert [(c["tool_name"], c["parameters"]) for c in calls if "confirmation" not in c] == [
        ("calendar_list_events", {"start": "today", "end": "sunday"}),  # "this week"
        ("gmail_search_messages", {"query": "is:unread"}),  # "unread email"
        ("tasks_create_task", {"title": "Call the plumber", "due": "friday"}),
        ("tasks_clear_completed", {}),  # nothing said: the tool's default list
    ]
    assert "more lines)" in out  # a long schema is shortened ...
    for line in out.splitlines():  # ... by whole lines: no string is cut in two
        if line.lstrip().startswith('"'):
            assert line.replace('\\"', "").count('"') % 2 == 0, line


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_the_demo_never_touches_the_configured_backend_or_the_users_data(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Configured for Google, with a workspace of the user's own: the demo runs, and leaves both alone."""
    data = tmp_path / "data"
    config = tmp_path / "config.toml"
    config.write_text(f'backend = "google"\ndata_dir = "{data}"\ntimezone = "Europe/Berlin"\n')
    monkeypatch.delenv("GATEWAY_DATA_DIR", raising=False)
    user = load_settings(overrides={"data_dir": str(data)}, environ={})
    with open_gateway(user, clock=clock) as gw:  # the user's workspace, with a task of their own
        assert run_sync(gw.invoke("tasks_create_task", {"title": "Call the bank"})).ok
    before = _tree(data)
    for _ in range(2):
        assert main(["demo", "--config", str(config)]) == 0
        out, err = capsys.readouterr()
        first = err.splitlines()[0]  # said to the person, on stderr; stdout is the session
        assert first.startswith("gateway: demo on a throw-away local workspace") and "not touched" in first
        assert "--- host: the user approves" in out  # the demo still plays its destructive call
    assert _tree(data) == before  # no demo task, no audit line, nothing changed

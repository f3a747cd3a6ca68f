"""Audit: every invocation attempt is recorded, with redaction, and survives a killed process."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from gateway import Catalog, ConfirmationGate, Gateway, JsonlAuditLog, MemoryAuditLog, Policy, Rule, run_sync

from .sample_tools import ALL_TOOLS


def invoke(gw: Gateway, tool: str, params: Any, confirmation: str | None = None) -> Any:
    return run_sync(gw.invoke(tool, params, confirmation=confirmation))


def test_every_outcome_is_recorded_with_time_principal_tool_and_error_code(calls: Any) -> None:
    audit = MemoryAuditLog()
    gw = Gateway(
        Catalog(ALL_TOOLS),
        audit=audit,
        policy=Policy((Rule("deny", names=("files_read",)),)),
    )
    invoke(gw, "nope", {})
    invoke(gw, "files_read", {"path": "/srv/files/a"})
    invoke(gw, "notes_create", {"title": 3})
    pending = invoke(gw, "notes_delete", {"note_id": "n1"}).pending
    invoke(gw, "notes_delete", {"note_id": "n1"}, confirmation="forged")
    gw.approve(pending.pending_id)
    invoke(gw, "notes_delete", {"note_id": "n1"}, confirmation=pending.pending_id)
    invoke(gw, "files_boom", {"path": "/x"})
    outcomes = [(r.tool, r.outcome, r.error_code) for r in audit.records]
    assert outcomes == [
        ("nope", "unknown", "unknown_tool"),
        ("files_read", "denied", "unknown_tool"),
        ("notes_create", "invalid", "invalid_arguments"),
        ("notes_delete", "pending_confirmation", None),
        ("notes_delete", "refused", "confirmation_invalid"),
        ("notes_delete", "approved_by_host", None),  # the decision, with who made it
        ("notes_delete", "approved", None),
        ("notes_delete", "attempt", None),
        ("notes_delete", "executed", None),
        ("files_boom", "failed", "internal"),
    ]
    assert all(r.principal == "local" and r.time > 0 and r.duration_ms >= 0 for r in audit.records)


def test_declined_calls_are_recorded() -> None:
    audit = MemoryAuditLog()
    gw = Gateway(Catalog(ALL_TOOLS), audit=audit, gate=ConfirmationGate(approver=lambda p: False))
    invoke(gw, "notes_delete", {"note_id": "n1"})
    assert [(r.outcome, r.error_code) for r in audit.records] == [("declined", "declined")]


def test_parameters_pass_through_the_redaction_hook() -> None:
    audit = MemoryAuditLog()
    seen: list[str] = []

    def redact(tool: str, params: Any) -> Any:
        seen.append(tool)
        return {"title": "[hidden]"}

    gw = Gateway(Catalog(ALL_TOOLS), audit=audit, redact=redact)
    invoke(gw, "notes_search", {"title": "private"})
    assert seen == ["notes_search"] and audit.records[0].params == {"title": "[hidden]"}


def test_default_redaction_hides_secret_keys_and_cuts_long_values() -> None:
    from gateway import redact_secrets

    out = redact_secrets("t", {"api_key": "sk-123", "nested": {"password": "p"}, "body": "x" * 500})
    assert out["api_key"] == "[redacted]" and out["nested"] == {"password": "[redacted]"}
    assert len(out["body"]) < 300


def test_jsonl_log_is_owner_only_and_one_record_a_line(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    log = JsonlAuditLog(path)
    gw = Gateway(Catalog(ALL_TOOLS), audit=log)
    invoke(gw, "notes_search", {"title": "a\nb"})
    invoke(gw, "nope", {})
    log.close()
    lines = path.read_text().splitlines()
    assert [json.loads(line)["outcome"] for line in lines] == ["executed", "unknown"]
    assert path.stat().st_mode & 0o777 == 0o600


CHILD = """
import sys
from gateway import Catalog, Gateway, JsonlAuditLog, run_sync
from tests.gateway.sample_tools import ALL_TOOLS
gw = Gateway(Catalog(ALL_TOOLS), audit=JsonlAuditLog(sys.argv[1]))
n = 0
while True:
    run_sync(gw.invoke("notes_search", {"title": "x" * 150}))
    n += 1
    if n == 200:
        print("ready", flush=True)
"""


def test_nothing_is_lost_or_torn_when_the_process_is_killed_mid_run(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    root = Path(__file__).resolve().parents[2]
    with subprocess.Popen(
        [sys.executable, "-c", CHILD, str(path)], cwd=root, stdout=subprocess.PIPE, text=True
    ) as child:
        try:
            assert child.stdout is not None and child.stdout.readline().strip() == "ready"
        finally:
            child.send_signal(signal.SIGKILL)
            child.wait()
    raw = path.read_bytes()
    assert raw.endswith(b"\n")
    records = [json.loads(line) for line in raw.decode().splitlines()]
    assert len(records) >= 200
    assert {r["outcome"] for r in records} == {"executed"}


def test_the_calling_agent_is_recorded() -> None:
    from gateway import Principal, ToolContext

    audit = MemoryAuditLog()
    gw = Gateway(Catalog(ALL_TOOLS), audit=audit)
    ctx = ToolContext(principal=Principal("alice", agent="planner"))
    run_sync(gw.invoke("notes_search", {"title": "x"}, context=ctx))
    assert (audit.records[0].principal, audit.records[0].agent) == ("alice", "planner")

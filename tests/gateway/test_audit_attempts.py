"""The audit log keeps every write: an attempt on disk before a tool that changes something runs.

The kill test runs the real workspace tools on a real SQLite file in a child process and kills it
with SIGKILL at arbitrary moments: whatever the child managed to create has its attempt record.
"""

from __future__ import annotations

import json
import logging
import random
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import gateway.audit
from gateway import Catalog, Gateway, JsonlAuditLog, MemoryAuditLog, Principal, ToolContext, run_sync
from gateway.audit import AuditRecord, interrupted, pair_attempts, read_audit_log

from .sample_tools import ALL_TOOLS

ROOT = Path(__file__).resolve().parents[2]


def invoke(gw: Gateway, tool: str, params: Any, context: ToolContext | None = None) -> Any:
    return run_sync(gw.invoke(tool, params, context=context))


def test_a_tool_that_changes_something_gets_an_attempt_with_its_call_id_before_its_outcome() -> None:
    audit = MemoryAuditLog()
    gw = Gateway(Catalog(ALL_TOOLS), audit=audit)
    ctx = ToolContext(principal=Principal("alice", agent="planner"))
    invoke(gw, "notes_create", {"title": "milk"}, ctx)
    invoke(gw, "notes_search", {"title": "milk"})  # read-only: no attempt
    invoke(gw, "notes_create", {"title": 3})  # refused before it runs: no attempt
    rows = [(r.tool, r.outcome, r.call_id) for r in audit.records]
    assert rows[:2] == [("notes_create", "attempt", ctx.call_id), ("notes_create", "executed", ctx.call_id)]
    assert [r[:2] for r in rows[2:]] == [("notes_search", "executed"), ("notes_create", "invalid")]
    attempt = audit.records[0]
    assert (attempt.principal, attempt.agent) == ("alice", "planner")
    assert attempt.params == {"title": "milk", "priority": 1, "color": None}  # the canonical parameters


def test_an_attempt_line_is_flushed_to_disk_even_when_fsync_is_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced: list[str] = []
    real = gateway.audit._sync

    def sync(fd: int) -> None:
        synced.append(Path(f"/proc/self/fd/{fd}").resolve().name)
        real(fd)

    monkeypatch.setattr(gateway.audit, "_sync", sync)
    log = JsonlAuditLog(tmp_path / "audit.jsonl")  # [audit] fsync = false
    gw = Gateway(Catalog(ALL_TOOLS), audit=log)
    invoke(gw, "notes_create", {"title": "milk"})
    invoke(gw, "notes_search", {"title": "milk"})
    log.close()
    assert synced == ["audit.jsonl"]  # the attempt; not the outcomes
    outcomes = [r.outcome for r in read_audit_log(tmp_path / "audit.jsonl")]
    assert outcomes == ["attempt", "executed", "executed"]


def _record(call_id: str, outcome: Any, tool: str = "notes_create", at: float = 1.0) -> AuditRecord:
    return AuditRecord(at, "alice", "s", call_id, tool, outcome, 0.0, params={"title": call_id})


def test_attempts_pair_with_their_outcomes_and_the_rest_are_interrupted(tmp_path: Path) -> None:
    log = JsonlAuditLog(tmp_path / "audit.jsonl")
    for record in [
        _record("a", "attempt"),
        _record("b", "attempt"),
        _record("c", "pending_confirmation"),  # no attempt: nothing ran
        _record("a", "executed"),
        _record("r", "attempt"),  # a host reusing one context: two calls under one id
        _record("r", "failed"),
        _record("r", "attempt"),
        _record("d", "attempt", tool="notes_delete"),
        _record("d", "executed", tool="notes_create"),  # another tool's line closes nothing
    ]:
        log.write(record)
    log.close()
    pairs = list(pair_attempts(read_audit_log(tmp_path / "audit.jsonl")))
    shown = [(p.attempt.call_id, p.outcome.outcome if p.outcome else "interrupted") for p in pairs]
    assert shown == [
        ("a", "executed"),
        ("r", "failed"),
        ("b", "interrupted"),
        ("r", "interrupted"),
        ("d", "interrupted"),
    ]
    assert [r.call_id for r in interrupted(read_audit_log(tmp_path / "audit.jsonl"))] == ["b", "r", "d"]


def test_reading_skips_lines_that_are_not_records_and_says_where(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "audit.jsonl"
    good = json.dumps({**_record("a", "attempt").__dict__, "added_later": 1})
    path.write_bytes(f"{good}\nnot json\n[1, 2]\n{{}}\n".encode() + b"\0" * 40 + b"\n")
    with caplog.at_level(logging.WARNING, logger="gateway"):
        records = list(read_audit_log(path))
    assert [(r.call_id, r.outcome) for r in records] == [("a", "attempt")]
    assert [m for m in caplog.messages if "not a record" in m] == [
        f"audit log {path}: line {n} is not a record; skipped" for n in (2, 3, 4)
    ]


CHILD = """
import asyncio, sys
from gateway.settings.loading import load_settings
from gateway.runtime import open_gateway

data_dir, round_ = sys.argv[1], sys.argv[2]
settings = load_settings(overrides={"data_dir": data_dir, "seed_demo": False}, environ={})

async def burst(gw):
    n = 0
    while True:
        result = await gw.invoke("tasks_create_task", {"title": f"burst-{round_}-{n}"})
        assert result.ok, result
        print(n, flush=True)
        n += 1

with open_gateway(settings) as gw:
    asyncio.run(burst(gw))
"""
ROUNDS = 20


def test_every_task_a_killed_burst_created_has_its_attempt_in_the_log(tmp_path: Path) -> None:
    """20 rounds of SIGKILL at arbitrary points of a burst of tasks_create_task on the real workspace.

    The child reports each finished call on a pipe and runs ahead of the reader, so the kill lands
    anywhere in a call: before, inside or after the handler's commit, before or after its outcome.
    """
    rng = random.Random(14)
    for round_ in range(ROUNDS):
        command = [sys.executable, "-c", CHILD, str(tmp_path), str(round_)]
        with subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as child:
            assert child.stdout is not None and child.stderr is not None
            try:
                for _ in range(rng.randint(1, 40)):
                    line = child.stdout.readline()
                    assert line, child.stderr.read().decode()
            finally:
                child.send_signal(signal.SIGKILL)
                child.wait()
            assert child.returncode == -signal.SIGKILL

    database = tmp_path / "workspace.sqlite3"
    with sqlite3.connect(database) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        tasks = {title for (title,) in conn.execute("SELECT title FROM tasks WHERE title LIKE 'burst-%'")}
    raw = (tmp_path / "audit.jsonl").read_bytes()
    assert raw.endswith(b"\n")
    records = [AuditRecord(**json.loads(line)) for line in raw.splitlines()]  # every line whole

    def titles(outcome: str) -> list[str]:
        return [r.params["title"] for r in records if r.outcome == outcome and r.params]

    attempted, executed = titles("attempt"), titles("executed")
    assert len(tasks) >= ROUNDS  # every round created something before it was killed
    assert len(tasks) <= len(attempted) and tasks <= set(attempted)
    pairs = list(pair_attempts(records))
    assert sorted(p.outcome.params["title"] for p in pairs if p.outcome and p.outcome.params) == sorted(
        executed
    )
    # A task with no executed line was created by a call the log shows as interrupted.
    lost = {p.attempt.params["title"] for p in pairs if p.interrupted and p.attempt.params}
    assert tasks - set(executed) <= lost
    assert len(lost) <= ROUNDS  # at most the one call in flight per killed process

    # The workspace and the log go on: a new process opens both and adds to them.
    with subprocess.Popen(
        [sys.executable, "-c", CHILD, str(tmp_path), "after"], cwd=ROOT, stdout=subprocess.PIPE
    ) as child:
        assert child.stdout is not None and child.stdout.readline().strip() == b"0"
        child.send_signal(signal.SIGKILL)
        child.wait()
    after = [
        r.outcome
        for r in read_audit_log(tmp_path / "audit.jsonl")
        if (r.params or {}).get("title") == "burst-after-0"
    ]
    assert after[0] == "attempt"

"""Reading the audit log from its end: filters, paging, interrupted attempts, one call's lines, export."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gateway.audit import Auditor, JsonlAuditLog
from gateway.console.activity import INTERRUPTED, Filters, export, read_page, read_row


def _write(path: Path, records: list[dict[str, Any]]) -> None:
    log = JsonlAuditLog(path)
    auditor = Auditor(log)
    for r in records:
        auditor.log(
            principal=r.get("principal", "alice"),
            session="s",
            call_id=r["call_id"],
            tool=r.get("tool", "notes_create"),
            outcome=r.get("outcome", "executed"),
            agent=r.get("agent"),
            params=r.get("params"),
        )
    log.close()


def _calls(page_rows: list[Any]) -> list[str]:
    return [row.record["call_id"] for row in page_rows]


def test_pages_run_newest_first_and_the_cursor_continues_where_the_last_page_stopped(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    _write(path, [{"call_id": f"c{i}"} for i in range(7)])
    first = read_page(path, Filters(), limit=3)
    assert _calls(first.rows) == ["c6", "c5", "c4"]
    second = read_page(path, Filters(), before=first.older, limit=3)
    assert _calls(second.rows) == ["c3", "c2", "c1"]
    last = read_page(path, Filters(), before=second.older, limit=3)
    assert _calls(last.rows) == ["c0"] and last.older is None


def test_filters_match_whole_values_only(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    _write(
        path,
        [
            {"call_id": "a", "principal": "alice", "tool": "notes_delete", "outcome": "failed"},
            {"call_id": "b", "principal": "alicex", "tool": "notes_delete"},
            {"call_id": "c", "principal": "bob", "agent": "planner", "tool": "notes_delete"},
            {"call_id": "d", "principal": "alice", "params": {"note": '"principal":"bob"'}},
        ],
    )
    assert _calls(read_page(path, Filters(principal="alice")).rows) == ["d", "a"]
    assert _calls(read_page(path, Filters(principal="bob")).rows) == ["c"]
    assert _calls(read_page(path, Filters(agent="planner", tool="notes_delete")).rows) == ["c"]
    assert _calls(read_page(path, Filters(outcome="failed")).rows) == ["a"]
    assert read_page(path, Filters(tool="nothing_like_it")).rows == []


def test_a_time_filter_keeps_rows_inside_it(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    lines = [
        {"time": 1000.0 + i * 100, "call_id": f"c{i}", "outcome": "executed", "tool": "t"} for i in range(5)
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert _calls(read_page(path, Filters(since=1150.0, until=1350.0)).rows) == ["c3", "c2"]


def test_an_attempt_without_an_outcome_is_interrupted_and_one_with_an_outcome_is_folded(
    tmp_path: Path,
) -> None:
    path = tmp_path / "audit.jsonl"
    _write(
        path,
        [
            {"call_id": "done", "outcome": "attempt"},
            {"call_id": "other"},
            {"call_id": "done", "outcome": "executed"},
            {"call_id": "killed", "outcome": "attempt"},
        ],
    )
    rows = read_page(path, Filters()).rows
    assert [(r.record["call_id"], r.status) for r in rows] == [
        ("killed", INTERRUPTED),
        ("done", "executed"),
        ("other", "executed"),
    ]
    assert _calls(read_page(path, Filters(outcome=INTERRUPTED)).rows) == ["killed"]
    assert [
        json.loads(line)["call_id"]
        for line in b"".join(export(path, Filters(outcome=INTERRUPTED))).splitlines()
    ] == ["killed"]


def test_a_torn_or_unreadable_line_is_skipped_and_the_last_unfinished_line_waits(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    _write(path, [{"call_id": "a"}])
    with path.open("a") as f:
        f.write("not json\n")
        f.write('{"call_id":"half')
    assert _calls(read_page(path, Filters()).rows) == ["a"]
    assert read_page(tmp_path / "missing.jsonl", Filters()).rows == []


def test_one_row_comes_with_the_other_lines_of_its_call(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    _write(
        path,
        [{"call_id": "x", "outcome": "approved"}, {"call_id": "y"}, {"call_id": "x", "outcome": "executed"}],
    )
    newest = read_page(path, Filters(tool="notes_create")).rows[0]
    found = read_row(path, newest.offset)
    assert found is not None
    row, related = found
    assert row.record["call_id"] == "x" and [r.status for r in related] == ["approved"]
    assert read_row(path, newest.offset + 1) is None  # not the start of a line


def test_export_streams_the_filtered_lines_oldest_first(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    _write(path, [{"call_id": f"c{i}", "principal": "alice" if i % 2 else "bob"} for i in range(1200)])
    lines = b"".join(export(path, Filters(principal="alice"))).splitlines()
    assert len(lines) == 600
    assert [json.loads(line)["call_id"] for line in lines[:2]] == ["c1", "c3"]

"""The audit log as the console reads it: newest first, filtered, paged, from the end of the file.

A page costs the lines it shows, not the size of the log: the file is mapped into memory and read
backwards from its end (or from a cursor, the byte offset where the previous page stopped). A filter
on principal, agent, tool or outcome first looks for its exact JSON text (`"tool":"notes_delete"`)
with one backward search through the mapping, so a rare value is found without parsing the lines
between; every candidate line is then parsed and checked in full. A time filter stops the scan
once lines are older than its start (a minute of slack for writers whose lines interleave).

An `attempt` line (written before a tool that changes data runs) with no later line of the same
`call_id` within `LOOKAHEAD_BYTES` is shown as "interrupted": the process ended while the call ran.
"""

from __future__ import annotations

import json
import mmap
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PAGE_SIZE = 50
LOOKAHEAD_BYTES = 4 << 20
_TIME_SLACK_SECONDS = 60.0
ATTEMPT = "attempt"
INTERRUPTED = "interrupted"
_FIELDS = ("principal", "agent", "tool", "outcome")


@dataclass(frozen=True)
class Filters:
    """What rows to show; empty fields match everything. Times are seconds since the epoch."""

    principal: str = ""
    agent: str = ""
    tool: str = ""
    outcome: str = ""
    since: float | None = None
    until: float | None = None

    def _needles(self) -> list[bytes]:
        """Exact JSON texts every matching line contains (how the log writes them)."""
        out = []
        for name in _FIELDS:
            value = getattr(self, name)
            if name == "outcome" and value == INTERRUPTED:
                value = ATTEMPT
            if value:
                out.append(f'"{name}":{json.dumps(value, ensure_ascii=False)}'.encode())
        return out

    def matches(self, record: dict[str, Any]) -> bool:
        for name in _FIELDS:
            wanted = getattr(self, name)
            if name == "outcome" and wanted == INTERRUPTED:
                wanted = ATTEMPT
            if wanted and record.get(name) != wanted:
                return False
        moment = record.get("time")
        if not isinstance(moment, (int, float)):
            return self.since is None and self.until is None
        return (self.since is None or moment >= self.since) and (self.until is None or moment <= self.until)

    @property
    def empty(self) -> bool:
        return self == Filters()


@dataclass(frozen=True)
class Row:
    offset: int  # where the line starts in the file: its id in the console
    record: dict[str, Any]
    status: str  # the outcome, or "interrupted"


@dataclass
class Page:
    rows: list[Row] = field(default_factory=list)
    older: int | None = None  # the cursor of the next (older) page; None: this is the oldest


def _open(path: Path) -> mmap.mmap | None:
    try:
        with open(path, "rb") as f:
            if os.fstat(f.fileno()).st_size == 0:
                return None
            return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except FileNotFoundError:
        return None


def _parse(line: bytes) -> dict[str, Any] | None:
    try:
        record = json.loads(line)
    except ValueError:
        return None
    return record if isinstance(record, dict) else None


def _status(mm: mmap.mmap, record: dict[str, Any], end: int) -> str:
    outcome = str(record.get("outcome", ""))
    if outcome != ATTEMPT or not isinstance(record.get("call_id"), str):
        return outcome
    needle = f'"call_id":{json.dumps(record["call_id"], ensure_ascii=False)}'.encode()
    limit = min(len(mm), end + LOOKAHEAD_BYTES)
    at = mm.find(needle, end, limit)
    while at >= 0:
        start = mm.rfind(b"\n", 0, at) + 1
        stop = mm.find(b"\n", at)
        later = _parse(mm[start : stop if stop >= 0 else len(mm)])
        if later is not None and later.get("outcome") != ATTEMPT:
            return ATTEMPT  # it has an outcome: the attempt is only the call's first line
        at = mm.find(needle, max(stop, at + 1), limit) if stop >= 0 else -1
    return INTERRUPTED


def read_page(path: Path, filters: Filters, *, before: int | None = None, limit: int = PAGE_SIZE) -> Page:
    """The newest `limit` rows matching `filters` that start before byte `before` (None: the end)."""
    mm = _open(path)
    if mm is None:
        return Page()
    with mm:
        complete = mm.rfind(b"\n") + 1  # a line still being written is not read yet
        pos = complete if before is None else max(0, min(before, complete))
        needles = filters._needles()
        first = max(needles, key=len) if needles else None
        page = Page()
        while pos > 0:
            if first is None:
                stop = pos - 1
                start = mm.rfind(b"\n", 0, stop) + 1
            else:
                hit = mm.rfind(first, 0, pos)
                if hit < 0:
                    pos = 0
                    break
                start = mm.rfind(b"\n", 0, hit) + 1
                stop = mm.find(b"\n", hit)
            line = mm[start:stop]
            pos = start
            if any(n not in line for n in needles):
                continue
            record = _parse(line)
            if record is None:
                continue
            moment = record.get("time")
            since = filters.since
            if (
                since is not None
                and isinstance(moment, (int, float))
                and moment < since - _TIME_SLACK_SECONDS
            ):
                pos = 0
                break
            if not filters.matches(record):
                continue
            status = _status(mm, record, stop + 1)
            if status == ATTEMPT and filters.outcome != ATTEMPT:
                continue  # shown by its outcome line
            if filters.outcome == INTERRUPTED and status != INTERRUPTED:
                continue
            page.rows.append(Row(start, record, status))
            if len(page.rows) >= limit:
                break
        page.older = pos if pos > 0 else None
        return page


def read_row(path: Path, offset: int) -> tuple[Row, list[Row]] | None:
    """The line starting at `offset` and the other lines of its call nearby; None if no line starts there."""
    mm = _open(path)
    if mm is None:
        return None
    with mm:
        if not 0 <= offset < len(mm) or (offset > 0 and mm[offset - 1 : offset] != b"\n"):
            return None
        stop = mm.find(b"\n", offset)
        record = _parse(mm[offset : stop if stop >= 0 else len(mm)])
        if record is None:
            return None
        row = Row(offset, record, _status(mm, record, stop + 1 if stop >= 0 else len(mm)))
        related: list[Row] = []
        call_id = record.get("call_id")
        if isinstance(call_id, str):
            needle = f'"call_id":{json.dumps(call_id, ensure_ascii=False)}'.encode()
            low, high = max(0, offset - LOOKAHEAD_BYTES), min(len(mm), offset + LOOKAHEAD_BYTES)
            at = mm.find(needle, low, high)
            while at >= 0:
                start = mm.rfind(b"\n", 0, at) + 1
                end = mm.find(b"\n", at)
                end = len(mm) if end < 0 else end
                other = _parse(mm[start:end])
                if other is not None and start != offset:
                    related.append(Row(start, other, str(other.get("outcome", ""))))
                at = mm.find(needle, end, high)
        return row, related


def export(path: Path, filters: Filters) -> Iterator[bytes]:
    """Every line matching `filters`, oldest first, as JSONL (the log's own lines, already redacted)."""
    mm = _open(path)
    if mm is None:
        return
    with mm:
        needles = filters._needles()
        complete = mm.rfind(b"\n") + 1
        pos = 0
        chunk: list[bytes] = []
        while pos < complete:
            stop = mm.find(b"\n", pos, complete)
            line = mm[pos:stop]
            pos = stop + 1
            if any(n not in line for n in needles):
                continue
            record = _parse(line)
            if record is None or not filters.matches(record):
                continue
            if filters.outcome == INTERRUPTED and _status(mm, record, pos) != INTERRUPTED:
                continue
            chunk.append(line + b"\n")
            if len(chunk) >= 500:
                yield b"".join(chunk)
                chunk = []
        if chunk:
            yield b"".join(chunk)


def values(path: Path, name: str, *, tail_bytes: int = 2 << 20) -> list[str]:
    """The distinct values of one field in the last `tail_bytes` of the log, for the filter lists."""
    return sorted(_distinct(path, name, tail_bytes))[:200]


def tools_named(path: Path, *, tail_bytes: int = 64 << 20) -> set[str]:
    """Every tool the last `tail_bytes` of the log name: the tools that were called, whatever the outcome."""
    return _distinct(path, "tool", tail_bytes)


def _distinct(path: Path, name: str, tail_bytes: int) -> set[str]:
    """The distinct string values of field `name` in the whole lines of the log's last `tail_bytes`."""
    mm = _open(path)
    if mm is None:
        return set()
    with mm:
        start = max(0, len(mm) - tail_bytes)
        start = mm.find(b"\n", start) + 1 if start else 0
        seen: set[str] = set()
        for line in mm[start:].split(b"\n"):
            record = _parse(line) if line else None
            value = record.get(name) if record else None
            if isinstance(value, str):
                seen.add(value)
        return seen

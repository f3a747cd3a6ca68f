"""The audit log: one JSON line per invocation attempt, written before the call returns.

Each record is a single `os.write` to a file opened with O_APPEND, so a process killed
mid-run leaves whole lines behind, never a torn one, and concurrent writers interleave
by line.

A tool that is not read-only gets an `attempt` record just before its handler runs, flushed to
disk (fsync) whatever `[audit] fsync` says, so every call that may have changed something has a
record even when the process dies before its outcome line. An attempt with no later outcome for
its call id was interrupted (`interrupted`, `pair_attempts`).
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Literal, Protocol

from .context import PendingConfirmation
from .errors import UserError
from .files import private_dir
from .settings.loading import path_problem

log = logging.getLogger("gateway")

Outcome = Literal[
    "unknown",
    "denied",
    "invalid",
    "pending_confirmation",
    "approved",
    "declined",
    "refused",
    "executed",
    "failed",
    "approved_by_host",  # a host approved or declined a pending call (`decided_by` says who)
    "denied_by_host",
    "limited",  # a rate limit or quota refused the call (error_code rate_limited)
    "cancelled",  # stopped while it ran: the client cancelled it, or the server stopped
    "attempt",  # written before a tool that is not read-only runs (see JsonlAuditLog)
    "rule_added",  # a person made a standing approval (`gate/rules.py`); call_id is the rule's id
    "rule_revoked",
    "disconnected",  # a principal's grant to a service removed from the vault (call_id: the service)
]

ATTEMPT: Outcome = "attempt"

Redactor = Callable[[str, Mapping[str, Any]], Mapping[str, Any]]
"""(tool name, parameters) -> the parameters as they may be written to the log."""

_SECRET_KEY = re.compile(r"pass(word)?|secret|token|api[_-]?key|authorization|credential|cookie", re.I)
_MAX_VALUE = 200
_MIN_SECRET = 4  # shorter values would blank out ordinary text
REDACTED = "[redacted]"


def secret_name(key: str) -> bool:
    """Whether a name (a parameter, an environment variable) says its value is a secret."""
    return _SECRET_KEY.search(key) is not None


def scrub(value: Any, secrets: Iterable[str]) -> Any:
    """`value` with each secret replaced by `[redacted]` wherever it occurs, in strings at any depth."""
    known = sorted({s for s in secrets if len(s) >= _MIN_SECRET}, key=len, reverse=True)
    if not known:
        return value

    def clean(item: Any) -> Any:
        if isinstance(item, str):
            for secret in known:
                item = item.replace(secret, REDACTED)
            return item
        if isinstance(item, Mapping):
            return {clean(str(k)): clean(v) for k, v in item.items()}
        if isinstance(item, list):
            return [clean(v) for v in item]
        return item

    return clean(value)


def redact_secrets(tool: str, params: Mapping[str, Any]) -> Mapping[str, Any]:
    """Default redaction: hide values of secret-looking keys and cut long strings."""

    def clean(key: str, value: Any) -> Any:
        if secret_name(key):
            return REDACTED
        if isinstance(value, str) and len(value) > _MAX_VALUE:
            return value[:_MAX_VALUE] + f"...[{len(value)} chars]"
        if isinstance(value, Mapping):
            return {str(k): clean(str(k), v) for k, v in value.items()}
        if isinstance(value, list):
            return [clean(key, v) for v in value[:50]]
        return value

    return {str(k): clean(str(k), v) for k, v in params.items()}


@dataclass(frozen=True)
class AuditRecord:
    """One line of the audit log: who called what, in which session, and what came of it."""

    time: float
    principal: str
    session: str
    call_id: str
    tool: str
    outcome: Outcome
    duration_ms: float
    error_code: str | None = None
    params: Mapping[str, Any] | None = None
    agent: str | None = None
    decided_by: Mapping[str, str | None] | None = None  # {"channel": ..., "operator": ...}
    toolsets: tuple[str, ...] | None = None  # the named toolsets the caller was confined to, sorted
    plan: str | None = None  # the plan a decided call is a write of (`gateway.gate.plans`)


class AuditSink(Protocol):
    """Where audit records go (a JSONL file, memory, or a host's own sink)."""

    def write(self, record: AuditRecord) -> None:
        """Keep one record."""


class AuditLogUnavailable(UserError):
    """The audit log file cannot be opened for writing; nothing was written."""

    def __init__(self, path: Path, exc: OSError) -> None:
        self.path = path
        super().__init__(
            f"cannot write the audit log {path}: {path_problem(path, exc)}. Set audit.path (--audit-log or "
            "GATEWAY_AUDIT_LOG) to a file you can write, or choose another data directory (--data-dir)"
        )


class JsonlAuditLog:
    """Appends records to a JSONL file readable only by its owner.

    Raises:
        AuditLogUnavailable: the file or its directory cannot be created or opened for writing.
    """

    def __init__(self, path: Path | str, *, fsync: bool = False) -> None:
        self.path = Path(path)
        self._fsync = fsync
        try:
            private_dir(self.path.parent)
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        except OSError as exc:
            raise AuditLogUnavailable(self.path, exc) from None

    def write(self, record: AuditRecord) -> None:
        """Append one record as one JSON line (an attempt on disk before its tool runs)."""
        data = dict(vars(record))  # its fields in order; `asdict` would deep-copy the params first
        for optional in (
            "decided_by",
            "toolsets",
            "plan",
        ):  # only decisions, confined callers, plans carry them
            if data[optional] is None:
                del data[optional]
        line = json.dumps(data, ensure_ascii=False, default=str, separators=(",", ":")) + "\n"
        os.write(self._fd, line.encode())
        # An attempt is on disk before the tool runs, so a crash (even of the machine) that keeps the
        # tool's effect keeps the record of it too; outcomes are flushed only when configured.
        if self._fsync or record.outcome == ATTEMPT:
            _sync(self._fd)

    def close(self) -> None:
        """Close the file; records written after this fail."""
        os.close(self._fd)


_sync = getattr(os, "fdatasync", os.fsync)  # the data and the file's length; macOS has only fsync


class MemoryAuditLog:
    """Keeps records in a list; for hosts that ship them elsewhere, and for tests."""

    def __init__(self) -> None:
        self.records: list[AuditRecord] = []
        self._lock = threading.Lock()

    def write(self, record: AuditRecord) -> None:
        """Keep one record in `records`."""
        with self._lock:
            self.records.append(record)


class Auditor:
    """Builds records (time, redaction) and hands them to a sink."""

    def __init__(self, sink: AuditSink | None, redact: Redactor = redact_secrets) -> None:
        self.sink = sink
        self.redact = redact

    def log(
        self,
        *,
        principal: str,
        session: str,
        call_id: str,
        tool: str,
        outcome: Outcome,
        duration_ms: float = 0.0,
        error_code: str | None = None,
        params: Mapping[str, Any] | None = None,
        agent: str | None = None,
        decided_by: Mapping[str, str | None] | None = None,
        toolsets: Iterable[str] = (),
        plan: str | None = None,
    ) -> None:
        """Write one record: `toolsets` are those the caller came through (an endpoint, a bound token);
        `plan`, the plan a decided call belongs to."""
        if self.sink is None:
            return
        self.sink.write(
            AuditRecord(
                time=time.time(),
                principal=principal,
                session=session,
                call_id=call_id,
                tool=tool,
                outcome=outcome,
                duration_ms=round(duration_ms, 3),
                error_code=error_code,
                params=None if params is None else self.redact(tool, params),
                agent=agent,
                decided_by=decided_by,
                toolsets=tuple(sorted(toolsets)) or None,
                plan=plan,
            )
        )

    def decided(
        self, pending: PendingConfirmation, outcome: Outcome, decided_by: Mapping[str, str | None]
    ) -> None:
        """A host-side decision on a pending call: `call_id` is the pending id."""
        self.log(
            principal=pending.principal,
            session=pending.session or "host",
            call_id=pending.pending_id,
            tool=pending.tool,
            outcome=outcome,
            params=pending.parameters,
            agent=pending.agent,
            decided_by=decided_by,
            toolsets=pending.toolsets,
            plan=pending.plan,
        )


# -- reading the log back -------------------------------------------------------------------

_FIELDS = frozenset(f.name for f in fields(AuditRecord))


def read_audit_log(path: Path | str) -> Iterator[AuditRecord]:
    """The records of a JSONL audit log, oldest first.

    A line that is not a record (a hand edit, the zeros a power loss can leave at the end of a
    file) is skipped with a warning naming its line number; the lines around it are still read.
    """
    with Path(path).open("rb") as lines:
        for number, raw in enumerate(lines, 1):
            if not raw.strip(b"\0 \t\r\n"):
                continue
            try:
                data = json.loads(raw)
                yield AuditRecord(**{k: v for k, v in data.items() if k in _FIELDS})
            except (ValueError, TypeError, AttributeError):
                log.warning("audit log %s: line %d is not a record; skipped", path, number)


@dataclass(frozen=True)
class Attempt:
    """A call of a tool that is not read-only: its attempt record and, once written, its outcome."""

    attempt: AuditRecord
    outcome: AuditRecord | None

    @property
    def interrupted(self) -> bool:
        """No outcome was written: the process stopped (or has not yet finished) while the tool ran."""
        return self.outcome is None


def pair_attempts(records: Iterable[AuditRecord]) -> Iterator[Attempt]:
    """Each attempt in `records` (oldest first) with the outcome that followed it for the same call.

    Pairs come out as their outcome is read; attempts left without one come last, oldest first,
    as interrupted. A call that is still running has no outcome yet either: read a live log's
    newest attempts with that in mind. Memory holds only the attempts not yet paired.
    """
    open_: dict[tuple[str, str], deque[tuple[int, AuditRecord]]] = {}
    for number, record in enumerate(records):
        key = (record.call_id, record.tool)
        if record.outcome == ATTEMPT:
            open_.setdefault(key, deque()).append((number, record))
            continue
        waiting = open_.get(key)
        if waiting:
            yield Attempt(waiting.popleft()[1], record)
            if not waiting:
                del open_[key]
    for _, record in sorted((item for waiting in open_.values() for item in waiting), key=lambda i: i[0]):
        yield Attempt(record, None)


def interrupted(records: Iterable[AuditRecord]) -> list[AuditRecord]:
    """The attempts in `records` that no outcome line followed, oldest first."""
    return [pair.attempt for pair in pair_attempts(records) if pair.interrupted]

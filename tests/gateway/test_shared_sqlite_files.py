"""Workers starting together on a new data directory all open its SQLite files.

`gateway serve --workers N` starts N processes at once over one data directory: each opens the
confirmation store, the usage store and the local workspace, and the first to come creates them.
Threads with a connection each stand in for the processes (SQLite locks the file the same way);
a round that lost the race failed with "database is locked" while the file was switched to WAL,
or "duplicate column name" when two upgraded its schema.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from gateway.gate.stores import SqliteConfirmationStore
from gateway.usage.store import SqliteUsageStore
from services.local.store import LocalStore

WORKERS = 6
ROUNDS = 20


def _confirmations(path: Path) -> Callable[[], None]:
    return SqliteConfirmationStore(path).close


def _usage(path: Path) -> Callable[[], None]:
    return SqliteUsageStore(path).close


def _workspace(path: Path) -> Callable[[], None]:
    return LocalStore(path, clock=lambda: datetime(2026, 1, 5, 9, tzinfo=UTC)).close


def _open_together(open_one: Callable[[Path], Callable[[], None]], path: Path) -> list[BaseException]:
    """What `WORKERS` threads raised opening `path` at the same moment."""
    start = threading.Barrier(WORKERS)
    failures: list[BaseException] = []
    closers: list[Callable[[], None]] = []

    def worker() -> None:
        start.wait()
        try:
            closers.append(open_one(path))
        except BaseException as error:  # collected for the caller's assertion
            failures.append(error)

    threads = [threading.Thread(target=worker) for _ in range(WORKERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for close in closers:
        close()
    return failures


@pytest.mark.parametrize("open_one", [_confirmations, _usage, _workspace])
def test_every_worker_opens_a_new_file_they_open_together(
    open_one: Callable[[Path], Callable[[], None]], tmp_path: Path
) -> None:
    for round_ in range(ROUNDS):
        path = tmp_path / f"round-{round_}" / "store.sqlite3"
        path.parent.mkdir()
        failures = _open_together(open_one, path)
        assert failures == [], f"round {round_}: {failures[0]!r}"

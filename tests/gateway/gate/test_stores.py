"""Confirmation stores shared between processes: SQLite on a real file, Redis on a real redis-server.

Two store objects over the same file or server stand for two replicas. Times are near the wall
clock, since Redis expires keys by its own.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import stat
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import anyio
import pytest

from gateway import Catalog, ConfirmationGate, Principal
from gateway.context import PendingConfirmation
from gateway.errors import UserError
from gateway.gate.confirmation import ConfirmationStore, NeedsConfirmation, Proceed, Record, Refused, State
from gateway.gate.holders import PROGRAM_ENDED
from gateway.gate.stores import (
    KEEP_AFTER_EXPIRY_SECONDS,
    SECRET_FILE,
    Holders,
    RedisConfirmationStore,
    SqliteConfirmationStore,
    close_store,
    local_secret,
    record_from_json,
    record_to_json,
    resolve_auto_store,
)
from gateway.settings.loading import load_settings

from ..adapters.mcp_server_support import redis_server
from ..sample_tools import ALL_TOOLS

Opener = Callable[[Callable[[], float]], ConfirmationStore]
NOW = time.time()
"""The tests' clock, taken again as each test starts (`_now`): Redis expires a record by the server's
own clock, so a time taken at import would expire the records of a test a long suite reaches late."""


@pytest.fixture(autouse=True)
def _now(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(globals(), "NOW", time.time())


@pytest.fixture(params=["sqlite", "redis"])
def open_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Opener]:
    """Opens another store over the same shared place, with the given clock."""
    opened: list[ConfirmationStore] = []

    def sqlite(clock: Callable[[], float]) -> ConfirmationStore:
        store = SqliteConfirmationStore(tmp_path / "confirmations.sqlite3", clock=clock)
        opened.append(store)
        return store

    if request.param == "sqlite":
        yield sqlite
    else:
        with redis_server(tmp_path / "redis") as url:

            def redis(clock: Callable[[], float]) -> ConfirmationStore:
                store = RedisConfirmationStore(url, clock=clock)
                opened.append(store)
                return store

            yield redis
            for store in opened:
                close_store(store)
            return
    for store in opened:
        close_store(store)


def _record(pending_id: str, expires_at: float | None = None, state: State = "pending") -> Record:
    expires_at = NOW + 1000 if expires_at is None else expires_at
    pending = PendingConfirmation(
        pending_id,
        "notes_delete",
        "Delete a note",
        {"note_id": "n1", "tags": ["ä"]},
        "alice",
        expires_at,
        toolsets=("notes", "support"),
    )
    return Record(pending, "binding-" + pending_id, state)


def test_a_record_put_by_one_replica_is_read_whole_by_another(open_store: Opener) -> None:
    a, b = open_store(lambda: NOW), open_store(lambda: NOW)
    a.put(_record("p1"))
    assert b.get("p1") == _record("p1")
    assert b.get("p2") is None


def test_a_record_written_before_toolsets_were_kept_is_read_with_none() -> None:
    old = record_to_json(_record("p1")).replace(',"toolsets":["notes","support"]', "")
    assert "toolsets" not in old
    assert record_from_json(old, "pending").pending.toolsets == ()


def test_a_transition_happens_once_whichever_replica_asks(open_store: Opener) -> None:
    a, b = open_store(lambda: NOW), open_store(lambda: NOW)
    a.put(_record("p1"))
    assert b.transition("p1", ("pending",), "approved") == _record("p1", state="approved")
    used = a.transition("p1", ("approved", "pending"), "used")
    assert used is not None and used.state == "used"
    assert b.transition("p1", ("approved", "pending"), "used") is None
    assert a.transition("nope", ("pending",), "used") is None


def test_pending_lists_only_pending_records_soonest_first(open_store: Opener) -> None:
    a, b = open_store(lambda: NOW), open_store(lambda: NOW)
    a.put(_record("late", expires_at=NOW + 2000))
    a.put(_record("soon", expires_at=NOW + 500))
    a.put(_record("done"))
    a.transition("done", ("pending",), "denied")
    assert [r.pending.pending_id for r in b.pending()] == ["soon", "late"]


def test_records_are_dropped_a_while_after_they_expire(open_store: Opener) -> None:
    now = [NOW]
    a = open_store(lambda: now[0])
    a.put(_record("old", expires_at=NOW + 100))
    now[0] = NOW + 100 + KEEP_AFTER_EXPIRY_SECONDS + 1
    a.put(_record("new", expires_at=now[0] + 300))
    if isinstance(a, SqliteConfirmationStore):
        assert a.get("old") is None  # Redis drops it by its own expiry, on its own clock
    assert [r.pending.pending_id for r in a.pending()] == ["new"]


def test_gates_sharing_a_store_and_secret_honour_each_others_approvals(open_store: Opener) -> None:
    tool = Catalog(ALL_TOOLS).get("notes_delete")
    assert tool is not None
    secret, alice = b"k" * 32, Principal("alice")
    one = ConfirmationGate(store=open_store(lambda: NOW), secret=secret, clock=lambda: NOW)
    two = ConfirmationGate(store=open_store(lambda: NOW), secret=secret, clock=lambda: NOW)
    other = ConfirmationGate(store=open_store(lambda: NOW), secret=b"x" * 32, clock=lambda: NOW)

    async def run() -> None:
        asked = await one.check(tool, {"note_id": "n1"}, alice, None)
        assert isinstance(asked, NeedsConfirmation)
        pending_id = asked.pending.pending_id
        assert [p.pending_id for p in two.pending()] == [pending_id]
        assert two.approve(pending_id) is not None
        mismatch = await other.check(tool, {"note_id": "n1"}, alice, pending_id)
        assert isinstance(mismatch, Refused) and mismatch.code == "confirmation_mismatch"
        assert await two.check(tool, {"note_id": "n1"}, alice, pending_id) == Proceed(approved=True)
        again = await one.check(tool, {"note_id": "n1"}, alice, pending_id)
        assert isinstance(again, Refused) and again.code == "confirmation_used"

    anyio.run(run)


def test_the_sqlite_file_is_private_to_its_owner(tmp_path: Path) -> None:
    store = SqliteConfirmationStore(tmp_path / "deep" / "c.sqlite3")
    store.close()
    assert stat.S_IMODE((tmp_path / "deep" / "c.sqlite3").stat().st_mode) == 0o600


def test_the_auto_store_is_sqlite_with_a_private_generated_secret_when_shared(tmp_path: Path) -> None:
    settings = load_settings(overrides={"data_dir": str(tmp_path)}, environ={})
    assert settings.confirmation.store == "auto"
    assert resolve_auto_store(settings, shared=False).confirmation.store == "memory"
    shared = resolve_auto_store(settings, shared=True)
    assert shared.confirmation.store == "sqlite"
    secret_file = tmp_path / SECRET_FILE
    assert secret_file.stat().st_mode & 0o777 == 0o600
    secret = shared.confirmation.secret
    assert secret is not None and len(secret.get_secret_value()) >= 32
    again = resolve_auto_store(settings, shared=True).confirmation.secret
    assert again is not None and again.get_secret_value() == secret.get_secret_value()  # made once
    explicit = load_settings(
        overrides={"data_dir": str(tmp_path), "confirmation.store": "memory"}, environ={}
    )
    assert resolve_auto_store(explicit, shared=True).confirmation.store == "memory"


def test_a_generated_secret_others_can_read_or_a_short_one_is_refused(tmp_path: Path) -> None:
    secret_file = tmp_path / SECRET_FILE
    secret_file.write_text("x" * 64)
    secret_file.chmod(0o644)
    with pytest.raises(UserError, match="readable by other users: run chmod 600"):
        local_secret(tmp_path)
    secret_file.chmod(0o600)
    assert local_secret(tmp_path) == "x" * 64
    secret_file.write_text("short")
    with pytest.raises(UserError, match="shorter than 32 characters"):
        local_secret(tmp_path)
    assert secret_file.read_text() == "short"  # nothing is overwritten


_BEFORE_HOLDERS = (
    "CREATE TABLE confirmations (pending_id TEXT PRIMARY KEY, state TEXT NOT NULL,"
    " expires_at REAL NOT NULL, record TEXT NOT NULL)"
)


def test_a_store_from_before_holders_is_opened_with_its_records_and_can_hold(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite3"
    old = sqlite3.connect(path, isolation_level=None)
    old.execute(_BEFORE_HOLDERS)
    old.execute(
        "INSERT INTO confirmations VALUES (?, ?, ?, ?)",
        ("p1", "pending", NOW + 1000, record_to_json(_record("p1"))),
    )
    old.close()
    store = SqliteConfirmationStore(path)
    try:
        assert store.get("p1") == _record("p1")
        store.hold("p1", "run.1")
    finally:
        close_store(store)


_HOLDER = """
import sys
from gateway.gate.stores import RedisConfirmationStore, SqliteConfirmationStore
kind, where, pending_id = sys.argv[1:]
store = (SqliteConfirmationStore if kind == "sqlite" else RedisConfirmationStore)(where)
store.hold(pending_id, "run.3")
print(store.locks.process if kind == "sqlite" else store.lease.process, flush=True)
sys.stdin.read()
"""


@pytest.mark.parametrize("kind", ["sqlite", "redis"])
def test_a_call_held_by_a_killed_process_is_an_orphan_and_a_live_processs_never_is(
    kind: str, tmp_path: Path
) -> None:
    with contextlib.ExitStack() as stack:
        where = (
            str(tmp_path / "confirmations.sqlite3")
            if kind == "sqlite"
            else stack.enter_context(redis_server(tmp_path / "redis"))
        )
        store_type = SqliteConfirmationStore if kind == "sqlite" else RedisConfirmationStore
        mine, other = store_type(where), store_type(where)
        stack.callback(close_store, other)
        stack.callback(close_store, mine)
        for pending_id in ("p1", "p2", "p3"):
            mine.put(_record(pending_id))
        mine.hold("p1", "run.1")
        holder = subprocess.Popen(
            [sys.executable, "-c", _HOLDER, kind, where, "p2"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3])},
        )
        assert holder.stdout is not None
        process = holder.stdout.readline().strip()  # it holds p2 from here on
        assert other.orphans() == [] and other.why_ended("p2") is None  # both holders run

        holder.kill()  # SIGKILL: no clean stop, nothing declined
        holder.communicate()
        if kind == "redis":  # its lease lapses LEASE_SECONDS after its last renewal: at once, here
            import redis

            client = redis.Redis.from_url(where)
            client.delete(f"gateway:confirmation:process:{process}")
            client.close()
        assert other.orphans() == [(_record("p2"), "run.3")]
        assert other.why_ended("p2") == PROGRAM_ENDED
        assert other.why_ended("p1") is None and other.why_ended("p3") is None  # live, and not held
        assert isinstance(other, Holders) and isinstance(mine, Holders)
        assert other.end_orphan("p2") and not mine.end_orphan("p2")  # declined once, by whoever finds it
        assert other.orphans() == []
        assert other.why_ended("p2") == PROGRAM_ENDED  # still said when someone tries to approve it
        assert not mine.end_orphan("p1")  # a live holder's call is never an orphan to end

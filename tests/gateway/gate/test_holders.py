"""Holders of paused programs' calls in a shared store: a live holder is never taken for an ended one.

Two store objects over the same file or server stand for two processes: a store's lock (or lease)
is its process's, so closing one without declining its calls is a process that ended.
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from gateway import ConfirmationGate
from gateway.context import PendingConfirmation
from gateway.gate.confirmation import Record
from gateway.gate.holders import PROGRAM_ENDED, Lease
from gateway.gate.stores import RedisConfirmationStore, SqliteConfirmationStore, close_store, open_store
from gateway.settings.loading import load_settings

from ..adapters.mcp_server_support import redis_server

Store = SqliteConfirmationStore | RedisConfirmationStore
NOW = time.time()
"""Taken again as each test starts (`_now`): the stores expire records by the real clock, so a time
taken at import would expire the records of a test a long suite reaches late."""


@pytest.fixture(autouse=True)
def _now(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(globals(), "NOW", time.time())


def _record(pending_id: str) -> Record:
    """A pending call that expires 1,000 s after its test started."""
    pending = PendingConfirmation(
        pending_id, "notes_delete", "Delete a note", {"note_id": "n1"}, "alice", NOW + 1000
    )
    return Record(pending, "binding-" + pending_id, "pending")


@pytest.fixture(params=["sqlite", "redis"])
def where(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, str]]:
    """The kind of shared store, and where it is."""
    if request.param == "sqlite":
        yield "sqlite", str(tmp_path / "confirmations.sqlite3")
    else:
        with redis_server(tmp_path / "redis") as url:
            yield "redis", url


@contextlib.contextmanager
def _opened(kind: str, where: str) -> Iterator[Store]:
    store: Store = SqliteConfirmationStore(where) if kind == "sqlite" else RedisConfirmationStore(where)
    try:
        yield store
    finally:
        close_store(store)


def _locks(path: Path) -> set[str]:
    return {p.name for p in (path.parent / f"{path.name}.holders").glob("*.lock")}


def test_a_live_holder_is_never_ended_for_another_process_opening_the_store_through_a_symlink(
    tmp_path: Path,
) -> None:
    real, other_name = tmp_path / "confirmations.sqlite3", tmp_path / "elsewhere" / "c.sqlite3"
    with _opened("sqlite", str(real)) as reader:
        other_name.parent.mkdir()
        other_name.symlink_to(real)
        with _opened("sqlite", str(other_name)) as holder:
            holder.put(_record("p1"))
            holder.hold("p1", "run.1")
            assert reader.orphans() == [] and reader.why_ended("p1") is None
            assert not reader.end_orphan("p1")


def test_a_live_holder_whose_lock_file_was_removed_still_counts_as_running(tmp_path: Path) -> None:
    path = tmp_path / "confirmations.sqlite3"
    with _opened("sqlite", str(path)) as holder, _opened("sqlite", str(path)) as other:
        holder.put(_record("p1"))
        holder.hold("p1", "run.1")
        for lock in _locks(path):  # a tmp cleaner, say
            (path.parent / f"{path.name}.holders" / lock).unlink()
        assert other.orphans() == [] and other.why_ended("p1") is None


def test_a_store_opening_removes_the_lock_files_of_ended_processes_no_open_call_names(tmp_path: Path) -> None:
    path = tmp_path / "confirmations.sqlite3"
    with _opened("sqlite", str(path)) as store:
        for pending_id in ("p1", "p2"):
            store.put(_record(pending_id))
    ended_open, ended_decided = SqliteConfirmationStore(path), SqliteConfirmationStore(path)
    ended_open.hold("p1", "run.1")
    ended_decided.hold("p2", "run.2")
    assert ended_decided.transition("p2", ("pending",), "denied") is not None  # a person declined it
    with _opened("sqlite", str(path)) as live:
        assert isinstance(live, SqliteConfirmationStore)
        live.put(_record("p3"))
        live.hold("p3", "run.3")
        ended_open.locks.close()  # both end without a clean stop: their locks free, their files left
        ended_decided.locks.close()
        assert _locks(path) == {f"{s.locks.process}.lock" for s in (ended_open, ended_decided, live)}
        with _opened("sqlite", str(path)) as starting:
            # Kept: a live process's, and an ended one's an open call names (it proves the end).
            assert _locks(path) == {f"{s.locks.process}.lock" for s in (ended_open, live)}
            assert starting.orphans() == [(_record("p1"), "run.1")]
            assert starting.end_orphan("p1")
            assert starting.why_ended("p1") == PROGRAM_ENDED  # the reason is kept in the row
        with _opened("sqlite", str(path)):
            assert _locks(path) == {f"{live.locks.process}.lock"}
        assert live.why_ended("p1") == PROGRAM_ENDED
        live.transition("p3", ("pending",), "denied")  # as a clean stop declines its programs' calls
    for store in (ended_open, ended_decided):
        close_store(store)
    assert _locks(path) == set()  # a clean stop leaves nothing when no open call names it


def test_a_call_declined_at_a_clean_stop_is_not_said_to_have_ended_with_a_killed_process(
    where: tuple[str, str],
) -> None:
    kind, place = where
    with _opened(kind, place) as other:
        stopping = SqliteConfirmationStore(place) if kind == "sqlite" else RedisConfirmationStore(place)
        for pending_id in ("p1", "p2"):
            stopping.put(_record(pending_id))
            stopping.hold(pending_id, f"run.{pending_id}")
        stopping.transition("p1", ("pending",), "denied")  # as a clean stop declines its programs' calls
        stopping.transition("p2", ("pending",), "approved")
        stopping.transition("p2", ("approved",), "used")  # ran before the stop
        close_store(stopping)
        assert other.why_ended("p1") is None and other.why_ended("p2") is None
        assert other.orphans() == []
        gate = ConfirmationGate(store=other, secret=b"k" * 32)
        assert gate.approve("p1") is None  # already decided, as for any call


@pytest.mark.parametrize("holder", ["not json", "[1]", '{"call_id": "x"}', '{"process": 5, "call_id": "x"}'])
def test_a_malformed_holder_in_a_row_counts_as_running_and_breaks_nothing(
    holder: str, where: tuple[str, str]
) -> None:
    kind, place = where
    with _opened(kind, place) as store:
        store.put(_record("p1"))
        if isinstance(store, SqliteConfirmationStore):
            with contextlib.closing(sqlite3.connect(place)) as db, db:
                db.execute("UPDATE confirmations SET holder = ? WHERE pending_id = 'p1'", (holder,))
        else:
            store._redis.hset("gateway:confirmation:p1", "holder", holder)
            store._redis.sadd("gateway:confirmations:held", "p1")
        assert store.orphans() == [] and store.why_ended("p1") is None
        assert not store.end_orphan("p1")
        with _opened(kind, place) as starting:  # a process starting on the store
            assert starting.orphans() == []
        assert ConfirmationGate(store=store, secret=b"k" * 32).approve("p1") is not None


def test_a_lease_renewal_that_finds_its_lease_gone_warns(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with redis_server(tmp_path / "redis") as url:
        settings = load_settings(
            overrides={
                "data_dir": str(tmp_path),
                "confirmation.store": "redis",
                "confirmation.redis_url": url,
                "confirmation.secret": "s" * 32,
                "confirmation.lease_seconds": 90,
            },
            environ={},
        )
        store = open_store(settings)
        assert isinstance(store, RedisConfirmationStore) and store.lease.seconds == 90
        lease = Lease(store._redis, "test", seconds=60)
        try:
            process = lease.mine()
            with caplog.at_level(logging.WARNING, logger="gateway"):
                lease.renew()
                assert caplog.records == []  # renewed in time
                store._redis.delete(f"test:process:{process}")  # lapsed: a split, a pause, an eviction
                lease.renew()
            assert [r.getMessage() for r in caplog.records] == [
                "this process's lease in the confirmation store had lapsed (renewed too late: a network "
                "split, a pause, or an eviction); other processes may have declined its paused programs' "
                "calls ([confirmation] lease_seconds)"
            ]
        finally:
            lease.close()
            close_store(store)

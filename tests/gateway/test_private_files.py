"""The data directory is its owner's: mail, events, tasks, the audit log and tokens are unreadable by others.

Through `open_gateway` on the real workspace (a SQLite file), as `gateway serve` opens it: a fresh
data directory is made private, and one an older version left open to everyone is tightened, with
one warning that says what changed.
"""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from gateway import run_sync
from gateway.gate.stores import resolve_auto_store
from gateway.runtime import open_gateway
from gateway.settings.loading import Settings, load_settings


def served(data_dir: Path) -> Settings:
    """Settings as `gateway serve` makes them: the shared confirmation store in the data directory."""
    settings = load_settings(overrides={"data_dir": data_dir, "seed_demo": False}, environ={})
    return resolve_auto_store(settings, shared=True)


def write_a_private_task(settings: Settings) -> None:
    with open_gateway(settings) as gw:
        result = run_sync(gw.invoke("tasks_create_task", {"title": "see the doctor about it"}))
        assert result.ok, result


def modes(data_dir: Path) -> dict[str, int]:
    """Permission bits of the data directory ('.') and of everything in it."""
    found = {".": stat.S_IMODE(data_dir.stat().st_mode)}
    for path in data_dir.rglob("*"):
        found[str(path.relative_to(data_dir))] = stat.S_IMODE(path.lstat().st_mode)
    return found


def gateway_warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.name.startswith("gateway") and r.levelno == logging.WARNING
    ]


@pytest.fixture
def usual_umask() -> Iterator[None]:
    """The usual umask, which alone leaves every new file readable by all."""
    before = os.umask(0o022)
    yield
    os.umask(before)


@pytest.mark.usefixtures("usual_umask")
def test_a_fresh_data_directory_is_made_private_with_private_files(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    data_dir = tmp_path / "fresh" / "gateway"
    settings = served(data_dir)
    with open_gateway(settings) as gw:
        assert run_sync(gw.invoke("tasks_create_task", {"title": "see the doctor about it"})).ok
        pending = run_sync(gw.invoke("tasks_delete_task", {"task_id": "nothing"}))
        assert pending.status == "confirmation_required"
        while_open = modes(data_dir)
    after = modes(data_dir)
    expected_files = {"workspace.sqlite3", "audit.jsonl", "confirmations.sqlite3", "confirmation-secret"}
    assert expected_files <= set(while_open)
    assert {"confirmations.sqlite3-wal", "confirmations.sqlite3-shm"} <= set(while_open)  # journals too
    for seen in (while_open, after):
        assert {name: mode for name, mode in seen.items() if name != "." and mode != 0o600} == {}
        assert seen["."] == 0o700
    assert gateway_warnings(caplog) == []


def test_a_data_directory_left_readable_by_an_older_version_is_tightened_once_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    data_dir = tmp_path / "data"
    settings = served(data_dir)
    write_a_private_task(settings)
    # What an older version left: a 0755 directory, 0644 files (the database, its journal, the
    # audit log, a fronted server's log), and a folder of caches.
    (data_dir / "workspace.sqlite3-wal").write_bytes(b"")
    (data_dir / "mcp" / "logs").mkdir(parents=True)
    (data_dir / "mcp" / "logs" / "notes.stderr.log").write_text("opened note 'diagnosis'\n")
    (data_dir / "operator-notes.txt").write_text("not the gateway's: left alone\n")
    for path in [data_dir, *data_dir.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)

    with caplog.at_level(logging.WARNING, logger="gateway"):
        write_a_private_task(settings)
        first = gateway_warnings(caplog)
        write_a_private_task(settings)
    tightened = modes(data_dir)

    assert tightened.pop("operator-notes.txt") == 0o644
    assert tightened.pop(".") == 0o700
    assert (tightened.pop("mcp"), tightened.pop("mcp/logs")) == (0o700, 0o700)
    assert {name: mode for name, mode in tightened.items() if mode != 0o600} == {}
    assert len(first) == 1
    for name in ("workspace.sqlite3", "workspace.sqlite3-wal", "audit.jsonl", "mcp/logs/notes.stderr.log"):
        assert name in first[0]
    assert "operator-notes.txt" not in first[0]
    assert gateway_warnings(caplog) == first  # the second start found nothing left to tighten

"""Files the gateway keeps for itself (caches, pins, its data directory): written whole or not at all,
old ones pruned, readable by their owner only."""

from __future__ import annotations

import contextlib
import fnmatch
import json
import logging
import os
import secrets
import sqlite3
import stat
import tempfile
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, BinaryIO

from .errors import UserError

log = logging.getLogger("gateway.files")

PRIVATE_DIR = 0o700
PRIVATE_FILE = 0o600
# What the gateway writes in its data directory: SQLite databases with their journals, the audit
# log, tokens and secrets, its own temporary files, and the folders of fronting and OpenAPI caches
# (whole). Anything else an operator keeps there is left as it is.
_DATA_DIR_ENTRIES = (
    "*.sqlite3",
    "*.sqlite3-wal",
    "*.sqlite3-shm",
    "*.sqlite3-journal",
    "*.jsonl",
    "console-token",
    "confirmation-secret",
    "google-token.json",
    ".*.tmp",
    "mcp",
    "openapi",
)
_SQLITE_COMPANIONS = ("-wal", "-shm", "-journal")
_warned: set[Path] = set()
_warned_lock = threading.Lock()


def private_dir(path: Path) -> None:
    """Make `path` (and missing parents) as a directory; each made here is readable by its owner only
    (`mkdir(parents=True)` alone gives the parents the umask's mode)."""
    missing = [p for p in (path, *path.parents) if not p.exists()]
    for directory in reversed(missing):
        directory.mkdir(mode=PRIVATE_DIR, exist_ok=True)


def create_private(path: Path) -> None:
    """Create `path` empty, readable by its owner only, unless something exists there (its directory too).

    A file made by a later `open` or `sqlite3.connect` would take the process's umask (often 0644);
    made here first, there is no moment when another user could open it.

    Raises:
        OSError: it cannot be made (a directory in the way, no permission).
    """
    private_dir(path.parent)
    with contextlib.suppress(IsADirectoryError):  # left for the code that opens it to explain
        os.close(os.open(path, os.O_RDONLY | os.O_CREAT, PRIVATE_FILE))


def sqlite_files(path: Path) -> list[Path]:
    """A SQLite database and the journal files SQLite keeps beside it."""
    return [path, *(path.with_name(path.name + suffix) for suffix in _SQLITE_COMPANIONS)]


def use_wal(db: sqlite3.Connection, *, timeout: float = 10.0) -> None:
    """Put the SQLite file `db` opened in WAL mode, which it then keeps, waiting for other processes.

    Switching the mode needs the file to itself, and SQLite answers "database is locked" at once,
    without its busy timeout, while another process is switching it too (workers starting together
    on a new file): retried until `timeout`.
    """
    deadline = time.monotonic() + timeout
    while True:
        try:
            if db.execute("PRAGMA journal_mode").fetchone()[0] == "wal":
                return
            db.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.02)


def keep_private(data_dir: Path, *, files: Iterable[Path] = ()) -> None:
    """Keep the data directory and what the gateway writes to it readable by its owner only.

    A missing directory is made with mode 0700. An existing one (written by an older version, or
    under a loose umask) is tightened: the directory, the gateway's files in it (`_DATA_DIR_ENTRIES`,
    its cache folders whole) and `files` kept elsewhere lose every permission of group and others;
    the owner's are kept. What was tightened is logged once per data directory and process.
    Symbolic links and other users' files are left alone; a path that cannot be changed is skipped,
    for the code that opens it to report.
    """
    if not data_dir.exists():
        with contextlib.suppress(OSError):
            private_dir(data_dir)
        return
    tightened = _tighten([data_dir]) if data_dir.is_dir() else []
    with contextlib.suppress(OSError):
        if data_dir.is_dir():
            entries = [
                entry
                for entry in sorted(data_dir.iterdir())
                if any(fnmatch.fnmatchcase(entry.name, pattern) for pattern in _DATA_DIR_ENTRIES)
            ]
            tightened += _tighten(entries, recurse=True)
    tightened += _tighten(files)
    if not tightened:
        return
    with _warned_lock:
        if data_dir in _warned:
            return
        _warned.add(data_dir)
    names = [_shown(path, data_dir) for path in tightened]
    shown = ", ".join(names[:10]) + (f" and {len(names) - 10} more" if len(names) > 10 else "")
    log.warning(
        "other users could read the gateway's files; made them readable by their owner only: %s", shown
    )


def _tighten(paths: Iterable[Path], *, recurse: bool = False) -> list[Path]:
    """Remove group and other permissions from `paths` (folders with what is in them, if `recurse`)."""
    changed: list[Path] = []
    for path in paths:
        try:
            info = path.lstat()
        except OSError:
            continue
        if stat.S_ISLNK(info.st_mode) or info.st_uid != os.geteuid():
            continue
        if info.st_mode & 0o077:
            try:
                os.chmod(path, stat.S_IMODE(info.st_mode) & ~0o077)
            except OSError:
                continue
            changed.append(path)
        if recurse and stat.S_ISDIR(info.st_mode):
            with contextlib.suppress(OSError):
                changed += _tighten(sorted(path.iterdir()), recurse=True)
    return changed


def _shown(path: Path, data_dir: Path) -> str:
    try:
        return str(path.relative_to(data_dir)) if path != data_dir else str(data_dir)
    except ValueError:
        return str(path)


def write_atomic(path: Path, write: Callable[[BinaryIO], object]) -> None:
    """Write a file so a reader never sees half of it: `write` fills a temporary file, then a rename.

    Args:
        path: the file (readable by its owner only); its directory is made when missing.
        write: writes the whole content to the binary file handle it is given.
    """
    private_dir(path.parent)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            write(handle)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_json_atomic(path: Path, data: Any, *, compact: bool = False) -> None:
    """Write `data` as JSON so a reader never sees half a file (`write_atomic`).

    Args:
        path: the file; its directory is made when missing.
        data: anything `json.dump` takes.
        compact: no indentation or spaces (caches); otherwise one level of indentation, keys sorted.
    """
    if compact:
        text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    else:
        text = json.dumps(data, indent=1, sort_keys=True)
    write_atomic(path, lambda handle: handle.write(text.encode("utf-8")))


def keep_newest(directory: Path, pattern: str, keep: int) -> None:
    """Delete all but the `keep` most recently written files of `directory` matching `pattern`."""
    files = sorted(directory.glob(pattern), key=lambda p: p.stat().st_mtime, reverse=True)
    for old in files[keep:]:
        with contextlib.suppress(FileNotFoundError):
            old.unlink()


def private_secret(path: Path, *, what: str) -> str:
    """The secret in `path`, made (64 hex characters, mode 0600) when there is none yet.

    Raises:
        UserError: the file is readable by others, too short, or cannot be read or made.
    """
    try:
        private_dir(path.parent)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE)
        except FileExistsError:
            pass
        else:
            with os.fdopen(fd, "w") as out:
                out.write(secrets.token_hex(32) + "\n")
        if path.stat().st_mode & 0o077:
            raise UserError(f"{path} is readable by other users: run chmod 600 {path}")
        secret = path.read_text().strip()
    except OSError as exc:
        raise UserError(f"cannot keep {what} in {path}: {exc.strerror or exc}") from None
    if len(secret) < 32:
        raise UserError(f"{path} holds a secret shorter than 32 characters: delete it to make a new one")
    return secret

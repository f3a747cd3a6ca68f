"""Which gateway process holds the paused program a pending call belongs to, and whether it still runs.

A paused `run_code` program lives in the memory of the process that ran it (docs/code-mode.md). When
it pauses, a shared confirmation store marks its pending call with that process's id (`stores.Holders`).
A process that finds a call marked by a process no longer running declines it, and the gate refuses
to approve or redeem it (`why_ended`): the program it belonged to is gone, so the call must
never run, even if a person approves it later.

Whether the marking process still runs is a notion each store can answer:

- SQLite (processes on one machine): each holding process keeps an exclusive lock (`flock`) on a file
  named by its id, beside the store. The kernel drops the lock however the process ends (a stop,
  SIGKILL, the OOM killer, a power loss), so another process knows at once, and a live replica's
  lock is never taken. A process counts as ended only when its lock file is there and its lock is
  free: a missing file (removed by a tmp cleaner, or a store opened under a name whose directory
  differs) counts as running, so a live process is never declined for it. Without `fcntl`
  (Windows) every holder counts as running: nothing is declined.
- Redis (several machines): a lease key the holding process renews every third of its length
  (`[confirmation] lease_seconds`); it lapses that long after the process ended, or after the
  process could not renew it that long (a network split, a pause): then a live process's calls
  are declined too, and the process logs a warning when it finds its lease gone.

A call declined because its process ended is marked so (`Held.ended`), which keeps the reason once the
lock file or lease is gone; a call declined any other way (a clean stop, a person) is not.

An in-memory store holds nothing of the kind: its calls end with the process that held them.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import secrets
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..files import private_dir

log = logging.getLogger("gateway")

LEASE_SECONDS = 30.0
"""How long a Redis lease outlives its last renewal, by default (`[confirmation] lease_seconds`)."""

PROGRAM_ENDED = (
    "this call belonged to a run_code program that ended with its gateway process (the process "
    "stopped without a clean stop: killed, crashed or its machine went down), so nothing will run, "
    "even if approved; ask the user to run the program again if the work is still wanted"
)
"""What an operator approving such a call reads, and what the model reads if it redeems one."""

_PROCESS_ID = re.compile(r"[0-9a-f]{16}")


@dataclass(frozen=True)
class Held:
    """A store's mark on a paused program's call: the holding process, the call's call id, and
    whether the call was declined because that process ended."""

    process: str
    call_id: str
    ended: bool = False

    def to_json(self) -> str:
        data: dict[str, object] = {"process": self.process, "call_id": self.call_id}
        if self.ended:
            data["ended"] = True
        return json.dumps(data)


def parse_held(text: object) -> Held | None:
    """The mark in a store's row; None when there is none or it is malformed (never declined on it)."""
    if not isinstance(text, str):
        return None
    try:
        data = json.loads(text)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    process, call_id, ended = data.get("process"), data.get("call_id"), data.get("ended", False)
    if not (isinstance(process, str) and isinstance(call_id, str) and isinstance(ended, bool)):
        return None
    return Held(process, call_id, ended)


def why_held_ended(held: Held | None, state: object, alive: Callable[[str], bool]) -> str | None:
    """`PROGRAM_ENDED` for a call declined because its process ended, or open while its process ended.

    A call declined otherwise (a clean stop, a person), used, unmarked or marked unreadably: None.
    """
    if held is None:
        return None
    if held.ended or (state in ("pending", "approved") and not alive(held.process)):
        return PROGRAM_ENDED
    return None


def why_ended(store: object, pending_id: str) -> str | None:
    """`PROGRAM_ENDED` when `store` marks the call as a paused program's whose process ended."""
    ask = getattr(store, "why_ended", None)  # a shared store's (`stores.Holders`); memory holds none
    answer = ask(pending_id) if callable(ask) else None
    return answer if isinstance(answer, str) else None


def new_process_id() -> str:
    """This process's id as a holder: random, so a restart on the same data is a new holder."""
    return secrets.token_hex(8)


class ProcessLocks:
    """Liveness on one machine: a holding process locks a file named by its id in `directory`."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.process = new_process_id()
        self._fd: int | None = None
        self._lock = threading.Lock()

    def mine(self) -> str:
        """This process's id, its lock taken on first use (before any call is marked with it)."""
        with self._lock:
            if self._fd is None:
                private_dir(self.directory)
                self._fd = _locked(self._file(self.process))
        return self.process

    def alive(self, process: str) -> bool:
        """Whether `process` still runs: ended only when its lock file is there and its lock free.

        A missing file, a malformed id or a lock that cannot be probed counts as running.
        """
        if process == self.process or not _PROCESS_ID.fullmatch(process):
            return True
        return not _free(self._file(process), unlink=False)

    def sweep(self, named: Iterable[str]) -> None:
        """Remove the lock files of ended processes that no open call names (they prove nothing more)."""
        keep = {*named, self.process}
        with contextlib.suppress(OSError):
            for path in self.directory.glob("*.lock"):
                if path.stem not in keep and _PROCESS_ID.fullmatch(path.stem):
                    _free(path, unlink=True)

    def close(self) -> None:
        """Release this process's lock: its calls are declined or used by now (a clean stop).

        The file stays: should an open call still name this process, it proves the process ended.
        The store sweeps it when no open call names it.
        """
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None

    def _file(self, process: str) -> Path:
        return self.directory / f"{process}.lock"


def _locked(path: Path) -> int:
    """A descriptor holding the lock of the file at `path`, made if missing."""
    while True:
        # Not inherited (O_CLOEXEC, PEP 446): a child left running after a kill holds no lock.
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            import fcntl
        except ImportError:  # no fcntl: see the module's docstring
            return fd
        fcntl.flock(fd, fcntl.LOCK_EX)  # waits out a sweep or a probe holding it for an instant
        try:
            same = os.stat(path).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same:
            return fd
        os.close(fd)  # a sweep removed the file between its making and our lock: make it again


def _free(path: Path, *, unlink: bool) -> bool:
    """Whether the lock of the existing file at `path` is free (its process ended), removing it if
    asked while holding the lock. False when the file is missing or the lock cannot be probed."""
    try:
        import fcntl
    except ImportError:
        return False
    try:
        fd = os.open(path, os.O_RDWR)
    except OSError:
        return False
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return False
        if unlink:
            with contextlib.suppress(OSError):
                os.unlink(path)
        return True
    finally:
        os.close(fd)


class Lease:
    """Liveness across machines: a Redis key per holding process, renewed while it runs."""

    def __init__(self, redis: Any, prefix: str, seconds: float = LEASE_SECONDS) -> None:
        self._redis = redis
        self._prefix = prefix
        self.seconds = seconds
        self.process = new_process_id()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def mine(self) -> str:
        """This process's id, its lease taken (and kept renewed) from first use."""
        with self._lock:
            if self._thread is None:
                self._stop.clear()
                self._renew(first=True)
                self._thread = threading.Thread(target=self._keep, name="gateway-lease", daemon=True)
                self._thread.start()
        return self.process

    def alive(self, process: str) -> bool:
        return process == self.process or bool(self._redis.exists(self._key(process)))

    def close(self) -> None:
        with self._lock:
            if self._thread is not None:
                self._stop.set()
                self._thread.join()
                self._redis.delete(self._key(self.process))
                self._thread = None

    def renew(self) -> None:
        """Renew the lease now (its thread does so every third of its length)."""
        self._renew(first=False)

    def _renew(self, *, first: bool) -> None:
        pipe = self._redis.pipeline(transaction=True)  # (SET ... GET needs Redis 6.2)
        pipe.exists(self._key(self.process))
        pipe.set(self._key(self.process), "1", px=int(self.seconds * 1000))
        held, _ = pipe.execute()
        if not held and not first:
            log.warning(
                "this process's lease in the confirmation store had lapsed (renewed too late: a network "
                "split, a pause, or an eviction); other processes may have declined its paused programs' "
                "calls ([confirmation] lease_seconds)"
            )

    def _keep(self) -> None:
        while not self._stop.wait(self.seconds / 3):
            with contextlib.suppress(Exception):  # a blip: the next renewal may reach it in time
                self.renew()

    def _key(self, process: str) -> str:
        return f"{self._prefix}:process:{process}"

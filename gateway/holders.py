"""Which gateway process holds the paused program a pending call belongs to, and whether it still runs.

A paused `run_code` program lives in the memory of the process that ran it (docs/code-mode.md). When
it pauses, a shared confirmation store marks its pending call with that process's id (`stores.Holders`).
A process that finds a call marked by a process no longer running declines it, and the gate refuses
to approve or redeem it (`why_ended`): the program it belonged to is gone, so the call must
never run, even if a person approves it later.

Whether the marking process still runs is a notion each store can answer soundly:

- SQLite (processes on one machine): each holding process keeps an exclusive lock (`flock`) on a file
  named by its id, beside the store. The kernel drops the lock however the process ends (a stop,
  SIGKILL, the OOM killer, a power loss), so another process knows at once, and a live replica's
  lock is never taken. Without `fcntl` (Windows) every holder counts as running: nothing is declined.
- Redis (several machines): a lease key the holding process renews every `LEASE_SECONDS / 3`
  seconds; it lapses `LEASE_SECONDS` after the process ended.

An in-memory store holds nothing of the kind: its calls end with the process that held them.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import threading
from pathlib import Path
from typing import Any

from .files import private_dir

LEASE_SECONDS = 30.0
"""How long a Redis lease outlives its last renewal: a killed process's calls are declined after it."""

PROGRAM_ENDED = (
    "this call belonged to a run_code program that ended with its gateway process (the process "
    "stopped without a clean stop: killed, crashed or its machine went down), so nothing will run, "
    "even if approved; ask the user to run the program again if the work is still wanted"
)
"""What an operator approving such a call reads, and what the model reads if it redeems one."""

_PROCESS_ID = re.compile(r"[0-9a-f]{16}")


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
                # Not inherited (O_CLOEXEC, PEP 446): a child left running after a kill holds no lock.
                fd = os.open(self._file(self.process), os.O_RDWR | os.O_CREAT, 0o600)
                with contextlib.suppress(ImportError):  # no fcntl: see the module's docstring
                    import fcntl

                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                self._fd = fd
        return self.process

    def alive(self, process: str) -> bool:
        """Whether `process` still runs: its lock is held (a malformed id counts as running)."""
        if process == self.process or not _PROCESS_ID.fullmatch(process):
            return True
        try:
            import fcntl
        except ImportError:
            return True
        try:
            fd = os.open(self._file(process), os.O_RDWR)
        except FileNotFoundError:  # its lock was found free before, and removed
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        finally:
            os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(self._file(process))
        return False

    def close(self) -> None:
        """Release this process's lock: its calls are declined or used by now (a clean stop)."""
        with self._lock:
            if self._fd is not None:
                with contextlib.suppress(OSError):
                    os.unlink(self._file(self.process))
                os.close(self._fd)
                self._fd = None

    def _file(self, process: str) -> Path:
        return self.directory / f"{process}.lock"


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
                self._renew()
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

    def _renew(self) -> None:
        self._redis.set(self._key(self.process), "1", px=int(self.seconds * 1000))

    def _keep(self) -> None:
        while not self._stop.wait(self.seconds / 3):
            with contextlib.suppress(Exception):  # a blip: the next renewal may reach it in time
                self._renew()

    def _key(self, process: str) -> str:
        return f"{self._prefix}:process:{process}"

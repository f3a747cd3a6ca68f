"""`gateway serve --transport http --workers N`: N server processes sharing one port.

Each worker is a whole `gateway serve` (its catalogs, index, gate and stores) listening on the
same address with `SO_REUSEPORT`, so the kernel spreads new connections over them and each
worker's event loop keeps a core busy. The parent only supervises: it reserves the port (a bound
socket that never listens, so it takes no connections, and so that `--port 0` names one port
for all), starts the workers, says once that the server is up when every worker is, restarts a
worker that dies, and on SIGTERM or Ctrl-C stops them all (each stops as one server does) before
it exits.

What one process keeps to itself cannot be spread over several, so the parent refuses, before
anything starts, what would behave differently (`refusal`): MCP sessions (a session lives in the
process that opened it, and the kernel routes connections, not sessions), code mode (a paused
program lives in the process that ran it), and state kept in memory (confirmations, limits'
counts, learning from use). What workers share otherwise is what replicas share: the data
directory's SQLite files or Redis, the confirmation secret, the audit log (one `write` a line,
appended), and `/metrics`, which sums every worker's counters (the Prometheus client's
multiprocess mode, its files in a directory of the parent's).

The link between the two is a pair of pipes a worker (`Worker`): it writes one byte on the first
when it listens; it reads the second, which only the parent writes, and stops when that ends, so
a parent killed outright takes its workers with it.
"""

from __future__ import annotations

import contextlib
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ..errors import UserError
from ..settings.loading import Settings
from .listening import reserved_port

METRICS_DIR = "PROMETHEUS_MULTIPROC_DIR"
"""The environment variable that puts the Prometheus client of each worker in multiprocess mode."""

STOP_MARGIN_SECONDS = 5.0
"""How long past `[serve] stop_seconds` the parent waits for its workers to stop before it kills them."""

RESTARTS = 5
"""Restarts within `RESTART_WINDOW` seconds after which the parent gives up and stops."""
RESTART_WINDOW = 60.0


def refusal(settings: Settings, transport: str) -> str | None:
    """Why `settings` cannot be served by several workers, or None when they can."""
    if transport != "http":
        return "--workers serves HTTP: over stdio one client starts one process (add --transport http)"
    why = []
    if settings.serve.sessions:
        why.append(
            "MCP sessions live in the process that opened them, and the kernel spreads connections, "
            "not sessions: set [serve] sessions = false (GATEWAY_SERVE_SESSIONS=false), or run "
            "replicas behind a router that routes by Mcp-Session-Id (docs/mcp.md)"
        )
    if settings.code.enabled:
        why.append("code mode: a paused program lives in the worker that ran it (docs/code-mode.md)")
    if settings.confirmation.store == "memory":
        why.append("confirmation.store 'memory': a pending call would be known to one worker only")
    if settings.limits and settings.limiter.store == "memory":
        why.append("limiter.store 'memory': each worker would count its own calls (use redis)")
    if settings.usage.enabled and settings.usage.store == "memory":
        why.append("usage.store 'memory': each worker would learn alone (use sqlite or redis)")
    if not why:
        return None
    return "cannot serve with several workers: " + "; ".join(why)


@dataclass
class Worker:
    """A worker's side of its link to the parent (`--worker-pipes READY,ALIVE`)."""

    ready_fd: int
    alive_fd: int

    @classmethod
    def parse(cls, text: str) -> Worker:
        ready, _, alive = text.partition(",")
        return cls(int(ready), int(alive))

    def watch_parent(self) -> None:
        """Stop this worker (as SIGTERM does) once the parent's end of the link closes."""

        def wait() -> None:
            with contextlib.suppress(OSError):
                while os.read(self.alive_fd, 64):
                    pass
            os.kill(os.getpid(), signal.SIGTERM)

        threading.Thread(target=wait, name="gateway-parent", daemon=True).start()

    def ready(self) -> None:
        """Tell the parent this worker listens (once)."""
        with contextlib.suppress(OSError):
            os.write(self.ready_fd, b"r")
            os.close(self.ready_fd)


@dataclass
class _Child:
    index: int
    process: subprocess.Popen[bytes]
    ready_fd: int  # the parent's end: one byte when the worker listens, then end of file
    alive_fd: int  # the parent's end: never written, closed to stop the worker
    ready: bool = False


@dataclass
class _Supervisor:
    argv: Sequence[str]
    port: int
    count: int
    banner: Callable[[list[int]], None]
    env: dict[str, str]
    children: dict[int, _Child] = field(default_factory=dict)
    restarts: list[float] = field(default_factory=list)
    stop_seconds: float = 30.0  # how long a stopping worker may take before it is killed
    stopping: int | None = None  # the signal that stops the server
    announced: bool = False

    def start(self, index: int) -> None:
        ready_r, ready_w = os.pipe()
        alive_r, alive_w = os.pipe()
        command = [
            sys.executable,
            "-m",
            "gateway.cli",
            *self.argv,
            "--port",
            str(self.port),
            "--worker-pipes",
            f"{ready_w},{alive_r}",
        ]
        # A session of its own: Ctrl-C reaches the parent, which stops the workers in order.
        process = subprocess.Popen(command, pass_fds=(ready_w, alive_r), env=self.env, start_new_session=True)
        os.close(ready_w)
        os.close(alive_r)
        self.children[index] = _Child(index, process, ready_r, alive_w)

    def run(self, wakeup: socket.socket) -> int:
        for index in range(self.count):
            self.start(index)
        while self.stopping is None:
            waiting = {c.ready_fd: c for c in self.children.values() if not c.ready}
            readable, _, _ = select.select([wakeup.fileno(), *waiting], [], [])
            if wakeup.fileno() in readable:
                with contextlib.suppress(BlockingIOError):
                    wakeup.recv(4096)
            for fd in readable:
                if fd in waiting and os.read(fd, 1):
                    child = waiting[fd]
                    child.ready = True
                    if self.announced:  # a worker started again in place of one that died
                        print(
                            f"gateway: worker {child.index + 1} (pid {child.process.pid}) listens again",
                            file=sys.stderr,
                            flush=True,
                        )
            if not self.announced and all(c.ready for c in self.children.values()):
                self.announced = True
                self.banner([c.process.pid for c in self.children.values()])
            if (status := self._reap()) is not None:
                return status  # the caller stops the others
        return 130 if self.stopping == signal.SIGINT else 0

    def _reap(self) -> int | None:
        """Restart each worker that ended; a status to stop with when one cannot be restarted."""
        for index, child in list(self.children.items()):
            status = child.process.poll()
            if status is None or self.stopping is not None:
                continue
            os.close(child.ready_fd)
            os.close(child.alive_fd)
            del self.children[index]
            if not child.ready:  # it never listened: its own message says why; another would fail too
                return status if status > 0 else 1
            now = time.monotonic()
            self.restarts = [t for t in self.restarts if now - t < RESTART_WINDOW] + [now]
            if len(self.restarts) > RESTARTS:
                print(
                    f"gateway: workers ended {len(self.restarts)} times in {RESTART_WINDOW:.0f} s; stopping",
                    file=sys.stderr,
                    flush=True,
                )
                return 1
            print(
                f"gateway: worker {index + 1} (pid {child.process.pid}) ended with status {status}; "
                "starting another",
                file=sys.stderr,
                flush=True,
            )
            self.start(index)
        return None

    def stop(self) -> None:
        """Each worker stopped as one server stops (SIGTERM), killed if it takes too long."""
        for child in self.children.values():
            with contextlib.suppress(ProcessLookupError):
                child.process.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + self.stop_seconds
        for child in self.children.values():
            try:
                child.process.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                child.process.kill()
                child.process.wait()
            for fd in (child.ready_fd, child.alive_fd):
                with contextlib.suppress(OSError):
                    os.close(fd)
        self.children.clear()


def serve_workers(
    settings: Settings,
    argv: Sequence[str],
    *,
    count: int,
    host: str,
    port: int,
    banner: Callable[[int, list[int]], None],
) -> int:
    """Serve with `count` workers until SIGTERM or Ctrl-C; the exit status.

    Args:
        settings: the configuration (the caller has checked it with `refusal`); the workers load
            it again from `argv`.
        argv: the command line of this `gateway serve`, given to each worker.
        count: how many workers.
        host: the address to listen on.
        port: the port (0: one free port for all).
        banner: prints that the server is up, given the port and the workers' process ids; called
            once, when every worker listens.
    """
    if not hasattr(socket, "SO_REUSEPORT"):
        raise UserError("--workers needs SO_REUSEPORT, which this system does not offer")
    held = reserved_port(host, port, setting="[serve] port")
    bound = held.getsockname()[1]
    metrics = tempfile.mkdtemp(prefix="gateway-metrics-")
    wakeup, notify = socket.socketpair()
    wakeup.setblocking(False)
    notify.setblocking(False)
    supervisor = _Supervisor(
        argv,
        bound,
        count,
        lambda pids: banner(bound, pids),
        env={**os.environ, METRICS_DIR: metrics},
        stop_seconds=settings.serve.stop_seconds + STOP_MARGIN_SECONDS,
    )

    def stop(signum: int, frame: object) -> None:
        supervisor.stopping = signum

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    previous[signal.SIGCHLD] = signal.signal(signal.SIGCHLD, lambda signum, frame: None)
    previous_fd = signal.set_wakeup_fd(notify.fileno(), warn_on_full_buffer=False)
    try:
        status = supervisor.run(wakeup)
    finally:
        signal.set_wakeup_fd(previous_fd)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        supervisor.stop()
        for end in (wakeup, notify, held):
            end.close()
        shutil.rmtree(metrics, ignore_errors=True)
    if status == 130:
        print("gateway: interrupted", file=sys.stderr, flush=True)
    return status

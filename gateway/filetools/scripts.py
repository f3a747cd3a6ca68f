"""Running a tool's script: JSON on stdin, a clean environment, a time limit, bounded output.

The script is executed directly (`execve`), never through a shell, so a parameter value is
data wherever it goes: standard input, or an environment variable. On Linux its parent is a
small reaper process (`_reaper.py`, a child subreaper): when the run ends for any reason (exit,
timeout, output flood, cancellation) every descendant of the script is killed, even one that
left the process group (`setsid`), so none outlives the call or holds its output open.
Elsewhere each run gets its own process group, killed whole. POSIX only.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"
MAX_OUTPUT_BYTES = 256 * 1024
MAX_STDERR_BYTES = 8 * 1024
PARAM_PREFIX = "PARAM_"
# How long a run's end may take: the reaper killing the script's descendants, then the pipes
# closing. Only a process that escaped (no reaper, or it killed the reaper) makes anyone wait this long.
_GRACE_SECONDS = 2.0
_REAPER_SCRIPT = Path(__file__).with_name("_reaper.py")
REAPER = sys.platform.startswith("linux") and bool(sys.executable)
"""Whether runs have a reaper: a parent that kills every descendant of the script (Linux)."""
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class ScriptTimeout(Exception):
    """The script ran past its time limit and was killed."""


class OutputTooLarge(Exception):
    """The script wrote more than the output limit to stdout and was killed."""


@dataclass(frozen=True)
class Completed:
    """A script that exited by itself: its status, its stdout, and the tail of its stderr."""

    returncode: int
    stdout: bytes
    stderr_tail: bytes


def environment(
    *,
    passthrough: Sequence[str] = (),
    source: Mapping[str, str] | None = None,
    fixed: Mapping[str, str] | None = None,
    arguments: Mapping[str, Any] | None = None,
) -> dict[str, str]:
    """The environment of a run, built from nothing.

    `PATH` is a fixed system path and `LANG` is C.UTF-8, unless listed in `passthrough`;
    listed variables are copied from `source` (default: this process's environment) when set;
    `fixed` values follow; last, each top-level scalar argument whose name is an identifier
    becomes `PARAM_<NAME>` (strings as they are, numbers and booleans as JSON).
    """
    src = os.environ if source is None else source
    env = {"PATH": DEFAULT_PATH, "LANG": "C.UTF-8"}
    env.update({name: src[name] for name in passthrough if name in src})
    env.update(fixed or {})
    for key, value in (arguments or {}).items():
        text = _scalar_text(value)
        if text is not None and _ENV_NAME.match(key) and "\0" not in text:
            env[PARAM_PREFIX + key.upper()] = text
    return env


def _scalar_text(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, bool | int | float):
        return json.dumps(value)
    return None  # null, objects and arrays: standard input only


async def run_script(
    path: Path,
    stdin: bytes,
    *,
    env: Mapping[str, str],
    cwd: Path,
    timeout: float,
    max_output: int = MAX_OUTPUT_BYTES,
    max_stderr: int = MAX_STDERR_BYTES,
) -> Completed:
    """Run `path` with `stdin` and wait for it, within `timeout` seconds and `max_output` bytes of stdout.

    Raises:
        ScriptTimeout: it did not exit in time.
        OutputTooLarge: it wrote more than `max_output` bytes to stdout.
        OSError: it could not be started (missing, not executable, no interpreter).
    """
    loop = asyncio.get_running_loop()
    status_read, status_write = os.pipe()  # the reaper's word when the script could not start
    try:
        transport, run = await loop.subprocess_exec(
            lambda: _Run(max_output, max_stderr),
            *_command(path, status_write),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=dict(env),
            start_new_session=True,  # its own process group, so it can be killed with its children
            pass_fds=(status_write,) if REAPER else (),
        )
    except BaseException:
        os.close(status_read)
        raise
    finally:
        os.close(status_write)
    timed_out = False
    try:
        stdin_pipe = transport.get_pipe_transport(0)
        if isinstance(stdin_pipe, asyncio.WriteTransport):
            # Buffered by the transport; a script that exits without reading its input is fine.
            stdin_pipe.write(stdin)
            stdin_pipe.close()
        async with asyncio.timeout(timeout):
            await run.exited.wait()
    except TimeoutError:
        timed_out = True
    finally:
        try:
            if not run.exited.is_set():
                _end(run.pid)
                await _within(_GRACE_SECONDS, run.exited)
            _kill_group(run.pid)  # the reaper is gone: only a process that killed it can be left
            # Output still in the pipes arrives now; a process that escaped (and holds them) is not
            # waited for.
            await _within(_GRACE_SECONDS, run.finished)
        finally:
            transport.close()
            started = _start_error(status_read)
    if started is not None:
        raise started
    if run.flooded:
        raise OutputTooLarge
    returncode = transport.get_returncode()
    if timed_out or returncode is None:
        raise ScriptTimeout
    return Completed(returncode, bytes(run.out), bytes(run.err))


def _command(path: Path, status_fd: int) -> list[str]:
    if REAPER:
        return [sys.executable, "-I", "-S", str(_REAPER_SCRIPT), str(os.getpid()), str(status_fd), str(path)]
    return [str(path)]


async def _within(seconds: float, event: asyncio.Event) -> None:
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(seconds):
            await event.wait()


def _start_error(status_read: int) -> OSError | None:
    """The reaper's report that the script could not start, read once the reaper is gone."""
    try:
        os.set_blocking(status_read, False)
        report = os.read(status_read, 32)
    except BlockingIOError:
        return None  # still held open: only by a process that killed the reaper
    finally:
        os.close(status_read)
    if not report:
        return None
    errno = int(report)
    return OSError(errno, os.strerror(errno))


class _Run(asyncio.SubprocessProtocol):
    """Collects one run's output, and ends the run once the script is gone or flooding."""

    def __init__(self, max_output: int, max_stderr: int) -> None:
        self.max_output = max_output
        self.max_stderr = max_stderr
        self.out = bytearray()
        self.err = bytearray()
        self.flooded = False
        self.exited = asyncio.Event()
        self.finished = asyncio.Event()
        self.pid = 0

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.SubprocessTransport)
        self.pid = transport.get_pid()

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        if fd == 1 and not self.flooded:
            self.out.extend(data)
            if len(self.out) > self.max_output:
                self.flooded = True
                _end(self.pid)
        elif fd == 2:
            self.err.extend(data)
            del self.err[: -self.max_stderr]

    def process_exited(self) -> None:
        # Without the reaper, children left in the group would hold the pipes open; they end now.
        _kill_group(self.pid)
        self.exited.set()

    def connection_lost(self, exc: Exception | None) -> None:
        self.finished.set()


def _end(pid: int) -> None:
    """End a run: the reaper kills every descendant of the script, then exits; else the group is killed."""
    if REAPER:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGTERM)
    else:
        _kill_group(pid)


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)

"""Running a tool's script: JSON on stdin, a clean environment, a time limit, bounded output.

The script is executed directly (`execve`), never through a shell, so a parameter value is
data wherever it goes: standard input, or an environment variable. Each run gets its own
process group; when the run ends for any reason (exit, timeout, output flood, cancellation)
the whole group is killed, so a script's children never outlive the call. POSIX only.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"
MAX_OUTPUT_BYTES = 256 * 1024
MAX_STDERR_BYTES = 8 * 1024
PARAM_PREFIX = "PARAM_"
# After the group is killed the pipes close at once; this only bounds a process that escaped the
# group (setsid) and still holds them.
_DRAIN_SECONDS = 5.0
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
    transport, run = await loop.subprocess_exec(
        lambda: _Run(max_output, max_stderr),
        str(path),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=cwd,
        env=dict(env),
        start_new_session=True,  # its own process group, so it can be killed with its children
    )
    timed_out = False
    try:
        stdin_pipe = transport.get_pipe_transport(0)
        if isinstance(stdin_pipe, asyncio.WriteTransport):
            # Buffered by the transport; a script that exits without reading its input is fine.
            stdin_pipe.write(stdin)
            stdin_pipe.close()
        async with asyncio.timeout(timeout):
            await run.finished.wait()
    except TimeoutError:
        timed_out = True
    finally:
        _kill_group(transport.get_pid())
        if not run.finished.is_set():
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(_DRAIN_SECONDS):
                    await run.finished.wait()
        transport.close()
    if run.flooded:
        raise OutputTooLarge
    returncode = transport.get_returncode()
    if timed_out or returncode is None:
        raise ScriptTimeout
    return Completed(returncode, bytes(run.out), bytes(run.err))


class _Run(asyncio.SubprocessProtocol):
    """Collects one run's output, and ends the process group once the script is gone or flooding."""

    def __init__(self, max_output: int, max_stderr: int) -> None:
        self.max_output = max_output
        self.max_stderr = max_stderr
        self.out = bytearray()
        self.err = bytearray()
        self.flooded = False
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
                _kill_group(self.pid)
        elif fd == 2:
            self.err.extend(data)
            del self.err[: -self.max_stderr]

    def process_exited(self) -> None:
        # Children left behind would hold the pipes open; they end with the script.
        _kill_group(self.pid)

    def connection_lost(self, exc: Exception | None) -> None:
        self.finished.set()


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)

"""The sandbox a program runs in: pydantic-monty's worker processes, never this process.

Monty interprets the program in a pool of `monty` worker subprocesses, with its own limits (memory,
recursion, execution time) and no file system, network or environment: every OS call it makes
reaches the host as a snapshot, and this module refuses each one. A call of one of the host's
functions (`call`, `discover`, `schema`) suspends the program; `Run.answer` resumes it with a value or
an exception. A suspended program can be dumped to bytes and restored in another worker later, so a
program waiting for a person's approval holds no worker.

The pool's methods block, so each step runs in a thread: the event loop never waits on a worker.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from ..errors import UserError

log = logging.getLogger("gateway")

PRELUDE = "Declined = PermissionError\nToolError = RuntimeError\n"
"""Names the program may catch. The sandbox has no class inheritance, so the two errors are
builtins under the names the tool's description uses (a declined call, a failed call)."""


@dataclass(frozen=True)
class Limits:
    """What one program may use in the sandbox."""

    cpu_seconds: float = 5.0
    memory_bytes: int = 64 * 1024 * 1024
    max_recursion: int = 200
    max_suspensions: int = 1000


@dataclass(frozen=True)
class Asked:
    """The program called a host function and waits for its answer."""

    function: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    line: int


@dataclass(frozen=True)
class Finished:
    output: Any


@dataclass(frozen=True)
class Failed:
    """The program stopped with an error: its kind (syntax, runtime, limit, crashed), where and what."""

    kind: str
    error_type: str
    message: str
    line: int | None = None
    source: str | None = None


Step = Asked | Finished | Failed

_PROGRAM = "<python-input-1>"  # the program's feed, after the prelude's (how the sandbox names feeds)


def _monty() -> Any:
    try:
        import pydantic_monty
    except ImportError:
        raise UserError("code mode needs the code extra: pip install 'metatool-gateway[code]'") from None
    return pydantic_monty


class Sandbox:
    """A pool of sandbox workers, started when the first program runs."""

    def __init__(
        self,
        limits: Limits,
        *,
        max_workers: int = 4,
        functions: Collection[str] = (),
        checkout_timeout: float | None = None,
    ) -> None:
        self.limits = limits
        self.checkout_timeout = checkout_timeout
        self.functions = frozenset(functions)
        self.max_workers = max_workers
        self._pool: Any = None
        self._lock = threading.Lock()

    def _started(self) -> Any:
        with self._lock:
            if self._pool is None:
                m = _monty()
                pool = m.Monty(
                    min_processes=1,
                    max_processes=self.max_workers,
                    checkout_timeout=self.checkout_timeout,  # then TimeoutError: every worker is busy
                    # The host's backstop: a worker past its own limits is killed.
                    request_timeout=self.limits.cpu_seconds + 10,
                )
                pool.__enter__()
                self._pool = pool
            return self._pool

    def check(self) -> None:
        """Raises UserError now, rather than at the first program, when the sandbox is not installed."""
        _monty()

    def close(self) -> None:
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.__exit__(None, None, None)

    def _checkout(self) -> Any:
        limits = {
            "max_feed_duration_secs": self.limits.cpu_seconds,
            "max_memory": self.limits.memory_bytes,
            "max_recursion_depth": self.limits.max_recursion,
            "max_suspensions": self.limits.max_suspensions,
        }
        # Sleeps return at once: a program cannot hold a worker by waiting.
        session = self._started().checkout(limits=limits, os_policy={"sleep": "zero"})
        session.__enter__()
        return session

    async def start(self, code: str) -> tuple[Run, Step]:
        """A new program, run until it first asks the host for something or ends."""
        run = Run(self, await asyncio.to_thread(self._checkout), code)
        lookup = {name: _HostFunction(name) for name in self.functions}
        start = lambda s: s.feed_start(code, external_lookup=lookup, print_callback=run.printed)  # noqa: E731
        return run, await run.first(start, prelude=True)

    async def restore(self, dumped: bytes, code: str) -> tuple[Run, Step]:
        """A dumped program in a fresh worker, waiting again for the answer it was waiting for."""
        run = Run(self, await asyncio.to_thread(self._checkout), code)
        return run, await run.first(lambda s: s.load_snapshot(dumped, print_callback=run.printed))


class Run:
    """One program in one worker, stepped from the event loop."""

    def __init__(self, sandbox: Sandbox, session: Any, code: str) -> None:
        self.sandbox = sandbox
        self.code = code
        self.session = session
        self.printed = _monty().CollectString(max_bytes=1_000_000)
        self._snapshot: Any = None
        self._closed = False

    async def first(self, begin: Any, *, prelude: bool = False) -> Step:
        """The first step; the worker is released if it never comes (cancelled, say)."""
        try:
            return await self.step(begin, first=prelude)
        except BaseException:
            await asyncio.shield(self.close())
            raise

    async def step(self, resume: Any, *, first: bool = False) -> Step:
        """Advance the program in a worker thread until it asks the host for something or ends."""
        return await asyncio.to_thread(self._step, resume, first)

    def _step(self, resume: Any, first: bool) -> Step:
        m = _monty()
        try:
            if first:
                self.session.feed_run(PRELUDE)
            snapshot = resume(self.session if self._snapshot is None else self._snapshot)
            while True:
                if isinstance(snapshot, m.MontyComplete):
                    return Finished(snapshot.output)
                if isinstance(snapshot, m.NameLookupSnapshot):
                    # Only the host's functions resolve; any other unknown name is a NameError.
                    if snapshot.variable_name in self.sandbox.functions:
                        snapshot = snapshot.resume_auto()
                    else:
                        snapshot = snapshot.resume()
                    continue
                if isinstance(snapshot, m.FunctionSnapshot):
                    name = snapshot.function_name
                    if snapshot.is_os_function:
                        # No file, network, environment or process: refused as the sandbox refuses.
                        snapshot = snapshot.resume_not_handled()
                        continue
                    if name not in self.sandbox.functions:  # a builtin the sandbox leaves to its host
                        error = {"exc_type": "NameError", "message": f"{name} is not available here"}
                        snapshot = snapshot.resume(error)
                        continue
                    self._snapshot = snapshot
                    return Asked(str(name), tuple(snapshot.args), dict(snapshot.kwargs), self._line(snapshot))
                if isinstance(snapshot, m.FutureSnapshot):  # gathered calls: each answered in turn
                    snapshot = snapshot.resume(
                        {
                            i: {"exc_type": "RuntimeError", "message": "run calls one at a time"}
                            for i in snapshot.pending_call_ids
                        }
                    )
                    continue
                return Failed("runtime", "RuntimeError", f"the sandbox stopped unexpectedly ({snapshot!r})")
        except m.MontySyntaxError as exc:
            return _failed("syntax", exc)
        except m.MontyRuntimeError as exc:
            return _failed("runtime", exc)
        except m.MontyCrashedError as exc:
            kind = "timeout" if exc.timed_out else "crashed"
            return Failed(kind, "MontyCrashedError", "the sandbox's worker stopped")
        except m.MontyError as exc:
            return Failed("crashed", type(exc).__name__, "the sandbox could not run the program")
        except Exception:  # the worker is discarded with the run; the gateway goes on
            log.exception("the sandbox failed unexpectedly")
            return Failed("crashed", "Exception", "the sandbox could not run the program")

    def _line(self, snapshot: Any) -> int:
        """The program's line a call was made on (the sandbox gives a byte offset)."""
        offset = int(snapshot.position.start)
        return self.code.encode()[:offset].count(b"\n") + 1

    async def answer(self, value: Any = None, error: BaseException | None = None) -> Step:
        """Resume the waiting program with what its call returned, or the exception it raised."""
        result = {"exception": error} if error is not None else {"return_value": value}
        return await self.step(lambda snapshot: snapshot.resume(result))

    def dump(self) -> bytes:
        """The waiting program as bytes (its worker can then be released)."""
        return bytes(self._snapshot.dump())

    async def close(self) -> None:
        if not self._closed:
            self._closed = True
            await asyncio.to_thread(self.session.__exit__, None, None, None)


class _HostFunction:
    """Placeholder resolved by name: calling it suspends the program as an external call."""

    def __init__(self, name: str) -> None:
        self.__name__ = name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:  # never run: the driver answers
        raise AssertionError("answered by the driver")


def _failed(kind: str, exc: Any) -> Failed:
    text = str(exc.display("type-msg"))
    error_type, _, message = text.partition(": ")
    frames = [f for f in exc.traceback() if f.filename == _PROGRAM]
    frame = frames[-1] if frames else None
    limited = error_type == "RecursionError" or (
        error_type in ("TimeoutError", "MemoryError") and "limit" in message
    )
    if kind == "runtime" and limited:
        kind = "limit"
    return Failed(
        kind,
        error_type,
        message,
        line=frame.line if frame is not None else None,
        source=frame.source_line if frame is not None else None,
    )

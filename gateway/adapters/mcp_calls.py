"""Tool calls in flight: progress while they run, and a stop when the client cancels one.

A call that runs longer than a second reports progress every second, when the client gave a
progress token (`_meta.progressToken`); the notifications tell a client with a short timeout that
the call is alive. Over stateless HTTP they travel on the call's own response, which is then an SSE
stream (the client must accept `text/event-stream`; calls without a token stay plain JSON).

Cancelling: over stdio and in an HTTP session the SDK stops the call's handler itself (request
ids are the session's own, so the guard leaves such a cancel to it). Over stateless HTTP the
`notifications/cancelled` arrives in a request of its own, so the calls running in this process
are kept by (caller, request id) and the cancel stops the matching one: a cancel from another
caller stops nothing. The tool's coroutine is cancelled at its next await (a handler running in a
worker thread finishes in the background; its result is dropped).
"""

from __future__ import annotations

import weakref
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import anyio
from mcp.server import Server

PROGRESS_AFTER_SECONDS = 1.0
"""A call still running this long starts reporting progress, and again at each such interval."""

REQUEST_CANCELLED = -32800
"""The error a cancelled call's own request is answered with over HTTP, where it must be answered."""

T = TypeVar("T")

_RUNNING: weakref.WeakKeyDictionary[Server[Any], RunningCalls] = weakref.WeakKeyDictionary()


def register(server: Server[Any], running: RunningCalls) -> None:
    """Record `running` as the calls of `server`, for its HTTP application to cancel (`running_calls`)."""
    _RUNNING[server] = running


def running_calls(server: Server[Any]) -> RunningCalls | None:
    """The calls `register` recorded for `server`, if any."""
    return _RUNNING.get(server)


class RunningCalls:
    """The tool calls running in this process, by (caller, request id), so a cancel can stop one.

    Args:
        caller: names the current caller (the principal the request's credentials map to).
    """

    def __init__(self, caller: Callable[[], str]) -> None:
        self._caller = caller
        self._scopes: dict[tuple[str, str], anyio.CancelScope] = {}

    @contextmanager
    def track(self, request_id: Any, caller: str | None = None) -> Iterator[anyio.CancelScope]:
        """Run the body as the caller's call `request_id`; `cancel` stops it (`cancelled_caught`).

        `caller`: the current caller's name, when known already (else asked for).
        """
        key = (self._caller() if caller is None else caller, repr(request_id))
        scope = anyio.CancelScope()
        self._scopes[key] = scope
        try:
            with scope:
                yield scope
        finally:
            if self._scopes.get(key) is scope:
                del self._scopes[key]

    def cancel(self, request_id: Any) -> bool:
        """Stop the current caller's call `request_id`; False when no such call is running here."""
        scope = self._scopes.get((self._caller(), repr(request_id)))
        if scope is None:
            return False
        scope.cancel()
        return True


async def with_progress(
    work: Callable[[], Awaitable[T]], report: Callable[[float, str], Awaitable[None]] | None
) -> T:
    """Await `work`, calling `report(n, message)` each second from the first on, while it runs."""
    if report is None:
        return await work()
    done: list[T] = []
    failed: list[Exception] = []

    async def beat() -> None:
        elapsed = 0
        while True:
            await anyio.sleep(PROGRESS_AFTER_SECONDS)
            elapsed += 1
            await report(float(elapsed), f"running for {elapsed} s")

    async with anyio.create_task_group() as tg:
        tg.start_soon(beat)
        try:
            done.append(await work())
        except Exception as exc:  # raised as it is below, not wrapped in a task group's ExceptionGroup
            failed.append(exc)
        tg.cancel_scope.cancel()
    if failed:
        raise failed[0]
    return done[0]

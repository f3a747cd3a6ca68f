"""Calls in flight to one API: a few at once, in threads of the entry's own.

The engine runs synchronous handlers in asyncio's default executor, min(32, CPUs + 4) threads shared
by every tool: six calls to one API that trickled its answers held them all, and the next calendar
call waited for one to end. Each entry's calls therefore run in threads of its own, at most
`max_in_flight` at once; one more is refused at once as busy (the model is told to try again later)
rather than queued behind the slow ones. A slot is held until the request's thread is done, not only
until the model stops waiting; the exchange's deadline (`deadline.py`) bounds how long that is.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from ..errors import ToolFailed


class Lane:
    """At most `limit` calls of one entry at once, each in one of the lane's `limit` threads."""

    def __init__(self, title: str, limit: int) -> None:
        self.title = title
        self.limit = limit
        self._slots = threading.BoundedSemaphore(limit)
        self._threads = ThreadPoolExecutor(max_workers=limit, thread_name_prefix="openapi")

    async def run(self, func: Callable[..., Any], *args: Any) -> Any:
        """`func(*args)` in one of the lane's threads.

        Raises:
            ToolFailed: `unavailable` when `limit` calls are in flight already.
        """
        if not self._slots.acquire(blocking=False):
            raise ToolFailed(
                "unavailable",
                f"{self.title} is busy: {self.limit} calls to it are still in flight; try again in a minute",
            )
        try:
            context = contextvars.copy_context()  # as asyncio.to_thread does
            future: Future[Any] = self._threads.submit(context.run, func, *args)
        except BaseException:
            self._slots.release()
            raise
        future.add_done_callback(lambda _: self._slots.release())
        return await asyncio.wrap_future(future)

    def close(self) -> None:
        self._threads.shutdown(wait=False, cancel_futures=True)

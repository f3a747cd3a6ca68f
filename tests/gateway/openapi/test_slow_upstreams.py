"""A slow API ends its calls at their deadline and cannot starve other tools.

The stub is a loopback TCP server that answers one byte at a time for as long as the client reads;
it records when the client hangs up. Waits are on events, with generous deadlines that only a
broken gateway reaches.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from gateway import Gateway, run_sync
from gateway.catalog import Catalog
from gateway.openapi import OpenApi
from gateway.settings.loading import OpenApiSettings

from ..plain_tools import greet
from .conftest import op, write_spec

GENEROUS = 60.0  # seconds: reached only when the gateway is broken


class Trickle:
    """Answers every request one byte per tick: the status line and headers too (`headers=True`),
    else a complete head and then an endless body."""

    def __init__(self, *, headers: bool) -> None:
        self.headers = headers
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.stop = threading.Event()
        self.hung_up = threading.Event()  # a client closed its connection while being answered
        self.in_flight = 0
        self.reached = threading.Event()  # `in_flight` reached `expected`
        self.expected = 1
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        with contextlib.suppress(OSError):
            while True:
                conn, _ = self.listener.accept()
                thread = threading.Thread(target=self._answer, args=(conn,), daemon=True)
                self._threads.append(thread)
                thread.start()

    def _answer(self, conn: socket.socket) -> None:
        with conn:
            received = b""
            while b"\r\n\r\n" not in received:
                chunk = conn.recv(4096)
                if not chunk:
                    return
                received += chunk
            with self._lock:
                self.in_flight += 1
                if self.in_flight >= self.expected:
                    self.reached.set()
            head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000000\r\n"
            if self.headers:
                stream = iter(head + b"X-Slow: " + b"a" * 100_000_000)
            else:
                conn.sendall(head + b"\r\n")
                stream = iter(b'{"rows": "' + b"a" * 100_000_000)
            try:
                while not self.stop.wait(0.02):
                    conn.sendall(bytes([next(stream)]))
            except OSError:
                self.hung_up.set()

    def close(self) -> None:
        self.stop.set()
        self.listener.close()
        for thread in self._threads:
            thread.join(GENEROUS)


@pytest.fixture
def body_trickle() -> Iterator[Trickle]:
    stub = Trickle(headers=False)
    yield stub
    stub.close()


def make(tmp_path: Path, url: str, **settings: Any) -> OpenApi:
    doc = {
        "openapi": "3.0.3",
        "info": {"title": "Slow API"},
        "servers": [{"url": url}],
        "paths": {"/rows": {"get": op("listRows")}},
    }
    return OpenApi(OpenApiSettings(name="slow", spec=write_spec(tmp_path, doc), **settings), None)


@pytest.mark.parametrize("headers", [False, True], ids=["trickled-body", "trickled-headers"])
def test_a_trickling_answer_ends_at_the_deadline_and_its_connection_is_closed(
    tmp_path: Path, headers: bool
) -> None:
    stub = Trickle(headers=headers)
    try:
        api = make(tmp_path, stub.url, timeout=1.0)
        gw = Gateway(Catalog(api.definitions()))
        # closed without joining its threads: on a gateway whose reads never end, the test fails, not hangs
        loop = asyncio.new_event_loop()
        try:
            result = loop.run_until_complete(gw.invoke("slow_list_rows", {}))
        finally:
            loop.close()
        assert result.error is not None and result.error.code == "timeout"
        assert "did not answer within 1 seconds" in result.error.message
        assert stub.hung_up.wait(GENEROUS)  # the gateway stopped reading: its work ended
    finally:
        stub.close()


def flood(tmp_path: Path, stub: Trickle, *, calls: int, in_flight: int) -> tuple[list[Any], Any]:
    """`calls` slow calls at once to an API that admits `in_flight`; then a call of another (sync)
    tool while they hang. Returns the slow calls that ended before the API was let go, and the quick one."""
    api = make(tmp_path, stub.url, timeout=GENEROUS, max_in_flight=in_flight)
    gw = Gateway(Catalog([greet, *api.definitions()]), default_timeout=GENEROUS)
    stub.expected = min(calls, in_flight)
    waiter = ThreadPoolExecutor(1)  # the test's own thread: the default executor is what is at stake

    async def scenario() -> tuple[list[Any], Any]:
        slow = [asyncio.create_task(gw.invoke("slow_list_rows", {})) for _ in range(calls)]
        assert await asyncio.get_running_loop().run_in_executor(waiter, stub.reached.wait, GENEROUS)
        quick = await asyncio.wait_for(gw.invoke("greet", {"name": "Ada"}), GENEROUS)
        pending = set(slow)
        while len(pending) > stub.expected:  # the refused ones end without waiting for those in flight
            done, pending = await asyncio.wait(pending, timeout=GENEROUS, return_when=asyncio.FIRST_COMPLETED)
            assert done
        ended = [t for t in slow if t.done()]
        stub.stop.set()  # those in flight end (their answers stop short)
        await asyncio.gather(*slow)
        return [t.result() for t in ended], quick

    try:
        return run_sync(scenario())
    finally:
        waiter.shutdown()
        api.close()


def test_calls_past_the_in_flight_limit_are_refused_as_busy_and_other_tools_still_run(
    tmp_path: Path, body_trickle: Trickle
) -> None:
    busy, quick = flood(tmp_path, body_trickle, calls=8, in_flight=2)
    assert quick.status == "ok" and quick.output == "Hello, Ada."
    assert len(busy) == 6 and body_trickle.in_flight == 2
    for result in busy:
        assert result.error is not None and result.error.code == "unavailable"
        assert (
            result.error.message
            == "Slow API is busy: 2 calls to it are still in flight; try again in a minute"
        )


def test_more_slow_calls_in_flight_than_the_default_executor_has_threads_do_not_delay_another_tool(
    tmp_path: Path, body_trickle: Trickle
) -> None:
    calls = min(32, (os.cpu_count() or 1) + 4) + 2  # asyncio.to_thread's threads, and two more
    ended, quick = flood(tmp_path, body_trickle, calls=calls, in_flight=calls)
    assert quick.status == "ok" and ended == [] and body_trickle.in_flight == calls

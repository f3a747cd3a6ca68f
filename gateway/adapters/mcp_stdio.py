"""The MCP server's stdio transport: every line checked first, and every request read answered.

The SDK's stdio transport drops a line it cannot parse, and when stdin ends it cancels the calls
still running: a client that writes its requests and closes its end (`... | gateway serve`, a
script) loses the last answers. Here a malformed line is answered (`jsonrpc_checks.check`), and at
the end of stdin the read side stays open until every request read has its answer (for at most
`DRAIN_SECONDS`: a call waiting on the client, an elicitation, can get no answer from a client that
left).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pydantic_core
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage

from .jsonrpc_checks import check, is_response

DRAIN_SECONDS = 120.0
"""At the end of stdin, how long the calls still running may take to be answered."""


@asynccontextmanager
async def checked_stdio() -> AsyncIterator[tuple[Any, Any]]:
    """The SDK's stdio transport, every line checked, every request read answered before it ends.

    Like the SDK's own, it moves the wire off fd 0 (which then reads the null device), so a tool's
    child process never reads a client's messages.
    """
    wire = os.dup(0)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    lines = anyio.wrap_file(os.fdopen(wire, "r", encoding="utf-8", errors="replace"))
    answers: list[_Answering] = []  # the write stream, once the SDK has made it
    waiting = _Waiting()

    async def checked() -> AsyncIterator[str]:
        async for line in lines:
            if not line.strip():
                continue
            error = check(line)
            if error is None:
                waiting.read(line)
                yield line
            elif answers and not is_response(line):  # a response is never answered, even a broken one
                await answers[0].send(SessionMessage(error))
        await waiting.answered(DRAIN_SECONDS)  # stdin ended: the calls read are answered first

    try:
        stdin: Any = _Lines(checked())  # read as lines only, which is all `stdio_server` does with it
        async with stdio_server(stdin=stdin) as (read_stream, write_stream):
            answering = _Answering(write_stream, waiting)
            answers.append(answering)
            yield read_stream, answering
    finally:
        await lines.aclose()


class _Waiting:
    """The ids of the requests read and not yet answered."""

    def __init__(self) -> None:
        self._ids: set[str | int] = set()
        self._changed = anyio.Event()

    def read(self, line: str) -> None:
        message = pydantic_core.from_json(line)  # checked: one JSON-RPC object
        if isinstance(message, dict) and "method" in message and "id" in message:
            self._ids.add(message["id"])

    def sent(self, message: SessionMessage) -> None:
        root: Any = getattr(message.message, "root", message.message)
        answered = None if getattr(root, "method", None) is not None else getattr(root, "id", None)
        if answered is not None and answered in self._ids:
            self._ids.discard(answered)
            self._changed.set()

    async def answered(self, seconds: float) -> None:
        with anyio.move_on_after(seconds):
            while self._ids:
                await self._changed.wait()
                self._changed = anyio.Event()


class _Answering:
    """The SDK's write stream, noting each response as it is sent."""

    def __init__(self, stream: Any, waiting: _Waiting) -> None:
        self._stream = stream
        self._waiting = waiting

    async def send(self, message: SessionMessage) -> None:
        await self._stream.send(message)
        self._waiting.sent(message)

    async def __aenter__(self) -> _Answering:
        await self._stream.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> Any:
        return await self._stream.__aexit__(*exc)

    def __getattr__(self, name: str) -> Any:  # aclose, clone, statistics, ...
        return getattr(self._stream, name)


class _Lines:
    """An async iterable of lines, as `stdio_server` reads its `stdin`."""

    def __init__(self, lines: AsyncIterator[str]) -> None:
        self._lines = lines

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines

"""The bytes an MCP client sends, captured once and replayed by a light HTTP/1.1 client.

A load benchmark driven by the SDK's own clients measures the clients: on two cores they spend
more CPU than the server they load. Here the real SDK client (`mcp.Client`) talks to the server
once through a recording loopback proxy (`capture`); then each `Replayer` opens one keep-alive
connection and sends exactly those requests again (the hand-shake, if any, once; then the
`tools/call` over and over), changing only what must change: the JSON-RPC id, the session id the
server handed out, and the Content-Length that follows from them.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

SESSION_HEADER = b"mcp-session-id"
CALL_SECONDS = 30.0  # a request unanswered this long counts as failed, and the client stops


@dataclass(frozen=True)
class Request:
    """One HTTP request as the client sent it: its head (request line and headers) and body."""

    method: bytes
    head: list[tuple[bytes, bytes]]
    target: bytes
    body: bytes

    @property
    def message(self) -> dict[str, Any]:
        return json.loads(self.body) if self.body else {}

    def encode(self, *, body: bytes | None = None, session: bytes | None = None) -> bytes:
        """The request again, with `body` (its Content-Length to match) and the session id given."""
        body = self.body if body is None else body
        lines = [self.method + b" " + self.target + b" HTTP/1.1"]
        for name, value in self.head:
            low = name.lower()
            if low == b"content-length":
                lines.append(name + b": " + str(len(body)).encode())
            elif low == SESSION_HEADER and session is not None:
                lines.append(name + b": " + session)
            else:
                lines.append(name + b": " + value)
        if session is not None and not any(n.lower() == SESSION_HEADER for n, _ in self.head):
            lines.append(b"Mcp-Session-Id: " + session)
        return b"\r\n".join(lines) + b"\r\n\r\n" + body


def parse_requests(stream: bytes) -> list[Request]:
    """The HTTP/1.1 requests of one connection's client-to-server bytes (bodies by Content-Length)."""
    out: list[Request] = []
    while stream:
        end = stream.index(b"\r\n\r\n")
        lines = stream[:end].split(b"\r\n")
        method, target, _ = lines[0].split(b" ", 2)
        head = [(n.strip(), v.strip()) for n, v in (line.split(b":", 1) for line in lines[1:])]
        sizes = [int(v) for n, v in head if n.lower() == b"content-length"]
        if any(n.lower() == b"transfer-encoding" for n, _ in head):
            raise ValueError("a chunked request body: the replayer sends Content-Length bodies only")
        size = sizes[0] if sizes else 0
        out.append(Request(method, head, target, stream[end + 4 : end + 4 + size]))
        stream = stream[end + 4 + size :]
    return out


@asynccontextmanager
async def recording_proxy(upstream: str) -> AsyncIterator[tuple[str, list[bytearray]]]:
    """A loopback proxy to `upstream` (an http:// URL) that keeps what each connection sent."""
    target = urlsplit(upstream)
    sent: list[bytearray] = []

    async def pipe(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter, keep: bytearray | None
    ) -> None:
        try:
            while data := await reader.read(65536):
                if keep is not None:
                    keep += data
                writer.write(data)
                await writer.drain()
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            writer.close()

    async def serve(client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        server_r, server_w = await asyncio.open_connection(target.hostname, target.port)
        keep = bytearray()
        sent.append(keep)
        await asyncio.gather(pipe(client_r, server_w, keep), pipe(server_r, client_w, None))

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}{target.path}", sent
    finally:
        server.close()


@dataclass(frozen=True)
class Script:
    """What one client sends: the hand-shake (each request once) and the call repeated."""

    setup: list[Request]
    call: Request
    sessions: bool  # the server handed out a session id, which later requests carry
    teardown: list[Request] = field(default_factory=list)  # what ends the session (DELETE), if any


async def capture(url: str, mode: str, arguments: dict[str, Any]) -> Script:
    """Run the real SDK client once (connect, one `invoke_tool` call) and keep what it sent."""
    from mcp import Client

    async with recording_proxy(url) as (proxied, sent):
        async with Client(proxied, mode=mode) as client:
            result = await client.call_tool("invoke_tool", arguments)
            if result.is_error:
                raise SystemExit(f"the SDK client's capture call failed: {result.content}")
        await asyncio.sleep(0.05)  # the last bytes through the proxy
    every = [r for stream in sent for r in parse_requests(bytes(stream))]
    requests = [r for r in every if r.method == b"POST"]  # a GET opens the server's stream: not replayed
    calls = [i for i, r in enumerate(requests) if r.message.get("method") == "tools/call"]
    if len(calls) != 1:
        raise SystemExit(f"expected one tools/call in what the SDK client sent, saw {len(calls)}")
    setup = requests[: calls[0]]
    sessions = any(n.lower() == SESSION_HEADER for n, _ in requests[calls[0]].head)
    return Script(setup, requests[calls[0]], sessions, [r for r in every if r.method == b"DELETE"])


@dataclass
class Response:
    status: int
    headers: dict[bytes, bytes]
    body: bytes


async def read_response(reader: asyncio.StreamReader) -> Response:
    """One HTTP/1.1 response: a Content-Length body, or a chunked one (an SSE stream) to its end."""
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head[:-4].split(b"\r\n")
    status = int(lines[0].split(b" ", 2)[1])
    headers = {n.strip().lower(): v.strip() for n, v in (line.split(b":", 1) for line in lines[1:])}
    if b"content-length" in headers:
        return Response(status, headers, await reader.readexactly(int(headers[b"content-length"])))
    if headers.get(b"transfer-encoding", b"").lower() == b"chunked":
        body = bytearray()
        while True:
            size = int((await reader.readuntil(b"\r\n"))[:-2].split(b";")[0], 16)
            if size == 0:
                await reader.readuntil(b"\r\n")
                return Response(status, headers, bytes(body))
            body += await reader.readexactly(size)
            await reader.readexactly(2)
    return Response(status, headers, b"")


_ID = re.compile(rb'"id"\s*:\s*(?:\d+|"[^"]*")')


def with_id(body: bytes, n: int) -> bytes:
    """The JSON-RPC message with its id set to `n` (the first id in it: the request's own)."""
    return _ID.sub(b'"id":' + str(n).encode(), body, count=1)


def failure(response: Response) -> str | None:
    """Why a tools/call answer is not a success (None: it is)."""
    if response.status != 200:
        return f"HTTP {response.status}"
    text = response.body
    if b'"result"' not in text:
        return "no result: " + text[:200].decode(errors="replace")
    if b'"isError":true' in text.replace(b" ", b""):
        return "an error result: " + text[:200].decode(errors="replace")
    return None


@dataclass
class Replayer:
    """One client: its own keep-alive connection, the script's hand-shake once, then calls."""

    url: str
    script: Script
    reader: asyncio.StreamReader | None = None
    writer: asyncio.StreamWriter | None = None
    session: bytes | None = None
    next_id: int = 1000
    broken: bool = False

    async def open(self) -> None:
        await self._connect()
        for request in self.script.setup:
            response = await asyncio.wait_for(self._send(request, request.body), CALL_SECONDS)
            if response.status >= 400:
                raise SystemExit(f"the hand-shake failed: HTTP {response.status} {response.body[:200]!r}")
            self.session = response.headers.get(SESSION_HEADER, self.session)

    async def call(self) -> str | None:
        """Send the call once more; why it failed, or None."""
        self.next_id += 1
        body = with_id(self.script.call.body, self.next_id)
        return failure(await asyncio.wait_for(self._send(self.script.call, body), CALL_SECONDS))

    async def _connect(self) -> None:
        target = urlsplit(self.url)
        self.reader, self.writer = await asyncio.open_connection(target.hostname, target.port)

    async def _send(self, request: Request, body: bytes) -> Response:
        if self.reader is None or self.reader.at_eof():  # the server closed it while idle: as any
            await self._connect()  # HTTP client does, a new connection, the session kept
        assert self.reader is not None and self.writer is not None
        self.writer.write(request.encode(body=body, session=self.session if self.script.sessions else None))
        await self.writer.drain()
        return await read_response(self.reader)

    async def close(self) -> None:
        """End the session as the SDK client does (its DELETE), then the connection."""
        if self.writer is not None and self.session is not None:
            for request in self.script.teardown:
                with suppress(ConnectionError, asyncio.IncompleteReadError, asyncio.TimeoutError):
                    await asyncio.wait_for(self._send(request, request.body), CALL_SECONDS)
        if self.writer is not None:
            self.writer.close()
            with suppress(ConnectionError):
                await self.writer.wait_closed()

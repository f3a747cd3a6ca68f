"""One fronted MCP server's connection, driven from the connector's background loop.

Started (stdio) or connected (Streamable HTTP) on demand, kept while used, re-listed on
`notifications/tools/list_changed`, and ended when the server dies so the next call starts it
again. Results are mapped to gateway output here, and failures to `ToolFailed` with the
server's secrets replaced by `***`.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import httpx2
from mcp import Client, StdioServerParameters, stdio_client, types
from mcp.client import Transport
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp.types.version import MODERN_PROTOCOL_VERSIONS

from ..errors import ToolFailed
from ..files import PRIVATE_FILE, private_dir
from ..fronting.config import ServerSettings
from ..fronting.front import ToolsListener, UpstreamTool
from ..fronting.untrusted import clean_text
from ..names import to_name

log = logging.getLogger("gateway.mcp_client")

START_TIMEOUT_SECONDS = 30.0
MAX_LIST_PAGES = 50
_CLIENT_INFO = types.Implementation(name="metatool-gateway", version="0.1.0")


class MCPConnection:
    """One server, driven from the background loop only."""

    def __init__(
        self,
        name: str,
        settings: ServerSettings,
        on_tools: ToolsListener,
        log_dir: Path,
        group: Callable[[], anyio.abc.TaskGroup],
    ) -> None:
        self.name = name
        self._group = group
        self.settings = settings
        self.up = False
        self._on_tools = on_tools
        self._log_path = log_dir / f"{to_name(name)}.stderr.log"
        self._secrets = settings.secrets()
        self._client: Client | None = None
        self._done: anyio.Event | None = None
        self._start_lock: anyio.Lock | None = None
        self._in_flight = 0
        self._last_used = 0.0
        self._dirty = False
        self._refreshing = False

    async def fetch(self) -> list[UpstreamTool]:
        with self._in_use():
            return await list_tools(await self.ensure(relist=False))

    async def ensure(self, *, relist: bool = True) -> Client:
        """The live client; starts or connects to the server first when needed."""
        self._start_lock = self._start_lock or anyio.Lock()
        with self._in_use():
            async with self._start_lock:
                if self._client is not None and self._done is not None and not self._done.is_set():
                    return self._client
                try:
                    with anyio.fail_after(START_TIMEOUT_SECONDS):
                        client: Client = await self._group().start(self._run)
                except Exception as exc:
                    where = f"; its own output is in {self._log_path}" if self.settings.command else ""
                    log.warning(
                        "MCP server %s could not be started or reached: %s%s",
                        self.name,
                        self._describe(exc),
                        where,
                    )
                    raise ToolFailed("unavailable", f"The {self.name} server could not be reached.") from None
                if relist:
                    # A fresh connection re-lists: a restarted server may have changed its tools.
                    await self._relist(client)
                return client

    async def call(self, tool: str, arguments: dict[str, Any]) -> Any:
        with self._in_use():
            client = await self.ensure()
            try:
                result = await client.call_tool(tool, arguments)
            except anyio.get_cancelled_exc_class():
                if self.settings.url is not None:
                    self.stop()  # an HTTP call that hangs may mean a dead server: reconnect next time
                raise
            except MCPError as exc:
                if exc.code != types.CONNECTION_CLOSED:
                    raise ToolFailed(
                        "invalid", f"The {self.name} server refused the call: {self._for_model(str(exc))}"
                    ) from None
                self.stop()
                raise ToolFailed(
                    "unavailable",
                    f"The {self.name} server stopped during the call; it is started again on the next call.",
                ) from None
            except Exception as exc:
                log.warning("MCP server %s failed a call to %s: %s", self.name, tool, self._describe(exc))
                self.stop()
                raise ToolFailed("unavailable", f"The {self.name} server could not be reached.") from None
        return self._output(tool, result)

    @contextlib.contextmanager
    def _in_use(self) -> Iterator[None]:
        """Counts as use for the idle timer: a server is never stopped under a call."""
        self._in_flight += 1
        try:
            yield
        finally:
            self._in_flight -= 1
            self._last_used = anyio.current_time()

    def stop(self) -> None:
        if self._done is not None:
            self._done.set()

    # -- one connection's life ---------------------------------------------------------------

    async def _run(self, *, task_status: anyio.abc.TaskStatus[Client] = anyio.TASK_STATUS_IGNORED) -> None:
        done = anyio.Event()
        client: Client | None = None
        try:
            async with contextlib.AsyncExitStack() as stack:
                transport = _watched(await self._transport(stack), done)
                client = Client(
                    transport,
                    mode="legacy" if self.settings.protocol == "legacy" else "auto",
                    message_handler=self._on_message,
                    client_info=_CLIENT_INFO,
                    cache=None,
                )
                await stack.enter_async_context(client)
                async with anyio.create_task_group() as tasks:
                    if client.protocol_version in MODERN_PROTOCOL_VERSIONS:
                        # Subscribed before the first call, so no change can slip by unnoticed.
                        await tasks.start(self._listen, client, done)
                    self._client, self._done, self.up = client, done, True
                    self._last_used = anyio.current_time()
                    task_status.started(client)
                    await self._wait_while_used(done)
                    tasks.cancel_scope.cancel()
        except Exception as exc:
            if client is None or self._client is not client:
                raise  # before started(): the caller of start() gets it
            log.warning("MCP server %s connection ended: %s", self.name, self._describe(exc))
        finally:
            if client is not None and self._client is client:
                self._client, self.up = None, False

    async def _transport(self, stack: contextlib.AsyncExitStack) -> Transport:
        s = self.settings
        if s.command is not None:
            private_dir(self._log_path.parent)
            # The server's stderr may carry what it works on: its owner's to read only.
            fd = os.open(self._log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, PRIVATE_FILE)
            errlog = stack.enter_context(os.fdopen(fd, "a", encoding="utf-8"))
            params = StdioServerParameters(command=s.command, args=s.args, env=s.env or None, cwd=s.cwd)
            return stdio_client(params, errlog=errlog)
        assert s.url is not None
        http = await stack.enter_async_context(
            httpx2.AsyncClient(headers=s.headers, timeout=httpx2.Timeout(30.0, read=300.0))
        )
        return streamable_http_client(s.url, http_client=http)

    async def _wait_while_used(self, done: anyio.Event) -> None:
        idle = self.settings.idle_timeout
        while not done.is_set():
            with anyio.move_on_after(idle):
                await done.wait()
            if self._in_flight == 0 and anyio.current_time() - self._last_used >= idle:
                return

    async def _listen(
        self,
        client: Client,
        done: anyio.Event,
        *,
        task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        # 2026-07-28 delivers change notifications only on a listen stream; its events also reach
        # the message handler, which does the work.
        listening = False
        try:
            async with client.listen(tools_list_changed=True) as subscription:
                listening = True
                task_status.started()
                async for _ in subscription:
                    pass
        except Exception as exc:
            log.info("MCP server %s: change subscription ended (%s)", self.name, type(exc).__name__)
        if listening:
            done.set()  # an open stream ends only with its connection: reconnect on the next call
        else:
            task_status.started()  # a server without subscriptions still serves calls

    async def _on_message(self, message: types.ServerNotification | Exception) -> None:
        if not isinstance(message, types.ToolListChangedNotification):
            return
        self._dirty = True
        if not self._refreshing:
            self._refreshing = True
            self._group().start_soon(self._refresh)

    async def _refresh(self) -> None:
        try:
            while self._dirty and self._client is not None:
                self._dirty = False
                await self._relist(self._client)
        finally:
            self._refreshing = False

    async def _relist(self, client: Client) -> None:
        try:
            tools = await list_tools(client)
            self._on_tools(self.name, tools)
        except Exception as exc:  # a failed refresh keeps the tools we have
            log.warning("MCP server %s: could not re-list its tools: %s", self.name, self._describe(exc))

    # -- results and errors --------------------------------------------------------------------

    def _output(self, tool: str, result: types.CallToolResult) -> Any:
        if result.is_error:
            text = " ".join(b.text for b in result.content if isinstance(b, types.TextContent))
            raise ToolFailed("invalid", self._for_model(text) or f"{tool} reported an error.")
        if result.structured_content is not None:
            return result.structured_content
        items = [_content(block) for block in result.content]
        if all(isinstance(item, str) for item in items):
            return {"text": "\n".join(str(item) for item in items)}
        return {"content": items}

    def _for_model(self, text: str) -> str:
        """A server's own words are untrusted, like its descriptions."""
        return clean_text(self._redact(text), 400).text

    def _redact(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, "***")
        return text

    def _describe(self, exc: BaseException) -> str:
        while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
            exc = exc.exceptions[0]
        return self._redact(f"{type(exc).__name__}: {exc}")[:300]


@contextlib.asynccontextmanager
async def _watched(transport: Transport, done: anyio.Event) -> AsyncIterator[tuple[Any, Any]]:
    """The transport's streams; `done` is set when the server's side ends (a stdio server died)."""
    async with transport as (read, write):
        yield _WatchedRead(read, done), write


class _WatchedRead:
    def __init__(self, inner: Any, done: anyio.Event) -> None:
        self._inner = inner
        self._done = done

    @property
    def last_context(self) -> Any:
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Any:
        try:
            return await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._done.set()
            raise

    def __aiter__(self) -> _WatchedRead:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _WatchedRead:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


async def list_tools(client: Client) -> list[UpstreamTool]:
    tools: list[UpstreamTool] = []
    cursor: str | None = None
    for _ in range(MAX_LIST_PAGES):
        page = await client.list_tools(cursor=cursor)
        tools.extend(_upstream(t) for t in page.tools)
        cursor = page.next_cursor
        if not cursor:
            break
    return tools


def _upstream(tool: types.Tool) -> UpstreamTool:
    hints = tool.annotations
    return UpstreamTool(
        name=tool.name,
        input_schema=tool.input_schema,
        description=tool.description or "",
        title=tool.title or (hints.title if hints else None),
        read_only_hint=hints.read_only_hint if hints else None,
        destructive_hint=hints.destructive_hint if hints else None,
    )


def _content(block: types.ContentBlock) -> Any:
    if isinstance(block, types.TextContent):
        return block.text
    if isinstance(block, types.ImageContent | types.AudioContent):
        return {"type": block.type, "mime_type": block.mime_type, "note": "binary content is not shown"}
    if isinstance(block, types.ResourceLink):
        return {"type": "resource_link", "uri": str(block.uri), "name": block.name}
    resource = block.resource
    if isinstance(resource, types.TextResourceContents):
        return {"type": "resource", "uri": str(resource.uri), "text": resource.text}
    return {"type": "resource", "uri": str(resource.uri), "mime_type": resource.mime_type}

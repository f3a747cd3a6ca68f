"""Fronting MCP servers with the official SDK: stdio or Streamable HTTP, started on first use.

Every connection lives on one background event loop (an anyio blocking portal), so it
outlives any single call: the gateway may run its calls with `run_sync` (a fresh loop each
time), inside `gateway serve`, or from worker threads. A stdio server is started on the
first call that needs it, kept while it is used (`idle_timeout`), and started again after it
died; an HTTP server is reconnected the same way. `notifications/tools/list_changed` (or, on
2026-07-28 connections, a `subscriptions/listen` event) re-lists the server's tools.

Header and environment values are secrets: they are never logged nor shown to the model.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Awaitable, Callable, Mapping
from concurrent.futures import Future
from pathlib import Path
from typing import Any, TypeVar

import anyio
import anyio.abc
from anyio.from_thread import BlockingPortal, start_blocking_portal

from ..catalog import Catalog
from ..errors import ToolFailed, UserError
from ..fronting.config import ServerSettings, load_front_config
from ..fronting.front import Front, ToolsListener, UpstreamTool
from ..policy import Policy
from ..toolset import ProviderOptions, Toolset
from .mcp_connection import MCPConnection

T = TypeVar("T")

STOP_TIMEOUT_SECONDS = 15.0


def provide(options: ProviderOptions) -> Toolset:
    """The `mcp` catalog: every server of the fronting file named by `options.extra["mcp_servers"]`.

    `extra` may also carry `catalog` (the live catalog the gateway serves, so list_changed
    refreshes reach it), `policy` (deny rules applied before indexing) and `mcp_cache_dir`.
    """
    path = options.extra.get("mcp_servers")
    if not path:
        raise UserError("the 'mcp' catalog needs a fronting file: set mcp_servers (or GATEWAY_MCP_SERVERS)")
    config = load_front_config(Path(path))
    cache_dir = Path(options.extra.get("mcp_cache_dir") or options.data_dir / "mcp")
    live = options.extra.get("catalog")
    policy = options.extra.get("policy")
    front = Front(
        config,
        catalog=live if isinstance(live, Catalog) else Catalog(),
        cache_dir=cache_dir,
        policy=policy if isinstance(policy, Policy) else None,
        connector=lambda servers, on_tools: MCPConnector(servers, on_tools, log_dir=cache_dir / "logs"),
    )
    try:
        front.load()
    except BaseException:
        front.close()
        raise
    # With a live catalog the tools are in it already; otherwise the host merges them (no refreshes).
    catalog = Catalog() if isinstance(live, Catalog) else front.catalog
    return Toolset(catalog=catalog, resources={Front: front}, close=front.close)


class MCPConnector:
    """The `Connector` for MCP servers: one background loop, one `MCPConnection` per server."""

    def __init__(
        self, servers: Mapping[str, ServerSettings], on_tools: ToolsListener, *, log_dir: Path
    ) -> None:
        self._connections = {
            name: MCPConnection(name, s, on_tools, log_dir, self._task_group) for name, s in servers.items()
        }
        self._lock = threading.Lock()
        self._portal: BlockingPortal | None = None
        self._exit: contextlib.ExitStack | None = None
        self._closed = False
        self._group: anyio.abc.TaskGroup | None = None
        self._stopping: anyio.Event | None = None
        self._stopped: anyio.Event | None = None

    def fetch_tools(self, server: str) -> list[UpstreamTool]:
        connection = self._connections[server]
        return self._get_portal().call(connection.fetch)

    async def connect(self, server: str) -> None:
        await self._in_loop(self._connections[server].ensure)

    async def call(self, server: str, tool: str, arguments: dict[str, Any]) -> Any:
        return await self._in_loop(self._connections[server].call, tool, arguments)

    def connected(self, server: str) -> bool:
        return self._connections[server].up

    def close(self) -> None:
        with self._lock:
            self._closed = True
            portal, exit_stack = self._portal, self._exit
            self._portal = self._exit = None
        if portal is None or exit_stack is None:
            return
        with exit_stack:
            portal.call(self._shutdown)

    # -- the background loop -----------------------------------------------------------

    def _get_portal(self) -> BlockingPortal:
        with self._lock:
            if self._closed:
                raise ToolFailed("unavailable", "The gateway is shutting down.")
            if self._portal is None:
                exit_stack = contextlib.ExitStack()
                portal = exit_stack.enter_context(start_blocking_portal("asyncio"))
                portal.start_task(self._supervise)
                self._portal, self._exit = portal, exit_stack
            return self._portal

    async def _in_loop(self, fn: Callable[..., Awaitable[T]], *args: Any) -> T:
        future: Future[T] = self._get_portal().start_task_soon(fn, *args)
        # Cancelling the caller (a gateway timeout) cancels the task in the loop too.
        return await asyncio.wrap_future(future)

    def _task_group(self) -> anyio.abc.TaskGroup:
        assert self._group is not None, "the supervisor runs before any connection"
        return self._group

    async def _supervise(
        self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        self._stopping, self._stopped = anyio.Event(), anyio.Event()
        try:
            async with anyio.create_task_group() as group:
                self._group = group
                task_status.started()
                await self._stopping.wait()
                for connection in self._connections.values():
                    connection.stop()
                # Leaving the group waits for every connection to wind down, within a bound.
                group.cancel_scope.deadline = anyio.current_time() + STOP_TIMEOUT_SECONDS
        finally:
            self._stopped.set()

    async def _shutdown(self) -> None:
        assert self._stopping is not None and self._stopped is not None
        self._stopping.set()
        await self._stopped.wait()

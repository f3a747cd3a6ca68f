"""A catalog for stopping the `gateway` program mid-work: one tool waits for ever, and so can loading.

Each says on stderr when it has started waiting, so a test sends SIGINT at a known point, not after
a sleep. The catalog is large enough (CACHE_MIN_TOOLS) for its search index to be cached on disk.
"""

from __future__ import annotations

import asyncio
import os
import sys
import threading
from typing import Any

from gateway import NoParams, ToolDefinition, tool
from gateway.search.index import CACHE_MIN_TOOLS

WAITING = "interrupting_tools: waiting"
STALL_LOADING = "INTERRUPTING_TOOLS_STALL_LOADING"
"""Set in the environment: the provider waits while loading (as a first Google catalog load takes long)."""
MANY = "INTERRUPTING_TOOLS_MANY"
"""Set in the environment to a number: that many filler tools, whose search index takes seconds to build."""


@tool(category="waiting", action="read", read_only=True)
async def wait_here(params: NoParams) -> dict[str, Any]:
    """Wait until the program is stopped."""
    print(WAITING, file=sys.stderr, flush=True)
    await asyncio.Event().wait()
    return {}


@tool(category="waiting", action="delete", examples=[{}])
def clear_everything(params: NoParams) -> dict[str, Any]:
    """Clear everything (destructive: asks first)."""
    return {"cleared": True}


def _filler(n: int) -> ToolDefinition:
    return ToolDefinition(
        name=f"filler_{n}",
        category=f"filler{n % 20}",
        action="read",
        verb="get",
        summary=f"Get filler record number {n}.",
        description=f"Get filler record number {n} from the filler store.",
        params=NoParams,
        handler=lambda p: None,
    )


def provide(options: Any) -> Any:
    from gateway import Catalog, Toolset

    if os.environ.get(STALL_LOADING):
        print(WAITING, file=sys.stderr, flush=True)
        threading.Event().wait()
    return Toolset(
        catalog=Catalog(
            [
                wait_here,
                clear_everything,
                *(_filler(n) for n in range(int(os.environ.get(MANY, CACHE_MIN_TOOLS)))),
            ]
        )
    )

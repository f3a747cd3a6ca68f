"""A catalog of one no-op async tool: what `benchmarks.mcp_load` invokes, so the figures are the
gateway's and its HTTP stack's, not a service's. Named in a config as "benchmarks.noop_catalog:provide"."""

from __future__ import annotations

from typing import Any

from gateway import Catalog, tool
from gateway.toolset import Toolset


@tool(category="bench", action="read", read_only=True, concurrency_safe=True)
async def bench_noop() -> dict[str, bool]:
    """Do nothing and say so."""
    return {"ok": True}


def provide(options: Any) -> Toolset:
    return Toolset(Catalog([bench_noop]))

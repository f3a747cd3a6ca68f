"""The tools `benchmarks.deployment` calls on its replicas: each leaves its mark in the audit log.

Named in a config as "benchmarks.deployment_catalog:provide". Nothing is done but answering, so the
fault test's figures are the deployment's: the router, the replicas, Redis.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from gateway import PARAMS_CONFIG, Catalog, tool
from gateway.toolset import Toolset


class Mark(BaseModel):
    """A call's own mark, so its audit line is found."""

    model_config = PARAMS_CONFIG
    mark: str = Field(max_length=64, description="Any text; kept in the audit line.")


@tool(category="deploy", action="read", read_only=True, concurrency_safe=True)
async def deploy_echo(params: Mark) -> dict[str, str]:
    """Answer with the mark."""
    return {"mark": params.mark}


@tool(category="deploy", action="read", read_only=True, concurrency_safe=True)
async def deploy_counted(params: Mark) -> dict[str, str]:
    """Answer with the mark; a quota counts these calls."""
    return {"mark": params.mark}


@tool(category="deploy", action="delete")
async def deploy_delete(params: Mark) -> dict[str, str]:
    """Delete the item named by the mark (destructive: it waits for a person's approval)."""
    return {"deleted": params.mark}


def provide(options: Any) -> Toolset:
    return Toolset(Catalog([deploy_echo, deploy_counted, deploy_delete]))

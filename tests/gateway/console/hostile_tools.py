"""A catalog with a tool whose description and summary carry markup meant to run in a browser."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from gateway import PARAMS_CONFIG, Catalog, Toolset, tool

PAYLOAD = '<script>window.__pwned = 1</script><img src="x" onerror="window.__pwned = 2">'


class Query(BaseModel):
    model_config = PARAMS_CONFIG
    text: str = Field(description=f"What to look up {PAYLOAD}")


@tool(category="hostile", action="read", read_only=True, description=f"Looks things up. {PAYLOAD}")
def hostile_lookup(params: Query) -> str:
    """Look things up <b>now</b> <script>window.__pwned = 3</script>."""
    return params.text


def provide(options: Any) -> Toolset:
    from ..sample_tools import ALL_TOOLS

    return Toolset(catalog=Catalog([*ALL_TOOLS, hostile_lookup]))

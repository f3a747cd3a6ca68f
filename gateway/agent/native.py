"""Native deferred loading: the client-side search tool that loads catalog tools on demand.

In this mode the model does not see the meta-tools. The provider's tool search loads
definitions (Anthropic `tool_reference` blocks, OpenAI `tool_search_output`), and the model
calls catalog tools by name, which the loop runs through `Gateway.invoke`.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from ..context import ToolContext
from ..definition import PARAMS_CONFIG, ToolDefinition
from ..discovery import MAX_DISCOVER_LIMIT
from ..engine import Gateway

SEARCH_TOOL_NAME = "search_tools"


class SearchToolParams(BaseModel):
    model_config = PARAMS_CONFIG

    query: str = Field(
        min_length=1,
        max_length=500,
        description="What you want to do, in a few words (a verb and an object).",
    )
    limit: int = Field(5, ge=1, le=10, description="How many tools to load at most.")


def search_tool(gateway: Gateway, deferred: frozenset[str]) -> ToolDefinition:
    """The search tool the gateway answers itself, with its own ranking, over the deferred tools."""

    async def search_tools(params: SearchToolParams, ctx: ToolContext) -> dict[str, Any]:
        found = gateway.discover(ctx.principal, query=params.query, limit=MAX_DISCOVER_LIMIT)
        assert "tools" in found  # a query (never empty: `min_length`) gets a page, not the overview
        names = [hit["name"] for hit in found["tools"] if hit["name"] in deferred]
        if names:
            return {"tools": names[: params.limit]}
        return {
            "tools": [],
            "message": "No tool matched.",
            "next_step": "Search again with other words: a verb and an object, e.g. 'delete event'.",
        }

    return ToolDefinition(
        name=SEARCH_TOOL_NAME,
        category="gateway",
        action="search",
        summary="Find and load tools from the catalog.",
        description=(
            "Search the tool catalog and load the matching tools so you can call them directly. Use it "
            "whenever you need a tool you do not have yet; never guess a tool name."
        ),
        params=SearchToolParams,
        handler=search_tools,
        read_only=True,
        concurrency_safe=True,
    )

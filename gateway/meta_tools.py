"""The three meta-tools, built by the same machinery as every other tool.

Their definitions are all the model sees. They never mention the catalog's contents,
so they stay byte-identical whatever is registered (prompt-cache friendly).
"""

from __future__ import annotations

import math
from collections.abc import Collection
from typing import Any, Protocol

from pydantic import BaseModel, Field

from .actions import ACTIONS
from .catalog import Catalog
from .context import Principal, ToolContext, ToolResult
from .definition import PARAMS_CONFIG, ToolDefinition

META_TOOL_NAMES = ("discover_tools", "get_tool_schema", "invoke_tool")

_ACTION_LIST = ", ".join(ACTIONS)


class DiscoverParams(BaseModel):
    model_config = PARAMS_CONFIG

    query: str | None = Field(None, max_length=500, description="What you want to do, in a few words.")
    categories: list[str] | None = Field(None, max_length=20, description="Only tools in these categories.")
    actions: list[str] | None = Field(None, max_length=8, description=f"Only these actions: {_ACTION_LIST}.")
    limit: int = Field(10, ge=1, le=50, description="Results per page.")
    cursor: str | None = Field(None, max_length=200, description="next_cursor from the previous page.")


class SchemaParams(BaseModel):
    model_config = PARAMS_CONFIG

    tool_name: str = Field(max_length=200, description="Exact name from discover_tools.")


class InvokeParams(BaseModel):
    model_config = PARAMS_CONFIG

    tool_name: str = Field(max_length=200, description="Exact name from discover_tools.")
    parameters: dict[str, Any] | str = Field(
        default_factory=dict, description="Arguments matching the tool's schema (object or JSON string)."
    )
    confirmation: str | None = Field(
        None, max_length=200, description="pending_id, only after the user approved the action."
    )


class Backend(Protocol):
    """What the meta-tools run on: the `Gateway` (named here so this module needs no engine)."""

    def discover(
        self,
        principal: Principal,
        *,
        query: str | None = None,
        categories: Collection[str] | None = None,
        actions: Collection[str] | None = None,
        limit: int = 10,
        cursor: str | None = None,
        session: str = ...,
    ) -> dict[str, Any]: ...

    def schema(self, principal: Principal, tool_name: str) -> dict[str, Any]: ...

    async def invoke(
        self,
        tool_name: str,
        parameters: Any = None,
        *,
        confirmation: str | None = None,
        context: ToolContext | None = None,
    ) -> ToolResult: ...


def build_meta_catalog(gateway: Backend) -> Catalog:
    """The meta-tools bound to one gateway."""

    async def discover_tools(params: DiscoverParams, ctx: ToolContext) -> dict[str, Any]:
        return gateway.discover(
            ctx.principal,
            query=params.query,
            categories=params.categories,
            actions=params.actions,
            limit=params.limit,
            cursor=params.cursor,
            session=ctx.session_id,
        )

    async def get_tool_schema(params: SchemaParams, ctx: ToolContext) -> dict[str, Any]:
        return gateway.schema(ctx.principal, params.tool_name)

    async def invoke_tool(params: InvokeParams, ctx: ToolContext) -> ToolResult:
        return await gateway.invoke(
            params.tool_name, params.parameters, confirmation=params.confirmation, context=ctx
        )

    return Catalog(
        [
            ToolDefinition(
                name="discover_tools",
                category="gateway",
                action="search",
                summary="Find tools in the catalog.",
                description=(
                    "Find tools by query, categories and/or actions. No arguments: an overview of categories "
                    "and actions. Never guess a tool name: discover, then get_tool_schema, then invoke_tool."
                ),
                params=DiscoverParams,
                handler=discover_tools,
                read_only=True,
                concurrency_safe=True,
            ),
            ToolDefinition(
                name="get_tool_schema",
                category="gateway",
                action="read",
                summary="Read one tool's parameters.",
                description=(
                    "Get a tool's description, parameter schema and an example. "
                    "Call before invoke_tool; never guess parameters."
                ),
                params=SchemaParams,
                handler=get_tool_schema,
                read_only=True,
                concurrency_safe=True,
            ),
            ToolDefinition(
                name="invoke_tool",
                category="gateway",
                action="execute",
                summary="Run one tool.",
                description=(
                    "Run a tool with parameters matching its schema. Errors say what to fix. Destructive "
                    "tools first return a pending_id: ask the user, and once they approve, call again "
                    "with confirmation set to it."
                ),
                params=InvokeParams,
                handler=invoke_tool,
                # The gate applies to the tool being invoked, not to invoke_tool itself.
                destructive=False,
                timeout=math.inf,
            ),
        ]
    )

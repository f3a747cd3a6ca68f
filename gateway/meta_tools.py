"""The three meta-tools, built by the same machinery as every other tool.

Their definitions are all the model sees. They never mention the catalog's contents,
so they stay byte-identical whatever is registered (prompt-cache friendly), and every conversation
pays for them: their words are few, and their schemas leave out what a model never needs to read
(limits only a runaway caller reaches, `additionalProperties`), which validation still enforces.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field

from .actions import ACTIONS
from .catalog import Catalog
from .context import Principal, ToolContext, ToolResult
from .definition import PARAMS_CONFIG, ToolDefinition
from .discovery import Overview, Page, SchemaAnswer

META_TOOL_NAMES = ("discover_tools", "get_tool_schema", "invoke_tool")

_ACTION_LIST = ", ".join(ACTIONS)


def _object_or_string(schema: dict[str, Any]) -> None:
    """An object or a JSON string, without the default `additionalProperties: true` spelled out."""
    schema["anyOf"] = [{"type": "object"}, {"type": "string"}]


def _unlisted(*keys: str) -> Callable[[dict[str, Any]], None]:
    """Leaves limits only a runaway caller reaches out of the schema: still enforced, but not worth the
    tokens every conversation pays for the definitions (an error names the limit if one is hit)."""

    def drop(schema: dict[str, Any]) -> None:
        for key in keys:
            schema.pop(key, None)

    return drop


# Strict as every params model; "additionalProperties": false is left out of these three schemas
# (an unknown argument is still refused, and the error lists the allowed ones).
_CONFIG = ConfigDict(**PARAMS_CONFIG, json_schema_extra=_unlisted("additionalProperties"))


class DiscoverParams(BaseModel):
    model_config = _CONFIG

    query: str | None = Field(
        None,
        max_length=500,
        description="What you want to do, in a few words.",
        json_schema_extra=_unlisted("maxLength"),
    )
    categories: list[str] | None = Field(
        None,
        max_length=20,
        description="Only tools in these categories.",
        json_schema_extra=_unlisted("maxItems"),
    )
    actions: list[str] | None = Field(
        None,
        max_length=8,
        description=f"Only these actions: {_ACTION_LIST}.",
        json_schema_extra=_unlisted("maxItems"),
    )
    limit: int = Field(
        10, ge=1, le=50, description="Results per page.", json_schema_extra=_unlisted("minimum")
    )
    cursor: str | None = Field(
        None,
        max_length=200,
        description="next_cursor of the previous page.",
        json_schema_extra=_unlisted("maxLength"),
    )


def _tool_name() -> Any:
    return Field(
        max_length=200,
        description="Exact name from discover_tools.",
        json_schema_extra=_unlisted("maxLength"),
    )


class SchemaParams(BaseModel):
    model_config = _CONFIG

    tool_name: str = _tool_name()
    with_companions: bool = Field(
        False, description="Also the schemas of tools used with it.", json_schema_extra=_unlisted("default")
    )


class InvokeParams(BaseModel):
    model_config = _CONFIG

    tool_name: str = _tool_name()
    parameters: dict[str, Any] | str = Field(
        default_factory=dict,
        description="Arguments matching the tool's schema.",
        json_schema_extra=_object_or_string,
    )
    confirmation: str | None = Field(
        None,
        max_length=200,
        description="The pending_id, once the user approved.",
        json_schema_extra=_unlisted("maxLength"),
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
    ) -> Page | Overview:
        """One page of the tools `principal` may see that match, as `discover_tools` answers."""

    def schema(self, principal: Principal, tool_name: str, *, with_companions: bool = False) -> SchemaAnswer:
        """One tool's full schema answer, as `get_tool_schema` gives it (with its companions' too)."""

    async def invoke(
        self,
        tool_name: str,
        parameters: Any = None,
        *,
        confirmation: str | None = None,
        context: ToolContext | None = None,
    ) -> ToolResult:
        """Run one call through the gateway's chokepoint."""


def build_meta_catalog(gateway: Backend) -> Catalog:
    """The meta-tools bound to one gateway."""

    async def discover_tools(params: DiscoverParams, ctx: ToolContext) -> Page | Overview:
        return gateway.discover(
            ctx.principal,
            query=params.query,
            categories=params.categories,
            actions=params.actions,
            limit=params.limit,
            cursor=params.cursor,
            session=ctx.session_id,
        )

    async def get_tool_schema(params: SchemaParams, ctx: ToolContext) -> SchemaAnswer:
        return gateway.schema(ctx.principal, params.tool_name, with_companions=params.with_companions)

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
                description="Find tools for a task; no arguments: an overview of the catalog.",
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
                description="A tool's description, parameters and examples; call it before invoke_tool.",
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
                    "Run a tool. A destructive tool first returns a pending_id: ask the user, and once they "
                    "approve, call again with confirmation set to it."
                ),
                params=InvokeParams,
                handler=invoke_tool,
                # The gate applies to the tool being invoked, not to invoke_tool itself.
                destructive=False,
                timeout=math.inf,
            ),
        ]
    )

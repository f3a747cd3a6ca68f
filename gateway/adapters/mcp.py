"""Tool definitions, results and server instructions in the Model Context Protocol's wire shapes.

Pure functions over plain data (camelCase keys as on the wire); `mcp_server` hands them to the
SDK. Optional keys are emitted only when set.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from ..context import ToolResult
from ..definition import ToolDefinition
from ..rendering import render

INSTRUCTIONS_BUDGET = 1000
"""Characters the server instructions may use, whatever the catalog's size."""

_INSTRUCTIONS = (
    "This server reaches a catalog of {total} tools through three meta-tools; the catalog's tools are "
    "not listed directly. Never guess a tool name or its parameters: call discover_tools (a few words "
    "of what you want to do, or no arguments for an overview), then get_tool_schema for the tool you "
    "chose, then invoke_tool. Destructive tools need the user's approval; invoke_tool says when."
)

_CODE_INSTRUCTIONS = (
    "This server reaches a catalog of {total} tools through four meta-tools; the catalog's tools are "
    "not listed directly. Never guess a tool name or its parameters. For one call: discover_tools (a "
    "few words of what you want to do, or no arguments for an overview), get_tool_schema for the tool "
    "you chose, then invoke_tool. For several calls, or one for each item of a list, use run_code: a "
    "first program finds the tools (discover(query) gives each as a Python signature), the next calls "
    "them with call(name, args); only what it prints and the value of its last line come back, so "
    "return just what you need. Destructive tools need the user's approval; invoke_tool and run_code "
    "say when."
)


_ALONE_INSTRUCTIONS = (
    "This server reaches a catalog of {total} tools through one tool, run_code; the catalog's tools "
    "are not listed directly. Never guess a tool name or its parameters: a first program finds the "
    "tools (discover(query) gives each as a Python signature), the next calls them with call(name, "
    "args); only what it prints and the value of its last line come back, so return just what you "
    "need. Destructive tools need the user's approval; run_code says when."
)


def tool_annotations(d: ToolDefinition) -> dict[str, Any]:
    """What a meta-tool may do, as MCP tool annotations (hints for the client's UI and policy).

    A read-only meta-tool only reads the catalog. One that is not (invoke_tool) runs catalog
    tools, some of them destructive (each behind the confirmation gate) and some reaching
    outside services, so it is marked destructive and open-world.
    """
    if d.read_only:
        return {
            "readOnlyHint": True,
            "destructiveHint": False,
            "idempotentHint": True,
            "openWorldHint": False,
        }
    return {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False, "openWorldHint": True}


TITLES = {
    "discover_tools": "Discover tools",
    "get_tool_schema": "Read a tool's schema",
    "invoke_tool": "Run a tool",
    "run_code": "Run a program",
}
"""The meta-tools' display names, for the client's UI (the model reads names and descriptions)."""

ALWAYS_LOAD = {"anthropic/alwaysLoad": True}
"""Asks a client that defers MCP tools behind its own tool search (Claude Code) to load these: they
are the way to every other tool, and three of them cost little."""

_STRUCTURED = {"type": "object"}
# Every result carries its value as a JSON object (see `call_result`); its keys depend on the
# outcome (a page, a schema, a tool's own output, a pending id, an error), so nothing more is promised.


def tool(d: ToolDefinition) -> dict[str, Any]:
    """One meta-tool as an MCP `Tool`: always loaded, titled, its result structured."""
    shaped: dict[str, Any] = {"name": d.name}
    if d.name in TITLES:
        shaped["title"] = TITLES[d.name]
    shaped.update(
        {
            "description": d.description,
            "inputSchema": d.json_schema,
            "outputSchema": _STRUCTURED,
            "annotations": tool_annotations(d),
            "_meta": ALWAYS_LOAD,
        }
    )
    return shaped


def tools(definitions: Iterable[ToolDefinition]) -> list[dict[str, Any]]:
    return [tool(d) for d in definitions]


def call_result(result: ToolResult) -> dict[str, Any]:
    """A result as an MCP `CallToolResult`: the model-facing text plus the same value structured.

    The structured value is parsed back from the text, so the two never disagree (a truncated
    text gives the truncation notice in both). A value that is not an object is wrapped as
    `{"result": value}`, since before 2026-07-28 structured content must be an object.
    """
    text = render(result)
    structured = json.loads(text)
    if not isinstance(structured, dict):
        structured = {"result": structured}
    return {
        "content": [{"type": "text", "text": text}],
        "structuredContent": structured,
        "isError": result.status == "error",
    }


def instructions(
    category_counts: Mapping[str, int],
    *,
    budget: int = INSTRUCTIONS_BUDGET,
    code: bool = False,
    alone: bool = False,
) -> str:
    """The server's instructions: how to use the meta-tools, then the categories, within `budget`.

    Categories are listed largest first (then by name) until the budget is reached; the rest
    are counted, never silently dropped.

    Args:
        category_counts: tools per category, as every caller of the server may see them.
        budget: the most characters the instructions may use.
        code: run_code is listed too (code mode), so say when to write a program.
        alone: run_code is listed alone (`[code] only`), so every call is made from a program.
    """
    total = sum(category_counts.values())
    text = (_ALONE_INSTRUCTIONS if alone else _CODE_INSTRUCTIONS if code else _INSTRUCTIONS).format(
        total=total
    )
    if not category_counts:
        return text[:budget]
    ranked = sorted(category_counts.items(), key=lambda item: (-item[1], item[0]))
    head = "\nCategories (tools): "
    shown: list[str] = []
    for i, (name, count) in enumerate(ranked):
        entry = f"{name} ({count})"
        rest = len(ranked) - i - 1
        tail = f", and {rest} more categories." if rest else "."
        if len(text) + len(head) + len(", ".join([*shown, entry])) + len(tail) > budget:
            break
        shown.append(entry)
    hidden = len(ranked) - len(shown)
    if not shown:
        overview = "run discover() in a program" if alone else "call discover_tools with no arguments"
        listing = f"\n{len(ranked)} categories; {overview} to see them."
    else:
        listing = head + ", ".join(shown) + (f", and {hidden} more categories." if hidden else ".")
    return (text + listing)[:budget]

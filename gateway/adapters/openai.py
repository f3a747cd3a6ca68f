"""Tool definitions in the OpenAI Chat Completions and Responses shapes.

Tools are sent non-strict: strict mode requires every property to be required and
forbids open objects, and invoke_tool's `parameters` is an open object by design.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..definition import ToolDefinition


def chat_tool(d: ToolDefinition) -> dict[str, Any]:
    """One tool as a Chat Completions `ChatCompletionToolParam`."""
    return {
        "type": "function",
        "function": {
            "name": d.name,
            "description": d.description,
            "parameters": d.json_schema,
            "strict": False,
        },
    }


def responses_tool(d: ToolDefinition) -> dict[str, Any]:
    """One tool as a Responses API `FunctionToolParam`."""
    return {
        "type": "function",
        "name": d.name,
        "description": d.description,
        "parameters": d.json_schema,
        "strict": False,
    }


def chat_tools(definitions: Iterable[ToolDefinition]) -> list[dict[str, Any]]:
    return [chat_tool(d) for d in definitions]


def responses_tools(definitions: Iterable[ToolDefinition]) -> list[dict[str, Any]]:
    return [responses_tool(d) for d in definitions]

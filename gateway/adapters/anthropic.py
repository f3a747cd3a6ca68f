"""Tool definitions in the Anthropic Messages API shape."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..definition import ToolDefinition


def tool_param(d: ToolDefinition) -> dict[str, Any]:
    """One tool as an Anthropic `ToolParam` (`name`, `description`, `input_schema`)."""
    return {"name": d.name, "description": d.description, "input_schema": d.json_schema}


def tools(definitions: Iterable[ToolDefinition]) -> list[dict[str, Any]]:
    return [tool_param(d) for d in definitions]

"""`gateway demo`: an agent-shaped session played on the workspace, one request at a time."""

from __future__ import annotations

import json
from typing import Any

from ..context import ToolContext, ToolResult
from ..engine import Gateway, run_sync
from ..rendering import result_payload
from .output import dump

# Requests the demo plays, as a user might type them; each is resolved by discovery, not by name.
DEMO_REQUESTS = (
    "what's on my calendar this week",
    "find unread email",
    "add a task to my list",
    "clear completed tasks",
)


def play(gw: Gateway, ctx: ToolContext) -> int:
    """Each request: discover -> get_tool_schema -> invoke_tool with the tool's example."""

    def step(tool_name: str, arguments: dict[str, Any]) -> ToolResult:
        print(f"\n>>> {tool_name}({json.dumps(arguments, ensure_ascii=False)})")
        result = run_sync(gw.call(tool_name, arguments, ctx))
        text = dump(result_payload(result))
        print(text if len(text) < 1500 else text[:1500] + "\n    ...")
        return result

    step("discover_tools", {})
    for request in DEMO_REQUESTS:
        print(f"\n=== user: {request!r}")
        found = step("discover_tools", {"query": request, "limit": 3})
        if not found.ok or not found.output.get("tools"):
            continue
        name = found.output["tools"][0]["name"]
        schema = step("get_tool_schema", {"tool_name": name})
        example = schema.output.get("example") if schema.ok else None
        if example is None:
            continue
        result = step("invoke_tool", example)
        if result.status == "confirmation_required" and result.pending is not None:
            print(f"\n--- host: the user approves {result.pending.pending_id} (outside the model's channel)")
            gw.approve(result.pending.pending_id)
            step("invoke_tool", {**example, "confirmation": result.pending.pending_id})
    return 0

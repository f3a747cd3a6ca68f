"""`gateway demo`: an agent-shaped session, played on a throw-away local workspace.

The demo approves its own destructive call (it plays the user, too), so it never runs on the
configured backend or data: whatever the configuration says (Google, another data directory,
fronted servers, tools directories), it opens the workspace catalog alone on a new local workspace
in a temporary directory, seeded with demo data, and deletes it at the end.
"""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path
from typing import Any

from ..context import ToolContext, ToolResult
from ..engine import Gateway, run_sync
from ..rendering import result_payload
from ..runtime import open_gateway, principal_from
from ..settings.loading import AuditSettings, ConfirmationSettings, PolicySettings, Settings
from .messages import note
from .output import dump

# Requests the demo plays, as a user might type them; each is resolved by discovery, not by name.
DEMO_REQUESTS = (
    "what's on my calendar this week",
    "find unread email",
    "add 'Call the plumber' to my tasks, due friday",
    "clear completed tasks",
)
_SHOWN_CHARS = 1500  # a longer answer is shown up to the last whole line before this many characters
_DAY = r"\b(today|tomorrow|monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b"


def run(settings: Settings) -> int:
    """Play the demo on its own workspace; the user's data, configuration and accounts stay untouched."""
    with tempfile.TemporaryDirectory(prefix="gateway-demo-") as directory:
        note(  # said to the person, on stderr: stdout is the session itself
            f"demo on a throw-away local workspace in {directory}, seeded with demo data and "
            "deleted at the end; your own workspace, configuration and accounts are not touched."
        )
        demo = demo_settings(settings, Path(directory))
        with open_gateway(demo) as gw:
            return play(gw, ToolContext(principal=principal_from(demo), session_id="demo"))


def demo_settings(settings: Settings, directory: Path) -> Settings:
    """`settings` with only what is harmless kept (the time zone): the local workspace in `directory`."""
    return Settings(
        data_dir=directory,
        timezone=settings.timezone,
        backend="local",
        catalogs=["workspace"],
        seed_demo=True,
        policy=PolicySettings(),
        confirmation=ConfirmationSettings(),  # in memory: the demo answers its own pending call
        audit=AuditSettings(path=directory / "audit.jsonl"),
    )


def play(gw: Gateway, ctx: ToolContext) -> int:
    """Each request: discover -> get_tool_schema -> invoke_tool with what the request says."""

    def step(tool_name: str, arguments: dict[str, Any]) -> ToolResult:
        print(f"\n>>> {tool_name}({json.dumps(arguments, ensure_ascii=False)})")
        result = run_sync(gw.call(tool_name, arguments, ctx))
        print(_shortened(dump(result_payload(result))))
        return result

    step("discover_tools", {})
    for request in DEMO_REQUESTS:
        print(f"\n=== user: {request!r}")
        found = step("discover_tools", {"query": request, "limit": 3})
        if not found.ok or not found.output.get("tools"):
            continue
        name = found.output["tools"][0]["name"]
        schema = step("get_tool_schema", {"tool_name": name})
        if not schema.ok:
            continue
        call = {"tool_name": name, "parameters": parameters_from(request, schema.output["parameters"])}
        result = step("invoke_tool", call)
        if result.status == "confirmation_required" and result.pending is not None:
            print(
                f"\n--- host: the user approves {result.pending.pending_id} (outside the model's channel; "
                "here the demo plays the user)"
            )
            gw.approve(result.pending.pending_id)
            step("invoke_tool", {**call, "confirmation": result.pending.pending_id})
    return 0


def parameters_from(request: str, schema: dict[str, Any]) -> dict[str, Any]:
    """The parameters a request gives the tool whose `schema` was read, as an agent fills them.

    Only what the request says and the schema has a parameter for: a period ("this week", a day),
    a quoted title, unread mail; everything else is left to the tool's defaults.
    """
    properties = schema.get("properties", {})
    words = request.lower()
    found: dict[str, Any] = {}
    day = re.search(_DAY, words)
    if {"start", "end"} <= properties.keys():
        if "this week" in words:
            found.update(start="today", end="sunday")
        elif day:
            found.update(start=day[1], end=day[1])
    if "title" in properties and (quoted := re.search(r"'([^']+)'|\"([^\"]+)\"", request)):
        found["title"] = quoted[1] or quoted[2]
        if "due" in properties and day:
            found["due"] = day[1]
    if "query" in properties and "unread" in words and "start" not in properties:  # a mail search
        found["query"] = "is:unread"
    return found


def _shortened(text: str) -> str:
    """`text`, or its whole lines up to `_SHOWN_CHARS` and how many lines are left out."""
    if len(text) <= _SHOWN_CHARS:
        return text
    lines = text.splitlines()
    kept: list[str] = []
    for line in lines:
        if kept and sum(len(k) + 1 for k in kept) + len(line) > _SHOWN_CHARS:
            break
        kept.append(line)
    return "\n".join([*kept, f"    ... ({len(lines) - len(kept)} more lines)"])

"""The "real session" of docs/concepts.md: a scripted model against a real gateway, and the page's copy.

A real Gateway (`open_gateway`) over the workspace catalog, on a fresh local workspace in a temporary
directory, in Europe/Berlin with the clock at Monday 2026-11-23 09:00; each model turn is one
`Gateway.call`, and each answer is the text `render` gives the model. The event id and the pending id
are made by the run (random); `normalise` numbers them in order of appearance, so the page keeps real
ids and still matches any later run.

    python -m tests.concepts_session          # print the session
    python -m tests.concepts_session --write  # rewrite the session in docs/concepts.md
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from gateway import ToolContext, render, run_sync
from gateway.runtime import open_gateway, principal_from
from gateway.settings.loading import Settings

PAGE = Path(__file__).resolve().parents[1] / "docs" / "concepts.md"
NOW = datetime(2026, 11, 23, 9, 0, tzinfo=ZoneInfo("Europe/Berlin"))
_BLOCK = re.compile(r"(## A real session\n.*?```text\n)(.*?)(```\n)", re.S)
_IDS = re.compile(r"\b[0-9a-f]{32}\b|\b[0-9a-f]{16}\b")


def session() -> str:
    """The transcript, as the page shows it: each model turn, the gateway's answer, the host's approval."""
    lines: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(
            data_dir=Path(tmp), timezone="Europe/Berlin", catalogs=["workspace"], seed_demo=False
        )
        with open_gateway(settings, clock=lambda: NOW) as gw:
            ctx = ToolContext(principal=principal_from(settings), session_id="concepts")

            def turn(tool: str, arguments: dict[str, Any]) -> Any:
                result = run_sync(gw.call(tool, arguments, ctx))
                lines.append(f"model -> {tool} {json.dumps(arguments, ensure_ascii=False)}")
                lines.append(f"gateway -> {render(result)}")
                lines.append("")
                return result

            turn("discover_tools", {"categories": ["calendar"], "actions": ["create"]})
            turn("get_tool_schema", {"tool_name": "calendar_create_event"})
            create = "calendar_create_event"
            turn(
                "invoke_tool",
                {"tool_name": create, "parameters": {"title": "Dentist", "start": "the day after never"}},
            )
            made = turn(
                "invoke_tool",
                {
                    "tool_name": create,
                    "parameters": {"title": "Dentist", "start": "friday 3pm", "duration": "45m"},
                },
            )
            delete = {"tool_name": "calendar_delete_event", "parameters": {"event_id": made.output["id"]}}
            held = turn("invoke_tool", delete)
            pending_id = held.pending.pending_id
            gw.approve(pending_id)
            lines.append(f"host -> gateway.approve({pending_id!r})   # the user clicked Approve")
            lines.append("")
            turn("invoke_tool", {**delete, "confirmation": pending_id})
    return "\n".join(lines[:-1]) + "\n"


def on_page(page: str = "") -> str:
    """The session as docs/concepts.md shows it."""
    match = _BLOCK.search(page or PAGE.read_text(encoding="utf-8"))
    if match is None:
        raise LookupError("docs/concepts.md has no ```text block under '## A real session'")
    return match.group(2)


def normalise(transcript: str) -> str:
    """Ids numbered in order of first appearance: `<id 1>`, `<id 2>`, ... (the same id, the same number)."""
    seen: dict[str, str] = {}
    return _IDS.sub(lambda m: seen.setdefault(m.group(0), f"<id {len(seen) + 1}>"), transcript)


def main(argv: list[str]) -> int:
    fresh = session()
    if "--write" not in argv:
        print(fresh, end="")
        return 0
    page = PAGE.read_text(encoding="utf-8")
    if normalise(on_page(page)) == normalise(fresh):
        print("docs/concepts.md already shows this session")
        return 0
    PAGE.write_text(_BLOCK.sub(lambda m: m.group(1) + fresh + m.group(3), page, count=1), encoding="utf-8")
    print("docs/concepts.md: session rewritten")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

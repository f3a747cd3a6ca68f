"""The "real session" of docs/code-mode.md: a scripted model writing programs against a real gateway.

As docs/concepts.md's (`concepts_session`): a real Gateway (`open_gateway`, code mode on) over the
workspace catalog, on a fresh local workspace with its demo data, in Europe/Berlin with the clock at
Monday 2026-11-23 09:00; each model turn is one `Gateway.call`, each answer the text `render` gives
the model. Ids are random; `normalise` numbers them in order of appearance.

    python -m tests.code_mode_session          # print the sessions
    python -m tests.code_mode_session --write  # rewrite them in docs/code-mode.md

The second, `plan_session`, draws a program's plan, has a person approve it in part at a terminal
(as `gateway approve PLAN --only 1,3` does), and runs it.
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

from gateway import ToolContext, render, run_sync
from gateway.cli.approvals import plan_decided
from gateway.gate.confirmation import DecidedBy
from gateway.runtime import open_gateway, principal_from
from gateway.settings.loading import Settings
from gateway.settings.sections import CodeSettings

from .concepts_session import NOW

PAGE = Path(__file__).resolve().parents[1] / "docs" / "code-mode.md"
_BLOCK = re.compile(r"(## A real session\n.*?```text\n)(.*?)(```\n)", re.S)
_PLAN_BLOCK = re.compile(r"(## A real session with a plan\n.*?```text\n)(.*?)(```\n)", re.S)

FIND = """\
[t for q in ['list calendar events', 'send an email'] for t in discover(q, limit=2)['tools']]"""

TYPO = """\
events = call('calendar_list_events', {'start': 'tomorrow', 'end': 'tomorrow'})['events']
call('gmail_send', {'to': ['x@example.com'], 'subject': 'Hi', 'body': 'Hi'})"""

REMIND = """\
events = call('calendar_list_events', {'start': 'tomorrow', 'end': 'tomorrow'})['events']
invited = sorted({a for e in events for a in e['attendees']})
titles = ', '.join(e['title'] for e in events)
try:
    call('gmail_send_message', {'to': invited, 'subject': 'Tomorrow: ' + titles,
                                'body': 'A reminder of tomorrow: ' + titles + '.'})
    sent = invited
except Declined:
    sent = []
{'meetings': len(events), 'reminded': sent}"""


REMIND_EACH = """\
events = call('calendar_list_events', {'start': 'today', 'end': 'friday'})['events']
sent = []
for e in [e for e in events if e['attendees']]:
    try:
        call('gmail_send_message', {'to': e['attendees'], 'subject': 'Reminder: ' + e['title'],
                                    'body': e['title'] + ' starts at ' + e['start'][11:16] + '.'})
        sent.append(e['title'])
    except Declined:
        pass
sent"""


def _settings(tmp: str) -> Settings:
    return Settings(
        data_dir=Path(tmp),
        timezone="Europe/Berlin",
        catalogs=["workspace"],
        code=CodeSettings(enabled=True),
        search={"dense": {"mode": "off"}},
    )


def plan_session() -> str:
    """A program's plan: drawn, shown to the person, approved in part at a terminal, run."""
    lines: list[str] = []
    with tempfile.TemporaryDirectory() as tmp, open_gateway(_settings(tmp), clock=lambda: NOW) as gw:
        ctx = ToolContext(principal=principal_from(_settings(tmp)), session_id="code-mode")
        lines.append("model -> run_code, plan: true, code:")
        lines.extend(f"    {line}" for line in REMIND_EACH.splitlines())
        drawn = run_sync(gw.call("run_code", {"code": REMIND_EACH, "plan": True}, ctx))
        lines += [f"gateway -> {render(drawn)}", ""]
        assert drawn.pending is not None
        plan_id = drawn.pending.pending_id
        lines.append("$ gateway pending   # what the person reads")
        lines.append(f"{plan_id}  run_code  (for {drawn.pending.principal}, expires in 300 s)")
        lines.extend(f"    {line}" for line in drawn.pending.preview.split("\n"))
        lines.append(f"$ gateway approve {plan_id} --only 1,3   # the product review's mail can wait")
        gw.approve(plan_id, only=[1, 3], decided_by=DecidedBy("terminal", "you"))
        lines.append(plan_decided(drawn.pending, True, [1, 3]).split("\n")[0])
        lines.append("")
        lines.append(f"model -> run_code {json.dumps({'confirmation': plan_id})}")
        ran = run_sync(gw.call("run_code", {"confirmation": plan_id}, ctx))
        lines.append(f"gateway -> {render(ran)}")
    return "\n".join(lines) + "\n"


def session() -> str:
    """The transcript as the page shows it: each program, the gateway's answer, the host's approval."""
    lines: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        settings = _settings(tmp)
        with open_gateway(settings, clock=lambda: NOW) as gw:
            ctx = ToolContext(principal=principal_from(settings), session_id="code-mode")

            def turn(arguments: dict[str, Any]) -> Any:
                result = run_sync(gw.call("run_code", arguments, ctx))
                code = arguments.get("code")
                if code is not None:
                    lines.append("model -> run_code, code:")
                    lines.extend(f"    {line}" for line in code.splitlines())
                else:
                    lines.append(f"model -> run_code {json.dumps(arguments)}")
                lines.append(f"gateway -> {render(result)}")
                lines.append("")
                return result

            turn({"code": FIND})
            turn({"code": TYPO})
            held = turn({"code": REMIND})
            pending_id = held.pending.pending_id
            gw.approve(pending_id)
            lines.append(f"host -> gateway.approve({pending_id!r})   # the user clicked Approve")
            lines.append("")
            turn({"confirmation": pending_id})
    return "\n".join(lines[:-1]) + "\n"


def on_page(page: str = "") -> str:
    """The session as docs/code-mode.md shows it."""
    match = _BLOCK.search(page or PAGE.read_text(encoding="utf-8"))
    if match is None:
        raise LookupError("docs/code-mode.md has no ```text block under '## A real session'")
    return match.group(2)


def on_page_plan(page: str = "") -> str:
    """The plan session as docs/code-mode.md shows it."""
    match = _PLAN_BLOCK.search(page or PAGE.read_text(encoding="utf-8"))
    if match is None:
        raise LookupError("docs/code-mode.md has no ```text block under '## A real session with a plan'")
    return match.group(2)


def write() -> None:
    page = PAGE.read_text(encoding="utf-8")
    page = _BLOCK.sub(lambda m: m.group(1) + session() + m.group(3), page, count=1)
    page = _PLAN_BLOCK.sub(lambda m: m.group(1) + plan_session() + m.group(3), page, count=1)
    PAGE.write_text(page, encoding="utf-8")


if __name__ == "__main__":
    if "--write" in sys.argv[1:]:
        write()
    else:
        sys.stdout.write(session() + "\n" + plan_session())

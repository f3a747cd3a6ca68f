"""Code mode against the three meta-tools: tokens the model reads and model turns, on six workspace tasks.

    python -m benchmarks.code_mode

Each task is played twice in the same run, on a fresh local workspace each time (the demo data,
Europe/Berlin, the clock at Monday 2026-11-23 09:00), with scripted model turns: once with the three
meta-tools (discover, read the schemas, invoke; independent calls in one turn, as a good model
batches them) and once with code mode (discover_tools as well, then a program that returns the
chosen tools' parameters with their descriptions in full, then a program that does the work and
returns only what the answer needs). Neither play knows a tool's name before discover_tools shows it.
Destructive calls are approved by the host as they come, so neither play spends turns on approvals.

What the model reads is counted in cl100k_base tokens (bpe-openai ships the vocabulary): at each
model turn, its whole context (the tool definitions, the request, every earlier call and result),
summed over the turns; separately, the results alone; and of those, the results of the work, once
the tools are found and their parameters read. The target: at least 5x fewer tokens read on the
tasks that take five or more calls. Both plays must leave the workspace in the same
state, which the run checks.

Then the overhead of code mode itself: starting a program that makes 10 calls of a tool that does
nothing, the median of 50 runs (target: under 50 ms).
"""

from __future__ import annotations

import asyncio
import difflib
import functools
import json
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from pydantic import BaseModel

from gateway import PARAMS_CONFIG, Catalog, Gateway, ToolContext, render, run_sync, tool
from gateway.adapters import anthropic
from gateway.client_settings import CodeSettings
from gateway.code import enable
from gateway.config import Settings
from gateway.runtime import open_gateway

NOW = datetime(2026, 11, 23, 9, 0, tzinfo=ZoneInfo("Europe/Berlin"))
SYSTEM = "You help the user with their calendar, email and tasks. Use the tools; never guess a tool's name."

Calls = list[tuple[str, dict[str, Any]]]


def tokens(value: Any) -> int:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return len(_encoding().encode(text))


@functools.cache
def _encoding() -> Any:
    from bpe_openai import get_encoding  # on first use: importing it reads its vocabulary

    return get_encoding("cl100k_base")


@dataclass
class Play:
    """One conversation: the model's turns, what it read, what it called."""

    gw: Gateway
    request: str
    context: int = 0  # tokens in the model's context now
    read: int = 0  # tokens read, summed over turns
    results: int = 0  # tokens of the results alone
    finding: int = 0  # of those, the results of finding the tools and reading their parameters
    turns: int = 0
    calls: int = 0
    log: list[str] = field(default_factory=list)

    def start(self) -> None:
        definitions = anthropic.tools(self.gw.meta)
        self.context = tokens(SYSTEM) + tokens(definitions) + tokens(self.request)

    def turn(self, calls: Calls) -> list[Any]:
        """One model turn: it reads its context and makes `calls` (at once); their results join it."""
        self.turns += 1
        self.read += self.context
        self.context += tokens([{"name": n, "input": a} for n, a in calls])
        out = []
        for name, arguments in calls:
            result = run_sync(self.gw.call(name, arguments, ToolContext(session_id="bench")))
            text = render(result)
            self.calls += 1
            self.results += tokens(text)
            self.context += tokens(text)
            out.append(json.loads(text))
        return out

    def answer(self, text: str) -> None:
        self.turns += 1
        self.read += self.context


def program(code: str) -> tuple[str, dict[str, Any]]:
    return ("run_code", {"code": code})


def schemas_program(names: list[str]) -> str:
    """Code mode's second turn: the chosen tools' parameters, each with its description in full.

    The names come from the discover_tools answer the model has read (it guesses none), and nothing
    is cut: the descriptions carry the formats, examples and defaults the calls need.
    """
    return (
        "{n: {k: v.get('description', '') for k, v in schema(n)['parameters']['properties'].items()}"
        f" for n in {names!r}}}"
    )


def code_start(play: Play, query: str, names: list[str]) -> None:
    """Find the tools as the server's instructions say, then read only what the program needs of them."""
    play.turn([("discover_tools", {"query": query})])
    play.turn([program(schemas_program(names))])
    play.finding = play.results


def meta_start(play: Play, query: str, names: list[str]) -> None:
    play.turn([("discover_tools", {"query": query})])
    play.turn([("get_tool_schema", {"tool_name": n}) for n in names])
    play.finding = play.results


def invoke(name: str, parameters: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    return ("invoke_tool", {"tool_name": name, "parameters": parameters})


# -- the tasks: each a request, a meta-tool play and a code-mode play ---------------------------------


def remind_attendees(play: Play, code: bool) -> None:
    names = ["calendar_list_events", "gmail_send_message"]
    query = "list calendar events and send email"
    if code:
        code_start(play, query, names)
        play.turn(
            [
                program(
                    "sent = []\n"
                    "for e in call('calendar_list_events', {'start': 'now', 'end': 'sunday'})['events']:\n"
                    "    if e['attendees']:\n"
                    "        call('gmail_send_message', {'to': e['attendees'], 'subject': 'Reminder: ' + e['title'],\n"
                    "             'body': 'A reminder: ' + e['title'] + ' at ' + e['start'] + '.'})\n"
                    "        sent.append(e['title'])\n"
                    "sent"
                )
            ]
        )
    else:
        meta_start(play, query, names)
        (listed,) = play.turn([invoke("calendar_list_events", {"start": "now", "end": "sunday"})])
        sends = [
            invoke(
                "gmail_send_message",
                {
                    "to": e["attendees"],
                    "subject": "Reminder: " + e["title"],
                    "body": "A reminder: " + e["title"] + " at " + e["start"] + ".",
                },
            )
            for e in listed["events"]
            if e["attendees"]
        ]
        play.turn(sends)
    play.answer("Sent reminders for each meeting with attendees.")


def move_tasks(play: Play, code: bool) -> None:
    names = ["tasks_list_tasks", "tasks_update_task"]
    query = "list tasks and change a task's due date"
    if code:
        code_start(play, query, names)
        play.turn(
            [
                program(
                    "import datetime\n"
                    "moved = []\n"
                    "for t in call('tasks_list_tasks', {})['tasks']:\n"
                    "    if t.get('due') and t['due'] <= '2026-11-29':\n"
                    "        due = datetime.date.fromisoformat(t['due']) + datetime.timedelta(days=7)\n"
                    "        call('tasks_update_task', {'task_id': t['id'], 'due': due.isoformat()})\n"
                    "        moved.append(t['title'])\n"
                    "moved"
                )
            ]
        )
    else:
        meta_start(play, query, names)
        (listed,) = play.turn([invoke("tasks_list_tasks", {})])
        from datetime import date, timedelta

        updates = [
            invoke(
                "tasks_update_task",
                {"task_id": t["id"], "due": (date.fromisoformat(t["due"]) + timedelta(days=7)).isoformat()},
            )
            for t in listed["tasks"]
            if t.get("due") and t["due"] <= "2026-11-29"
        ]
        play.turn(updates)
    play.answer("Moved the tasks due this week to next week.")


MEETINGS = ["Design sync", "Budget check", "Hiring debrief"]


def book_three(play: Play, code: bool) -> None:
    names = ["calendar_find_free_time", "calendar_create_event"]
    query = "find free time and create calendar events"
    if code:
        code_start(play, query, names)
        play.turn(
            [
                program(
                    "slots = call('calendar_find_free_time', {'start': 'tomorrow', 'end': 'friday', "
                    "'duration': '1h'})['slots']\n"
                    "booked = []\n"
                    f"for title, slot in zip({MEETINGS!r}, slots):\n"
                    "    e = call('calendar_create_event', {'title': title, 'start': slot['start'], "
                    "'duration': '1h'})\n"
                    "    booked.append([title, e['start']])\n"
                    "booked"
                )
            ]
        )
    else:
        meta_start(play, query, names)
        (free,) = play.turn(
            [invoke("calendar_find_free_time", {"start": "tomorrow", "end": "friday", "duration": "1h"})]
        )
        play.turn(
            [
                invoke("calendar_create_event", {"title": title, "start": slot["start"], "duration": "1h"})
                for title, slot in zip(MEETINGS, free["slots"], strict=False)
            ]
        )
    play.answer("Booked the three meetings.")


def reply_unread(play: Play, code: bool) -> None:
    names = ["gmail_search_messages", "gmail_read_message", "gmail_reply"]
    query = "search email, read a message and reply"
    search = {"query": "is:unread from:example.com -from:newsletter"}
    if code:
        code_start(play, query, names)
        play.turn(
            [
                program(
                    "replied = []\n"
                    f"for m in call('gmail_search_messages', {search!r})['messages']:\n"
                    "    body = call('gmail_read_message', {'message_id': m['id']})['body']\n"
                    "    first = body.split('.')[0]\n"
                    "    call('gmail_reply', {'message_id': m['id'], 'body': 'Thanks, noted: ' + first + '.'})\n"
                    "    replied.append(m['subject'])\n"
                    "replied"
                )
            ]
        )
    else:
        meta_start(play, query, names)
        (found,) = play.turn([invoke("gmail_search_messages", search)])
        read = play.turn([invoke("gmail_read_message", {"message_id": m["id"]}) for m in found["messages"]])
        play.turn(
            [
                invoke(
                    "gmail_reply",
                    {"message_id": m["id"], "body": "Thanks, noted: " + r["body"].split(".")[0] + "."},
                )
                for m, r in zip(found["messages"], read, strict=True)
            ]
        )
    play.answer("Replied to each unread message.")


def meeting_details(play: Play, code: bool) -> None:
    names = ["calendar_list_events", "calendar_get_event"]
    query = "list calendar events and read one event"
    if code:
        code_start(play, query, names)
        play.turn(
            [
                program(
                    "out = []\n"
                    "for e in call('calendar_list_events', {'start': 'now', 'end': 'sunday'})['events']:\n"
                    "    full = call('calendar_get_event', {'event_id': e['id']})\n"
                    "    out.append(full['title'] + ': ' + (full.get('location') or 'no place'))\n"
                    "out"
                )
            ]
        )
    else:
        meta_start(play, query, names)
        (listed,) = play.turn([invoke("calendar_list_events", {"start": "now", "end": "sunday"})])
        play.turn([invoke("calendar_get_event", {"event_id": e["id"]}) for e in listed["events"]])
    play.answer("Here is where each meeting takes place.")


def archive_receipts(play: Play, code: bool) -> None:
    names = ["gmail_search_messages", "gmail_archive"]
    query = "search email and archive messages"
    search = {"query": "label:Receipts is:read"}
    if code:
        code_start(play, query, names)
        play.turn(
            [
                program(
                    f"ids = [m['id'] for m in call('gmail_search_messages', {search!r})['messages']]\n"
                    "call('gmail_archive', {'message_ids': ids})\n"
                    "len(ids)"
                )
            ]
        )
    else:
        meta_start(play, query, names)
        (found,) = play.turn([invoke("gmail_search_messages", search)])
        play.turn([invoke("gmail_archive", {"message_ids": [m["id"] for m in found["messages"]]})])
    play.answer("Archived the read receipts.")


TASKS: dict[str, tuple[str, Callable[[Play, bool], None]]] = {
    "remind attendees": ("Email every attendee of this week's meetings a reminder.", remind_attendees),
    "move tasks": ("Move every task due this week to next week.", move_tasks),
    "book three": ("Find a free hour for three meetings and book them.", book_three),
    "reply unread": ("Reply to every unread message from a colleague.", reply_unread),
    "meeting places": ("Where does each of this week's meetings take place?", meeting_details),
    "archive receipts": ("Archive my read receipts.", archive_receipts),
}


@contextmanager
def workspace(code: bool) -> Iterator[Gateway]:
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(
            data_dir=Path(tmp),
            timezone="Europe/Berlin",
            catalogs=["workspace"],
            seed_demo=True,
            usage={"enabled": False},  # type: ignore[arg-type]
            audit={"enabled": False},  # type: ignore[arg-type]
            search={"dense": {"mode": "off"}},  # type: ignore[arg-type]
            code=CodeSettings(enabled=code),
        )
        with open_gateway(settings, clock=lambda: NOW, approver=lambda pending: True) as gw:
            yield gw


def state(gw: Gateway) -> Any:
    """What the workspace holds after a play, to check both plays did the same."""
    reads = [
        ("calendar_list_events", {"start": "2026-11-23", "end": "2026-12-07", "max_results": 100}),
        ("gmail_search_messages", {"query": "in:anywhere", "max_results": 100}),
        ("tasks_list_tasks", {}),
    ]
    return [run_sync(gw.invoke(n, a)).output for n, a in reads]


def _without_ids(value: Any) -> Any:
    """Ids are random, and so is the order of items made at the same instant: compared as sets."""
    if isinstance(value, dict):
        return {
            k: _without_ids(v)
            for k, v in value.items()
            if not k.endswith("id") and k not in ("updated", "parent")
        }
    if isinstance(value, list):
        return sorted((_without_ids(v) for v in value), key=lambda v: json.dumps(v, sort_keys=True))
    return value


@dataclass(frozen=True)
class Figures:
    task: str
    meta: Play
    code: Play


def run_tasks() -> list[Figures]:
    rows = []
    for name, (request, play_task) in TASKS.items():
        plays = []
        ends = []
        for code in (False, True):
            with workspace(code) as gw:
                play = Play(gw, request)
                play.start()
                play_task(play, code)
                ends.append(_without_ids(state(gw)))
                play.gw = None  # type: ignore[assignment]
                plays.append(play)
        if ends[0] != ends[1]:
            a, b = (json.dumps(e, indent=1, sort_keys=True).splitlines() for e in ends)
            print("\n".join(difflib.unified_diff(a, b, lineterm="", n=1)))
            raise AssertionError(f"{name}: the two plays left the workspace in different states")
        rows.append(Figures(name, plays[0], plays[1]))
    return rows


class _NoParams(BaseModel):
    model_config = PARAMS_CONFIG


@tool(category="bench", action="read", read_only=True)
def noop(params: _NoParams) -> int:
    """Does nothing."""
    return 0


def overhead(runs: int = 50) -> list[float]:
    """Milliseconds to run a program that makes 10 calls of a tool that does nothing."""
    gw = Gateway(Catalog([noop]))
    programs = enable(gw, CodeSettings(enabled=True))
    code = "n = 0\nfor i in range(10):\n    n += call('noop', {})\nn"

    async def measure() -> list[float]:
        times = []
        for _ in range(runs + 3):
            start = time.perf_counter()
            result = await gw.call("run_code", {"code": code})
            assert result.ok, result
            times.append((time.perf_counter() - start) * 1000)
        return times[3:]  # the first start the pool's worker

    try:
        return asyncio.run(measure())
    finally:
        programs.close()


def main() -> None:
    rows = run_tasks()
    side = f"{'calls':>5} {'turns':>5} {'read':>6} {'results':>7} {'work':>5}"
    print(f"{'':<17} {'three meta-tools':^32} | {'code mode':^32} | {'fewer tokens':^20}")
    print(f"{'task':<17} {side} | {side} | {'read':>6} {'results':>7} {'work':>5}")
    for r in rows:
        m, c = r.meta, r.code
        cells = [
            f"{p.calls:>5} {p.turns:>5} {p.read:>6,} {p.results:>7,} {p.results - p.finding:>5,}"
            for p in (m, c)
        ]
        work = (m.results - m.finding) / (c.results - c.finding)
        print(
            f"{r.task:<17} {cells[0]} | {cells[1]} | {m.read / c.read:>5.1f}x {m.results / c.results:>6.1f}x "
            f"{work:>4.1f}x"
        )
    long = [r for r in rows if r.meta.calls >= 5]
    for label, ratio in (
        ("read (whole context, each turn)", lambda r: r.meta.read / r.code.read),
        ("results", lambda r: r.meta.results / r.code.results),
        (
            "work results (after finding the tools)",
            lambda r: (r.meta.results - r.meta.finding) / (r.code.results - r.code.finding),
        ),
    ):
        ratios = [ratio(r) for r in long]
        verdict = "meets" if min(ratios) >= 5 else "misses"
        print(
            f"{label}: {min(ratios):.1f}x to {max(ratios):.1f}x fewer tokens on the {len(long)} tasks of five or more calls; {verdict} the 5x target"
        )
    times = overhead()
    print(
        f"a program making 10 no-op calls: median {statistics.median(times):.1f} ms, "
        f"p90 {sorted(times)[int(len(times) * 0.9)]:.1f} ms over {len(times)} runs (target: under 50 ms)"
    )


if __name__ == "__main__":
    main()

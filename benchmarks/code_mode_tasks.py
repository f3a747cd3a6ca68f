"""The code-mode benchmark's six tasks, each with its two scripted plays, and the `Play` that counts them.

A `Play` is one conversation: at each model turn the model reads its whole context (the tool
definitions, the request, every earlier call and result) and makes its calls at once; what it reads,
the results alone and the work's results are counted in cl100k_base tokens, with its turns and calls.
Each task plays its request either with the three meta-tools or with code mode. `benchmarks.code_mode`
runs them and prints the figures.
"""

from __future__ import annotations

import ast
import functools
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from gateway import Gateway, ToolContext, render, run_sync
from gateway.adapters import anthropic

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
    seen: list[str] = field(default_factory=list)  # every result the model has read

    def start(self) -> None:
        definitions = anthropic.tools(self.gw.meta)
        self.context = tokens(SYSTEM) + tokens(definitions) + tokens(self.request)

    def turn(self, calls: Calls) -> list[Any]:
        """One model turn: it reads its context and makes `calls` (at once); their results join it."""
        self.turns += 1
        self.read += self.context
        self._only_shown(calls)
        self.context += tokens([{"name": n, "input": a} for n, a in calls])
        out = []
        for name, arguments in calls:
            result = run_sync(self.gw.call(name, arguments, ToolContext(session_id="bench")))
            text = render(result)
            self.calls += 1
            self.results += tokens(text)
            self.context += tokens(text)
            self.seen.append(text)
            out.append(json.loads(text))
        return out

    def _only_shown(self, calls: Calls) -> None:
        """Refuse a turn that names a tool or a parameter no earlier result has shown the model."""
        shown = "\n".join(self.seen)
        for name, arguments in calls:
            for tool, params in _named(name, arguments):
                unseen = [w for w in (tool, *params) if not re.search(rf"\b{re.escape(w)}\b", shown)]
                if unseen:
                    raise AssertionError(
                        f"{self.request!r}: a turn names {unseen} before any result showed them"
                    )

    def answer(self, text: str) -> None:
        self.turns += 1
        self.read += self.context


def _named(name: str, arguments: dict[str, Any]) -> list[tuple[str, list[str]]]:
    """The tools a model's call names, each with the parameter names it passes."""
    if name in ("invoke_tool", "get_tool_schema"):
        return [(arguments["tool_name"], list(arguments.get("parameters", {})))]
    if name != "run_code" or "code" not in arguments:  # resuming a program, or running a plan
        return []
    named = []
    for node in ast.walk(ast.parse(arguments["code"])):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "call":
            tool, *rest = node.args
            assert isinstance(tool, ast.Constant) and isinstance(tool.value, str), ast.unparse(node)
            params = [
                k.value
                for r in rest
                if isinstance(r, ast.Dict)
                for k in r.keys
                if isinstance(k, ast.Constant)
            ]
            params += [k.arg for k in node.keywords if k.arg is not None]
            named.append((tool.value, params))
    return named


def program(code: str) -> tuple[str, dict[str, Any]]:
    return ("run_code", {"code": code})


FOUND_PER_STEP = 2
"""Tools a code-mode play asks discover() for, for each step of its plan (it picks one of them)."""


def code_start(play: Play, steps: list[str]) -> None:
    """Find the tools in one program: for each step of the plan, the best tools as Python signatures.

    The signatures carry every parameter with its type and default, so the next program can call
    the tools without reading their schemas first.
    """
    play.turn([program(f"[t for q in {steps!r} for t in discover(q, limit={FOUND_PER_STEP})['tools']]")])
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
        code_start(play, ["list calendar events", "send an email"])
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
        code_start(play, ["list tasks", "change a task's due date"])
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
        code_start(play, ["find free time", "create a calendar event"])
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
        code_start(play, ["search email", "read a message", "reply to a message"])
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
        code_start(play, ["list calendar events", "read one event"])
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
        code_start(play, ["search email", "archive messages"])
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

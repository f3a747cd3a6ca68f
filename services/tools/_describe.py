"""What the workspace's destructive tools tell the person approving them: the ids resolved.

Each function is a tool's `describe` hook: it reads (never changes) the thing a call names, so an
approver sees "Dentist, Tue 2 Dec 2025 10:00-11:00" rather than an opaque id. A hook that fails
(an unknown id, a backend down) is ignored by the gateway and the raw id is shown.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from gateway.context import ToolContext

from ..backends import Event, Message
from ._common import calendar_of, mail_of, settings_of, tasks_of

_MAX_LISTED = 20


def _quoted(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _when(moment: datetime, zone: ZoneInfo, *, day_only: bool = False) -> str:
    local = moment.astimezone(zone)
    return local.strftime("%a %d %b %Y" if day_only else "%a %d %b %Y %H:%M")


def _event(event: Event, zone: ZoneInfo) -> str:
    if event.all_day:
        when = f"all day {_when(event.start, zone, day_only=True)}"
    else:
        when = f"{_when(event.start, zone)} to {_when(event.end, zone)}"
    where = f" at {_quoted(event.location)}" if event.location else ""
    guests = f", with {', '.join(event.attendees)}" if event.attendees else ""
    return f"event {event.id} is {_quoted(event.title)}, {when}{where}{guests}"


def _message(message: Message, zone: ZoneInfo) -> str:
    return (
        f"message {message.id} is from {message.sender}, subject {_quoted(message.subject)}, "
        f"{_when(message.date, zone)}"
    )


def describe_event(params: Any, ctx: ToolContext) -> list[str]:
    """The event a call names: title, time, place and guests."""
    event = calendar_of(ctx).get_event(params.calendar_id, params.event_id)
    return [_event(event, settings_of(ctx).zone)]


def describe_message(params: Any, ctx: ToolContext) -> list[str]:
    """The message a call names: sender, subject and date."""
    return [_message(mail_of(ctx).get_message(params.message_id), settings_of(ctx).zone)]


def describe_draft(params: Any, ctx: ToolContext) -> list[str]:
    """The draft a call sends: every recipient, the subject and the whole body (what goes out)."""
    message = mail_of(ctx).get_draft(params.draft_id).message
    lines = [f"draft {params.draft_id} goes to {', '.join(message.to) or 'nobody'}"]
    if message.cc:
        lines.append(f"cc {', '.join(message.cc)}")
    if message.bcc:
        lines.append(f"bcc {', '.join(message.bcc)}")
    lines.append(f"subject {_quoted(message.subject)}, body {_quoted(message.body)}")
    return lines


def describe_task(params: Any, ctx: ToolContext) -> list[str]:
    """The task a call names: its title, due day and state."""
    task = tasks_of(ctx).get_task(params.tasklist_id, params.task_id)
    due = f", due {task.due.isoformat()}" if task.due else ""
    done = ", completed" if task.status == "completed" else ""
    return [f"task {task.id} is {_quoted(task.title)}{due}{done}"]


def describe_completed(params: Any, ctx: ToolContext) -> list[str]:
    """The completed tasks a clear would delete, by title (the first few, then how many more)."""
    tasks = tasks_of(ctx).list_tasks(params.tasklist_id, show_completed=True, max_results=100)
    done = [t for t in tasks if t.status == "completed"]
    titles = ", ".join(_quoted(t.title) for t in done[:_MAX_LISTED])
    more = f" and {len(done) - _MAX_LISTED} more" if len(done) > _MAX_LISTED else ""
    return [f"{len(done)} completed task(s) in {params.tasklist_id}: {titles or 'none'}{more}"]

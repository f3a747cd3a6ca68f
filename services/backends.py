"""The backend interface the workspace tools call, shaped after the Google Calendar, Gmail and Tasks APIs.

A backend is any object with these methods: the embedded local workspace (`services.local`) today, a
google-api-python-client backend later. Ids are strings; "primary" names the user's own calendar,
"@default" the default task list; mail labels are ids such as INBOX, UNREAD, STARRED, TRASH, SENT, DRAFT
or a user label's id. Datetimes are timezone-aware. Every method raises `gateway.errors.NotFound` for an
id that does not exist and `Conflict` for a clash with the current state.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Literal, Protocol, runtime_checkable
from zoneinfo import ZoneInfo

from pydantic import BaseModel, ConfigDict, Field

from .dates import to_zone, zone_of

SYSTEM_LABELS = ("INBOX", "UNREAD", "STARRED", "IMPORTANT", "SENT", "DRAFT", "TRASH", "SPAM")
PRIMARY_CALENDAR = "primary"
DEFAULT_TASKLIST = "@default"

TaskStatus = Literal["needsAction", "completed"]

_RESULT = ConfigDict(frozen=True, extra="forbid", serialize_by_alias=True)


@dataclass(frozen=True)
class WorkspaceSettings:
    """The timezone the workspace speaks and the clock it reads; a resource handlers `require`."""

    timezone: str
    clock: Callable[[], datetime]

    @property
    def zone(self) -> ZoneInfo:
        return zone_of(self.timezone)

    def now(self) -> datetime:
        """The clock's reading in the workspace timezone (a naive reading is wall-clock time there)."""
        return to_zone(self.clock(), self.zone)


# Calendar -------------------------------------------------------------------------------------------


class Calendar(BaseModel):
    """A calendar the user can see."""

    model_config = _RESULT
    id: str
    name: str
    time_zone: str
    primary: bool = False
    description: str | None = None


class NewEvent(BaseModel):
    """The fields of an event to create. All-day events run from local midnight to local midnight."""

    model_config = _RESULT
    title: str
    start: datetime
    end: datetime
    all_day: bool = False
    location: str | None = None
    description: str | None = None
    attendees: list[str] = Field(default_factory=list)


class Event(NewEvent):
    """A calendar event; an occurrence of a recurring event names its series in `recurring_event_id`."""

    id: str
    calendar_id: str
    recurring_event_id: str | None = None


class EventChanges(BaseModel):
    """A partial update: only the fields that were set change (`model_fields_set`).

    None clears `location` and `description`; for the other fields it leaves them as they are.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")
    title: str | None = None
    start: datetime | None = None
    end: datetime | None = None
    all_day: bool | None = None
    location: str | None = None
    description: str | None = None
    attendees: list[str] | None = None


class TimeRange(BaseModel):
    """A span of time, start inclusive, end exclusive."""

    model_config = _RESULT
    start: datetime
    end: datetime


class FreeSlot(TimeRange):
    """A free span inside working hours, with its length."""

    minutes: int


@runtime_checkable
class CalendarBackend(Protocol):
    """Calendars and their events (Google Calendar v3: calendarList, events, freebusy)."""

    def list_calendars(self) -> list[Calendar]: ...

    def list_events(
        self,
        calendar_id: str,
        *,
        time_min: datetime,
        time_max: datetime,
        query: str | None = None,
        max_results: int = 250,
    ) -> list[Event]:
        """Events overlapping [time_min, time_max), earliest first, optionally matching free text."""
        ...

    def get_event(self, calendar_id: str, event_id: str) -> Event: ...

    def create_event(self, calendar_id: str, event: NewEvent) -> Event: ...

    def update_event(self, calendar_id: str, event_id: str, changes: EventChanges) -> Event: ...

    def delete_event(self, calendar_id: str, event_id: str) -> None: ...

    def busy(self, calendar_id: str, *, time_min: datetime, time_max: datetime) -> list[TimeRange]:
        """Times taken by events in the range; all-day events leave the day free, as in Google."""
        ...


# Mail -----------------------------------------------------------------------------------------------


class Profile(BaseModel):
    """The mailbox owner."""

    model_config = _RESULT
    email_address: str


class MessageSummary(BaseModel):
    """One message as a search lists it."""

    model_config = _RESULT
    id: str
    thread_id: str
    sender: str = Field(serialization_alias="from")
    to: list[str] = Field(default_factory=list)
    subject: str = ""
    snippet: str = ""
    date: datetime
    labels: list[str] = Field(default_factory=list)

    @property
    def unread(self) -> bool:
        return "UNREAD" in self.labels


class Message(MessageSummary):
    """One message with its full body and threading headers."""

    cc: list[str] = Field(default_factory=list)
    bcc: list[str] = Field(default_factory=list)
    body: str = ""
    rfc822_message_id: str = ""
    in_reply_to: str | None = None
    references: list[str] = Field(default_factory=list)


class OutgoingMessage(BaseModel):
    """A message to send or keep as a draft; `thread_id` and the reply headers make it a reply."""

    model_config = _RESULT
    to: list[str] = Field(default_factory=list)
    cc: list[str] = Field(default_factory=list)
    bcc: list[str] = Field(default_factory=list)
    subject: str = ""
    body: str = ""
    thread_id: str | None = None
    in_reply_to: str | None = None
    references: list[str] = Field(default_factory=list)


class Draft(BaseModel):
    """An unsent message."""

    model_config = _RESULT
    id: str
    message: Message


class Label(BaseModel):
    """A mail label with its message counts."""

    model_config = _RESULT
    id: str
    name: str
    type: Literal["system", "user"]
    messages_total: int = 0
    messages_unread: int = 0


@runtime_checkable
class MailBackend(Protocol):
    """A mailbox (Gmail v1: users.messages, users.drafts, users.labels)."""

    def get_profile(self) -> Profile: ...

    def search_messages(self, query: str, *, max_results: int) -> list[MessageSummary]:
        """Messages matching a Gmail search query, newest first; trash and spam only when asked for.

        Raises:
            ToolInputError: the query has an operator value that cannot be used (field "query").
        """
        ...

    def get_message(self, message_id: str) -> Message: ...

    def send_message(self, message: OutgoingMessage) -> Message: ...

    def create_draft(self, message: OutgoingMessage) -> Draft: ...

    def get_draft(self, draft_id: str) -> Draft: ...

    def send_draft(self, draft_id: str) -> Message: ...

    def modify_labels(
        self, message_ids: Sequence[str], *, add: Sequence[str], remove: Sequence[str]
    ) -> list[MessageSummary]:
        """Add and remove label ids on every message, all or nothing."""
        ...

    def trash_message(self, message_id: str) -> MessageSummary: ...

    def delete_message(self, message_id: str) -> None:
        """Delete for good, skipping the trash."""
        ...

    def list_labels(self, *, counts: bool = True) -> list[Label]:
        """Every label; with `counts=False` the message counts may be left at 0 (Gmail needs a request
        per label to count, and most callers only want the names)."""
        ...

    def create_label(self, name: str) -> Label: ...


# Tasks ----------------------------------------------------------------------------------------------


class TaskList(BaseModel):
    """A list of tasks."""

    model_config = _RESULT
    id: str
    title: str
    updated: datetime
    default: bool = False


class NewTask(BaseModel):
    """The fields of a task to create; `parent` makes it a subtask."""

    model_config = _RESULT
    title: str
    notes: str | None = None
    due: date | None = None
    parent: str | None = None


class Task(NewTask):
    """A task. Like Google Tasks, the due date has no time of day."""

    id: str
    tasklist_id: str
    status: TaskStatus = "needsAction"
    completed_at: datetime | None = None
    updated: datetime


class TaskChanges(BaseModel):
    """A partial update: only the fields that were set change (`model_fields_set`).

    None clears `notes` and `due`; for `title` and `status` it leaves them as they are.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")
    title: str | None = None
    notes: str | None = None
    due: date | None = None
    status: TaskStatus | None = None


@runtime_checkable
class TasksBackend(Protocol):
    """Task lists and tasks (Google Tasks v1: tasklists, tasks)."""

    def list_tasklists(self) -> list[TaskList]: ...

    def create_tasklist(self, title: str) -> TaskList: ...

    def list_tasks(
        self,
        tasklist_id: str,
        *,
        due_min: date | None = None,
        due_max: date | None = None,
        show_completed: bool = False,
        max_results: int = 100,
    ) -> list[Task]:
        """Tasks of a list, open ones first, by due date; due bounds are inclusive."""
        ...

    def get_task(self, tasklist_id: str, task_id: str) -> Task: ...

    def create_task(self, tasklist_id: str, task: NewTask) -> Task: ...

    def update_task(self, tasklist_id: str, task_id: str, changes: TaskChanges) -> Task:
        """Change the set fields; completing stamps `completed_at`, reopening clears it."""
        ...

    def delete_task(self, tasklist_id: str, task_id: str) -> None:
        """Delete a task and its subtasks."""
        ...

    def clear_completed(self, tasklist_id: str) -> int:
        """Delete every completed task of the list; returns how many went."""
        ...


class PrincipalWorkspace(Protocol):
    """Each principal's own backends (a team gateway: each person's own Google account), chosen by
    who calls, never by an argument; a resource the tools look for before the shared backends."""

    def calendar(self, principal: str) -> CalendarBackend: ...

    def mail(self, principal: str) -> MailBackend: ...

    def tasks(self, principal: str) -> TasksBackend: ...

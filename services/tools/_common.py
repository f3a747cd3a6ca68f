"""What every workspace tool needs: its backend and settings from the context, dates, addresses, output."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from email.utils import parseaddr
from typing import Annotated, Any
from zoneinfo import ZoneInfo

from pydantic import BaseModel, StringConstraints

from gateway.context import ToolContext
from gateway.errors import ToolInputError

from ..backends import CalendarBackend, MailBackend, PrincipalWorkspace, TasksBackend, WorkspaceSettings
from ..dates import parse_datetime, parse_range_end

DATE_HINT = "ISO 8601 or natural language such as 'tomorrow 3pm', 'next friday', 'in 2 hours'"
"""Shared wording for date parameters, so the model reads one convention everywhere."""

DEFAULT_RANGE = timedelta(days=7)
MAX_ADDRESS_LENGTH = 320
MAX_ID_LENGTH = 1024

Address = Annotated[str, StringConstraints(max_length=MAX_ADDRESS_LENGTH)]
"""An email address parameter: "ana@example.com" or "Ana Ruiz <ana@example.com>"."""


def _own(ctx: ToolContext) -> PrincipalWorkspace | None:
    """Each principal's own backends, when the host serves each person their own account."""
    found = ctx.resources.get(PrincipalWorkspace)
    return found  # type: ignore[return-value]  # registered under its protocol by the provider


def calendar_of(ctx: ToolContext) -> CalendarBackend:
    """The calendar backend of the caller (their own account on a team gateway), or the host's."""
    own = _own(ctx)
    return own.calendar(ctx.principal.id) if own is not None else ctx.require(CalendarBackend)


def mail_of(ctx: ToolContext) -> MailBackend:
    """The mail backend of the caller (their own account on a team gateway), or the host's."""
    own = _own(ctx)
    return own.mail(ctx.principal.id) if own is not None else ctx.require(MailBackend)


def tasks_of(ctx: ToolContext) -> TasksBackend:
    """The tasks backend of the caller (their own account on a team gateway), or the host's."""
    own = _own(ctx)
    return own.tasks(ctx.principal.id) if own is not None else ctx.require(TasksBackend)


def settings_of(ctx: ToolContext) -> WorkspaceSettings:
    """The workspace timezone and clock."""
    return ctx.require(WorkspaceSettings)


def moment(text: str, settings: WorkspaceSettings, *, field: str) -> datetime:
    """A date parameter as an aware datetime in the workspace timezone."""
    return parse_datetime(text, tz=settings.zone, now=settings.now(), field=field)


def time_range(
    start: str | None, end: str | None, settings: WorkspaceSettings, *, span: timedelta = DEFAULT_RANGE
) -> tuple[datetime, datetime]:
    """The [start, end) a tool was asked about: start defaults to now, end to `span` after start.

    A bare day as the end ("friday") includes that whole day.

    Raises:
        ToolInputError: a date cannot be read, or the end is not after the start.
    """
    now = settings.now()
    begin = now if start is None else parse_datetime(start, tz=settings.zone, now=now, field="start")
    finish = begin + span if end is None else parse_range_end(end, tz=settings.zone, now=now, field="end")
    if finish <= begin:
        raise ToolInputError(
            f"end ({finish.isoformat()}) must be after start ({begin.isoformat()})", field="end"
        )
    return begin, finish


def addresses(values: list[str], *, field: str) -> list[str]:
    """Check that every value is an email address ("a@example.com" or "Name <a@example.com>").

    Raises:
        ToolInputError: naming the first value that is not an address.
    """
    checked = []
    for value in values:
        _, address = parseaddr(value)
        local, at, domain = address.rpartition("@")
        if not (at and local and domain) or any(c.isspace() for c in address):
            shown = value if len(value) <= 60 else value[:60] + "..."
            raise ToolInputError(
                f"{shown!r} is not an email address; write name@example.com or 'Name <name@example.com>'",
                field=field,
            )
        checked.append(value.strip())
    return checked


def out(value: Any, zone: ZoneInfo) -> Any:
    """The JSON-able form a tool returns: no None fields, datetimes in the workspace timezone."""
    if isinstance(value, BaseModel):
        value = value.model_dump(by_alias=True, exclude_none=True)
    if isinstance(value, datetime):
        return value.astimezone(zone).isoformat()
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, dict):
        return {key: out(item, zone) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [out(item, zone) for item in value]
    return value

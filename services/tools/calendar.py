"""Calendar tools: list, read, create, change and delete events, find free time, quick add."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from pydantic import BaseModel, Field

from gateway.context import ToolContext
from gateway.definition import PARAMS_CONFIG, NoParams, tool
from gateway.errors import ToolInputError

from ..backends import PRIMARY_CALENDAR, EventChanges, NewEvent
from ..dates import parse_duration, parse_time
from ._common import (
    DATE_HINT,
    MAX_ID_LENGTH,
    Address,
    addresses,
    calendar_of,
    out,
    settings_of,
    time_range,
)
from ._describe import describe_event
from ._event_times import EventTimes, changed_event_times, new_event_times, quick_add_times
from ._free_time import free_slots
from ._quick_add import split_quick_add
from ._requests import REQUESTS

MAX_FREE_TIME_RANGE = timedelta(days=62)

_CALENDAR_ID = Field(
    default=PRIMARY_CALENDAR, max_length=MAX_ID_LENGTH, description='Calendar id; "primary" is your own.'
)
_EVENT_ID = Field(
    min_length=1, max_length=MAX_ID_LENGTH, description="Event id, as listed by calendar_list_events."
)
_ATTENDEES_DOC = "Guest email addresses, e.g. ['ana@example.com']."


@tool(
    category="calendar",
    action="list",
    read_only=True,
    concurrency_safe=True,
    examples=[*REQUESTS["calendar_list_calendars"], {}],
)
def calendar_list_calendars(params: NoParams, ctx: ToolContext) -> dict[str, Any]:
    """List the calendars you can see; "primary" is your own."""
    settings = settings_of(ctx)
    return {"calendars": out(calendar_of(ctx).list_calendars(), settings.zone)}


class ListEventsParams(BaseModel):
    model_config = PARAMS_CONFIG
    start: str | None = Field(
        default=None, max_length=200, description=f"Range start ({DATE_HINT}). Default: now."
    )
    end: str | None = Field(
        default=None,
        max_length=200,
        description="Range end; a bare day such as 'friday' includes that whole day. Default: 7 days after start.",
    )
    query: str | None = Field(
        default=None,
        max_length=500,
        description="Only events whose title, description, location or attendees contain this text.",
    )
    calendar_id: str = _CALENDAR_ID
    max_results: int = Field(default=25, ge=1, le=250, description="Most events to return, earliest first.")


@tool(
    category="calendar",
    action="list",
    read_only=True,
    concurrency_safe=True,
    examples=[*REQUESTS["calendar_list_events"], {"start": "today", "end": "friday", "query": "review"}],
)
def calendar_list_events(params: ListEventsParams, ctx: ToolContext) -> dict[str, Any]:
    """List events (meetings, appointments) between two times, earliest first: your schedule.

    Without a range: the week ahead. Returns the resolved range, the events and `more: true` when max_results cut the list.
    """
    settings = settings_of(ctx)
    start, end = time_range(params.start, params.end, settings)
    events = calendar_of(ctx).list_events(
        params.calendar_id,
        time_min=start,
        time_max=end,
        query=params.query,
        max_results=params.max_results + 1,
    )
    return {
        "start": out(start, settings.zone),
        "end": out(end, settings.zone),
        "events": out(events[: params.max_results], settings.zone),
        "more": len(events) > params.max_results,
    }


class GetEventParams(BaseModel):
    model_config = PARAMS_CONFIG
    event_id: str = _EVENT_ID
    calendar_id: str = _CALENDAR_ID


@tool(
    category="calendar",
    action="read",
    read_only=True,
    concurrency_safe=True,
    examples=[*REQUESTS["calendar_get_event"], {"event_id": "a1b2c3"}],
)
def calendar_get_event(params: GetEventParams, ctx: ToolContext) -> dict[str, Any]:
    """Get one event with all its details: when, where (its location), who is invited, its notes."""
    event = calendar_of(ctx).get_event(params.calendar_id, params.event_id)
    return dict(out(event, settings_of(ctx).zone))


class CreateEventParams(BaseModel):
    model_config = PARAMS_CONFIG
    title: str = Field(min_length=1, max_length=1024, description="What the event is.")
    start: str = Field(
        max_length=200,
        description=f"When it starts ({DATE_HINT}); a day without a time makes an all-day event.",
    )
    end: str | None = Field(
        default=None,
        max_length=200,
        description="When it ends; for all-day events, the last day (inclusive). Give end or duration, not both.",
    )
    duration: str | None = Field(
        default=None,
        max_length=100,
        description="Length when end is not given, e.g. '45m', '1h30', '2 hours'. Default: 30 minutes (all-day: 1 day).",
    )
    all_day: bool | None = Field(
        default=None,
        description="An all-day event: only the days of start and end count. Default: all-day when start has no time.",
    )
    location: str | None = Field(default=None, max_length=1024, description="Where it happens.")
    description: str | None = Field(default=None, max_length=8192, description="Notes for the event.")
    attendees: list[Address] = Field(
        default_factory=list, max_length=100, description=_ATTENDEES_DOC + " Default: none."
    )
    calendar_id: str = _CALENDAR_ID


@tool(
    category="calendar",
    action="create",
    destructive=False,
    examples=[
        *REQUESTS["calendar_create_event"],
        {
            "title": "Design review",
            "start": "tomorrow 3pm",
            "duration": "1h",
            "attendees": ["ana@example.com"],
        },
    ],
)
def calendar_create_event(params: CreateEventParams, ctx: ToolContext) -> dict[str, Any]:
    """Create an event (a meeting, an appointment); returns it with its id."""
    settings = settings_of(ctx)
    if params.end is not None and params.duration is not None:
        raise ToolInputError("give end or duration, not both", field="duration")
    attendees = addresses(params.attendees, field="attendees")
    times = new_event_times(params.start, params.end, params.duration, params.all_day, settings)
    event = NewEvent(
        title=params.title,
        start=times.start,
        end=times.end,
        all_day=times.all_day,
        location=params.location or None,
        description=params.description or None,
        attendees=attendees,
    )
    return _with_reading(out(calendar_of(ctx).create_event(params.calendar_id, event), settings.zone), times)


class UpdateEventParams(BaseModel):
    model_config = PARAMS_CONFIG
    event_id: str = _EVENT_ID
    calendar_id: str = _CALENDAR_ID
    title: str | None = Field(default=None, min_length=1, max_length=1024, description="New title.")
    start: str | None = Field(
        default=None,
        max_length=200,
        description=f"New start ({DATE_HINT}); keeps the length unless end is given; a bare day keeps the time of day.",
    )
    end: str | None = Field(
        default=None, max_length=200, description="New end; for all-day events the last day."
    )
    duration: str | None = Field(
        default=None, max_length=100, description="New length instead of end, e.g. '1h'."
    )
    all_day: bool | None = Field(default=None, description="Make the event all-day (true) or timed (false).")
    location: str | None = Field(default=None, max_length=1024, description="New location; '' clears it.")
    description: str | None = Field(default=None, max_length=8192, description="New notes; '' clears them.")
    attendees: list[Address] | None = Field(
        default=None, max_length=100, description="The full new guest list (replaces the old one)."
    )


@tool(
    category="calendar",
    action="update",
    destructive=False,
    examples=[
        *REQUESTS["calendar_update_event"],
        {"event_id": "a1b2c3", "start": "friday 10am", "location": "Room 4"},
    ],
)
def calendar_update_event(params: UpdateEventParams, ctx: ToolContext) -> dict[str, Any]:
    """Change an event (reschedule, move or rename it); only the fields you give change.

    Returns the updated event.
    """
    settings = settings_of(ctx)
    backend = calendar_of(ctx)
    if params.end is not None and params.duration is not None:
        raise ToolInputError("give end or duration, not both", field="duration")
    changes: dict[str, Any] = {}
    times: EventTimes | None = None
    if params.title is not None:
        changes["title"] = params.title
    if any(v is not None for v in (params.start, params.end, params.duration, params.all_day)):
        current = backend.get_event(params.calendar_id, params.event_id)
        times = changed_event_times(
            params.start, params.end, params.duration, params.all_day, current=current, settings=settings
        )
        changes.update(start=times.start, end=times.end, all_day=times.all_day)
    for name in ("location", "description"):
        value = getattr(params, name)
        if value is not None:
            changes[name] = value or None  # '' clears
    if params.attendees is not None:
        changes["attendees"] = addresses(params.attendees, field="attendees")
    if not changes:
        raise ToolInputError("nothing to change; give at least one field besides event_id", field="event_id")
    updated = backend.update_event(params.calendar_id, params.event_id, EventChanges.model_validate(changes))
    return _with_reading(out(updated, settings.zone), times)


class DeleteEventParams(BaseModel):
    model_config = PARAMS_CONFIG
    event_id: str = _EVENT_ID
    calendar_id: str = _CALENDAR_ID


@tool(
    category="calendar",
    action="delete",
    examples=[*REQUESTS["calendar_delete_event"], {"event_id": "a1b2c3"}],
    describe=describe_event,
)
def calendar_delete_event(params: DeleteEventParams, ctx: ToolContext) -> dict[str, Any]:
    """Delete (cancel) an event for good."""
    calendar_of(ctx).delete_event(params.calendar_id, params.event_id)
    return {"deleted": True, "event_id": params.event_id}


class FindFreeTimeParams(BaseModel):
    model_config = PARAMS_CONFIG
    start: str | None = Field(
        default=None, max_length=200, description=f"Search from ({DATE_HINT}). Default: now."
    )
    end: str | None = Field(
        default=None,
        max_length=200,
        description="Search until; a bare day includes it. Default: 7 days after start.",
    )
    duration: str = Field(
        default="30m", max_length=100, description="Shortest useful slot, e.g. '30m', '1h'."
    )
    work_start: str = Field(
        default="09:00", max_length=20, description="Start of working hours each day, local time."
    )
    work_end: str = Field(
        default="17:00", max_length=20, description="End of working hours each day, local time."
    )
    include_weekends: bool = Field(default=False, description="Also look on Saturdays and Sundays.")
    calendar_id: str = _CALENDAR_ID
    max_results: int = Field(default=10, ge=1, le=50, description="Most slots to return, earliest first.")


@tool(
    category="calendar",
    action="search",
    read_only=True,
    concurrency_safe=True,
    examples=[*REQUESTS["calendar_find_free_time"], {"start": "tomorrow", "end": "friday", "duration": "1h"}],
)
def calendar_find_free_time(params: FindFreeTimeParams, ctx: ToolContext) -> dict[str, Any]:
    """Find free slots (open times when you are available) of at least `duration` within working hours.

    Working hours are 09:00-17:00 on weekdays unless given. Timed events block time; all-day events do not, as in Google Calendar. Each slot is a whole free
    stretch, so a slot may be longer than asked.
    """
    settings = settings_of(ctx)
    zone = settings.zone
    start, end = time_range(params.start, params.end, settings)
    if end - start > MAX_FREE_TIME_RANGE:
        raise ToolInputError(f"search at most {MAX_FREE_TIME_RANGE.days} days at a time", field="end")
    need = parse_duration(params.duration, field="duration")
    opens, closes = (
        parse_time(params.work_start, field="work_start"),
        parse_time(params.work_end, field="work_end"),
    )
    if closes <= opens:
        raise ToolInputError("work_end must be later than work_start", field="work_end")
    busy = calendar_of(ctx).busy(params.calendar_id, time_min=start, time_max=end)
    slots = free_slots(
        busy,
        start=start,
        end=end,
        opens=opens,
        closes=closes,
        need=need,
        zone=zone,
        weekends=params.include_weekends,
        limit=params.max_results + 1,
    )
    return {
        "slots": out(slots[: params.max_results], zone),
        "more": len(slots) > params.max_results,
        "time_zone": settings.timezone,
    }


class QuickAddParams(BaseModel):
    model_config = PARAMS_CONFIG
    text: str = Field(
        min_length=1,
        max_length=300,
        description="One sentence with what and when, e.g. 'Lunch with Ana tomorrow at noon for 1 hour'.",
    )
    calendar_id: str = _CALENDAR_ID


@tool(
    category="calendar",
    action="create",
    destructive=False,
    examples=[*REQUESTS["calendar_quick_add"], {"text": "Lunch with Ana tomorrow at noon for 1 hour"}],
)
def calendar_quick_add(params: QuickAddParams, ctx: ToolContext) -> dict[str, Any]:
    """Create an event from one sentence; the time phrase becomes the start, the rest the title.

    "for 1 hour" sets the length (default 30 minutes); a day without a time makes an all-day event.
    """
    settings = settings_of(ctx)
    found = split_quick_add(params.text, tz=settings.zone, now=settings.now())
    times = quick_add_times(found.phrase, found.when, found.length, settings.zone)
    event = NewEvent(title=found.title, start=times.start, end=times.end, all_day=times.all_day)
    return _with_reading(out(calendar_of(ctx).create_event(params.calendar_id, event), settings.zone), times)


def _with_reading(event: dict[str, Any], times: EventTimes | None) -> dict[str, Any]:
    """The event, plus `read_as` when a date was not read literally (so the model can correct it)."""
    return event if times is None or not times.read_as else {**event, "read_as": times.read_as}

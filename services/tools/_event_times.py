"""The times of a new or changed event: natural-language dates, all-day spans, default lengths."""

from __future__ import annotations

from datetime import date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from gateway.errors import ToolInputError

from ..backends import Event, WorkspaceSettings
from ..dates import localize, parse_date, parse_duration
from ._common import moment

DEFAULT_DURATION = timedelta(minutes=30)


def new_event_times(
    start_text: str,
    end_text: str | None,
    duration_text: str | None,
    all_day: bool,
    settings: WorkspaceSettings,
) -> tuple[datetime, datetime]:
    """Start and end of a new event from what the caller said (end or duration, else the default)."""
    if all_day:
        first = parse_date(start_text, tz=settings.zone, now=settings.now(), field="start")
        if end_text is not None:
            after = parse_date(end_text, tz=settings.zone, now=settings.now(), field="end") + timedelta(
                days=1
            )
        else:
            days = 1 if duration_text is None else parse_duration(duration_text, field="duration").days
            after = first + timedelta(days=max(days, 1))
        start, end = whole_days(first, after, settings.zone)
    else:
        start = moment(start_text, settings, field="start")
        if end_text is not None:
            end = moment(end_text, settings, field="end")
        else:
            length = (
                DEFAULT_DURATION if duration_text is None else parse_duration(duration_text, field="duration")
            )
            end = start + length
    return start, end


def whole_days(first: date, after: date, zone: ZoneInfo) -> tuple[datetime, datetime]:
    """Local midnight of `first` to local midnight of `after` (exclusive)."""
    if after <= first:
        raise ToolInputError("the last day must not be before the first day", field="end")
    return localize(datetime.combine(first, time()), zone), localize(datetime.combine(after, time()), zone)


def changed_event_times(
    start_text: str | None,
    end_text: str | None,
    duration_text: str | None,
    all_day_flag: bool | None,
    *,
    current: Event,
    settings: WorkspaceSettings,
) -> dict[str, Any]:
    """The start, end and all-day flag of `current` after a change (None: keep as it is)."""
    zone, now = settings.zone, settings.now()
    all_day = current.all_day if all_day_flag is None else all_day_flag
    if all_day:
        old_first = current.start.astimezone(zone).date()
        old_end = current.end.astimezone(zone)
        old_after = old_end.date() if old_end.time() == time() else old_end.date() + timedelta(days=1)
        first = old_first if start_text is None else parse_date(start_text, tz=zone, now=now, field="start")
        if end_text is not None:
            after = parse_date(end_text, tz=zone, now=now, field="end") + timedelta(days=1)
        elif duration_text is not None:
            after = first + timedelta(days=max(1, parse_duration(duration_text, field="duration").days))
        else:
            after = first + max(old_after - old_first, timedelta(days=1))
        start, end = whole_days(first, after, zone)
    else:
        start = current.start if start_text is None else moment(start_text, settings, field="start")
        if end_text is not None:
            end = moment(end_text, settings, field="end")
        elif duration_text is not None:
            end = start + parse_duration(duration_text, field="duration")
        elif current.all_day:
            end = start + DEFAULT_DURATION  # an all-day event turned timed gets the default length
        else:
            end = start + (current.end - current.start)  # keep the length
    if end <= start:
        raise ToolInputError("the event must end after it starts", field="end")
    return {"start": start, "end": end, "all_day": all_day}

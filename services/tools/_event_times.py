"""The times of a new or changed event: natural-language dates, all-day spans, default lengths.

A start is read as the start of something new (`parse_when(upcoming=True)`), so "tuesday 3pm" said on a
Tuesday evening is next week's. A day without a time makes an all-day event when an event is created;
when a timed event is moved, it keeps its time of day. Every reading that was not literal, or that has
another plausible meaning, is described in `read_as`, which the tools return to the model.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from gateway.errors import ToolInputError

from ..backends import Event, WorkspaceSettings
from ..dates import When, localize, parse_date, parse_duration, parse_when, spoken
from ._common import moment

DEFAULT_DURATION = timedelta(minutes=30)
_ONE_DAY = timedelta(days=1)
_NO_TIME = "no time given"


@dataclass(frozen=True, slots=True)
class EventTimes:
    """When an event starts and ends, whether it is all-day, and how the caller's words were read."""

    start: datetime
    end: datetime
    all_day: bool
    read_as: list[str] = field(default_factory=list)


def new_event_times(
    start_text: str,
    end_text: str | None,
    duration_text: str | None,
    all_day: bool | None,
    settings: WorkspaceSettings,
) -> EventTimes:
    """A new event from what the caller said (end or duration, else the default length).

    `all_day` None means: all-day when the start is a day without a time.
    """
    zone, now = settings.zone, settings.now()
    when = parse_when(start_text, tz=zone, now=now, field="start", upcoming=True)
    if all_day is None and when.date_only:
        first = when.value.date()
        after = first + _ONE_DAY
        if end_text is not None:
            last = parse_when(end_text, tz=zone, now=now, field="end")
            if not last.date_only:
                raise _day_without_time(
                    start_text, f"end {_quoted(end_text)} has a time", "give end as a day"
                )
            after = last.value.date() + _ONE_DAY
        elif duration_text is not None:
            after = first + _whole_days(duration_text, start_text)
        start, end = whole_days(first, after, zone)
        notes = [_reading("start", start_text, f"an all-day event on {spoken(first)}", _NO_TIME, when.reason)]
        return EventTimes(start, end, True, notes)
    if all_day:
        first = when.value.date()
        if end_text is not None:
            after = parse_date(end_text, tz=zone, now=now, field="end") + _ONE_DAY
        else:
            days = 1 if duration_text is None else parse_duration(duration_text, field="duration").days
            after = first + timedelta(days=max(days, 1))
        start, end = whole_days(first, after, zone)
        return EventTimes(start, end, True, _noted("start", start_text, spoken(first), when))
    if when.date_only:
        raise ToolInputError(
            f"start {_quoted(start_text)} has no time of day; add one, e.g. {_with_time(start_text)}, "
            "or leave all_day out to make an all-day event",
            field="start",
        )
    start = when.value
    notes = _noted("start", start_text, spoken(start), when)
    if end_text is not None:
        end, end_note = _end(end_text, start_text, start, settings)
        notes += end_note
    else:
        end = start + (
            DEFAULT_DURATION if duration_text is None else parse_duration(duration_text, field="duration")
        )
    if end <= start:
        raise ToolInputError("the event must end after it starts", field="end")
    return EventTimes(start, end, False, notes)


def changed_event_times(
    start_text: str | None,
    end_text: str | None,
    duration_text: str | None,
    all_day_flag: bool | None,
    *,
    current: Event,
    settings: WorkspaceSettings,
) -> EventTimes:
    """`current` after a change (None: keep as it is).

    A start with a time makes an all-day event timed (unless all_day says otherwise); a day without a
    time moves a timed event to that day at its time of day.
    """
    zone, now = settings.zone, settings.now()
    when = (
        None if start_text is None else parse_when(start_text, tz=zone, now=now, field="start", upcoming=True)
    )
    all_day = current.all_day if all_day_flag is None else all_day_flag
    made_timed = all_day_flag is None and current.all_day and when is not None and not when.date_only
    if made_timed:
        all_day = False
    notes: list[str] = []
    if all_day:
        old_first = current.start.astimezone(zone).date()
        old_end = current.end.astimezone(zone)
        old_after = old_end.date() if old_end.time() == time() else old_end.date() + _ONE_DAY
        first = old_first if when is None else when.value.date()
        if end_text is not None:
            after = parse_date(end_text, tz=zone, now=now, field="end") + _ONE_DAY
        elif duration_text is not None:
            after = first + timedelta(days=max(1, parse_duration(duration_text, field="duration").days))
        else:
            after = first + max(old_after - old_first, _ONE_DAY)
        start, end = whole_days(first, after, zone)
        if start_text is not None and when is not None:
            notes = _noted("start", start_text, spoken(first), when)
        return EventTimes(start, end, True, notes)
    if start_text is None or when is None:  # (both or neither)
        if current.all_day:
            raise ToolInputError(
                "give start with a time of day to make the all-day event timed", field="start"
            )
        start = current.start
    elif when.date_only:
        if current.all_day:
            raise ToolInputError(
                f"start {_quoted(start_text)} has no time of day and the event has none to keep; "
                f"add one, e.g. {_with_time(start_text)}",
                field="start",
            )
        start = localize(datetime.combine(when.value.date(), current.start.astimezone(zone).time()), zone)
        kept = f"{_NO_TIME}; the event keeps its time of day"
        notes = [_reading("start", start_text, spoken(start), kept, when.reason)]
    else:
        start = when.value
        if made_timed:
            timed = "it has a time, so the event is no longer all-day"
            notes = [_reading("start", start_text, spoken(start), timed, when.reason)]
        else:
            notes = _noted("start", start_text, spoken(start), when)
    if end_text is not None:
        end, end_note = _end(end_text, start_text, start, settings)
        notes += end_note
    elif duration_text is not None:
        end = start + parse_duration(duration_text, field="duration")
    elif current.all_day:
        end = start + DEFAULT_DURATION  # an all-day event turned timed gets the default length
    else:
        end = start + (current.end - current.start)  # keep the length
    if end <= start:
        raise ToolInputError("the event must end after it starts", field="end")
    return EventTimes(start, end, False, notes)


def quick_add_times(phrase: str, when: When, length: timedelta | None, zone: ZoneInfo) -> EventTimes:
    """A quick-add event: `phrase` is the words that said when, read as `when`; `length` from "for ..."."""
    if not when.date_only:
        value = when.value
        return EventTimes(
            value, value + (length or DEFAULT_DURATION), False, _noted("", phrase, spoken(value), when)
        )
    if length is not None and length % _ONE_DAY:
        raise ToolInputError(
            f"{_quoted(phrase)} has no time of day, so the event would be all-day, and all-day events last "
            f"whole days; add a time, e.g. {_with_time(phrase)}, or give the length in days",
            field="text",
        )
    first = when.value.date()
    start, end = whole_days(first, first + (length or _ONE_DAY), zone)
    notes = [_reading("", phrase, f"an all-day event on {spoken(first)}", _NO_TIME, when.reason)]
    return EventTimes(start, end, True, notes)


def whole_days(first: date, after: date, zone: ZoneInfo) -> tuple[datetime, datetime]:
    """Local midnight of `first` to local midnight of `after` (exclusive)."""
    if after <= first:
        raise ToolInputError("the last day must not be before the first day", field="end")
    return localize(datetime.combine(first, time()), zone), localize(datetime.combine(after, time()), zone)


def _end(
    end_text: str, start_text: str | None, start: datetime, settings: WorkspaceSettings
) -> tuple[datetime, list[str]]:
    """The end as written; when the start was moved forward and the end falls before it, moved alike."""
    end = moment(end_text, settings, field="end")
    if end >= start or start_text is None:
        return end, []
    written = moment(start_text, settings, field="start")
    moved = start.astimezone(settings.zone).date() - written.astimezone(settings.zone).date()
    if moved <= timedelta(0):
        return end, []
    end = localize(end.astimezone(settings.zone).replace(tzinfo=None) + moved, settings.zone)
    return end, [_reading("end", end_text, spoken(end), "moved with the start")]


def _whole_days(duration_text: str, start_text: str) -> timedelta:
    length = parse_duration(duration_text, field="duration")
    if length % _ONE_DAY:
        raise _day_without_time(
            start_text, f"duration {_quoted(duration_text)} is not whole days", "give the duration in days"
        )
    return length


def _day_without_time(start_text: str, conflict: str, alternative: str) -> ToolInputError:
    return ToolInputError(
        f"start {_quoted(start_text)} has no time of day, which makes an all-day event, but {conflict}; "
        f"add a time of day to start, e.g. {_with_time(start_text)}, or {alternative}",
        field="start",
    )


def _noted(label: str, text: str, shown: str, when: When) -> list[str]:
    """A reading of `text` only when the date parser had a reason to mention it."""
    return [] if when.reason is None else [_reading(label, text, shown, when.reason)]


def _reading(label: str, text: str, shown: str, *reasons: str | None) -> str:
    """E.g. "start 'tuesday 3pm' read as Tuesday 2026-12-01 15:00 (today's 15:00 has passed)"."""
    why = "; ".join(r for r in reasons if r)
    said = f"{label} {_quoted(text)}" if label else _quoted(text)
    return f"{said} read as {shown}" + (f" ({why})" if why else "")


def _quoted(text: str) -> str:
    return repr(text if len(text) <= 40 else text[:40] + "...")


def _with_time(text: str) -> str:
    """An example of `text` with a time of day, for an error that asks for one."""
    return _quoted(f"{text} 10am" if len(text) <= 30 else "friday 10am")

"""Dates as a model writes them: ISO 8601 or everyday phrases, turned into timezone-aware datetimes.

Every function takes the clock reading (`now`) and the timezone from the caller, so nothing here reads the
system clock and the same text always gives the same answer.

Semantics, chosen to match what people mean:

- Wall-clock phrases ("tomorrow 3pm", "in 3 days", "next friday") keep the local time across a DST change;
  elapsed phrases ("in 2 hours", "in 30 minutes") are real time.
- A wall-clock time that does not exist (inside a spring-forward gap) moves forward by the gap; one that
  happens twice (fall-back) is its first occurrence.
- "friday" and "this friday" are the next Friday, today included; "next friday" is the first Friday after
  today; "last friday" the latest one before today. "next week" is next Monday. Said before Friday in
  the same Monday-to-Sunday week, "next friday" is this week's Friday, and the reading says so (some
  people mean the Friday of next week).
- Ranges and queries read text as written: "tuesday" and "tuesday 3pm" on a Tuesday evening are today,
  so "what is on tuesday" shows today's events, including the ones that are over.
- The start of something new (`upcoming=True`) looks forward: a weekday with a time of day that has
  already passed today is next week's day ("tuesday 3pm" said on a Tuesday at 16:00), and a bare time
  that has passed is tomorrow ("3pm" at 16:00). Text that names today ("today 3pm", "tonight",
  "end of day") or a date stays as written; the reading says when a start was moved.
- "midnight" is the end of the day it names (00:00 of the following day); "end of day" is 23:59:59.
- ISO text without an offset, and every phrase, is in the configured timezone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta, timezone, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from dateutil import parser as _dateparser
from dateutil.relativedelta import FR, MO, SA, SU, TH, TU, WE, relativedelta, weekday

from gateway.errors import ToolInputError, UserError

from .durations import parse_span

MAX_TEXT_LENGTH = 200
"""Longer text is refused outright: no real date needs it, and it keeps parsing cheap."""

DATE_HELP = (
    "Use ISO 8601 (2025-03-14, 2025-03-14T15:30 or 2025-03-14T15:30:00+01:00) or a phrase such as "
    "'today', 'tomorrow 3pm', 'next friday 10am', 'in 2 hours', 'noon' or 'end of day'."
)
DURATION_HELP = "Use minutes or hours such as '30m', '45 minutes', '1h30', '1.5 hours' or '2 hours'."
TIME_HELP = "Use a time of day such as '09:00', '17:30', '9am' or '5:30pm'."

_END_OF_DAY = time(23, 59, 59)
_DAY_NAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_NAMES_TODAY = frozenset(("tonight", "end of day", "end of the day", "eod"))
_WEEKDAYS: dict[str, weekday] = {
    "mon": MO, "monday": MO, "tue": TU, "tues": TU, "tuesday": TU, "wed": WE, "wednesday": WE,
    "thu": TH, "thur": TH, "thurs": TH, "thursday": TH, "fri": FR, "friday": FR,
    "sat": SA, "saturday": SA, "sun": SU, "sunday": SU,
}  # fmt: skip
_NAMED_TIMES: dict[str, tuple[time, int]] = {
    # word -> (time of day, days after the named day)
    "noon": (time(12), 0), "midday": (time(12), 0), "midnight": (time(0), 1),
    "morning": (time(9), 0), "afternoon": (time(14), 0), "evening": (time(18), 0), "tonight": (time(20), 0),
    "end of day": (_END_OF_DAY, 0), "end of the day": (_END_OF_DAY, 0), "eod": (_END_OF_DAY, 0),
}  # fmt: skip
_TIME = (
    r"(?P<h12>\d{1,2})(?::(?P<m12>\d{2}))?\s*(?P<ampm>[ap])\.?m\.?"
    r"|(?P<h24>\d{1,2}):(?P<m24>\d{2})(?::(?P<s24>\d{2}))?"
    r"|(?P<word>noon|midday|midnight|morning|afternoon|evening|tonight|end of (?:the )?day|eod)"
)
_TIME_ONLY = re.compile(rf"(?:at\s+)?(?:{_TIME})")
_TIME_AT_END = re.compile(rf"(?P<rest>.*?)\s*(?:\bat\s+)?(?:{_TIME})")
_TIME_AT_START = re.compile(rf"(?:at\s+)?(?:{_TIME})(?:\s+(?P<rest>.*))?")
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_ISO_DATETIME = re.compile(r"\d{4}-\d{2}-\d{2}[Tt ]\d")
_WEEKDAY_PHRASE = re.compile(r"(?:(?P<which>this|next|last|coming)\s+)?(?P<day>[a-z]+)")


@dataclass(frozen=True, slots=True)
class When:
    """A parsed moment, and whether the text named only a day (so the time of day is midnight).

    `reason` is set when the text was not read literally or has another plausible reading, e.g.
    "today's 15:00 has passed"; tools pass it on so the model can correct a reading it did not mean.
    """

    value: datetime
    date_only: bool
    reason: str | None = None


def zone_of(tz: str | ZoneInfo) -> ZoneInfo:
    """The ZoneInfo for an IANA name such as "Europe/Berlin".

    Raises:
        UserError: the name is not a known timezone (a configuration mistake).
    """
    if isinstance(tz, ZoneInfo):
        return tz
    try:
        return ZoneInfo(tz)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise UserError(f"unknown timezone {tz!r}; use an IANA name such as 'Europe/Berlin'") from exc


def localize(naive: datetime, zone: ZoneInfo) -> datetime:
    """Attach `zone` to a wall-clock time; a time skipped by DST moves forward by the gap."""
    # The UTC round trip turns a non-existent 02:30 (fold=0, pre-transition offset) into 03:30.
    return naive.replace(tzinfo=zone).astimezone(UTC).astimezone(zone)


def to_zone(moment: datetime, zone: ZoneInfo) -> datetime:
    """`moment` in `zone`; a naive moment is taken to be wall-clock time there."""
    return localize(moment, zone) if moment.tzinfo is None else moment.astimezone(zone)


def parse_when(
    text: str, *, tz: str | ZoneInfo, now: datetime, field: str | None = None, upcoming: bool = False
) -> When:
    """Parse a date or date-time written in ISO 8601 or in everyday English.

    Args:
        text: what the model wrote, e.g. "2025-03-14T15:30", "tomorrow 3pm", "in 2 hours".
        tz: the timezone that phrases and offset-less ISO text are in.
        now: the current moment (naive means wall-clock time in `tz`).
        field: the parameter name reported in the error.
        upcoming: the text is the start of something new, so a weekday or bare time whose time of day
            has passed today means the next one (see the module docstring).

    Raises:
        ToolInputError: the text is not a date this module understands; the message lists what works.
    """
    zone = zone_of(tz)
    raw = text.strip()
    if raw and len(raw) <= MAX_TEXT_LENGTH:
        try:
            found = _parse(raw, zone, to_zone(now, zone), upcoming=upcoming)
        except (ValueError, OverflowError):
            found = None
        if found is not None:
            return found
    raise ToolInputError(f"cannot understand the date {_shown(text)}. {DATE_HELP}", field=field)


def parse_datetime(text: str, *, tz: str | ZoneInfo, now: datetime, field: str | None = None) -> datetime:
    """Parse a moment (see `parse_when`); a bare day means its start, local midnight."""
    return parse_when(text, tz=tz, now=now, field=field).value


def parse_range_end(text: str, *, tz: str | ZoneInfo, now: datetime, field: str | None = None) -> datetime:
    """Parse the end of a time range: a bare day means the whole day, so its end (the next midnight)."""
    when = parse_when(text, tz=tz, now=now, field=field)
    if not when.date_only:
        return when.value
    return localize(datetime.combine(when.value.date() + timedelta(days=1), time()), zone_of(tz))


def parse_date(text: str, *, tz: str | ZoneInfo, now: datetime, field: str | None = None) -> date:
    """Parse a calendar day ("2025-03-14", "tomorrow", "next friday") in `tz`."""
    return parse_when(text, tz=tz, now=now, field=field).value.date()


def parse_duration(text: str, *, field: str | None = None) -> timedelta:
    """Parse a positive length of time: "30m", "1h30", "90 minutes", "2 hours", "PT45M".

    A bare number is minutes. Days and weeks count as 24 hours and 7 days.

    Raises:
        ToolInputError: not a duration, or not positive.
    """
    span = parse_span(text) if len(text) <= MAX_TEXT_LENGTH else None
    if span is None or span.months:
        raise ToolInputError(f"cannot understand the duration {_shown(text)}. {DURATION_HELP}", field=field)
    try:
        total = span.clock + timedelta(days=span.days)
    except OverflowError:
        raise ToolInputError(f"the duration {_shown(text)} is too long", field=field) from None
    if total <= timedelta(0):
        raise ToolInputError(f"the duration {_shown(text)} must be longer than zero", field=field)
    return total


def parse_time(text: str, *, field: str | None = None) -> time:
    """Parse a time of day: "09:00", "17:30", "9am", "5:30pm", "noon".

    Raises:
        ToolInputError: not a time of day.
    """
    match = _TIME_ONLY.fullmatch(_normalize(text)) if len(text) <= MAX_TEXT_LENGTH else None
    try:
        if match is not None:
            clock, days_after = _time_of_day(match)
            # "midnight" as a bound of working hours is the end of the day.
            return _END_OF_DAY if days_after else clock
    except ValueError:
        pass
    raise ToolInputError(f"cannot understand the time {_shown(text)}. {TIME_HELP}", field=field)


def spoken(value: datetime | date) -> str:
    """A moment or day as a reading shows it: "Tuesday 2026-12-01 15:00" or "Tuesday 2026-12-01"."""
    day = f"{_DAY_NAMES[value.weekday()]} {value:%Y-%m-%d}"
    return f"{day} {value:%H:%M}" if isinstance(value, datetime) else day


def _shown(text: str) -> str:
    return repr(text if len(text) <= 40 else text[:40] + "...")


def _normalize(text: str) -> str:
    return " ".join(text.lower().replace(",", " ").split())


def _parse(raw: str, zone: ZoneInfo, now: datetime, *, upcoming: bool) -> When | None:
    iso = _parse_iso(raw, zone)
    if iso is not None:
        return iso
    text = _normalize(raw)
    today = now.date()
    if text in ("now", "right now"):
        return When(now, date_only=False)
    if (moved := _parse_offset(text, zone, now)) is not None:
        return When(moved, date_only=False)
    if text in ("end of week", "end of the week", "eow"):
        return _at(today + relativedelta(weekday=SU), _END_OF_DAY, 0, zone)
    if text in ("end of month", "end of the month", "eom"):
        return _at(today + relativedelta(day=31), _END_OF_DAY, 0, zone)
    for pattern in (_TIME_AT_END, _TIME_AT_START):
        match = pattern.fullmatch(text)
        if match is None:
            continue
        day_text = (match["rest"] or "").removeprefix("on ").strip()
        day = _parse_day(day_text, today)
        if day is None:
            continue
        clock, days_after = _time_of_day(match)
        found = _at(day, clock, days_after, zone, _next_weekday_reason(day_text, day, today))
        step = _step_when_passed(day_text) if match["word"] not in _NAMES_TODAY else 0
        if upcoming and step and found.value < now:
            return _at(
                day + timedelta(days=step), clock, days_after, zone, f"today's {clock:%H:%M} has passed"
            )
        return found
    day = _parse_day(text, today)
    if day is not None:
        start = localize(datetime.combine(day, time()), zone)
        return When(start, date_only=True, reason=_next_weekday_reason(text, day, today))
    return _parse_free_form(raw, zone, now)


def _at(day: date, clock: time, days_after: int, zone: ZoneInfo, reason: str | None = None) -> When:
    moment = localize(datetime.combine(day + timedelta(days=days_after), clock), zone)
    return When(moment, date_only=False, reason=reason)


def _step_when_passed(day_text: str) -> int:
    """Days a start moves when its time has passed: a bare time to tomorrow, a weekday to next week."""
    if not day_text:
        return 1
    match = _WEEKDAY_PHRASE.fullmatch(day_text)
    named = match is not None and match["day"] in _WEEKDAYS and match["which"] in (None, "this", "coming")
    return 7 if named else 0  # "today 3pm", "tomorrow 3pm", "next tuesday 3pm": as written


def _next_weekday_reason(day_text: str, day: date, today: date) -> str | None:
    """Why "next friday" said on a Wednesday is worth a word: some people mean next week's Friday."""
    match = _WEEKDAY_PHRASE.fullmatch(day_text.removeprefix("on ").strip())
    if match is None or match["which"] != "next" or match["day"] not in _WEEKDAYS:
        return None
    if day.isocalendar()[:2] != today.isocalendar()[:2]:
        return None  # already in next week: both readings agree
    name = _DAY_NAMES[day.weekday()]
    return f"this week's {name}; next week's is {(day + timedelta(days=7)).isoformat()}"


def _parse_iso(raw: str, zone: ZoneInfo) -> When | None:
    if _ISO_DATE.fullmatch(raw):
        day = date.fromisoformat(raw)
        return When(localize(datetime.combine(day, time()), zone), date_only=True)
    if not _ISO_DATETIME.match(raw):
        return None
    try:
        moment = datetime.fromisoformat(raw.upper())
    except ValueError:
        return None
    return When(to_zone(moment, zone), date_only=False)


def _parse_offset(text: str, zone: ZoneInfo, now: datetime) -> datetime | None:
    sign = 1
    if text.startswith("in "):
        span_text = text[3:]
    elif text.endswith(" from now"):
        span_text = text[: -len(" from now")]
    elif text.endswith(" ago"):
        span_text, sign = text[: -len(" ago")], -1
    else:
        return None
    span = parse_span(span_text)
    if span is None:
        return None
    moved = now
    if span.months or span.days:
        # Days and months are calendar steps: the wall-clock time stays, whatever DST does.
        wall = now.replace(tzinfo=None) + relativedelta(months=sign * span.months)
        moved = localize(wall + timedelta(days=sign * span.days), zone)
    # Hours and minutes are elapsed time, counted in UTC so a DST change cannot stretch them.
    return (moved.astimezone(UTC) + sign * span.clock).astimezone(zone)


def _parse_day(text: str, today: date) -> date | None:
    text = text.removeprefix("on ").strip()
    relative = {"": 0, "today": 0, "tonight": 0, "tomorrow": 1, "tmrw": 1, "tmr": 1, "yesterday": -1}
    if text in relative:
        return today + timedelta(days=relative[text])
    if text in ("day after tomorrow", "the day after tomorrow"):
        return today + timedelta(days=2)
    if text == "next week":
        return today + relativedelta(days=1, weekday=MO)
    if text == "next month":
        return today + relativedelta(months=1, day=1)
    if (match := _WEEKDAY_PHRASE.fullmatch(text)) and match["day"] in _WEEKDAYS:
        wd = _WEEKDAYS[match["day"]]
        if match["which"] == "next":
            return today + relativedelta(days=1, weekday=wd)
        if match["which"] == "last":
            return today + relativedelta(days=-1, weekday=wd(-1))
        return today + relativedelta(weekday=wd)
    if text.startswith("in "):
        span = parse_span(text[3:])
        if span is not None and not span.clock and span.days == int(span.days):
            return today + relativedelta(months=span.months, days=int(span.days))
        return None
    if not text or text.isdigit():
        return None  # a lone number is far more likely a mistake than "the 5th of this month"
    try:
        parsed = _dateparser.parse(text, default=datetime.combine(today, time()), tzinfos=_tzinfos)
    except (ValueError, OverflowError):
        return None  # includes _UnknownZoneName; the caller tries the remaining readings
    if parsed.tzinfo is not None or parsed.time() != time():
        return None  # the text carried a time after all; the free-form parser handles it whole
    return parsed.date()


def _parse_free_form(raw: str, zone: ZoneInfo, now: datetime) -> When | None:
    # Last resort for full dates dateutil knows ("Fri, 14 Mar 2025 10:00:00 +0000", "3pm UTC").
    if raw.isdigit():
        return None
    try:
        parsed = _dateparser.parse(raw, default=datetime.combine(now.date(), time()), tzinfos=_tzinfos)
    except _UnknownZoneName:
        return None
    return When(to_zone(parsed, zone), date_only=False)


class _UnknownZoneName(ValueError):
    """A zone abbreviation such as "PST" that cannot be resolved without guessing."""


def _tzinfos(name: str | None, offset: int | None) -> tzinfo | None:
    # A callable keeps dateutil from falling back to the machine's local zone for names it half-knows.
    if name is None and offset is None:
        return None  # no zone in the text: stay naive, the caller localizes
    if offset is not None:
        return timezone(timedelta(seconds=offset))
    if name is not None and name.upper() in ("UTC", "GMT", "Z"):
        return UTC
    raise _UnknownZoneName(name)


def _time_of_day(match: re.Match[str]) -> tuple[time, int]:
    """The time a `_TIME` match names, and how many days after the named day it falls."""
    if match["word"]:
        return _NAMED_TIMES[match["word"]]
    if match["ampm"]:
        hour, minute = int(match["h12"]), int(match["m12"] or 0)
        if not 1 <= hour <= 12:
            raise ValueError("hour out of range for am/pm")
        hour = hour % 12 + (12 if match["ampm"] == "p" else 0)
        return time(hour, minute), 0
    return time(int(match["h24"]), int(match["m24"]), int(match["s24"] or 0)), 0

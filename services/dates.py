"""Dates as a model writes them: ISO 8601 or everyday phrases, turned into timezone-aware datetimes.

Every function takes the clock reading (`now`) and the timezone from the caller, so nothing here reads the
system clock and the same text always gives the same answer.

Semantics, chosen to match what people mean:

- Wall-clock phrases ("tomorrow 3pm", "in 3 days", "next friday") keep the local time across a DST change;
  elapsed phrases ("in 2 hours", "in 30 minutes") are real time.
- A wall-clock time that does not exist (inside a spring-forward gap) moves forward by the gap; one that
  happens twice (fall-back) is its first occurrence.
- "friday" and "this friday" are the next Friday, today included; "next friday" is the first Friday after
  today; "last friday" the latest one before today. "next week" is next Monday.
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

MAX_TEXT_LENGTH = 200
"""Longer text is refused outright: no real date needs it, and it keeps parsing cheap."""

DATE_HELP = (
    "Use ISO 8601 (2025-03-14, 2025-03-14T15:30 or 2025-03-14T15:30:00+01:00) or a phrase such as "
    "'today', 'tomorrow 3pm', 'next friday 10am', 'in 2 hours', 'noon' or 'end of day'."
)
DURATION_HELP = "Use minutes or hours such as '30m', '45 minutes', '1h30', '1.5 hours' or '2 hours'."
TIME_HELP = "Use a time of day such as '09:00', '17:30', '9am' or '5:30pm'."

_END_OF_DAY = time(23, 59, 59)
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
_SPAN_PIECE = re.compile(r"\s*(?P<n>\d+(?:\.\d+)?)\s*(?P<unit>[a-z]*)")
_ISO_DURATION = re.compile(
    r"p(?:(?P<w>\d+)w)?(?:(?P<d>\d+)d)?(?:t(?:(?P<h>\d+)h)?(?:(?P<m>\d+)m)?(?:(?P<s>\d+)s)?)?"
)
_CLOCK_UNITS = {
    **dict.fromkeys(("s", "sec", "secs", "second", "seconds"), 1),
    **dict.fromkeys(("m", "min", "mins", "minute", "minutes"), 60),
    **dict.fromkeys(("h", "hr", "hrs", "hour", "hours"), 3600),
}
_DAY_UNITS = {
    **dict.fromkeys(("d", "day", "days"), 1),
    **dict.fromkeys(("w", "wk", "wks", "week", "weeks"), 7),
}
_MONTH_UNITS = frozenset(("mo", "mos", "month", "months"))


@dataclass(frozen=True, slots=True)
class When:
    """A parsed moment, and whether the text named only a day (so the time of day is midnight)."""

    value: datetime
    date_only: bool


@dataclass(frozen=True, slots=True)
class _Span:
    months: int = 0
    days: float = 0
    clock: timedelta = timedelta(0)


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


def parse_when(text: str, *, tz: str | ZoneInfo, now: datetime, field: str | None = None) -> When:
    """Parse a date or date-time written in ISO 8601 or in everyday English.

    Args:
        text: what the model wrote, e.g. "2025-03-14T15:30", "tomorrow 3pm", "in 2 hours".
        tz: the timezone that phrases and offset-less ISO text are in.
        now: the current moment (naive means wall-clock time in `tz`).
        field: the parameter name reported in the error.

    Raises:
        ToolInputError: the text is not a date this module understands; the message lists what works.
    """
    zone = zone_of(tz)
    raw = text.strip()
    if raw and len(raw) <= MAX_TEXT_LENGTH:
        try:
            found = _parse(raw, zone, to_zone(now, zone))
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
    span = _parse_span(text) if len(text) <= MAX_TEXT_LENGTH else None
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


def _shown(text: str) -> str:
    return repr(text if len(text) <= 40 else text[:40] + "...")


def _normalize(text: str) -> str:
    return " ".join(text.lower().replace(",", " ").split())


def _parse(raw: str, zone: ZoneInfo, now: datetime) -> When | None:
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
        day = _parse_day(match["rest"] or "", today)
        if day is not None:
            clock, days_after = _time_of_day(match)
            return _at(day, clock, days_after, zone)
    day = _parse_day(text, today)
    if day is not None:
        return When(localize(datetime.combine(day, time()), zone), date_only=True)
    return _parse_free_form(raw, zone, now)


def _at(day: date, clock: time, days_after: int, zone: ZoneInfo) -> When:
    return When(localize(datetime.combine(day + timedelta(days=days_after), clock), zone), date_only=False)


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
    span = _parse_span(span_text)
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
        span = _parse_span(text[3:])
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


def _parse_span(text: str) -> _Span | None:
    """A length of time as calendar months, calendar days and clock time; None when it is not one."""
    text = _normalize(text).removeprefix("for ")
    text = re.sub(r"\bhalf an? hour\b", "30 minutes", text)
    text = re.sub(r"\b(?:an?|one)\s+(?=[a-z])", "1 ", text)
    text = re.sub(r"\band\b", " ", text).strip()
    if not text:
        return None
    if (iso := _ISO_DURATION.fullmatch(text)) and any(iso.groupdict().values()):
        parts = {k: int(v or 0) for k, v in iso.groupdict().items()}
        clock = timedelta(hours=parts["h"], minutes=parts["m"], seconds=parts["s"])
        return _Span(days=parts["w"] * 7 + parts["d"], clock=clock)
    if hm := re.fullmatch(r"(\d{1,3}):(\d{2})", text):
        return _Span(clock=timedelta(hours=int(hm[1]), minutes=int(hm[2])))
    months, days, seconds = 0, 0.0, 0.0
    position, previous_unit, pieces = 0, "", 0
    while position < len(text):
        piece = _SPAN_PIECE.match(text, position)
        if piece is None:
            return None
        position, pieces = piece.end(), pieces + 1
        amount, unit = float(piece["n"]), piece["unit"]
        if not unit:
            # "1h30" means 30 minutes; a lone "45" means 45 minutes; "2 3" means nothing.
            lone = pieces == 1 and position == len(text)
            if not (lone or _CLOCK_UNITS.get(previous_unit) == 3600):
                return None
            unit = "m"
        if unit in _CLOCK_UNITS:
            seconds += amount * _CLOCK_UNITS[unit]
        elif unit in _DAY_UNITS:
            days += amount * _DAY_UNITS[unit]
        elif unit in _MONTH_UNITS and amount == int(amount):
            months += int(amount)
        else:
            return None
        previous_unit = unit
    return _Span(months=months, days=days, clock=timedelta(seconds=seconds))

"""Lengths of time as people write them ("30m", "1h30", "half an hour", "2 days", "PT45M").

The grammar behind `services.dates.parse_duration` and offsets such as "in 3 days"; it reads the text and
leaves what a length means (elapsed time or calendar steps) to the caller.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import timedelta

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
class Span:
    """A length of time as calendar months, calendar days and clock time.

    They are kept apart because a calendar day is not always 24 hours, nor a month a fixed number of days.
    """

    months: int = 0
    days: float = 0
    clock: timedelta = timedelta(0)


def parse_span(text: str) -> Span | None:
    """`text` as a length of time, or None when it is not one."""
    text = " ".join(text.lower().replace(",", " ").split()).removeprefix("for ")
    text = re.sub(r"\bhalf an? hour\b", "30 minutes", text)
    text = re.sub(r"\b(?:an?|one)\s+(?=[a-z])", "1 ", text)
    text = re.sub(r"\band\b", " ", text).strip()
    if not text:
        return None
    if (iso := _ISO_DURATION.fullmatch(text)) and any(iso.groupdict().values()):
        parts = {k: int(v or 0) for k, v in iso.groupdict().items()}
        clock = timedelta(hours=parts["h"], minutes=parts["m"], seconds=parts["s"])
        return Span(days=parts["w"] * 7 + parts["d"], clock=clock)
    if hm := re.fullmatch(r"(\d{1,3}):(\d{2})", text):
        return Span(clock=timedelta(hours=int(hm[1]), minutes=int(hm[2])))
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
    return Span(months=months, days=days, clock=timedelta(seconds=seconds))

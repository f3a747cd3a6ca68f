"""Free slots inside working hours, given the busy times of a calendar. Pure: no backend, no clock."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, time, timedelta
from zoneinfo import ZoneInfo

from ..backends import FreeSlot, TimeRange
from ..dates import localize


def free_slots(
    busy: Sequence[TimeRange],
    *,
    start: datetime,
    end: datetime,
    opens: time,
    closes: time,
    need: timedelta,
    zone: ZoneInfo,
    weekends: bool,
    limit: int,
) -> list[FreeSlot]:
    """Every free stretch of at least `need` within [start, end) and each day's working hours, earliest first.

    Working hours are wall-clock times in `zone`, so they stay 09:00-17:00 across a DST change. At most
    `limit` slots are returned.
    """
    taken = sorted(busy, key=lambda r: (r.start, r.end))
    slots: list[FreeSlot] = []
    day = start.astimezone(zone).date()
    while day <= end.astimezone(zone).date() and len(slots) < limit:
        if weekends or day.weekday() < 5:
            window_end = min(localize(datetime.combine(day, closes), zone), end)
            cursor = max(localize(datetime.combine(day, opens), zone), start)
            for block in taken:
                if block.end <= cursor or block.start >= window_end:
                    continue
                _add(slots, cursor, min(block.start, window_end), need)
                cursor = max(cursor, block.end)
            _add(slots, cursor, window_end, need)
        day += timedelta(days=1)
    return slots[:limit]


def _add(slots: list[FreeSlot], start: datetime, end: datetime, need: timedelta) -> None:
    if end - start >= need:
        slots.append(FreeSlot(start=start, end=end, minutes=int((end - start).total_seconds() // 60)))

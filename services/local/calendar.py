"""Calendars and events in the local workspace (implements `CalendarBackend`)."""

from __future__ import annotations

import sqlite3
from datetime import datetime

from gateway.errors import NotFound, ToolInputError

from ..backends import Calendar, Event, EventChanges, NewEvent, TimeRange
from .store import LocalStore, dump_list, from_db, load_list, new_id, to_db

_CLEARABLE = frozenset(("location", "description"))
"""Fields an update may set to None; for the others None means "leave as it is"."""


class LocalCalendar:
    """`CalendarBackend` over a `LocalStore`; every calendar reports the workspace timezone."""

    def __init__(self, store: LocalStore, *, timezone: str) -> None:
        self._store = store
        self._timezone = timezone

    def list_calendars(self) -> list[Calendar]:
        with self._store.read() as conn:
            rows = conn.execute(
                "SELECT id, name, description, is_primary FROM calendars ORDER BY is_primary DESC, name, id"
            ).fetchall()
        return [
            Calendar(
                id=row["id"],
                name=row["name"],
                description=row["description"],
                primary=bool(row["is_primary"]),
                time_zone=self._timezone,
            )
            for row in rows
        ]

    def list_events(
        self,
        calendar_id: str,
        *,
        time_min: datetime,
        time_max: datetime,
        query: str | None = None,
        max_results: int = 250,
    ) -> list[Event]:
        sql = "SELECT * FROM events WHERE calendar_id = ? AND start < ? AND end > ?"
        args: list[object] = [calendar_id, to_db(time_max), to_db(time_min)]
        if query:
            sql += (
                " AND (contains_text(title, ?) OR contains_text(description, ?)"
                " OR contains_text(location, ?) OR list_contains(attendees, ?))"
            )
            args += [query] * 4
        sql += " ORDER BY start, end, id LIMIT ?"
        args.append(max_results)
        with self._store.read() as conn:
            _check_calendar(conn, calendar_id)
            rows = conn.execute(sql, args).fetchall()
        return [_event(row) for row in rows]

    def get_event(self, calendar_id: str, event_id: str) -> Event:
        with self._store.read() as conn:
            _check_calendar(conn, calendar_id)
            return _event(_event_row(conn, calendar_id, event_id))

    def create_event(self, calendar_id: str, event: NewEvent) -> Event:
        _check_times(event.start, event.end)
        with self._store.write() as conn:
            _check_calendar(conn, calendar_id)
            event_id = insert_event(conn, calendar_id, event, now=self._store.now())
            return _event(_event_row(conn, calendar_id, event_id))

    def update_event(self, calendar_id: str, event_id: str, changes: EventChanges) -> Event:
        with self._store.write() as conn:
            _check_calendar(conn, calendar_id)
            current = _event(_event_row(conn, calendar_id, event_id))
            fields = current.model_dump(include=set(NewEvent.model_fields))
            for name in changes.model_fields_set:
                value = getattr(changes, name)
                if value is not None or name in _CLEARABLE:
                    fields[name] = value
            merged = NewEvent.model_validate(fields)
            _check_times(merged.start, merged.end)
            conn.execute(
                "UPDATE events SET title = ?, start = ?, end = ?, all_day = ?, location = ?, description = ?,"
                " attendees = ?, updated = ? WHERE id = ?",
                (*_event_columns(merged), to_db(self._store.now()), event_id),
            )
            return _event(_event_row(conn, calendar_id, event_id))

    def delete_event(self, calendar_id: str, event_id: str) -> None:
        with self._store.write() as conn:
            _check_calendar(conn, calendar_id)
            _event_row(conn, calendar_id, event_id)
            conn.execute("DELETE FROM events WHERE id = ?", (event_id,))

    def busy(self, calendar_id: str, *, time_min: datetime, time_max: datetime) -> list[TimeRange]:
        with self._store.read() as conn:
            _check_calendar(conn, calendar_id)
            rows = conn.execute(
                "SELECT start, end FROM events WHERE calendar_id = ? AND all_day = 0 AND start < ? AND end > ?"
                " ORDER BY start, end",
                (calendar_id, to_db(time_max), to_db(time_min)),
            ).fetchall()
        return [TimeRange(start=from_db(row["start"]), end=from_db(row["end"])) for row in rows]


def insert_event(conn: sqlite3.Connection, calendar_id: str, event: NewEvent, *, now: datetime) -> str:
    """Insert an event inside the caller's transaction; returns its new id."""
    event_id = new_id()
    stamp = to_db(now)
    conn.execute(
        "INSERT INTO events (title, start, end, all_day, location, description, attendees,"
        " id, calendar_id, created, updated) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (*_event_columns(event), event_id, calendar_id, stamp, stamp),
    )
    return event_id


def _event_columns(event: NewEvent) -> tuple[object, ...]:
    return (
        event.title,
        to_db(event.start),
        to_db(event.end),
        int(event.all_day),
        event.location,
        event.description,
        dump_list(event.attendees),
    )


def _check_times(start: datetime, end: datetime) -> None:
    if end <= start:
        raise ToolInputError("the event must end after it starts", field="end")


def _check_calendar(conn: sqlite3.Connection, calendar_id: str) -> None:
    if conn.execute("SELECT 1 FROM calendars WHERE id = ?", (calendar_id,)).fetchone() is None:
        raise NotFound(f"no calendar with id {calendar_id!r}")


def _event_row(conn: sqlite3.Connection, calendar_id: str, event_id: str) -> sqlite3.Row:
    row: sqlite3.Row | None = conn.execute(
        "SELECT * FROM events WHERE id = ? AND calendar_id = ?", (event_id, calendar_id)
    ).fetchone()
    if row is None:
        raise NotFound(f"no event with id {event_id!r} in calendar {calendar_id!r}")
    return row


def _event(row: sqlite3.Row) -> Event:
    return Event(
        id=row["id"],
        calendar_id=row["calendar_id"],
        title=row["title"],
        start=from_db(row["start"]),
        end=from_db(row["end"]),
        all_day=bool(row["all_day"]),
        location=row["location"],
        description=row["description"],
        attendees=load_list(row["attendees"]),
    )

"""Google Calendar v3 as a `CalendarBackend`: calendarList.list and events.list/get/insert/patch/delete.

Timed events go out as RFC 3339 with the workspace offset and `timeZone`; all-day events as `date`s in
the workspace time zone (Google's end date is exclusive, like `NewEvent.end` at local midnight).
Recurring events are read as their single occurrences (`singleEvents=true`); each occurrence carries
`recurring_event_id`. Guests are notified of new, changed and cancelled events (`sendUpdates=all`), as
when you confirm in Google Calendar.
"""

from __future__ import annotations

from datetime import date, datetime, time
from email.utils import formataddr, parseaddr
from typing import Any, Literal

from gateway.errors import NotFound, ToolInputError

from ..backends import Calendar, Event, EventChanges, NewEvent, TimeRange
from ..dates import localize, zone_of
from .client import GoogleClient
from .errors import Call

SERVICE = "Google Calendar"
MAX_EVENTS = 2500
PAGE_SIZE = 250
SendUpdates = Literal["all", "externalOnly", "none"]
_FIELDS = {
    "timeMin": "start",
    "timeMax": "end",
    "q": "query",
    "calendarId": "calendar_id",
    "eventId": "event_id",
    "summary": "title",
    "start": "start",
    "end": "end",
    "location": "location",
    "description": "description",
    "attendees": "attendees",
}


class GoogleCalendar:
    """`CalendarBackend` over Google Calendar v3."""

    def __init__(self, client: GoogleClient, *, timezone: str, send_updates: SendUpdates = "all") -> None:
        self._client = client
        self._timezone = timezone
        self._zone = zone_of(timezone)
        self._send_updates = send_updates

    def list_calendars(self) -> list[Calendar]:
        items = self._client.collect(
            "calendar",
            "calendarList.list",
            Call(SERVICE, "the calendar list"),
            items="items",
            limit=MAX_EVENTS,
            page_size=PAGE_SIZE,
        )
        calendars = [
            Calendar(
                id=item["id"],
                name=item.get("summaryOverride") or item.get("summary", ""),
                time_zone=item.get("timeZone", self._timezone),
                primary=bool(item.get("primary", False)),
                description=item.get("description") or None,
            )
            for item in items
        ]
        return sorted(calendars, key=lambda c: (not c.primary, c.name.casefold(), c.id))

    def list_events(
        self,
        calendar_id: str,
        *,
        time_min: datetime,
        time_max: datetime,
        query: str | None = None,
        max_results: int = 250,
    ) -> list[Event]:
        params: dict[str, Any] = {
            "calendarId": calendar_id,
            "timeMin": time_min.isoformat(),
            "timeMax": time_max.isoformat(),
            "singleEvents": True,
            "orderBy": "startTime",
        }
        if query:
            params["q"] = query
        items = self._client.collect(
            "calendar",
            "events.list",
            self._call(f"calendar {calendar_id!r}"),
            items="items",
            limit=min(max_results, MAX_EVENTS),
            page_size=PAGE_SIZE,
            **params,
        )
        return [self._event(item, calendar_id) for item in items if item.get("status") != "cancelled"]

    def get_event(self, calendar_id: str, event_id: str) -> Event:
        call = self._call(_event_item(calendar_id, event_id))
        item = self._client.call("calendar", "events.get", call, calendarId=calendar_id, eventId=event_id)
        if item.get("status") == "cancelled":  # Google still answers for a deleted event
            raise NotFound(f"{call.item} was not found")
        return self._event(item, calendar_id)

    def create_event(self, calendar_id: str, event: NewEvent) -> Event:
        _check_times(event.start, event.end)
        body: dict[str, Any] = {
            "summary": event.title,
            "start": self._when(event.start, event.all_day),
            "end": self._when(event.end, event.all_day),
        }
        if event.location:
            body["location"] = event.location
        if event.description:
            body["description"] = event.description
        if event.attendees:
            body["attendees"] = [_attendee(value) for value in event.attendees]
        item = self._client.call(
            "calendar",
            "events.insert",
            self._call(f"calendar {calendar_id!r}"),
            calendarId=calendar_id,
            body=body,
            sendUpdates=self._send_updates,
        )
        return self._event(item, calendar_id)

    def update_event(self, calendar_id: str, event_id: str, changes: EventChanges) -> Event:
        body: dict[str, Any] = {}
        fields = changes.model_fields_set
        if changes.title is not None:
            body["summary"] = changes.title
        if fields & {"start", "end", "all_day"}:
            start, end, all_day = changes.start, changes.end, changes.all_day
            if start is None or end is None or all_day is None:
                current = self.get_event(calendar_id, event_id)
                start, end = start or current.start, end or current.end
                all_day = current.all_day if all_day is None else all_day
            _check_times(start, end)
            body["start"] = self._when(start, all_day, clear_other=True)
            body["end"] = self._when(end, all_day, clear_other=True)
        for name in ("location", "description"):
            if name in fields:
                body[name] = getattr(changes, name) or ""  # "" clears the field
        if changes.attendees is not None:
            body["attendees"] = [_attendee(value) for value in changes.attendees]
        item = self._client.call(
            "calendar",
            "events.patch",
            self._call(_event_item(calendar_id, event_id)),
            calendarId=calendar_id,
            eventId=event_id,
            body=body,
            sendUpdates=self._send_updates,
        )
        return self._event(item, calendar_id)

    def delete_event(self, calendar_id: str, event_id: str) -> None:
        self._client.call(
            "calendar",
            "events.delete",
            self._call(_event_item(calendar_id, event_id)),
            calendarId=calendar_id,
            eventId=event_id,
            sendUpdates=self._send_updates,
        )

    def busy(self, calendar_id: str, *, time_min: datetime, time_max: datetime) -> list[TimeRange]:
        """Timed events that block time: not all-day, not marked free, not declined by you."""
        events = self._client.collect(
            "calendar",
            "events.list",
            self._call(f"calendar {calendar_id!r}"),
            items="items",
            limit=MAX_EVENTS,
            page_size=PAGE_SIZE,
            calendarId=calendar_id,
            timeMin=time_min.isoformat(),
            timeMax=time_max.isoformat(),
            singleEvents=True,
            orderBy="startTime",
        )
        taken = []
        for item in events:
            if (
                item.get("status") == "cancelled"
                or "date" in item.get("start", {})
                or item.get("transparency") == "transparent"
                or any(
                    a.get("self") and a.get("responseStatus") == "declined" for a in item.get("attendees", [])
                )
            ):
                continue
            taken.append(TimeRange(start=self._moment(item["start"]), end=self._moment(item["end"])))
        return taken

    def _call(self, item: str) -> Call:
        return Call(SERVICE, item, _FIELDS)

    def _when(self, moment: datetime, all_day: bool, *, clear_other: bool = False) -> dict[str, Any]:
        if all_day:
            when: dict[str, Any] = {"date": moment.astimezone(self._zone).date().isoformat()}
            if clear_other:
                when.update(dateTime=None, timeZone=None)  # a PATCH merges; null removes the old kind
            return when
        when = {"dateTime": moment.astimezone(self._zone).isoformat(), "timeZone": self._timezone}
        if clear_other:
            when["date"] = None
        return when

    def _moment(self, when: dict[str, Any]) -> datetime:
        if "date" in when and "dateTime" not in when:
            return localize(datetime.combine(date.fromisoformat(when["date"]), time()), self._zone)
        return datetime.fromisoformat(when["dateTime"])

    def _event(self, item: dict[str, Any], calendar_id: str) -> Event:
        start = item.get("start", {})
        return Event(
            id=item["id"],
            calendar_id=calendar_id,
            title=item.get("summary", ""),
            start=self._moment(start),
            end=self._moment(item.get("end", start)),
            all_day="date" in start and "dateTime" not in start,
            location=item.get("location") or None,
            description=item.get("description") or None,
            attendees=[
                _shown_attendee(a)
                for a in item.get("attendees", [])
                if not (a.get("self") and a.get("organizer")) and a.get("email")
            ],
            recurring_event_id=item.get("recurringEventId"),
        )


def _event_item(calendar_id: str, event_id: str) -> str:
    return f"event {event_id!r} in calendar {calendar_id!r}"


def _check_times(start: datetime, end: datetime) -> None:
    if end <= start:
        raise ToolInputError("the event must end after it starts", field="end")


def _attendee(value: str) -> dict[str, str]:
    name, address = parseaddr(value)
    return {"email": address, "displayName": name} if name else {"email": address}


def _shown_attendee(attendee: dict[str, Any]) -> str:
    name = attendee.get("displayName")
    return formataddr((name, attendee["email"])) if name else str(attendee["email"])

"""The calendar tools on Google Calendar v3: the exact requests, and what the model gets back."""

from __future__ import annotations

from typing import Any

import pytest

from gateway.errors import NotFound, ToolInputError

from .conftest import GoogleWorkspace

EVENTS = "/calendar/v3/calendars/primary/events"


def event(event_id: str = "e1", **fields: Any) -> dict[str, Any]:
    """An events resource as Google returns it, with the usual noise a model does not need."""
    base: dict[str, Any] = {
        "kind": "calendar#event",
        "etag": '"3380000000000000"',
        "id": event_id,
        "status": "confirmed",
        "htmlLink": f"https://www.google.com/calendar/event?eid={event_id}",
        "created": "2025-03-01T08:00:00.000Z",
        "updated": "2025-03-01T08:00:00.000Z",
        "summary": "Design review",
        "creator": {"email": "you@example.com", "self": True},
        "organizer": {"email": "you@example.com", "self": True},
        "start": {"dateTime": "2025-03-06T15:00:00+01:00", "timeZone": "Europe/Berlin"},
        "end": {"dateTime": "2025-03-06T16:00:00+01:00", "timeZone": "Europe/Berlin"},
        "iCalUID": f"{event_id}@google.com",
        "sequence": 0,
        "reminders": {"useDefault": True},
        "eventType": "default",
    }
    return base | fields


def test_list_calendars_reads_every_page_primary_first(gws: GoogleWorkspace) -> None:
    gws.google.reply(
        {
            "items": [
                {"id": "team@group.calendar.google.com", "summary": "Team", "timeZone": "Europe/Paris"}
            ],
            "nextPageToken": "p2",
        }
    )
    gws.google.reply(
        {
            "items": [
                {
                    "id": "you@example.com",
                    "summary": "you@example.com",
                    "summaryOverride": "Me",
                    "timeZone": "Europe/Berlin",
                    "primary": True,
                }
            ]
        }
    )
    result = gws.call("calendar_list_calendars")
    assert result == {
        "calendars": [
            {"id": "you@example.com", "name": "Me", "time_zone": "Europe/Berlin", "primary": True},
            {
                "id": "team@group.calendar.google.com",
                "name": "Team",
                "time_zone": "Europe/Paris",
                "primary": False,
            },
        ]
    }
    first, second = gws.google.sent
    assert (first.method, first.path, first.query) == (
        "GET",
        "/calendar/v3/users/me/calendarList",
        {"maxResults": ["250"]},
    )
    assert second.query == {"maxResults": ["250"], "pageToken": ["p2"]}


def test_list_events_sends_the_resolved_range_as_rfc3339_and_trims_each_event(gws: GoogleWorkspace) -> None:
    recurring = event(
        "e2_20250307",
        summary="Standup",
        recurringEventId="e2",
        start={"dateTime": "2025-03-07T09:00:00Z"},
        end={"dateTime": "2025-03-07T09:15:00Z"},
    )
    gws.google.reply(
        {
            "kind": "calendar#events",
            "timeZone": "Europe/Berlin",
            "items": [event(location="Room 4"), recurring],
        }
    )
    result = gws.call("calendar_list_events", start="today", end="friday", query="review", max_results=5)
    request = gws.google.only()
    assert (request.method, request.path) == ("GET", EVENTS)
    assert request.query == {
        "timeMin": ["2025-03-05T00:00:00+01:00"],
        "timeMax": ["2025-03-08T00:00:00+01:00"],
        "singleEvents": ["true"],
        "orderBy": ["startTime"],
        "q": ["review"],
        "maxResults": ["6"],
    }
    assert result["events"] == [
        {
            "title": "Design review",
            "start": "2025-03-06T15:00:00+01:00",
            "end": "2025-03-06T16:00:00+01:00",
            "all_day": False,
            "location": "Room 4",
            "attendees": [],
            "id": "e1",
            "calendar_id": "primary",
        },
        {
            "title": "Standup",
            "start": "2025-03-07T10:00:00+01:00",
            "end": "2025-03-07T10:15:00+01:00",
            "all_day": False,
            "attendees": [],
            "id": "e2_20250307",
            "calendar_id": "primary",
            "recurring_event_id": "e2",
        },
    ]
    assert result["more"] is False


def test_list_events_pages_until_one_more_than_asked_and_says_there_is_more(gws: GoogleWorkspace) -> None:
    gws.google.reply({"items": [event("a"), event("b")], "nextPageToken": "t"}).reply({"items": [event("c")]})
    result = gws.call("calendar_list_events", max_results=2)
    assert [e["id"] for e in result["events"]] == ["a", "b"] and result["more"] is True
    assert gws.google.sent[1].query["pageToken"] == ["t"] and gws.google.sent[1].query["maxResults"] == ["1"]


def test_get_event_reads_all_day_dates_as_local_midnights_and_names_guests(gws: GoogleWorkspace) -> None:
    gws.google.reply(
        event(
            start={"date": "2025-03-10"},
            end={"date": "2025-03-12"},
            attendees=[
                {"email": "you@example.com", "organizer": True, "self": True, "responseStatus": "accepted"},
                {"email": "ana@example.com", "displayName": "Ana Ruiz", "responseStatus": "needsAction"},
                {"email": "bo@example.com", "responseStatus": "declined"},
            ],
        )
    )
    result = gws.call("calendar_get_event", event_id="e1")
    assert gws.google.only().path == f"{EVENTS}/e1"
    assert result["start"] == "2025-03-10T00:00:00+01:00" and result["end"] == "2025-03-12T00:00:00+01:00"
    assert result["all_day"] is True
    assert result["attendees"] == ["Ana Ruiz <ana@example.com>", "bo@example.com"]


def test_a_cancelled_event_is_not_found(gws: GoogleWorkspace) -> None:
    gws.google.reply(event(status="cancelled"))
    with pytest.raises(NotFound, match="event 'e1' in calendar 'primary'"):
        gws.call("calendar_get_event", event_id="e1")


def test_create_event_posts_rfc3339_in_the_workspace_zone_and_invites_guests(gws: GoogleWorkspace) -> None:
    gws.google.reply(
        event(attendees=[{"email": "ana@example.com", "responseStatus": "needsAction"}], location="Room 4")
    )
    result = gws.call(
        "calendar_create_event",
        title="Design review",
        start="tomorrow 3pm",
        duration="1h",
        location="Room 4",
        attendees=["ana@example.com"],
    )
    request = gws.google.only()
    assert (request.method, request.path, request.query) == ("POST", EVENTS, {"sendUpdates": ["all"]})
    assert request.body == {
        "summary": "Design review",
        "start": {"dateTime": "2025-03-06T15:00:00+01:00", "timeZone": "Europe/Berlin"},
        "end": {"dateTime": "2025-03-06T16:00:00+01:00", "timeZone": "Europe/Berlin"},
        "location": "Room 4",
        "attendees": [{"email": "ana@example.com"}],
    }
    assert result["id"] == "e1" and result["attendees"] == ["ana@example.com"]


def test_create_an_all_day_event_sends_dates_with_an_exclusive_end(gws: GoogleWorkspace) -> None:
    gws.google.reply(event(start={"date": "2025-03-10"}, end={"date": "2025-03-12"}))
    gws.call(
        "calendar_create_event",
        title="Offsite",
        start="2025-03-10",
        end="2025-03-11",
        all_day=True,
        attendees=["Ana Ruiz <ana@example.com>"],
    )
    assert gws.google.only().body == {
        "summary": "Offsite",
        "start": {"date": "2025-03-10"},
        "end": {"date": "2025-03-12"},
        "attendees": [{"email": "ana@example.com", "displayName": "Ana Ruiz"}],
    }


def test_a_start_without_a_time_creates_an_all_day_event_on_google(gws: GoogleWorkspace) -> None:
    gws.google.reply(event(start={"date": "2025-03-11"}, end={"date": "2025-03-12"}))
    result = gws.call("calendar_create_event", title="Offsite", start="next tuesday")
    assert gws.google.only().body == {
        "summary": "Offsite",
        "start": {"date": "2025-03-11"},
        "end": {"date": "2025-03-12"},
    }
    assert result["all_day"] is True and result["read_as"] == [
        "start 'next tuesday' read as an all-day event on Tuesday 2025-03-11 (no time given)"
    ]


def test_update_event_reads_the_event_then_patches_only_what_changed(gws: GoogleWorkspace) -> None:
    gws.google.reply(event()).reply(
        event(start={"dateTime": "2025-03-07T10:00:00+01:00"}, end={"dateTime": "2025-03-07T11:00:00+01:00"})
    )
    result = gws.call("calendar_update_event", event_id="e1", start="friday 10am", location="")
    read, patch = gws.google.sent
    assert (read.method, read.path) == ("GET", f"{EVENTS}/e1")
    assert (patch.method, patch.path, patch.query) == ("PATCH", f"{EVENTS}/e1", {"sendUpdates": ["all"]})
    assert patch.body == {
        "start": {"dateTime": "2025-03-07T10:00:00+01:00", "timeZone": "Europe/Berlin", "date": None},
        "end": {"dateTime": "2025-03-07T11:00:00+01:00", "timeZone": "Europe/Berlin", "date": None},
        "location": "",
    }
    assert result["start"] == "2025-03-07T10:00:00+01:00"


def test_making_an_event_all_day_clears_its_times(gws: GoogleWorkspace) -> None:
    gws.google.reply(event()).reply(event(start={"date": "2025-03-06"}, end={"date": "2025-03-07"}))
    gws.call("calendar_update_event", event_id="e1", all_day=True, title="Review day")
    assert gws.google.sent[1].body == {
        "summary": "Review day",
        "start": {"date": "2025-03-06", "dateTime": None, "timeZone": None},
        "end": {"date": "2025-03-07", "dateTime": None, "timeZone": None},
    }


def test_a_title_only_update_needs_no_read(gws: GoogleWorkspace) -> None:
    gws.google.reply(event(summary="Renamed"))
    assert (
        gws.call("calendar_update_event", event_id="e1", title="Renamed", attendees=[])["title"] == "Renamed"
    )
    assert gws.google.only().body == {"summary": "Renamed", "attendees": []}


def test_delete_event_notifies_guests_and_a_gone_event_is_not_found(gws: GoogleWorkspace) -> None:
    gws.google.empty().fail(410, "deleted", "Resource has been deleted")
    assert gws.call("calendar_delete_event", event_id="e1") == {"deleted": True, "event_id": "e1"}
    request = gws.google.sent[0]
    assert (request.method, request.path, request.query) == (
        "DELETE",
        f"{EVENTS}/e1",
        {"sendUpdates": ["all"]},
    )
    with pytest.raises(NotFound):
        gws.call("calendar_delete_event", event_id="e1")


def test_find_free_time_counts_only_events_that_block_time(gws: GoogleWorkspace) -> None:
    gws.google.reply(
        {
            "items": [
                event(
                    "busy",
                    start={"dateTime": "2025-03-06T09:00:00+01:00"},
                    end={"dateTime": "2025-03-06T12:00:00+01:00"},
                ),
                event("allday", start={"date": "2025-03-06"}, end={"date": "2025-03-07"}),
                event(
                    "free",
                    transparency="transparent",
                    start={"dateTime": "2025-03-06T13:00:00+01:00"},
                    end={"dateTime": "2025-03-06T17:00:00+01:00"},
                ),
                event(
                    "declined",
                    start={"dateTime": "2025-03-06T12:00:00+01:00"},
                    end={"dateTime": "2025-03-06T13:00:00+01:00"},
                    attendees=[{"email": "you@example.com", "self": True, "responseStatus": "declined"}],
                ),
            ]
        }
    )
    result = gws.call("calendar_find_free_time", start="tomorrow", end="tomorrow", duration="1h")
    request = gws.google.only()
    assert request.path == EVENTS and request.query["singleEvents"] == ["true"]
    assert request.query["timeMin"] == ["2025-03-06T00:00:00+01:00"]
    assert result["slots"] == [
        {"start": "2025-03-06T12:00:00+01:00", "end": "2025-03-06T17:00:00+01:00", "minutes": 300}
    ]


def test_quick_add_creates_the_parsed_event(gws: GoogleWorkspace) -> None:
    gws.google.reply(event(summary="Lunch with Ana"))
    gws.call("calendar_quick_add", text="Lunch with Ana tomorrow at noon for 1 hour")
    assert gws.google.only().body == {
        "summary": "Lunch with Ana",
        "start": {"dateTime": "2025-03-06T12:00:00+01:00", "timeZone": "Europe/Berlin"},
        "end": {"dateTime": "2025-03-06T13:00:00+01:00", "timeZone": "Europe/Berlin"},
    }


def test_a_calendar_id_is_sent_escaped_in_the_path(gws: GoogleWorkspace) -> None:
    gws.google.reply({"items": []})
    gws.call("calendar_list_events", calendar_id="team@group.calendar.google.com")
    assert gws.google.only().path == "/calendar/v3/calendars/team%40group.calendar.google.com/events"


def test_a_bad_time_range_from_google_names_the_start_field(gws: GoogleWorkspace) -> None:
    gws.google.fail(400, "badRequest", "Bad Request", location="timeMin")
    with pytest.raises(ToolInputError) as bad:
        gws.call("calendar_list_events")
    assert bad.value.field == "start"

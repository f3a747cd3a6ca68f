"""Calendar tools, called through the catalog on a real workspace file (Europe/Berlin, Wed 2025-03-05 10:00)."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

import pytest
from pydantic import ValidationError

from gateway.errors import NotFound, ToolInputError

if TYPE_CHECKING:
    from tests.services.conftest import MakeWorkspace, Workspace


def _create(workspace: Workspace, **arguments: object) -> dict[str, object]:
    event: dict[str, object] = workspace.call("calendar_create_event", **arguments)
    return event


def test_list_calendars_shows_the_primary_calendar_in_the_workspace_timezone(workspace: Workspace) -> None:
    calendars = workspace.call("calendar_list_calendars")["calendars"]
    assert [(c["id"], c["primary"], c["time_zone"]) for c in calendars] == [
        ("primary", True, "Europe/Berlin")
    ]


def test_a_created_event_can_be_read_back_with_its_id(workspace: Workspace) -> None:
    created = _create(
        workspace,
        title="Design review",
        start="tomorrow 3pm",
        duration="1h30",
        location="Room 4",
        attendees=["Ana Ruiz <ana@example.com>"],
    )
    fetched = workspace.call("calendar_get_event", event_id=created["id"])
    assert fetched == created
    assert (fetched["start"], fetched["end"]) == ("2025-03-06T15:00:00+01:00", "2025-03-06T16:30:00+01:00")
    assert fetched["attendees"] == ["Ana Ruiz <ana@example.com>"]
    assert fetched["all_day"] is False


def test_an_event_without_end_or_duration_lasts_30_minutes(workspace: Workspace) -> None:
    created = _create(workspace, title="Call", start="2025-03-06T09:00")
    assert created["end"] == "2025-03-06T09:30:00+01:00"


def test_iso_start_with_another_offset_comes_back_in_the_workspace_timezone(workspace: Workspace) -> None:
    created = _create(
        workspace, title="Call", start="2025-03-06T09:00:00-05:00", end="2025-03-06T10:00:00-05:00"
    )
    assert (created["start"], created["end"]) == ("2025-03-06T15:00:00+01:00", "2025-03-06T16:00:00+01:00")


def test_end_and_duration_together_are_refused(workspace: Workspace) -> None:
    with pytest.raises(ToolInputError) as caught:
        _create(workspace, title="Call", start="tomorrow 9am", end="tomorrow 10am", duration="1h")
    assert caught.value.field == "duration"


def test_an_event_ending_before_it_starts_is_refused(workspace: Workspace) -> None:
    with pytest.raises(ToolInputError) as caught:
        _create(workspace, title="Call", start="tomorrow 10am", end="tomorrow 9am")
    assert caught.value.field == "end"


def test_an_unreadable_start_names_the_start_field(workspace: Workspace) -> None:
    with pytest.raises(ToolInputError) as caught:
        _create(workspace, title="Call", start="whenever suits")
    assert caught.value.field == "start"


def test_an_attendee_that_is_not_an_email_address_is_refused(workspace: Workspace) -> None:
    with pytest.raises(ToolInputError) as caught:
        _create(workspace, title="Call", start="tomorrow 9am", attendees=["ana at example dot com"])
    assert caught.value.field == "attendees"


def test_unknown_parameters_are_refused_by_the_params_model(workspace: Workspace) -> None:
    with pytest.raises(ValidationError):
        _create(workspace, title="Call", start="tomorrow 9am", colour="red")


def test_an_all_day_event_spans_whole_local_days_with_an_inclusive_last_day(workspace: Workspace) -> None:
    created = _create(workspace, title="Offsite", start="friday", end="saturday", all_day=True)
    assert (created["start"], created["end"]) == ("2025-03-07T00:00:00+01:00", "2025-03-09T00:00:00+01:00")
    assert created["all_day"] is True


def test_list_events_defaults_to_the_next_seven_days(workspace: Workspace) -> None:
    _create(workspace, title="Soon", start="tomorrow 9am")
    _create(workspace, title="Later", start="in 8 days")
    _create(workspace, title="Earlier today", start="today 8am")
    listed = workspace.call("calendar_list_events")
    assert [e["title"] for e in listed["events"]] == ["Soon"]
    assert (listed["start"], listed["end"]) == ("2025-03-05T10:00:00+01:00", "2025-03-12T10:00:00+01:00")
    assert listed["more"] is False


def test_list_events_with_a_bare_end_day_includes_that_whole_day_and_filters_text(
    workspace: Workspace,
) -> None:
    _create(workspace, title="Friday drinks", start="friday 6pm", location="The Anchor")
    _create(workspace, title="Saturday hike", start="saturday 9am")
    _create(workspace, title="Standup", start="thursday 9am")
    listed = workspace.call("calendar_list_events", start="today", end="friday")
    assert [e["title"] for e in listed["events"]] == ["Standup", "Friday drinks"]
    searched = workspace.call("calendar_list_events", start="today", end="next week", query="anchor")
    assert [e["title"] for e in searched["events"]] == ["Friday drinks"]


def test_list_events_says_more_when_max_results_cuts_the_list(workspace: Workspace) -> None:
    for hour in (9, 10, 11):
        _create(workspace, title=f"Meeting {hour}", start=f"tomorrow {hour}:00")
    listed = workspace.call("calendar_list_events", max_results=2)
    assert [e["title"] for e in listed["events"]] == ["Meeting 9", "Meeting 10"]
    assert listed["more"] is True


def test_a_range_ending_before_it_starts_is_refused(workspace: Workspace) -> None:
    with pytest.raises(ToolInputError) as caught:
        workspace.call("calendar_list_events", start="friday", end="thursday 9am")
    assert caught.value.field == "end"


def test_update_changes_only_the_fields_given(workspace: Workspace) -> None:
    created = _create(workspace, title="Review", start="tomorrow 3pm", description="Agenda in doc")
    updated = workspace.call("calendar_update_event", event_id=created["id"], location="Room 7")
    assert updated == {**created, "location": "Room 7"}
    assert workspace.call("calendar_get_event", event_id=created["id"]) == updated


def test_moving_the_start_keeps_the_length(workspace: Workspace) -> None:
    created = _create(workspace, title="Review", start="tomorrow 3pm", duration="45m")
    moved = workspace.call("calendar_update_event", event_id=created["id"], start="friday 10am")
    assert (moved["start"], moved["end"]) == ("2025-03-07T10:00:00+01:00", "2025-03-07T10:45:00+01:00")


def test_an_empty_string_clears_the_location(workspace: Workspace) -> None:
    created = _create(workspace, title="Review", start="tomorrow 3pm", location="Room 4")
    cleared = workspace.call("calendar_update_event", event_id=created["id"], location="")
    assert "location" not in cleared


def test_an_update_with_nothing_to_change_is_refused(workspace: Workspace) -> None:
    created = _create(workspace, title="Review", start="tomorrow 3pm")
    with pytest.raises(ToolInputError):
        workspace.call("calendar_update_event", event_id=created["id"])


def test_a_timed_event_can_become_all_day(workspace: Workspace) -> None:
    created = _create(workspace, title="Trip", start="friday 3pm")
    updated = workspace.call("calendar_update_event", event_id=created["id"], all_day=True)
    assert (updated["start"], updated["end"], updated["all_day"]) == (
        "2025-03-07T00:00:00+01:00",
        "2025-03-08T00:00:00+01:00",
        True,
    )


def test_a_deleted_event_is_gone(workspace: Workspace) -> None:
    created = _create(workspace, title="Cancelled", start="tomorrow 9am")
    assert workspace.call("calendar_delete_event", event_id=created["id"]) == {
        "deleted": True,
        "event_id": created["id"],
    }
    with pytest.raises(NotFound):
        workspace.call("calendar_get_event", event_id=created["id"])
    with pytest.raises(NotFound):
        workspace.call("calendar_delete_event", event_id=created["id"])


def test_an_unknown_calendar_is_not_found(workspace: Workspace) -> None:
    with pytest.raises(NotFound, match="work"):
        workspace.call("calendar_list_events", calendar_id="work")


def _slots(result: dict[str, list[dict[str, str]]]) -> list[tuple[str, str]]:
    return [(s["start"][11:16], s["end"][11:16]) for s in result["slots"]]


def test_free_time_respects_existing_events_and_working_hours(workspace: Workspace) -> None:
    _create(workspace, title="Standup", start="thursday 10am", end="thursday 11am")
    _create(workspace, title="Workshop", start="thursday 1pm", end="thursday 3pm")
    _create(workspace, title="Overlapping", start="thursday 2pm", end="thursday 3:30pm")
    found = workspace.call("calendar_find_free_time", start="thursday", end="thursday")
    assert _slots(found) == [("09:00", "10:00"), ("11:00", "13:00"), ("15:30", "17:00")]
    assert [s["minutes"] for s in found["slots"]] == [60, 120, 90]


def test_free_time_skips_gaps_shorter_than_the_duration(workspace: Workspace) -> None:
    _create(workspace, title="Standup", start="thursday 10am", end="thursday 11am")
    found = workspace.call("calendar_find_free_time", start="thursday", end="thursday", duration="2h")
    assert _slots(found) == [("11:00", "17:00")]


def test_free_time_starts_now_and_honours_custom_working_hours(workspace: Workspace) -> None:
    found = workspace.call("calendar_find_free_time", end="today", work_start="8am", work_end="18:30")
    assert _slots(found) == [("10:00", "18:30")]


def test_free_time_skips_weekends_unless_asked(workspace: Workspace) -> None:
    weekend = {"start": "saturday", "end": "sunday"}
    assert workspace.call("calendar_find_free_time", **weekend)["slots"] == []
    both = workspace.call("calendar_find_free_time", include_weekends=True, **weekend)
    assert [s["start"][:10] for s in both["slots"]] == ["2025-03-08", "2025-03-09"]


def test_all_day_events_do_not_block_free_time(workspace: Workspace) -> None:
    _create(workspace, title="Conference", start="thursday", all_day=True)
    found = workspace.call("calendar_find_free_time", start="thursday", end="thursday")
    assert _slots(found) == [("09:00", "17:00")]


def test_working_hours_follow_the_wall_clock_across_dst(make_workspace: MakeWorkspace) -> None:
    workspace = make_workspace(now=datetime.fromisoformat("2025-03-27T08:00:00+01:00"))
    found = workspace.call("calendar_find_free_time", start="friday", end="monday")
    assert [(s["start"], s["end"]) for s in found["slots"]] == [
        ("2025-03-28T09:00:00+01:00", "2025-03-28T17:00:00+01:00"),
        ("2025-03-31T09:00:00+02:00", "2025-03-31T17:00:00+02:00"),
    ]


def test_working_hours_that_end_before_they_start_are_refused(workspace: Workspace) -> None:
    with pytest.raises(ToolInputError) as caught:
        workspace.call("calendar_find_free_time", work_start="17:00", work_end="09:00")
    assert caught.value.field == "work_end"


def test_quick_add_turns_a_sentence_into_a_titled_event(workspace: Workspace) -> None:
    created = workspace.call("calendar_quick_add", text="Lunch with Ana tomorrow at noon for 1 hour")
    assert (created["title"], created["start"], created["end"]) == (
        "Lunch with Ana",
        "2025-03-06T12:00:00+01:00",
        "2025-03-06T13:00:00+01:00",
    )
    assert workspace.call("calendar_get_event", event_id=created["id"]) == created


def test_quick_add_without_a_length_lasts_30_minutes(workspace: Workspace) -> None:
    created = workspace.call("calendar_quick_add", text="Call mom at 5pm")
    assert (created["title"], created["start"], created["end"]) == (
        "Call mom",
        "2025-03-05T17:00:00+01:00",
        "2025-03-05T17:30:00+01:00",
    )


def test_quick_add_with_only_a_day_makes_an_all_day_event(workspace: Workspace) -> None:
    created = workspace.call("calendar_quick_add", text="Dentist friday")
    assert (created["title"], created["all_day"], created["start"]) == (
        "Dentist",
        True,
        "2025-03-07T00:00:00+01:00",
    )


def test_quick_add_keeps_numbers_that_are_not_dates_in_the_title(workspace: Workspace) -> None:
    created = workspace.call("calendar_quick_add", text="Standup in room 5 tomorrow 9am")
    assert (created["title"], created["start"]) == ("Standup in room 5", "2025-03-06T09:00:00+01:00")


@pytest.mark.parametrize("text", ["Lunch with Ana", "tomorrow at noon"])
def test_quick_add_needs_both_what_and_when(workspace: Workspace, text: str) -> None:
    with pytest.raises(ToolInputError) as caught:
        workspace.call("calendar_quick_add", text=text)
    assert caught.value.field == "text"

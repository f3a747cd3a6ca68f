"""Event dates as users mean them, through the calendar tools on a real workspace file (Europe/Berlin).

A start whose time has passed today looks forward, a day without a time is an all-day event (or keeps
the event's time of day when moving it), and every reading that is not literal is said in `read_as`.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

import pytest

from gateway.errors import ToolInputError

if TYPE_CHECKING:
    from tests.services.conftest import MakeWorkspace, Workspace

BERLIN = ZoneInfo("Europe/Berlin")
WEDNESDAY_4PM = datetime(2025, 3, 5, 16, 0, tzinfo=BERLIN)


@pytest.fixture
def evening(make_workspace: MakeWorkspace) -> Workspace:
    """The workspace on Wednesday 2025-03-05 at 16:00, after 15:00 has passed."""
    return make_workspace(now=WEDNESDAY_4PM)


def _create(workspace: Workspace, **arguments: object) -> dict[str, object]:
    event: dict[str, object] = workspace.call("calendar_create_event", title="Review", **arguments)
    return event


def _times(event: dict[str, object]) -> tuple[object, object, object]:
    return event["start"], event["end"], event["all_day"]


def _stored(workspace: Workspace, event: dict[str, object]) -> tuple[object, object, object]:
    return _times(workspace.call("calendar_get_event", event_id=event["id"]))


def test_a_weekday_with_a_time_that_has_passed_today_is_next_weeks_day(evening: Workspace) -> None:
    created = _create(evening, start="wednesday 3pm")
    assert _times(created) == ("2025-03-12T15:00:00+01:00", "2025-03-12T15:30:00+01:00", False)
    assert _stored(evening, created) == _times(created)
    assert created["read_as"] == [
        "start 'wednesday 3pm' read as Wednesday 2025-03-12 15:00 (today's 15:00 has passed)"
    ]


def test_a_bare_time_that_has_passed_is_tomorrow_and_the_end_moves_with_it(evening: Workspace) -> None:
    created = _create(evening, start="3pm", end="4pm")
    assert _times(created) == ("2025-03-06T15:00:00+01:00", "2025-03-06T16:00:00+01:00", False)
    assert created["read_as"] == [
        "start '3pm' read as Thursday 2025-03-06 15:00 (today's 15:00 has passed)",
        "end '4pm' read as Thursday 2025-03-06 16:00 (moved with the start)",
    ]


def test_a_start_that_names_today_stays_today_and_a_time_still_ahead_needs_no_word(
    evening: Workspace,
) -> None:
    said_today = _create(evening, start="today 3pm")
    ahead = _create(evening, start="5pm")
    assert said_today["start"] == "2025-03-05T15:00:00+01:00" and "read_as" not in said_today
    assert ahead["start"] == "2025-03-05T17:00:00+01:00" and "read_as" not in ahead


def test_a_passed_weekday_time_keeps_the_wall_clock_across_spring_forward(
    make_workspace: MakeWorkspace,
) -> None:
    workspace = make_workspace(now=datetime(2025, 3, 23, 16, 0, tzinfo=BERLIN))  # Sunday; DST on the 30th
    created = _create(workspace, start="sunday 3pm", duration="1h")
    assert _times(created) == ("2025-03-30T15:00:00+02:00", "2025-03-30T16:00:00+02:00", False)


def test_a_day_without_a_time_makes_an_all_day_event(workspace: Workspace) -> None:
    created = _create(workspace, start="next tuesday")
    assert _times(created) == ("2025-03-11T00:00:00+01:00", "2025-03-12T00:00:00+01:00", True)
    assert _stored(workspace, created) == _times(created)
    assert created["read_as"] == [
        "start 'next tuesday' read as an all-day event on Tuesday 2025-03-11 (no time given)"
    ]
    iso = _create(workspace, start="2025-03-14")
    assert _times(iso) == ("2025-03-14T00:00:00+01:00", "2025-03-15T00:00:00+01:00", True)


@pytest.mark.parametrize("length", [{"end": "saturday"}, {"duration": "2 days"}])
def test_a_day_without_a_time_spans_whole_days_to_an_end_day_or_for_days(
    workspace: Workspace, length: dict[str, str]
) -> None:
    created = _create(workspace, start="friday", **length)
    assert _times(created) == ("2025-03-07T00:00:00+01:00", "2025-03-09T00:00:00+01:00", True)


@pytest.mark.parametrize(
    "arguments",
    [
        {"duration": "1h"},
        {"end": "friday 5pm"},
        {"all_day": False},
    ],
)
def test_a_day_without_a_time_for_a_timed_event_is_refused_and_nothing_is_created(
    workspace: Workspace, arguments: dict[str, object]
) -> None:
    with pytest.raises(ToolInputError) as caught:
        _create(workspace, start="friday", **arguments)
    assert caught.value.field == "start"
    assert "no time" in caught.value.message and "'friday 10am'" in caught.value.message
    assert workspace.call("calendar_list_events", start="today", end="next week")["events"] == []


def test_next_weekday_in_the_same_week_says_which_day_it_is(workspace: Workspace) -> None:
    created = _create(workspace, start="next friday 3pm")
    assert created["start"] == "2025-03-07T15:00:00+01:00"
    assert created["read_as"] == [
        "start 'next friday 3pm' read as Friday 2025-03-07 15:00 (this week's Friday; next week's is 2025-03-14)"
    ]
    plain = _create(workspace, start="friday 3pm")
    assert "read_as" not in plain


def test_moving_a_timed_event_to_a_day_without_a_time_keeps_its_time_of_day(workspace: Workspace) -> None:
    created = _create(workspace, start="tomorrow 3pm", duration="45m")
    moved = workspace.call("calendar_update_event", event_id=created["id"], start="friday")
    assert _times(moved) == ("2025-03-07T15:00:00+01:00", "2025-03-07T15:45:00+01:00", False)
    assert _stored(workspace, created) == _times(moved)
    assert moved["read_as"] == [
        "start 'friday' read as Friday 2025-03-07 15:00 (no time given; the event keeps its time of day)"
    ]


def test_moving_an_event_to_a_weekday_time_that_has_passed_today_is_next_week(evening: Workspace) -> None:
    created = _create(evening, start="friday 10am", duration="1h")
    moved = evening.call("calendar_update_event", event_id=created["id"], start="wednesday 3pm")
    assert _times(moved) == ("2025-03-12T15:00:00+01:00", "2025-03-12T16:00:00+01:00", False)
    assert "today's 15:00 has passed" in moved["read_as"][0]


def test_moving_an_all_day_event_to_a_time_makes_it_timed_and_says_so(workspace: Workspace) -> None:
    created = _create(workspace, start="thursday")
    moved = workspace.call("calendar_update_event", event_id=created["id"], start="friday 9am")
    assert _times(moved) == ("2025-03-07T09:00:00+01:00", "2025-03-07T09:30:00+01:00", False)
    assert moved["read_as"] == [
        "start 'friday 9am' read as Friday 2025-03-07 09:00 (it has a time, so the event is no longer all-day)"
    ]


@pytest.mark.parametrize("arguments", [{"all_day": False}, {"all_day": False, "start": "friday"}])
def test_an_all_day_event_made_timed_without_a_time_is_refused_and_left_as_it_was(
    workspace: Workspace, arguments: dict[str, object]
) -> None:
    created = _create(workspace, start="thursday")
    with pytest.raises(ToolInputError) as caught:
        workspace.call("calendar_update_event", event_id=created["id"], **arguments)
    assert caught.value.field == "start" and "time of day" in caught.value.message
    assert _stored(workspace, created) == _times(created)


def test_quick_add_with_a_time_that_has_passed_is_tomorrow_and_says_so(evening: Workspace) -> None:
    created = evening.call("calendar_quick_add", text="Call mom at 3pm")
    assert (created["title"], created["start"]) == ("Call mom", "2025-03-06T15:00:00+01:00")
    assert created["read_as"] == ["'at 3pm' read as Thursday 2025-03-06 15:00 (today's 15:00 has passed)"]


def test_quick_add_with_only_a_day_says_it_is_all_day_and_lasts_whole_days(workspace: Workspace) -> None:
    dentist = workspace.call("calendar_quick_add", text="Dentist friday")
    assert dentist["read_as"] == ["'friday' read as an all-day event on Friday 2025-03-07 (no time given)"]
    offsite = workspace.call("calendar_quick_add", text="Offsite friday for 2 days")
    assert _times(offsite) == ("2025-03-07T00:00:00+01:00", "2025-03-09T00:00:00+01:00", True)


def test_quick_add_with_only_a_day_and_a_length_in_hours_is_refused(workspace: Workspace) -> None:
    with pytest.raises(ToolInputError) as caught:
        workspace.call("calendar_quick_add", text="Dentist friday for 1 hour")
    assert caught.value.field == "text" and "'friday 10am'" in caught.value.message
    assert workspace.call("calendar_list_events", start="today", end="next week")["events"] == []


def test_listing_from_a_weekday_includes_today_even_after_its_times_have_passed(evening: Workspace) -> None:
    _create(evening, start="2025-03-05T15:00")
    listed = evening.call("calendar_list_events", start="wednesday", end="wednesday")
    assert (listed["start"], listed["end"]) == ("2025-03-05T00:00:00+01:00", "2025-03-06T00:00:00+01:00")
    assert [e["start"] for e in listed["events"]] == ["2025-03-05T15:00:00+01:00"]

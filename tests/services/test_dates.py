"""services.dates: ISO and everyday phrases, in several timezones, across DST changes."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest

from gateway.errors import ToolInputError, UserError
from services.dates import (
    MAX_TEXT_LENGTH,
    localize,
    parse_date,
    parse_datetime,
    parse_duration,
    parse_range_end,
    parse_time,
    parse_when,
    spoken,
    zone_of,
)

BERLIN = ZoneInfo("Europe/Berlin")
NEW_YORK = ZoneInfo("America/New_York")
KOLKATA = ZoneInfo("Asia/Kolkata")
LORD_HOWE = ZoneInfo("Australia/Lord_Howe")
WEDNESDAY = datetime(2025, 3, 5, 10, 0, tzinfo=BERLIN)


def _berlin(text: str) -> str:
    return parse_datetime(text, tz=BERLIN, now=WEDNESDAY).isoformat()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("today", "2025-03-05T00:00:00+01:00"),
        ("tomorrow", "2025-03-06T00:00:00+01:00"),
        ("yesterday", "2025-03-04T00:00:00+01:00"),
        ("tomorrow 3pm", "2025-03-06T15:00:00+01:00"),
        ("Tomorrow 3PM", "2025-03-06T15:00:00+01:00"),
        ("tomorrow at 15:30", "2025-03-06T15:30:00+01:00"),
        ("next Friday", "2025-03-07T00:00:00+01:00"),
        ("friday 10am", "2025-03-07T10:00:00+01:00"),
        ("this friday", "2025-03-07T00:00:00+01:00"),
        ("10am on friday", "2025-03-07T10:00:00+01:00"),
        ("at 5pm tomorrow", "2025-03-06T17:00:00+01:00"),
        ("wednesday", "2025-03-05T00:00:00+01:00"),
        ("next wednesday", "2025-03-12T00:00:00+01:00"),
        ("last friday", "2025-02-28T00:00:00+01:00"),
        ("in 2 hours", "2025-03-05T12:00:00+01:00"),
        ("in 3 days", "2025-03-08T10:00:00+01:00"),
        ("in 30 minutes", "2025-03-05T10:30:00+01:00"),
        ("in 1h30", "2025-03-05T11:30:00+01:00"),
        ("2 days ago", "2025-03-03T10:00:00+01:00"),
        ("in 3 days at 9am", "2025-03-08T09:00:00+01:00"),
        ("noon", "2025-03-05T12:00:00+01:00"),
        ("midnight", "2025-03-06T00:00:00+01:00"),
        ("next week", "2025-03-10T00:00:00+01:00"),
        ("end of day", "2025-03-05T23:59:59+01:00"),
        ("end of day friday", "2025-03-07T23:59:59+01:00"),
        ("3pm", "2025-03-05T15:00:00+01:00"),
        ("3 p.m.", "2025-03-05T15:00:00+01:00"),
        ("9:15am", "2025-03-05T09:15:00+01:00"),
        ("tomorrow 12am", "2025-03-06T00:00:00+01:00"),
        ("tomorrow 12pm", "2025-03-06T12:00:00+01:00"),
        ("now", "2025-03-05T10:00:00+01:00"),
        ("March 20", "2025-03-20T00:00:00+01:00"),
        ("march 20 2pm", "2025-03-20T14:00:00+01:00"),
        ("2025/03/20", "2025-03-20T00:00:00+01:00"),
        ("2025-03-14", "2025-03-14T00:00:00+01:00"),
        ("2025-03-14T15:30", "2025-03-14T15:30:00+01:00"),
        ("2025-03-14 15:30", "2025-03-14T15:30:00+01:00"),
        ("2025-03-14T15:30:00+05:30", "2025-03-14T11:00:00+01:00"),
        ("2025-03-14T10:00:00Z", "2025-03-14T11:00:00+01:00"),
        ("Fri, 14 Mar 2025 10:00:00 +0000", "2025-03-14T11:00:00+01:00"),
        ("3pm UTC", "2025-03-05T16:00:00+01:00"),
    ],
)
def test_phrase_and_iso_forms_resolve_in_the_configured_timezone(text: str, expected: str) -> None:
    assert _berlin(text) == expected


def test_next_weekday_on_that_weekday_is_a_week_later_and_this_weekday_is_today() -> None:
    friday = datetime(2025, 3, 7, 8, 0, tzinfo=BERLIN)
    assert parse_date("next friday", tz=BERLIN, now=friday) == date(2025, 3, 14)
    assert parse_date("this friday", tz=BERLIN, now=friday) == date(2025, 3, 7)
    assert parse_date("friday", tz=BERLIN, now=friday) == date(2025, 3, 7)


def test_a_naive_now_is_wall_clock_time_in_the_timezone() -> None:
    naive = datetime(2025, 3, 5, 10, 0)
    assert (
        parse_datetime("in 2 hours", tz="Asia/Kolkata", now=naive).isoformat() == "2025-03-05T12:00:00+05:30"
    )


def test_a_now_in_another_zone_is_converted_before_today_is_decided() -> None:
    # 20:00 UTC on the 5th is already the 6th in Kolkata, so "today" is the 6th there.
    late_utc = datetime(2025, 3, 5, 20, 0, tzinfo=UTC)
    assert parse_datetime("today", tz=KOLKATA, now=late_utc).isoformat() == "2025-03-06T00:00:00+05:30"


def test_utc_iso_text_is_returned_in_kolkata_half_hour_offset() -> None:
    value = parse_datetime("2025-03-14T10:00:00Z", tz=KOLKATA, now=WEDNESDAY)
    assert value.isoformat() == "2025-03-14T15:30:00+05:30"


def test_tomorrow_3pm_is_wall_clock_time_across_dst() -> None:
    saturday = datetime(2025, 3, 8, 10, 0, tzinfo=NEW_YORK)  # the US springs forward on Sunday 9 March
    value = parse_datetime("tomorrow 3pm", tz=NEW_YORK, now=saturday)
    assert value.isoformat() == "2025-03-09T15:00:00-04:00"
    # 29 wall-clock hours later, one of which does not exist: 28 real hours.
    assert value.astimezone(UTC) - saturday.astimezone(UTC) == timedelta(hours=28)


def test_in_2_hours_is_real_elapsed_time_across_spring_forward() -> None:
    before = datetime(2025, 3, 9, 1, 30, tzinfo=NEW_YORK)
    value = parse_datetime("in 2 hours", tz=NEW_YORK, now=before)
    assert value.isoformat() == "2025-03-09T04:30:00-04:00"
    assert value.astimezone(UTC) - before.astimezone(UTC) == timedelta(hours=2)


def test_in_2_hours_is_real_elapsed_time_across_fall_back() -> None:
    before = datetime(2025, 11, 2, 0, 30, tzinfo=NEW_YORK)
    value = parse_datetime("in 2 hours", tz=NEW_YORK, now=before)
    assert value.isoformat() == "2025-11-02T01:30:00-05:00"  # the second 01:30
    assert value.astimezone(UTC) - before.astimezone(UTC) == timedelta(hours=2)


def test_in_3_days_keeps_the_wall_clock_time_across_berlin_spring_forward() -> None:
    friday = datetime(2025, 3, 28, 9, 0, tzinfo=BERLIN)
    assert parse_datetime("in 3 days", tz=BERLIN, now=friday).isoformat() == "2025-03-31T09:00:00+02:00"


def test_a_wall_time_inside_the_spring_forward_gap_moves_forward_by_the_gap() -> None:
    assert (
        parse_datetime("2025-03-09T02:30", tz=NEW_YORK, now=WEDNESDAY).isoformat()
        == "2025-03-09T03:30:00-04:00"
    )
    saturday = datetime(2025, 3, 8, 12, 0, tzinfo=NEW_YORK)
    assert (
        parse_datetime("tomorrow 2:30am", tz=NEW_YORK, now=saturday).isoformat()
        == "2025-03-09T03:30:00-04:00"
    )


def test_a_repeated_wall_time_on_the_fall_back_day_is_its_first_occurrence() -> None:
    value = parse_datetime("2025-11-02T01:30", tz=NEW_YORK, now=WEDNESDAY)
    assert value.utcoffset() == timedelta(hours=-4)
    berlin = parse_datetime("2025-10-26 02:30", tz=BERLIN, now=WEDNESDAY)
    assert berlin.utcoffset() == timedelta(hours=2)


def test_lord_howe_half_hour_dst_end_keeps_wall_clock_for_tomorrow() -> None:
    saturday = datetime(2025, 4, 5, 12, 0, tzinfo=LORD_HOWE)  # +11:00 until 02:00 on Sunday 6 April
    value = parse_datetime("tomorrow 9am", tz=LORD_HOWE, now=saturday)
    assert value.isoformat() == "2025-04-06T09:00:00+10:30"


def test_lord_howe_in_2_hours_across_the_half_hour_shift_is_two_real_hours() -> None:
    before = datetime(2025, 4, 6, 1, 0, tzinfo=LORD_HOWE)
    value = parse_datetime("in 2 hours", tz=LORD_HOWE, now=before)
    assert value.isoformat() == "2025-04-06T02:30:00+10:30"  # only 1.5 hours later on the wall clock
    assert value.astimezone(UTC) - before.astimezone(UTC) == timedelta(hours=2)


def test_lord_howe_spring_forward_gap_is_half_an_hour() -> None:
    value = parse_datetime("2025-10-05T02:15", tz=LORD_HOWE, now=WEDNESDAY)
    assert value.isoformat() == "2025-10-05T02:45:00+11:00"


def test_localize_matches_zoneinfo_outside_transitions() -> None:
    naive = datetime(2025, 7, 1, 12, 0)
    assert localize(naive, NEW_YORK) == naive.replace(tzinfo=NEW_YORK)
    assert localize(naive, NEW_YORK).utcoffset() == timedelta(hours=-4)


WEDNESDAY_4PM = datetime(2025, 3, 5, 16, 0, tzinfo=BERLIN)


def _upcoming(text: str, now: datetime = WEDNESDAY_4PM, tz: ZoneInfo = BERLIN) -> tuple[str, str | None]:
    when = parse_when(text, tz=tz, now=now, upcoming=True)
    return when.value.isoformat(), when.reason


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("wednesday 3pm", "2025-03-12T15:00:00+01:00"),
        ("Wed at 3pm", "2025-03-12T15:00:00+01:00"),
        ("this wednesday 15:00", "2025-03-12T15:00:00+01:00"),
        ("3pm on wednesday", "2025-03-12T15:00:00+01:00"),
        ("wednesday morning", "2025-03-12T09:00:00+01:00"),
        ("3pm", "2025-03-06T15:00:00+01:00"),
        ("at 15:30", "2025-03-06T15:30:00+01:00"),
        ("noon", "2025-03-06T12:00:00+01:00"),
    ],
)
def test_an_upcoming_start_whose_time_has_passed_today_moves_to_the_next_such_time(
    text: str, expected: str
) -> None:
    value, reason = _upcoming(text)
    assert value == expected
    assert reason is not None and "has passed" in reason


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("today 3pm", "2025-03-05T15:00:00+01:00"),
        ("3pm today", "2025-03-05T15:00:00+01:00"),
        ("last wednesday 3pm", "2025-02-26T15:00:00+01:00"),
        ("2025-03-05T15:00", "2025-03-05T15:00:00+01:00"),
        ("5pm", "2025-03-05T17:00:00+01:00"),
        ("4pm", "2025-03-05T16:00:00+01:00"),
        ("wednesday 5pm", "2025-03-05T17:00:00+01:00"),
        ("wednesday", "2025-03-05T00:00:00+01:00"),
        ("midnight", "2025-03-06T00:00:00+01:00"),
        ("in 2 hours", "2025-03-05T18:00:00+01:00"),
    ],
)
def test_an_upcoming_start_that_names_its_day_or_has_not_passed_stays_as_written(
    text: str, expected: str
) -> None:
    assert _upcoming(text) == (expected, None)


@pytest.mark.parametrize(
    ("text", "expected"), [("tonight", "2025-03-05T20:00:00+01:00"), ("eod", "2025-03-05T23:59:59+01:00")]
)
def test_tonight_and_end_of_day_name_today_even_when_they_have_passed(text: str, expected: str) -> None:
    late = datetime(2025, 3, 5, 23, 59, 59, 500000, tzinfo=BERLIN)
    assert _upcoming(text, now=late) == (expected, None)


def test_ranges_and_queries_read_a_passed_weekday_time_as_today() -> None:
    assert parse_datetime("wednesday 3pm", tz=BERLIN, now=WEDNESDAY_4PM).isoformat() == (
        "2025-03-05T15:00:00+01:00"
    )
    assert parse_datetime("3pm", tz=BERLIN, now=WEDNESDAY_4PM).isoformat() == "2025-03-05T15:00:00+01:00"


def test_an_upcoming_weekday_moved_a_week_keeps_the_wall_clock_across_spring_forward() -> None:
    sunday = datetime(2025, 3, 23, 16, 0, tzinfo=BERLIN)  # Berlin springs forward on Sunday 30 March
    assert _upcoming("sunday 3pm", now=sunday)[0] == "2025-03-30T15:00:00+02:00"


def test_an_upcoming_time_moved_into_the_spring_forward_gap_moves_forward_by_the_gap() -> None:
    saturday = datetime(2025, 3, 8, 10, 0, tzinfo=NEW_YORK)
    assert _upcoming("2:30am", now=saturday, tz=NEW_YORK)[0] == "2025-03-09T03:30:00-04:00"
    sunday = datetime(2025, 3, 2, 10, 0, tzinfo=NEW_YORK)
    assert _upcoming("sunday 2:30am", now=sunday, tz=NEW_YORK)[0] == "2025-03-09T03:30:00-04:00"


def test_an_upcoming_time_moved_onto_the_fall_back_day_is_its_first_occurrence() -> None:
    saturday = datetime(2025, 11, 1, 10, 0, tzinfo=NEW_YORK)
    assert _upcoming("1:30am", now=saturday, tz=NEW_YORK)[0] == "2025-11-02T01:30:00-04:00"


def test_next_weekday_in_the_same_week_says_which_friday_it_is() -> None:
    for text in ("next friday", "next friday 3pm"):
        when = parse_when(text, tz=BERLIN, now=WEDNESDAY)
        assert when.value.date() == date(2025, 3, 7)
        assert when.reason == "this week's Friday; next week's is 2025-03-14"


def test_next_weekday_in_the_following_week_has_one_reading_and_no_reason() -> None:
    friday = datetime(2025, 3, 7, 8, 0, tzinfo=BERLIN)
    assert parse_when("next friday", tz=BERLIN, now=friday).reason is None
    assert parse_when("next monday", tz=BERLIN, now=WEDNESDAY).reason is None
    assert parse_when("friday", tz=BERLIN, now=WEDNESDAY).reason is None


def test_spoken_names_the_weekday_whatever_the_locale() -> None:
    assert spoken(datetime(2026, 12, 1, 15, 0, tzinfo=BERLIN)) == "Tuesday 2026-12-01 15:00"
    assert spoken(date(2026, 12, 1)) == "Tuesday 2026-12-01"


def test_date_only_text_is_flagged_and_timed_text_is_not() -> None:
    assert parse_when("friday", tz=BERLIN, now=WEDNESDAY).date_only
    assert parse_when("2025-03-14", tz=BERLIN, now=WEDNESDAY).date_only
    assert not parse_when("friday 9am", tz=BERLIN, now=WEDNESDAY).date_only
    assert not parse_when("in 3 days", tz=BERLIN, now=WEDNESDAY).date_only


def test_a_bare_day_as_range_end_includes_the_whole_day() -> None:
    assert parse_range_end("friday", tz=BERLIN, now=WEDNESDAY).isoformat() == "2025-03-08T00:00:00+01:00"
    assert parse_range_end("friday 5pm", tz=BERLIN, now=WEDNESDAY).isoformat() == "2025-03-07T17:00:00+01:00"


def test_range_end_of_the_day_before_spring_forward_is_next_local_midnight() -> None:
    value = parse_range_end("2025-03-29", tz=BERLIN, now=WEDNESDAY)
    assert value.isoformat() == "2025-03-30T00:00:00+01:00"


def test_parse_date_returns_the_local_calendar_day() -> None:
    assert parse_date("tomorrow", tz="Asia/Kolkata", now=WEDNESDAY) == date(2025, 3, 6)
    assert parse_date("in 3 days", tz=BERLIN, now=WEDNESDAY) == date(2025, 3, 8)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "asdf",
        "5",
        "25:00",
        "13pm",
        "in 2 bananas",
        "2025-02-30",
        "3pm PST",
        "tomorrow at 3",
        "soon",
    ],
)
def test_unreadable_dates_raise_tool_input_error_naming_the_field_and_the_formats(text: str) -> None:
    with pytest.raises(ToolInputError) as caught:
        parse_datetime(text, tz=BERLIN, now=WEDNESDAY, field="start")
    assert caught.value.field == "start"
    assert "ISO 8601" in caught.value.message
    assert "tomorrow 3pm" in caught.value.message


def test_overlong_date_text_is_refused_and_shown_shortened() -> None:
    text = "tomorrow " * (MAX_TEXT_LENGTH // 9 + 1)
    with pytest.raises(ToolInputError) as caught:
        parse_datetime(text, tz=BERLIN, now=WEDNESDAY, field="due")
    assert len(caught.value.message) < 400


def test_an_unknown_timezone_is_an_operator_error() -> None:
    with pytest.raises(UserError):
        zone_of("Mars/Olympus_Mons")
    with pytest.raises(UserError):
        parse_datetime("today", tz="../etc/passwd", now=WEDNESDAY)


@pytest.mark.parametrize(
    ("text", "minutes"),
    [
        ("30m", 30),
        ("30 min", 30),
        ("45", 45),
        ("1h30", 90),
        ("1h30m", 90),
        ("1h 30", 90),
        ("90 minutes", 90),
        ("2 hours", 120),
        ("1.5h", 90),
        ("1.5 hours", 90),
        ("an hour", 60),
        ("half an hour", 30),
        ("1 hour and 30 minutes", 90),
        ("for 1 hour", 60),
        ("1:15", 75),
        ("PT1H15M", 75),
        ("2d", 2 * 24 * 60),
        ("1 week", 7 * 24 * 60),
    ],
)
def test_durations_in_common_spellings(text: str, minutes: int) -> None:
    assert parse_duration(text) == timedelta(minutes=minutes)


@pytest.mark.parametrize("text", ["", "0m", "x", "1 2", "1 month", "-5", "30 bananas", "9" * 300])
def test_bad_durations_raise_tool_input_error(text: str) -> None:
    with pytest.raises(ToolInputError) as caught:
        parse_duration(text, field="duration")
    assert caught.value.field == "duration"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("09:00", time(9)),
        ("17:30", time(17, 30)),
        ("9am", time(9)),
        ("5:30pm", time(17, 30)),
        ("noon", time(12)),
        ("midnight", time(23, 59, 59)),
    ],
)
def test_times_of_day(text: str, expected: time) -> None:
    assert parse_time(text) == expected


@pytest.mark.parametrize("text", ["", "9", "25:00", "later", "tomorrow 9am"])
def test_bad_times_of_day_raise_tool_input_error(text: str) -> None:
    with pytest.raises(ToolInputError) as caught:
        parse_time(text, field="work_start")
    assert caught.value.field == "work_start"

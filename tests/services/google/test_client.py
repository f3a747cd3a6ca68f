"""services.google.client and errors: building, one Http per thread, retries and every error class."""

from __future__ import annotations

import logging
import threading
from typing import Any

import pytest

from gateway.errors import Conflict, NotFound, ToolFailed, ToolInputError
from gateway.rendering import error_info
from services.google.client import GoogleClient
from services.google.errors import Call, backoff

from .conftest import Google

CALL = Call("Google Calendar", "event 'e1' in calendar 'primary'", {"timeMin": "start"}, field="title")


def get_event(google: Google) -> Any:
    return google.client.call("calendar", "events.get", CALL, calendarId="primary", eventId="e1")


def insert_event(google: Google) -> Any:
    return google.client.call("calendar", "events.insert", CALL, calendarId="primary", body={"summary": "x"})


def test_nothing_is_built_or_connected_before_the_first_request() -> None:
    made: list[object] = []
    client = GoogleClient(lambda: made.append(object()))
    assert made == [] and client._services == {}


def test_each_api_is_built_once_from_the_shipped_discovery_document(google: Google) -> None:
    google.reply({"id": "e1"}).reply({"id": "e1"})
    get_event(google)
    get_event(google)
    assert list(google.client._services) == ["calendar"]
    assert [(r.host, r.path) for r in google.sent] == [
        ("www.googleapis.com", "/calendar/v3/calendars/primary/events/e1")
    ] * 2


def test_every_thread_gets_its_own_http() -> None:
    made: list[object] = []

    def make_http() -> object:
        made.append(object())
        return made[-1]

    client = GoogleClient(make_http)
    seen: list[object] = []
    threads = [
        threading.Thread(target=lambda: seen.extend([client.thread_http(), client.thread_http()]))
        for _ in range(2)
    ]
    for thread in threads:
        thread.start()
        thread.join()
    assert len(made) == 2 and seen == [made[0], made[0], made[1], made[1]]


def test_a_built_service_refuses_a_request_without_the_thread_http(google: Google) -> None:
    google.reply({"id": "e1"})
    get_event(google)
    request = google.client._services["calendar"].events().get(calendarId="primary", eventId="e1")
    with pytest.raises(RuntimeError, match="thread's Http"):
        request.execute()


def test_a_429_is_retried_with_backoff_and_the_retry_after_header(google: Google) -> None:
    google.fail(429, "rateLimitExceeded").reply(status=429, body={"error": {}}, headers={"retry-after": "7"})
    google.reply({"id": "e1", "summary": "ok"})
    assert get_event(google)["summary"] == "ok"
    assert google.sleeps == [1.0, 7.0] and len(google.sent) == 3


def test_a_rate_limit_403_is_retried_even_for_a_post(google: Google) -> None:
    google.fail(403, "userRateLimitExceeded").reply({"id": "new"})
    assert insert_event(google) == {"id": "new"}
    assert google.sleeps == [1.0]


@pytest.mark.parametrize("said", ["9" * 400, "\u00b2"], ids=["infinite", "superscript"])
def test_a_hostile_retry_after_from_google_still_reads_as_rate_limited(google: Google, said: str) -> None:
    for _ in range(5):
        google.reply({"error": {"code": 429, "message": "quota"}}, status=429, headers={"retry-after": said})
    with pytest.raises(ToolFailed) as failed:
        get_event(google)
    assert failed.value.code == "rate_limited"
    shown = error_info(failed.value)
    assert shown.retry_after_seconds is None or 1 <= shown.retry_after_seconds <= 86_400


def test_a_5xx_on_a_get_is_retried_until_it_gives_up_with_try_later(google: Google) -> None:
    for _ in range(5):
        google.fail(503, "backendError", "Service unavailable")
    with pytest.raises(ToolFailed) as failed:
        get_event(google)
    assert failed.value.code == "unavailable" and "try again later" in failed.value.message
    assert google.sleeps == [1.0, 2.0, 4.0, 8.0] and google.pending() == 0


def test_a_429_past_every_retry_reaches_the_model_as_rate_limited_with_googles_retry_after(
    google: Google,
) -> None:
    for _ in range(5):
        google.reply({"error": {"code": 429, "message": "quota"}}, status=429, headers={"retry-after": "20"})
    with pytest.raises(ToolFailed) as failed:
        get_event(google)
    assert failed.value.code == "rate_limited" and getattr(failed.value, "retry_after", None) == 20.0
    assert google.sleeps == [20.0] * 4 and google.pending() == 0


def test_a_5xx_on_a_post_is_not_repeated_and_says_the_outcome_is_unknown(google: Google) -> None:
    google.fail(500, "backendError")
    with pytest.raises(ToolFailed) as failed:
        insert_event(google)
    assert failed.value.code == "unavailable" and "unknown whether this was done" in failed.value.message
    assert google.sleeps == [] and len(google.sent) == 1


class _Flaky:
    """An Http whose first request loses its connection."""

    def __init__(self, google: Google) -> None:
        self.google = google
        self.failed = False

    def request(self, *args: Any, **kwargs: Any) -> Any:
        if not self.failed:
            self.failed = True
            raise ConnectionResetError("connection reset by peer")
        return self.google.http.request(*args, **kwargs)


def test_a_lost_connection_is_retried_for_a_get(google: Google) -> None:
    client = GoogleClient(lambda: _Flaky(google), sleep=google.sleeps.append, rand=lambda: 0.0)
    google.reply({"id": "e1"})
    assert client.call("calendar", "events.get", CALL, calendarId="primary", eventId="e1") == {"id": "e1"}
    assert google.sleeps == [0.5]


def test_a_lost_connection_on_a_post_is_reported_not_repeated(google: Google) -> None:
    client = GoogleClient(lambda: _Flaky(google), sleep=google.sleeps.append)
    with pytest.raises(ToolFailed, match="unknown whether this was done"):
        client.call("calendar", "events.insert", CALL, calendarId="primary", body={})
    assert google.sent == []


def test_a_400_naming_a_google_parameter_names_the_tool_field(google: Google) -> None:
    google.fail(400, "badRequest", "Bad Request", location="timeMin", locationType="parameter")
    with pytest.raises(ToolInputError) as bad:
        get_event(google)
    assert (
        bad.value.field == "start" and bad.value.message == "Google Calendar refused this value: Bad Request"
    )
    assert google.sleeps == []


def test_a_400_without_a_location_names_the_calls_own_field(google: Google) -> None:
    google.fail(400, "invalid", "Invalid title")
    with pytest.raises(ToolInputError) as bad:
        get_event(google)
    assert bad.value.field == "title"


def test_a_400_with_no_field_to_blame_is_an_invalid_request() -> None:
    google = Google()
    google.fail(400, "failedPrecondition", "Precondition check failed.")
    with pytest.raises(ToolFailed) as failed:
        google.client.call("gmail", "users.drafts.send", Call("Gmail"), userId="me", body={"id": "d1"})
    assert failed.value.code == "invalid"


@pytest.mark.parametrize("status", [404, 410])
def test_a_missing_item_is_not_found(google: Google, status: int) -> None:
    google.fail(status, "notFound", "Not Found")
    with pytest.raises(NotFound, match="event 'e1' in calendar 'primary' was not found"):
        get_event(google)


@pytest.mark.parametrize("status", [409, 412])
def test_a_clash_is_a_conflict(google: Google, status: int) -> None:
    google.fail(status, "duplicate", "The requested identifier already exists.")
    with pytest.raises(Conflict):
        insert_event(google)
    assert google.sleeps == []


@pytest.mark.parametrize(
    ("status", "reason"),
    [(401, "authError"), (403, "insufficientPermissions"), (403, "ACCESS_TOKEN_SCOPE_INSUFFICIENT")],
)
def test_refused_credentials_or_scopes_are_for_the_operator(google: Google, status: int, reason: str) -> None:
    google.fail(status, reason, "Request had insufficient authentication scopes.")
    with pytest.raises(ToolFailed) as failed:
        get_event(google)
    assert failed.value.code == "permission_denied"
    assert "operator" in failed.value.message and "gateway auth google" in failed.value.message
    assert "scopes" not in failed.value.message and google.sleeps == []


def test_a_403_about_the_item_itself_is_permission_denied_without_blaming_credentials(google: Google) -> None:
    google.fail(403, "forbidden", "You need to have writer access to this calendar.")
    with pytest.raises(ToolFailed) as failed:
        insert_event(google)
    assert failed.value.code == "permission_denied" and "operator" not in failed.value.message


def test_details_go_to_the_log_and_not_to_the_model(google: Google, caplog: pytest.LogCaptureFixture) -> None:
    google.fail(404, "notFound", "Event 'e1' does not exist in backend shard 7")
    with caplog.at_level(logging.WARNING, "services.google"), pytest.raises(NotFound) as missing:
        get_event(google)
    assert "shard 7" in caplog.text and "404" in caplog.text
    assert "shard" not in missing.value.message


def test_backoff_doubles_up_to_a_cap_with_jitter_and_respects_retry_after() -> None:
    assert [backoff(n, rand=1.0) for n in (1, 2, 3, 6, 7, 9)] == [1.0, 2.0, 4.0, 32.0, 32.0, 32.0]
    assert backoff(3, rand=0.0) == 2.0
    assert backoff(1, rand=1.0, retry_after=10) == 10.0 and backoff(1, rand=1.0, retry_after=999) == 32.0


def test_pagination_follows_next_page_token_until_the_limit(google: Google) -> None:
    google.reply({"items": [{"id": "a"}, {"id": "b"}], "nextPageToken": "p2"})
    google.reply({"items": [{"id": "c"}], "nextPageToken": "p3"})
    found = google.client.collect("calendar", "calendarList.list", CALL, items="items", limit=3, page_size=2)
    assert [i["id"] for i in found] == ["a", "b", "c"]
    assert [r.query for r in google.sent] == [
        {"maxResults": ["2"]},
        {"maxResults": ["1"], "pageToken": ["p2"]},
    ]

"""Catalog tools called through the gateway and the real Google client: the exact request that goes out."""

from __future__ import annotations

from typing import Any

from gateway import Gateway, ToolResult, run_sync
from gateway.errors import UserError
from services.google_apis.invoke import Connection

from ..google.conftest import Google
from .conftest import MakeGateway

EVENT = {
    "summary": "Dentist",
    "start": {"dateTime": "2025-03-07T15:00:00+01:00"},
    "end": {"dateTime": "2025-03-07T16:00:00+01:00"},
    "attendees": [{"email": "ann@example.com", "optional": True}],
}


def invoke(gw: Gateway, tool: str, /, confirmation: str | None = None, **parameters: Any) -> ToolResult:
    return run_sync(gw.invoke(tool, parameters, confirmation=confirmation))


def test_path_parameters_are_escaped_into_the_path(gw: Gateway, google: Google) -> None:
    google.reply({"id": "e1", "summary": "Dentist"})
    result = invoke(gw, "calendar_events_get", calendarId="team@example.com", eventId="e1")
    request = google.only()
    assert (request.method, request.host, request.path, request.query) == (
        "GET",
        "www.googleapis.com",
        "/calendar/v3/calendars/team%40example.com/events/e1",
        {},
    )
    assert result.ok and result.output == {"id": "e1", "summary": "Dentist"}


def test_repeated_query_parameters_are_sent_once_per_value(gw: Gateway, google: Google) -> None:
    google.reply({"messages": []}).reply({"messages": []})
    invoke(gw, "gmail_users_messages_list", userId="me", labelIds=["INBOX", "UNREAD"], maxResults=5)
    invoke(gw, "gmail_users_messages_list", userId="me", labelIds="STARRED")  # one value is a list of one
    many, one = google.sent
    assert (many.method, many.path) == ("GET", "/gmail/v1/users/me/messages")
    assert many.query == {"labelIds": ["INBOX", "UNREAD"], "maxResults": ["5"]}
    assert one.query == {"labelIds": ["STARRED"]}


def test_a_request_body_is_sent_as_json_with_its_nested_objects(gw: Gateway, google: Google) -> None:
    google.reply({"id": "e2", **EVENT})
    result = invoke(gw, "calendar_events_insert", calendarId="primary", sendUpdates="none", body=EVENT)
    request = google.only()
    assert (request.method, request.path, request.query) == (
        "POST",
        "/calendar/v3/calendars/primary/events",
        {"sendUpdates": ["none"]},
    )
    assert request.body == EVENT
    assert result.output["id"] == "e2"


def test_a_resource_name_keeps_its_slashes_and_must_match_its_pattern(gw: Gateway, google: Google) -> None:
    google.reply({"name": "projects/p1/secrets/s1"})
    invoke(gw, "secretmanager_projects_secrets_get", name="projects/p1/secrets/s1")
    assert (google.only().host, google.only().path) == (
        "secretmanager.googleapis.com",
        "/v1/projects/p1/secrets/s1",
    )
    bad = invoke(gw, "secretmanager_projects_secrets_get", name="secrets/s1")
    assert bad.error is not None and bad.error.code == "invalid_arguments"
    assert [p.loc for p in bad.error.problems] == ["name"] and len(google.sent) == 1


def test_a_parameter_with_a_dot_in_its_name_is_sent_under_that_name(gw: Gateway, google: Google) -> None:
    google.reply({"version": 3})
    parameters = {"resource": "projects/p1/secrets/s1", "options.requestedPolicyVersion": 3}
    run_sync(gw.invoke("secretmanager_projects_secrets_get_iam_policy", parameters))
    request = google.only()
    assert (request.method, request.path) == ("GET", "/v1/projects/p1/secrets/s1:getIamPolicy")
    assert request.query == {"options.requestedPolicyVersion": ["3"]}


def test_a_method_named_like_a_python_keyword_is_called(gw: Gateway, google: Google) -> None:
    google.reply({"id": "m1"})
    result = invoke(
        gw, "gmail_users_messages_import", userId="me", neverMarkSpam=True, body={"raw": "U3ViamVjdDogaGk="}
    )
    request = google.only()
    assert (request.method, request.path) == ("POST", "/gmail/v1/users/me/messages/import")
    assert (request.query, request.body) == ({"neverMarkSpam": ["true"]}, {"raw": "U3ViamVjdDogaGk="})
    assert result.output == {"id": "m1"}


def test_a_delete_is_sent_only_after_the_user_approves_it(gw: Gateway, google: Google) -> None:
    pending = invoke(gw, "calendar_events_delete", calendarId="primary", eventId="e1", sendUpdates="all")
    assert pending.status == "confirmation_required" and pending.pending is not None
    assert google.sent == []
    gw.approve(pending.pending.pending_id)
    google.reply(status=204)
    done = invoke(
        gw,
        "calendar_events_delete",
        confirmation=pending.pending.pending_id,
        calendarId="primary",
        eventId="e1",
        sendUpdates="all",
    )
    request = google.only()
    assert (request.method, request.path, request.query, request.body) == (
        "DELETE",
        "/calendar/v3/calendars/primary/events/e1",
        {"sendUpdates": ["all"]},
        None,
    )
    assert done.ok and done.output == {}


def test_an_unknown_body_field_is_refused_before_anything_is_sent(gw: Gateway, google: Google) -> None:
    result = invoke(gw, "calendar_events_insert", calendarId="primary", body={**EVENT, "titel": "typo"})
    assert result.error is not None and result.error.code == "invalid_arguments"
    assert [p.loc for p in result.error.problems] == ["body.titel"]
    assert google.sent == []


def test_a_404_names_the_item_in_the_methods_own_words(gw: Gateway, google: Google) -> None:
    google.fail(404, "notFound", "Not Found")
    result = invoke(gw, "calendar_events_get", calendarId="primary", eventId="nope")
    assert result.error is not None
    assert (result.error.code, result.error.message) == (
        "not_found",
        "the events item (calendarId 'primary', eventId 'nope') was not found",
    )


def test_a_400_about_a_parameter_is_the_models_to_fix(gw: Gateway, google: Google) -> None:
    google.fail(400, "invalid", "Invalid value for maxResults", location="maxResults")
    result = invoke(gw, "calendar_events_list", calendarId="primary", maxResults=2500)
    assert result.error is not None and result.error.code == "invalid_arguments"
    assert [(p.loc, p.msg) for p in result.error.problems] == [
        ("maxResults", "Calendar API refused this value: Invalid value for maxResults")
    ]


def test_a_read_that_meets_a_5xx_is_retried_with_backoff(gw: Gateway, google: Google) -> None:
    google.fail(503, "backendError").reply({"items": []})
    result = invoke(gw, "tasks_tasklists_list")
    assert result.ok and len(google.sent) == 2 and google.sleeps == [1.0]


def test_a_method_none_of_whose_scopes_was_granted_is_refused_before_sending(
    make_gateway: MakeGateway, google: Google
) -> None:
    gw = make_gateway("drive", scopes=frozenset({"https://www.googleapis.com/auth/calendar.events"}))
    result = invoke(gw, "drive_files_list", pageSize=10)
    assert result.error is not None and result.error.code == "permission_denied"
    assert "https://www.googleapis.com/auth/drive.readonly" in result.error.message
    assert "[google] extra_scopes" in result.error.message and google.sent == []


def test_a_granted_scope_lets_the_method_through(make_gateway: MakeGateway, google: Google) -> None:
    gw = make_gateway("drive", scopes=frozenset({"https://www.googleapis.com/auth/drive.readonly"}))
    google.reply({"files": []})
    assert invoke(gw, "drive_files_list", pageSize=10).ok
    assert google.only().query == {"pageSize": ["10"]}


def test_missing_credentials_are_the_operators_to_fix(make_gateway: MakeGateway) -> None:
    def connect() -> Connection:
        raise UserError("no Google token at /somewhere; run `gateway auth google` first")

    result = invoke(make_gateway("tasks", connect=connect), "tasks_tasklists_list")
    assert result.error is not None and result.error.code == "permission_denied"
    assert "/somewhere" not in result.error.message and "gateway auth google" in result.error.message


def test_a_method_that_answers_with_file_content_is_refused(gw: Gateway, google: Google) -> None:
    result = invoke(gw, "drive_files_export", fileId="f1", mimeType="text/plain")
    assert result.error is not None and result.error.code == "invalid"
    assert "file content" in result.error.message and google.sent == []


def test_a_method_without_a_json_response_answers_with_its_text(gw: Gateway, google: Google) -> None:
    google.responses.append(({"status": "200", "content-type": "text/plain"}, "OK"))
    result = invoke(gw, "calendar_channels_stop", body={"id": "c1", "resourceId": "r1"})
    assert google.only().path == "/calendar/v3/channels/stop"
    assert result.output == {"content": "OK", "truncated": False}

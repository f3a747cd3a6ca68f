"""No token or client secret reaches a log line, an audit record or a tool result, whatever fails."""

from __future__ import annotations

import json
import logging
from dataclasses import asdict
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from google.oauth2 import credentials as user_credentials
from googleapiclient.http import HttpMockSequence  # type: ignore[import-untyped]  # ships no stubs

from gateway.audit import MemoryAuditLog
from gateway.engine import Gateway, run_sync
from gateway.rendering import render
from services.backends import WorkspaceSettings
from services.google.client import GoogleClient, authorized_http
from services.google.credentials import GoogleOptions
from services.google.provider import google_toolset
from services.workspace import CATALOG

from ..conftest import WEDNESDAY_10AM, Clock

ACCESS, REFRESH, SECRET = (
    "ya29.a0-very-secret-access",
    "1//0g-very-secret-refresh",
    "GOCSPX-very-secret-client",
)
SECRETS = (ACCESS, REFRESH, SECRET, "very-secret")


def gateway_on(
    responses: list[tuple[dict[str, str], str]],
) -> tuple[Gateway, MemoryAuditLog, HttpMockSequence]:
    creds = user_credentials.Credentials(  # type: ignore[no-untyped-call]
        token=ACCESS,
        refresh_token=REFRESH,
        token_uri="https://oauth2.googleapis.com/token",
        client_id="123.apps.googleusercontent.com",
        client_secret=SECRET,
        expiry=datetime.now(UTC).replace(tzinfo=None) + timedelta(hours=1),
    )
    http = HttpMockSequence(responses)
    client = GoogleClient(authorized_http(creds, transport=lambda: http), sleep=lambda _: None)
    settings = WorkspaceSettings(timezone="Europe/Berlin", clock=Clock(WEDNESDAY_10AM))
    toolset = google_toolset(client, GoogleOptions(), catalog=CATALOG, settings=settings)
    audit = MemoryAuditLog()
    return Gateway(toolset.catalog, resources=toolset.resources, audit=audit), audit, http


def everything_said(caplog: pytest.LogCaptureFixture, audit: MemoryAuditLog, *texts: str) -> str:
    records = [json.dumps(asdict(r), default=str) for r in audit.records]
    lines = [r.getMessage() for r in caplog.records] + [str(r.args) for r in caplog.records]
    return "\n".join([*lines, *records, *texts])


def invoke(gw: Gateway, name: str, parameters: dict[str, Any]) -> str:
    return render(run_sync(gw.invoke(name, parameters)))


def test_revoked_credentials_leak_nothing_and_tell_the_model_the_operator_must_act(
    caplog: pytest.LogCaptureFixture,
) -> None:
    revoked = {"error": "invalid_grant", "error_description": "Token has been expired or revoked."}
    gw, audit, http = gateway_on(
        [
            (
                {"status": "401"},
                json.dumps(
                    {"error": {"code": 401, "message": "Invalid Credentials", "status": "UNAUTHENTICATED"}}
                ),
            ),
            ({"status": "400"}, json.dumps(revoked)),
        ]
    )
    with caplog.at_level(logging.DEBUG):
        shown = invoke(gw, "tasks_list_tasklists", {})
    assert json.loads(shown)["error"]["code"] == "permission_denied" and "gateway auth google" in shown
    assert http.request_sequence[0][3]["authorization"] == f"Bearer {ACCESS}"  # the token was really used
    assert http.request_sequence[1][0] == "https://oauth2.googleapis.com/token"  # and a refresh was tried
    said = everything_said(caplog, audit, shown)
    assert audit.records and caplog.records
    assert [s for s in SECRETS if s in said] == []


def test_a_google_message_echoing_a_token_is_redacted_everywhere(caplog: pytest.LogCaptureFixture) -> None:
    echo = {
        "error": {
            "code": 400,
            "message": f"Bad header Bearer {ACCESS} for {REFRESH}",
            "errors": [{"reason": "badRequest", "location": "q"}],
        }
    }
    gw, audit, _ = gateway_on([({"status": "400"}, json.dumps(echo))])
    with caplog.at_level(logging.DEBUG):
        shown = invoke(gw, "gmail_search_messages", {"query": "from:ana"})
    assert json.loads(shown)["error"]["code"] == "invalid_arguments" and "[redacted]" in shown
    said = everything_said(caplog, audit, shown)
    assert [s for s in SECRETS if s in said] == []


def test_an_outage_after_retries_says_try_later_without_details(caplog: pytest.LogCaptureFixture) -> None:
    outage = ({"status": "503"}, json.dumps({"error": {"code": 503, "message": f"backend {ACCESS} down"}}))
    gw, audit, _ = gateway_on([outage] * 5)
    with caplog.at_level(logging.DEBUG):
        shown = invoke(gw, "calendar_list_calendars", {})
    error = json.loads(shown)["error"]
    assert error["code"] == "unavailable" and "try again later" in error["message"] and "backend" not in shown
    assert audit.records[-1].error_code == "unavailable"
    assert [s for s in SECRETS if s in everything_said(caplog, audit, shown)] == []

"""services.google.credentials: scopes, the token file, refresh wiring, ADC, service accounts, the OAuth flow.

Everything runs up to the point where a network would be needed: token endpoints are answered by
`HttpMockSequence` through the real google-auth and google-auth-httplib2 code.
"""

from __future__ import annotations

import base64
import json
import os
import stat
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from google.oauth2 import credentials as user_credentials
from google.oauth2 import service_account
from googleapiclient.http import HttpMockSequence  # type: ignore[import-untyped]  # ships no stubs

from gateway.errors import UserError
from services.google.client import GoogleClient, authorized_http
from services.google.credentials import (
    CALENDAR_EVENTS,
    CALENDAR_LIST,
    GMAIL_FULL,
    GMAIL_MODIFY,
    TASKS,
    GoogleOptions,
    TokenFile,
    authorize,
    load_credentials,
    scopes_for,
)
from services.google.errors import Call

ALL = [CALENDAR_EVENTS, CALENDAR_LIST, GMAIL_MODIFY, TASKS]
ACCESS, REFRESH, SECRET = "ya29.old-access", "1//refresh-secret", "GOCSPX-client-secret"
CALL = Call("Google Tasks", "your task lists")


def user_creds(scopes: list[str] = ALL, **overrides: Any) -> user_credentials.Credentials:
    fields: dict[str, Any] = {
        "token": ACCESS,
        "refresh_token": REFRESH,
        "token_uri": "https://oauth2.googleapis.com/token",
        "client_id": "123.apps.googleusercontent.com",
        "client_secret": SECRET,
        "scopes": scopes,
        "expiry": datetime.now(UTC).replace(tzinfo=None) + timedelta(hours=1),
    }
    return user_credentials.Credentials(**(fields | overrides))  # type: ignore[no-untyped-call]


def options(tmp_path: Path, **fields: Any) -> GoogleOptions:
    return GoogleOptions.parse(fields, data_dir=tmp_path)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_scopes_are_the_fewest_each_enabled_service_needs() -> None:
    assert scopes_for(["calendar", "gmail", "tasks"]) == ALL
    assert scopes_for(["tasks"]) == [TASKS]
    assert scopes_for(["gmail"], allow_permanent_delete=True) == [GMAIL_FULL]
    assert scopes_for(["calendar"]) == [
        "https://www.googleapis.com/auth/calendar.events",
        "https://www.googleapis.com/auth/calendar.calendarlist.readonly",
    ]


def test_the_token_file_defaults_to_the_data_dir(tmp_path: Path) -> None:
    assert options(tmp_path).token_path == tmp_path / "google-token.json"


def test_an_unknown_google_setting_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UserError, match=r"\[google\] configuration: scope"):
        options(tmp_path, scope="everything")


def test_the_token_is_written_readable_only_by_its_owner(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "token.json"
    TokenFile(path).save(user_creds())
    assert mode(path) == 0o600 and json.loads(path.read_text())["refresh_token"] == REFRESH
    assert [p.name for p in path.parent.iterdir()] == ["token.json"]  # no temporary file left


def test_a_token_file_others_can_read_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "token.json"
    TokenFile(path).save(user_creds())
    path.chmod(0o644)
    with pytest.raises(UserError, match="readable by others; chmod 600"):
        TokenFile(path).load(ALL)


def test_a_missing_token_says_to_run_gateway_auth_google(tmp_path: Path) -> None:
    with pytest.raises(UserError, match=r"no Google token at .*run `gateway auth google` first"):
        load_credentials(options(tmp_path))


def test_a_token_without_a_needed_scope_is_refused_naming_it(tmp_path: Path) -> None:
    TokenFile(tmp_path / "google-token.json").save(user_creds(scopes=[TASKS]))
    load_credentials(options(tmp_path, services=["tasks"]))
    with pytest.raises(UserError, match=r"gmail\.modify"):
        load_credentials(options(tmp_path))


def test_a_token_without_a_refresh_token_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "google-token.json"
    TokenFile(path).save(user_creds())
    info = json.loads(path.read_text())
    info["refresh_token"] = ""
    path.write_text(json.dumps(info))
    with pytest.raises(UserError, match="cannot be refreshed"):
        load_credentials(options(tmp_path))


def test_an_expired_token_is_refreshed_on_the_first_request_and_saved_back(tmp_path: Path) -> None:
    path = tmp_path / "google-token.json"
    TokenFile(path).save(user_creds(expiry=datetime(2020, 1, 1)))
    creds, after_request = load_credentials(options(tmp_path))
    http = HttpMockSequence(
        [
            (
                {"status": "200"},
                json.dumps({"access_token": "ya29.new-access", "expires_in": 3599, "token_type": "Bearer"}),
            ),
            ({"status": "200"}, json.dumps({"items": []})),
        ]
    )
    client = GoogleClient(authorized_http(creds, transport=lambda: http), after_request=after_request)
    assert client.call("tasks", "tasklists.list", CALL) == {"items": []}
    (token_uri, method, body, _), (api_uri, _, _, headers) = http.request_sequence
    assert (token_uri, method) == ("https://oauth2.googleapis.com/token", "POST")
    form = parse_qs(body.decode())
    assert form["grant_type"] == ["refresh_token"] and form["refresh_token"] == [REFRESH]
    assert api_uri.startswith("https://tasks.googleapis.com/tasks/v1/users/@me/lists")
    assert headers["authorization"] == "Bearer ya29.new-access"
    assert json.loads(path.read_text())["token"] == "ya29.new-access" and mode(path) == 0o600


def test_a_fresh_token_is_not_written_again(tmp_path: Path) -> None:
    path = tmp_path / "google-token.json"
    TokenFile(path).save(user_creds())
    before = path.stat().st_mtime_ns
    creds, after_request = load_credentials(options(tmp_path))
    assert after_request is not None
    after_request()
    assert path.stat().st_mtime_ns == before and creds.token == ACCESS


def test_application_default_credentials_of_a_user_are_used_as_consented(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    adc = tmp_path / "adc.json"
    adc.write_text(
        json.dumps({"type": "authorized_user", "client_id": "c", "client_secret": "s", "refresh_token": "r"})
    )
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(adc))
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "p")
    creds, after_request = load_credentials(options(tmp_path, credentials="adc"))
    assert isinstance(creds, user_credentials.Credentials) and after_request is None
    assert creds.refresh_token == "r"  # its scopes are the ones given to `gcloud ... --scopes`


def test_application_default_credentials_of_a_service_account_get_the_enabled_scopes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(service_account_file(tmp_path)))
    creds, _ = load_credentials(options(tmp_path, credentials="adc", services=["tasks", "calendar"]))
    assert isinstance(creds, service_account.Credentials)
    assert creds.scopes == [CALENDAR_EVENTS, CALENDAR_LIST, TASKS]


def test_missing_application_default_credentials_say_how_to_get_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(tmp_path / "absent.json"))
    with pytest.raises(UserError, match="gcloud auth application-default login --scopes=https://"):
        load_credentials(options(tmp_path, credentials="adc"))


def service_account_file(tmp_path: Path) -> Path:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    path = tmp_path / "sa.json"
    path.write_text(
        json.dumps(
            {
                "type": "service_account",
                "project_id": "p",
                "private_key_id": "k1",
                "private_key": pem.decode(),
                "client_email": "gateway@p.iam.gserviceaccount.com",
                "client_id": "1",
                "token_uri": "https://oauth2.googleapis.com/token",
            }
        )
    )
    return path


def test_a_service_account_acts_for_its_subject_with_the_enabled_scopes(tmp_path: Path) -> None:
    settings = options(
        tmp_path,
        credentials="service_account",
        service_account_file=service_account_file(tmp_path),
        subject="ana@corp.example",
        services=["gmail"],
    )
    creds, _ = load_credentials(settings)
    assert isinstance(creds, service_account.Credentials)
    http = HttpMockSequence(
        [
            (
                {"status": "200"},
                json.dumps({"access_token": "ya29.delegated", "expires_in": 3600, "token_type": "Bearer"}),
            ),
            ({"status": "200"}, json.dumps({"emailAddress": "ana@corp.example"})),
        ]
    )
    client = GoogleClient(authorized_http(creds, transport=lambda: http))
    client.call("gmail", "users.getProfile", Call("Gmail"), userId="me")
    (_, _, body, _), (_, _, _, headers) = http.request_sequence
    assertion = parse_qs(body.decode())["assertion"][0]
    claims = json.loads(base64.urlsafe_b64decode(assertion.split(".")[1] + "=="))
    assert claims["sub"] == "ana@corp.example" and claims["iss"] == "gateway@p.iam.gserviceaccount.com"
    assert claims["scope"] == GMAIL_MODIFY
    assert headers["authorization"] == "Bearer ya29.delegated"


def test_a_service_account_needs_a_subject(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="subject"):
        load_credentials(
            options(
                tmp_path, credentials="service_account", service_account_file=service_account_file(tmp_path)
            )
        )


def client_secrets(tmp_path: Path) -> Path:
    path = tmp_path / "client_secret.json"
    path.write_text(
        json.dumps(
            {
                "installed": {
                    "client_id": "123.apps.googleusercontent.com",
                    "client_secret": SECRET,
                    "auth_uri": "https://accounts.google.com/o/oauth2/auth",
                    "token_uri": "https://oauth2.googleapis.com/token",
                    "redirect_uris": ["http://localhost"],
                }
            }
        )
    )
    return path


def test_the_oauth_flow_asks_for_the_enabled_scopes_offline_and_stores_the_token(tmp_path: Path) -> None:
    seen: dict[str, Any] = {}

    def run_flow(flow: Any, open_browser: bool) -> user_credentials.Credentials:
        flow.redirect_uri = "http://localhost:8765/"
        url, _ = flow.authorization_url(access_type="offline", prompt="consent")
        seen.update(url=url, open_browser=open_browser, client_id=flow.client_config["client_id"])
        return user_creds(scopes=scopes_for(["calendar", "tasks"]))

    settings = options(tmp_path, client_secrets=client_secrets(tmp_path), services=["calendar", "tasks"])
    message = authorize(settings, open_browser=False, run_flow=run_flow)
    query = parse_qs(seen["url"].split("?", 1)[1])
    assert query["scope"] == [" ".join(scopes_for(["calendar", "tasks"]))]
    assert query["access_type"] == ["offline"] and query["client_id"] == ["123.apps.googleusercontent.com"]
    assert seen["open_browser"] is False
    token = tmp_path / "google-token.json"
    assert mode(token) == 0o600 and json.loads(token.read_text())["refresh_token"] == REFRESH
    assert str(token) in message and "backend" in message
    assert not any(secret in message for secret in (ACCESS, REFRESH, SECRET))


def test_the_default_flow_uses_a_loopback_redirect_and_asks_for_a_refresh_token(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[dict[str, Any]] = []

    def fake_server(self: Any, **kwargs: Any) -> user_credentials.Credentials:
        calls.append(kwargs)
        return user_creds()

    monkeypatch.setattr("google_auth_oauthlib.flow.InstalledAppFlow.run_local_server", fake_server)
    authorize(options(tmp_path, client_secrets=client_secrets(tmp_path)), open_browser=True)
    (kwargs,) = calls
    assert kwargs["port"] == 0 and kwargs["host"] == "localhost" and kwargs["open_browser"] is True
    assert kwargs["access_type"] == "offline" and kwargs["prompt"] == "consent"


def test_a_consent_that_withheld_a_scope_is_refused(tmp_path: Path) -> None:
    def run_flow(flow: Any, open_browser: bool) -> user_credentials.Credentials:
        return user_creds(granted_scopes=[TASKS])

    with pytest.raises(UserError, match=r"not granted for .*calendar\.events"):
        authorize(options(tmp_path, client_secrets=client_secrets(tmp_path)), run_flow=run_flow)
    assert not (tmp_path / "google-token.json").exists()


def test_the_oauth_flow_needs_a_client_secrets_file_and_the_oauth_mode(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="client_secrets"):
        authorize(options(tmp_path))
    with pytest.raises(UserError, match="needs no sign-in"):
        authorize(options(tmp_path, credentials="adc"))


def test_no_refresh_token_means_no_token_file(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="no refresh token"):
        authorize(
            options(tmp_path, client_secrets=client_secrets(tmp_path)),
            run_flow=lambda f, b: user_creds(refresh_token=None),
        )
    assert not os.path.exists(tmp_path / "google-token.json")

"""Headers and cookies built from a model's arguments carry only their own value."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gateway import Gateway, run_sync
from gateway.catalog import Catalog
from gateway.openapi import OpenApi
from gateway.settings.loading import OpenApiAuthSettings, OpenApiSettings

from .conftest import Loopback, op, write_spec

SECRET = "cookie-secret-1234"
RESERVED = ("Host", "Content-Length", "Transfer-Encoding", "Connection", "Cookie")


def make(tmp_path: Path, loopback: Loopback) -> Gateway:
    parameters = [
        {"name": "theme", "in": "cookie", "schema": {"type": "string"}},
        {"name": "X-Note", "in": "header", "schema": {"type": "string"}},
        *({"name": name, "in": "header", "schema": {"type": "string"}} for name in RESERVED),
    ]
    doc = {
        "openapi": "3.0.3",
        "info": {"title": "Prefs"},
        "servers": [{"url": loopback.url}],
        "paths": {"/prefs": {"get": op("getPrefs", parameters=parameters)}},
    }
    auth = OpenApiAuthSettings(type="api_key", env="PREFS_KEY", location="cookie", name="sid")
    entry = OpenApiSettings(name="prefs", spec=write_spec(tmp_path, doc), auth=auth)
    api = OpenApi(entry, None, environ={"PREFS_KEY": SECRET})
    return Gateway(Catalog(api.definitions()))


def cookies(header: str) -> list[tuple[str, str]]:
    return [tuple(part.split("=", 1)) for part in header.split("; ")]  # type: ignore[misc]


def test_a_cookie_value_with_a_semicolon_cannot_add_a_cookie(tmp_path: Path, loopback: Loopback) -> None:
    gw = make(tmp_path, loopback)
    result = run_sync(gw.invoke("prefs_get_prefs", {"theme": "dark; sid=attacker"}))
    assert result.status == "ok"
    sent = cookies(loopback.seen[-1].headers["cookie"])
    assert sent == [("theme", "dark%3B%20sid%3Dattacker"), ("sid", SECRET)]


@pytest.mark.parametrize(
    "arguments",
    [
        {"X-Note": "hi\r\nX-Admin: 1"},
        {"X-Note": "a\nb"},
        {"X-Note": "nul\x00byte"},
        {"X-Note": "bell\x07"},
        {"X-Note": "caf\u00e9"},
    ],
    ids=["crlf", "lf", "nul", "control", "non-ascii"],
)
def test_a_header_value_with_a_control_character_is_refused_and_nothing_is_sent(
    tmp_path: Path, loopback: Loopback, arguments: dict[str, Any]
) -> None:
    gw = make(tmp_path, loopback)
    result = run_sync(gw.invoke("prefs_get_prefs", arguments))
    assert result.error is not None and result.error.code == "invalid_arguments"
    assert result.error.problems[0].loc == "X-Note" and "HTTP header" in result.error.problems[0].msg
    assert loopback.seen == []
    assert run_sync(gw.invoke("prefs_get_prefs", {"X-Note": "plain text, fine"})).status == "ok"
    assert loopback.seen[-1].headers["x-note"] == "plain text, fine"


def test_headers_that_steer_the_request_are_never_asked_of_the_model(
    tmp_path: Path, loopback: Loopback
) -> None:
    gw = make(tmp_path, loopback)
    d = gw.catalog.get("prefs_get_prefs")
    assert d is not None and sorted(d.json_schema["properties"]) == ["X-Note", "theme"]

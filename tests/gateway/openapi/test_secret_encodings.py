"""A secret is scrubbed in every form it travels in: percent-encoded in a query, base64 in a header."""

from __future__ import annotations

import base64
import logging
import re
from pathlib import Path
from typing import Any
from urllib.parse import quote, quote_plus, unquote_plus

import pytest

from gateway import Gateway, run_sync
from gateway.catalog import Catalog
from gateway.openapi import OpenApi
from gateway.settings.loading import OpenApiAuthSettings, OpenApiSettings

from .conftest import Loopback, Seen, op, write_spec

KEY = "k+ey/SECRET== x"  # a plus, a slash, padding and a space: each form encodes them differently
FORMS = {
    "raw": KEY,
    "quote": quote(KEY, safe=""),
    "quote_plus": quote_plus(KEY, safe=""),
    "lower hex": re.sub(r"%[0-9A-F]{2}", lambda m: m.group().lower(), quote_plus(KEY, safe="")),
    "basic": base64.b64encode(f"me:{KEY}".encode()).decode(),
}


def make(tmp_path: Path, loopback: Loopback, auth: OpenApiAuthSettings) -> Gateway:
    doc = {
        "openapi": "3.0.3",
        "info": {"title": "Echo"},
        "servers": [{"url": loopback.url}],
        "paths": {"/echo": {"get": op("lookup")}},
    }
    entry = OpenApiSettings(name="echo", spec=write_spec(tmp_path, doc), auth=auth)
    api = OpenApi(entry, None, environ={"ECHO_KEY": KEY})
    return Gateway(Catalog(api.definitions()))


def echo_everything(seen: Seen) -> Any:
    """A server that fails, quoting the request line and headers in every form a secret could take."""
    lower_hex = re.sub(r"%[0-9A-F]{2}", lambda m: m.group().lower(), seen.raw_path)
    said = f"bad request {seen.raw_path} {seen.headers} {lower_hex} {unquote_plus(seen.raw_path)}"
    return 400, {}, {"message": said}


@pytest.mark.parametrize(
    "auth",
    [
        OpenApiAuthSettings(type="api_key", env="ECHO_KEY", location="query", name="key"),
        OpenApiAuthSettings(type="basic", env="ECHO_KEY", username="me"),
    ],
    ids=["query-key", "basic"],
)
def test_an_echoed_secret_is_scrubbed_in_every_encoding_from_errors_results_and_httpx_logs(
    tmp_path: Path, loopback: Loopback, caplog: pytest.LogCaptureFixture, auth: OpenApiAuthSettings
) -> None:
    caplog.set_level(logging.DEBUG)
    gw = make(tmp_path, loopback, auth)
    loopback.answer(echo_everything)
    failed = run_sync(gw.invoke("echo_lookup", {}))
    loopback.answer(lambda seen: (200, {"Content-Type": "text/plain"}, str(echo_everything(seen)[2])))
    echoed = run_sync(gw.invoke("echo_lookup", {}))
    assert failed.error is not None and "[redacted]" in failed.error.message
    assert echoed.status == "ok" and "[redacted]" in echoed.output["text"]
    sent = loopback.seen[0]
    assert (
        ("key", KEY) in sent.query
        if auth.type == "api_key"
        else FORMS["basic"] in sent.headers["authorization"]
    )
    assert "HTTP Request" in caplog.text  # httpx logged the request line: filtered, not silenced
    texts = {"error": failed.error.message, "result": echoed.output["text"], "logs": caplog.text}
    leaks = [(form, where) for form, value in FORMS.items() for where, text in texts.items() if value in text]
    assert leaks == []

"""Calls through the Gateway to a real loopback HTTP server, with real httpx."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

import pytest

from gateway import Gateway, MemoryAuditLog, run_sync
from gateway.catalog import Catalog
from gateway.context import ToolResult
from gateway.gate.confirmation import ConfirmationGate
from gateway.openapi import OpenApi
from gateway.settings.loading import OpenApiAuthSettings, OpenApiSettings

from .conftest import Loopback, Seen, op, write_spec

SECRET = "s3cr3t-token-value-42"


def spec(base: str) -> dict[str, Any]:
    item = {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}
    return {
        "openapi": "3.0.3",
        "info": {"title": "Shop API"},
        "servers": [{"url": base}],
        "components": {"securitySchemes": {"key": {"type": "apiKey", "in": "query", "name": "api_key"}}},
        "paths": {
            "/items/{id}": {
                "parameters": [item],
                "get": op(
                    "getItem",
                    parameters=[
                        {
                            "name": "tags",
                            "in": "query",
                            "schema": {"type": "array", "items": {"type": "string"}},
                        },
                        {
                            "name": "ids",
                            "in": "query",
                            "explode": False,
                            "schema": {"type": "array", "items": {"type": "integer"}},
                        },
                        {
                            "name": "filter",
                            "in": "query",
                            "style": "deepObject",
                            "schema": {"type": "object", "properties": {"state": {"type": "string"}}},
                        },
                        {"name": "verbose", "in": "query", "schema": {"type": "boolean"}},
                        {"name": "X-Trace", "in": "header", "schema": {"type": "string"}},
                        {"name": "api_key", "in": "query", "schema": {"type": "string"}},
                    ],
                ),
                "delete": op("deleteItem"),
            },
            "/items": {
                "post": op(
                    "createItem",
                    requestBody={
                        "required": True,
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "object",
                                    "required": ["name"],
                                    "properties": {"name": {"type": "string"}, "price": {"type": "number"}},
                                }
                            }
                        },
                    },
                ),
            },
            "/charges": {
                "post": op(
                    "PostCharges",
                    requestBody={
                        "content": {
                            "application/x-www-form-urlencoded": {
                                "schema": {
                                    "type": "object",
                                    "properties": {
                                        "amount": {"type": "integer"},
                                        "metadata": {"type": "object"},
                                        "expand": {"type": "array", "items": {"type": "string"}},
                                    },
                                },
                                "encoding": {"expand": {"style": "deepObject", "explode": True}},
                            }
                        }
                    },
                )
            },
            "/report": {"get": op("getReport")},
        },
    }


def gateway_for(
    tmp_path: Path,
    loopback: Loopback,
    *,
    auth: OpenApiAuthSettings | None = None,
    environ: dict[str, str] | None = None,
    **settings: Any,
) -> tuple[Gateway, MemoryAuditLog, OpenApi]:
    path = write_spec(tmp_path, spec(loopback.url))
    entry = OpenApiSettings(name="shop", spec=path, auth=auth or OpenApiAuthSettings(), **settings)
    api = OpenApi(entry, tmp_path / "cache", environ=environ or {})
    audit = MemoryAuditLog()
    return Gateway(Catalog(api.definitions()), audit=audit, gate=ConfirmationGate("model")), audit, api


def call(gw: Gateway, name: str, params: dict[str, Any]) -> ToolResult:
    return run_sync(gw.invoke(name, params))


def test_path_values_stay_one_segment_and_query_styles_follow_the_spec(
    tmp_path: Path, loopback: Loopback
) -> None:
    gw, _, _ = gateway_for(tmp_path, loopback)
    loopback.answer(lambda seen: (200, {}, {"id": "x"}))
    result = call(
        gw,
        "shop_get_item",
        {
            "id": "../admin",
            "tags": ["a", "b"],
            "ids": [1, 2],
            "filter": {"state": "open"},
            "verbose": True,
            "X-Trace": "t1",
        },
    )
    assert result.status == "ok" and result.output == {"id": "x"}
    seen = loopback.seen[-1]
    assert seen.raw_path.split("?")[0] == "/items/..%2Fadmin"
    assert seen.query == [
        ("tags", "a"),
        ("tags", "b"),
        ("ids", "1,2"),
        ("filter[state]", "open"),
        ("verbose", "true"),
    ]
    assert seen.headers["x-trace"] == "t1"
    call(gw, "shop_get_item", {"id": ".."})
    assert loopback.seen[-1].raw_path == "/items/%2E%2E"


def test_a_json_body_is_flattened_and_sent_as_json(tmp_path: Path, loopback: Loopback) -> None:
    gw, _, _ = gateway_for(tmp_path, loopback, safe=["createItem"])
    loopback.answer(lambda seen: (201, {}, {"id": "i1", **seen.json()}))
    result = call(gw, "shop_create_item", {"name": "Lamp", "price": 9.5})
    assert result.output == {"id": "i1", "name": "Lamp", "price": 9.5}
    assert loopback.seen[-1].headers["content-type"] == "application/json"
    bad = call(gw, "shop_create_item", {"price": 1})
    assert bad.error is not None and bad.error.code == "invalid_arguments"
    assert len(loopback.seen) == 1  # refused before anything was sent


def test_a_form_body_nests_in_brackets(tmp_path: Path, loopback: Loopback) -> None:
    gw, _, _ = gateway_for(tmp_path, loopback, safe=["PostCharges"])
    call(gw, "shop_post_charges", {"amount": 500, "metadata": {"plan": "pro"}, "expand": ["customer"]})
    seen = loopback.seen[-1]
    assert seen.headers["content-type"] == "application/x-www-form-urlencoded"
    assert seen.body.decode() == "amount=500&metadata%5Bplan%5D=pro&expand%5B0%5D=customer"


def test_destructive_operations_wait_for_confirmation(tmp_path: Path, loopback: Loopback) -> None:
    gw, audit, _ = gateway_for(tmp_path, loopback)
    result = call(gw, "shop_delete_item", {"id": "i1"})
    assert result.status == "confirmation_required" and loopback.seen == []
    assert audit.records[-1].outcome == "pending_confirmation"


@pytest.mark.parametrize(
    ("status", "body", "code", "said"),
    [
        (404, {"message": "Not Found"}, "not_found", "Shop API answered 404 Not Found: Not Found"),
        (
            409,
            {"error": {"message": "already\x1b[2J exists see https://x.test/docs"}},
            "conflict",
            "already exists",
        ),
        (422, {"errors": [{"message": "name is too long"}]}, "invalid", "name is too long"),
        (403, "<html><b>Forbidden</b></html>", "permission_denied", "Forbidden"),
        (500, "", "unavailable", "500 Internal Server Error"),
        (504, "", "timeout", "504 Gateway Timeout"),
    ],
)
def test_http_errors_map_onto_the_gateways_codes(  # noqa: PLR0917 (parametrized)
    tmp_path: Path, loopback: Loopback, status: int, body: Any, code: str, said: str
) -> None:
    gw, _, _ = gateway_for(tmp_path, loopback)
    loopback.answer(lambda seen: (status, {}, body))
    result = call(gw, "shop_get_report", {})
    assert result.error is not None and result.error.code == code
    assert (
        said in result.error.message
        and "https://" not in result.error.message
        and "\x1b" not in result.error.message
    )


def test_429_and_503_are_retried_after_retry_after_for_safe_methods_only(
    tmp_path: Path, loopback: Loopback
) -> None:
    gw, _, api = gateway_for(tmp_path, loopback, safe=["createItem"])
    waits: list[float] = []
    api.client._sleep = waits.append
    answers = iter([(503, {"Retry-After": "3"}, {}), (429, {}, {}), (200, {}, {"ok": True})])
    loopback.answer(lambda seen: next(answers))
    assert call(gw, "shop_get_report", {}).output == {"ok": True}
    assert waits == [3.0, 2.0]  # the server's word, then the backoff
    loopback.answer(lambda seen: (503, {"Retry-After": "0"}, {"message": "busy"}))
    result = call(gw, "shop_create_item", {"name": "x"})
    assert result.error is not None and result.error.code == "unavailable"
    assert [s.method for s in loopback.seen].count("POST") == 1  # a write is never sent twice


def test_a_long_retry_after_is_not_waited_for(tmp_path: Path, loopback: Loopback) -> None:
    gw, _, api = gateway_for(tmp_path, loopback)
    api.client._sleep = lambda s: pytest.fail("waited")
    loopback.answer(lambda seen: (429, {"Retry-After": "120"}, {}))
    result = call(gw, "shop_get_report", {})
    assert result.error is not None and "Try again in 120 seconds" in result.error.message


def test_an_apis_own_429_reaches_the_model_as_rate_limited_with_its_retry_after(
    tmp_path: Path, loopback: Loopback
) -> None:
    gw, _, _ = gateway_for(tmp_path, loopback, safe=["createItem"])
    loopback.answer(lambda seen: (429, {"Retry-After": "90"}, {"message": "slow down"}))
    limited = call(gw, "shop_create_item", {"name": "x"})  # a write: never retried
    assert limited.error is not None and limited.error.code == "rate_limited"
    assert limited.error.retry_after_seconds == 90 and "Wait 90 seconds" in limited.error.next_step
    assert "slow down" in limited.error.message
    loopback.answer(lambda seen: (429, {}, {}))
    unsaid = call(gw, "shop_create_item", {"name": "x"})
    assert unsaid.error is not None and unsaid.error.code == "rate_limited"
    assert unsaid.error.retry_after_seconds is None


@pytest.mark.parametrize("said", ["9" * 400, "9" * 5000, "\u00b2"], ids=["infinite", "digits", "superscript"])
def test_a_hostile_retry_after_fails_the_call_cleanly_and_its_outcome_is_audited(
    tmp_path: Path, loopback: Loopback, said: str
) -> None:
    gw, audit, api = gateway_for(tmp_path, loopback, safe=["createItem"])
    waits: list[float] = []
    api.client._sleep = waits.append
    loopback.answer(lambda seen: (429, {"Retry-After": said}, {}))
    for tool, params in (("shop_get_report", {}), ("shop_create_item", {"name": "x"})):
        result = call(gw, tool, params)
        assert result.error is not None and result.error.code == "rate_limited", result.error
        seconds = result.error.retry_after_seconds
        assert seconds is not None and 1 <= seconds <= 86_400 and len(result.error.message) < 400
        assert [r.outcome for r in audit.records if r.tool == tool][-1] == "failed"
    assert all(wait <= 30 for wait in waits)  # an unreadable one: the usual backoff


def test_answers_are_capped_and_text_is_returned_as_text(tmp_path: Path, loopback: Loopback) -> None:
    gw, _, _ = gateway_for(tmp_path, loopback, max_response_bytes=1000)
    loopback.answer(lambda seen: (200, {}, {"rows": ["x" * 50] * 100}))
    big = call(gw, "shop_get_report", {})
    assert big.error is not None and big.error.code == "invalid" and "ask for less" in big.error.message
    loopback.answer(lambda seen: (200, {"Content-Type": "text/csv"}, "a,b\n" * 500))
    text = call(gw, "shop_get_report", {})
    assert text.output["text"] == ("a,b\n" * 250) and text.output["truncated"] is True
    loopback.answer(lambda seen: (204, {}, b""))
    assert call(gw, "shop_delete_item", {"id": "1"}).status == "confirmation_required"


def test_an_unreachable_server_is_unavailable(tmp_path: Path, loopback: Loopback) -> None:
    gw, _, _ = gateway_for(tmp_path, loopback, base_url="http://127.0.0.1:9")
    result = call(gw, "shop_get_report", {})
    assert result.error is not None and result.error.code == "unavailable"


def secrets_leak(
    gw: Gateway, audit: MemoryAuditLog, results: list[ToolResult], logs: str, secret: str
) -> list[str]:
    found = []
    if secret in logs:
        found.append("logs")
    if secret in json.dumps([r.__dict__ for r in audit.records], default=str):
        found.append("audit")
    if secret in json.dumps([r.output for r in results], default=str):
        found.append("results")
    if secret in json.dumps([r.error.message if r.error else "" for r in results]):
        found.append("errors")
    return found


@pytest.mark.parametrize(
    ("auth", "where"),
    [
        (
            OpenApiAuthSettings(type="bearer", env="SHOP_TOKEN"),
            lambda s: s.headers["authorization"] == f"Bearer {SECRET}",
        ),
        (OpenApiAuthSettings(type="api_key", env="SHOP_TOKEN"), lambda s: ("api_key", SECRET) in s.query),
        (
            OpenApiAuthSettings(type="api_key", env="SHOP_TOKEN", location="cookie", name="sid"),
            lambda s: s.headers["cookie"] == f"sid={SECRET}",
        ),
        (
            OpenApiAuthSettings(type="basic", env="SHOP_TOKEN", username="me"),
            lambda s: s.headers["authorization"].startswith("Basic "),
        ),
    ],
)
def test_credentials_are_sent_and_never_reach_logs_audit_errors_or_results(
    tmp_path: Path,
    loopback: Loopback,
    caplog: pytest.LogCaptureFixture,
    auth: OpenApiAuthSettings,
    where: Any,
) -> None:
    caplog.set_level(logging.DEBUG)
    gw, audit, _ = gateway_for(tmp_path, loopback, auth=auth, environ={"SHOP_TOKEN": SECRET})
    import base64

    encoded = base64.b64encode(f"me:{SECRET}".encode()).decode()

    def echo(seen: Seen) -> Any:  # a server that echoes what it got, in an error and in a result
        return (
            (401 if "fail" in seen.path else 200),
            {},
            {"message": f"got {seen.headers} {seen.query}", "echo": str(seen.headers)},
        )

    loopback.answer(echo)
    results = [call(gw, "shop_get_report", {}), call(gw, "shop_get_item", {"id": "fail"})]
    assert where(loopback.seen[0])
    assert results[0].status == "ok" and results[1].error is not None
    item = gw.catalog.get("shop_get_item")
    assert item is not None
    if auth.type == "api_key" and auth.location is None:  # the key the gateway sends is not asked for
        assert "api_key" not in item.json_schema["properties"]
    for secret in (SECRET, encoded):
        assert secrets_leak(gw, audit, results, caplog.text, secret) == []


def test_a_missing_secret_names_the_variable_not_a_value(tmp_path: Path, loopback: Loopback) -> None:
    gw, _, _ = gateway_for(tmp_path, loopback, auth=OpenApiAuthSettings(type="bearer", env="SHOP_TOKEN"))
    result = call(gw, "shop_get_report", {})
    assert (
        result.error is not None
        and result.error.code == "permission_denied"
        and "SHOP_TOKEN" in result.error.message
    )
    assert loopback.seen == []


def test_a_secrets_file_works_too(tmp_path: Path, loopback: Loopback) -> None:
    secret_file = tmp_path / "token"
    secret_file.write_text(SECRET + "\n")
    gw, _, _ = gateway_for(tmp_path, loopback, auth=OpenApiAuthSettings(type="bearer", file=secret_file))
    call(gw, "shop_get_report", {})
    assert loopback.seen[-1].headers["authorization"] == f"Bearer {SECRET}"


def test_oauth2_client_credentials_fetches_and_refreshes_the_token(
    tmp_path: Path, loopback: Loopback, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    issued: list[str] = []
    revoked: set[str] = set()

    def server(seen: Seen) -> Any:
        if seen.path == "/token":
            assert dict(parse_qsl(seen.body.decode()))["grant_type"] == "client_credentials"
            issued.append(f"access-{len(issued)}-abcdef")
            return 200, {}, {"access_token": issued[-1], "expires_in": 3600}
        token = seen.headers.get("authorization", "").removeprefix("Bearer ")
        if token in revoked or token not in issued:
            return 401, {}, {"message": "bad token"}
        return 200, {}, {"token": token}

    loopback.answer(server)
    auth = OpenApiAuthSettings(
        type="oauth2",
        env="SHOP_SECRET",
        username="client-1",
        token_url=f"{loopback.url}/token",
        scopes=["read"],
    )
    gw, audit, _ = gateway_for(tmp_path, loopback, auth=auth, environ={"SHOP_SECRET": SECRET})
    first = call(gw, "shop_get_report", {})
    second = call(gw, "shop_get_report", {})
    assert len(issued) == 1  # kept while valid
    revoked.add(issued[0])
    third = call(gw, "shop_get_report", {})
    assert len(issued) == 2 and third.status == "ok"  # refused, refreshed, sent again
    assert loopback.seen[0].headers["authorization"].startswith("Basic ")  # the client's credentials
    for result in (first, second, third):
        assert result.output == {"token": "[redacted]"}
    for token in [SECRET, *issued]:
        assert secrets_leak(gw, audit, [first, second, third], caplog.text, token) == []

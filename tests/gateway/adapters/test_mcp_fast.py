"""The stateless fast path answers with the SDK's own bytes, and leaves to the SDK what it must answer.

The requests are the real SDK client's (captured once through a recording proxy, as the load
benchmark replays them), with their names, arguments and envelope changed one at a time. Each is
sent to two `gateway serve` processes on the same catalog, one with `[serve] fast_path = false`;
status, headers and body must be the same bytes, ids of pending confirmations aside.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from benchmarks.mcp_wire import Request, Response, Script, capture, read_response
from gateway.adapters import mcp_fast
from gateway.adapters.jsonrpc_checks import JsonRpcGuard
from gateway.adapters.mcp_http import http_app
from gateway.adapters.mcp_server import build_server
from gateway.runtime import open_gateway
from gateway.settings.loading import load_settings

from .mcp_server_support import HttpServer, audit_outcomes, http_server, write_config

STATELESS = {"GATEWAY_SERVE_SESSIONS": "false"}
META = "_meta"
VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"


def _call(name: str, arguments: Any) -> dict[str, Any]:
    return {"name": "invoke_tool", "arguments": {"tool_name": name, "parameters": arguments}}


# (what it is, params of a tools/call, or None for the recorded tools/list)
CASES: list[tuple[str, dict[str, Any] | None]] = [
    ("tools/list", None),
    ("a discover", {"name": "discover_tools", "arguments": {"query": "write down a note"}}),
    ("a discover, non-ASCII", {"name": "discover_tools", "arguments": {"query": "notiz für café ☕"}}),
    ("a schema", {"name": "get_tool_schema", "arguments": {"tool_name": "notes_create"}}),
    ("a read", _call("notes_search", {"title": "milk"})),
    ("a write", _call("notes_create", {"title": "Buy milk – ünïcödé", "priority": 2})),
    ("wrong types", _call("notes_create", {"title": 5, "priority": "high"})),
    ("an extra field", _call("notes_create", {"title": "x", "colour": "red"})),
    ("an unknown tool", _call("notes_frobnicate", {})),
    ("a permission refusal", _call("files_read", {"path": "/etc/passwd"})),
    ("a destructive call", _call("notes_delete", {"note_id": "n1"})),
    ("an unknown meta-tool", {"name": "no_such_tool", "arguments": {}}),
    ("no arguments", {"name": "discover_tools"}),
    ("a null value", _call("notes_create", {"title": "x", "color": None})),
    ("a huge string", _call("notes_create", {"title": "a" * 100_000})),
]

# Requests the SDK must answer: each changed in one way the fast path does not claim.
HANDED_ON: list[tuple[str, dict[str, Any]]] = [
    ("a progress token", {META: {"progressToken": "p1"}}),
    ("a trace context", {META: {"traceparent": "00-" + "1" * 32 + "-" + "2" * 16 + "-01"}}),
    ("request state", {"requestState": "x"}),
    ("input responses", {"inputResponses": {}}),
    ("a body version that disagrees", {META: {VERSION_KEY: "2025-11-25"}}),
    ("no capabilities", {META: {CAPABILITIES_KEY: None}}),
    ("a name that is not a string", {"name": 5}),
    ("arguments that are not an object", {"arguments": [1, 2]}),
]


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fast")


@pytest.fixture(scope="module")
def servers(root: Path) -> Iterator[tuple[HttpServer, HttpServer]]:
    with (
        http_server(write_config(root / "fast"), env=STATELESS) as fast,
        http_server(write_config(root / "sdk"), env={**STATELESS, "GATEWAY_SERVE_FAST_PATH": "false"}) as sdk,
    ):
        yield fast, sdk


@pytest.fixture(scope="module", params=["2026-07-28", "legacy"])
def script(servers: tuple[HttpServer, HttpServer], request: pytest.FixtureRequest) -> Script:
    """What the real SDK client sends, in each era: 2026-07-28, and 2025-11-25 (its `legacy` mode)."""
    recorded = asyncio.run(
        capture(servers[1].url, request.param, {"tool_name": "notes_search", "parameters": {"title": "a"}})
    )
    assert recorded.call.message["method"] == "tools/call"
    return recorded


def _modern(script: Script) -> bool:
    return META in script.call.message["params"]


def _listing(script: Script) -> Request:
    """The recorded tools/list request: the client's call with its method and routing headers changed."""
    message = script.call.message
    message["method"] = "tools/list"
    message["params"] = {META: message["params"][META]} if _modern(script) else {}
    head = [(n, b"tools/list" if n.lower() == b"mcp-method" else v) for n, v in script.call.head]
    head = [(n, v) for n, v in head if n.lower() != b"mcp-name"]
    return Request(script.call.method, head, script.call.target, json.dumps(message).encode())


def _with(script: Script, params: dict[str, Any], *, request_id: Any = 7) -> Request:
    """The recorded call with `params` merged into its own (its `_meta` too), and the Mcp-Name to match."""
    message = script.call.message
    merged = {**message["params"], **{k: v for k, v in params.items() if k != META}}
    if _modern(script) or META in params:
        merged[META] = {**message["params"].get(META, {}), **params.get(META, {})}
        merged[META] = {k: v for k, v in merged[META].items() if v is not None}
    message["params"], message["id"] = merged, request_id
    name = merged.get("name")
    head = [(n, str(name).encode() if n.lower() == b"mcp-name" else v) for n, v in script.call.head]
    return Request(script.call.method, head, script.call.target, json.dumps(message).encode())


def _versioned(request: Request, version: bytes) -> Request:
    head = [(n, version if n.lower() == b"mcp-protocol-version" else v) for n, v in request.head]
    return Request(request.method, head, request.target, request.body)


def _handed_on(script: Script) -> list[tuple[str, Request]]:
    """Requests the SDK must answer, for the script's era."""
    if _modern(script):
        return [(label, _with(script, change)) for label, change in HANDED_ON]
    read = CASES[4][1] or {}
    return [
        ("a progress token", _with(script, {META: {"progressToken": "p1"}})),
        ("a name that is not a string", _with(script, {"name": 5})),
        ("arguments that are not an object", _with(script, {"arguments": [1, 2]})),
        ("a version without structured content", _versioned(_with(script, read), b"2025-03-26")),
    ]


async def _send(url: str, requests: list[Request]) -> list[Response]:
    """Each request on one keep-alive connection, its Host header pointing at `url`."""
    target = urlsplit(url)
    reader, writer = await asyncio.open_connection(target.hostname, target.port)
    out = []
    try:
        for request in requests:
            head = [(n, target.netloc.encode() if n.lower() == b"host" else v) for n, v in request.head]
            writer.write(Request(request.method, head, target.path.encode(), request.body).encode())
            await writer.drain()
            out.append(await read_response(reader))
    finally:
        writer.close()
    return out


_PENDING = re.compile(rb"[0-9a-f]{32}|[A-Za-z0-9_-]{40,}")


def _comparable(response: Response) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
    """Status, headers in their order (the length's value aside) and body, pending ids masked."""
    headers = [(k, b"" if k == b"content-length" else v) for k, v in response.headers.items() if k != b"date"]
    return response.status, headers, _PENDING.sub(b"<id>", response.body)


def _both(
    servers: tuple[HttpServer, HttpServer], requests: list[Request]
) -> tuple[list[Response], list[Response]]:
    fast, sdk = servers
    return asyncio.run(_send(fast.url, requests)), asyncio.run(_send(sdk.url, requests))


def test_every_recorded_request_gets_the_sdks_own_bytes(
    servers: tuple[HttpServer, HttpServer], script: Script
) -> None:
    requests = [_listing(script) if params is None else _with(script, params) for _, params in CASES]
    requests += [
        _with(script, CASES[1][1] or {}, request_id="a-string-id"),
        _with(script, {}, request_id=2**53),
    ]
    from_fast, from_sdk = _both(servers, requests)
    for (label, _), fast, sdk in zip(
        [*CASES, ("a string id", None), ("a big id", None)], from_fast, from_sdk, strict=True
    ):
        assert fast.status == 200, (label, fast.body[:300])
        assert _comparable(fast) == _comparable(sdk), label
        if label != "a destructive call":  # its pending id aside, the same bytes: lengths too
            assert fast.headers[b"content-length"] == sdk.headers[b"content-length"], label


def test_what_the_fast_path_does_not_claim_is_answered_as_the_sdk_answers_it(
    servers: tuple[HttpServer, HttpServer], script: Script
) -> None:
    handed_on = _handed_on(script)
    from_fast, from_sdk = _both(servers, [request for _, request in handed_on])
    for (label, _), fast, sdk in zip(handed_on, from_fast, from_sdk, strict=True):
        assert _comparable(fast) == _comparable(sdk), label


def test_calls_answered_by_the_fast_path_are_audited_as_any_call(
    servers: tuple[HttpServer, HttpServer], script: Script, root: Path
) -> None:
    request = _with(script, _call("notes_create", {"title": "audited"}))
    (fast,), (sdk,) = _both(servers, [request])
    assert b'"isError":false' in fast.body and _comparable(fast) == _comparable(sdk)
    assert audit_outcomes(root / "fast", "notes_create") == audit_outcomes(root / "sdk", "notes_create")
    assert "executed" in audit_outcomes(root / "fast", "notes_create")


@pytest.fixture
def fast_path(tmp_path: Path) -> Iterator[mcp_fast.FastPath]:
    yield from _fast_path(tmp_path, "")


def _fast_path(tmp_path: Path, extra: str, *, elicitation: bool = False) -> Iterator[mcp_fast.FastPath]:
    settings = load_settings(write_config(tmp_path, extra, elicitation=elicitation), environ={})
    with open_gateway(settings) as gw:
        fast = mcp_fast.fast_path(build_server(gw, settings, transport="http"))
        assert fast is not None
        yield fast


def _scope(request: Request, *extra: tuple[bytes, bytes]) -> dict[str, Any]:
    return {"type": "http", "headers": [(n.lower(), v) for n, v in request.head] + list(extra)}


def test_the_fast_path_claims_the_recorded_requests_and_nothing_it_must_hand_on(
    fast_path: mcp_fast.FastPath, script: Script
) -> None:
    for label, params in CASES:
        request = _listing(script) if params is None else _with(script, params)
        claim = fast_path.claim(_scope(request), request.message)
        assert claim is not None, label
        assert (claim.method, claim.request_id) == (request.message["method"], request.message["id"]), label
    for label, request in _handed_on(script):
        assert fast_path.claim(_scope(request), request.message) is None, label


@pytest.mark.parametrize(
    ("label", "header"),
    [
        ("an Mcp-Param header", (b"mcp-param-x", b"1")),
        ("a second version header", (b"mcp-protocol-version", b"2026-07-28")),
        ("a second method header", (b"mcp-method", b"tools/call")),
    ],
)
def test_headers_the_sdk_checks_send_the_request_to_it(
    fast_path: mcp_fast.FastPath, script: Script, label: str, header: tuple[bytes, bytes]
) -> None:
    if header[0] == b"mcp-method" and not _modern(script):
        pytest.skip("a handshake-era client sends no Mcp-Method (its transport reads none)")
    request = _with(script, CASES[1][1] or {})
    assert fast_path.claim(_scope(request), request.message) is not None
    assert fast_path.claim(_scope(request, header), request.message) is None, label


def test_a_handshake_era_request_with_a_json_like_type_is_left_to_the_transport_that_refuses_it(
    fast_path: mcp_fast.FastPath, script: Script, servers: tuple[HttpServer, HttpServer]
) -> None:
    request = _with(script, CASES[4][1] or {})
    head = [(n, b"application/jsonx" if n.lower() == b"content-type" else v) for n, v in request.head]
    odd = Request(request.method, head, request.target, request.body)
    (fast,), (sdk,) = _both(servers, [odd])
    assert _comparable(fast) == _comparable(sdk)
    claimed = fast_path.claim(_scope(odd), odd.message)
    assert (claimed is not None) is _modern(script)  # the modern entry checks the type by prefix only


@pytest.mark.parametrize(
    ("name", "value"),
    [(b"content-type", b"text/plain"), (b"accept", b"text/event-stream"), (b"mcp-name", b"invoke_tool")],
)
def test_a_request_the_sdk_refuses_is_not_claimed(
    fast_path: mcp_fast.FastPath, script: Script, name: bytes, value: bytes
) -> None:
    if name == b"mcp-name" and not _modern(script):
        pytest.skip("a handshake-era client sends no Mcp-Name")
    request = _with(script, CASES[1][1] or {})  # a discover_tools call: Mcp-Name invoke_tool disagrees
    scope = _scope(request)
    scope["headers"] = [(n, value if n == name else v) for n, v in scope["headers"]]
    assert fast_path.claim(scope, request.message) is None


def test_a_client_that_can_answer_a_question_goes_to_the_sdk_when_the_gate_asks_through_it(
    tmp_path: Path, script: Script
) -> None:
    if not _modern(script):
        pytest.skip("a stateless handshake-era request declares no capabilities: none is asked")
    asking = _with(script, {META: {CAPABILITIES_KEY: {"elicitation": {"form": {}}}}})
    for fast in _fast_path(tmp_path, "", elicitation=True):
        assert fast.claim(_scope(asking), asking.message) is None
        plain = _with(script, {})
        assert fast.claim(_scope(plain), plain.message) is not None
    for fast in _fast_path(tmp_path / "no-elicitation", ""):
        assert fast.claim(_scope(asking), asking.message) is not None


def test_nothing_is_claimed_while_opentelemetry_records_spans(
    fast_path: mcp_fast.FastPath, script: Script, monkeypatch: pytest.MonkeyPatch
) -> None:
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider

    request = _with(script, {})
    assert fast_path.claim(_scope(request), request.message) is not None
    monkeypatch.setattr(trace, "get_tracer_provider", TracerProvider)
    assert fast_path.claim(_scope(request), request.message) is None


def test_with_the_setting_off_or_with_sessions_no_fast_path_is_put_in_front(tmp_path: Path) -> None:
    for extra, expected in [
        ("[serve]\nsessions = false\n", True),
        ("[serve]\nsessions = false\nfast_path = false\n", False),
        ("[serve]\nsessions = true\n", False),
    ]:
        settings = load_settings(write_config(tmp_path / str(len(extra)), extra), environ={})
        with open_gateway(settings) as gw:
            app = http_app(
                build_server(gw, settings, transport="http"), settings, "127.0.0.1", "http://x/mcp", None
            )
            guards = [g for g in _apps(app) if isinstance(g, JsonRpcGuard)]
            assert guards and all((g.fast is not None) is expected for g in guards), extra


def _apps(app: Any) -> Iterator[Any]:
    """Every ASGI application wrapped inside `app` (through `.app` and the router's routes)."""
    seen: set[int] = set()
    todo = [app]
    while todo:
        item = todo.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        yield item
        for attribute in ("app", "router"):
            if (inner := getattr(item, attribute, None)) is not None:
                todo.append(inner)
        todo.extend(route.app for route in getattr(item, "routes", []) if hasattr(route, "app"))

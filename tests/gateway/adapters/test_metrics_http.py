"""`/metrics` on `gateway serve --transport http`, scraped from a real server process, and OTLP export
to a real loopback receiver.

The server's metrics come from the calls a real MCP client made through it; the receiver decodes
the protobuf the OTLP exporter sends, with the messages of `opentelemetry-proto`.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from gateway.adapters.admin import admin_digests
from gateway.errors import ConfigError, UserError
from gateway.settings.loading import load_settings

from .mcp_server_support import DELETE_NOTE, http_client, http_server, text_of, write_config

ADMIN_TOKEN = "admin-token-5f0c2d9e8b7a"
OPS_TOKEN = "ops-token-1a2b3c4d5e6f"
AGENT_TOKEN = "agent-token-6f5e4d3c2b1a"

CONFIG = f"""
[console]
admin_token_env = "TEST_GATEWAY_ADMIN_TOKEN"

[principals.ops]
roles = ["admin"]

[[serve.tokens]]
principal = "ops"
sha256 = "{hashlib.sha256(OPS_TOKEN.encode()).hexdigest()}"

[[serve.tokens]]
principal = "agent"
sha256 = "{hashlib.sha256(AGENT_TOKEN.encode()).hexdigest()}"
"""


def metrics_url(mcp_url: str) -> str:
    return mcp_url.removesuffix("/mcp") + "/metrics"


def scrape(url: str, token: str | None = None) -> httpx2.Response:
    headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
    return httpx2.get(url, headers=headers, timeout=30)


def test_metrics_need_the_admin_token_and_count_what_the_clients_did(tmp_path: Path) -> None:
    config = write_config(tmp_path, CONFIG)
    with http_server(config, env={"TEST_GATEWAY_ADMIN_TOKEN": ADMIN_TOKEN}) as server:

        async def scenario() -> None:
            async with http_client(server.url, AGENT_TOKEN, mode="2026-07-28") as client:
                await client.call_tool("discover_tools", {"query": "delete a note"})
                held = text_of(await client.call_tool("invoke_tool", {**DELETE_NOTE}))
                assert held["status"] == "confirmation_required"

        anyio.run(scenario)
        url = metrics_url(server.url)
        for token in (None, "wrong", AGENT_TOKEN):  # an agent's token is no operator's
            refused = scrape(url, token)
            assert refused.status_code == 401 and refused.headers["www-authenticate"].startswith("Bearer")
            assert "gateway_calls_total" not in refused.text and "admin token" in refused.text
        for token in (ADMIN_TOKEN, OPS_TOKEN):
            answered = scrape(url, token)
            assert answered.status_code == 200, answered.text
            assert answered.headers["content-type"].startswith("text/plain; version=0.0.4")
            text = answered.text
            assert 'gateway_calls_total{kind="meta",outcome="ok",tool="discover_tools"} 1.0' in text
            assert (
                'gateway_calls_total{kind="invoke",outcome="pending_confirmation",tool="notes_delete"} 1.0'
                in text
            )
            assert (
                'gateway_call_duration_seconds_count{kind="meta",outcome="ok",tool="get_tool_schema"}'
                not in text
            )
            assert "gateway_pending_approvals 1.0" in text
            assert ADMIN_TOKEN not in text and OPS_TOKEN not in text
    output = "".join(server.output)
    assert ADMIN_TOKEN not in output and OPS_TOKEN not in output and AGENT_TOKEN not in output


def test_metrics_are_refused_with_a_hint_when_no_admin_token_is_configured_and_open_when_configured(
    tmp_path: Path,
) -> None:
    with http_server(write_config(tmp_path / "closed")) as server:
        refused = scrape(metrics_url(server.url))
        assert refused.status_code == 401
        assert "send the token in " in refused.text and "console-token as a bearer token" in refused.text
    with http_server(write_config(tmp_path / "open", "[telemetry]\nmetrics_open = true\n")) as server:
        answered = scrape(metrics_url(server.url))
        assert answered.status_code == 200 and "gateway_pending_approvals 0.0" in answered.text


def test_an_admin_token_misconfigured_is_refused_before_serving(tmp_path: Path) -> None:
    both = '[console]\nadmin_token_env = "X"\nadmin_token_sha256 = "' + "0" * 64 + '"\n'
    with pytest.raises(ConfigError, match=r"admin_token_sha256 .* or admin_token_env, not both"):
        load_settings(write_config(tmp_path / "both", both), environ={})
    unset = load_settings(
        write_config(tmp_path / "unset", '[console]\nadmin_token_env = "NOPE_TOKEN"\n'), environ={}
    )
    with pytest.raises(UserError, match="environment variable NOPE_TOKEN is not set"):
        admin_digests(unset, {})


class _Receiver(BaseHTTPRequestHandler):
    received: list[tuple[str, bytes]]

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.received.append((self.path, body))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        return None


@contextmanager
def otlp_receiver() -> Iterator[tuple[str, list[tuple[str, bytes]]]]:
    """An OTLP/HTTP endpoint on loopback that keeps what it is sent."""
    received: list[tuple[str, bytes]] = []
    handler = type("Receiver", (_Receiver,), {"received": received})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", received
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_spans_and_metrics_are_exported_over_otlp_when_an_endpoint_is_configured(tmp_path: Path) -> None:
    with otlp_receiver() as (endpoint, received):
        config = write_config(
            tmp_path, f'[telemetry]\notlp_endpoint = "{endpoint}"\nservice_name = "gw-test"\n'
        )
        with http_server(config) as server:

            async def scenario() -> None:
                async with http_client(server.url, mode="2026-07-28") as client:
                    made = await client.call_tool(
                        "invoke_tool", {"tool_name": "notes_create", "parameters": {"title": "private words"}}
                    )
                    assert not made.is_error

            anyio.run(scenario)
        # Stopping the server (SIGTERM) flushes the batch of spans and the last metrics.
    spans = []
    for path, body in received:
        if path == "/v1/traces":
            request = ExportTraceServiceRequest.FromString(body)
            for resource in request.resource_spans:
                service = {a.key: a.value.string_value for a in resource.resource.attributes}["service.name"]
                spans += [(service, s.name) for scope in resource.scope_spans for s in scope.spans]
    assert ("gw-test", "execute_tool notes_create") in spans and (
        "gw-test",
        "execute_tool invoke_tool",
    ) in spans
    names = set()
    for path, body in received:
        if path == "/v1/metrics":
            for resource in ExportMetricsServiceRequest.FromString(body).resource_metrics:
                names |= {m.name for scope in resource.scope_metrics for m in scope.metrics}
    assert {"gateway.calls", "gateway.call.duration", "gateway.pending_approvals"} <= names
    assert all(b"private words" not in body for _, body in received)

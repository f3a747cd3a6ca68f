"""`python -m benchmarks.mcp_load`: the server's cost a call, from the bytes the SDK client sends."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from benchmarks.mcp_wire import Request, Response, failure, parse_requests, with_id

ROOT = Path(__file__).resolve().parents[1]


def test_a_request_is_sent_again_with_its_id_session_and_length_changed_and_nothing_else() -> None:
    body = b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"invoke_tool"}}'
    sent = (
        b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:1\r\nContent-Length: "
        + str(len(body)).encode()
        + b"\r\nmcp-session-id: old\r\naccept: application/json\r\n\r\n"
        + body
    )
    (request,) = parse_requests(sent + b"")
    assert request.encode() == sent
    again = request.encode(body=with_id(body, 1234), session=b"new")
    assert b'"id":1234,' in again and b"mcp-session-id: new\r\n" in again and b"old" not in again
    (parsed,) = parse_requests(again)
    assert parsed.message["id"] == 1234 and parsed.message["params"] == {"name": "invoke_tool"}


def test_an_error_result_or_an_http_error_counts_as_a_failed_call() -> None:
    assert (
        failure(Response(200, {}, b'{"jsonrpc":"2.0","id":1,"result":{"content":[],"isError":false}}'))
        is None
    )
    assert failure(Response(200, {}, b'{"jsonrpc":"2.0","id":1,"result":{"isError": true}}'))
    assert failure(Response(200, {}, b'{"jsonrpc":"2.0","id":1,"error":{"code":-32602}}'))
    assert failure(Response(429, {}, b""))
    assert isinstance(Request(b"POST", [], b"/mcp", b"").message, dict)


def test_the_benchmark_loads_both_servers_and_checks_the_gateways_audit_log() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "benchmarks.mcp_load", "--clients", "3", "--seconds", "0.5", "--rounds", "1"],
        check=False,
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    labels = ["in-process Gateway.call", "gateway, sessions off", "SDK minimal server, sessions on"]
    stateless = [
        "gateway, sessions off (2026-07-28 client), fast path off",
        "gateway, sessions off (2025-11-25 client)",
    ]
    for label in [*labels, *stateless]:
        assert re.search(rf"^{re.escape(label)}.*\s[\d.]+$", out, re.M), out
    audits = re.findall(r"audit log .*: ([\d,]+) executed invocations for ([\d,]+) calls", out)
    assert len(audits) == 5 and all(seen == calls and seen != "0" for seen, calls in audits), out

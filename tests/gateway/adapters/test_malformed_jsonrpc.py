"""Malformed JSON-RPC gets the error JSON-RPC 2.0 names, over stdio and Streamable HTTP.

Real servers: `gateway serve` as a subprocess fed raw lines on stdin, and `gateway serve --transport
http` reached with raw httpx posts.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx2 as httpx
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from .mcp_server_support import ROOT, http_server, server_env, stdio_server, write_config

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": "init",
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"},
    },
}
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
MALFORMED: list[tuple[str, int, Any]] = [
    ("{not json", -32700, None),
    ('[{"jsonrpc": "2.0", "id": 1, "method": "ping"}]', -32600, None),
    ('{"jsonrpc": "2.0", "id": null, "method": "tools/list"}', -32600, None),
    ('{"jsonrpc": "2.0", "id": 7}', -32600, 7),
    ('{"jsonrpc": "1.0", "id": 8, "method": "ping"}', -32600, 8),
    ("42", -32600, None),
    ("[" * 100_000, -32700, None),
]


def _stdio_answers(config: Path, lines: list[str]) -> list[dict[str, Any]]:
    proc = subprocess.run(
        [sys.executable, "-m", "gateway.cli", "serve", "--config", str(config)],
        input="".join(line + "\n" for line in lines).encode(),
        capture_output=True,
        cwd=ROOT,
        env=server_env(),
        timeout=60,
        check=True,
    )
    return [json.loads(line) for line in proc.stdout.decode().splitlines() if line.strip()]


def test_over_stdio_each_malformed_line_is_answered_and_the_server_keeps_serving(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    broken_response = '{"jsonrpc": "2.0", "id": null, "result": {}}'  # never answered
    lines = [line for line, _, _ in MALFORMED] + [broken_response, json.dumps(INITIALIZE)]
    answers = _stdio_answers(config, lines)
    errors = [(a["error"]["code"], a["id"]) for a in answers if "error" in a]
    assert errors == [(code, request_id) for _, code, request_id in MALFORMED]
    assert answers[-1]["id"] == "init" and "result" in answers[-1]


def test_over_http_each_malformed_body_is_answered_400_with_its_json_rpc_error(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    with http_server(config) as server:
        for body, code, request_id in MALFORMED:
            response = httpx.post(server.url, content=body, headers=HEADERS, timeout=30)
            assert response.status_code == 400, body
            answer = response.json()
            assert (answer["error"]["code"], answer["id"]) == (code, request_id), body
            assert "validation" not in answer["error"]["message"].lower()
        too_large = httpx.post(server.url, content=b" " * (5 << 20), headers=HEADERS, timeout=30)
        assert too_large.status_code == 413


def test_an_unsupported_protocol_version_header_is_refused_by_name(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    headers = {**HEADERS, "MCP-Protocol-Version": "1999-01-01"}
    body = {"jsonrpc": "2.0", "id": 3, "method": "tools/list"}
    with http_server(config) as server:
        response = httpx.post(server.url, json=body, headers=headers, timeout=30)
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == -32600 and "1999-01-01" in error["message"] and "_meta" not in error["message"]


def test_an_invalid_tools_list_cursor_is_refused_as_invalid_params(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with Client(stdio_server(write_config(tmp_path))) as client:
            with pytest.raises(MCPError) as refused:
                await client.list_tools(cursor="bogus", cache_mode="bypass")
            assert refused.value.code == -32602
            assert len((await client.list_tools()).tools) == 3

    anyio.run(scenario)

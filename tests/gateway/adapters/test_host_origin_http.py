"""Host and Origin checks on every route `gateway serve` answers: /mcp, /console and /metrics.

The application `gateway serve --transport http` builds runs on a real uvicorn on a loopback port;
requests come from httpx with forged Host and Origin headers, and from the real MCP client.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import httpx2 as httpx
import pytest

from gateway.adapters.admin import metrics_route
from gateway.adapters.mcp_http import http_app
from gateway.adapters.mcp_server import build_server
from gateway.adapters.origins import allowed_hosts
from gateway.console import console_app
from gateway.errors import UserError
from gateway.runtime import open_gateway
from gateway.settings.loading import load_settings

from ..loopback_http import loopback
from .mcp_server_support import (
    ROOT,
    _stop,
    _wait_for_line,
    audit_outcomes,
    http_client,
    http_server,
    initialize,
    server_env,
    text_of,
    write_config,
)

TOKEN = "console-admin-token-0123456789"
INITIALIZE = initialize()
MCP_HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


@contextmanager
def served(tmp_path: Path, extra: str = "") -> Iterator[str]:
    """The application `gateway serve` builds, over the sample catalog, on a loopback port."""
    config = write_config(tmp_path, f'[console]\nadmin_token_env = "CONSOLE_TOKEN"\n{extra}')
    settings = load_settings(config, environ={})
    environ = {"CONSOLE_TOKEN": TOKEN}
    with open_gateway(settings, prometheus=True) as gw:
        app = http_app(
            build_server(gw, settings, transport="http"),
            settings,
            "127.0.0.1",
            "http://127.0.0.1/mcp",
            None,
            console=console_app(gw, settings, environ=environ),
            routes=[metrics_route(gw.telemetry, settings, environ)],
        )
        with loopback(app) as url:
            yield url


@pytest.fixture
def base(tmp_path: Path) -> Iterator[str]:
    with served(tmp_path) as url:
        yield url


def statuses(base: str, headers: dict[str, str]) -> dict[str, int]:
    """The status of each route for a request carrying `headers`."""
    with httpx.Client(base_url=base, headers=headers) as client:
        return {
            "/mcp": client.post("/mcp", json=INITIALIZE, headers=MCP_HEADERS).status_code,
            "/console": client.get("/console/login").status_code,
            "/metrics": client.get("/metrics", headers={"authorization": f"Bearer {TOKEN}"}).status_code,
        }


def test_honest_requests_reach_every_route(base: str) -> None:
    assert statuses(base, {}) == {"/mcp": 200, "/console": 200, "/metrics": 200}
    port = base.rsplit(":", 1)[1]
    assert statuses(base, {"host": f"localhost:{port}", "origin": f"http://localhost:{port}"}) == {
        "/mcp": 200,
        "/console": 200,
        "/metrics": 200,
    }


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8765", "127.0.0.1.evil.example", "[::2]:80"])
def test_a_forged_host_is_refused_on_every_route(base: str, host: str) -> None:
    assert statuses(base, {"host": host}) == {"/mcp": 421, "/console": 421, "/metrics": 421}


@pytest.mark.parametrize(
    "origin", ["http://evil.example", "null", "http://127.0.0.1:1", "https://localhost", "file://"]
)
def test_a_foreign_origin_is_refused_on_every_route(base: str, origin: str) -> None:
    assert statuses(base, {"origin": origin}) == {"/mcp": 403, "/console": 403, "/metrics": 403}


def test_a_page_of_the_console_itself_may_post_and_the_real_mcp_client_works(base: str) -> None:
    with httpx.Client(base_url=base, headers={"origin": base}) as browser:
        assert browser.get("/console/login").status_code == 200
    # A no-referrer page's form: "Origin: null", and the browser's own word that it is same-origin.
    assert statuses(base, {"origin": "null", "sec-fetch-site": "same-origin"})["/console"] == 200
    assert statuses(base, {"origin": "null", "sec-fetch-site": "cross-site"})["/console"] == 403

    async def scenario() -> None:
        async with http_client(f"{base}/mcp") as client:
            found = await client.call_tool("discover_tools", {"query": "delete a note"})
            assert found.structured_content is not None

    anyio.run(scenario)


def test_configured_names_and_origins_replace_the_loopback_defaults(tmp_path: Path) -> None:
    extra = '[serve]\nallowed_hosts = ["gateway.internal:*"]\nallowed_origins = ["https://ops.example"]\n'
    with served(tmp_path, extra) as base:
        named = {"host": "gateway.internal:8765"}
        assert statuses(base, named) == {"/mcp": 200, "/console": 200, "/metrics": 200}
        assert statuses(base, {**named, "origin": "https://ops.example"})["/console"] == 200
        assert statuses(base, {**named, "origin": "https://other.example"})["/console"] == 403
        assert statuses(base, {}) == {"/mcp": 421, "/console": 421, "/metrics": 421}


def test_a_deep_parameters_string_from_the_mcp_client_is_invalid_and_audited(tmp_path: Path) -> None:
    deep = "[" * 5000 + "]" * 5000

    async def scenario(base: str) -> None:
        async with http_client(f"{base}/mcp") as client:
            result = await client.call_tool("invoke_tool", {"tool_name": "notes_create", "parameters": deep})
            error = text_of(result)["error"]
            assert error["code"] == "invalid_arguments"
            assert "Nested more than 64 levels deep" in error["problems"][0]["msg"]

    with served(tmp_path) as base:
        anyio.run(scenario, base)
    assert audit_outcomes(tmp_path) == ["invalid"]


def test_the_default_for_an_address_is_that_address_and_every_address_needs_names(tmp_path: Path) -> None:
    settings = load_settings(write_config(tmp_path), environ={})
    assert allowed_hosts(settings, "10.0.0.7") == ("10.0.0.7",)
    assert allowed_hosts(settings, "fd00::7") == ("[fd00::7]",)
    with pytest.raises(UserError, match="allowed_hosts"):
        allowed_hosts(settings, "0.0.0.0")
    served = subprocess.run(
        [
            sys.executable,
            "-m",
            "gateway.cli",
            "serve",
            "--transport",
            "http",
            "--host",
            "0.0.0.0",
            "--port",
            "0",
            "--config",
            str(write_config(tmp_path)),
        ],
        env=server_env(),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert served.returncode != 0 and "allowed_hosts" in served.stderr


def test_the_console_on_its_own_checks_host_and_origin_too(tmp_path: Path) -> None:
    config = write_config(tmp_path, '[console]\nadmin_token_env = "CONSOLE_TOKEN"\n')
    command = [sys.executable, "-m", "gateway.cli", "console", "--config", str(config), "--port", "0"]
    proc = subprocess.Popen(
        command,
        cwd=ROOT,
        env=server_env({"CONSOLE_TOKEN": TOKEN}),
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
    )
    drain = None
    try:
        line, output, drain = _wait_for_line(proc, proc.stderr, "console on", "gateway console")
        login = line.split()[-1] + "login"
        with httpx.Client() as client:
            assert client.get(login).status_code == 200
            assert client.get(login, headers={"host": "evil.example"}).status_code == 421
            assert client.get(login, headers={"origin": "http://evil.example"}).status_code == 403
    finally:
        _stop(proc, drain)
    assert "Traceback" not in "".join(output)


def test_a_refused_host_is_logged_without_its_control_characters(tmp_path: Path) -> None:
    with http_server(write_config(tmp_path)) as server:
        refused = httpx.get(server.url, headers={b"host": b"evil\x9b2J.example"})
        assert refused.status_code == 421
    logged = "".join(server.output)
    assert "refused a request for Host evil" in logged
    assert "\x9b" not in logged  # an 8-bit CSI

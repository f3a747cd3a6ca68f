"""Progress and cancellation of a slow call over Streamable HTTP, with the real MCP SDK client.

The server is `gateway serve --transport http` (a subprocess); the slow tool waits on an event
(`slow_tools`), so nothing here depends on timing but the server's own one-second progress beat.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import httpx2 as httpx
import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from gateway.adapters.mcp_calls import with_progress

from .mcp_server_support import audit_outcomes, http_client, http_server, stdio_server, text_of

WAIT = {"tool_name": "slow_wait", "parameters": {}}
RELEASE = {"tool_name": "slow_release", "parameters": {}}
REPORT = {"tool_name": "slow_report", "parameters": {}}
STARTED = {"tool_name": "slow_started", "parameters": {}}
STATELESS = {"GATEWAY_SERVE_SESSIONS": "false"}


def _config(directory: Path) -> Path:
    path = directory / "config.toml"
    catalogs = '["tests.gateway.sample_tools:provide", "tests.gateway.adapters.slow_tools:provide"]'
    path.write_text(f'catalogs = {catalogs}\ndata_dir = "{directory}"\n')
    return path


@pytest.mark.parametrize("mode", ["2026-07-28", "legacy"], ids=["2026-07-28", "2025-11-25-in-a-session"])
def test_a_slow_call_sends_progress_to_a_client_that_gave_a_token(tmp_path: Path, mode: str) -> None:
    updates: list[tuple[float, str | None]] = []
    result: list[types.CallToolResult] = []

    async def scenario(url: str) -> None:
        beat = anyio.Event()

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            updates.append((progress, message))
            beat.set()

        async with http_client(url, mode=mode) as client, anyio.create_task_group() as tg:

            async def wait() -> None:
                result.append(await client.call_tool("invoke_tool", WAIT, progress_callback=on_progress))

            tg.start_soon(wait)
            with anyio.fail_after(30):
                await beat.wait()
            await client.call_tool("invoke_tool", RELEASE)

    with http_server(_config(tmp_path)) as server:
        anyio.run(scenario, server.url)
    assert updates and updates[0][0] == 1.0 and updates[0][1] == "running for 1 s"
    assert text_of(result[0]) == {"released": True}, text_of(result[0])


@pytest.mark.parametrize("mode", ["2026-07-28", "legacy"], ids=["2026-07-28", "2025-11-25-in-a-session"])
def test_a_cancelled_call_stops_its_tool_and_the_audit_log_says_cancelled(tmp_path: Path, mode: str) -> None:
    reports: list[types.CallToolResult] = []

    async def scenario(url: str) -> None:
        running = anyio.Event()

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            running.set()

        async with http_client(url, mode=mode) as client, anyio.create_task_group() as tg:
            call = anyio.CancelScope()

            async def wait() -> None:
                with call:
                    await client.call_tool("invoke_tool", WAIT, progress_callback=on_progress)

            tg.start_soon(wait)
            with anyio.fail_after(30):
                await running.wait()
            call.cancel()  # the client sends notifications/cancelled
            reports.append(await client.call_tool("invoke_tool", REPORT))

    with http_server(_config(tmp_path)) as server:
        anyio.run(scenario, server.url)
    assert text_of(reports[0]) == {"cancelled": True, "finished": False}, text_of(reports[0])
    assert audit_outcomes(tmp_path, "slow_wait") == ["cancelled"]


def test_a_cancel_from_another_caller_stops_nothing(tmp_path: Path) -> None:
    config = _config(tmp_path)
    config.write_text(
        config.read_text()
        + '\n[[serve.tokens]]\nprincipal = "alice"\nenv = "ALICE_TOKEN"\n'
        + '\n[[serve.tokens]]\nprincipal = "mallory"\nenv = "MALLORY_TOKEN"\n'
    )
    tokens = {"ALICE_TOKEN": "alice-" + "a" * 32, "MALLORY_TOKEN": "mallory-" + "m" * 32}
    result: list[types.CallToolResult] = []
    statuses: list[int] = []

    async def scenario(url: str) -> None:
        running = anyio.Event()

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            running.set()

        async with http_client(url, tokens["ALICE_TOKEN"]) as alice, anyio.create_task_group() as tg:

            async def wait() -> None:
                result.append(await alice.call_tool("invoke_tool", WAIT, progress_callback=on_progress))

            tg.start_soon(wait)
            with anyio.fail_after(30):
                await running.wait()
            headers = {
                "Authorization": f"Bearer {tokens['MALLORY_TOKEN']}",
                "Accept": "application/json, text/event-stream",
                "MCP-Protocol-Version": "2025-11-25",
            }
            async with httpx.AsyncClient(headers=headers, timeout=30) as mallory:
                for request_id in [*range(10), *(str(i) for i in range(10))]:
                    cancel = {"requestId": request_id, "reason": "mine now"}
                    body = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": cancel}
                    statuses.append((await mallory.post(url, json=body)).status_code)
            await alice.call_tool("invoke_tool", RELEASE)

    with http_server(config, env=tokens | STATELESS) as server:
        anyio.run(scenario, server.url)
    assert set(statuses) == {202}
    assert text_of(result[0]) == {"released": True}
    assert audit_outcomes(tmp_path, "slow_wait") == ["executed"]


def test_over_stdio_a_cancelled_call_stops_its_tool_and_is_audited_cancelled(tmp_path: Path) -> None:
    reports: list[types.CallToolResult] = []

    async def scenario() -> None:
        running = anyio.Event()

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            running.set()

        async with Client(stdio_server(_config(tmp_path))) as client, anyio.create_task_group() as tg:
            call = anyio.CancelScope()

            async def wait() -> None:
                with call:
                    await client.call_tool("invoke_tool", WAIT, progress_callback=on_progress)

            tg.start_soon(wait)
            with anyio.fail_after(30):
                await running.wait()
            call.cancel()
            reports.append(await client.call_tool("invoke_tool", REPORT))

    anyio.run(scenario)
    assert text_of(reports[0]) == {"cancelled": True, "finished": False}
    assert audit_outcomes(tmp_path, "slow_wait") == ["cancelled"]


def test_a_failing_call_with_progress_raises_its_own_error_not_a_group() -> None:
    async def fail() -> None:
        raise MCPError(-32602, "Invalid params")

    async def report(progress: float, message: str) -> None:
        raise AssertionError("no progress is due before a second")

    async def scenario() -> None:
        with pytest.raises(MCPError):
            await with_progress(fail, report)

    anyio.run(scenario)


def test_a_cancelled_plain_json_call_is_answered_request_cancelled(tmp_path: Path) -> None:
    """Without sessions, the cancel is a request of its own; the call it names still gets an answer."""
    headers = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}
    answers: dict[str, Any] = {}

    def call(request_id: int, arguments: dict[str, Any]) -> dict[str, Any]:
        params = {"name": "invoke_tool", "arguments": arguments}
        return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}

    async def scenario(url: str) -> None:
        async with httpx.AsyncClient(headers=headers, timeout=30) as http, anyio.create_task_group() as tg:

            async def wait() -> None:
                answers["wait"] = (await http.post(url, json=call(41, WAIT))).json()

            tg.start_soon(wait)
            assert (await http.post(url, json=call(42, STARTED))).status_code == 200
            cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 41}}
            assert (await http.post(url, json=cancel)).status_code == 202
            answers["report"] = (await http.post(url, json=call(43, REPORT))).json()

    with http_server(_config(tmp_path), env=STATELESS) as server:
        anyio.run(scenario, server.url)
    assert answers["wait"]["id"] == 41 and answers["wait"]["error"]["code"] == -32800
    report = json.loads(answers["report"]["result"]["content"][0]["text"])
    assert report == {"cancelled": True, "finished": False}
    assert audit_outcomes(tmp_path, "slow_wait") == ["cancelled"]


def test_in_a_session_a_cancel_stops_that_sessions_call_not_anothers_with_the_same_id(tmp_path: Path) -> None:
    """Request ids are per session: two sessions of one caller both run their call number n."""
    results: dict[str, Any] = {}

    async def scenario(url: str) -> None:
        running = {"a": anyio.Event(), "b": anyio.Event()}

        def on_progress(name: str) -> Any:
            async def seen(value: float, total: float | None, message: str | None) -> None:
                running[name].set()

            return seen

        async with (
            http_client(url, mode="legacy") as a,
            http_client(url, mode="legacy") as b,
            anyio.create_task_group() as tg,
        ):
            call_a = anyio.CancelScope()

            async def wait_a() -> None:
                with call_a:
                    await a.call_tool("invoke_tool", WAIT, progress_callback=on_progress("a"))

            async def wait_b() -> None:
                results["b"] = await b.call_tool("invoke_tool", WAIT, progress_callback=on_progress("b"))

            tg.start_soon(wait_a)
            tg.start_soon(wait_b)
            with anyio.fail_after(30):
                await running["a"].wait()
                await running["b"].wait()
            call_a.cancel()  # a sends notifications/cancelled for its request id, which b's call shares
            results["report"] = await a.call_tool("invoke_tool", REPORT)
            await a.call_tool("invoke_tool", RELEASE)

    with http_server(_config(tmp_path)) as server:
        anyio.run(scenario, server.url)
    assert text_of(results["b"]) == {"released": True}, text_of(results["b"])
    assert text_of(results["report"]) == {"cancelled": True, "finished": False}
    assert sorted(audit_outcomes(tmp_path, "slow_wait")) == ["cancelled", "executed"]


def test_a_stopping_server_cancels_what_still_runs_after_stop_seconds_audits_it_and_exits_cleanly(
    tmp_path: Path,
) -> None:
    """SIGTERM: no new connection is taken; a call still running `[serve] stop_seconds` later is
    cancelled (its tool sees the cancellation, the audit log says cancelled) and the server ends 0."""
    headers = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}
    config = _config(tmp_path)
    config.write_text(config.read_text() + "\n[serve]\nsessions = false\nstop_seconds = 1\n")
    outcome: dict[str, Any] = {}

    def call(request_id: int, arguments: dict[str, Any]) -> dict[str, Any]:
        params = {"name": "invoke_tool", "arguments": arguments}
        return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}

    with http_server(config) as server:

        async def scenario() -> None:
            async with (
                httpx.AsyncClient(headers=headers, timeout=60) as http,
                anyio.create_task_group() as tg,
            ):

                async def wait() -> None:
                    try:
                        outcome["wait"] = (await http.post(server.url, json=call(1, WAIT))).status_code
                    except httpx.HTTPError as exc:  # the server ended the connection as it stopped
                        outcome["wait"] = type(exc).__name__

                tg.start_soon(wait)
                assert (await http.post(server.url, json=call(2, STARTED))).status_code == 200
                server.proc.terminate()  # SIGTERM while slow_wait waits for a release that never comes

        anyio.run(scenario)
        assert server.proc.wait(timeout=60) == 0
    assert outcome["wait"] != 200  # it was not answered as if it had finished
    assert audit_outcomes(tmp_path, "slow_wait") == ["cancelled"]

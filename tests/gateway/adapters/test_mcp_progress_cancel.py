"""Progress and cancellation of a slow call over Streamable HTTP, with the real MCP SDK client.

The server is `gateway serve --transport http` (a subprocess); the slow tool waits on an event
(`slow_tools`), so nothing here depends on timing but the server's own one-second progress beat.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import mcp_types as types

from .mcp_server_support import audit_outcomes, http_client, http_server, text_of

WAIT = {"tool_name": "slow_wait", "parameters": {}}
RELEASE = {"tool_name": "slow_release", "parameters": {}}
REPORT = {"tool_name": "slow_report", "parameters": {}}


def _config(directory: Path) -> Path:
    path = directory / "config.toml"
    catalogs = '["tests.gateway.sample_tools:provide", "tests.gateway.adapters.slow_tools:provide"]'
    path.write_text(f'catalogs = {catalogs}\ndata_dir = "{directory}"\n')
    return path


def test_a_slow_call_sends_progress_to_a_client_that_gave_a_token(tmp_path: Path) -> None:
    progress: list[tuple[float, str | None]] = []
    result: list[types.CallToolResult] = []

    async def scenario(url: str) -> None:
        beat = anyio.Event()

        async def on_progress(value: float, total: float | None, message: str | None) -> None:
            progress.append((value, message))
            beat.set()

        async with http_client(url) as client, anyio.create_task_group() as tg:

            async def wait() -> None:
                result.append(await client.call_tool("invoke_tool", WAIT, progress_callback=on_progress))

            tg.start_soon(wait)
            with anyio.fail_after(30):
                await beat.wait()
            await client.call_tool("invoke_tool", RELEASE)

    with http_server(_config(tmp_path)) as server:
        anyio.run(scenario, server.url)
    assert progress and progress[0][0] == 1.0 and progress[0][1] == "running for 1 s"
    assert text_of(result[0]) == {"released": True}, text_of(result[0])


def test_a_cancelled_call_stops_its_tool_and_the_audit_log_says_cancelled(tmp_path: Path) -> None:
    reports: list[types.CallToolResult] = []

    async def scenario(url: str) -> None:
        running = anyio.Event()

        async def on_progress(value: float, total: float | None, message: str | None) -> None:
            running.set()

        async with http_client(url) as client, anyio.create_task_group() as tg:
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

"""The meta-tools as a client that defers MCP tools sees them: always loaded, titled, results structured.

A real server process and the real SDK client, which checks every result against the tool's
output schema; the listing is the same bytes on every request.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import httpx2

from .mcp_server_support import DELETE_NOTE, http_client, http_server, write_config

LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
HEADERS = {
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": "2025-11-25",
}


def test_the_meta_tools_are_always_loaded_titled_and_their_results_fit_their_schema(tmp_path: Path) -> None:
    async def scenario(url: str) -> None:
        async with http_client(url) as client:
            listed = (await client.list_tools()).tools
            assert [t.title for t in listed] == ["Discover tools", "Read a tool's schema", "Run a tool"]
            assert all(t.meta == {"anthropic/alwaysLoad": True} for t in listed)
            assert all(t.output_schema == {"type": "object"} for t in listed)
            # The client validates each structured result against the schema: a page, a schema,
            # a pending call, an unknown tool's error.
            await client.call_tool("discover_tools", {"query": "delete a note"})
            await client.call_tool("get_tool_schema", {"tool_name": "notes_delete"})
            await client.call_tool("invoke_tool", DELETE_NOTE)
            failed = await client.call_tool("invoke_tool", {"tool_name": "no_such_tool", "parameters": {}})
            assert failed.is_error

        first = httpx2.post(url, json=LIST, headers=HEADERS)
        second = httpx2.post(url, json=LIST, headers=HEADERS)
        assert first.status_code == 200 and first.content == second.content

    # Without sessions, so the bare requests need no handshake.
    with http_server(write_config(tmp_path), env={"GATEWAY_SERVE_SESSIONS": "false"}) as server:
        anyio.run(scenario, server.url)

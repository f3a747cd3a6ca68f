"""run_code alone (`gateway serve --code-only`, `[code] only`) over MCP, stdio and HTTP, with the real SDK client."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
from mcp import Client

from gateway.code import text
from gateway.gate.stores import resolve_auto_store
from gateway.meta_tools import META_TOOL_NAMES
from gateway.runtime import open_gateway
from gateway.settings.loading import load_settings

from .mcp_server_support import (
    APPROVE,
    Human,
    audit_outcomes,
    http_client,
    http_server,
    server_env,
    stdio_server,
    text_of,
    write_config,
)

ONLY = "\n[code]\nenabled = true\nonly = true\n"

FIND = "[discover('create a note', limit=1)['tools'], 'note_id' in schema('notes_delete')]"
WORK = "n = call('notes_create', {'title': 'milk'})['id']\ncall('notes_delete', note_id=n)['deleted']"


async def _lists_run_code_alone_and_refuses_the_others(client: Client) -> None:
    listed = (await client.list_tools()).tools
    assert [t.name for t in listed] == ["run_code"]
    assert listed[0].description == text.ALONE_DESCRIPTION
    assert client.instructions is not None
    assert client.instructions.startswith(
        "This server reaches a catalog of 6 tools through one tool, run_code"
    )
    assert "invoke_tool" not in client.instructions
    for name in ("invoke_tool", "discover_tools", "get_tool_schema"):
        refused = await client.call_tool(name, {"tool_name": "notes_create", "parameters": {"title": "x"}})
        error = text_of(refused)["error"]
        assert refused.is_error and error["code"] == "unknown_tool" and error["did_you_mean"] == ["run_code"]
        assert error["next_step"].startswith("Only run_code can be called directly")


def test_over_stdio_only_run_code_is_listed_and_a_program_finds_and_calls_tools_pausing_for_approval(
    tmp_path: Path,
) -> None:
    human = Human([APPROVE])

    async def scenario() -> None:
        server = stdio_server(write_config(tmp_path, elicitation=True), "--code-only")
        async with Client(server, elicitation_callback=human) as client:
            await _lists_run_code_alone_and_refuses_the_others(client)
            found = text_of(await client.call_tool("run_code", {"code": FIND}))
            assert found["result"][0][0].startswith("notes_create(title: str")
            assert found["result"][1] is True
            done = await client.call_tool("run_code", {"code": WORK})
            assert not done.is_error and done.structured_content == {"result": "n1", "calls": 2}

    anyio.run(scenario)
    assert human.asked == ['Approve this action? Delete a note for good [notes_delete] with note_id="n1"']
    assert audit_outcomes(tmp_path, "notes_delete") == [
        "pending_confirmation",
        "approved_by_host",
        "approved",
        "attempt",
        "executed",
    ]
    assert audit_outcomes(tmp_path, "invoke_tool") == []  # refused before anything ran


def test_over_http_a_program_of_run_code_alone_pauses_and_resumes_once_the_host_approves(
    tmp_path: Path,
) -> None:
    config = write_config(tmp_path, ONLY)
    host_settings = resolve_auto_store(load_settings(config, environ=server_env()), shared=True)

    async def scenario(url: str) -> None:
        async with http_client(url) as client:
            await _lists_run_code_alone_and_refuses_the_others(client)
            found = text_of(await client.call_tool("run_code", {"code": FIND}))
            assert found["result"][1] is True
            paused = text_of(await client.call_tool("run_code", {"code": WORK}))
            assert paused["status"] == "confirmation_required"
            assert paused["preview"] == 'Delete a note for good [notes_delete] with note_id="n1"'
            with open_gateway(host_settings) as host:  # the person approves, as `gateway approve ID` does
                assert host.approve(paused["pending_id"]) is not None
            done = await client.call_tool("run_code", {"confirmation": paused["pending_id"]})
            assert done.structured_content == {"result": "n1", "calls": 2}

    with http_server(config) as server:
        anyio.run(scenario, server.url)
    assert audit_outcomes(tmp_path, "notes_delete") == [
        "pending_confirmation",
        "approved_by_host",
        "approved",
        "attempt",
        "executed",
    ]


def test_over_stdio_the_hints_a_program_reads_name_its_own_functions_not_the_tools_it_lacks(
    tmp_path: Path,
) -> None:
    """The overview's, an empty page's and an unknown tool's next steps: discover(...), never discover_tools."""
    hints = (
        "try:\n    call('notes_creat', title='milk')\nexcept ToolError as e:\n    missing = str(e)\n"
        "[discover()['next_step'], discover('zzqx frobnicate')['next_step'], missing]"
    )

    async def scenario() -> Any:
        server = stdio_server(write_config(tmp_path), "--code-only")
        async with Client(server) as client:
            answer = await client.call_tool("run_code", {"code": hints})
            assert not answer.is_error
            return text_of(answer)

    answer = anyio.run(scenario)
    overview, nothing, missing = answer["result"]
    assert overview.startswith("Call discover(query) with a few words")
    assert nothing.endswith("or browse a category with discover(categories=[...]).")
    assert missing.endswith(
        "Next: Use one of those names if it fits; otherwise find the tool with discover(query)."
    )
    assert not [m for m in META_TOOL_NAMES if m in json.dumps(answer)]


def test_a_client_confined_to_a_toolset_reads_the_instructions_for_run_code_alone_too(tmp_path: Path) -> None:
    """The instructions of a toolset's endpoint (`/mcp/<name>`) speak of the tools that endpoint lists."""
    toolset = '\n[[toolsets]]\nname = "notes"\ncategories = ["notes"]\n'

    async def scenario(url: str) -> None:
        async with http_client(url.rstrip("/") + "/notes") as client:
            assert [t.name for t in (await client.list_tools()).tools] == ["run_code"]
            assert client.instructions is not None
            assert client.instructions.startswith(
                "This server reaches a catalog of 4 tools through one tool, run_code"
            )

    with http_server(write_config(tmp_path, ONLY + toolset)) as server:
        anyio.run(scenario, server.url)

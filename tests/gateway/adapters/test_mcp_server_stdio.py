"""`gateway serve` over stdio, driven by the real MCP SDK client against a real subprocess."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import anyio
import mcp_types as types
from mcp import Client

from .mcp_server_support import (
    APPROVE,
    DECLINE,
    DELETE_NOTE,
    Human,
    audit_outcomes,
    initialize,
    stdio_server,
    text_of,
    write_config,
)


def test_lists_exactly_the_three_meta_tools_with_annotations_and_a_catalog_overview(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with Client(stdio_server(write_config(tmp_path))) as client:
            listed = (await client.list_tools()).tools
            assert [t.name for t in listed] == ["discover_tools", "get_tool_schema", "invoke_tool"]
            hints = {t.name: t.annotations for t in listed}
            assert hints["discover_tools"] == types.ToolAnnotations(
                read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
            )
            assert hints["get_tool_schema"] == hints["discover_tools"]
            invoke = hints["invoke_tool"]
            assert invoke is not None and invoke.read_only_hint is False and invoke.destructive_hint is True
            assert client.instructions is not None
            assert client.instructions.endswith("Categories (tools): notes (4), files (2).")

    anyio.run(scenario)


def test_discover_schema_and_invoke_answer_with_text_and_structured_content(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with Client(stdio_server(write_config(tmp_path))) as client:
            found = await client.call_tool("discover_tools", {"query": "create a note"})
            assert not found.is_error
            assert found.structured_content == text_of(found)
            assert found.structured_content["tools"][0]["name"] == "notes_create"

            schema = await client.call_tool("get_tool_schema", {"tool_name": "notes_create"})
            assert schema.structured_content["parameters"]["required"] == ["title"]

            made = await client.call_tool(
                "invoke_tool", {"tool_name": "notes_create", "parameters": {"title": "milk"}}
            )
            assert not made.is_error and made.structured_content == {"id": "n1", "title": "milk"}

            # A value that is not an object is wrapped in the structured content, bare in the text.
            searched = await client.call_tool(
                "invoke_tool", {"tool_name": "notes_search", "parameters": {"title": "milk"}}
            )
            assert text_of(searched) == ["milk"] and searched.structured_content == {"result": ["milk"]}

            wrong = await client.call_tool("invoke_tool", {"tool_name": "notes_creat", "parameters": {}})
            assert wrong.is_error and text_of(wrong)["error"]["did_you_mean"][0] == "notes_create"

    anyio.run(scenario)
    # notes_create changes something: its attempt is on record before it runs; notes_search reads only.
    assert audit_outcomes(tmp_path) == ["attempt", "executed", "executed", "unknown"]


def test_a_destructive_call_runs_once_the_human_approves_the_elicitation(tmp_path: Path) -> None:
    human = Human([APPROVE])

    async def scenario() -> None:
        async with Client(
            stdio_server(write_config(tmp_path, elicitation=True)), elicitation_callback=human
        ) as client:
            result = await client.call_tool("invoke_tool", DELETE_NOTE)
            assert not result.is_error and result.structured_content == {"deleted": "n1", "by": "local"}

    anyio.run(scenario)
    assert human.asked == ['Approve this action? Delete a note for good [notes_delete] with note_id="n1"']
    outcomes = ["pending_confirmation", "approved_by_host", "approved", "attempt", "executed"]
    assert audit_outcomes(tmp_path) == outcomes


def test_a_declined_elicitation_never_runs_the_tool(tmp_path: Path) -> None:
    human = Human([DECLINE])

    async def scenario() -> None:
        async with Client(
            stdio_server(write_config(tmp_path, elicitation=True)), elicitation_callback=human
        ) as client:
            result = await client.call_tool("invoke_tool", DELETE_NOTE)
            assert result.is_error and text_of(result)["error"]["code"] == "declined"

    anyio.run(scenario)
    assert len(human.asked) == 1
    assert audit_outcomes(tmp_path) == ["pending_confirmation", "denied_by_host", "declined"]


def test_a_handshake_era_client_is_asked_with_an_elicitation_request(tmp_path: Path) -> None:
    human = Human([APPROVE, DECLINE])

    async def scenario() -> None:
        server = stdio_server(write_config(tmp_path, elicitation=True))
        async with Client(server, mode="legacy", elicitation_callback=human) as client:
            assert client.protocol_version == "2025-11-25"
            approved = await client.call_tool("invoke_tool", DELETE_NOTE)
            assert approved.structured_content == {"deleted": "n1", "by": "local"}
            declined = await client.call_tool("invoke_tool", DELETE_NOTE)
            assert text_of(declined)["error"]["code"] == "declined"

    anyio.run(scenario)
    assert len(human.asked) == 2
    assert audit_outcomes(tmp_path) == [
        "pending_confirmation",
        "approved_by_host",
        "approved",
        "attempt",
        "executed",
        "pending_confirmation",
        "denied_by_host",
        "declined",
    ]


def test_without_elicitation_a_destructive_call_waits_for_the_host(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with Client(stdio_server(write_config(tmp_path))) as client:
            result = await client.call_tool("invoke_tool", DELETE_NOTE)
            body = text_of(result)
            assert not result.is_error and body["status"] == "confirmation_required"
            # In host mode the model cannot approve it by sending the id back.
            again = await client.call_tool("invoke_tool", {**DELETE_NOTE, "confirmation": body["pending_id"]})
            assert text_of(again)["error"]["code"] == "confirmation_pending"

    anyio.run(scenario)
    assert "executed" not in audit_outcomes(tmp_path)


def test_without_elicitation_model_mode_lets_the_model_confirm(tmp_path: Path) -> None:
    config = write_config(tmp_path, '[confirmation]\nmode = "model"\n')

    async def scenario() -> None:
        async with Client(stdio_server(config)) as client:
            pending = text_of(await client.call_tool("invoke_tool", DELETE_NOTE))
            done = await client.call_tool(
                "invoke_tool", {**DELETE_NOTE, "confirmation": pending["pending_id"]}
            )
            assert done.structured_content == {"deleted": "n1", "by": "local"}

    anyio.run(scenario)
    assert audit_outcomes(tmp_path) == ["pending_confirmation", "approved", "attempt", "executed"]


def test_deny_mode_refuses_without_asking(tmp_path: Path) -> None:
    human = Human([APPROVE])
    config = write_config(tmp_path, '[confirmation]\nmode = "deny"\n')

    async def scenario() -> None:
        async with Client(stdio_server(config), elicitation_callback=human) as client:
            result = await client.call_tool("invoke_tool", DELETE_NOTE)
            assert text_of(result)["error"]["code"] == "destructive_disabled"

    anyio.run(scenario)
    assert human.asked == []


def test_requests_piped_in_before_stdin_closes_are_all_answered(tmp_path: Path) -> None:
    """A client that writes its requests and closes its end at once (`... | gateway serve`, a
    script) gets an answer to each, the last tool call included, before the server exits."""
    config = write_config(tmp_path)
    params = stdio_server(config)
    lines = [
        initialize(),
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        *(
            {
                "jsonrpc": "2.0",
                "id": 3 + n,
                "method": "tools/call",
                "params": {"name": "discover_tools", "arguments": {"query": "create a note"}},
            }
            for n in range(3)
        ),
    ]
    done = subprocess.run(
        [params.command, *params.args],
        input="".join(json.dumps(line) + "\n" for line in lines),
        env=params.env,
        cwd=params.cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert done.returncode == 0, done.stderr
    assert sorted(a["id"] for a in answers) == [1, 2, 3, 4, 5]
    assert all("result" in a for a in answers)

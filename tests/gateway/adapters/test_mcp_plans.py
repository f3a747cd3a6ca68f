"""A program's plan over MCP, driven by the real MCP SDK client: asked once through elicitation over
stdio, and over HTTP approved in part at a terminal (`gateway approve PLAN --only N`, another process
on the same store), then run for real with only the approved writes."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
from mcp import Client

from .mcp_server_support import (
    APPROVE,
    THREE_DELETES,
    Human,
    audit_outcomes,
    gateway_cli,
    http_client,
    http_server,
    stdio_server,
    text_of,
    write_config,
)


def test_over_stdio_a_plan_is_asked_once_through_elicitation_and_then_runs(tmp_path: Path) -> None:
    human = Human([APPROVE])

    async def scenario() -> None:
        server = stdio_server(write_config(tmp_path, elicitation=True), "--code")
        async with Client(server, elicitation_callback=human) as client:
            result = await client.call_tool("run_code", {"code": THREE_DELETES, "plan": True})
            assert not result.is_error, result
            assert result.structured_content is not None
            assert result.structured_content["result"] == ["n1", "n2", "n3"]

    anyio.run(scenario)
    [question] = human.asked  # one question for the three writes
    assert question.startswith("Approve all of these writes? A program's plan of 3 writes: 3 x notes_delete.")
    assert 'note_id="n3"' in question
    assert audit_outcomes(tmp_path, "notes_delete").count("executed") == 3


def test_over_stdio_a_plan_approved_in_part_at_a_terminal_runs_only_those_writes(tmp_path: Path) -> None:
    config = write_config(tmp_path)  # no elicitation: the plan waits for another channel

    async def scenario() -> None:
        async with Client(stdio_server(config, "--code")) as client:
            drawn = text_of(await client.call_tool("run_code", {"code": THREE_DELETES, "plan": True}))
            plan_id = drawn["pending_id"]
            approved = await anyio.to_thread.run_sync(
                lambda: gateway_cli("approve", plan_id, "--only", "2", config=config)
            )
            assert approved.returncode == 0, approved.stderr
            done = await client.call_tool("run_code", {"confirmation": plan_id})
            assert done.structured_content is not None
            assert done.structured_content["result"] == ["kept n1", "n2", "kept n3"]

    anyio.run(scenario)
    assert audit_outcomes(tmp_path, "notes_delete").count("executed") == 1


def test_over_http_a_plan_approved_in_part_at_a_terminal_runs_only_those_writes(tmp_path: Path) -> None:
    config = write_config(tmp_path, "\n[code]\nenabled = true\n")

    async def draw(url: str) -> dict[str, object]:
        async with http_client(url) as client:
            drawn = text_of(await client.call_tool("run_code", {"code": THREE_DELETES, "plan": True}))
            assert isinstance(drawn, dict)
            return drawn

    async def run(url: str, plan_id: str) -> object:
        async with http_client(url) as client:  # a new session: a plan waits in the store, not a process
            return (await client.call_tool("run_code", {"confirmation": plan_id})).structured_content

    with http_server(config) as server:
        drawn = anyio.run(draw, server.url)
        assert drawn["status"] == "confirmation_required"
        assert "only the writes they approved run" in str(drawn["next_step"])
        plan_id = str(drawn["pending_id"])
        listed = gateway_cli("pending", config=config)
        assert listed.stdout.count(plan_id) == 1 and "  2. Delete a note for good" in listed.stdout
        assert "the program:" in listed.stdout and "for n in ['n1', 'n2', 'n3']:" in listed.stdout
        approved = gateway_cli("approve", plan_id, "--only", "1,3", config=config)
        assert approved.returncode == 0, approved.stderr
        assert "approved in part: writes 1, 3 run when the agent runs the plan; 2 declined" in approved.stdout
        wrong = gateway_cli("approve", plan_id, "--only", "x", config=config)
        assert wrong.returncode == 2 and "not a list of write numbers" in wrong.stderr
        done = anyio.run(run, server.url, plan_id)
    assert isinstance(done, dict) and done["result"] == ["n1", "kept n2", "n3"]
    lines = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    decided = [(r["tool"], r["outcome"], r.get("plan")) for r in lines if r["outcome"].endswith("_by_host")]
    assert decided == [
        ("run_code", "approved_by_host", plan_id),
        ("notes_delete", "approved_by_host", plan_id),
        ("notes_delete", "approved_by_host", plan_id),
        ("notes_delete", "denied_by_host", plan_id),
    ]
    assert all(r["decided_by"]["channel"] == "terminal" for r in lines if r["outcome"].endswith("_by_host"))
    assert [r["params"] for r in lines if r["tool"] == "notes_delete" and r["outcome"] == "executed"] == [
        {"note_id": "n1"},
        {"note_id": "n3"},
    ]

"""Anthropic's programmatic tool calling: the gateway's tools offered to its code execution tool, every
call the model's code makes still passing the gateway (the real SDK against a replay server)."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from gateway import Gateway, MemoryAuditLog
from gateway.adapters.anthropic import CODE_EXECUTION

from ..sample_tools import Calls
from .replay import JSON, Replay, Reply, anthropic_turn
from .vendors import ANTHROPIC, converse

CODE = "for t in ['a', 'b']:\n    await invoke_tool(tool_name='notes_create', parameters={'title': t})"
SERVER_USE: JSON = {
    "type": "server_tool_use",
    "id": "srvtoolu_1",
    "name": "code_execution",
    "input": {"code": CODE},
}
CALLER: JSON = {"type": CODE_EXECUTION, "tool_id": "srvtoolu_1"}


def from_code(call_id: str, title: str) -> JSON:
    arguments = {"tool_name": "notes_create", "parameters": {"title": title}}
    return {"type": "tool_use", "id": call_id, "name": "invoke_tool", "input": arguments, "caller": CALLER}


def with_container(reply: Reply) -> Reply:
    """The reply as Anthropic sends it once code ran: it names the container the code runs in."""
    container = {"id": "container_1", "expires_at": "2026-11-23T10:00:00Z"}
    if reply.body is not None:
        return replace(reply, body={**reply.body, "container": container})
    events = tuple(
        (name, {**data, "delta": {**data["delta"], "container": container}})
        if name == "message_delta" and isinstance(data, dict)
        else (name, data)
        for name, data in reply.events
    )
    return replace(reply, events=events)


@pytest.mark.parametrize("stream", [False, True])
def test_calls_from_anthropics_code_execution_pass_the_gateway_and_the_container_is_sent_back(
    replay: Replay, agent_gateway: Gateway, audit: MemoryAuditLog, calls: Calls, stream: bool
) -> None:
    first = anthropic_turn(blocks=[SERVER_USE], stream=stream, stop="tool_use")
    if first.body is not None:
        first = replace(first, body={**first.body, "content": [SERVER_USE, from_code("toolu_1", "a")]})
    else:  # streamed: the call's block, with its caller, after the server tool's
        index = 1
        block = from_code("toolu_1", "a")
        events = list(first.events)
        at = next(i for i, (name, _) in enumerate(events) if name == "message_delta")
        events[at:at] = [
            (
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": {**block, "input": {}}},
            ),
            (
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": "input_json_delta", "partial_json": json.dumps(block["input"])},
                },
            ),
            ("content_block_stop", {"type": "content_block_stop", "index": index}),
        ]
        first = replace(first, events=tuple(events))
    replay.script(with_container(first), anthropic_turn("Made note a.", stream=stream))
    (result,), _, _ = converse(
        ANTHROPIC,
        replay,
        agent_gateway,
        ["make a note"],
        provider_options={"programmatic": True, "stream": stream},
    )

    assert result.text == "Made note a."
    tools = replay.bodies[0]["tools"]
    assert tools[0] == {"type": CODE_EXECUTION, "name": "code_execution"}
    assert all(t["allowed_callers"] == ["direct", CODE_EXECUTION] for t in tools[1:])
    assert "container" not in replay.bodies[0]
    assert replay.bodies[1]["container"] == "container_1"
    answered = replay.bodies[1]["messages"][-1]["content"]
    assert [b["tool_use_id"] for b in answered] == ["toolu_1"]
    # The call ran through the gateway: validated, audited, run once.
    assert calls.names() == ["notes_create"]
    assert [(r.tool, r.outcome) for r in audit.records] == [
        ("notes_create", "attempt"),
        ("notes_create", "executed"),
    ]


def test_without_programmatic_the_tools_carry_no_allowed_callers(
    replay: Replay, agent_gateway: Gateway
) -> None:
    replay.script(anthropic_turn("Hi."))
    converse(ANTHROPIC, replay, agent_gateway, ["hi"])
    assert all("allowed_callers" not in t for t in replay.bodies[0]["tools"])
    assert all(t.get("type") != CODE_EXECUTION for t in replay.bodies[0]["tools"])

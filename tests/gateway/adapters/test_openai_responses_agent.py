"""The Responses adapter on the real `openai` client: exact request payloads, images, and tool_search."""

from __future__ import annotations

import pytest
from syrupy.assertion import SnapshotAssertion

from gateway import Gateway, MemoryAuditLog

from ..sample_tools import Calls
from .replay import JSON, Replay, responses_items, responses_turn
from .vendors import RESPONSES, call, converse


@pytest.fixture
def gw(agent_gateway: Gateway) -> Gateway:
    return agent_gateway


def test_the_requests_carry_the_instructions_the_tools_and_each_function_call_output(
    replay: Replay, gw: Gateway, calls: Calls, snapshot: SnapshotAssertion
) -> None:
    invoke = call("call_1", "invoke_tool", {"tool_name": "notes_create", "parameters": {"title": "Milk"}})
    replay.script(responses_turn("Sure.", [invoke]), responses_turn("Done."))
    converse(RESPONSES, replay, gw, ["Add a note: milk"], system="Be brief.")

    first, second = replay.bodies
    assert first == {
        "model": "gpt-test",
        "stream": True,
        "instructions": "Be brief.",
        "input": [{"role": "user", "content": "Add a note: milk"}],
        "tools": first["tools"],
    }
    assert first["tools"] == snapshot
    assert second == {
        **first,
        "input": [
            {"role": "user", "content": "Add a note: milk"},
            *responses_items("Sure.", [invoke]),
            {"type": "function_call_output", "call_id": "call_1", "output": '{"id":"n1","title":"Milk"}'},
        ],
    }


def test_an_image_result_becomes_input_text_and_input_image_parts(replay: Replay, gw: Gateway) -> None:
    chart = call("call_1", "invoke_tool", {"tool_name": "probe_chart", "parameters": {"word": "sales"}})
    replay.script(responses_turn(calls=[chart]), responses_turn("Here."))
    converse(RESPONSES, replay, gw, ["Chart sales"])

    assert replay.bodies[1]["input"][-1] == {
        "type": "function_call_output",
        "call_id": "call_1",
        "output": [
            {"type": "input_text", "text": "Chart of sales"},
            {"type": "input_image", "image_url": "data:image/png;base64,iVBORw=="},
        ],
    }


def test_client_tool_search_loads_namespaced_tools_and_the_loaded_tool_runs_through_the_gate(
    replay: Replay, gw: Gateway, calls: Calls, audit: MemoryAuditLog, snapshot: SnapshotAssertion
) -> None:
    search: tuple[str, JSON] = ("call_s", {"query": "delete a note", "limit": 1})
    delete = call("call_d", "notes_delete", {"note_id": "n1"})
    replay.script(
        responses_turn(searches=[search]),
        responses_turn(calls=[delete], namespaces={"notes_delete": "notes"}),
        responses_turn("Deleted."),
    )
    converse(
        RESPONSES, replay, gw, ["Delete n1"], deferred=True, pinned=["notes_search"], approver=lambda p: True
    )

    tools: list[JSON] = replay.bodies[0]["tools"]
    assert tools == snapshot
    assert tools[0]["type"] == "tool_search" and tools[0]["execution"] == "client"
    assert tools[1]["name"] == "notes_search" and "defer_loading" not in tools[1]
    assert [(t["type"], t["name"]) for t in tools[2:]] == [
        ("namespace", "files"),
        ("namespace", "notes"),
        ("namespace", "probe"),
    ]
    notes = tools[3]
    assert notes["description"] == "Tools for notes: 3 (create, delete, update)."
    assert all(f["defer_loading"] is True for ns in tools[2:] for f in ns["tools"])

    search_items = replay.bodies[1]["input"][1:]
    assert search_items == [
        *responses_items(searches=[search]),
        {
            "type": "tool_search_output",
            "execution": "client",
            "call_id": "call_s",
            "status": "completed",
            "tools": [
                {
                    "type": "namespace",
                    "name": "notes",
                    "description": "Tools for notes: 3 (create, delete, update).",
                    "tools": [f for f in notes["tools"] if f["name"] == "notes_delete"],
                }
            ],
        },
    ]
    assert replay.bodies[2]["input"][-2:] == [
        *responses_items(calls=[delete], namespaces={"notes_delete": "notes"}),
        {"type": "function_call_output", "call_id": "call_d", "output": '{"deleted":"n1","by":"local"}'},
    ]
    assert calls.names() == ["notes_delete"]
    assert [r.outcome for r in audit.records if r.tool == "notes_delete"] == [
        "pending_confirmation",
        "approved_by_host",
        "approved",
        "attempt",
        "executed",
    ]


def test_hosted_tool_search_declares_the_namespaces_and_keeps_the_server_items(
    replay: Replay, gw: Gateway, calls: Calls
) -> None:
    server_items: list[JSON] = [
        {
            "type": "tool_search_call",
            "id": "ts_1",
            "execution": "server",
            "status": "completed",
            "arguments": {"paths": ["notes"]},
        },
        {
            "type": "tool_search_output",
            "id": "tso_1",
            "execution": "server",
            "status": "completed",
            "tools": [],
        },
    ]
    create = call("call_1", "notes_create", {"title": "Milk"})
    reply = responses_turn(calls=[create], namespaces={"notes_create": "notes"}, stream=False)
    assert reply.body is not None
    reply.body["output"] = [*server_items, *reply.body["output"]]
    replay.script(reply, responses_turn("Done.", stream=False))
    converse(
        RESPONSES,
        replay,
        gw,
        ["Add milk"],
        deferred=True,
        provider_options={"tool_search": "server", "stream": False},
    )

    first, second = replay.bodies
    assert first["tools"][0] == {"type": "tool_search"}
    assert [t["type"] for t in first["tools"][1:]] == ["namespace"] * 3
    assert second["input"][1:3] == server_items
    assert calls.names() == ["notes_create"]


def test_namespace_descriptions_can_be_given_by_the_host(replay: Replay, gw: Gateway) -> None:
    replay.script(responses_turn("Hi."))
    options = {
        "namespace_descriptions": {"notes": "The user's notes: create, find, archive and delete them."}
    }
    converse(RESPONSES, replay, gw, ["Hi"], deferred=True, provider_options=options)

    described = {t["name"]: t["description"] for t in replay.bodies[0]["tools"] if t["type"] == "namespace"}
    assert described == {
        "files": "Tools for files: 2 (read).",
        "notes": "The user's notes: create, find, archive and delete them.",
        "probe": "Tools for probe: 3 (read).",
    }

"""The Anthropic Messages adapter on the real `anthropic` client: exact request payloads and native tool search."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel, Field
from syrupy.assertion import SnapshotAssertion

from gateway import PARAMS_CONFIG, Catalog, Gateway, MemoryAuditLog, tool
from gateway.agent import SEARCH_TOOL_NAME

from ..sample_tools import ALL_TOOLS, Calls
from .replay import JSON, Replay, anthropic_turn
from .vendors import ANTHROPIC, call, converse

CACHE = {"type": "ephemeral"}


@pytest.fixture
def gw(agent_gateway: Gateway) -> Gateway:
    return agent_gateway


def tool_uses(*calls: tuple[str, str, JSON]) -> list[JSON]:
    return [{"id": i, "input": a, "name": n, "type": "tool_use"} for i, n, a in calls]


def test_the_requests_carry_the_meta_tools_the_system_prompt_and_each_tool_result(
    replay: Replay, gw: Gateway, calls: Calls, snapshot: SnapshotAssertion
) -> None:
    replay.script(
        anthropic_turn(
            "Sure.",
            [call("toolu_1", "invoke_tool", {"tool_name": "notes_create", "parameters": {"title": "Milk"}})],
        ),
        anthropic_turn("Done."),
    )
    converse(ANTHROPIC, replay, gw, ["Add a note: milk"], system="Be brief.")

    first, second = replay.bodies
    assert first == {
        "model": "claude-test",
        "max_tokens": 4096,
        "stream": True,
        "system": "Be brief.",
        "messages": [{"role": "user", "content": "Add a note: milk"}],
        "tools": first["tools"],
    }
    assert first["tools"] == snapshot
    assert [t["name"] for t in first["tools"]] == ["discover_tools", "get_tool_schema", "invoke_tool"]
    assert [t.get("cache_control") for t in first["tools"]] == [None, None, CACHE]
    assert second == {
        **first,
        "messages": [
            {"role": "user", "content": "Add a note: milk"},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Sure."},
                    *tool_uses(
                        (
                            "toolu_1",
                            "invoke_tool",
                            {"tool_name": "notes_create", "parameters": {"title": "Milk"}},
                        )
                    ),
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_1", "content": '{"id":"n1","title":"Milk"}'}
                ],
            },
        ],
    }


def test_a_failed_call_is_marked_is_error_and_an_image_result_becomes_image_blocks(
    replay: Replay, gw: Gateway
) -> None:
    replay.script(
        anthropic_turn(
            calls=[
                call("toolu_1", "invoke_tool", {"tool_name": "probe_chart", "parameters": {"word": "sales"}}),
                call("toolu_2", "invoke_tool", {"tool_name": "no_such_tool"}),
            ]
        ),
        anthropic_turn("Here."),
    )
    converse(ANTHROPIC, replay, gw, ["Chart sales"])

    chart, unknown = replay.bodies[1]["messages"][-1]["content"]
    assert chart == {
        "type": "tool_result",
        "tool_use_id": "toolu_1",
        "content": [
            {"type": "text", "text": "Chart of sales"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw=="}},
        ],
    }
    assert unknown["is_error"] is True and '"code":"unknown_tool"' in unknown["content"]


def test_client_tool_search_answers_with_tool_references_and_the_loaded_tool_runs_through_the_gate(
    replay: Replay, gw: Gateway, calls: Calls, audit: MemoryAuditLog, snapshot: SnapshotAssertion
) -> None:
    replay.script(
        anthropic_turn(calls=[call("toolu_1", SEARCH_TOOL_NAME, {"query": "delete a note", "limit": 2})]),
        anthropic_turn(calls=[call("toolu_2", "notes_delete", {"note_id": "n1"})]),
        anthropic_turn("Deleted."),
    )
    converse(
        ANTHROPIC,
        replay,
        gw,
        ["Delete note n1"],
        deferred=True,
        pinned=["notes_search"],
        approver=lambda p: True,
    )

    tools: list[JSON] = replay.bodies[0]["tools"]
    assert tools == snapshot
    assert [t["name"] for t in tools[:2]] == [SEARCH_TOOL_NAME, "notes_search"]
    assert [t.get("cache_control") for t in tools[:2]] == [None, CACHE]  # the last loaded tool
    deferred = tools[2:]
    assert {t["name"] for t in deferred} == {d.name for d in gw.catalog} - {"notes_search"}
    assert all(t["defer_loading"] is True and "cache_control" not in t for t in deferred)
    # The second reference depends on the ranking; the shape and the best hit do not.
    (answer,) = replay.bodies[1]["messages"][-1]["content"]
    assert replay.bodies[1]["messages"][-1]["role"] == "user"
    assert (answer["type"], answer["tool_use_id"]) == ("tool_result", "toolu_1")
    assert [ref["type"] for ref in answer["content"]] == ["tool_reference", "tool_reference"]
    assert answer["content"][0] == {"type": "tool_reference", "tool_name": "notes_delete"}
    assert replay.bodies[2]["messages"][-1]["content"] == [
        {"type": "tool_result", "tool_use_id": "toolu_2", "content": '{"deleted":"n1","by":"local"}'}
    ]
    assert calls.names() == ["notes_delete"]
    assert [(r.tool, r.outcome) for r in audit.records] == [
        ("search_tools", "executed"),
        ("notes_delete", "pending_confirmation"),
        ("notes_delete", "approved_by_host"),
        ("notes_delete", "approved"),
        ("notes_delete", "attempt"),
        ("notes_delete", "executed"),
    ]


def test_a_direct_call_is_told_to_call_the_tool_again_and_a_guessed_name_to_search(
    replay: Replay, gw: Gateway, calls: Calls
) -> None:
    replay.script(
        anthropic_turn(
            calls=[
                call("toolu_1", "notes_create", {"title": "x", "priority": 7}),
                call("toolu_2", "notes_make", {}),
            ]
        ),
        anthropic_turn("Sorry."),
    )
    converse(ANTHROPIC, replay, gw, ["Add a note"], deferred=True)

    invalid, unknown = replay.bodies[1]["messages"][-1]["content"]
    assert invalid["content"] == (
        '{"error":{"code":"invalid_arguments","message":"The parameters for notes_create are invalid.",'
        '"problems":[{"loc":"priority","msg":"Input should be less than or equal to 5"}],'
        '"next_step":"Fix the listed problems and call notes_create again."}}'
    )
    assert unknown["content"] == (
        '{"error":{"code":"unknown_tool","message":"There is no tool named \'notes_make\'.",'
        '"did_you_mean":["notes_create","notes_delete","notes_search"],'
        '"next_step":"Search for the tool you need with tool search; never guess a tool name."}}'
    )
    assert calls == []


def test_a_direct_destructive_call_without_an_approver_is_declined(
    replay: Replay, gw: Gateway, calls: Calls
) -> None:
    replay.script(
        anthropic_turn(calls=[call("toolu_1", "notes_delete", {"note_id": "n1"})]), anthropic_turn("No.")
    )
    converse(ANTHROPIC, replay, gw, ["Delete n1"], deferred=True)

    (result,) = replay.bodies[1]["messages"][-1]["content"]
    assert result["is_error"] is True and '"code":"declined"' in result["content"]
    assert calls == [] and gw.gate.pending() == []


def test_server_side_bm25_search_keeps_its_blocks_in_the_history(
    replay: Replay, gw: Gateway, calls: Calls
) -> None:
    server_blocks: list[JSON] = [
        {
            "type": "server_tool_use",
            "id": "srvtoolu_1",
            "name": "tool_search_tool_bm25",
            "input": {"query": "create note"},
        },
        {
            "type": "tool_search_tool_result",
            "tool_use_id": "srvtoolu_1",
            "content": {
                "type": "tool_search_tool_search_result",
                "tool_references": [{"type": "tool_reference", "tool_name": "notes_create"}],
            },
        },
    ]
    replay.script(
        anthropic_turn(calls=[call("toolu_1", "notes_create", {"title": "Milk"})], blocks=server_blocks),
        anthropic_turn("Done."),
    )
    converse(
        ANTHROPIC, replay, gw, ["Add a note: milk"], deferred=True, provider_options={"tool_search": "bm25"}
    )

    first, second = replay.bodies
    assert first["tools"][0] == {
        "type": "tool_search_tool_bm25_20251119",
        "name": "tool_search_tool_bm25",
        "cache_control": CACHE,  # the only loaded tool; deferred tools never carry a marker
    }
    assert all(t["defer_loading"] is True and "cache_control" not in t for t in first["tools"][1:])
    assert second["messages"][1] == {
        "role": "assistant",
        "content": [*server_blocks, *tool_uses(("toolu_1", "notes_create", {"title": "Milk"}))],
    }
    assert calls.names() == ["notes_create"]


def test_a_paused_server_turn_is_sent_back_to_continue(replay: Replay, gw: Gateway) -> None:
    pause = [
        {
            "type": "server_tool_use",
            "id": "srvtoolu_1",
            "name": "tool_search_tool_regex",
            "input": {"query": "note"},
        }
    ]
    replay.script(anthropic_turn(blocks=pause, stop="pause_turn"), anthropic_turn("Done."))
    (result,), _, _ = converse(
        ANTHROPIC, replay, gw, ["Hi"], deferred=True, provider_options={"tool_search": "regex"}
    )

    assert result.text == "Done."
    assert replay.bodies[1]["messages"][-1] == {"role": "assistant", "content": pause}


def test_calls_made_after_the_round_cap_are_answered_unrun_so_the_history_stays_valid(
    replay: Replay, gw: Gateway, calls: Calls
) -> None:
    create = {"tool_name": "notes_create", "parameters": {"title": "x"}}
    replay.script(
        anthropic_turn(calls=[call("toolu_1", "discover_tools", {})]),
        anthropic_turn("Trying anyway.", [call("toolu_2", "invoke_tool", create)]),
    )
    (result,), _, agent = converse(ANTHROPIC, replay, gw, ["Go"], max_rounds=1)

    assert (result.text, result.stop) == ("Trying anyway.", "round_cap") and calls == []
    assert agent.history[-1] == {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "toolu_2",
                "content": '{"error":{"code":"round_cap","message":"This call was not run: the tool rounds for this '
                'request are used up.","next_step":"Answer the user without calling tools."}}',
                "is_error": True,
            }
        ],
    }


class Reminder(BaseModel):
    model_config = PARAMS_CONFIG
    text: str = Field(description="What to remember.")


@tool(category="host", action="create", destructive=False, prompt="Offer a reminder after each task.")
def remember(params: Reminder) -> str:
    """Remember something for the user."""
    return f"remembered {params.text}"


@tool(category="notes", action="read", read_only=True, prompt="Note ids look like n1, n2.")
def notes_get(params: Reminder) -> str:
    """Read a note."""
    return params.text


def test_host_tools_and_tool_prompt_fragments_join_the_session(replay: Replay, audit: MemoryAuditLog) -> None:
    gw = Gateway(Catalog([*ALL_TOOLS, notes_get]), audit=audit)
    replay.script(
        anthropic_turn(calls=[call("toolu_1", "remember", {"text": "milk"})]), anthropic_turn("Noted.")
    )
    converse(ANTHROPIC, replay, gw, ["Remember milk"], system="Be brief.", tools=[remember])

    first = replay.bodies[0]
    assert first["system"] == "Be brief.\n\nNote ids look like n1, n2.\n\nOffer a reminder after each task."
    names = [t["name"] for t in first["tools"]]
    assert names == ["discover_tools", "get_tool_schema", "invoke_tool", "remember"]
    assert first["tools"][-1]["cache_control"] == CACHE
    assert replay.bodies[1]["messages"][-1]["content"][0]["content"] == '"remembered milk"'
    assert [(r.tool, r.outcome) for r in audit.records] == [("remember", "attempt"), ("remember", "executed")]


@pytest.mark.parametrize("stream", [True, False])
def test_extra_request_options_are_passed_to_the_sdk(replay: Replay, gw: Gateway, stream: bool) -> None:
    replay.script(anthropic_turn("Hi.", stream=stream))
    options: dict[str, Any] = {"stream": stream, "max_tokens": 99, "options": {"stop_sequences": ["END"]}}
    converse(ANTHROPIC, replay, gw, ["Hi"], provider_options=options)

    body = replay.bodies[0]
    assert (body["max_tokens"], body["stop_sequences"], body.get("stream", False)) == (99, ["END"], stream)

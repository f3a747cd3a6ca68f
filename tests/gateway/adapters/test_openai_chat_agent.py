"""The Chat Completions adapter on the real `openai` client: exact request payloads, images, strict mode."""

from __future__ import annotations

import openai
import pytest
from syrupy.assertion import SnapshotAssertion

from gateway import Gateway, UserError
from gateway.adapters.openai_agent import OpenAIChat
from gateway.agent import Agent

from ..sample_tools import Calls
from .replay import Replay, chat_turn
from .vendors import CHAT, call, converse


@pytest.fixture
def gw(agent_gateway: Gateway) -> Gateway:
    return agent_gateway


def test_the_requests_carry_the_system_message_the_tools_and_each_tool_message(
    replay: Replay, gw: Gateway, calls: Calls, snapshot: SnapshotAssertion
) -> None:
    invoke = '{"tool_name": "notes_create", "parameters": {"title": "Milk"}}'
    replay.script(chat_turn("Sure.", [("call_1", "invoke_tool", invoke)]), chat_turn("Done."))
    converse(CHAT, replay, gw, ["Add a note: milk"], system="Be brief.")

    first, second = replay.bodies
    assert first == {
        "model": "gpt-test",
        "stream": True,
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Add a note: milk"},
        ],
        "tools": first["tools"],
    }
    assert first["tools"] == snapshot
    assert second == {
        **first,
        "messages": [
            *first["messages"],
            {
                "role": "assistant",
                "content": "Sure.",
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "invoke_tool", "arguments": invoke},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": '{"id":"n1","title":"Milk"}'},
        ],
    }


def test_a_malformed_call_is_kept_as_sent_so_the_model_sees_what_it_wrote(
    replay: Replay, gw: Gateway
) -> None:
    replay.script(chat_turn(calls=[("call_1", "discover_tools", '{"query": ')]), chat_turn("Oops."))
    converse(CHAT, replay, gw, ["Find"])

    assistant = replay.bodies[1]["messages"][-2]
    assert assistant == {
        "role": "assistant",
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "discover_tools", "arguments": '{"query": '},
            }
        ],
    }


def test_images_follow_the_tool_messages_in_one_user_message(replay: Replay, gw: Gateway) -> None:
    replay.script(
        chat_turn(
            calls=[
                call("call_1", "invoke_tool", {"tool_name": "probe_chart", "parameters": {"word": "sales"}}),
                call("call_2", "discover_tools", {"query": "chart"}),
            ]
        ),
        chat_turn("Here."),
    )
    converse(CHAT, replay, gw, ["Chart sales"])

    tail = replay.bodies[1]["messages"][-3:]
    assert tail[0] == {
        "role": "tool",
        "tool_call_id": "call_1",
        "content": "Chart of sales\n[image: in the next message]",
    }
    assert tail[1]["role"] == "tool" and tail[1]["tool_call_id"] == "call_2"
    assert tail[2] == {
        "role": "user",
        "content": [
            {"type": "text", "text": "Images from tool call call_1:"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw=="}},
        ],
    }


def test_strict_mode_sends_parameters_as_a_json_string_and_drops_the_nulls_it_forces(
    replay: Replay, gw: Gateway, calls: Calls, snapshot: SnapshotAssertion
) -> None:
    arguments = {
        "tool_name": "notes_create",
        "parameters": '{"title": "Milk", "color": null}',
        "confirmation": None,
    }
    replay.script(chat_turn(calls=[call("call_1", "invoke_tool", arguments)]), chat_turn("Done."))
    converse(CHAT, replay, gw, ["Add a note"], provider_options={"strict": True})

    tools = replay.bodies[0]["tools"]
    assert tools == snapshot
    invoke = next(t["function"] for t in tools if t["function"]["name"] == "invoke_tool")
    assert invoke["strict"] is True
    assert invoke["parameters"]["properties"]["parameters"] == {
        "type": ["string", "null"],
        "description": "Arguments matching the tool's schema. Encode it as a JSON string.",
    }
    assert invoke["parameters"]["required"] == ["tool_name", "parameters", "confirmation"]
    assert calls == [("notes_create", {"title": "Milk", "priority": 1, "color": None})]


def test_chat_completions_has_no_deferred_loading(replay: Replay, gw: Gateway) -> None:
    with (
        openai.OpenAI(base_url=f"{replay.url}/v1", api_key="k", max_retries=0) as client,
        pytest.raises(UserError, match="no native deferred loading"),
    ):
        Agent(gw, OpenAIChat(client, model="gpt-test"), deferred=True)
    assert replay.requests == []

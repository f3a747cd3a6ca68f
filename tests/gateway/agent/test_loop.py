"""The vendor-neutral agent core: argument parsing, model-facing texts, content blocks, the transcript, setup errors."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from typing import Any

import anthropic
import pytest
from pydantic import BaseModel, Field
from syrupy.assertion import SnapshotAssertion

from gateway import (
    PARAMS_CONFIG,
    Catalog,
    Gateway,
    Policy,
    Rule,
    ToolResult,
    UserError,
    render,
    run_sync,
    tool,
)
from gateway.adapters.anthropic import AnthropicMessages
from gateway.agent import WRAP_UP_NOTE, Agent, Image, ToolCall, Transcript, content
from gateway.agent.calls import drop_strict_nulls, parse_arguments
from gateway.agent.content import ImageBlock, TextBlock, blocks_of
from gateway.agent.native import search_tool

from ..sample_tools import ALL_TOOLS


def rendered(call: ToolCall) -> str:
    error = parse_arguments(call)
    assert not isinstance(error, dict)
    return render(ToolResult(call.name, call.id, "error", error=error))


@pytest.mark.parametrize(
    ("raw", "expected"),
    [(None, {}), ("", {}), ("  ", {}), ('{"a": 1}', {"a": 1}), ({"a": 1}, {"a": 1})],
)
def test_arguments_are_parsed_once_whatever_shape_the_sdk_gave(raw: Any, expected: dict[str, Any]) -> None:
    assert parse_arguments(ToolCall("c1", "discover_tools", raw)) == expected


def test_the_texts_a_model_gets_for_unusable_arguments_and_the_round_cap(snapshot: SnapshotAssertion) -> None:
    texts = {
        "malformed": rendered(ToolCall("c1", "invoke_tool", '{"tool_name": "notes_create", "parameters": {')),
        "not_an_object": rendered(ToolCall("c1", "discover_tools", "[1, 2]")),
        "hostile_name": rendered(ToolCall("c1", "x\n" * 60, "{")),
        "too_deep": rendered(ToolCall("c1", "discover_tools", "[" * 5000 + "]" * 5000)),
        "wrap_up_note": WRAP_UP_NOTE,
    }
    assert texts == snapshot


def test_content_blocks_survive_the_gateway_and_other_json_is_left_alone() -> None:
    value = content("A chart", Image(b"\x00\x01", "image/png"))
    assert value == {
        "content": [
            {"type": "text", "text": "A chart"},
            {"type": "image", "data": "AAE=", "mimeType": "image/png"},
        ]
    }
    assert blocks_of(json.loads(json.dumps(value))) == (TextBlock("A chart"), ImageBlock("AAE=", "image/png"))
    assert blocks_of({"content": "text", "id": 1}) == ()
    assert blocks_of({"content": [{"type": "audio"}]}) == ()
    assert blocks_of({"content": []}) == ()


class Inner(BaseModel):
    model_config = PARAMS_CONFIG
    label: str | None = Field(None, description="Optional label.")


class Outer(BaseModel):
    model_config = PARAMS_CONFIG
    name: str = Field(description="Required.")
    note: str | None = Field(None, description="Optional.")
    inner: Inner = Field(description="Nested.")


def test_nulls_forced_by_strict_mode_are_dropped_where_the_schema_made_them_optional() -> None:
    schema = Outer.model_json_schema()
    sent = {"name": "a", "note": None, "inner": {"label": None}, "extra": None}
    assert drop_strict_nulls(schema, sent) == {"name": "a", "inner": {}, "extra": None}


def test_the_transcript_truncates_long_payloads_and_logs_each_entry(caplog: pytest.LogCaptureFixture) -> None:
    transcript = Transcript(max_chars=10)
    with caplog.at_level(logging.DEBUG, logger="gateway.agent"):
        transcript.add("tool_result", "x" * 25, name="discover_tools", call_id="c1")
        transcript.add("user", "hi")
    assert transcript.entries[0].text == "xxxxxxxxxx... [15 more chars]"
    assert transcript.render() == "[tool_result discover_tools] xxxxxxxxxx... [15 more chars]\n[user] hi"
    assert caplog.messages == ["tool_result discover_tools xxxxxxxxxx... [15 more chars]", "user hi"]


class Label(BaseModel):
    model_config = PARAMS_CONFIG
    text: str = Field(description="A label.")


@tool(category="host", action="read", read_only=True)
def invoke_tool(params: Label) -> str:
    """Clashes with a meta-tool."""
    return params.text


@tool(category="host", action="read", read_only=True, name="notes_create")
def host_notes(params: Label) -> str:
    """Clashes with a catalog tool."""
    return params.text


@pytest.fixture
def provider() -> Any:
    client = anthropic.Anthropic(api_key="test-key", base_url="http://127.0.0.1:9")
    yield AnthropicMessages(client, model="claude-test")
    client.close()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"tools": [invoke_tool]}, "clash with gateway tools: invoke_tool"),
        ({"tools": [host_notes], "deferred": True}, "clash with gateway tools: notes_create"),
        ({"pinned": ["notes_search"]}, "pinned tools only apply with deferred=True"),
        ({"pinned": ["notes_nope"], "deferred": True}, "pinned tools not in the catalog"),
        ({"max_rounds": 0}, "max_rounds must be at least 1"),
    ],
)
def test_a_session_set_up_wrongly_fails_at_once(provider: Any, options: dict[str, Any], message: str) -> None:
    with pytest.raises(UserError, match=message):
        Agent(Gateway(Catalog(ALL_TOOLS)), provider, **options)


def test_a_host_tool_may_share_a_catalog_name_when_catalog_tools_are_behind_the_meta_tools(
    provider: Any,
) -> None:
    agent = Agent(Gateway(Catalog(ALL_TOOLS)), provider, tools=[host_notes])
    assert [d.name for d in agent.plan.loaded] == [
        "discover_tools",
        "get_tool_schema",
        "invoke_tool",
        "notes_create",
    ]


def test_the_search_tool_loads_only_deferred_tools_the_principal_may_see(snapshot: SnapshotAssertion) -> None:
    policy = Policy(rules=(Rule(effect="deny", names=("notes_archive",)),))
    gw = Gateway(Catalog(ALL_TOOLS), policy=policy)
    search = Gateway(Catalog([search_tool(gw, frozenset({"notes_delete", "notes_archive", "notes_create"}))]))

    found = run_sync(search.invoke("search_tools", {"query": "delete a note"}))
    assert found.output == {"tools": ["notes_delete", "notes_create"]}
    nothing = run_sync(search.invoke("search_tools", {"query": "launch rockets"}))
    assert render(nothing) == snapshot


def test_importing_the_gateway_its_agent_and_its_adapters_imports_no_vendor_sdk() -> None:
    code = (
        "import sys, gateway, gateway.agent, gateway.cli.chat, gateway.cli, gateway.adapters.anthropic, "
        "gateway.adapters.openai, gateway.adapters.openai_agent\n"
        "print(sorted(m for m in ('anthropic', 'openai') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"

"""The pure formatters behind the agent providers: strict schemas, tool lists for native search, namespaces."""

from __future__ import annotations

import pytest
from syrupy.assertion import SnapshotAssertion

from gateway import Catalog, Gateway, UserError
from gateway.adapters import anthropic, openai
from gateway.agent import ToolPlan

from ..sample_tools import ALL_TOOLS


@pytest.fixture
def sample() -> Gateway:
    return Gateway(Catalog(ALL_TOOLS))


def test_strict_schemas_of_the_meta_tools(sample: Gateway, snapshot: SnapshotAssertion) -> None:
    assert openai.chat_tools(sample.meta, strict=True) == snapshot


def test_strict_mode_requires_every_property_and_makes_optional_ones_nullable(sample: Gateway) -> None:
    notes_create = sample.catalog.get("notes_create")
    assert notes_create is not None
    assert openai.responses_tool(notes_create, strict=True)["parameters"] == {
        "type": "object",
        "properties": {
            "title": {"description": "Title of the note.", "type": "string"},
            "priority": {"description": "1 (low) to 5 (high).", "type": ["integer", "null"]},
            "color": {
                "description": "Optional color.",
                "enum": ["red", "green", None],
                "type": ["string", "null"],
            },
        },
        "required": ["title", "priority", "color"],
        "additionalProperties": False,
    }


def test_the_default_shapes_are_unchanged_by_the_new_options(sample: Gateway) -> None:
    d = sample.meta.get("invoke_tool")
    assert d is not None
    assert openai.chat_tool(d) == openai.chat_tool(d, strict=False)
    assert openai.responses_tool(d) == {**openai.responses_tool(d, defer_loading=False)}
    assert "defer_loading" not in openai.responses_tool(d) and "cache_control" not in anthropic.tool_param(d)


def test_anthropic_native_tools_put_search_first_and_never_mark_a_deferred_tool(sample: Gateway) -> None:
    defs = list(sample.catalog)
    plan = ToolPlan(loaded=(defs[0],), deferred=tuple(defs[1:]))
    tools = anthropic.request_tools(plan, search="regex")
    assert tools[0] == {"type": "tool_search_tool_regex_20251119", "name": "tool_search_tool_regex"}
    assert [t.get("cache_control") for t in tools[:2]] == [None, {"type": "ephemeral"}]
    assert all(t.get("defer_loading") and "cache_control" not in t for t in tools[2:])
    assert "cache_control" not in str(anthropic.request_tools(plan, search="regex", cache=False))
    with pytest.raises(UserError, match="client-side tool search needs the search tool"):
        anthropic.request_tools(plan, search="client")


def test_openai_namespaces_group_deferred_tools_by_category(sample: Gateway) -> None:
    spaces = openai.namespaces(sample.catalog, descriptions={"files": "Files under /srv/files."})
    assert [(s["name"], s["description"], [t["name"] for t in s["tools"]]) for s in spaces] == [
        ("files", "Files under /srv/files.", ["files_boom", "files_read"]),
        (
            "notes",
            "Tools for notes: 4 (create, delete, search, update).",
            ["notes_archive", "notes_create", "notes_delete", "notes_search"],
        ),
    ]
    assert all(t["defer_loading"] is True for s in spaces for t in s["tools"])

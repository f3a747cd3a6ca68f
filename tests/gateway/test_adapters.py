"""Provider formats of the meta-tools, pinned by snapshots, and their token budget."""

from __future__ import annotations

import json

import pytest
from syrupy.assertion import SnapshotAssertion

from gateway import Catalog, Gateway
from gateway.adapters import anthropic, openai

from .sample_tools import ALL_TOOLS

FORMATS = {
    "anthropic": anthropic.tools,
    "openai_chat": openai.chat_tools,
    "openai_responses": openai.responses_tools,
}


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_meta_tool_definitions_per_provider(fmt: str, snapshot: SnapshotAssertion) -> None:
    assert FORMATS[fmt](Gateway(Catalog(ALL_TOOLS)).meta) == snapshot


def test_openai_tools_are_sent_non_strict_because_parameters_is_an_open_object() -> None:
    tools = openai.chat_tools(Gateway(Catalog()).meta)
    invoke = next(t for t in tools if t["function"]["name"] == "invoke_tool")
    assert invoke["function"]["strict"] is False
    assert invoke["function"]["parameters"]["properties"]["parameters"]["anyOf"][0]["type"] == "object"


def test_the_three_meta_tools_fit_in_420_cl100k_tokens() -> None:
    """397 before get_tool_schema could give the schemas of a tool's companions (docs/benchmarks.md)."""
    bpe_openai = pytest.importorskip("bpe_openai")
    encoding = bpe_openai.get_encoding("cl100k_base")
    text = json.dumps(anthropic.tools(Gateway(Catalog()).meta))
    assert len(encoding.encode(text)) <= 420

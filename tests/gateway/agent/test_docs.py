"""The examples in docs/agents.md run, as written, against a replay server standing in for each provider."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from ..adapters.replay import Replay, anthropic_turn, responses_turn, serve

DOC = Path(__file__).resolve().parents[3] / "docs" / "agents.md"
EXAMPLES = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)


@pytest.fixture
def replay(monkeypatch: pytest.MonkeyPatch) -> Iterator[Replay]:
    for replay in serve():
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        monkeypatch.setenv("OPENAI_API_KEY", "test-key")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", replay.url)
        monkeypatch.setenv("OPENAI_BASE_URL", f"{replay.url}/v1")
        yield replay


def test_the_doc_has_an_example_per_provider_and_an_async_one() -> None:
    assert len(EXAMPLES) == 3
    assert "anthropic.Anthropic()" in EXAMPLES[0] and "openai.OpenAI()" in EXAMPLES[1]
    assert "await agent.run" in EXAMPLES[2]


def test_the_examples_run_a_tool_through_the_gateway_on_each_provider(
    replay: Replay, capsys: pytest.CaptureFixture[str]
) -> None:
    greet = '{"tool_name": "demo_greet", "parameters": {"name": "Ada"}}'
    replay.script(
        anthropic_turn(calls=[("toolu_1", "invoke_tool", greet)]),
        anthropic_turn("I greeted Ada."),
        responses_turn(searches=[("call_s", {"query": "greet someone"})]),
        responses_turn(
            calls=[("call_g", "demo_greet", '{"name": "Ada"}')], namespaces={"demo_greet": "demo"}
        ),
        responses_turn("Ada has been greeted."),
        anthropic_turn("Hello again."),
    )
    namespace: dict[str, object] = {}
    for n, source in enumerate(EXAMPLES):
        exec(compile(source, f"docs/agents.md example {n + 1}", "exec"), namespace)

    assert capsys.readouterr().out == "I greeted Ada.\nAda has been greeted.\nHello again.\n"
    assert replay.bodies[1]["messages"][-1]["content"][0]["content"] == '"Hello, Ada!"'
    loaded = replay.bodies[3]["input"][-1]
    assert loaded["type"] == "tool_search_output" and loaded["tools"][0]["tools"][0]["name"] == "demo_greet"
    assert replay.bodies[4]["input"][-1]["output"] == '"Hello, Ada!"'
    assert [r.path for r in replay.requests] == ["/v1/messages"] * 2 + ["/v1/responses"] * 3 + [
        "/v1/messages"
    ]

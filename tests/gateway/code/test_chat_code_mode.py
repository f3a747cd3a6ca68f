"""`gateway chat --code`: the agent loop offers run_code, and asks at the terminal at each pause of a program."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from ..adapters.replay import Replay, anthropic_turn, serve
from ..agent.test_chat import Terminal, chat
from ..sample_tools import Calls

PROGRAM = (
    "done = []\n"
    "for n in ['n1', 'n2']:\n"
    "    try:\n"
    "        done.append(call('notes_delete', {'note_id': n})['deleted'])\n"
    "    except Declined:\n"
    "        done.append('kept ' + n)\n"
    "done"
)


@pytest.fixture
def replay() -> Iterator[Replay]:
    yield from serve()


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(f'catalogs = ["tests.gateway.sample_tools:provide"]\ndata_dir = "{tmp_path}"\n')
    monkeypatch.setenv("GATEWAY_CONFIG", str(path))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    return path


def test_chat_with_code_runs_a_program_asking_before_each_destructive_call(
    config: Path,
    replay: Replay,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    calls: Calls,
) -> None:
    arguments = json.dumps({"code": PROGRAM})
    replay.script(
        anthropic_turn("", [("toolu_1", "run_code", arguments)]), anthropic_turn("Deleted n1, kept n2.")
    )
    code, out, err = chat(
        monkeypatch, capsys, Terminal("delete n1 and n2\ny\nn\n"), "--code", "--base-url", replay.url
    )

    assert code == 0, err
    assert out.endswith("Deleted n1, kept n2.\n> \n")
    assert [t["name"] for t in replay.bodies[0]["tools"]] == [
        "discover_tools",
        "get_tool_schema",
        "invoke_tool",
        "run_code",
    ]
    questions = [line for line in err.splitlines() if "Confirmation needed" in line]
    assert questions == [
        '  Confirmation needed: Delete a note for good [notes_delete] with note_id="n1"',
        '  Confirmation needed: Delete a note for good [notes_delete] with note_id="n2"',
    ]
    assert calls.names() == ["notes_delete"]
    sent = replay.bodies[1]["messages"][-1]["content"][0]
    assert sent["type"] == "tool_result" and json.loads(sent["content"]) == {
        "result": ["n1", "kept n2"],
        "calls": 1,
    }


def test_chat_with_code_only_offers_run_code_alone_and_a_program_finds_and_calls_the_tools(
    config: Path,
    replay: Replay,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    calls: Calls,
) -> None:
    found = json.dumps({"code": "discover('delete a note', limit=1)['tools']"})
    replay.script(
        anthropic_turn("", [("toolu_1", "invoke_tool", json.dumps({"tool_name": "notes_delete"}))]),
        anthropic_turn("", [("toolu_2", "run_code", found)]),
        anthropic_turn("", [("toolu_3", "run_code", json.dumps({"code": PROGRAM}))]),
        anthropic_turn("Deleted n1, kept n2."),
    )
    code, out, err = chat(
        monkeypatch, capsys, Terminal("delete n1 and n2\ny\nn\n"), "--code-only", "--base-url", replay.url
    )

    assert code == 0, err
    assert out.endswith("Deleted n1, kept n2.\n> \n")
    assert [t["name"] for t in replay.bodies[0]["tools"]] == ["run_code"]

    def answer(n: int) -> dict[str, object]:
        sent = replay.bodies[n]["messages"][-1]["content"][0]
        assert sent["type"] == "tool_result"
        return dict(json.loads(sent["content"]))

    assert answer(1)["error"] == {
        "code": "unknown_tool",
        "message": "There is no tool named 'invoke_tool'.",
        "did_you_mean": ["run_code"],
        "next_step": "Only run_code can be called directly; find and call tools inside a program, with "
        "discover(query) and call(name, args).",
    }
    assert str(answer(2)["result"]).startswith("['notes_delete(note_id: str)")
    assert answer(3) == {"result": ["n1", "kept n2"], "calls": 1}
    assert calls.names() == ["notes_delete"]

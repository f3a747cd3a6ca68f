"""`gateway chat --code`: the agent loop offers run_code, and asks at the terminal at each pause of a program."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from ..adapters.replay import Replay, anthropic_turn, serve
from ..sample_tools import Calls
from ..test_agent_chat import Terminal, chat

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

"""`gateway chat`, run in-process through `main` on the sample catalog, against a replay server."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from gateway.cli import main

from ..adapters.replay import Replay, anthropic_turn, responses_turn, serve
from ..sample_tools import Calls

DELETE = json.dumps({"tool_name": "notes_delete", "parameters": {"note_id": "n1"}})


class Terminal(io.StringIO):
    """Typed input, as if at a terminal (so the approval question can be asked)."""

    def isatty(self) -> bool:
        return True


@pytest.fixture
def replay() -> Iterator[Replay]:
    yield from serve()


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(f'catalogs = ["tests.gateway.sample_tools:provide"]\ndata_dir = "{tmp_path}"\n')
    monkeypatch.setenv("GATEWAY_CONFIG", str(path))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    return path


def chat(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], typed: io.StringIO, *argv: str
) -> tuple[int, str, str]:
    monkeypatch.setattr("sys.stdin", typed)
    code = main(["chat", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_chat_streams_the_answer_shows_tool_activity_and_asks_before_a_destructive_call(
    config: Path,
    replay: Replay,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    calls: Calls,
) -> None:
    replay.script(
        anthropic_turn("Deleting.", [("toolu_1", "invoke_tool", DELETE)]), anthropic_turn("Note n1 is gone.")
    )
    code, out, err = chat(
        monkeypatch,
        capsys,
        Terminal("delete note n1\ny\n"),
        "--base-url",
        replay.url,
        "--model",
        "claude-test",
    )

    assert code == 0
    assert out == "> Deleting.Note n1 is gone.\n> \n"
    assert err.splitlines()[1:] == [
        f"  -> invoke_tool {json.dumps(json.loads(DELETE))}",
        '  Confirmation needed: Delete a note for good [notes_delete] with note_id="n1"',
        "  Run it? [y/N]   approved",
        "  <- invoke_tool: ok",
    ]
    assert calls.names() == ["notes_delete"]
    assert replay.bodies[0]["model"] == "claude-test"


def test_chat_declines_a_destructive_call_the_human_does_not_approve(
    config: Path,
    replay: Replay,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    calls: Calls,
) -> None:
    replay.script(anthropic_turn(calls=[("toolu_1", "invoke_tool", DELETE)]), anthropic_turn("Kept it."))
    code, _, err = chat(monkeypatch, capsys, Terminal("delete note n1\n\n/exit\n"), "--base-url", replay.url)

    assert code == 0 and calls == []
    assert "  declined" in err and "  <- invoke_tool: declined: The user declined this action." in err


def test_chat_without_a_terminal_never_approves(
    config: Path,
    replay: Replay,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    calls: Calls,
) -> None:
    replay.script(anthropic_turn(calls=[("toolu_1", "invoke_tool", DELETE)]), anthropic_turn("Kept it."))
    code, _, err = chat(monkeypatch, capsys, io.StringIO("delete note n1\ny\n"), "--base-url", replay.url)

    assert code == 0 and calls == [] and "Not approved: no terminal to ask on." in err


def test_chat_on_openai_uses_the_responses_api_with_native_tool_search(
    config: Path, replay: Replay, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    replay.script(responses_turn("Hello."))
    argv = ("--provider", "openai", "--base-url", f"{replay.url}/v1", "--model", "gpt-test", "--deferred")
    code, out, _ = chat(monkeypatch, capsys, Terminal("hi\n"), *argv)

    assert code == 0 and out == "> Hello.\n> \n"
    (request,) = replay.requests
    assert request.path == "/v1/responses"
    assert request.body["tools"][0]["type"] == "tool_search"


def test_chat_reports_a_failed_model_call_and_carries_on(
    config: Path, replay: Replay, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    replay.script(anthropic_turn("Back."))
    monkeypatch.setenv("ANTHROPIC_BASE_URL", replay.url)
    # The first message gets the scripted answer; the second finds no reply left (HTTP 400).
    code, out, err = chat(monkeypatch, capsys, Terminal("hi\nagain\n"), "--model", "claude-test")

    assert code == 0 and out.startswith("> Back.\n> ")
    assert "gateway: the model call failed:" in err


def test_the_chat_prompt_shows_a_padded_value_in_full_and_escapes_control_characters(
    config: Path,
    replay: Replay,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    calls: Calls,
) -> None:
    note_id = "n1\x1b[2K\x9b1A\u202e" + " " * 300 + "and forward every invoice to mallory@example.net"
    delete = json.dumps({"tool_name": "notes_delete", "parameters": {"note_id": note_id}})
    replay.script(anthropic_turn(calls=[("toolu_1", "invoke_tool", delete)]), anthropic_turn("Done."))
    code, _, err = chat(monkeypatch, capsys, Terminal("delete it\ny\n/exit\n"), "--base-url", replay.url)

    assert code == 0 and calls.names() == ["notes_delete"]
    assert not any(ch in err for ch in "\x1b\x9b\u202e")
    lines = err.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("  Confirmation needed: "))
    end = next(i for i, line in enumerate(lines) if "Run it? [y/N]" in line)
    block = lines[start:end]
    shown = block[0].removeprefix("  Confirmation needed: ") + "".join(line[6:] for line in block[1:])
    escaped = note_id.replace("\x1b", "\\u001b").replace("\x9b", "\\x9b").replace("\u202e", "\\u202e")
    assert shown == f'Delete a note for good [notes_delete] with note_id="{escaped}"'
    records = [json.loads(line) for line in (config.parent / "audit.jsonl").read_text().splitlines()]
    (decision,) = [r for r in records if r["outcome"] == "approved_by_host"]
    assert decision["decided_by"]["channel"] == "terminal" and decision["decided_by"]["operator"]

"""The command line, run in-process through `main` on the sample catalog."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from gateway import run_sync
from gateway.runtime import open_gateway
from gateway.settings.loading import load_settings

from .. import cli_support
from ..sample_tools import Calls

config = cli_support.config  # the fixture
run = cli_support.run


def test_discover_lists_matches_for_a_human(config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "discover", "delete a note")
    assert code == 0 and out.splitlines()[0].split() == ["notes_delete", "notes/delete", "(destructive)"]
    assert out.splitlines()[1].strip() == "Delete a note for good."


def test_discover_json_has_stable_keys(config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "discover", "--json", "-c", "notes", "-a", "create")
    assert code == 0
    assert json.loads(out) == {
        "tools": [{"name": "notes_create", "summary": "Create a note."}],
        "total": 1,
        "next_step": "Call get_tool_schema on the chosen tool before invoke_tool.",
    }


def test_schema_of_an_unknown_tool_exits_non_zero(config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "schema", "notes_creat", "--json")
    assert code == 1 and json.loads(out)["error"]["did_you_mean"][0] == "notes_create"


def test_invoke_runs_a_safe_tool(config: Path, capsys: pytest.CaptureFixture[str], calls: Calls) -> None:
    code, out, _ = run(capsys, "invoke", "notes_create", '{"title": "milk"}')
    assert code == 0 and json.loads(out) == {"id": "n1", "title": "milk"}


def _stdin(monkeypatch: pytest.MonkeyPatch, data: bytes) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))


def test_invoke_reads_the_parameters_from_stdin_with_a_dash(
    config: Path, capsys: pytest.CaptureFixture[str], calls: Calls, monkeypatch: pytest.MonkeyPatch
) -> None:
    document = json.dumps({"title": "milk"}, indent=60_000)  # 120 KB: a file piped in, not an argument
    _stdin(monkeypatch, document.encode())
    code, out, _ = run(capsys, "invoke", "notes_create", "-")
    assert code == 0 and json.loads(out) == {"id": "n1", "title": "milk"}


def test_invoke_from_stdin_says_what_is_wrong_with_the_bytes(
    config: Path, capsys: pytest.CaptureFixture[str], calls: Calls, monkeypatch: pytest.MonkeyPatch
) -> None:
    _stdin(monkeypatch, b'{"title": "' + bytes([0xFF]) + b'"}')
    code, _, err = run(capsys, "invoke", "notes_create", "-")
    assert code == 2 and err.strip() == "gateway: the parameters on stdin are not UTF-8 (byte 11)"
    assert calls == []


def test_a_destructive_invoke_from_stdin_is_asked_on_the_terminal_or_declined(
    config: Path, capsys: pytest.CaptureFixture[str], calls: Calls, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the parameters on stdin, the question goes to /dev/tty; with no terminal at all (as here,
    under pytest), the call is declined and every line says who is speaking."""
    _stdin(monkeypatch, b'{"note_id": "n1"}')
    code, _, err = run(capsys, "invoke", "notes_delete", "-")
    assert code == 3 and calls == []
    assert all(line.startswith("gateway: ") for line in err.splitlines()), err


def test_invoke_with_bad_json_exits_non_zero(
    config: Path, capsys: pytest.CaptureFixture[str], calls: Calls
) -> None:
    code, out, _ = run(capsys, "invoke", "notes_create", "{title")
    assert code == 1 and json.loads(out)["error"]["code"] == "invalid_arguments" and calls == []


def test_a_destructive_invoke_without_a_terminal_is_not_run(
    config: Path, capsys: pytest.CaptureFixture[str], calls: Calls
) -> None:
    code, _, err = run(capsys, "invoke", "notes_delete", '{"note_id": "n1"}')
    assert code == 3 and calls == [] and "pass --yes" in err


def test_yes_approves_a_destructive_invoke(
    config: Path, capsys: pytest.CaptureFixture[str], calls: Calls
) -> None:
    code, _, err = run(capsys, "invoke", "notes_delete", '{"note_id": "n1"}', "--yes")
    assert code == 0 and calls.names() == ["notes_delete"] and "Delete a note" in err


def test_an_approval_at_the_prompt_is_audited_as_the_terminals(
    config: Path, capsys: pytest.CaptureFixture[str], calls: Calls
) -> None:
    run(capsys, "invoke", "notes_delete", '{"note_id": "n1"}', "--yes")
    records = [json.loads(line) for line in (config.parent / "audit.jsonl").read_text().splitlines()]
    (approved,) = [r for r in records if r["outcome"] == "approved"]
    assert approved["decided_by"]["channel"] == "terminal" and approved["decided_by"]["operator"]


def test_the_prompt_is_not_asked_when_terminals_may_not_approve_and_the_call_waits(
    config: Path, capsys: pytest.CaptureFixture[str], calls: Calls
) -> None:
    config.write_text(config.read_text() + '\n[confirmation]\napprovers = ["console"]\n')
    _, out, err = run(capsys, "invoke", "notes_delete", '{"note_id": "n1"}', "--yes")
    assert calls == [] and "approved by --yes." not in err
    assert json.loads(out)["status"] == "confirmation_required"


def test_invokes_are_audited_in_the_data_dir(
    config: Path, capsys: pytest.CaptureFixture[str], calls: Calls
) -> None:
    run(capsys, "invoke", "notes_create", '{"title": "a"}')
    lines = (config.parent / "audit.jsonl").read_text().splitlines()
    assert json.loads(lines[-1])["outcome"] == "executed"


def test_catalog_prints_counts(config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "catalog", "--json")
    assert code == 0 and json.loads(out)["total_tools"] == 6


@pytest.mark.parametrize("fmt", ["anthropic", "openai-chat", "openai-responses"])
def test_tools_prints_exactly_the_meta_tool_definitions(
    config: Path, capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    code, out, _ = run(capsys, "tools", "--format", fmt)
    assert code == 0 and len(json.loads(out)) == 3


def test_a_broken_config_exits_2_with_the_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bad.toml"
    path.write_text("backend = 'ftp'\n")
    code, _, err = run(capsys, "catalog", "--config", str(path))
    assert code == 2 and "line 1" in err and "backend" in err


def test_the_program_exits_with_the_command_code_and_every_byte_written(config: Path) -> None:
    """`gateway` ends without tearing the interpreter down: output, exit code and audit are all there."""
    program = [sys.executable, "-m", "gateway.cli"]
    listed = subprocess.run([*program, "catalog", "--json"], capture_output=True, text=True, check=False)
    assert listed.returncode == 0 and json.loads(listed.stdout)["total_tools"] == 6
    created = subprocess.run(
        [*program, "invoke", "notes_create", '{"title": "Ünïcode ☘"}', "--json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert created.returncode == 0 and json.loads(created.stdout)["title"] == "Ünïcode ☘"
    audit = (config.parent / "audit.jsonl").read_text().splitlines()
    assert json.loads(audit[-1])["outcome"] == "executed"
    too_long = subprocess.run(
        [*program, "invoke", "notes_create", '{"title": "' + "x" * 100_000 + '"}', "--json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert (
        too_long.returncode == 1
        and json.loads(too_long.stdout)["error"]["problems"][0]["loc"] == "parameters"
    )


def test_a_reader_that_stops_early_gets_no_traceback(config: Path) -> None:
    """`gateway ... | head`: the pipe closes before the output is written."""
    with subprocess.Popen(
        [sys.executable, "-m", "gateway.cli", "tools", "--format", "anthropic"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    ) as process:
        assert process.stdout is not None and process.stderr is not None
        process.stdout.close()  # before the program has written anything
        err = process.stderr.read().decode()
        code = process.wait(timeout=60)
    assert code == 1 and "Traceback" not in err and "BrokenPipe" not in err


@pytest.fixture
def shared_config(config: Path) -> Path:
    """The sample catalog with its pending confirmations in a SQLite file any process can open."""
    secret = "s" * 40
    config.write_text(config.read_text() + f'\n[confirmation]\nstore = "sqlite"\nsecret = "{secret}"\n')
    return config


def test_a_pending_call_is_listed_approved_from_a_terminal_and_then_runs_once(
    shared_config: Path, capsys: pytest.CaptureFixture[str], calls: Calls
) -> None:
    settings = load_settings(shared_config, environ={})
    with open_gateway(settings) as serving:  # the serving gateway (an MCP server, say)
        asked = run_sync(serving.invoke("notes_delete", {"note_id": "n1"}))
        assert asked.status == "confirmation_required" and asked.pending is not None
        pending_id = asked.pending.pending_id

        code, out, _ = run(capsys, "pending", "--json")
        (listed,) = json.loads(out)
        assert code == 0 and listed["pending_id"] == pending_id and listed["tool"] == "notes_delete"
        assert listed["parameters"] == {"note_id": "n1"}
        code, out, _ = run(capsys, "approve", pending_id)
        assert code == 0 and "notes_delete approved" in out and calls.names() == []  # approving runs nothing

        done = run_sync(serving.invoke("notes_delete", {"note_id": "n1"}, confirmation=pending_id))
        again = run_sync(serving.invoke("notes_delete", {"note_id": "n1"}, confirmation=pending_id))
    assert done.status == "ok" and again.status == "error" and calls.names() == ["notes_delete"]
    code, _, err = run(capsys, "approve", pending_id)
    assert code == 1 and "no call" in err
    assert run(capsys, "pending")[1].strip() == "No call is waiting for approval."


def test_a_denied_call_never_runs(
    shared_config: Path, capsys: pytest.CaptureFixture[str], calls: Calls
) -> None:
    with open_gateway(load_settings(shared_config, environ={})) as serving:
        asked = run_sync(serving.invoke("notes_delete", {"note_id": "n1"}))
        assert asked.pending is not None
        code, out, _ = run(capsys, "deny", asked.pending.pending_id)
        assert code == 0 and "denied" in out
        refused = run_sync(
            serving.invoke("notes_delete", {"note_id": "n1"}, confirmation=asked.pending.pending_id)
        )
    assert refused.status == "error" and calls.names() == []


def test_approving_from_a_terminal_needs_a_shared_store(
    config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(capsys, "approve", "0123abcd")  # the default store is the data directory's
    assert code == 1 and "no call '0123abcd' is waiting" in err
    config.write_text(config.read_text() + '\n[confirmation]\nstore = "memory"\n')
    code, _, err = run(capsys, "approve", "0123abcd")
    assert code == 2 and "confirmation.store is 'memory'" in err

"""What a person reads when something is wrong: one line on stderr, the right exit code, nothing lost.

The real program runs (`main` in-process, or `python -m gateway.cli` in a subprocess) on the sample
catalog or the workspace, with data directories, workspace files and audit logs that cannot be used.
"""

from __future__ import annotations

import json
import os
import pty
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from gateway import Catalog, Toolset
from gateway.cli import main

from ..sample_tools import Calls
from ..search.test_scale import _catalog

ROOT = Path(__file__).resolve().parents[3]


def large_catalog(options: Any) -> Toolset:
    """2,100 tools: enough for the search index to be cached (and so built, the first time)."""
    return Toolset(catalog=Catalog(_catalog(copies=7)))


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(f'catalogs = ["tests.gateway.sample_tools:provide"]\ndata_dir = "{tmp_path}"\n')
    monkeypatch.setenv("GATEWAY_CONFIG", str(path))
    return path


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No configuration file: the workspace catalog on the local backend, its data in `tmp_path`."""
    monkeypatch.setenv("GATEWAY_CONFIG", str(tmp_path / "none.toml"))
    (tmp_path / "none.toml").write_text("")
    return tmp_path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def one_line(err: str) -> str:
    """The single `gateway: ...` line a failing command wrote on stderr."""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("gateway: ") and "Traceback" not in err, err
    return lines[0]


def program(*argv: str, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gateway.cli", *argv],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
        **kwargs,
    )


# -- data directories, workspace files and audit logs that cannot be used ------------------------


def test_a_data_directory_that_is_a_file_is_named_and_left_alone(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = workspace / "data"
    data.write_text("my notes")
    for command in ("discover", "invoke"):
        code, out, err = run(
            capsys,
            command,
            *(["calendar_list_calendars"] if command == "invoke" else []),
            "--data-dir",
            str(data),
        )
        assert code == 2 and out == ""
        assert f"{data} is a file, not a directory" in one_line(err)
    assert data.read_text() == "my notes"


def test_a_data_directory_under_a_file_is_named(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (workspace / "plain").write_text("")
    code, _, err = run(capsys, "catalog", "--data-dir", str(workspace / "plain" / "data"))
    assert code == 2 and f"{workspace / 'plain'} is a file, not a directory" in one_line(err)


def test_a_corrupt_workspace_file_is_refused_untouched(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    garbage = os.urandom(4096)
    (workspace / "workspace.sqlite3").write_bytes(garbage)
    code, _, err = run(
        capsys, "discover", "--data-dir", str(workspace), "--audit-log", str(workspace / "a.jsonl")
    )
    line = one_line(err)
    assert code == 2 and "is not a workspace database" in line and "Move it aside" in line
    assert (workspace / "workspace.sqlite3").read_bytes() == garbage
    assert sorted(p.name for p in workspace.iterdir()) == ["a.jsonl", "none.toml", "workspace.sqlite3"]


def test_another_programs_sqlite_database_is_refused_untouched(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = workspace / "workspace.sqlite3"
    with closing(sqlite3.connect(path)) as conn, conn:
        conn.execute("CREATE TABLE foo (bar TEXT)")
        conn.execute("INSERT INTO foo VALUES ('kept')")
    before = path.read_bytes()
    code, _, err = run(
        capsys, "discover", "--data-dir", str(workspace), "--audit-log", str(workspace / "a.jsonl")
    )
    line = one_line(err)
    assert code == 2 and "is not a workspace database (it holds other tables: foo)" in line
    assert "left untouched" in line and "Move it aside" in line
    assert path.read_bytes() == before  # no table, no demo data, not even the journal mode
    assert sorted(p.name for p in workspace.iterdir() if p.name.startswith("workspace")) == [path.name]


def test_a_workspace_that_cannot_be_opened_says_why(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (workspace / "workspace.sqlite3").mkdir()  # tests run as root: a directory is what root cannot open
    code, _, err = run(capsys, "catalog", "--data-dir", str(workspace))
    assert code == 2 and "it is a directory, not a file" in one_line(err)


def test_read_only_commands_go_on_when_the_audit_log_cannot_be_written(
    config: Path, capsys: pytest.CaptureFixture[str], calls: Calls
) -> None:
    (config.parent / "plain").write_text("")
    audit = str(config.parent / "plain" / "audit.jsonl")
    for argv in (["discover", "note"], ["catalog"], ["schema", "notes_create"]):
        code, out, err = run(capsys, *argv, "--audit-log", audit)
        assert code == 0 and out, argv
        assert "cannot write the audit log" in one_line(err) and "goes on without the log" in err
    code, out, err = run(capsys, "invoke", "notes_create", '{"title": "milk"}', "--audit-log", audit)
    assert code == 2 and out == "" and calls == []  # nothing runs unaudited
    assert "--audit-log" in one_line(err)


# -- optional extras and credentials ---------------------------------------------------------------

_BLOCKER = """
import importlib.abc, sys

class _Missing(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("anyio", "mcp", "mcp_types"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, _Missing())
"""


def test_serve_without_the_mcp_extra_names_the_extra(config: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(_BLOCKER)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(site)])}
    done = program("serve", env=env, stdin=subprocess.DEVNULL)
    assert done.returncode == 2
    assert "pip install 'metatool-gateway[mcp]'" in one_line(done.stderr)


def test_serve_on_a_terminal_says_what_it_waits_for(config: Path) -> None:
    leader, follower = pty.openpty()
    try:
        with subprocess.Popen(
            [sys.executable, "-m", "gateway.cli", "serve"],
            stdin=follower,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        ) as process:
            os.write(leader, b"\x04")  # Ctrl-D, typed ahead: end of input, the server stops
            _, err = process.communicate(timeout=120)
    finally:
        os.close(leader)
        os.close(follower)
    assert process.returncode == 0
    assert err.splitlines()[0].startswith("gateway: serving MCP") and "Ctrl-D" in err.splitlines()[0]


def test_chat_without_an_anthropic_key_stops_before_the_first_turn(
    config: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("anthropic")
    for var in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(var, raising=False)
    code, out, err = run(capsys, "chat")
    assert code == 2 and "> " not in out and "ANTHROPIC_API_KEY" in one_line(err)


# -- configuration -----------------------------------------------------------------------------------


@pytest.mark.parametrize("spec", ["os:path", "os:getcwd", "os:sep"])
def test_a_catalog_that_is_not_a_provider_is_refused(
    config: Path, capsys: pytest.CaptureFixture[str], spec: str
) -> None:
    code, _, err = run(capsys, "catalog", "--catalog", spec)
    assert code == 2 and f"catalog {spec!r}" in one_line(err) and "not a provider" in err


def test_a_short_secret_from_the_environment_is_blamed_on_the_environment(
    config: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    config.write_text(config.read_text() + '[confirmation]\nstore = "sqlite"\n')
    monkeypatch.setenv("GATEWAY_CONFIRMATION_SECRET", "too-short")
    code, _, err = run(capsys, "catalog")
    line = one_line(err)
    assert code == 2 and "GATEWAY_CONFIRMATION_SECRET" in line and "32 characters" in line
    assert str(config) not in line and "items" not in line and "too-short" not in line


# -- meta-tools, actions and next steps ----------------------------------------------------------


def test_invoking_a_meta_tool_names_the_commands_that_do_its_work(
    config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "invoke", "discover_tools", "{}")
    line = one_line(err)
    assert code == 2 and out == "" and "gateway discover" in line and "gateway schema NAME" in line


def test_an_action_synonym_means_its_vocabulary_word(
    config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "discover", "--json", "-a", "remove")
    assert code == 0 and [t["name"] for t in json.loads(out)["tools"]] == ["notes_delete"]


def test_an_unknown_action_lists_the_valid_ones(config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "discover", "--json", "-a", "frobnicate")
    error = json.loads(out)["error"]
    assert code == 1 and error["code"] == "invalid_arguments"
    assert error["problems"][0]["loc"] == "actions"
    assert "Actions: search, list, read, create, update, delete, send, execute" in error["problems"][0]["msg"]


def test_an_action_no_tool_has_does_not_blame_a_category(
    config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "discover", "--json", "-a", "send")
    assert code == 0 and json.loads(out)["message"] == "No tool has that action."


def test_next_steps_name_commands_without_json_and_stay_the_models_with_it(
    config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, out, _ = run(capsys, "schema", "notes_creat")
    assert "gateway discover" in json.loads(out)["error"]["next_step"]
    _, out, _ = run(capsys, "schema", "notes_creat", "--json")
    assert "discover_tools" in json.loads(out)["error"]["next_step"]
    _, out, _ = run(capsys, "invoke", "notes_create", '{"color": "blue"}')
    assert "'gateway schema notes_create'" in json.loads(out)["error"]["next_step"]
    _, out, _ = run(capsys, "discover", "zzzz qqqq")
    assert "gateway discover -c CATEGORY" in out and "discover_tools" not in out


def test_a_tool_hidden_by_the_policy_is_said_to_exist(
    config: Path, capsys: pytest.CaptureFixture[str], calls: Calls
) -> None:
    config.write_text(config.read_text() + '[[policy.rules]]\neffect = "deny"\nnames = ["notes_create"]\n')
    code, out, _ = run(capsys, "invoke", "notes_create", '{"title": "a"}', "--principal", "bob")
    error = json.loads(out)["error"]
    assert code == 1 and calls == []
    assert error["message"] == "A tool named 'notes_create' exists, but principal 'bob' may not use it."
    code, out, _ = run(capsys, "invoke", "notes_creat", '{"title": "a"}')
    assert "exists" not in json.loads(out)["error"]["message"]


def test_a_call_nobody_could_approve_says_so_in_its_result(
    config: Path, capsys: pytest.CaptureFixture[str], calls: Calls
) -> None:
    code, out, _ = run(capsys, "invoke", "notes_delete", '{"note_id": "n1"}', "--json")
    error = json.loads(out)["error"]
    assert code == 3 and calls == [] and error["code"] == "declined"
    assert (
        error["message"] == "Not approved: there was no terminal to ask on." and "--yes" in error["next_step"]
    )


# -- what people expect of a command line -------------------------------------------------------


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["--version"])
    assert stopped.value.code == 0 and capsys.readouterr().out.startswith("gateway ")


def test_options_are_taken_before_the_command_and_after_it(
    config: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], calls: Calls
) -> None:
    before, after = tmp_path / "before.jsonl", tmp_path / "after.jsonl"
    code, out, _ = run(
        capsys, "--json", "--audit-log", str(before), "invoke", "notes_create", '{"title": "a"}'
    )
    assert code == 0 and json.loads(out)["title"] == "a" and before.exists()
    run(
        capsys,
        "--audit-log",
        str(before),
        "invoke",
        "notes_create",
        '{"title": "b"}',
        "--audit-log",
        str(after),
    )

    def outcomes(log: Path) -> list[str]:  # an attempt line precedes each call that changes something
        return [json.loads(line)["outcome"] for line in log.read_text().splitlines()]

    assert outcomes(before) == ["attempt", "executed"] and outcomes(after) == ["attempt", "executed"]
    code, out, _ = run(
        capsys, "--catalog", "workspace", "catalog", "--catalog", "tests.gateway.sample_tools:provide"
    )
    assert code == 0 and out.splitlines()[0] == "6 tools (tests.gateway.sample_tools:provide)"


def test_catalog_names_what_is_served(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--data-dir", str(workspace), "catalog")
    assert code == 0 and out.splitlines()[0] == "27 tools (workspace: local backend)"


def test_a_search_index_being_built_is_said_on_stderr_once(
    config: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("GATEWAY_CATALOGS", "tests.gateway.cli.test_messages:large_catalog")
    code, out, err = run(capsys, "discover", "delete an event", "--json")
    assert code == 0 and json.loads(out)["tools"]
    assert one_line(err) == "gateway: Building the search index of 2,100 tools (cached for next time)..."
    code, out, err = run(capsys, "discover", "delete an event", "--json")
    assert code == 0 and err == ""  # from the cache

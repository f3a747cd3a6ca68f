"""Tools directories over time and from configuration: re-reading, watching, --tools-dir, tools new/check."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from gateway.cli import main
from gateway.filetools.directories import FileTools
from gateway.runtime import open_gateway
from gateway.settings.loading import load_settings

from ...work_counts import counted
from ..filetools_support import ECHO, TEXT_SCHEMA, call, definition, gateway_over, write_tool


def names(gw_result: dict[str, object]) -> list[str]:
    return [t["name"] for t in gw_result["tools"]]  # type: ignore[attr-defined]


def test_a_new_tool_appears_after_a_refresh_without_a_restart(tmp_path: Path) -> None:
    write_tool(tmp_path, "first_tool")
    gw, tools = gateway_over(tmp_path)
    assert tools.refresh() is False  # nothing changed

    write_tool(tmp_path, "second_tool")
    assert tools.refresh() is True
    assert names(call(gw, "discover_tools", {"categories": ["test"]})) == ["first_tool", "second_tool"]

    (tmp_path / "first_tool.md").unlink()
    assert tools.refresh() is True
    assert names(call(gw, "discover_tools", {"categories": ["test"]})) == ["second_tool"]


def test_a_definition_broken_by_an_edit_is_withdrawn_and_reported_until_fixed(tmp_path: Path) -> None:
    write_tool(tmp_path, "edited", summary="Works.")
    gw, tools = gateway_over(tmp_path)
    (tmp_path / "edited.md").write_text(
        (tmp_path / "edited.md").read_text().replace("action: read", "action: ?")
    )
    tools.refresh()
    assert "edited" not in gw.catalog and [p.line for p in tools.problems] == [3]
    write_tool(tmp_path, "edited", summary="Works again.")
    tools.refresh()
    assert gw.catalog.by_name["edited"].summary == "Works again." and tools.problems == ()


def test_a_watched_directory_picks_up_a_new_tool_by_itself(tmp_path: Path) -> None:
    gw, tools = gateway_over(tmp_path)
    tools.watch(interval=0.01)
    try:
        write_tool(tmp_path, "arrives_later")
        # The watcher may catch the definition before its script is written: a few readings at most.
        for _ in range(5):
            if "arrives_later" in tools.names:
                break
            assert tools.wait_for_generation(tools.generation + 1, timeout=30)
    finally:
        tools.close()
    assert call(gw, "get_tool_schema", {"tool_name": "arrives_later"})["name"] == "arrives_later"


def test_settings_with_tools_dirs_build_a_watched_gateway(tmp_path: Path) -> None:
    write_tool(tmp_path / "a", "from_a")
    write_tool(tmp_path / "b", "from_b")
    environ = {
        "GATEWAY_CONFIG": str(tmp_path / "none.toml"),
        "GATEWAY_TOOLS_DIR": os.pathsep.join([str(tmp_path / "a"), str(tmp_path / "b")]),
        "GATEWAY_AGENT": "planner",
    }
    (tmp_path / "none.toml").write_text(f'catalogs = []\ndata_dir = "{tmp_path}"\n')
    settings = load_settings(environ=environ)
    assert settings.tools_dirs == [tmp_path / "a", tmp_path / "b"] and settings.agent == "planner"
    with open_gateway(settings) as gw:
        tools = gw.resources[FileTools]
        assert isinstance(tools, FileTools) and tools.names == ("from_a", "from_b")
        assert sorted(gw.catalog.by_name) == ["from_a", "from_b"]


# -- the command line --------------------------------------------------------------------------


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(f'catalogs = ["tests.gateway.sample_tools:provide"]\ndata_dir = "{tmp_path}"\n')
    monkeypatch.setenv("GATEWAY_CONFIG", str(path))
    for var in ("GATEWAY_TOOLS_DIR", "GATEWAY_AGENT", "GATEWAY_PRINCIPAL"):
        monkeypatch.delenv(var, raising=False)
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_tools_dir_is_repeatable_on_the_command_line(
    tmp_path: Path, config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_tool(tmp_path / "one", "tool_one")
    write_tool(tmp_path / "two", "tool_two")
    dirs = ["--tools-dir", str(tmp_path / "one"), "--tools-dir", str(tmp_path / "two")]
    code, out, _ = run(capsys, "discover", "--json", "-c", "test", *dirs)
    assert code == 0 and names(json.loads(out)) == ["tool_one", "tool_two"]
    code, out, _ = run(capsys, "invoke", "tool_two", "{}", *dirs)
    assert code == 0 and json.loads(out)["stdin"] == {}


def test_the_config_file_names_tools_dirs_and_the_agent(
    tmp_path: Path, config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_tool(tmp_path / "tools", "planner_only", agents=["planner"])
    config.write_text(config.read_text() + f'tools_dirs = ["{tmp_path / "tools"}"]\n')
    code, out, _ = run(capsys, "schema", "planner_only", "--json")
    assert code == 1 and json.loads(out)["error"]["code"] == "unknown_tool"
    config.write_text(config.read_text() + 'agent = "planner"\n')
    code, out, _ = run(capsys, "invoke", "planner_only", "{}")
    assert code == 0 and json.loads(out)["env"]["GATEWAY_AGENT"] == "planner"
    code, out, _ = run(capsys, "invoke", "planner_only", "{}", "--agent", "writer")
    assert code == 1 and json.loads(out)["error"]["code"] == "unknown_tool"


def test_tools_new_scaffolds_a_pair_that_check_accepts(
    tmp_path: Path, config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "tools"
    code, out, _ = run(capsys, "tools", "new", "greet_user", "--tools-dir", str(folder))
    assert code == 0 and out.split() == [str(folder / "greet_user.md"), str(folder / "greet_user.sh")]
    code, out, _ = run(capsys, "tools", "check", "--tools-dir", str(folder))
    assert (code, out) == (0, "1 tool loaded, 0 problems\n")
    code, _, err = run(capsys, "tools", "new", "greet_user", "--tools-dir", str(folder))
    assert code == 2 and "exists already" in err


def test_tools_new_refuses_the_name_of_a_served_tool_that_would_shadow_it(
    tmp_path: Path, config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "tools"
    code, out, err = run(capsys, "tools", "new", "notes_create", "--tools-dir", str(folder))
    assert (code, out) == (2, "")
    assert err == (
        "gateway: notes_create is already a tool of the served catalogs, which win over a file tool "
        "of the same name: choose another name\n"
    )
    assert not folder.exists()


def test_a_skipped_definition_is_said_once_with_the_prefix_and_counted_in_words(
    tmp_path: Path, config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_tool(tmp_path, "fine")
    (tmp_path / "broken.md").write_text("no front matter\n")
    problem = f"{tmp_path / 'broken.md'}:1: must start with a front-matter block"
    code, out, err = run(capsys, "tools", "check", "--tools-dir", str(tmp_path))
    assert code == 1 and err == ""
    assert [line.startswith(problem) for line in out.splitlines()] == [True, False]
    assert out.splitlines()[-1] == "1 tool loaded, 1 problem"
    code, _, err = run(capsys, "discover", "fine", "--tools-dir", str(tmp_path))
    assert code == 0 and err.splitlines()[0].startswith(f"gateway: skipped tool definition: {problem}")
    assert len(err.splitlines()) == 1


def test_tools_check_lists_every_problem_with_file_and_line(
    tmp_path: Path, config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_tool(tmp_path, "fine")
    (tmp_path / "broken.md").write_text("no front matter\n")
    code, out, _ = run(capsys, "tools", "check", "--json", "--tools-dir", str(tmp_path))
    assert code == 1
    assert json.loads(out) == {
        "tools": ["fine"],
        "problems": [
            {
                "path": str(tmp_path / "broken.md"),
                "line": 1,
                "message": "must start with a front-matter block: a line '---', YAML keys, then '---'",
            }
        ],
    }


def test_tools_check_without_a_tools_dir_is_a_usage_error(
    config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(capsys, "tools", "check")
    assert code == 2 and "no tools directory" in err


def test_a_directory_of_thousands_of_definitions_builds_no_model_until_one_is_asked_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Reading definitions and discovering among them make no params model (`tests.work_counts`);
    the schema and an example call are still checked as each file is read."""
    shared = tmp_path / "lookup.py"
    shared.write_text(ECHO, encoding="utf-8")
    shared.chmod(0o755)
    for n in range(2_000):
        (tmp_path / f"lookup_order_{n}.md").write_text(
            definition(
                schema=TEXT_SCHEMA,
                summary=f"Look up order {n} in the shop's ledger.",
                script="lookup.py",
                examples=[f"where is order {n}", {"text": f"order {n}"}],
            ),
            encoding="utf-8",
        )
    (tmp_path / "bad_example.md").write_text(
        definition(schema=TEXT_SCHEMA, script="lookup.py", examples=[{"text": 7}]), encoding="utf-8"
    )
    work = counted(monkeypatch)
    gw, tools = gateway_over(tmp_path)
    assert [p.message for p in tools.problems] == [
        "example 0 does not validate: text: Must be of type string (1 error(s))"
    ]
    found = call(gw, "discover_tools", {"query": "look up order 1234 in the ledger"})
    assert names(found)[:1] == ["lookup_order_1234"]
    assert gw.catalog.by_name["lookup_order_7"].required_names() == ("text",)
    assert work == {}
    assert call(gw, "get_tool_schema", {"tool_name": "lookup_order_7"})["parameters"]["required"] == ["text"]
    assert work == {"models": 1, "schemas": 1}

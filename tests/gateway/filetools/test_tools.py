"""Definition files: what loads, and how a broken one is reported (file and line) and skipped."""

from __future__ import annotations

import re
import sys
import textwrap
from pathlib import Path

import pytest

from gateway import Catalog, Principal, ToolContext, render, run_sync
from gateway.filetools.definition import FileToolDefinition, load_definition
from gateway.filetools.directories import FileTools, scaffold

from ..filetools_support import ECHO, TEXT_SCHEMA, call, definition, gateway_over, invoke, write_tool

GOOD = textwrap.dedent(
    """\
    ---
    name: weather_lookup
    category: weather
    action: get
    summary: Look up the current weather in a city.
    read_only: true
    concurrency_safe: true
    roles: [staff]
    agents: [planner]
    timeout: 5
    tags: [forecast]
    examples:
      - city: Berlin
    ---
    Look up the current weather in one city.

    Returns the temperature in degrees Celsius and a one-word sky.

    ```json schema
    {
      "type": "object",
      "properties": {
        "city": {"type": "string", "description": "The city, e.g. 'Berlin'."}
      },
      "required": ["city"]
    }
    ```
    """
)


def test_a_definition_and_its_script_make_a_tool(tmp_path: Path) -> None:
    (tmp_path / "weather_lookup.md").write_text(GOOD)
    script = tmp_path / "weather_lookup.sh"
    script.write_text("#!/bin/sh\necho '{}'\n")
    script.chmod(0o755)

    d, problems = load_definition(tmp_path / "weather_lookup.md")

    assert problems == []
    assert isinstance(d, FileToolDefinition)
    assert (d.name, d.category, d.action, d.verb) == ("weather_lookup", "weather", "read", "get")
    assert d.summary == "Look up the current weather in a city."
    assert d.description == (
        "Look up the current weather in one city.\n\n"
        "Returns the temperature in degrees Celsius and a one-word sky."
    )
    assert d.flags == ("read_only", "concurrency_safe")
    assert d.audience.roles == {"staff"} and d.audience.agents == {"planner"}
    assert d.script == script and d.tags == ("forecast",)
    assert d.json_schema == {
        "type": "object",
        "properties": {"city": {"type": "string", "description": "The city, e.g. 'Berlin'."}},
        "required": ["city"],
        "additionalProperties": False,
    }


def test_the_schema_may_be_given_in_the_front_matter_instead(tmp_path: Path) -> None:
    write_tool(tmp_path, "echo_text", parameters=TEXT_SCHEMA)
    d, problems = load_definition(tmp_path / "echo_text.md")
    assert problems == [] and d is not None
    assert d.json_schema["properties"] == TEXT_SCHEMA["properties"]


def test_a_tool_without_a_schema_takes_no_parameters(tmp_path: Path) -> None:
    write_tool(tmp_path, "ping")
    d, _ = load_definition(tmp_path / "ping.md")
    assert d is not None
    assert d.json_schema == {"type": "object", "properties": {}, "additionalProperties": False}


def test_flags_fail_closed_a_tool_that_does_not_say_read_only_is_destructive(tmp_path: Path) -> None:
    write_tool(tmp_path, "wipe", read_only=False, action="delete")
    gw, _ = gateway_over(tmp_path)
    assert gw.catalog.by_name["wipe"].flags == ("destructive",)
    assert invoke(gw, "wipe", {})["status"] == "confirmation_required"


def _problem(tmp_path: Path, text: str, script: str | None = ECHO) -> tuple[int | None, str]:
    (tmp_path / "bad_tool.md").write_text(textwrap.dedent(text))
    if script is not None:
        (tmp_path / "bad_tool.py").write_text(script)
        (tmp_path / "bad_tool.py").chmod(0o755)
    d, problems = load_definition(tmp_path / "bad_tool.md")
    assert d is None and len(problems) == 1, problems
    assert problems[0].path == tmp_path / "bad_tool.md"
    return problems[0].line, problems[0].message


FRONT = "---\ncategory: test\naction: read\nsummary: Broken.\nread_only: true\n"


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("Just some notes.\n", 1, "must start with a front-matter block"),
        ("---\ncategory: test\n", 1, "not closed"),
        (FRONT + "tags: [a, b\n---\nBody.\n", 7, "front matter is not valid YAML"),
        ("---\n- a list\n---\nBody.\n", 2, "must be a mapping"),
        (FRONT + "colour: red\n---\nBody.\n", 6, "colour: unknown key"),
        (FRONT + "category: again\n---\nBody.\n", 6, "category: set twice"),
        ("---\naction: read\nsummary: S.\n---\nBody.\n", 2, "category: Field required"),
        (FRONT.replace("action: read", "action: frobnicate") + "---\nBody.\n", 3, "not a known verb"),
        (FRONT.replace("category: test", "category: Test Tools") + "---\nBody.\n", 2, "must match"),
        (FRONT + "name: other_name\n---\nBody.\n", 6, "must match the file name"),
        (FRONT + "timeout: -1\n---\nBody.\n", 6, "timeout: Input should be greater than 0"),
        (FRONT + "destructive: true\n---\nBody.\n", 6, "cannot be both read_only and destructive"),
        (FRONT + "env: [NOT-A-NAME]\n---\nBody.\n", 6, "is not a variable name"),
        (FRONT + "---\n\n", 7, "the Markdown body"),
        (FRONT + "---\nBody.\n\n```json schema\n{\n  oops\n}\n```\n", 11, "not valid JSON"),
        (FRONT + '---\nBody.\n\n```json schema\n{"type": "array"}\n```\n', 9, "type 'object' at the root"),
        (
            FRONT
            + '---\nBody.\n\n```json schema\n{"type": "object", "properties": {"q": {"type": "string"}}}\n```\n',
            9,
            "parameter 'q' has no description",
        ),
        (
            FRONT + '---\nBody.\n```json schema\n{"type": "object", "additionalProperties": true}\n```\n',
            8,
            "additionalProperties must be false",
        ),
        (
            FRONT + "parameters: {type: object}\n---\nBody.\n```json schema\n{}\n```\n",
            9,
            "give the parameters once",
        ),
        (FRONT + "examples:\n  - {unknown: 1}\n---\nBody.\n", 6, "example 0 does not validate"),
        (FRONT + "script: ../elsewhere.sh\n---\nBody.\n", 6, "inside the definition's directory"),
    ],
)
def test_a_broken_definition_is_reported_with_its_line(
    tmp_path: Path, text: str, line: int, message: str
) -> None:
    found_line, found = _problem(tmp_path, text)
    assert message in found and found_line == line


def test_a_definition_without_a_script_says_how_to_add_one(tmp_path: Path) -> None:
    line, message = _problem(tmp_path, FRONT + "---\nBody.\n", script=None)
    assert line == 2 and message.startswith("no script: put an executable bad_tool.sh")


def test_a_script_that_is_not_executable_is_reported(tmp_path: Path) -> None:
    (tmp_path / "bad_tool.py").write_text(ECHO)
    (tmp_path / "bad_tool.py").chmod(0o644)
    line, message = _problem(tmp_path, FRONT + "---\nBody.\n", script=None)
    assert (line, message) == (2, "script bad_tool.py is not executable (chmod +x it)")


def test_two_candidate_scripts_are_ambiguous(tmp_path: Path) -> None:
    (tmp_path / "bad_tool.sh").write_text("#!/bin/sh\n")
    (tmp_path / "bad_tool.sh").chmod(0o755)
    _, message = _problem(tmp_path, FRONT + "---\nBody.\n")
    assert (
        message == "more than one script could be meant (bad_tool.py, bad_tool.sh); name one with `script:`"
    )


def test_script_names_the_implementation_explicitly(tmp_path: Path) -> None:
    write_tool(tmp_path / "bin", "run")
    (tmp_path / "named.md").write_text(definition(script="bin/run.py"))
    d, problems = load_definition(tmp_path / "named.md")
    assert problems == [] and d is not None and d.script == tmp_path / "bin" / "run.py"


def test_a_directory_with_broken_definitions_still_serves_the_good_ones(tmp_path: Path) -> None:
    write_tool(tmp_path, "good_one", parameters=TEXT_SCHEMA)
    write_tool(tmp_path, "good_two")
    (tmp_path / "broken.md").write_text(FRONT.replace("read_only: true", "read_only: maybe") + "---\nBody.\n")
    (tmp_path / "README.md").write_text("# Our tools\n")  # documentation, not a definition
    (tmp_path / "_draft.md").write_text("work in progress")

    gw, tools = gateway_over(tmp_path)

    assert tools.names == ("good_one", "good_two")
    assert [str(p) for p in tools.problems] == [
        f"{tmp_path / 'broken.md'}:5: read_only: Input should be a valid boolean"
    ]
    assert invoke(gw, "good_one", {"text": "hi"})["stdin"] == {"text": "hi"}


def test_a_name_in_an_earlier_directory_wins_and_the_clash_is_reported(tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    write_tool(first, "shared_tool", summary="From the first directory.")
    write_tool(second, "shared_tool", summary="From the second directory.")
    gw, tools = gateway_over(first, second)
    assert gw.catalog.by_name["shared_tool"].summary == "From the first directory."
    assert [p.message for p in tools.problems] == [
        f"shared_tool is defined in {first / 'shared_tool.md'} too; that one is kept"
    ]


def test_a_tool_named_like_one_of_another_catalog_is_skipped(tmp_path: Path, catalog: Catalog) -> None:
    write_tool(tmp_path, "notes_create")
    tools = FileTools([tmp_path], catalog=catalog)
    tools.refresh()
    assert tools.names == ()
    assert tools.problems[0].message == "another catalog has a tool named notes_create; this one is skipped"
    assert catalog.by_name["notes_create"].category == "notes"


def test_a_missing_tools_directory_is_reported_not_fatal(tmp_path: Path) -> None:
    _, tools = gateway_over(tmp_path / "nowhere")
    assert [p.message for p in tools.problems] == ["tools directory does not exist"]


def test_a_scaffolded_tool_loads_and_runs(tmp_path: Path) -> None:
    definition, script = scaffold(tmp_path / "tools", "echo_back")
    assert definition.name == "echo_back.md" and script.name == "echo_back.sh"
    gw, tools = gateway_over(tmp_path / "tools")
    assert tools.problems == () and tools.names == ("echo_back",)
    example = call(gw, "get_tool_schema", {"tool_name": "echo_back"})["example"]
    assert call(gw, "invoke_tool", example) == "You said: hello"


def test_the_documented_example_loads_and_runs_as_documented(tmp_path: Path) -> None:
    doc = (Path(__file__).resolve().parents[3] / "docs/file-tools.md").read_text()
    files = re.findall(r"<!-- file: (\S+) -->\n(`{3,})\w*\n(.*?)\n\2\n", doc, re.S)
    assert [name for name, _, _ in files] == ["ticket_lookup.md", "ticket_lookup.py", "tickets.json"]
    for name, _, text in files:
        (tmp_path / name).write_text(text + "\n")
    script = tmp_path / "ticket_lookup.py"
    # The interpreter the tests run with, wherever python3 is on this machine.
    script.write_text(script.read_text().replace("#!/usr/bin/env python3", f"#!{sys.executable}", 1))
    script.chmod(0o755)
    gw, tools = gateway_over(tmp_path)
    assert tools.problems == () and tools.names == ("ticket_lookup",)
    sam = Principal("sam", frozenset({"support"}))

    assert invoke(gw, "ticket_lookup", {"ticket_id": "T-1001"}, sam) == {
        "title": "Printer on fire",
        "status": "open",
        "customer": "ACME",
    }
    assert invoke(gw, "ticket_lookup", {"ticket_id": "T-9"}, sam)["error"]["code"] == "not_found"
    assert invoke(gw, "ticket_lookup", {"ticket_id": "T-1001"})["error"]["code"] == "unknown_tool"
    bad = run_sync(gw.invoke("ticket_lookup", {"ticket_id": "1001"}, context=ToolContext(principal=sam)))
    assert f"```json\n{render(bad)}\n```" in doc


def test_windows_line_endings_and_a_byte_order_mark_are_fine(tmp_path: Path) -> None:
    write_tool(tmp_path, "from_windows")
    schema = {"type": "object", "properties": {"q": {"type": "string", "description": "Q."}}}
    text = definition(schema=schema).replace("\n", "\r\n")
    (tmp_path / "from_windows.md").write_bytes(b"\xef\xbb\xbf" + text.encode())
    d, problems = load_definition(tmp_path / "from_windows.md")
    assert problems == [] and d is not None and list(d.json_schema["properties"]) == ["q"]
    assert d.description == "A tool for tests."

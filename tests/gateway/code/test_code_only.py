"""`[code] only`: run_code offered alone; programs find, read and call tools through the same gate."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from syrupy.assertion import SnapshotAssertion

from gateway import Catalog, Gateway, MemoryAuditLog, ToolContext, render, run_sync
from gateway.adapters import anthropic
from gateway.cli.parser import build_parser, settings_from
from gateway.code import Programs, enable, text
from gateway.context import ToolResult
from gateway.errors import ConfigError
from gateway.settings.loading import load_settings
from gateway.settings.sections import CodeSettings

from ..sample_tools import ALL_TOOLS, Calls

ONLY = CodeSettings(enabled=True, only=True)


@pytest.fixture
def alone(calls: Calls) -> Iterator[tuple[Gateway, MemoryAuditLog, Programs]]:
    audit = MemoryAuditLog()
    gw = Gateway(Catalog(ALL_TOOLS), audit=audit)
    programs = enable(gw, ONLY)
    yield gw, audit, programs
    programs.close()


def call(gw: Gateway, name: str, arguments: dict[str, Any]) -> ToolResult:
    return run_sync(gw.call(name, arguments, ToolContext(call_id="prog1", session_id="s1")))


@pytest.mark.filterwarnings("ignore:open_binary:DeprecationWarning")  # bpe-openai reading its vocabulary
def test_with_only_run_code_is_the_one_meta_tool_and_its_description_stands_alone_within_290_tokens(
    alone: tuple[Gateway, MemoryAuditLog, Programs], snapshot: SnapshotAssertion
) -> None:
    from bpe_openai import get_encoding

    gw, _, _ = alone
    definitions = anthropic.tools(gw.meta)
    assert [d["name"] for d in definitions] == ["run_code"]
    assert definitions[0]["description"] == text.ALONE_DESCRIPTION
    assert definitions == snapshot
    assert len(get_encoding("cl100k_base").encode(json.dumps(definitions))) <= 290


@pytest.mark.parametrize("name", ["invoke_tool", "discover_tools", "get_tool_schema", "notes_create"])
def test_a_meta_tool_that_is_not_offered_is_an_unknown_tool_that_points_to_run_code(
    alone: tuple[Gateway, MemoryAuditLog, Programs], calls: Calls, name: str, snapshot: SnapshotAssertion
) -> None:
    gw, _, _ = alone
    arguments = {"tool_name": "notes_create", "parameters": {"title": "milk"}}
    result = call(gw, name, arguments)
    assert result.error is not None and result.error.code == "unknown_tool"
    assert result.error.suggestions == ("run_code",)
    assert render(result) == snapshot
    assert calls.names() == []


def test_a_program_finds_reads_and_calls_a_tool_through_the_gateway(
    alone: tuple[Gateway, MemoryAuditLog, Programs], calls: Calls
) -> None:
    gw, audit, _ = alone
    code = (
        "found = discover('create a note', limit=1)['tools']\n"
        "doc = schema('notes_create')\n"
        "[found[0].split('(')[0], 'title' in doc, call('notes_create', title='milk')['id']]"
    )
    result = call(gw, "run_code", {"code": code})
    assert result.ok, result
    assert result.output == {"result": ["notes_create", True, "n1"], "calls": 1}
    assert calls.names() == ["notes_create"]
    assert [(e.tool, e.call_id, e.outcome) for e in audit.records if e.tool == "notes_create"] == [
        ("notes_create", "prog1.3", "attempt"),
        ("notes_create", "prog1.3", "executed"),
    ]


def test_a_destructive_call_in_a_program_pauses_it_and_it_resumes_once_approved(
    alone: tuple[Gateway, MemoryAuditLog, Programs], calls: Calls
) -> None:
    gw, _, _ = alone
    paused = call(gw, "run_code", {"code": "call('notes_delete', note_id='n1')['deleted']"})
    assert paused.status == "confirmation_required" and paused.pending is not None
    assert calls.names() == []
    assert gw.approve(paused.pending.pending_id) is not None
    done = call(gw, "run_code", {"confirmation": paused.pending.pending_id})
    assert done.output == {"result": "n1", "calls": 1}
    assert calls.names() == ["notes_delete"]


def test_only_without_enabled_is_a_clear_error_in_the_settings_file(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text("[code]\nonly = true\n")
    with pytest.raises(ConfigError, match=r"code: only = true offers run_code alone.*set enabled = true"):
        load_settings(path, environ={})


def test_code_only_on_the_command_line_turns_code_mode_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "config.toml").write_text("")
    monkeypatch.setenv("GATEWAY_CONFIG", str(tmp_path / "config.toml"))
    for command in ("serve", "chat"):
        args = build_parser().parse_args([command, "--code-only", "--data-dir", str(tmp_path)])
        code = settings_from(args).code
        assert code.enabled and code.only, command
    plain = settings_from(build_parser().parse_args(["serve", "--code", "--data-dir", str(tmp_path)]))
    assert plain.code.enabled and not plain.code.only

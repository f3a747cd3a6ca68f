"""Text from a model or a client never reaches the operator's terminal raw.

A model's discover query and a destructive call's parameters travel the real path (a gateway
over the data directory's SQLite stores), then the real `gateway` program prints them: escape
sequences, C1 controls and bidi overrides come out as visible escapes, never as themselves.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gateway import ToolContext, run_sync
from gateway.gate.stores import resolve_auto_store
from gateway.runtime import open_gateway
from gateway.settings.loading import load_settings

from .adapters.mcp_server_support import ROOT, server_env

# Clear the screen, set the window title, reverse the text that follows, an 8-bit CSI, a bell.
HOSTILE = "notes \x1b[2J\x1b]0;owned\x07 \u202eetalpmet \x9b31m\x7f done"
RAW = ("\x1b", "\x07", "\u202e", "\x9b", "\x7f")


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(f'catalogs = ["tests.gateway.sample_tools:provide"]\ndata_dir = "{tmp_path}"\n')
    return path


def gateway_program(config: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gateway.cli", *argv, "--config", str(config)],
        env=server_env(),
        cwd=ROOT,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
        check=False,
    )


def assert_no_raw_controls(text: str) -> None:
    assert [c for c in RAW if c in text] == []


def test_a_hostile_discover_query_is_printed_escaped_by_usage_stats(config: Path) -> None:
    settings = load_settings(config, environ={})
    with open_gateway(settings) as gw:
        found = run_sync(gw.call("discover_tools", {"query": HOSTILE}, ToolContext(session_id="s1")))
        assert found.ok

    stats = gateway_program(config, "usage", "stats")
    assert stats.returncode == 0, stats.stderr
    assert_no_raw_controls(stats.stdout + stats.stderr)
    assert "\\x1b[2J\\x1b]0;owned\\x07 \\u202eetalpmet \\x9b31m\\x7f done" in stats.stdout

    as_json = gateway_program(config, "usage", "stats", "--json")
    assert_no_raw_controls(as_json.stdout)
    queries = [
        item["query"]
        for key in ("found_nothing", "never_followed")
        for item in json.loads(as_json.stdout)[key]
    ]
    assert HOSTILE in queries  # the data itself is kept; only its printing is neutralised


def test_a_held_call_with_hostile_parameters_is_listed_escaped_by_pending_and_approve(config: Path) -> None:
    settings = resolve_auto_store(load_settings(config, environ={}), shared=True)
    with open_gateway(settings) as gw:
        held = run_sync(
            gw.call("invoke_tool", {"tool_name": "notes_delete", "parameters": {"note_id": HOSTILE}})
        )
        assert held.pending is not None
        pending_id = held.pending.pending_id

    listed = gateway_program(config, "pending")
    assert listed.returncode == 0, listed.stderr
    assert_no_raw_controls(listed.stdout)
    assert pending_id in listed.stdout and "\\u202eetalpmet \\x9b31m" in listed.stdout
    assert_no_raw_controls(gateway_program(config, "pending", "--json").stdout)
    approved = gateway_program(config, "approve", pending_id)
    assert approved.returncode == 0, approved.stderr
    assert_no_raw_controls(approved.stdout)
    assert "\\u202e" in approved.stdout


def test_a_description_from_outside_is_printed_escaped_by_discover(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(f'catalogs = ["tests.gateway.terminal_tools:provide"]\ndata_dir = "{tmp_path}"\n')

    found = gateway_program(config, "discover", "peek at a file")
    assert found.returncode == 0, found.stderr
    assert_no_raw_controls(found.stdout)
    assert "files_peek" in found.stdout and "\\u202eexe.txt\\x1b[2J" in found.stdout
    assert_no_raw_controls(gateway_program(config, "schema", "files_peek").stdout)

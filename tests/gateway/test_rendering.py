"""The exact text the model sees, pinned by snapshots (update with `pytest --snapshot-update`)."""

from __future__ import annotations

import typing
from typing import Any

import pytest
from syrupy.assertion import SnapshotAssertion

from gateway import Catalog, ConfirmationGate, Gateway, render, run_sync
from gateway.errors import FailureCode
from gateway.rendering import NEXT_STEPS

from .sample_tools import ALL_TOOLS

CASES: dict[str, tuple[str, Any]] = {
    "wrong_type": (
        "invoke_tool",
        {"tool_name": "notes_create", "parameters": {"title": "x", "priority": "3"}},
    ),
    "missing_and_extra": ("invoke_tool", {"tool_name": "notes_create", "parameters": {"titel": "x"}}),
    "malformed_json": ("invoke_tool", {"tool_name": "notes_create", "parameters": '{"title": '}),
    "too_deep": (
        "invoke_tool",
        {"tool_name": "notes_create", "parameters": '{"title": ' + "[" * 5000 + "]" * 5000 + "}"},
    ),
    "unknown_tool": ("invoke_tool", {"tool_name": "notes_remove", "parameters": {}}),
    "unknown_tool_no_match": ("get_tool_schema", {"tool_name": "zzz"}),
    "direct_call": ("notes_create", {"title": "x"}),
    "meta_tool_bad_arguments": ("discover_tools", {"limit": 500, "sort": "name"}),
    "internal_failure": ("invoke_tool", {"tool_name": "files_boom", "parameters": {"path": "/x"}}),
    "permission_denied": ("invoke_tool", {"tool_name": "files_read", "parameters": {"path": "/etc"}}),
    "forged_confirmation": (
        "invoke_tool",
        {"tool_name": "notes_delete", "parameters": {"note_id": "n1"}, "confirmation": "forged"},
    ),
    "nothing_matched": ("discover_tools", {"query": "quantum xylophone"}),
    "a_page": ("discover_tools", {"query": "note", "limit": 2}),
    "a_schema": ("get_tool_schema", {"tool_name": "notes_create"}),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_model_facing_text(case: str, snapshot: SnapshotAssertion) -> None:
    gw = Gateway(Catalog(ALL_TOOLS))
    tool, args = CASES[case]
    assert render(run_sync(gw.call(tool, args))) == snapshot


def test_confirmation_required_text(snapshot: SnapshotAssertion) -> None:
    gate = ConfirmationGate()
    gw = Gateway(Catalog(ALL_TOOLS), gate=gate)
    result = run_sync(gw.call("invoke_tool", {"tool_name": "notes_delete", "parameters": {"note_id": "n1"}}))
    assert result.pending is not None
    assert render(result).replace(result.pending.pending_id, "<pending_id>") == snapshot


def test_oversized_output_is_cut_with_a_next_step() -> None:
    import json

    from gateway import ToolResult

    text = render(ToolResult("t", "c", "ok", output="x" * 100_000))
    out = json.loads(text)
    assert out["truncated"] is True and out["original_chars"] > 100_000 and "next_step" in out


def test_too_large_to_confirm_text(snapshot: SnapshotAssertion) -> None:
    gw = Gateway(Catalog(ALL_TOOLS), gate=ConfirmationGate(max_preview_bytes=256))
    result = run_sync(gw.invoke("notes_delete", {"note_id": "x" * 300}))
    assert render(result) == snapshot


def test_rate_limited_text(snapshot: SnapshotAssertion) -> None:
    from gateway.limits import Limit, Limiter

    limiter = Limiter(
        [Limit("notes-per-minute", quota=1, window_seconds=60, tools=("notes_*",))], clock=lambda: 90.0
    )
    gw = Gateway(Catalog(ALL_TOOLS), limits=limiter)
    call = {"tool_name": "notes_search", "parameters": {"title": "x"}}
    assert run_sync(gw.call("invoke_tool", call)).ok
    assert render(run_sync(gw.call("invoke_tool", call))) == snapshot


def test_every_failure_code_has_its_own_next_step() -> None:
    assert set(NEXT_STEPS) == set(typing.get_args(FailureCode))
    assert len(set(NEXT_STEPS.values())) == len(NEXT_STEPS)

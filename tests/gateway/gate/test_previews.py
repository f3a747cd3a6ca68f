"""What the person approving a destructive call reads: every value in full, control characters
escaped, ids resolved by the tool's `describe` hook, and a refusal rather than a cut past the limit."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from gateway import Catalog, ConfirmationGate, Gateway, MemoryAuditLog, ToolContext, run_sync, tool
from gateway.cli import main
from gateway.runtime import open_gateway
from gateway.settings.loading import load_settings

from ..sample_tools import ALL_TOOLS, NoteId

TAIL = "and forward every invoice to mallory@example.net"
PADDED = "n1" + " " * 400 + TAIL
"""A value padded so that whatever comes after the first hundred characters goes unseen when cut."""
HOSTILE = "n1\x1b[2K\r\x9b1A\u202eevil\u200b"
"""Terminal escapes (ESC, C1 CSI), a carriage return, a bidirectional override and a zero-width space."""


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(
        f'catalogs = ["tests.gateway.sample_tools:provide"]\ndata_dir = "{tmp_path}"\n'
        f'\n[confirmation]\nstore = "sqlite"\nsecret = "{"s" * 40}"\n'
    )
    monkeypatch.setenv("GATEWAY_CONFIG", str(path))
    return path


def _unwrapped(lines: list[str], first: str, indent: str = "    ") -> str:
    """A wrapped block read back: the first line after `first`, the rest after the indent."""
    assert lines[0].startswith(first) and all(line.startswith(indent) for line in lines[1:])
    return lines[0][len(first) :] + "".join(line[len(indent) :] for line in lines[1:])


def test_the_terminal_prompt_of_gateway_invoke_shows_a_padded_value_in_full(
    config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["invoke", "notes_delete", json.dumps({"note_id": PADDED}), "--yes"])
    err = capsys.readouterr().err.splitlines()
    assert code == 0
    block = err[: err.index("gateway: approved by --yes.")]
    shown = _unwrapped(block, "gateway: confirmation needed: ", "gateway:   ")
    assert shown == f"Delete a note for good [notes_delete] with note_id={json.dumps(PADDED)}"


def test_gateway_pending_shows_every_value_in_full_with_control_characters_escaped(
    config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with open_gateway(load_settings(config, environ={})) as serving:
        asked = run_sync(serving.invoke("notes_delete", {"note_id": HOSTILE + PADDED}))
        assert asked.pending is not None
        assert main(["pending"]) == 0
        out = capsys.readouterr().out
    assert not any(ch in out for ch in "\x1b\x9b\r\u202e\u200b")
    lines = out.splitlines()
    assert lines[0].startswith(f"{asked.pending.pending_id}  notes_delete")
    shown = _unwrapped(lines[1:], "    ")
    assert shown == asked.pending.preview  # exactly the preview bound to the pending call
    assert shown.endswith(f'with note_id="n1\\u001b[2K\\r\\x9b1A\\u202eevil\\u200bn1{" " * 400}{TAIL}"')


def test_a_preview_past_the_limit_is_refused_rather_than_cut_and_nothing_waits() -> None:
    audit = MemoryAuditLog()
    gw = Gateway(Catalog(ALL_TOOLS), audit=audit, gate=ConfirmationGate(max_preview_bytes=1000))
    result = run_sync(gw.invoke("notes_delete", {"note_id": "x" * 1000}))
    assert result.status == "error" and result.error is not None
    assert result.error.code == "too_large_to_confirm"
    assert result.error.message.startswith(
        "The parameters of notes_delete are too large to be shown to the person who approves it"
    )
    assert gw.gate.pending() == []
    assert [r.outcome for r in audit.records] == ["refused"]
    fits = run_sync(gw.invoke("notes_delete", {"note_id": "x" * 900}))
    assert fits.status == "confirmation_required"


def _note_tools(describe: Any) -> Catalog:
    @tool(category="notes", action="delete", describe=describe)
    def notes_drop(params: NoteId) -> dict[str, Any]:
        """Delete a note for good."""
        return {"deleted": params.note_id}

    return Catalog([notes_drop])


def test_a_describe_hook_tells_the_approver_what_an_id_is() -> None:
    seen: list[tuple[BaseModel, ToolContext]] = []

    def describe(params: NoteId, ctx: ToolContext) -> list[str]:
        seen.append((params, ctx))
        return [f'note {params.note_id} is "Groceries\x1b[31m"', "created Mon 1 Dec 2025"]

    gw = Gateway(_note_tools(describe))
    context = ToolContext(session_id="s1")
    result = run_sync(gw.invoke("notes_drop", {"note_id": "n7"}, context=context))
    assert result.pending is not None
    assert result.pending.preview == (
        'Delete a note for good [notes_drop] with note_id="n7" '
        '(note n7 is "Groceries\\x1b[31m"; created Mon 1 Dec 2025)'
    )
    assert [(p.model_dump(), c.session_id) for p, c in seen] == [({"note_id": "n7"}, "s1")]


def test_an_async_describe_hook_is_awaited() -> None:
    async def describe(params: NoteId, ctx: ToolContext) -> list[str]:
        return [f"note {params.note_id} is Groceries"]

    result = run_sync(Gateway(_note_tools(describe)).invoke("notes_drop", {"note_id": "n7"}))
    assert result.pending is not None and result.pending.preview.endswith("(note n7 is Groceries)")


def test_a_failing_describe_hook_leaves_the_raw_id_and_the_call_still_waits_for_approval(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def describe(params: NoteId, ctx: ToolContext) -> list[str]:
        raise LookupError("no such note")

    result = run_sync(Gateway(_note_tools(describe)).invoke("notes_drop", {"note_id": "n7"}))
    assert result.status == "confirmation_required" and result.pending is not None
    assert result.pending.preview == 'Delete a note for good [notes_drop] with note_id="n7"'
    assert "the describe hook of notes_drop failed" in caplog.text


def test_a_redeemed_call_does_not_run_the_describe_hook_again() -> None:
    asked: list[str] = []

    def describe(params: NoteId, ctx: ToolContext) -> list[str]:
        asked.append(params.note_id)
        return ["note n7"]

    gw = Gateway(_note_tools(describe))
    pending = run_sync(gw.invoke("notes_drop", {"note_id": "n7"})).pending
    assert pending is not None and gw.approve(pending.pending_id) is not None
    done = run_sync(gw.invoke("notes_drop", {"note_id": "n7"}, confirmation=pending.pending_id))
    assert done.status == "ok" and asked == ["n7"]

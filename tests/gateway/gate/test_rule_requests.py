"""A model asking for a standing approval: held like any destructive call, the person reads the rule
it would make, and only their approval makes it, for the caller alone; never a rule about rules.

Through `open_gateway` with `[confirmation] rule_requests = true` and `Gateway.call("invoke_tool")`,
the model's path.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gateway import Gateway, ToolContext, run_sync
from gateway.context import Principal, ToolResult
from gateway.errors import UserError
from gateway.gate.confirmation import DecidedBy
from gateway.gate.rules import REQUEST_TOOL
from gateway.runtime import open_gateway
from gateway.settings.loading import load_settings

from ..sample_tools import Calls

ASK = {
    "tool": "notes_delete",
    "minutes": 20,
    "one_of": {"note_id": ["n1", "n2"]},
    "reason": "to clear the two notes you named without asking twice",
}


@pytest.fixture
def gw(tmp_path: Path) -> Iterator[Gateway]:
    settings = load_settings(
        overrides={
            "catalogs": ["tests.gateway.sample_tools:provide"],
            "data_dir": str(tmp_path),
            "confirmation.rule_requests": True,
            "search.dense.mode": "off",
        },
        environ={},
    )
    with open_gateway(settings) as opened:
        yield opened


def invoke(gw: Gateway, tool: str, parameters: dict[str, Any], **more: Any) -> ToolResult:
    ctx = ToolContext(principal=Principal(more.pop("principal", "alice")), session_id="s1")
    return run_sync(gw.call("invoke_tool", {"tool_name": tool, "parameters": parameters, **more}, ctx))


def test_a_request_is_held_and_the_person_reads_the_rule_it_would_make(gw: Gateway, calls: Calls) -> None:
    held = invoke(gw, REQUEST_TOOL, ASK)
    assert held.status == "confirmation_required" and held.pending is not None
    assert 'it would let through notes_delete for alice where note_id one of "n1", "n2" for 20 minutes' in (
        held.pending.preview
    )
    assert "reason: to clear the two notes" in held.pending.preview
    assert gw.gate.rules() == []  # asking grants nothing
    redeemed = invoke(gw, REQUEST_TOOL, ASK, confirmation=held.pending.pending_id)
    assert redeemed.error is not None and redeemed.error.code == "confirmation_pending"
    assert gw.gate.rules() == []


def test_approved_by_a_person_it_makes_the_rule_for_the_caller_alone(gw: Gateway, calls: Calls) -> None:
    held = invoke(gw, REQUEST_TOOL, ASK)
    assert held.pending is not None
    gw.approve(held.pending.pending_id, decided_by=DecidedBy("console", "op"))
    made = invoke(gw, REQUEST_TOOL, ASK, confirmation=held.pending.pending_id)
    assert made.ok, made
    [rule] = gw.gate.rules()
    assert (rule.tool, rule.principal, rule.created_by["channel"]) == ("notes_delete", "alice", "request")
    assert invoke(gw, "notes_delete", {"note_id": "n1"}).ok
    assert invoke(gw, "notes_delete", {"note_id": "n3"}).status == "confirmation_required"
    assert invoke(gw, "notes_delete", {"note_id": "n2"}, principal="bob").status == "confirmation_required"
    assert calls.names() == ["notes_delete"]


def test_declined_no_rule_is_made(gw: Gateway) -> None:
    held = invoke(gw, REQUEST_TOOL, ASK)
    assert held.pending is not None
    gw.deny(held.pending.pending_id)
    refused = invoke(gw, REQUEST_TOOL, ASK, confirmation=held.pending.pending_id)
    assert refused.error is not None and refused.error.code == "declined"
    assert gw.gate.rules() == []


def test_a_request_no_person_could_approve_is_refused_before_anyone_is_asked(gw: Gateway) -> None:
    cases = {
        "a rule about rules": {**ASK, "tool": REQUEST_TOOL},
        "a tool that never asks": {**ASK, "tool": "notes_search"},
        "a tool that is not there": {**ASK, "tool": "notes_nuke"},
        "a parameter the tool has not": {**ASK, "equals": {"id": "n1"}},
    }
    for what, ask in cases.items():
        refused = invoke(gw, REQUEST_TOOL, ask)
        assert refused.error is not None and refused.error.code == "permission_denied", what
    for wider in ({**ASK, "principal": "bob"}, {**ASK, "minutes": 100_000}):  # another's, or too long
        refused = invoke(gw, REQUEST_TOOL, wider)
        assert refused.error is not None and refused.error.code == "invalid_arguments"
    assert gw.gate.pending() == [] and gw.gate.rules() == []


def test_no_standing_approval_ever_covers_the_request_tool(gw: Gateway) -> None:
    with pytest.raises(UserError, match="asked about at every call"):
        gw.add_rule(REQUEST_TOOL, principal="alice", expires_at=gw.gate.now() + 60)


def test_where_the_model_confirms_its_own_calls_it_cannot_ask_for_a_rule(tmp_path: Path) -> None:
    settings = load_settings(
        overrides={
            "catalogs": ["tests.gateway.sample_tools:provide"],
            "data_dir": str(tmp_path),
            "confirmation.rule_requests": True,
            "confirmation.mode": "model",
            "search.dense.mode": "off",
        },
        environ={},
    )
    with open_gateway(settings) as gw:
        refused = invoke(gw, REQUEST_TOOL, ASK)
        assert refused.error is not None and refused.error.code == "permission_denied"
        assert gw.gate.rules() == []

"""The confirmation gate: a destructive tool never runs on the model's word alone."""

from __future__ import annotations

import json
from typing import Any

import pytest

from gateway import (
    ApprovalRefused,
    Catalog,
    ConfirmationGate,
    DecidedBy,
    Gateway,
    MemoryAuditLog,
    PendingConfirmation,
    Policy,
    Principal,
    Rule,
    ToolContext,
    ToolResult,
    render,
)
from gateway import run_sync as run

from ..sample_tools import ALL_TOOLS, Calls

ANYONE = Principal()


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def invoke(
    gw: Gateway,
    tool: str,
    params: dict[str, Any],
    confirmation: str | None = None,
    principal: Principal = ANYONE,
) -> ToolResult:
    args: dict[str, Any] = {"tool_name": tool, "parameters": params}
    if confirmation is not None:
        args["confirmation"] = confirmation
    return run(gw.call("invoke_tool", args, ToolContext(principal=principal)))


def error_code(result: ToolResult) -> str:
    return str(json.loads(render(result))["error"]["code"])


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def gated(clock: Clock) -> Gateway:
    return Gateway(Catalog(ALL_TOOLS), gate=ConfirmationGate(clock=clock, ttl_seconds=60))


def test_without_approval_a_destructive_call_only_returns_a_pending_preview(
    gated: Gateway, calls: Calls
) -> None:
    result = invoke(gated, "notes_delete", {"note_id": "n1"})
    assert result.status == "confirmation_required" and calls == []
    shown = json.loads(render(result))
    assert shown["preview"] == 'Delete a note for good [notes_delete] with note_id="n1"'
    assert "ask them to approve" in shown["next_step"]


def test_the_model_resending_the_pending_id_is_not_consent(gated: Gateway, calls: Calls) -> None:
    pending = invoke(gated, "notes_delete", {"note_id": "n1"}).pending
    assert pending is not None
    result = invoke(gated, "notes_delete", {"note_id": "n1"}, confirmation=pending.pending_id)
    assert error_code(result) == "confirmation_pending" and calls == []


def test_host_approval_runs_exactly_the_approved_call_once(gated: Gateway, calls: Calls) -> None:
    pending = invoke(gated, "notes_delete", {"note_id": "n1"}).pending
    assert pending is not None and gated.approve(pending.pending_id) is not None
    assert invoke(gated, "notes_delete", {"note_id": "n1"}, confirmation=pending.pending_id).ok
    replay = invoke(gated, "notes_delete", {"note_id": "n1"}, confirmation=pending.pending_id)
    assert error_code(replay) == "confirmation_used"
    assert calls.names() == ["notes_delete"]


def test_a_changed_parameter_needs_a_new_approval(gated: Gateway, calls: Calls) -> None:
    pending = invoke(gated, "notes_delete", {"note_id": "n1"}).pending
    assert pending is not None
    gated.approve(pending.pending_id)
    result = invoke(gated, "notes_delete", {"note_id": "n2"}, confirmation=pending.pending_id)
    assert error_code(result) == "confirmation_mismatch" and calls == []


def test_an_approval_is_bound_to_the_principal(gated: Gateway, calls: Calls) -> None:
    pending = invoke(gated, "notes_delete", {"note_id": "n1"}, principal=Principal("alice")).pending
    assert pending is not None
    gated.approve(pending.pending_id)
    stolen = invoke(gated, "notes_delete", {"note_id": "n1"}, pending.pending_id, Principal("mallory"))
    assert error_code(stolen) == "confirmation_mismatch" and calls == []


def test_an_approval_for_one_tool_does_not_run_another(gated: Gateway, calls: Calls) -> None:
    pending = invoke(gated, "notes_delete", {"note_id": "n1"}).pending
    assert pending is not None
    gated.approve(pending.pending_id)
    result = invoke(gated, "notes_archive", {"note_id": "n1"}, confirmation=pending.pending_id)
    assert error_code(result) == "confirmation_mismatch" and calls == []


def test_an_expired_approval_is_refused(gated: Gateway, clock: Clock, calls: Calls) -> None:
    pending = invoke(gated, "notes_delete", {"note_id": "n1"}).pending
    assert pending is not None
    gated.approve(pending.pending_id)
    clock.now += 61
    result = invoke(gated, "notes_delete", {"note_id": "n1"}, confirmation=pending.pending_id)
    assert error_code(result) == "confirmation_expired" and calls == []


def test_approving_an_expired_pending_call_fails(gated: Gateway, clock: Clock) -> None:
    pending = invoke(gated, "notes_delete", {"note_id": "n1"}).pending
    assert pending is not None
    clock.now += 61
    assert gated.approve(pending.pending_id) is None


@pytest.mark.parametrize("forged", ["", "x", "0" * 22, "' OR 1=1 --", "pending_123"])
def test_a_forged_confirmation_is_refused(gated: Gateway, calls: Calls, forged: str) -> None:
    result = invoke(gated, "notes_delete", {"note_id": "n1"}, confirmation=forged)
    assert error_code(result) == "confirmation_invalid" and calls == []


def test_an_unclassified_tool_is_treated_as_destructive(gated: Gateway, calls: Calls) -> None:
    assert invoke(gated, "notes_archive", {"note_id": "n1"}).status == "confirmation_required"
    assert calls == []


def test_a_denied_tool_answers_as_unknown_even_with_a_valid_approval(clock: Clock, calls: Calls) -> None:
    gate = ConfirmationGate(clock=clock)
    open_gw = Gateway(Catalog(ALL_TOOLS), gate=gate)
    pending = invoke(open_gw, "notes_delete", {"note_id": "n1"}).pending
    assert pending is not None
    gate.approve(pending.pending_id)
    closed = Gateway(Catalog(ALL_TOOLS), gate=gate, policy=Policy((Rule("deny", names=("notes_delete",)),)))
    result = invoke(closed, "notes_delete", {"note_id": "n1"}, confirmation=pending.pending_id)
    assert error_code(result) == "unknown_tool" and calls == []


def test_a_host_approver_callback_decides_before_anything_runs(calls: Calls) -> None:
    seen: list[str] = []

    def approver(pending: Any) -> bool:
        seen.append(pending.preview)
        return bool(pending.parameters["note_id"] == "ok")

    gw = Gateway(Catalog(ALL_TOOLS), gate=ConfirmationGate(approver=approver))
    assert invoke(gw, "notes_delete", {"note_id": "ok"}).ok
    assert error_code(invoke(gw, "notes_delete", {"note_id": "no"})) == "declined"
    assert calls.names() == ["notes_delete"] and len(seen) == 2


def test_an_async_approver_is_awaited(calls: Calls) -> None:
    async def approver(pending: Any) -> bool:
        return True

    gw = Gateway(Catalog(ALL_TOOLS), gate=ConfirmationGate(approver=approver))
    assert invoke(gw, "notes_delete", {"note_id": "n1"}).ok


def test_model_mode_lets_the_model_confirm_by_resending_the_id(calls: Calls) -> None:
    gw = Gateway(Catalog(ALL_TOOLS), gate=ConfirmationGate("model"))
    pending = invoke(gw, "notes_delete", {"note_id": "n1"}).pending
    assert pending is not None and calls == []
    assert invoke(gw, "notes_delete", {"note_id": "n1"}, confirmation=pending.pending_id).ok
    changed = invoke(gw, "notes_delete", {"note_id": "n2"}, confirmation=pending.pending_id)
    assert error_code(changed) == "confirmation_mismatch"


def test_deny_mode_refuses_destructive_tools_and_still_runs_safe_ones(calls: Calls) -> None:
    gw = Gateway(Catalog(ALL_TOOLS), gate=ConfirmationGate("deny"))
    assert error_code(invoke(gw, "notes_delete", {"note_id": "n1"})) == "destructive_disabled"
    assert invoke(gw, "notes_search", {"title": "x"}).ok
    assert calls.names() == ["notes_search"]


def test_a_host_denial_declines_the_pending_call(gated: Gateway, calls: Calls) -> None:
    pending = invoke(gated, "notes_delete", {"note_id": "n1"}).pending
    assert pending is not None and gated.deny(pending.pending_id)
    result = invoke(gated, "notes_delete", {"note_id": "n1"}, confirmation=pending.pending_id)
    assert error_code(result) == "declined" and calls == []


def test_pending_lists_unexpired_calls_for_the_host(gated: Gateway, clock: Clock) -> None:
    invoke(gated, "notes_delete", {"note_id": "n1"})
    clock.now += 30
    invoke(gated, "notes_delete", {"note_id": "n2"})
    assert [p.parameters["note_id"] for p in gated.gate.pending()] == ["n1", "n2"]
    clock.now += 31
    assert [p.parameters["note_id"] for p in gated.gate.pending()] == ["n2"]


def test_an_approval_is_bound_to_the_agent_as_well(gated: Gateway, calls: Calls) -> None:
    planner = Principal("alice", agent="planner")
    pending = invoke(gated, "notes_delete", {"note_id": "n1"}, principal=planner).pending
    assert pending is not None
    gated.approve(pending.pending_id)
    other = invoke(
        gated, "notes_delete", {"note_id": "n1"}, pending.pending_id, Principal("alice", agent="mailer")
    )
    assert error_code(other) == "confirmation_mismatch" and calls == []


def test_an_approver_callback_of_a_channel_left_out_is_never_asked_and_the_call_waits(
    calls: Calls,
) -> None:
    asked: list[str] = []

    def approver(pending: PendingConfirmation) -> bool:
        asked.append(pending.pending_id)
        return True

    gate = ConfirmationGate(approver=approver, approvers=["console"])
    result = run(Gateway(Catalog(ALL_TOOLS), gate=gate).invoke("notes_delete", {"note_id": "n1"}))
    assert result.status == "confirmation_required" and asked == [] and calls == []


def test_a_host_approval_is_refused_when_the_host_may_not_approve_but_it_may_still_decline() -> None:
    audit = MemoryAuditLog()
    gw = Gateway(Catalog(ALL_TOOLS), audit=audit, gate=ConfirmationGate(approvers=["terminal"]))
    pending = run(gw.invoke("notes_delete", {"note_id": "n1"})).pending
    assert pending is not None
    with pytest.raises(ApprovalRefused, match=r"approvals from the host are not allowed here"):
        gw.approve(pending.pending_id)
    assert gw.approve(pending.pending_id, decided_by=DecidedBy("terminal", "ana")) is not None
    assert audit.records[-1].decided_by == {"channel": "terminal", "operator": "ana"}
    again = run(gw.invoke("notes_delete", {"note_id": "n1"})).pending
    assert again is not None and gw.deny(again.pending_id)
    assert audit.records[-1].outcome == "denied_by_host"
    assert audit.records[-1].decided_by == {"channel": "host", "operator": None}


def test_in_model_mode_the_audit_log_says_the_model_confirmed(calls: Calls) -> None:
    audit = MemoryAuditLog()
    gw = Gateway(Catalog(ALL_TOOLS), audit=audit, gate=ConfirmationGate("model"))
    pending = invoke(gw, "notes_delete", {"note_id": "n1"}).pending
    assert pending is not None
    assert invoke(gw, "notes_delete", {"note_id": "n1"}, confirmation=pending.pending_id).ok
    (approved,) = [r for r in audit.records if r.outcome == "approved"]
    assert approved.decided_by == {"channel": "model", "operator": "local"}

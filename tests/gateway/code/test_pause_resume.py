"""A destructive call pauses its program until a person decides; approval resumes it, a denial raises Declined."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from gateway import Catalog, ConfirmationGate, Gateway, MemoryAuditLog, ToolContext, render, run_sync
from gateway.code import Programs, enable
from gateway.context import Principal, ToolResult
from gateway.gate.confirmation import MemoryConfirmationStore
from gateway.settings.sections import CodeSettings

from ..sample_tools import ALL_TOOLS, Calls

CODE = CodeSettings(enabled=True)
DELETE_TWO = (
    "call('notes_create', {'title': 'first'})\n"
    "a = call('notes_delete', {'note_id': 'n1'})\n"
    "b = call('notes_delete', {'note_id': 'n2'})\n"
    "[a['deleted'], b['deleted']]"
)


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def coded(calls: Calls, clock: Clock) -> Iterator[tuple[Gateway, MemoryAuditLog]]:
    audit = MemoryAuditLog()
    gw = Gateway(Catalog(ALL_TOOLS), audit=audit, gate=ConfirmationGate(clock=clock, ttl_seconds=60))
    programs = enable(gw, CODE)
    yield gw, audit
    programs.close()


def run(
    gw: Gateway, code: str | None = None, *, confirmation: str | None = None, principal: str = "local"
) -> ToolResult:
    arguments: dict[str, Any] = {"code": code} if code is not None else {}
    if confirmation is not None:
        arguments["confirmation"] = confirmation
    ctx = ToolContext(principal=Principal(principal), call_id="prog", session_id="s1")
    return run_sync(gw.call("run_code", arguments, ctx))


def test_a_destructive_call_pauses_the_program_with_that_calls_full_preview(coded: Any, calls: Calls) -> None:
    gw, _ = coded
    paused = run(gw, DELETE_TWO)
    assert paused.status == "confirmation_required" and paused.pending is not None
    assert paused.pending.tool == "notes_delete" and paused.pending.parameters == {"note_id": "n1"}
    assert paused.pending.preview == 'Delete a note for good [notes_delete] with note_id="n1"'
    assert calls.names() == ["notes_create"]  # what came before ran; the paused call has not
    assert "call run_code again with confirmation set to the pending_id" in render(paused)


def test_once_approved_the_same_program_resumes_and_the_call_runs_exactly_as_approved(
    coded: Any, calls: Calls
) -> None:
    gw, audit = coded
    first = run(gw, DELETE_TWO)
    assert first.pending is not None
    gw.approve(first.pending.pending_id)
    second = run(gw, DELETE_TWO, confirmation=first.pending.pending_id)
    assert second.status == "confirmation_required" and second.pending is not None
    assert second.pending.parameters == {"note_id": "n2"}
    gw.approve(second.pending.pending_id)
    done = run(gw, confirmation=second.pending.pending_id)  # the code need not be sent again
    assert done.ok and done.output == {"result": ["n1", "n2"], "calls": 3}
    assert calls == [
        ("notes_create", {"title": "first", "priority": 1, "color": None}),
        ("notes_delete", {"note_id": "n1"}),
        ("notes_delete", {"note_id": "n2"}),
    ]
    approved = [
        (r.call_id, r.outcome) for r in audit.records if r.tool == "notes_delete" and r.call_id == "prog.2"
    ]
    assert approved == [
        ("prog.2", "pending_confirmation"),
        ("prog.2", "approved"),
        ("prog.2", "attempt"),
        ("prog.2", "executed"),
    ]


def test_resuming_before_anyone_approved_leaves_the_program_paused(coded: Any, calls: Calls) -> None:
    gw, _ = coded
    paused = run(gw, "call('notes_delete', {'note_id': 'n1'})\n'done'")
    assert paused.pending is not None
    early = run(gw, confirmation=paused.pending.pending_id)
    assert early.error is not None and early.error.code == "confirmation_pending"
    assert "still paused" in early.error.message
    gw.approve(paused.pending.pending_id)
    later = run(gw, confirmation=paused.pending.pending_id)
    assert later.ok and later.output["result"] == "done"
    assert calls.names() == ["notes_delete"]


def test_a_denial_raises_declined_inside_the_program_which_may_handle_it(coded: Any, calls: Calls) -> None:
    gw, _ = coded
    code = (
        "try:\n    call('notes_delete', {'note_id': 'n1'})\n    r = 'deleted'\n"
        "except Declined as e:\n    r = 'kept: ' + str(e)\nr"
    )
    paused = run(gw, code)
    assert paused.pending is not None
    gw.deny(paused.pending.pending_id)
    result = run(gw, code, confirmation=paused.pending.pending_id)
    assert result.ok and result.output["result"] == "kept: notes_delete: the user declined this call."
    assert calls.names() == []


def test_an_unhandled_denial_ends_the_program_naming_the_line(coded: Any) -> None:
    gw, _ = coded
    paused = run(gw, "x = 1\ncall('notes_delete', {'note_id': 'n1'})\n")
    assert paused.pending is not None
    gw.deny(paused.pending.pending_id)
    result = run(gw, confirmation=paused.pending.pending_id)
    assert result.error is not None and result.error.code == "program_error"
    assert result.error.message.startswith("Line 2 `call('notes_delete', {'note_id': 'n1'})`: Declined:")


def test_a_paused_program_expires_with_its_confirmation(coded: Any, calls: Calls, clock: Clock) -> None:
    gw, _ = coded
    paused = run(gw, "call('notes_delete', {'note_id': 'n1'})")
    assert paused.pending is not None
    gw.approve(paused.pending.pending_id)
    clock.now += 61
    result = run(gw, confirmation=paused.pending.pending_id)
    assert result.error is not None and result.error.code == "program_expired"
    assert calls.names() == []
    again = run(gw, confirmation=paused.pending.pending_id)
    assert again.error is not None and again.error.code in ("program_not_paused", "program_ended")


def test_only_the_principal_that_ran_a_program_can_resume_it(coded: Any, calls: Calls) -> None:
    gw, _ = coded
    paused = run(gw, "call('notes_delete', {'note_id': 'n1'})", principal="alice")
    assert paused.pending is not None
    gw.approve(paused.pending.pending_id)
    stolen = run(gw, confirmation=paused.pending.pending_id, principal="mallory")
    assert stolen.error is not None and stolen.error.code == "program_not_paused"
    assert calls.names() == []
    assert run(gw, confirmation=paused.pending.pending_id, principal="alice").ok


def test_its_own_principal_with_other_roles_cannot_resume_a_program_and_is_told_why(
    coded: Any, calls: Calls
) -> None:
    gw, _ = coded
    admin = ToolContext(principal=Principal("alice", frozenset({"admin"})), call_id="prog", session_id="s1")
    paused = run_sync(gw.call("run_code", {"code": "call('notes_delete', {'note_id': 'n1'})"}, admin))
    assert paused.pending is not None
    gw.approve(paused.pending.pending_id)
    resume = {"confirmation": paused.pending.pending_id}
    for changed in (
        Principal("alice"),
        Principal("alice", frozenset({"admin"}), toolsets=frozenset({"notes"})),
    ):
        refused = run_sync(gw.call("run_code", resume, ToolContext(principal=changed, session_id="s1")))
        assert refused.error is not None and refused.error.code == "program_principal_changed"
    assert calls.names() == []
    assert run_sync(gw.call("run_code", resume, admin)).ok  # as it ran: it resumes


def test_resuming_with_other_code_is_refused_and_the_program_stays_paused(coded: Any, calls: Calls) -> None:
    gw, _ = coded
    paused = run(gw, "call('notes_delete', {'note_id': 'n1'})")
    assert paused.pending is not None
    gw.approve(paused.pending.pending_id)
    other = run(gw, "call('notes_delete', {'note_id': 'n9'})", confirmation=paused.pending.pending_id)
    assert other.error is not None and other.error.code == "confirmation_mismatch"
    assert run(gw, confirmation=paused.pending.pending_id).ok
    assert calls == [("notes_delete", {"note_id": "n1"})]


def test_a_restart_ends_a_paused_program_and_says_so(calls: Calls) -> None:
    store = MemoryConfirmationStore()  # shared, as a SQLite or Redis store outlives the process
    before = Gateway(Catalog(ALL_TOOLS), gate=ConfirmationGate(store=store))
    programs = enable(before, CODE)
    paused = run(before, "call('notes_delete', {'note_id': 'n1'})")
    assert paused.pending is not None
    programs.close()  # the gateway stops
    after = Gateway(Catalog(ALL_TOOLS), gate=ConfirmationGate(store=store))
    restarted = enable(after, CODE)
    try:
        assert after.approve(paused.pending.pending_id) is None  # stopping declined its call
        result = run(after, confirmation=paused.pending.pending_id)
        assert result.error is not None and result.error.code == "program_ended"
        assert "a restart ended it" in result.error.message
        assert calls.names() == []
        unknown = run(after, confirmation="0" * 32)
        assert unknown.error is not None and unknown.error.code == "program_not_paused"
    finally:
        restarted.close()


def test_with_an_approver_the_call_runs_without_pausing(calls: Calls) -> None:
    asked: list[str] = []

    def approver(pending: Any) -> bool:
        asked.append(pending.preview)
        return bool(pending.parameters["note_id"] == "n1")

    gw = Gateway(Catalog(ALL_TOOLS), gate=ConfirmationGate(approver=approver))
    programs: Programs = enable(gw, CODE)
    try:
        code = (
            "out = []\nfor n in ['n1', 'n2']:\n    try:\n        call('notes_delete', {'note_id': n})\n"
            "        out.append(n)\n    except Declined:\n        out.append('no ' + n)\nout"
        )
        result = run(gw, code)
        assert result.ok and result.output["result"] == ["n1", "no n2"]
        assert len(asked) == 2 and calls.names() == ["notes_delete"]
    finally:
        programs.close()


def test_what_a_program_printed_before_it_paused_comes_back_with_its_result(coded: Any) -> None:
    gw, _ = coded
    paused = run(gw, "print('before')\ncall('notes_delete', {'note_id': 'n1'})\nprint('after')\n1")
    assert paused.pending is not None
    gw.approve(paused.pending.pending_id)
    done = run(gw, confirmation=paused.pending.pending_id)
    assert done.ok and done.output == {"result": 1, "printed": "before\nafter\n", "calls": 1}


def paused_with(max_paused_mb: int, clock: Clock) -> tuple[Gateway, Any]:
    gw = Gateway(Catalog(ALL_TOOLS), gate=ConfirmationGate(clock=clock, ttl_seconds=60))
    return gw, enable(gw, CodeSettings(enabled=True, max_paused_mb=max_paused_mb))


HOLDING_MB = "x = 'a' * {size}\ncall('notes_delete', {{'note_id': '{note}'}})\nlen(x)"


def test_a_program_whose_state_is_too_large_to_keep_ends_and_its_call_is_declined(
    calls: Calls, clock: Clock
) -> None:
    gw, programs = paused_with(1, clock)
    try:
        result = run(gw, HOLDING_MB.format(size=1_500_000, note="n1"))
        assert result.error is not None and result.error.code == "program_limit"
        assert "too large to keep while it waits for an approval" in result.error.message
        assert gw.gate.pending() == [] and programs.paused() == []
        assert [r.state for r in gw.gate.store.pending()] == []  # declined: no one can approve it
    finally:
        programs.close()
    assert calls.names() == []


def test_the_principal_holding_the_most_bytes_of_paused_programs_ends_its_own_first(
    calls: Calls, clock: Clock
) -> None:
    gw, programs = paused_with(2, clock)
    try:
        hers = run(gw, HOLDING_MB.format(size=10, note="a"), principal="alice")
        first = run(gw, HOLDING_MB.format(size=1_200_000, note="m1"), principal="mallory")
        second = run(gw, HOLDING_MB.format(size=1_200_000, note="m2"), principal="mallory")
        assert hers.pending and first.pending and second.pending
        assert programs.paused() == [hers.pending.pending_id, second.pending.pending_id]
        gw.approve(hers.pending.pending_id)
        done = run(gw, confirmation=hers.pending.pending_id, principal="alice")
        assert done.ok and done.output["result"] == 10
    finally:
        programs.close()
    assert calls.names() == ["notes_delete"]

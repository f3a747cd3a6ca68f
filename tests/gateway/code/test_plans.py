"""A program's writes drawn as a plan, approved as one set (all, some or none), then run for real.

Through `Gateway.call("run_code", ...)`, the path a model's call takes: the plan is drawn with no
write run, a person decides with `Gateway.approve` / `Gateway.deny` (as the console, `gateway
approve` and elicitation do), and the program runs again with the plan's id, its approved writes
let through once each, a declined one raising `Declined`, any other write asked about as a single
call. The attacker's paths are here too: a forged or replayed id, another principal, other code,
changed roles, a changed tool.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import BaseModel

from gateway import (
    PARAMS_CONFIG,
    Catalog,
    ConfirmationGate,
    Gateway,
    MemoryAuditLog,
    ToolContext,
    render,
    run_sync,
    tool,
)
from gateway.code import enable
from gateway.context import Principal, ToolResult
from gateway.gate.confirmation import DecidedBy, MemoryConfirmationStore
from gateway.settings.sections import CodeSettings

from ..sample_tools import ALL_TOOLS, Calls, NoteId

CODE = CodeSettings(enabled=True)
INBOX: list[str] = []
"""What `inbox_list` reads: the test changes it between drawing a plan and running it."""


class NoParams(BaseModel):
    model_config = PARAMS_CONFIG


@tool(category="inbox", action="list", read_only=True)
def inbox_list(params: NoParams) -> list[str]:
    """List the notes waiting in the inbox."""
    return list(INBOX)


DELETE_INBOX = (
    "ids = call('inbox_list')\n"
    "done = []\n"
    "for i in ids:\n"
    "    try:\n"
    "        call('notes_delete', {'note_id': i})\n"
    "        done.append(i)\n"
    "    except Declined:\n"
    "        done.append('kept ' + i)\n"
    "call('notes_archive', {'note_id': 'box'})\n"
    "done"
)


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


SECRET = b"s" * 32


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def store() -> MemoryConfirmationStore:
    return MemoryConfirmationStore()


def _gateway(
    store: MemoryConfirmationStore, clock: Clock, audit: MemoryAuditLog, tools: list[Any] | None = None
) -> Gateway:
    gate = ConfirmationGate(clock=clock, ttl_seconds=60, store=store, secret=SECRET)
    return Gateway(Catalog(tools or [*ALL_TOOLS, inbox_list]), audit=audit, gate=gate)


@pytest.fixture
def coded(
    calls: Calls, clock: Clock, store: MemoryConfirmationStore
) -> Iterator[tuple[Gateway, MemoryAuditLog]]:
    INBOX[:] = ["n1", "n2", "n3"]
    audit = MemoryAuditLog()
    gw = _gateway(store, clock, audit)
    programs = enable(gw, CODE)
    yield gw, audit
    programs.close()


def run(
    gw: Gateway,
    code: str | None = None,
    *,
    plan: bool = False,
    confirmation: str | None = None,
    principal: Principal | None = None,
) -> ToolResult:
    arguments: dict[str, Any] = {"code": code} if code is not None else {}
    if plan:
        arguments["plan"] = True
    if confirmation is not None:
        arguments["confirmation"] = confirmation
    ctx = ToolContext(principal=principal or Principal("alice"), call_id="prog", session_id="s1")
    return run_sync(gw.call("run_code", arguments, ctx))


def drawn(gw: Gateway, code: str = DELETE_INBOX) -> str:
    plan = run(gw, code, plan=True)
    assert plan.status == "confirmation_required" and plan.pending is not None, plan
    return plan.pending.pending_id


def test_a_plan_runs_the_reads_holds_every_write_and_shows_them_all_at_once(coded: Any, calls: Calls) -> None:
    gw, audit = coded
    plan = run(gw, DELETE_INBOX, plan=True)
    assert calls == []  # no write ran (inbox_list records nothing)
    assert plan.status == "confirmation_required" and plan.pending is not None
    assert plan.pending.tool == "run_code" and plan.pending.principal == "alice"
    assert plan.pending.preview.split("\n") == [
        "A program's plan of 4 writes: 3 x notes_delete, 1 x notes_archive.",
        "notes_delete (3):",
        '  1. Delete a note for good [notes_delete] with note_id="n1"',
        '  2. Delete a note for good [notes_delete] with note_id="n2"',
        '  3. Delete a note for good [notes_delete] with note_id="n3"',
        "notes_archive (1):",
        '  4. Archive a note (says nothing about its flags: treated as destructive) [notes_archive] with note_id="box"',
    ]
    assert "approve it: all of its writes, some, or none" in render(plan)
    waiting = gw.gate.pending()
    assert len(waiting) == 5  # the plan and its four writes, each with its own full preview
    assert {p.plan for p in waiting} == {plan.pending.pending_id}
    held = [(r.call_id, r.tool, r.outcome) for r in audit.records]
    assert held[-1] == ("prog", "run_code", "pending_confirmation")
    assert ("prog.2", "notes_delete", "pending_confirmation") in held


def test_approved_whole_the_program_runs_for_real_and_each_write_once(coded: Any, calls: Calls) -> None:
    gw, audit = coded
    plan_id = drawn(gw)
    decided = gw.approve(plan_id, decided_by=DecidedBy("console", "op"))
    assert decided is not None and decided.pending_id == plan_id
    done = run(gw, confirmation=plan_id)  # no code: the plan's own program runs
    assert done.ok, done
    assert done.output == {"result": ["n1", "n2", "n3"], "calls": 5, "plan": {"pending_id": plan_id}}
    assert calls.names() == ["notes_delete"] * 3 + ["notes_archive"]
    decisions = [r for r in audit.records if r.outcome == "approved_by_host"]
    assert [(r.tool, r.plan) for r in decisions] == [("run_code", plan_id)] + [
        ("notes_delete", plan_id)
    ] * 3 + [("notes_archive", plan_id)]
    assert all(r.decided_by == {"channel": "console", "operator": "op"} for r in decisions)
    ran = [r for r in audit.records if r.outcome == "approved"]
    assert len(ran) == 4 and all(
        r.decided_by == {"channel": "plan", "operator": None, "plan": plan_id} for r in ran
    )
    again = run(gw, confirmation=plan_id)
    assert again.error is not None and again.error.code == "confirmation_used"
    assert calls.names() == ["notes_delete"] * 3 + ["notes_archive"]  # nothing ran twice


def test_approved_in_part_the_left_out_writes_raise_declined_in_the_program(coded: Any, calls: Calls) -> None:
    gw, audit = coded
    plan_id = drawn(gw)
    gw.approve(plan_id, only=[1, 3, 4])
    done = run(gw, confirmation=plan_id)
    assert done.ok and done.output["result"] == ["n1", "kept n2", "n3"]
    assert calls.names() == ["notes_delete", "notes_delete", "notes_archive"]
    assert ("notes_delete", {"note_id": "n2"}) not in calls
    denied = [(r.tool, r.plan, r.params) for r in audit.records if r.outcome == "denied_by_host"]
    assert denied == [("notes_delete", plan_id, {"note_id": "n2"})]


def test_a_write_outside_the_approved_set_is_asked_about_as_a_single_call(coded: Any, calls: Calls) -> None:
    gw, _ = coded
    plan_id = drawn(gw)
    gw.approve(plan_id)
    INBOX.append("n4")  # the program will now make a write nobody saw
    paused = run(gw, confirmation=plan_id)
    assert paused.status == "confirmation_required" and paused.pending is not None
    assert paused.pending.parameters == {"note_id": "n4"} and paused.pending.plan is None
    assert calls.names() == ["notes_delete"] * 3  # the approved writes before it ran
    gw.approve(paused.pending.pending_id)
    done = run(gw, confirmation=paused.pending.pending_id)
    assert done.ok and done.output["result"] == ["n1", "n2", "n3", "n4"]
    assert calls.names() == ["notes_delete"] * 4 + ["notes_archive"]


def test_an_approved_write_the_program_no_longer_makes_is_reported_and_never_runs(
    coded: Any, calls: Calls
) -> None:
    gw, _ = coded
    plan_id = drawn(gw)
    gw.approve(plan_id)
    INBOX.remove("n2")
    done = run(gw, confirmation=plan_id)
    assert done.ok and done.output["result"] == ["n1", "n3"]
    assert done.output["plan"]["not_made"] == ['Delete a note for good [notes_delete] with note_id="n2"']
    assert ("notes_delete", {"note_id": "n2"}) not in calls
    [write] = [r for r in gw.gate.store.pending() if r.pending.parameters == {"note_id": "n2"}] or [None]
    assert write is None  # declined, not left approved


def test_declined_whole_nothing_runs(coded: Any, calls: Calls) -> None:
    gw, audit = coded
    plan_id = drawn(gw)
    assert gw.deny(plan_id, decided_by=DecidedBy("terminal", "op"))
    refused = run(gw, confirmation=plan_id)
    assert refused.error is not None and refused.error.code == "declined"
    assert calls == []
    assert [r.outcome for r in audit.records if r.outcome.endswith("_by_host")] == ["denied_by_host"] * 5


def test_before_anyone_decided_the_plan_waits(coded: Any, calls: Calls) -> None:
    gw, _ = coded
    plan_id = drawn(gw)
    early = run(gw, confirmation=plan_id)
    assert early.error is not None and early.error.code == "confirmation_pending"
    gw.approve(plan_id)
    assert run(gw, confirmation=plan_id).ok


def test_a_program_that_needs_a_writes_result_stops_there_and_asks_for_the_rest_as_single_calls(
    coded: Any, calls: Calls
) -> None:
    gw, _ = coded
    code = (
        "r = call('notes_delete', {'note_id': 'n1'})\ncall('notes_archive', {'note_id': r['deleted']})\n'ok'"
    )
    plan = run(gw, code, plan=True)
    assert plan.pending is not None
    assert plan.pending.preview.startswith("A program's plan of 1 write: 1 x notes_delete.")
    assert "The program stopped after these writes (Line 2" in plan.pending.preview
    gw.approve(plan.pending.pending_id)
    paused = run(gw, confirmation=plan.pending.pending_id)
    assert paused.pending is not None and paused.pending.parameters == {"note_id": "n1"}
    assert paused.pending.tool == "notes_archive"  # with the real result of the write before it
    gw.approve(paused.pending.pending_id)
    assert run(gw, confirmation=paused.pending.pending_id).output["result"] == "ok"
    assert calls.names() == ["notes_delete", "notes_archive"]


def test_a_program_with_no_write_answers_as_it_would_without_a_plan(coded: Any, calls: Calls) -> None:
    gw, _ = coded
    done = run(gw, "len(call('inbox_list'))", plan=True)
    assert done.ok and done.output == {"result": 3, "calls": 1}


def test_an_approver_that_answers_at_once_is_asked_once_for_the_whole_plan(
    calls: Calls, clock: Clock, store: MemoryConfirmationStore
) -> None:
    INBOX[:] = ["n1", "n2", "n3"]
    asked: list[str] = []

    def approver(pending: Any) -> bool:
        asked.append(pending.preview.split("\n")[0])
        return True

    gw = Gateway(
        Catalog([*ALL_TOOLS, inbox_list]),
        gate=ConfirmationGate(clock=clock, store=store, approver=approver),
    )
    programs = enable(gw, CODE)
    try:
        done = run(gw, DELETE_INBOX, plan=True)
    finally:
        programs.close()
    assert asked == ["A program's plan of 4 writes: 3 x notes_delete, 1 x notes_archive."]
    assert done.ok and done.output["result"] == ["n1", "n2", "n3"]
    assert calls.names() == ["notes_delete"] * 3 + ["notes_archive"]


# -- the attacker's paths ------------------------------------------------------------------------


def test_a_forged_plan_id_or_a_writes_own_id_runs_nothing(coded: Any, calls: Calls) -> None:
    gw, _ = coded
    plan_id = drawn(gw)
    gw.approve(plan_id)
    forged = run(gw, confirmation="ab" * 16)
    assert forged.error is not None and forged.error.code == "program_not_paused"
    write = next(
        r.pending for r in _records(gw) if r.pending.plan == plan_id and r.pending.pending_id != plan_id
    )
    direct = run_sync(
        gw.call(
            "invoke_tool",
            {"tool_name": write.tool, "parameters": dict(write.parameters), "confirmation": write.pending_id},
            ToolContext(principal=Principal("alice")),
        )
    )
    assert direct.error is not None and direct.error.code == "confirmation_invalid"
    assert "plan" in direct.error.message
    assert calls == []
    assert run(gw, confirmation=plan_id).ok  # the approval is intact for its own program


def test_another_principal_or_other_roles_cannot_use_the_approval(coded: Any, calls: Calls) -> None:
    gw, _ = coded
    plan_id = drawn(gw)
    gw.approve(plan_id)
    for other in (
        Principal("mallory"),
        Principal("alice", roles=frozenset({"admin"})),
        Principal("alice", agent="x"),
    ):
        refused = run(gw, confirmation=plan_id, principal=other)
        assert refused.error is not None and refused.error.code == "plan_changed", other
    assert calls == []
    assert run(gw, confirmation=plan_id).ok  # its own principal, as it was: the plan still holds


def test_other_code_with_the_plans_id_is_refused(coded: Any, calls: Calls) -> None:
    gw, _ = coded
    plan_id = drawn(gw)
    gw.approve(plan_id)
    wider = "call('notes_delete', {'note_id': 'everything'})"
    refused = run(gw, wider, confirmation=plan_id)
    assert refused.error is not None and refused.error.code == "confirmation_mismatch"
    assert calls == []


def test_a_tool_changed_since_the_plan_was_drawn_voids_the_approval(
    coded: Any, calls: Calls, clock: Clock, store: MemoryConfirmationStore
) -> None:
    gw, _ = coded
    plan_id = drawn(gw)
    gw.approve(plan_id)

    @tool(category="notes", action="delete", name="notes_delete")
    def changed(params: NoteId) -> dict[str, Any]:
        """Delete a note and every note linked to it."""
        return {}

    tools = [changed if t.__name__ == "notes_delete" else t for t in ALL_TOOLS]
    replica = _gateway(store, clock, MemoryAuditLog(), [*tools, inbox_list])  # same store and secret
    programs = enable(replica, CODE)
    try:
        refused = run(replica, confirmation=plan_id)
    finally:
        programs.close()
    assert refused.error is not None and refused.error.code == "plan_changed"
    assert calls == []


def test_a_plan_expires_like_a_confirmation(coded: Any, calls: Calls, clock: Clock) -> None:
    gw, _ = coded
    plan_id = drawn(gw)
    gw.approve(plan_id)
    clock.now += 61
    expired = run(gw, confirmation=plan_id)
    assert expired.error is not None and expired.error.code == "confirmation_expired"
    assert calls == []


def test_only_names_writes_of_the_plan_and_only_plans(coded: Any) -> None:
    gw, _ = coded
    plan_id = drawn(gw)
    with pytest.raises(Exception, match="there is no write 9"):
        gw.approve(plan_id, only=[1, 9])
    assert len(gw.gate.pending()) == 5  # nothing was decided
    single = run(gw, "call('notes_delete', {'note_id': 'n9'})")
    assert single.pending is not None
    with pytest.raises(Exception, match="one call, not a plan"):
        gw.approve(single.pending.pending_id, only=[1])


def test_the_credential_that_drew_a_plan_cannot_approve_it(coded: Any) -> None:
    gw, _ = coded
    plan_id = drawn(gw)
    with pytest.raises(Exception, match="alice made this call"):
        gw.approve(plan_id, decided_by=DecidedBy("console", "alice", credential="alice"))
    assert len(gw.gate.pending()) == 5


def _records(gw: Gateway) -> list[Any]:
    store = gw.gate.store
    assert isinstance(store, MemoryConfirmationStore)
    return list(store._records.values())


def test_a_write_that_needs_no_approval_is_held_too_and_runs_only_if_approved(
    coded: Any, calls: Calls
) -> None:
    gw, _ = coded
    code = (
        "try:\n"
        "    call('notes_create', {'title': 'draft'})\n"
        "    made = 'made'\n"
        "except Declined:\n"
        "    made = 'not made'\n"
        "call('notes_delete', {'note_id': 'n1'})\n"
        "made"
    )
    plan = run(gw, code, plan=True)
    assert plan.pending is not None and calls == []  # nothing changed while the person reads it
    assert plan.pending.preview.startswith(
        "A program's plan of 2 writes: 1 x notes_create, 1 x notes_delete."
    )
    gw.approve(plan.pending.pending_id, only=[2])
    done = run(gw, confirmation=plan.pending.pending_id)
    assert done.ok and done.output["result"] == "not made"
    assert calls.names() == ["notes_delete"]


def test_an_approved_write_made_after_a_later_one_ran_is_asked_about_as_a_single_call(
    coded: Any, calls: Calls
) -> None:
    gw, _ = coded
    plan_id = drawn(gw)
    gw.approve(plan_id)
    INBOX.reverse()  # the real run makes the same writes in another order
    paused = run(gw, confirmation=plan_id)
    assert paused.status == "confirmation_required" and paused.pending is not None
    assert paused.pending.parameters == {"note_id": "n2"} and paused.pending.plan is None
    assert calls == [("notes_delete", {"note_id": "n3"})]


def test_one_write_of_a_plan_is_never_decided_on_its_own_nor_a_plan_approved_with_none(coded: Any) -> None:
    gw, _ = coded
    plan_id = drawn(gw)
    write = next(
        r.pending for r in _records(gw) if r.pending.plan == plan_id and r.pending.pending_id != plan_id
    )
    with pytest.raises(Exception, match="one write of the plan"):
        gw.approve(write.pending_id)
    with pytest.raises(Exception, match="one write of the plan"):
        gw.deny(write.pending_id)
    with pytest.raises(Exception, match="approve at least one write"):
        gw.approve(plan_id, only=[])
    assert len(gw.gate.pending()) == 5


def test_an_approved_write_not_made_has_its_audit_line(coded: Any, calls: Calls) -> None:
    gw, audit = coded
    plan_id = drawn(gw)
    gw.approve(plan_id)
    INBOX.remove("n3")
    assert run(gw, confirmation=plan_id).ok
    [line] = [r for r in audit.records if r.error_code == "not_made"]
    assert (line.tool, line.outcome, line.params, line.plan) == (
        "notes_delete",
        "refused",
        {"note_id": "n3"},
        plan_id,
    )

"""A paused program that ends before it resumes declines its call, and the audit log says why."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gateway import Catalog, ConfirmationGate, Gateway, MemoryAuditLog, ToolContext, run_sync
from gateway.audit import AuditRecord
from gateway.code import Programs, enable
from gateway.context import Principal, ToolResult
from gateway.gate.confirmation import ConfirmationStore
from gateway.gate.stores import SqliteConfirmationStore
from gateway.settings.sections import CodeSettings

from ..sample_tools import ALL_TOOLS, Calls
from .test_pause_resume import HOLDING_MB, Clock

DELETE = "call('notes_delete', {{'note_id': '{note}'}})"


@pytest.fixture
def clock() -> Clock:
    return Clock()


class Coded:
    def __init__(self, clock: Clock, store: ConfirmationStore | None = None, **code: Any) -> None:
        self.audit = MemoryAuditLog()
        stored: dict[str, Any] = {"store": store} if store else {}
        gate = ConfirmationGate(clock=clock, ttl_seconds=60, **stored)
        self.gw = Gateway(Catalog(ALL_TOOLS), audit=self.audit, gate=gate)
        self.programs: Programs = enable(self.gw, CodeSettings(enabled=True, **code))
        self.runs = 0

    def run(
        self, code: str | None = None, *, confirmation: str | None = None, who: str = "local"
    ) -> ToolResult:
        self.runs += 1
        arguments: dict[str, Any] = {"code": code} if code is not None else {}
        if confirmation is not None:
            arguments["confirmation"] = confirmation
        ctx = ToolContext(principal=Principal(who), call_id=f"prog{self.runs}", session_id="s1")
        return run_sync(self.gw.call("run_code", arguments, ctx))

    def pause(self, note: str, who: str = "local") -> str:
        result = self.run(DELETE.format(note=note), who=who)
        assert result.pending is not None
        return result.pending.pending_id

    def ended(self) -> list[tuple[str, str, str | None, str, Any]]:
        """(call id, outcome, error code, principal, parameters) of each refused notes_delete line."""
        return [_line(r) for r in self.audit.records if r.tool == "notes_delete" and r.outcome == "refused"]


def _line(r: AuditRecord) -> tuple[str, str, str | None, str, Any]:
    return (r.call_id, r.outcome, r.error_code, r.principal, r.params)


@pytest.fixture
def coded(clock: Clock) -> Iterator[Coded]:
    made = Coded(clock, max_paused=2)
    yield made
    made.programs.close()


def test_an_expired_paused_program_resumed_declines_its_call_with_an_audit_line(
    coded: Coded, clock: Clock, calls: Calls
) -> None:
    pending = coded.pause("n1")
    coded.gw.approve(pending)
    clock.now += 61
    result = coded.run(confirmation=pending)
    assert result.error is not None and result.error.code == "program_expired"
    assert coded.ended() == [("prog1.1", "refused", "confirmation_expired", "local", {"note_id": "n1"})]
    assert coded.gw.gate.store.get(pending).state == "denied"  # type: ignore[union-attr]
    assert calls.names() == []


def test_an_expired_paused_program_found_by_the_next_pause_is_audited_as_expired(
    coded: Coded, clock: Clock
) -> None:
    first = coded.pause("n1")
    clock.now += 61
    coded.pause("n2")
    assert coded.ended() == [("prog1.1", "refused", "confirmation_expired", "local", {"note_id": "n1"})]
    assert first not in coded.programs.paused()


def test_a_program_ended_for_room_under_max_paused_leaves_an_audit_line_saying_so(coded: Coded) -> None:
    coded.pause("a", who="alice")
    oldest = coded.pause("m1", who="mallory")
    coded.pause("m2", who="mallory")
    assert coded.ended() == [("prog2.1", "refused", "max_paused", "mallory", {"note_id": "m1"})]
    assert coded.gw.approve(oldest) is None  # declined: no one can approve it now


def test_an_approved_call_of_a_program_ended_for_room_is_declined_too(coded: Coded, calls: Calls) -> None:
    coded.pause("a", who="alice")
    oldest = coded.pause("m1", who="mallory")
    assert coded.gw.approve(oldest) is not None
    coded.pause("m2", who="mallory")
    assert coded.ended() == [("prog2.1", "refused", "max_paused", "mallory", {"note_id": "m1"})]
    again = run_sync(
        coded.gw.invoke(
            "notes_delete",
            {"note_id": "m1"},
            confirmation=oldest,
            context=ToolContext(principal=Principal("mallory")),
        )
    )
    assert again.error is not None and again.error.code == "declined"  # the program's end said so
    assert calls.names() == []


def test_a_program_ended_for_room_under_max_paused_mb_leaves_an_audit_line_saying_so(clock: Clock) -> None:
    made = Coded(clock, max_paused_mb=2)
    try:
        made.run(HOLDING_MB.format(size=10, note="a"), who="alice")
        made.run(HOLDING_MB.format(size=1_200_000, note="m1"), who="mallory")
        made.run(HOLDING_MB.format(size=1_200_000, note="m2"), who="mallory")
        assert made.ended() == [("prog2.1", "refused", "max_paused_mb", "mallory", {"note_id": "m1"})]
    finally:
        made.programs.close()


def test_a_program_whose_state_is_too_large_to_keep_leaves_an_audit_line_for_its_call(clock: Clock) -> None:
    made = Coded(clock, max_paused_mb=1)
    try:
        result = made.run(HOLDING_MB.format(size=1_500_000, note="n1"))
        assert result.error is not None and result.error.code == "program_limit"
        assert made.ended() == [("prog1.1", "refused", "max_paused_mb", "local", {"note_id": "n1"})]
    finally:
        made.programs.close()


def test_stopping_the_gateway_declines_each_paused_call_with_an_audit_line_saying_why(
    clock: Clock,
) -> None:
    made = Coded(clock)
    made.pause("n1")
    made.pause("n2")
    clock.now += 61
    made.pause("n3")  # the two before it expired, noticed now
    made.pause("n4")
    made.programs.close()
    assert [(call_id, code) for call_id, _, code, _, _ in made.ended()] == [
        ("prog1.1", "confirmation_expired"),
        ("prog2.1", "confirmation_expired"),
        ("prog3.1", "gateway_stopping"),
        ("prog4.1", "gateway_stopping"),
    ]


def test_a_call_a_person_declined_gets_no_second_line_when_its_program_ends(
    coded: Coded, clock: Clock
) -> None:
    pending = coded.pause("n1")
    coded.gw.deny(pending)
    coded.programs.close()
    outcomes = [r.outcome for r in coded.audit.records if r.tool == "notes_delete"]
    assert outcomes == ["pending_confirmation", "denied_by_host"]


def test_programs_ended_for_room_are_declined_even_when_marking_the_new_pause_fails(
    clock: Clock, tmp_path: Path
) -> None:
    """A shared store that cannot mark a pause (its holders' directory cannot be made) loses no decline."""
    store = SqliteConfirmationStore(tmp_path / "confirmations.sqlite3", clock=clock)
    (tmp_path / "confirmations.sqlite3.holders").write_text("in the way")
    made = Coded(clock, store, max_paused=1)
    try:
        assert made.run(DELETE.format(note="n1")).error is not None  # its pause could not be marked
        first = made.programs.paused()
        assert len(first) == 1
        made.run(DELETE.format(note="n2"))
        assert made.ended() == [("prog1.1", "refused", "max_paused", "local", {"note_id": "n1"})]
        assert store.get(first[0]).state == "denied"  # type: ignore[union-attr]
    finally:
        made.programs.close()
        store.close()

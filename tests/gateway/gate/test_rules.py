"""Standing approvals: a person's rule lets a tool's calls through, within its constraints, for its
principal, until it expires or is revoked; never for an always-confirmed tool, never wider.

Through `Gateway.call("invoke_tool", ...)`, the model's path; the rules are made with
`Gateway.add_rule`, as the console and `gateway rules add` do.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gateway import Catalog, ConfirmationGate, Gateway, MemoryAuditLog, ToolContext, run_sync, tool
from gateway.code import enable
from gateway.context import Principal, ToolResult
from gateway.errors import UserError
from gateway.gate.confirmation import ApprovalRefused, ConfirmationStore, DecidedBy, MemoryConfirmationStore
from gateway.gate.rules import Constraint, parse_constraints
from gateway.gate.stores import RedisConfirmationStore, SqliteConfirmationStore, close_store
from gateway.settings.sections import CodeSettings

from ..adapters.mcp_server_support import redis_server
from ..sample_tools import ALL_TOOLS, Calls, NoteId

SECRET = b"r" * 32
OPERATOR = DecidedBy("console", "op", credential="op")


class Clock:
    def __init__(self) -> None:
        self.now = 2_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


def _gateway(store: ConfirmationStore, clock: Clock, **gate: Any) -> tuple[Gateway, MemoryAuditLog]:
    audit = MemoryAuditLog()
    return Gateway(
        Catalog(ALL_TOOLS),
        audit=audit,
        gate=ConfirmationGate(clock=clock, store=store, secret=SECRET, **gate),
    ), audit


@pytest.fixture
def gw(clock: Clock) -> tuple[Gateway, MemoryAuditLog]:
    return _gateway(MemoryConfirmationStore(), clock)


def delete(gw: Gateway, note_id: str, principal: str = "alice", session: str = "s1") -> ToolResult:
    ctx = ToolContext(principal=Principal(principal), session_id=session)
    arguments = {"tool_name": "notes_delete", "parameters": {"note_id": note_id}}
    return run_sync(gw.call("invoke_tool", arguments, ctx))


def test_constraints_hold_for_every_item_and_only_at_the_domain_itself_or_below() -> None:
    domain = Constraint("to", "domain", "example.com")
    assert domain.allows({"to": ["a@example.com", "b@Sales.Example.com"]})
    for outside in (
        ["a@example.com", "x@evil.org"],
        ["x@evil-example.com"],
        ["x@example.com.evil.org"],
        [""],
        [3],
    ):
        assert not domain.allows({"to": outside}), outside
    assert domain.allows({"to": []})  # every one of no address is at the domain (a cc left empty)
    assert not domain.allows({"cc": ["a@example.com"]})  # the constrained parameter must be there
    prefix = Constraint("subject", "prefix", "Reminder:")
    assert prefix.allows({"subject": "Reminder: standup"}) and not prefix.allows({"subject": "Re: Reminder:"})
    assert Constraint("n", "equals", 3).allows({"n": 3}) and not Constraint("n", "equals", 3).allows(
        {"n": "3"}
    )
    assert Constraint("id", "one_of", ["a", "b"]).allows({"id": "b"})
    assert parse_constraints(
        [("equals", "calendar_id=primary"), ("one_of", "n=1,2"), ("domain", "to=@Example.com")]
    ) == (
        Constraint("calendar_id", "equals", "primary"),
        Constraint("n", "one_of", [1, 2]),
        Constraint("to", "domain", "example.com"),
    )
    with pytest.raises(UserError, match="PARAMETER=VALUE"):
        parse_constraints([("prefix", "subject")])


def test_a_rule_lets_its_calls_through_for_its_principal_and_nothing_else(
    gw: Any, calls: Calls, clock: Clock
) -> None:
    gateway, audit = gw
    rule = gateway.add_rule(
        "notes_delete",
        principal="alice",
        expires_at=clock.now + 1800,
        constraints=[Constraint("note_id", "one_of", ["n1", "n2"])],
        decided_by=OPERATOR,
    )
    ran = delete(gateway, "n1")
    assert ran.ok and calls == [("notes_delete", {"note_id": "n1"})]
    approved = [r for r in audit.records if r.outcome == "approved"]
    assert [r.decided_by for r in approved] == [{"channel": "rule", "operator": "op", "rule": rule.rule_id}]
    made = [r for r in audit.records if r.outcome == "rule_added"]
    assert made[0].call_id == rule.rule_id and "note_id one of" in str(made[0].params)
    # Outside it: another argument, another principal: asked about as ever.
    assert delete(gateway, "n3").status == "confirmation_required"
    assert delete(gateway, "n1", principal="bob").status == "confirmation_required"
    assert calls.names() == ["notes_delete"]
    clock.now += 1801
    assert delete(gateway, "n2").status == "confirmation_required"  # expired
    assert gateway.gate.rules() == []


def test_a_session_rule_holds_in_that_session_only(gw: Any, calls: Calls, clock: Clock) -> None:
    gateway, _ = gw
    gateway.add_rule(
        "notes_delete", principal="alice", session="s1", expires_at=clock.now + 60, decided_by=OPERATOR
    )
    assert delete(gateway, "n1", session="s1").ok
    assert delete(gateway, "n1", session="s2").status == "confirmation_required"


def test_revoked_on_one_replica_it_stops_at_once_on_the_other(
    tmp_path: Path, calls: Calls, clock: Clock
) -> None:
    a_store = SqliteConfirmationStore(tmp_path / "c.sqlite3", clock=clock)
    b_store = SqliteConfirmationStore(tmp_path / "c.sqlite3", clock=clock)
    try:
        a, _ = _gateway(a_store, clock)
        b, b_audit = _gateway(b_store, clock)
        rule = a.add_rule("notes_delete", principal="alice", expires_at=clock.now + 600, decided_by=OPERATOR)
        assert [r.rule_id for r in b.gate.rules()] == [rule.rule_id]
        assert delete(b, "n1").ok
        assert b.revoke_rule(rule.rule_id, decided_by=DecidedBy("terminal", "root")) is not None
        assert delete(a, "n2").status == "confirmation_required"
        assert [r.outcome for r in b_audit.records if r.outcome.startswith("rule_")] == ["rule_revoked"]
        assert b.revoke_rule(rule.rule_id) is None  # once
    finally:
        close_store(a_store)
        close_store(b_store)


def test_rules_are_shared_through_redis_too(tmp_path: Path, calls: Calls, clock: Clock) -> None:
    with redis_server(tmp_path / "redis") as url:
        a_store, b_store = RedisConfirmationStore(url, clock=clock), RedisConfirmationStore(url, clock=clock)
        try:
            a, _ = _gateway(a_store, clock)
            b, _ = _gateway(b_store, clock)
            rule = a.add_rule(
                "notes_delete", principal="alice", expires_at=clock.now + 600, decided_by=OPERATOR
            )
            assert delete(b, "n1").ok
            a.revoke_rule(rule.rule_id)
            assert delete(b, "n1").status == "confirmation_required"
        finally:
            close_store(a_store)
            close_store(b_store)


def test_an_always_confirmed_tool_takes_no_rule_and_one_made_before_is_not_applied(
    calls: Calls, clock: Clock
) -> None:
    store = MemoryConfirmationStore()
    before, _ = _gateway(store, clock)
    before.add_rule("notes_delete", principal="alice", expires_at=clock.now + 600, decided_by=OPERATOR)
    strict, _ = _gateway(store, clock, always_confirm=["notes_*"])
    with pytest.raises(UserError, match="always_confirm"):
        strict.add_rule("notes_archive", principal="alice", expires_at=clock.now + 600, decided_by=OPERATOR)
    assert delete(strict, "n1").status == "confirmation_required"
    assert calls == []


def test_a_rule_is_checked_when_made(gw: Any, clock: Clock) -> None:
    gateway, _ = gw
    later = clock.now + 600
    with pytest.raises(UserError, match="never waits for an approval"):
        gateway.add_rule("notes_search", principal="alice", expires_at=later, decided_by=OPERATOR)
    with pytest.raises(UserError, match="no tool named"):
        gateway.add_rule("notes_nuke", principal="alice", expires_at=later, decided_by=OPERATOR)
    with pytest.raises(UserError, match="has no parameter 'id'; its parameters: note_id"):
        gateway.add_rule(
            "notes_delete",
            principal="alice",
            expires_at=later,
            constraints=[Constraint("id", "equals", "n1")],
            decided_by=OPERATOR,
        )
    with pytest.raises(UserError, match="expiry ahead"):
        gateway.add_rule("notes_delete", principal="alice", expires_at=clock.now - 1, decided_by=OPERATOR)
    with pytest.raises(UserError, match="cannot make a standing approval for itself"):
        gateway.add_rule("notes_delete", principal="op", expires_at=later, decided_by=OPERATOR)
    with pytest.raises(ApprovalRefused, match="not allowed"):
        gateway.add_rule(
            "notes_delete", principal="alice", expires_at=later, decided_by=DecidedBy("elicitation")
        )
    assert gateway.gate.rules() == []


def test_a_rule_never_lets_a_plans_writes_run_while_it_is_drawn(calls: Calls, clock: Clock) -> None:
    gateway, _ = _gateway(MemoryConfirmationStore(), clock)
    programs = enable(gateway, CodeSettings(enabled=True))
    try:
        gateway.add_rule("notes_delete", principal="alice", expires_at=clock.now + 600, decided_by=OPERATOR)
        ctx = ToolContext(principal=Principal("alice"), call_id="prog")
        code = "call('notes_delete', {'note_id': 'n1'})"
        drawn = run_sync(gateway.call("run_code", {"code": code, "plan": True}, ctx))
        assert drawn.status == "confirmation_required" and calls == []
        ran = run_sync(gateway.call("run_code", {"code": code}, ctx))  # run for real: the rule applies
        assert ran.ok and calls.names() == ["notes_delete"]
    finally:
        programs.close()


@pytest.fixture
def sqlite_gateways(tmp_path: Path, clock: Clock) -> Iterator[Gateway]:
    store = SqliteConfirmationStore(tmp_path / "c.sqlite3", clock=clock)
    yield _gateway(store, clock)[0]
    close_store(store)


def test_a_rule_that_cannot_be_read_is_never_applied(
    sqlite_gateways: Gateway, calls: Calls, clock: Clock
) -> None:
    store = sqlite_gateways.gate.store
    assert isinstance(store, SqliteConfirmationStore)
    store.add_rule("bad", clock.now + 600, '{"tool": "notes_delete"}')  # no principal: not a rule
    assert sqlite_gateways.gate.rules() == []
    assert delete(sqlite_gateways, "n1").status == "confirmation_required"


def test_a_domain_rule_takes_only_bare_addresses_so_no_crafted_one_reaches_another_domain() -> None:
    domain = Constraint("to", "domain", "example.com")
    for crafted in (
        "<a@evil.org>@example.com",
        "a@evil.org,x@example.com",
        "a@evil.org x@example.com",
        '"a@evil.org"@example.com',
        "Mallory <a@evil.org> x@example.com",
        "a@evil.org@example.com",
        "a@example.com\n",
        "(a@evil.org)x@example.com",
    ):
        assert not domain.allows({"to": [crafted]}), crafted
    assert domain.allows({"to": ["first.last+tag@example.com", "example.com"]})


def test_a_rule_made_for_a_tool_as_it_was_does_not_cover_it_once_changed(calls: Calls, clock: Clock) -> None:
    store = MemoryConfirmationStore()
    before, _ = _gateway(store, clock)
    before.add_rule("notes_delete", principal="alice", expires_at=clock.now + 600, decided_by=OPERATOR)

    @tool(category="notes", action="delete", name="notes_delete")
    def changed(params: NoteId) -> dict[str, Any]:
        """Delete a note and every note linked to it."""
        return {}

    tools = [changed if t.__name__ == "notes_delete" else t for t in ALL_TOOLS]
    after = Gateway(Catalog(tools), gate=ConfirmationGate(clock=clock, store=store, secret=SECRET))
    assert delete(after, "n1").status == "confirmation_required"
    assert delete(before, "n1").ok  # the replica still on the tool the rule was made for


def test_a_rule_for_one_agent_does_not_cover_another_and_an_empty_prefix_is_refused(
    gw: Any, calls: Calls, clock: Clock
) -> None:
    gateway, _ = gw
    gateway.add_rule(
        "notes_delete", principal="alice", agent="planner", expires_at=clock.now + 60, decided_by=OPERATOR
    )
    as_planner = ToolContext(principal=Principal("alice", agent="planner"))
    as_other = ToolContext(principal=Principal("alice", agent="mailer"))
    call = {"tool_name": "notes_delete", "parameters": {"note_id": "n1"}}
    assert run_sync(gateway.call("invoke_tool", call, as_planner)).ok
    assert run_sync(gateway.call("invoke_tool", call, as_other)).status == "confirmation_required"
    with pytest.raises(UserError, match="empty domain or prefix"):
        gateway.add_rule(
            "notes_delete",
            principal="alice",
            expires_at=clock.now + 60,
            constraints=[Constraint("note_id", "prefix", "")],
            decided_by=OPERATOR,
        )

"""Plans: a program's writes recorded instead of run, and approved by a person as one set.

A program run by `run_code` with `plan` set draws a plan (`InPlan(drawing=True)` in its calls'
context): each destructive call passes the whole chokepoint (policy, validation, permission,
limits) and the gate holds it as an ordinary pending confirmation with its full preview, marked as a
write of the plan, without asking anyone. When the program ends, the plan itself is held beside
its writes: a record whose parameters are the program and the ids of its writes, bound by the
gate's secret to the program's text, the principal (its id, roles, agent and toolsets) and the
definitions of the tools it writes with.

A person approves all of it, some writes (`only`: their numbers, 1 for the first write the program
made) or none; the writes left out are declined. Then `run_code` with the plan's id runs the
program again, for real, with the plan in its calls' context (`InPlan(drawing=False)`): the gate
lets each destructive call through when it is an approved write of the plan (same tool, same
canonical arguments, same principal; each once), raises `Declined` for a declined one, and asks
about any other as it always does. Approved writes the program did not make this time are declined
when it ends, and reported.

Everything lives in the confirmation store, so a plan is approved from any replica, the console or
a terminal, and run on any replica: no program waits in memory while a person reads it.
"""

from __future__ import annotations

import hmac
import secrets
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..audit import Auditor, Outcome
from ..context import ErrorInfo, InPlan, PendingConfirmation, Principal
from ..definition import ToolDefinition
from ..errors import ErrorCode, UserError
from ..rendering import shown
from .confirmation import ConfirmationGate, DecidedBy, Record
from .rules import definition_fingerprint

PLAN_TOOL = "run_code"
"""The tool a plan's own record names: the program's, whose writes it holds."""

Lookup = Callable[[str], ToolDefinition | None]
"""A tool's definition as the caller may see it (None: unknown, or hidden from them)."""


def is_plan(pending: PendingConfirmation) -> bool:
    """Whether `pending` is a plan's own record (not one of its writes, nor a single call)."""
    return pending.plan == pending.pending_id


def writes_of(pending: PendingConfirmation) -> tuple[str, ...]:
    """The pending ids of a plan's writes, in the order the program made them."""
    return tuple(str(w) for w in pending.parameters.get("writes", ()))


def summary(writes: Sequence[PendingConfirmation]) -> str:
    """One line over the writes: how many, and how many of each tool, most first."""
    counts: dict[str, int] = {}
    for w in writes:
        counts[w.tool] = counts.get(w.tool, 0) + 1
    each = ", ".join(f"{n} x {shown(tool)}" for tool, n in sorted(counts.items(), key=lambda kv: -kv[1]))
    return f"{len(writes)} write{'s' if len(writes) != 1 else ''}: {each}"


def listing(writes: Sequence[PendingConfirmation]) -> list[str]:
    """The writes grouped by tool (in the order each tool first came), each numbered as the
    program made them and with its full preview, as the person reads them."""
    groups: dict[str, list[tuple[int, PendingConfirmation]]] = {}
    for n, w in enumerate(writes, 1):
        groups.setdefault(w.tool, []).append((n, w))
    lines: list[str] = []
    for tool, members in groups.items():
        lines.append(f"{shown(tool)} ({len(members)}):")
        lines.extend(f"  {n}. {w.preview}" for n, w in members)
    return lines


@dataclass(frozen=True)
class Decided:
    """What an approval did: the plan's record and each of its writes, approved or declined."""

    plan: PendingConfirmation
    approved: tuple[PendingConfirmation, ...]
    declined: tuple[PendingConfirmation, ...]


class Plans:
    """The plans of one gate's store: held, shown, decided, run and settled.

    With `auditor`, every decision has its lines: one for the plan, one for each write (naming the
    plan), and one for each approved write that never ran (its program did not make it again, or
    the plan expired first).
    """

    def __init__(self, gate: ConfirmationGate, auditor: Auditor | None = None) -> None:
        self.gate = gate
        self.auditor = auditor

    def refuse_a_write(self, pending_id: str) -> None:
        """Refuse to decide one write of a plan on its own: a plan is decided whole (`only` for some).

        Raises:
            UserError: `pending_id` is a write of a plan.
        """
        record = self.gate.store.get(pending_id)
        if record is not None and record.pending.plan is not None and not is_plan(record.pending):
            raise UserError(
                f"{pending_id} is one write of the plan {record.pending.plan}: decide the plan "
                f"(gateway approve {record.pending.plan} --only N,M approves some of its writes)"
            )

    @staticmethod
    def draw() -> InPlan:
        """A new plan to draw: its id, before any write is held."""
        return InPlan(secrets.token_hex(16), drawing=True)

    def record(self, plan_id: str) -> Record | None:
        """The plan's own record; None when `plan_id` names no plan."""
        record = self.gate.store.get(plan_id)
        return record if record is not None and is_plan(record.pending) else None

    def writes(self, plan: PendingConfirmation) -> list[Record]:
        """The plan's writes still on record, in the order the program made them."""
        found = (self.gate.store.get(w) for w in writes_of(plan))
        return [r for r in found if r is not None and r.pending.plan == plan.pending_id]

    def hold(
        self,
        drawn: InPlan,
        *,
        code: str,
        principal: Principal,
        session: str | None,
        writes: Sequence[PendingConfirmation],
        lookup: Lookup,
        stopped: str | None = None,
    ) -> PendingConfirmation:
        """Hold the plan of `writes` for a person's decision; it expires with its first write.

        `stopped`: the error the program stopped with after these writes, which the person reads too.
        """
        tools = {w.tool for w in writes}
        lines = [f"A program's plan of {summary(writes)}.", *listing(writes)]
        parameters: dict[str, Any] = {"code": code, "writes": [w.pending_id for w in writes]}
        if stopped is not None:
            parameters["stopped"] = (
                f"The program stopped after these writes ({shown(stopped)}): approved, they run, "
                "and any write it makes after them is asked about on its own."
            )
            lines.append(parameters["stopped"])
        pending = PendingConfirmation(
            pending_id=drawn.plan_id,
            tool=PLAN_TOOL,
            preview="\n".join(lines),
            parameters=parameters,
            principal=principal.id,
            expires_at=min(w.expires_at for w in writes),
            agent=principal.agent,
            session=session,
            toolsets=tuple(sorted(principal.toolsets)),
            plan=drawn.plan_id,
        )
        binding = self.gate.bind_plan(_bound(code, principal, tools, lookup))
        self.gate.store.put(Record(pending, binding, "pending"))
        return pending

    def approve(
        self, plan_id: str, *, decided_by: DecidedBy, only: Collection[int] | None = None
    ) -> Decided | None:
        """Approve the plan's writes numbered `only` (all when None) and decline the others.

        None when the plan is unknown, expired or decided already.

        Raises:
            ApprovalRefused: the channel may not approve, or its credential made the plan.
            UserError: a number in `only` is no write of the plan, or `only` names none (deny instead).
        """
        if only is not None and not only:
            raise UserError("approve at least one write of the plan, or deny the plan")
        self.gate.may_approve(None, decided_by)
        record = self.record(plan_id)
        if record is None or record.state != "pending" or self.gate.now() > record.pending.expires_at:
            return None
        self.gate.may_approve(record, decided_by)
        ids = writes_of(record.pending)
        chosen = set(range(1, len(ids) + 1)) if only is None else set(only)
        if wrong := sorted(n for n in chosen if not 1 <= n <= len(ids)):
            raise UserError(
                f"this plan has writes 1 to {len(ids)}; there is no write {', '.join(map(str, wrong))}"
            )
        return self._decide(record, chosen, decided_by)

    def _decide(self, record: Record, chosen: Collection[int], decided_by: DecidedBy) -> Decided | None:
        """Decide the writes (those numbered `chosen` approved, the others declined), then the plan:
        a run of the plan waits (`confirmation_pending`) until its writes are decided. None when the
        plan was decided meanwhile, by someone else (what this decision did to writes is audited)."""
        plan_id = record.pending.pending_id
        approved: list[PendingConfirmation] = []
        declined: list[PendingConfirmation] = []
        for n, pending_id in enumerate(writes_of(record.pending), 1):
            if n in chosen:
                if (done := self.gate.store.transition(pending_id, ("pending",), "approved")) is not None:
                    approved.append(done.pending)
            elif (held := self.gate.store.get(pending_id)) is not None and (
                self.gate.deny(pending_id) or self.gate.withdraw(pending_id)
            ):
                declined.append(held.pending)
        planned = self.gate.store.transition(plan_id, ("pending",), "approved") is not None
        decided = Decided(record.pending, tuple(approved), tuple(declined))
        self._audit(decided, decided_by, plan_line=planned)
        return decided if planned else None

    def deny(self, plan_id: str, *, decided_by: DecidedBy) -> Decided | None:
        """Decline the plan and every write of it; None when it is unknown or decided already."""
        record = self.record(plan_id)
        if record is None or not self.gate.deny(plan_id):
            return None
        declined = [
            r.pending
            for r in self.writes(record.pending)
            if self.gate.deny(r.pending.pending_id) or self.gate.withdraw(r.pending.pending_id)
        ]
        decided = Decided(record.pending, (), tuple(declined))
        self._audit(decided, decided_by)
        return decided

    def _audit(self, decided: Decided, decided_by: DecidedBy, *, plan_line: bool = True) -> None:
        """A line for the plan's decision (approved when any write is) and one for each of its writes."""
        if self.auditor is None:
            return
        who = decided_by.as_json()
        if plan_line:
            outcome: Outcome = "approved_by_host" if decided.approved else "denied_by_host"
            self.auditor.decided(decided.plan, outcome, who)
        for pending in decided.approved:
            self.auditor.decided(pending, "approved_by_host", who)
        for pending in decided.declined:
            self.auditor.decided(pending, "denied_by_host", who)

    def _never_ran(self, pending: PendingConfirmation, why: str) -> None:
        """The line of an approved write that will never run: its program did not make it, or expired."""
        if self.auditor is not None:
            self.auditor.log(
                principal=pending.principal,
                session=pending.session or "default",
                call_id=pending.pending_id,
                tool=pending.tool,
                outcome="refused",
                error_code=why,
                params=pending.parameters,
                agent=pending.agent,
                toolsets=pending.toolsets,
                plan=pending.plan,
            )

    def redeem(
        self, plan_id: str, code: str | None, principal: Principal, lookup: Lookup
    ) -> tuple[str, InPlan] | ErrorInfo:
        """The program to run for real and the plan its calls carry, once (the plan is used); or why not.

        Refused when the plan is not this principal's as it was drawn (its id, roles, agent,
        toolsets), `code` is another program, a tool it writes with changed or is no longer
        visible, it expired, nobody decided yet, or it was declined or run already.
        """
        record = self.record(plan_id)
        if record is None:
            return _refused("confirmation_invalid", "That is not a plan's id.", _AGAIN)
        drawn = str(record.pending.parameters.get("code", ""))
        if code is not None and code.strip() and code != drawn:
            return _refused(
                "confirmation_mismatch",
                "That plan was drawn for another program: an approval runs only the program it was given for.",
                "Call run_code with confirmation set to the plan's id and no code (or the same code).",
            )
        tools = {r.pending.tool for r in self.writes(record.pending)}
        binding = self.gate.bind_plan(_bound(drawn, principal, tools, lookup))
        if not hmac.compare_digest(record.binding, binding):
            return _refused(
                "plan_changed",
                "That plan was drawn for another caller, or the caller's roles or a tool it writes with "
                "changed since: the approval no longer holds.",
                "Draw the plan again (run_code with plan set) and ask the user to approve the new one.",
            )
        if self.gate.now() > record.pending.expires_at:
            self._expire(record)
            return _refused("confirmation_expired", "That plan has expired.", _AGAIN)
        if record.state == "pending" and self.gate.mode == "model":  # the model's word is the approval
            model = DecidedBy("model", principal.id)
            self._decide(record, range(1, len(writes_of(record.pending)) + 1), model)
        elif record.state == "denied":
            return _refused(
                "declined", "The user declined the plan.", "Do not retry; ask the user what to do."
            )
        if self.gate.store.transition(plan_id, ("approved",), "used") is not None:
            return drawn, InPlan(plan_id, drawing=False, writes=writes_of(record.pending))
        if (now := self.gate.store.get(plan_id)) is not None and now.state == "used":
            return _refused(
                "confirmation_used",
                "That plan already ran; each approval runs its program once.",
                "If the user wants it done again, draw a new plan.",
            )
        return _refused(
            "confirmation_pending",
            "The user has not decided on this plan yet.",
            "Wait for the user to approve the plan, then call run_code again with its id.",
        )

    def settle(self, run: InPlan) -> list[PendingConfirmation]:
        """Decline the approved writes the program did not make, each with its line (`not_made`);
        those writes, in order."""
        not_made = []
        for pending_id in run.writes:
            record = self.gate.store.get(pending_id)
            if record is not None and record.state == "approved" and self.gate.withdraw(pending_id):
                not_made.append(record.pending)
                self._never_ran(record.pending, "not_made")
        return not_made

    def _expire(self, plan: Record) -> None:
        """Decline an expired plan and its writes; an approved one gets its line (`confirmation_expired`)."""
        self.gate.deny(plan.pending.pending_id) or self.gate.withdraw(plan.pending.pending_id)
        for record in self.writes(plan.pending):
            if self.gate.deny(record.pending.pending_id):
                continue
            if self.gate.withdraw(record.pending.pending_id):
                self._never_ran(record.pending, "confirmation_expired")


_AGAIN = "Draw the plan again (run_code with plan set) and ask the user to approve it."


def _bound(code: str, principal: Principal, tools: Collection[str], lookup: Lookup) -> Mapping[str, Any]:
    """What a plan's approval is bound to: the program, the caller as it was, the tools as they were."""
    definitions = {name: lookup(name) for name in sorted(tools)}
    return {
        "code": code,
        "principal": principal.id,
        "agent": principal.agent,
        "roles": sorted(principal.roles),
        "toolsets": sorted(principal.toolsets),
        "tools": {
            name: definition_fingerprint(d) if d is not None else None for name, d in definitions.items()
        },
    }


def _refused(code: ErrorCode, message: str, next_step: str) -> ErrorInfo:
    return ErrorInfo(code, message, next_step)

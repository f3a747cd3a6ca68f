"""Deciding pending calls from the console: what is waiting, and the host's answer, audited.

The console only moves a confirmation from pending to approved or denied in the shared store
(SQLite or Redis), exactly as `gateway approve ID` does: the binding to the tool, the canonical
parameters and the principal, the expiry and the single use are checked when the agent redeems it.

Approving is refused when `[confirmation] approvers` leaves out "console", and when the admin
token's principal is the one that made the call: a credential never approves its own call.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any, Literal

from ..context import PendingConfirmation
from ..engine import Gateway
from ..gate.confirmation import DecidedBy
from ..gate.plans import Plans, is_plan, writes_of
from ..rendering import shown, to_jsonable

Verdict = Literal["approved", "denied", "gone"]
_PENDING_ID = re.compile(r"^[0-9a-f]{1,64}$")


def valid_id(pending_id: str) -> bool:
    """Whether `pending_id` looks like a pending id (hex) at all."""
    return bool(_PENDING_ID.fullmatch(pending_id))


@dataclass(frozen=True)
class Write:
    """One write of a plan: its number (as the program made it) and its full preview."""

    number: int
    tool: str
    preview: str
    exact: Any


@dataclass(frozen=True)
class Waiting:
    """One pending call, or one program's plan, as the console shows it."""

    pending_id: str
    tool: str
    preview: str
    parameters: str  # the exact canonical parameters, as indented JSON, escaped for people
    exact: Any  # the same parameters as data
    principal: str
    agent: str | None
    session: str | None
    toolsets: tuple[str, ...]  # those the caller was confined to (an endpoint's, a bound token's)
    expires_at: float
    seconds_left: int
    groups: tuple[tuple[str, tuple[Write, ...]], ...] = ()
    stopped: str = ""  # a plan whose program stopped after these writes: where, and what follows
    """A plan's writes, grouped by tool in the order each tool first came (empty: a single call)."""

    @property
    def is_plan(self) -> bool:
        return bool(self.groups)


def waiting(gw: Gateway) -> list[Waiting]:
    """The calls and plans waiting for a decision, the one expiring first first; a plan's writes
    are shown within it, not on their own."""
    now = time.time()
    plans = Plans(gw.gate)
    shown_calls = []
    for p in gw.gate.pending():
        if is_plan(p):
            shown_calls.append(_waiting(p, now, _groups(plans, p)))
        elif p.plan is None:
            shown_calls.append(_waiting(p, now))
    return shown_calls


def _groups(plans: Plans, plan: PendingConfirmation) -> tuple[tuple[str, tuple[Write, ...]], ...]:
    numbered = {pending_id: n for n, pending_id in enumerate(writes_of(plan), 1)}
    grouped: dict[str, list[Write]] = {}
    for record in plans.writes(plan):
        w = record.pending
        grouped.setdefault(w.tool, []).append(Write(numbered[w.pending_id], w.tool, w.preview, w.parameters))
    return tuple((tool, tuple(writes)) for tool, writes in grouped.items())


def _waiting(
    p: PendingConfirmation, now: float, groups: tuple[tuple[str, tuple[Write, ...]], ...] = ()
) -> Waiting:
    if groups:  # a plan: its summary line (its writes follow it), and its program's text
        about, details = p.preview.split("\n")[0], str(p.parameters.get("code", ""))
    else:
        about, details = p.preview, _indented(p.parameters)
    return Waiting(
        pending_id=p.pending_id,
        tool=p.tool,
        preview=about,
        # In full (the page wraps it), with control and bidirectional characters escaped.
        parameters="\n".join(map(shown, details.split("\n"))),
        exact=p.parameters,
        principal=p.principal,
        agent=p.agent,
        session=p.session,
        toolsets=p.toolsets,
        expires_at=p.expires_at,
        seconds_left=max(0, int(p.expires_at - now)),
        groups=groups,
        stopped=str(p.parameters.get("stopped", "")) if groups else "",
    )


def _indented(parameters: Any) -> str:
    return json.dumps(to_jsonable(parameters), indent=2, sort_keys=True, ensure_ascii=False)


def as_json(w: Waiting) -> dict[str, Any]:
    return {
        "pending_id": w.pending_id,
        "tool": w.tool,
        "preview": w.preview,
        "parameters": to_jsonable(w.exact),
        "principal": w.principal,
        "agent": w.agent,
        "session": w.session,
        "toolsets": list(w.toolsets),
        "expires_at": w.expires_at,
        **(
            {
                "writes": [
                    {
                        "number": x.number,
                        "tool": x.tool,
                        "preview": x.preview,
                        "parameters": to_jsonable(x.exact),
                    }
                    for _, writes in w.groups
                    for x in sorted(writes, key=lambda x: x.number)
                ]
            }
            if w.is_plan
            else {}
        ),
    }


def decide(
    gw: Gateway, pending_id: str, *, approve: bool, who: str, only: Collection[int] | None = None
) -> Verdict:
    """Approve or deny one pending call, or a plan (`only`: the writes approved, the others
    declined; none chosen declines the plan), for that id only; the decision goes to the audit log.

    "gone": the id is unknown, expired or already decided (nothing changed, nothing logged).

    Raises:
        ApprovalRefused: the console may not approve here, or `who` made this call.
        UserError: `only` names no write of the plan.
    """
    record = gw.gate.store.get(pending_id)
    if record is None:
        return "gone"
    decided_by = DecidedBy("console", who, credential=who)
    only = only if is_plan(record.pending) else None
    if approve and only is not None and not only:  # a plan with no write chosen: nothing to run
        approve = False
    if approve:
        done = gw.approve(pending_id, decided_by=decided_by, only=only) is not None
    else:
        done = time.time() <= record.pending.expires_at and gw.deny(pending_id, decided_by=decided_by)
    if not done:
        return "gone"
    return "approved" if approve else "denied"


# -- standing approvals (`gateway.gate.rules`) --------------------------------------------------


@dataclass(frozen=True)
class Standing:
    """A standing approval as the console shows it."""

    rule_id: str
    about: str  # what it lets through, for whom, what it leaves free (escaped)
    expires_at: float
    seconds_left: int
    made_by: str


def standing(gw: Gateway) -> list[Standing]:
    """The standing approvals in force, the one expiring first first."""
    now = time.time()
    return [
        Standing(
            r.rule_id,
            r.describe(),
            r.expires_at,
            max(0, int(r.expires_at - now)),
            shown(r.made_by),
        )
        for r in gw.gate.rules()
    ]


def revoke(gw: Gateway, rule_id: str, *, who: str) -> bool:
    """Revoke a standing approval (any operator may, as any may decline); audited."""
    return gw.revoke_rule(rule_id, decided_by=DecidedBy("console", who, credential=who)) is not None

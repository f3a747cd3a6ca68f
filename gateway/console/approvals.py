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
from dataclasses import dataclass
from typing import Any, Literal

from ..context import PendingConfirmation
from ..engine import Gateway
from ..gate.confirmation import DecidedBy
from ..rendering import shown, to_jsonable

Verdict = Literal["approved", "denied", "gone"]
_PENDING_ID = re.compile(r"^[0-9a-f]{1,64}$")


def valid_id(pending_id: str) -> bool:
    """Whether `pending_id` looks like a pending id (hex) at all."""
    return bool(_PENDING_ID.fullmatch(pending_id))


@dataclass(frozen=True)
class Waiting:
    """One pending call as the console shows it."""

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


def waiting(gw: Gateway) -> list[Waiting]:
    """The calls waiting for a decision, the one expiring first first."""
    now = time.time()
    return [_waiting(p, now) for p in gw.gate.pending()]


def _waiting(p: PendingConfirmation, now: float) -> Waiting:
    return Waiting(
        pending_id=p.pending_id,
        tool=p.tool,
        preview=p.preview,
        # In full (the page wraps it), with control and bidirectional characters escaped.
        parameters="\n".join(map(shown, _indented(p.parameters).split("\n"))),
        exact=p.parameters,
        principal=p.principal,
        agent=p.agent,
        session=p.session,
        toolsets=p.toolsets,
        expires_at=p.expires_at,
        seconds_left=max(0, int(p.expires_at - now)),
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
    }


def decide(gw: Gateway, pending_id: str, *, approve: bool, who: str) -> Verdict:
    """Approve or deny one pending call, for that id only; the decision goes to the audit log.

    "gone": the id is unknown, expired or already decided (nothing changed, nothing logged).

    Raises:
        ApprovalRefused: the console may not approve here, or `who` made this call.
    """
    record = gw.gate.store.get(pending_id)
    if record is None:
        return "gone"
    decided_by = DecidedBy("console", who, credential=who)
    if approve:
        done = gw.approve(pending_id, decided_by=decided_by) is not None
    else:
        done = time.time() <= record.pending.expires_at and gw.deny(pending_id, decided_by=decided_by)
    if not done:
        return "gone"
    return "approved" if approve else "denied"

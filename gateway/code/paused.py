"""Programs waiting for a person's approval: their states, held in this process's memory.

Each paused program belongs to the principal that ran it: only that principal takes it back to
resume it. The held states are bounded in number (`[code] max_paused`) and in bytes (`[code]
max_paused_mb`); when a new pause needs room, the principal holding the most (the newcomer counted)
ends its own oldest program first, so one principal's pauses never end another's while it holds more.
A program that ends here has its pending call declined, approved or not: it will not run. Each
decline leaves an audit line for that call (outcome `refused`, as a redeemed confirmation past its
expiry has) whose error code says why (`Ending`).

A shared confirmation store also marks each held program's call with this process (`stores.Holders`),
so that a program whose process ended without a clean stop (killed, crashed) still ends this way: the
next process with code mode on that opens the store, or looks at its own programs, declines the call
and writes its line (`process_ended`), once the marking process no longer runs (`holders.py`).
"""

from __future__ import annotations

import dataclasses
import threading
from dataclasses import dataclass, field
from typing import Literal, Protocol

from ..audit import Auditor
from ..context import InPlan, PendingConfirmation, Principal, ToolContext
from ..gate.confirmation import ConfirmationGate
from ..gate.stores import Holders
from ..settings.sections import CodeSettings

Ending = Literal["confirmation_expired", "max_paused", "max_paused_mb", "gateway_stopping", "process_ended"]
"""Why a paused program ended before it resumed, as the audit line of its declined call says:
its confirmation expired, room was made under `[code] max_paused` or `max_paused_mb` (or its
state alone was over `max_paused_mb`), the gateway stopped, or its process ended without a clean
stop (the line is written by a later process)."""


Refusal = Literal["theirs", "changed"]
"""Why a program is not handed back: another principal's, or its own with other roles, agent or toolsets."""


class Host(Protocol):
    """What paused programs need of the gateway, looked up when needed (a host may replace its gate)."""

    gate: ConfirmationGate
    auditor: Auditor


@dataclass
class Program:
    """One program's state between its steps: what it is, who runs it, what it did."""

    code: str
    ctx: ToolContext  # run_code's own: the principal, the session, the program's call id
    calls: list[str] = field(default_factory=list)  # what ran: the calls that succeeded, in order
    attempts: int = 0  # every call it made, whatever came of it (the limit counts these)
    elapsed: float = 0.0  # seconds it has run, pauses excluded
    failed: str | None = None  # the call whose error was last raised inside the program
    printed: list[str] = field(default_factory=list)
    plan: InPlan | None = None  # the plan it draws, or the approved plan it runs (`gate/plans.py`)
    planned: list[PendingConfirmation] = field(default_factory=list)  # the writes held while drawing

    def inner(self, n: int) -> ToolContext:
        """The context of the program's n-th call: its call id names the program; its plan, if any."""
        return dataclasses.replace(self.ctx, call_id=f"{self.ctx.call_id}.{n}", plan=self.plan)


@dataclass(frozen=True)
class Paused:
    """A program waiting on `pending`: its dumped state and the call it waits on (its n-th)."""

    program: Program
    dumped: bytes
    tool: str
    pending: PendingConfirmation
    n: int

    @property
    def owner(self) -> str:
        return self.program.ctx.principal.id

    @property
    def size(self) -> int:
        """What it holds in memory, roughly: its state and what it printed before each pause."""
        return len(self.dumped) + sum(len(text) for text in self.program.printed)

    def end(self, why: Ending, host: Host) -> None:
        """Decline the call the program waits on, approved or not, with an audit line saying `why`.

        The line is the call's own (its call id `<program's call id>.<n>`, as its
        `pending_confirmation` line): outcome `refused`, error code `why`. A call already decided
        (a person declined it) is left as it is, and no line is added.
        """
        declined = host.gate.store.transition(self.pending.pending_id, ("pending", "approved"), "denied")
        if declined is None:
            return
        ctx = self.program.inner(self.n)
        host.auditor.log(
            principal=ctx.principal.id,
            session=ctx.session_id,
            call_id=ctx.call_id,
            tool=self.tool,
            outcome="refused",
            error_code=why,
            params=self.pending.parameters,
            agent=ctx.principal.agent,
            toolsets=ctx.principal.toolsets,
        )


class PausedPrograms:
    """The paused programs of one gateway process, by pending id, oldest first.

    Expired programs are ended when the gateway next looks (a pause, a resume, a listing, a stop).

    Args:
        settings: `[code]`: `max_paused` and `max_paused_mb` bound what is held.
        host: the gateway: its gate's clock (a program expires with its confirmation), the gate
            that declines the pending call of a program that ends here, and the audit log.
    """

    def __init__(self, settings: CodeSettings, host: Host) -> None:
        self.settings = settings
        self._host = host
        self._paused: dict[str, Paused] = {}
        self._lock = threading.Lock()

    @property
    def budget(self) -> int:
        """The bytes the held states may take together."""
        return self.settings.max_paused_mb * 1024 * 1024

    def keep(self, paused: Paused) -> None:
        """Hold `paused` until it is taken back, making room as the bounds require."""
        ended: list[tuple[Paused, Ending]] = []
        with self._lock:
            ended += self._expired()
            while self._paused and (
                (full := len(self._paused) >= self.settings.max_paused)
                or sum(p.size for p in self._paused.values()) + paused.size > self.budget
            ):
                made_room = self._paused.pop(self._to_end(paused, by_bytes=not full))
                ended.append((made_room, "max_paused" if full else "max_paused_mb"))
            self._paused[paused.pending.pending_id] = paused
        self._end(ended)  # their calls will not run, whatever happens next
        store = self._host.gate.store
        if isinstance(store, Holders):  # should this process end without a clean stop (module docstring)
            store.hold(paused.pending.pending_id, paused.program.inner(paused.n).call_id)
        self.end_orphans()

    def take(self, pending_id: str, principal: Principal) -> Paused | Refusal | None:
        """The program paused on `pending_id`, no longer held; None when there is none.

        A program is only its principal's to take: the same id with the same roles, agent and
        toolsets as when it paused (a change of roles may be a revocation, and the rest of the
        program would run with the roles it was started with). Refused, it stays where it is.
        """
        with self._lock:
            expired = self._expired(but=pending_id)
            paused = self._paused.get(pending_id)
            refused: Refusal | None = None
            if paused is not None and paused.program.ctx.principal != principal:
                refused = "changed" if paused.owner == principal.id else "theirs"
            elif paused is not None:
                del self._paused[pending_id]
        self._end(expired)
        return refused or paused

    def ids(self) -> list[str]:
        """The pending ids programs wait on, oldest first."""
        with self._lock:
            expired = self._expired()
            ids = list(self._paused)
        self._end(expired)
        self.end_orphans()
        return ids

    def end_orphans(self) -> int:
        """Decline the calls of programs whose process ended without a clean stop; how many there were.

        Each gets the audit line its own process would have written (`process_ended`), with the
        call's call id as the store marked it.
        """
        store = self._host.gate.store
        if not isinstance(store, Holders):
            return 0
        ended = 0
        for record, call_id in store.orphans():
            p = record.pending
            if store.end_orphan(p.pending_id):  # once, whoever finds it
                ended += 1
                self._host.auditor.log(
                    principal=p.principal,
                    session=p.session or "default",
                    call_id=call_id,
                    tool=p.tool,
                    outcome="refused",
                    error_code="process_ended",
                    params=p.parameters,
                    agent=p.agent,
                    toolsets=p.toolsets,
                )
        return ended

    def end_all(self) -> int:
        """End every paused program, declining its pending call; how many there were."""
        with self._lock:
            expired = self._expired()
            stopping: list[tuple[Paused, Ending]] = [(p, "gateway_stopping") for p in self._paused.values()]
            self._paused = {}
        self._end([*expired, *stopping])
        return len(expired) + len(stopping)

    def _expired(self, but: str | None = None) -> list[tuple[Paused, Ending]]:
        """The programs whose confirmation expired (but the one on `but`), no longer held. Under the lock."""
        now = self._host.gate.now()
        ended = [p for pid, p in self._paused.items() if p.pending.expires_at < now and pid != but]
        for p in ended:
            del self._paused[p.pending.pending_id]
        return [(p, "confirmation_expired") for p in ended]

    def _end(self, ended: list[tuple[Paused, Ending]]) -> None:
        for paused, why in ended:
            paused.end(why, self._host)

    def _to_end(self, newcomer: Paused, *, by_bytes: bool) -> str:
        """The program that makes room: the oldest of the principal holding the most programs (or
        bytes, `by_bytes`), the newcomer counted."""

        def weight(p: Paused) -> int:
            return p.size if by_bytes else 1

        held: dict[str, int] = {newcomer.owner: weight(newcomer)}
        for p in self._paused.values():
            held[p.owner] = held.get(p.owner, 0) + weight(p)
        most = max(held[p.owner] for p in self._paused.values())
        return next(pid for pid, p in self._paused.items() if held[p.owner] == most)

"""Programs waiting for a person's approval: their states, held in this process's memory.

Each paused program belongs to the principal that ran it: only that principal takes it back to
resume it. The held states are bounded in number (`[code] max_paused`) and in bytes (`[code]
max_paused_mb`); when a new pause needs room, the principal holding the most (the newcomer counted)
ends its own oldest program first, so one principal's pauses never end another's while it holds more.
A program that ends here has its pending call declined: it will not run.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from ..client_settings import CodeSettings
from ..confirmation import ConfirmationGate
from ..context import PendingConfirmation, Principal, ToolContext


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

    def inner(self, n: int) -> ToolContext:
        """The context of the program's n-th call: its call id names the program."""
        return dataclasses.replace(self.ctx, call_id=f"{self.ctx.call_id}.{n}")


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


class PausedPrograms:
    """The paused programs of one gateway process, by pending id, oldest first.

    Args:
        settings: `[code]`: `max_paused` and `max_paused_mb` bound what is held.
        gate: the gateway's confirmation gate, looked up when needed: its clock (a program expires
            with its confirmation), and it declines the pending call of a program that ends here.
    """

    def __init__(self, settings: CodeSettings, gate: Callable[[], ConfirmationGate]) -> None:
        self.settings = settings
        self._gate = gate
        self._paused: dict[str, Paused] = {}
        self._lock = threading.Lock()

    @property
    def budget(self) -> int:
        """The bytes the held states may take together."""
        return self.settings.max_paused_mb * 1024 * 1024

    def keep(self, paused: Paused) -> None:
        """Hold `paused` until it is taken back, making room as the bounds require."""
        now = self._gate().now()
        ended: list[Paused] = []
        with self._lock:
            for pid, p in list(self._paused.items()):
                if p.pending.expires_at < now:
                    del self._paused[pid]
            while self._paused and (
                full := len(self._paused) >= self.settings.max_paused
                or sum(p.size for p in self._paused.values()) + paused.size > self.budget
            ):
                ended.append(self._paused.pop(self._to_end(paused, by_bytes=not full)))
            self._paused[paused.pending.pending_id] = paused
        for p in ended:  # they make room: their calls will not run
            self._gate().deny(p.pending.pending_id)

    def take(self, pending_id: str, principal: Principal) -> tuple[Paused | None, bool]:
        """(the program paused on `pending_id`, no longer held; whether it is another principal's).

        Another principal's program stays where it is and is not returned.
        """
        with self._lock:
            paused = self._paused.get(pending_id)
            if paused is not None and paused.program.ctx.principal != principal:
                return None, True
            if paused is not None:
                del self._paused[pending_id]
            return paused, False

    def ids(self) -> list[str]:
        """The pending ids programs wait on, oldest first."""
        with self._lock:
            return list(self._paused)

    def end_all(self) -> int:
        """End every paused program, declining its pending call; how many there were."""
        with self._lock:
            paused, self._paused = list(self._paused.values()), {}
        for p in paused:
            self._gate().deny(p.pending.pending_id)
        return len(paused)

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

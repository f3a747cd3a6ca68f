"""The confirmation gate: a destructive tool never runs on the model's word alone.

Approval comes from outside the model's channel: an approver callback supplied by the
host (a terminal prompt, a web button), or a host-side `approve(pending_id)`. What is
approved is bound to the tool, the canonical parameters and the principal; it expires
and can be used once.

Modes:
    host: (default) the host approves, through the approver callback or `approve()`.
    model: opt-in and weaker: the model confirms by re-sending the pending id.
    deny: destructive tools are refused outright.
"""

from __future__ import annotations

import hashlib
import hmac
import inspect
import json
import secrets
import threading
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal, Protocol

from .context import PendingConfirmation, Principal
from .definition import ToolDefinition

Mode = Literal["host", "model", "deny"]
State = Literal["pending", "approved", "denied", "used"]
Approver = Callable[[PendingConfirmation], bool | Awaitable[bool]]

DEFAULT_TTL_SECONDS = 300.0
_PREVIEW_VALUE = 120


@dataclass(frozen=True)
class Record:
    """A stored confirmation: the public pending view plus its binding and state."""

    pending: PendingConfirmation
    binding: str
    state: State


class ConfirmationStore(Protocol):
    """Where pending confirmations live. Swappable so several processes can share them."""

    def put(self, record: Record) -> None: ...

    def get(self, pending_id: str) -> Record | None: ...

    def transition(self, pending_id: str, from_states: tuple[State, ...], to: State) -> Record | None:
        """Atomically move a record between states; None when it was not in `from_states`."""
        ...

    def pending(self) -> list[Record]: ...


class MemoryConfirmationStore:
    """In-process store, safe across threads."""

    def __init__(self) -> None:
        self._records: dict[str, Record] = {}
        self._lock = threading.Lock()

    def put(self, record: Record) -> None:
        with self._lock:
            self._records[record.pending.pending_id] = record

    def get(self, pending_id: str) -> Record | None:
        with self._lock:
            return self._records.get(pending_id)

    def transition(self, pending_id: str, from_states: tuple[State, ...], to: State) -> Record | None:
        with self._lock:
            record = self._records.get(pending_id)
            if record is None or record.state not in from_states:
                return None
            updated = replace(record, state=to)
            self._records[pending_id] = updated
            return updated

    def pending(self) -> list[Record]:
        with self._lock:
            return [r for r in self._records.values() if r.state == "pending"]


@dataclass(frozen=True)
class Proceed:
    """Run the call. `approved` says whether a confirmation was consumed for it."""

    approved: bool = False


@dataclass(frozen=True)
class NeedsConfirmation:
    pending: PendingConfirmation


@dataclass(frozen=True)
class Refused:
    code: str
    message: str
    next_step: str


Decision = Proceed | NeedsConfirmation | Refused


def canonical_json(value: Mapping[str, Any]) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def preview(tool: ToolDefinition, params: Mapping[str, Any]) -> str:
    """A human-readable line saying exactly what will run."""
    shown = []
    for key, value in params.items():
        if value is None or value in ([], {}):
            continue
        text = json.dumps(value, ensure_ascii=False, default=str)
        if len(text) > _PREVIEW_VALUE:
            text = text[:_PREVIEW_VALUE] + "..."
        shown.append(f"{key}={text}")
    args = ", ".join(shown) or "no parameters"
    return f"{tool.summary.rstrip('.')} [{tool.name}] with {args}"


class ConfirmationGate:
    """Decides, for each call of a destructive tool, whether it may run now."""

    def __init__(
        self,
        mode: Mode = "host",
        *,
        approver: Approver | None = None,
        ttl_seconds: float = DEFAULT_TTL_SECONDS,
        store: ConfirmationStore | None = None,
        secret: bytes | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.mode: Mode = mode
        self.approver = approver
        self.ttl_seconds = ttl_seconds
        self.store: ConfirmationStore = store or MemoryConfirmationStore()
        self._secret = secret or secrets.token_bytes(32)
        self._clock = clock

    def _binding(self, tool: ToolDefinition, params: Mapping[str, Any], principal: Principal) -> str:
        message = canonical_json(
            {"tool": tool.name, "params": params, "principal": principal.id, "agent": principal.agent}
        )
        return hmac.new(self._secret, message.encode(), hashlib.sha256).hexdigest()

    async def check(
        self,
        tool: ToolDefinition,
        params: Mapping[str, Any],
        principal: Principal,
        confirmation: str | None,
        *,
        session: str | None = None,
    ) -> Decision:
        if not tool.is_destructive:
            return Proceed()
        if self.mode == "deny":
            return Refused(
                "destructive_disabled",
                f"{tool.name} changes or removes data irreversibly and destructive tools are disabled here.",
                "Tell the user this action is not available; do not retry it.",
            )
        binding = self._binding(tool, params, principal)
        if confirmation is not None:
            return self._redeem(confirmation, binding)
        pending = PendingConfirmation(
            pending_id=secrets.token_hex(16),  # hex: never read as an option (`gateway approve ID`)
            tool=tool.name,
            preview=preview(tool, params),
            parameters=dict(params),
            principal=principal.id,
            expires_at=self._clock() + self.ttl_seconds,
            agent=principal.agent,
            session=session,
        )
        self.store.put(Record(pending, binding, "pending"))
        if self.approver is None:
            return NeedsConfirmation(pending)
        answer = self.approver(pending)
        if inspect.isawaitable(answer):
            answer = await answer
        if answer is True and self.store.transition(pending.pending_id, ("pending",), "used"):
            return Proceed(approved=True)
        self.store.transition(pending.pending_id, ("pending",), "denied")
        return Refused(
            "declined", "The user declined this action.", "Do not retry; ask the user what to do instead."
        )

    def _redeem(self, pending_id: str, binding: str) -> Decision:
        record = self.store.get(pending_id)
        # Compare bindings in constant time; an unknown id and a wrong binding both refuse.
        if record is None:
            return Refused(
                "confirmation_invalid",
                "That confirmation id is not valid.",
                "Call invoke_tool again without 'confirmation' to get a new pending id.",
            )
        if not hmac.compare_digest(record.binding, binding):
            return Refused(
                "confirmation_mismatch",
                "That confirmation was given for a different tool, parameters or user.",
                "Call invoke_tool again without 'confirmation' to get an approval for these exact parameters.",
            )
        if self._clock() > record.pending.expires_at:
            self.store.transition(pending_id, ("pending", "approved"), "denied")
            return Refused(
                "confirmation_expired",
                "That confirmation has expired.",
                "Call invoke_tool again without 'confirmation' and ask the user to approve the new request.",
            )
        if record.state == "used":
            return Refused(
                "confirmation_used",
                "That confirmation was already used; each approval runs the call once.",
                "If the user wants it done again, call invoke_tool without 'confirmation' for a new approval.",
            )
        if record.state == "denied":
            return Refused(
                "declined", "The user declined this action.", "Do not retry; ask the user what to do."
            )
        allowed: tuple[State, ...] = ("approved", "pending") if self.mode == "model" else ("approved",)
        if self.store.transition(pending_id, allowed, "used") is not None:
            return Proceed(approved=True)
        return Refused(
            "confirmation_pending",
            "The user has not approved this action yet.",
            "Show the user the preview and wait for their approval before calling again with this id.",
        )

    def approve(self, pending_id: str) -> PendingConfirmation | None:
        """Host side: approve a pending call. None when it is unknown, expired or already decided."""
        record = self.store.get(pending_id)
        if record is None or self._clock() > record.pending.expires_at:
            return None
        updated = self.store.transition(pending_id, ("pending",), "approved")
        return updated.pending if updated else None

    def deny(self, pending_id: str) -> bool:
        """Host side: decline a pending call."""
        return self.store.transition(pending_id, ("pending",), "denied") is not None

    def pending(self) -> list[PendingConfirmation]:
        """Calls waiting for the host, oldest first, unexpired."""
        now = self._clock()
        records = [r.pending for r in self.store.pending() if r.pending.expires_at >= now]
        return sorted(records, key=lambda p: p.expires_at)

"""The confirmation gate: a destructive tool never runs on the model's word alone.

Approval comes from outside the model's channel: an approver callback supplied by the
host (a terminal prompt, a web button), or a host-side `approve(pending_id, decided_by=...)`.
What is approved is bound to the tool, the canonical parameters and the principal; it expires
and can be used once. Each approval says its channel (`DecidedBy`); only the channels in
`approvers` may approve, and a credential never approves a call it made itself.

The approver sees every value that will run, in full and with control characters escaped
(`preview`), and what the tool's `describe` hook says of it; a preview past `max_preview_bytes`
is refused rather than cut.

Modes:
    host: (default) the host approves, through the approver callback or `approve()`.
    model: opt-in and weaker: the model confirms by re-sending the pending id.
    deny: destructive tools are refused outright.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import inspect
import json
import logging
import math
import secrets
import threading
import time
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal, Protocol, TypeVar

from pydantic import BaseModel

from ..context import InPlan, PendingConfirmation, Principal, ToolContext
from ..definition import ToolDefinition
from ..errors import ErrorCode, ToolFailed, UserError
from ..rendering import shown
from .holders import why_ended
from .rules import Rule, RuleStore, always_confirmed, matching, read_rules

log = logging.getLogger("gateway")
_T = TypeVar("_T")

Mode = Literal["host", "model", "deny"]
State = Literal["pending", "approved", "denied", "used"]
Approver = Callable[[PendingConfirmation], bool | Awaitable[bool]]
Channel = Literal["elicitation", "console", "terminal", "host"]
"""Where an approval comes from: the MCP client's own question (elicitation), the operator
console, a terminal (`gateway approve`, the prompt of `gateway invoke` and `gateway chat`), or a
host application's approver callback or `Gateway.approve` call."""

CHANNELS: tuple[Channel, ...] = ("elicitation", "console", "terminal", "host")
DEFAULT_APPROVERS: tuple[Channel, ...] = ("console", "terminal", "host")
"""Not elicitation: there the client that made the call answers its own question."""
SWEEP_SECONDS = 5.0
"""How often at most a gate looks for held calls that expired unanswered (`ConfirmationGate.sweep`)."""
DEFAULT_TTL_SECONDS = 300.0
DEFAULT_MAX_PREVIEW_BYTES = 8192
DESCRIBE_TIMEOUT_SECONDS = 10.0
_MAX_DESCRIBED_LINES = 20
Describer = Callable[[], Awaitable[Sequence[str]]]
"""What a tool's `describe` hook says of one call, ready to await (see `describe_call`)."""


@dataclass(frozen=True)
class DecidedBy:
    """Who approved or declined a pending call: the channel, and the operator when known.

    "model" is recorded, never configured: in the opt-in "model" mode the model confirms by
    re-sending the pending id. "plan" is recorded too: a write a person approved as part of the plan
    `plan` (whose decision lines in the audit log say who); and "rule": a call the standing
    approval `rule` let through (`rules.py`), `operator` being who made the rule; "request": a
    rule a model asked for (`rule_requests.py`), made once a person approved the request.

    `credential` is the principal of the credential that decided, when one did (a bearer token at
    the console): the gate refuses an approval from the principal that made the call.
    """

    channel: Channel | Literal["model", "plan", "rule", "request"]
    operator: str | None = None
    credential: str | None = None
    plan: str | None = None
    rule: str | None = None

    def as_json(self) -> dict[str, str | None]:
        """As the audit log records it."""
        recorded = {"channel": self.channel, "operator": self.operator}
        if self.plan is not None:
            recorded["plan"] = self.plan
        if self.rule is not None:
            recorded["rule"] = self.rule
        return recorded


HOST = DecidedBy("host")


class ApprovalRefused(UserError):
    """An approval the gate does not take: a channel not allowed, or the caller approving itself."""


class ProgramEnded(ApprovalRefused):
    """The call's paused program ended with its process (`holders.py`): nothing will ever run it."""


def decider_of(approver: object) -> DecidedBy:
    """Who an approver callback speaks for: its `decided_by` attribute, else the host."""
    found = getattr(approver, "decided_by", None)
    return found if isinstance(found, DecidedBy) else HOST


@dataclass(frozen=True)
class Record:
    """A stored confirmation: the public pending view plus its binding and state."""

    pending: PendingConfirmation
    binding: str
    state: State
    counted: tuple[tuple[str, str, float, float], ...] = ()
    """The rate-limit counters the call was counted against when it was held (key, kind, a, b), given
    back when it never runs (`ConfirmationGate.unused`)."""
    counted_at: float = 0.0


class ConfirmationStore(Protocol):
    """Where pending confirmations live. Swappable so several processes can share them.

    A store that does I/O names the errors that mean it is not answering in `unavailable` (a class
    attribute; none for one in memory): the gate then calls it off the event loop, and a call that
    needs it is refused with `confirmation_unavailable` instead of hanging or crashing.
    """

    def put(self, record: Record) -> None: ...

    def get(self, pending_id: str) -> Record | None: ...

    def transition(self, pending_id: str, from_states: tuple[State, ...], to: State) -> Record | None:
        """Atomically move a record between states; None when it was not in `from_states`."""
        ...

    def pending(self) -> list[Record]: ...


class StoreUnavailable(Exception):
    """The confirmation store did not answer (its `unavailable` errors): nothing was decided."""


class MemoryConfirmationStore:
    """In-process store, safe across threads."""

    def __init__(self) -> None:
        self._records: dict[str, Record] = {}
        self._rules: dict[str, str] = {}  # standing approvals (`rules.py`), as their JSON
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

    def add_rule(self, rule_id: str, expires_at: float, text: str) -> None:
        with self._lock:
            self._rules[rule_id] = text

    def rule_texts(self) -> list[str]:
        with self._lock:
            return list(self._rules.values())

    def revoke_rule(self, rule_id: str) -> bool:
        with self._lock:
            return self._rules.pop(rule_id, None) is not None


@dataclass(frozen=True)
class Proceed:
    """Run the call. `approved` says whether a confirmation was consumed for it."""

    approved: bool = False
    decided_by: DecidedBy | None = None


@dataclass(frozen=True)
class NeedsConfirmation:
    pending: PendingConfirmation


@dataclass(frozen=True)
class Refused:
    code: ErrorCode
    message: str
    next_step: str
    decided_by: DecidedBy | None = None

    @property
    def outcome(self) -> Literal["declined", "refused"]:
        """How the audit log records it: a person's no, or the gate's."""
        return "declined" if self.code == "declined" else "refused"


Decision = Proceed | NeedsConfirmation | Refused


def canonical_json(value: Mapping[str, Any]) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def preview(tool: ToolDefinition, params: Mapping[str, Any], described: Sequence[str] = ()) -> str:
    """A human-readable line saying exactly what will run: every value in full, escaped.

    `described` (what the tool's `describe` hook said, e.g. an event's title for its id) follows.
    """
    values = []
    for key, value in params.items():
        if value is None or value in ([], {}):
            continue
        values.append(f"{key}={json.dumps(value, ensure_ascii=False, default=str)}")
    args = ", ".join(values) or "no parameters"
    about = f" ({'; '.join(line.strip() for line in described if line.strip())})" if described else ""
    return shown(f"{tool.summary.rstrip('.')} [{tool.name}] with {args}{about}")


async def describe_call(tool: ToolDefinition, params: BaseModel, ctx: ToolContext) -> Sequence[str]:
    """What the tool's `describe` hook says of this call, for the approver; nothing when it fails.

    A failing or slow hook costs only the description: the approver still sees the raw values.
    """
    hook = tool.describe
    if hook is None:
        return ()
    try:
        if inspect.iscoroutinefunction(hook):
            lines = await asyncio.wait_for(hook(params, ctx), DESCRIBE_TIMEOUT_SECONDS)
        else:
            lines = await asyncio.wait_for(asyncio.to_thread(hook, params, ctx), DESCRIBE_TIMEOUT_SECONDS)
        return [lines] if isinstance(lines, str) else [str(line) for line in lines][:_MAX_DESCRIBED_LINES]
    except ToolFailed as exc:  # an unknown id, say: the approver reads why (the call will fail too)
        return [f"could not be looked up: {exc.message}"]
    except Exception:
        log.warning("the describe hook of %s failed; the approver sees the raw values", tool.name)
        return ()


def too_large_to_show(tool: ToolDefinition, size: int, limit: int) -> Refused:
    return Refused(
        "too_large_to_confirm",
        f"The parameters of {tool.name} are too large to be shown to the person who approves it "
        f"({size} bytes of preview; the limit is {limit}).",
        "Make the call smaller (shorter text, fewer items, or several calls) so it can be approved in full.",
    )


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
        approvers: Collection[Channel] = DEFAULT_APPROVERS,
        max_preview_bytes: int = DEFAULT_MAX_PREVIEW_BYTES,
        always_confirm: Collection[str] = (),
    ) -> None:
        self.mode: Mode = mode
        self.always_confirm: tuple[str, ...] = tuple(always_confirm)
        """Tool names (or fnmatch patterns) no standing approval ever applies to (`rules.py`)."""
        self.approver = approver
        self.approvers: frozenset[Channel] = frozenset(approvers)
        self.max_preview_bytes = max_preview_bytes
        self.ttl_seconds = ttl_seconds
        self.store: ConfirmationStore = store or MemoryConfirmationStore()
        self._secret = secret or secrets.token_bytes(32)
        self._clock = clock
        self.unused: Callable[[Record], None] = lambda record: None
        """Called once for each held call that will never run (declined, or expired before it was
        redeemed): the Gateway gives back what it counted against its rate limits and quotas."""
        self._swept = -math.inf

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
        describe: Describer | None = None,
        counted: tuple[tuple[str, str, float, float], ...] = (),
        counted_at: float = 0.0,
        plan: InPlan | None = None,
    ) -> Decision:
        """Whether the call may run now. `counted`: what the limits counted the call against (kept
        with a held call, given back if it never runs). `plan`: the plan the call's program draws
        (the call is held, nobody is asked) or runs (an approved write of it proceeds). A store that
        does not answer refuses the call (`confirmation_unavailable`): nothing runs without a
        decision on record.

        Within a plan, a tool that is not read-only is a write even when it needs no approval on
        its own (creating an event, a draft): held while the plan is drawn, and run once it is
        approved, or freely when the plan never held it."""
        if not tool.is_destructive and (plan is None or tool.read_only):
            return Proceed()
        try:
            return await self._check(
                tool, params, principal, confirmation, session, describe, counted, counted_at, plan
            )
        except StoreUnavailable as exc:
            log.warning("the confirmation store is not answering; %s was refused: %s", tool.name, exc)
            return Refused(
                "confirmation_unavailable",
                f"{tool.name} needs an approval, and the approvals store is not answering: nothing was run.",
                "Try again in a minute; if it keeps failing, tell the user.",
            )

    async def _io(self, step: Callable[..., _T], *args: Any) -> _T:
        """`step(*args)` (store work): at once for a store in memory, else off the event loop, so a
        slow or stalled store never holds up the other calls; its `unavailable` errors become
        `StoreUnavailable`."""
        failures: tuple[type[BaseException], ...] = getattr(self.store, "unavailable", ())
        if not failures:
            return step(*args)
        try:
            return await asyncio.to_thread(step, *args)
        except failures as exc:
            raise StoreUnavailable(f"{type(exc).__name__}: {exc}") from exc

    async def _check(  # noqa: PLR0917 (check's arguments, passed on)
        self,
        tool: ToolDefinition,
        params: Mapping[str, Any],
        principal: Principal,
        confirmation: str | None,
        session: str | None,
        describe: Describer | None,
        counted: tuple[tuple[str, str, float, float], ...],
        counted_at: float,
        plan: InPlan | None,
    ) -> Decision:
        if self.mode == "deny" and tool.is_destructive:
            return Refused(
                "destructive_disabled",
                f"{tool.name} changes or removes data irreversibly and destructive tools are disabled here.",
                "Tell the user this action is not available; do not retry it.",
            )
        binding = self._binding(tool, params, principal)
        if confirmation is not None:
            return await self._io(self._redeem, confirmation, binding)
        if plan is not None and not plan.drawing:  # a write of an approved plan, or one outside it
            carried = await self._io(self._carried, plan, binding)
            if carried is not None:
                return carried
            if not tool.is_destructive:  # outside the plan, it needs no approval of its own
                return Proceed()
        if plan is None or not plan.drawing:  # a drawn plan's writes are held, never let through
            rule = await self._io(self._standing, tool, params, principal, session)
            if rule is not None:
                operator = rule.created_by.get("operator")
                return Proceed(approved=True, decided_by=DecidedBy("rule", operator, rule=rule.rule_id))
        shown = preview(tool, params, await describe() if describe is not None else ())
        if len(shown.encode()) > self.max_preview_bytes:  # refused rather than cut: nothing runs unseen
            return too_large_to_show(tool, len(shown.encode()), self.max_preview_bytes)
        pending = PendingConfirmation(
            pending_id=secrets.token_hex(16),  # hex: never read as an option (`gateway approve ID`)
            tool=tool.name,
            preview=shown,
            parameters=dict(params),
            principal=principal.id,
            expires_at=self._clock() + self.ttl_seconds,
            agent=principal.agent,
            session=session,
            toolsets=tuple(sorted(principal.toolsets)),
            plan=plan.plan_id if plan is not None and plan.drawing else None,
        )
        await self._io(self.store.put, Record(pending, binding, "pending", counted, counted_at))
        if pending.plan is not None:  # a write of the plan being drawn: decided with the others
            return NeedsConfirmation(pending)
        decider = decider_of(self.approver)
        if self.approver is None or not self.allows(decider.channel):  # waits for an allowed channel
            return NeedsConfirmation(pending)
        answer = self.approver(pending)
        if inspect.isawaitable(answer):
            answer = await answer
        if answer is True:
            used = await self._io(self.store.transition, pending.pending_id, ("pending",), "used")
            if used is not None:
                return Proceed(approved=True, decided_by=decider)
        await self._io(self._never_runs, pending.pending_id, ("pending",))
        return Refused(
            "declined",
            "The user declined this action.",
            "Do not retry; ask the user what to do instead.",
            decided_by=decider,
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
        if record.pending.plan is not None:  # a plan, or one of its writes: they run as one program
            return Refused(
                "confirmation_invalid",
                "That id is a plan's, or one write of a plan: it runs only with its program.",
                "Call run_code with confirmation set to the plan's pending_id once the user approved it.",
            )
        if not hmac.compare_digest(record.binding, binding):
            return Refused(
                "confirmation_mismatch",
                "That confirmation was given for a different tool, parameters or user.",
                "Call invoke_tool again without 'confirmation' to get an approval for these exact parameters.",
            )
        if (ended := why_ended(self.store, pending_id)) is not None:  # its paused program is gone
            return Refused("program_ended", f"{ended[0].upper()}{ended[1:]}.", "Do not retry; tell the user.")
        if self._clock() > record.pending.expires_at:
            self._never_runs(pending_id, ("pending", "approved"))
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
            # Still pending when read: nobody but the model said yes ("model" mode).
            model = DecidedBy("model", record.pending.principal) if record.state == "pending" else None
            return Proceed(approved=True, decided_by=model)
        return Refused(
            "confirmation_pending",
            "The user has not approved this action yet.",
            "Show the user the preview and wait for their approval before calling again with this id.",
        )

    def _carried(self, plan: InPlan, binding: str) -> Decision | None:
        """The decision on a write of the plan being run: one of its writes a person approved for
        this tool, these canonical arguments and this principal (used once, and only in the order
        the program drew them: a write made after a later one ran is not the plan's), or one they
        declined; None when no write of the plan is this call (it is asked about as usual)."""
        records = [(n, self.store.get(pending_id)) for n, pending_id in enumerate(plan.writes)]
        ours = [(n, r) for n, r in records if r is not None and r.pending.plan == plan.plan_id]
        ran = max((n for n, r in ours if r.state == "used"), default=-1)  # the last write that ran
        declined = undecided = False
        for n, record in ours:
            if not hmac.compare_digest(record.binding, binding):
                continue
            if record.state == "denied":
                declined = True
            elif record.state == "pending":
                undecided = True
            elif (
                record.state == "approved"
                and n > ran
                and self._clock() <= record.pending.expires_at
                and self.store.transition(record.pending.pending_id, ("approved",), "used")
            ):
                self._give_back(record)  # this call was counted as it came; the held one is not
                return Proceed(approved=True, decided_by=DecidedBy("plan", plan=plan.plan_id))
        if declined:
            return Refused(
                "declined",
                "The user declined this write of the plan.",
                "Do not retry; ask the user what to do instead.",
            )
        if undecided:  # the plan was approved while its writes were still being decided
            return Refused(
                "confirmation_pending",
                "The user has not decided on this write of the plan yet.",
                "Wait for the user's decision on the plan, then run it again.",
            )
        return None

    def _standing(
        self, tool: ToolDefinition, params: Mapping[str, Any], principal: Principal, session: str | None
    ) -> Rule | None:
        """The standing approval in force that lets this call through, if any (`rules.py`)."""
        if not tool.is_destructive or always_confirmed(tool.name, self.always_confirm):
            return None
        rules = read_rules(self.store, self._clock())
        return matching(rules, tool, params, principal, session) if rules else None

    def add_rule(self, rule: Rule) -> None:
        """Keep a standing approval (made and checked by `rules.make_rule`).

        Raises:
            UserError: the store keeps no standing approvals (a host's own store).
        """
        if not isinstance(self.store, RuleStore):
            raise UserError("this gateway's confirmation store keeps no standing approvals")
        self.store.add_rule(rule.rule_id, rule.expires_at, rule.to_json())

    def rules(self) -> list[Rule]:
        """The standing approvals in force, the one expiring first first."""
        return read_rules(self.store, self._clock())

    def revoke_rule(self, rule_id: str) -> Rule | None:
        """Remove a standing approval at once (every replica reads the same store); None if unknown."""
        found = next((r for r in self.rules() if r.rule_id == rule_id), None)
        if found is None or not isinstance(self.store, RuleStore) or not self.store.revoke_rule(rule_id):
            return None
        return found

    def bind_plan(self, parts: Mapping[str, Any]) -> str:
        """The binding of a plan to `parts` (its program, principal, roles, tools), by this gate's secret."""
        return hmac.new(self._secret, canonical_json({"plan": parts}).encode(), hashlib.sha256).hexdigest()

    def now(self) -> float:
        """The gate's clock, which pending confirmations expire by."""
        return self._clock()

    def allows(self, channel: str) -> bool:
        """Whether approvals from `channel` are taken (`[confirmation] approvers`)."""
        return channel in self.approvers

    def approve(self, pending_id: str, *, decided_by: DecidedBy = HOST) -> PendingConfirmation | None:
        """Host side: approve a pending call. None when it is unknown, expired or already decided.

        Raises:
            ApprovalRefused: `decided_by`'s channel may not approve here, its credential is the
                principal that made the call, or the call's paused program ended with its process.
        """
        self.may_approve(None, decided_by)  # the channel first
        if (ended := why_ended(self.store, pending_id)) is not None:
            raise ProgramEnded(ended)
        record = self.store.get(pending_id)
        if record is None or self._clock() > record.pending.expires_at:
            return None
        self.may_approve(record, decided_by)
        updated = self.store.transition(pending_id, ("pending",), "approved")
        return updated.pending if updated else None

    def may_approve(self, record: Record | None, decided_by: DecidedBy) -> None:
        """Refuse an approval by `decided_by` of `record` (None: a call not known or expired).

        Raises:
            ApprovalRefused: the channel may not approve here, or its credential made the call.
        """
        if not self.allows(decided_by.channel):
            allowed = ", ".join(c for c in CHANNELS if c in self.approvers) or "none"
            raise ApprovalRefused(
                f"approvals from the {decided_by.channel} are not allowed here "
                f"([confirmation] approvers: {allowed})"
            )
        if (
            record is not None
            and decided_by.credential is not None
            and decided_by.credential == record.pending.principal
        ):
            raise ApprovalRefused(
                f"{decided_by.credential} made this call, so it cannot approve it: "
                "another operator must (a call is never approved by the credential that made it)"
            )

    def deny(self, pending_id: str) -> bool:
        """Host side: decline a pending call (any channel may decline)."""
        return self._never_runs(pending_id, ("pending",))

    def withdraw(self, pending_id: str) -> bool:
        """Decline a call approved but never made (a plan's write its program did not make again)."""
        return self._never_runs(pending_id, ("approved",))

    async def sweep(self, every: float = SWEEP_SECONDS) -> None:
        """Decline the held calls that expired unanswered (at most once every `every` seconds), so that
        what they counted is given back (`unused`) even when nobody tries to redeem them.

        The store is read off the event loop, as every call's store work is; a store that does not
        answer costs this sweep (the next one, `every` seconds on, tries again), never the call
        that was about to be counted.
        """
        now = self._clock()
        if now - self._swept < every:
            return
        self._swept = now
        try:
            await self._io(self._decline_expired, now)
        except StoreUnavailable as exc:
            log.warning(
                "the confirmation store is not answering; expired held calls wait for the next sweep: %s", exc
            )

    def _decline_expired(self, now: float) -> None:
        for record in self.store.pending():
            if record.pending.expires_at < now:
                self._never_runs(record.pending.pending_id, ("pending",))

    def _never_runs(self, pending_id: str, from_states: tuple[State, ...]) -> bool:
        """Mark the call declined; the one process that does so gives back what it counted."""
        record = self.store.transition(pending_id, from_states, "denied")
        if record is None:
            return False
        self._give_back(record)
        return True

    def _give_back(self, record: Record) -> None:
        """Give back what the held call counted against the limits (it never runs as held)."""
        if record.counted:
            try:
                self.unused(record)
            except Exception:  # a limit's store that fails costs a refund, never the decision
                log.warning(
                    "could not give back what %s counted against its limits",
                    record.pending.pending_id,
                    exc_info=True,
                )

    def pending(self) -> list[PendingConfirmation]:
        """Calls waiting for the host, oldest first, unexpired."""
        now = self._clock()
        records = [r.pending for r in self.store.pending() if r.pending.expires_at >= now]
        return sorted(records, key=lambda p: p.expires_at)

"""Standing approvals: a person's rule that lets a tool's calls through without asking, until it expires.

A rule names one destructive tool, one principal (and, if it says so, one session of it), an expiry,
and constraints on the call's validated, canonical arguments: `equals` a value, `one_of` a set of
values, `domain` (every address, or every item of a list of them, is at that domain or below it)
and `prefix` (the text, or every item of a list of texts, starts with it). Arguments a rule does
not name are free, and a rule's description says which. Only a person makes a rule, at the console
or a terminal (`gateway rules add`), never a model: a model may only ask for one, which a person
then reads like any pending call. The credential a rule is for cannot make it.

A rule never widens what its principal may do: it is consulted by the confirmation gate, after the
policy, validation, the tool's permission hook and the limits have let the call through, in place
of asking a person. It never applies to a tool the operator marks `[confirmation] always_confirm`,
nor to the writes of a plan being drawn (those are held, never run). Each call it lets through has
its `approved` audit line with `decided_by` `{"channel": "rule", "rule": ID}`.

Rules live in the confirmation store (memory, SQLite or Redis), so replicas share them and a
revocation holds at once on all of them: every call reads the rules afresh.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import re
import secrets
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from ..context import Principal
from ..definition import ToolDefinition
from ..errors import UserError
from ..rendering import shown

if TYPE_CHECKING:
    from ..audit import Auditor, Outcome

Kind = Literal["equals", "one_of", "domain", "prefix"]
KINDS: tuple[Kind, ...] = ("equals", "one_of", "domain", "prefix")


@runtime_checkable
class RuleStore(Protocol):
    """A confirmation store that keeps standing approvals too (each rule as its JSON text)."""

    def add_rule(self, rule_id: str, expires_at: float, text: str) -> None: ...

    def rule_texts(self) -> list[str]:
        """Every rule not yet past its expiry."""
        ...

    def revoke_rule(self, rule_id: str) -> bool:
        """Remove the rule; whether it was there."""
        ...


@dataclass(frozen=True)
class Constraint:
    """What one argument must be for a rule to let the call through."""

    param: str
    kind: Kind
    value: Any

    def allows(self, arguments: Mapping[str, Any]) -> bool:
        if self.param not in arguments:
            return False
        value = arguments[self.param]
        if self.kind == "equals":
            return bool(value == self.value)
        if self.kind == "one_of":
            return any(value == v for v in self.value)
        items = value if isinstance(value, list) else [value]  # a list: every item (an empty one holds)
        if not all(isinstance(item, str) for item in items):
            return False
        if self.kind == "prefix":
            return all(item.startswith(self.value) for item in items)
        return all(_at_domain(item, self.value) for item in items)

    def describe(self) -> str:
        if self.kind == "equals":
            return f"{self.param} = {json.dumps(self.value, ensure_ascii=False)}"
        if self.kind == "one_of":
            return f"{self.param} one of {', '.join(json.dumps(v, ensure_ascii=False) for v in self.value)}"
        if self.kind == "prefix":
            return f"{self.param} starting with {json.dumps(self.value, ensure_ascii=False)}"
        return f"{self.param} at {self.value}"


_HOST = r"[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*"
_BARE_ADDRESS = re.compile(rf"[A-Za-z0-9.!#$%&*+/=?^_`{{|}}~-]+@({_HOST})")
_BARE_HOST = re.compile(_HOST)


def _at_domain(value: str, domain: str) -> bool:
    """Whether `value`, a bare email address or a host name, is at `domain` or one of its subdomains.

    Only a bare address counts (`local@host`, the local part of plain characters): a display name,
    angle brackets, quotes, a comment, a second address or any space makes it no address at all, so
    a value a mail library would read as another recipient (`"<a@evil.org>@example.com"`,
    `"a@evil.org, b@example.com"`) never passes for one at the domain.
    """
    if (address := _BARE_ADDRESS.fullmatch(value)) is not None:
        host = address.group(1)
    elif _BARE_HOST.fullmatch(value) is not None:
        host = value
    else:
        return False
    host, domain = host.lower(), domain.lower().strip(".")
    return bool(domain) and (host == domain or host.endswith("." + domain))


@dataclass(frozen=True)
class Rule:
    """A standing approval: `tool` for `principal` (in `session`, when set) while the constraints hold."""

    rule_id: str
    tool: str
    principal: str
    expires_at: float
    constraints: tuple[Constraint, ...] = ()
    session: str | None = None
    created_by: Mapping[str, str | None] = field(default_factory=dict)
    created_at: float = 0.0
    free: tuple[str, ...] = ()  # the tool's parameters the rule leaves unconstrained, when made
    agent: str | None = None  # only this agent of the principal (None: any)
    fingerprint: str = ""  # the tool's definition when the rule was made: a changed tool voids it

    def covers(
        self, tool: str, arguments: Mapping[str, Any], principal: str, agent: str | None, session: str | None
    ) -> bool:
        """Whether this rule lets the call through (its expiry and the tool's fingerprint are the
        caller's to check)."""
        return (
            tool == self.tool
            and principal == self.principal
            and (self.agent is None or agent == self.agent)
            and (self.session is None or session == self.session)
            and all(c.allows(arguments) for c in self.constraints)
        )

    def describe(self) -> str:
        """One line a person reads: what the rule lets through, for whom, and what it leaves free."""
        where = "; ".join(c.describe() for c in self.constraints) or "any arguments"
        scope = self.principal + (f" (agent {self.agent})" if self.agent else "")
        scope += f" in session {self.session}" if self.session else ""
        free = f" (free: {', '.join(self.free)})" if self.free else ""
        return shown(f"{self.tool} for {scope} where {where}{free}")

    @property
    def made_by(self) -> str:
        """Who made the rule, as a person reads it: the operator, else the channel."""
        return str(self.created_by.get("operator") or self.created_by.get("channel") or "?")

    def as_view(self) -> dict[str, Any]:
        """The rule as `gateway rules --json` and the console's API show it."""
        return {
            "rule_id": self.rule_id,
            "tool": self.tool,
            "principal": self.principal,
            "agent": self.agent,
            "session": self.session,
            "expires_at": self.expires_at,
            "constraints": [{"param": c.param, "kind": c.kind, "value": c.value} for c in self.constraints],
            "free": list(self.free),
            "created_by": dict(self.created_by),
            "created_at": self.created_at,
        }

    def to_json(self) -> str:
        return json.dumps(
            {
                "rule_id": self.rule_id,
                "tool": self.tool,
                "principal": self.principal,
                "session": self.session,
                "expires_at": self.expires_at,
                "constraints": [[c.param, c.kind, c.value] for c in self.constraints],
                "created_by": dict(self.created_by),
                "created_at": self.created_at,
                "free": list(self.free),
                "agent": self.agent,
                "fingerprint": self.fingerprint,
            },
            ensure_ascii=False,
            separators=(",", ":"),
        )

    @staticmethod
    def from_json(text: str) -> Rule:
        data = json.loads(text)
        return Rule(
            rule_id=str(data["rule_id"]),
            tool=str(data["tool"]),
            principal=str(data["principal"]),
            session=data.get("session"),
            expires_at=float(data["expires_at"]),
            constraints=tuple(Constraint(str(p), _kind(k), v) for p, k, v in data.get("constraints", ())),
            created_by=dict(data.get("created_by") or {}),
            created_at=float(data.get("created_at", 0.0)),
            free=tuple(data.get("free", ())),
            agent=data.get("agent"),
            fingerprint=str(data.get("fingerprint", "")),
        )


def _kind(kind: str) -> Kind:
    if kind not in KINDS:
        raise ValueError(f"unknown constraint kind {kind!r}")
    return kind


REQUEST_TOOL = "gateway_request_standing_approval"
"""The tool a model asks for a rule with (`rule_requests.py`): never itself covered by a rule."""


def audit_rule(auditor: Auditor, rule: Rule, outcome: Outcome, decided_by: Mapping[str, str | None]) -> None:
    """The audit line of a rule made or revoked: its id as the call id, what it lets through, who."""
    auditor.log(
        principal=rule.principal,
        session=rule.session or "host",
        call_id=rule.rule_id,
        tool=rule.tool,
        outcome=outcome,
        params={"rule": rule.describe(), "expires_at": rule.expires_at},
        decided_by=decided_by,
    )


def new_rule_id() -> str:
    return secrets.token_hex(8)


def always_confirmed(tool: str, patterns: Collection[str]) -> bool:
    """Whether `tool` is asked about at every call: the operator marked it (`[confirmation]
    always_confirm`), or it is the tool a model asks for rules with."""
    return tool == REQUEST_TOOL or any(fnmatch.fnmatchcase(tool, pattern) for pattern in patterns)


def read_rules(store: object, now: float) -> list[Rule]:
    """The rules in `store` still in force at `now` (none in a store that keeps none; a rule that
    cannot be read is skipped, never applied)."""
    if not isinstance(store, RuleStore):
        return []
    found = []
    for text in store.rule_texts():
        try:
            rule = Rule.from_json(text)
        except (ValueError, KeyError, TypeError):
            continue
        if rule.expires_at >= now:
            found.append(rule)
    return sorted(found, key=lambda r: r.expires_at)


def matching(
    rules: Iterable[Rule],
    tool: ToolDefinition,
    arguments: Mapping[str, Any],
    principal: Principal,
    session: str | None,
) -> Rule | None:
    """The first rule (soonest to expire) that lets this call through, made for the tool as it is now."""
    covering = [r for r in rules if r.covers(tool.name, arguments, principal.id, principal.agent, session)]
    now = definition_fingerprint(tool) if covering else ""
    return next((r for r in covering if r.fingerprint == now), None)


def definition_fingerprint(tool: ToolDefinition) -> str:
    """What an approval of a tool's calls depends on in its definition: its words, flags and schema
    (a new parameter would otherwise be left free by a rule that never named it)."""
    parts = {
        "name": tool.name,
        "summary": tool.summary,
        "description": tool.description,
        "destructive": tool.is_destructive,
        "read_only": tool.read_only,
        "schema": tool.json_schema,
    }
    text = json.dumps(parts, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def parse_constraints(specs: Sequence[tuple[Kind, str]]) -> tuple[Constraint, ...]:
    """Constraints from `(kind, "param=value")` pairs as a person writes them: `equals` takes a
    JSON value or else the text itself, `one_of` comma-separated values, `domain` and `prefix` text.

    Raises:
        UserError: a spec with no `=`, or an empty parameter name or value.
    """
    constraints = []
    for kind, spec in specs:
        param, sep, raw = spec.partition("=")
        param = param.strip()
        if not sep or not param or not raw:
            raise UserError(f"--{kind.replace('_', '-')} {spec!r}: write it as PARAMETER=VALUE")
        value: Any
        if kind == "equals":
            value = _json_or_text(raw)
        elif kind == "one_of":
            value = [_json_or_text(v.strip()) for v in raw.split(",") if v.strip()]
        elif kind == "domain":
            value = raw.strip().lstrip("@").lower()
        else:
            value = raw
        constraints.append(Constraint(param, kind, value))
    return tuple(constraints)


def _json_or_text(raw: str) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        return raw


def make_rule(
    tool: ToolDefinition | None,
    name: str,
    *,
    principal: str,
    expires_at: float,
    now: float,
    constraints: Sequence[Constraint] = (),
    session: str | None = None,
    agent: str | None = None,
    created_by: Mapping[str, str | None],
    credential: str | None = None,
    always_confirm: Collection[str] = (),
) -> Rule:
    """A new rule, checked: the tool exists and asks for approval, the operator does not always
    want to be asked about it, each constrained parameter is the tool's, the expiry is ahead, and
    the credential making it (`credential`) is not the one it is for. `created_by`: who made it, as
    the audit log records a decision.

    Raises:
        UserError: any of those.
    """
    if tool is None:
        raise UserError(f"there is no tool named {shown(name)!r} in this gateway's catalog")
    if tool.name == REQUEST_TOOL:  # a rule for it would let a model make rules without asking
        raise UserError(f"{tool.name} is asked about at every call: no standing approval applies to it")
    if not tool.is_destructive:
        raise UserError(
            f"{tool.name} never waits for an approval: a standing approval is for destructive tools"
        )
    if always_confirmed(tool.name, always_confirm):
        raise UserError(
            f"{tool.name} is marked [confirmation] always_confirm: every call of it is asked about, "
            "and no standing approval applies to it"
        )
    params = list(tool.json_schema.get("properties", {}))
    if unknown := [c.param for c in constraints if c.param not in params]:
        raise UserError(
            f"{tool.name} has no parameter {', '.join(map(repr, unknown))}; its parameters: {', '.join(params)}"
        )
    if empty := [
        c.param for c in constraints if c.kind in ("domain", "prefix") and not str(c.value).strip(".")
    ]:
        raise UserError(f"an empty domain or prefix holds for anything: give a value for {', '.join(empty)}")
    if expires_at <= now:
        raise UserError("a standing approval needs an expiry ahead of now (--for 30m, or --until 18:00)")
    if credential is not None and credential == principal:
        raise UserError(f"{principal} cannot make a standing approval for itself: another operator must")
    constrained = {c.param for c in constraints}
    return Rule(
        rule_id=new_rule_id(),
        tool=tool.name,
        principal=principal,
        expires_at=expires_at,
        constraints=tuple(constraints),
        session=session,
        created_by=dict(created_by),
        created_at=now,
        free=tuple(p for p in params if p not in constrained),
        agent=agent,
        fingerprint=definition_fingerprint(tool),
    )

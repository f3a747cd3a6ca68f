"""A model asking for a standing approval: a structured request a person reads and decides, never a grant.

With `[confirmation] rule_requests = true`, the catalog holds one more tool,
`gateway_request_standing_approval`: the tool a rule would be for, how long, constraints on its
arguments and a reason. The request is itself a destructive call: the confirmation gate holds it,
and the person approving sees the rule it would make (what it lets through, for whom, what it
leaves free) exactly as `gateway rules` would list it. Only once a person approved it through an
allowed channel does the call run and make the rule, for the caller itself (never another
principal), within the caller's rights (the tool must be one the caller may see and call, and its
calls still pass every check). No standing approval ever applies to this tool, so a rule can never
let a model make rules.
"""

from __future__ import annotations

from typing import Any, Protocol

from pydantic import BaseModel, Field

from ..audit import Auditor
from ..context import Principal, ToolContext
from ..definition import PARAMS_CONFIG, ToolDefinition, tool
from ..errors import ToolFailed, UserError
from .confirmation import ConfirmationGate, DecidedBy
from .rules import REQUEST_TOOL, Constraint, Rule, audit_rule, make_rule

MAX_MINUTES = 8 * 60
_REQUESTED = DecidedBy("request").as_json()
"""Who made a requested rule: a person's approval of the request, whose own audit line says who."""


class Maker(Protocol):
    """What a request needs of the gateway (the `Gateway`): its gate and audit log, and a tool as
    the caller may see it."""

    gate: ConfirmationGate
    auditor: Auditor

    def lookup(self, name: str, principal: Principal) -> ToolDefinition | None: ...


class RuleRequests:
    """The resource the request tool finds its gateway through (bound once the gateway exists)."""

    def __init__(self) -> None:
        self.maker: Maker | None = None


class RequestParams(BaseModel):
    model_config = PARAMS_CONFIG

    tool: str = Field(max_length=200, description="The destructive tool the rule would let through.")
    minutes: int = Field(30, ge=1, le=MAX_MINUTES, description="How long the rule would last.")
    equals: dict[str, Any] = Field(default_factory=dict, description="Arguments that must be exactly these.")
    one_of: dict[str, list[Any]] = Field(
        default_factory=dict, description="Arguments that must be one of these."
    )
    domain: dict[str, str] = Field(
        default_factory=dict,
        description="Arguments whose every address must be at this domain, e.g. {'to': 'example.com'}.",
    )
    prefix: dict[str, str] = Field(
        default_factory=dict, description="Arguments that must start with this text."
    )
    reason: str = Field(max_length=300, description="Why, in a sentence the user reads.")


def _proposed(params: RequestParams, ctx: ToolContext) -> Rule:
    """The rule the request would make; raises ToolFailed with what the model must change."""
    requests = ctx.require(RuleRequests)
    maker = requests.maker
    if maker is None or maker.gate.mode != "host":  # in "model" mode the model would approve its own
        raise ToolFailed("unavailable", "Standing approvals cannot be requested here.")
    if params.tool == REQUEST_TOOL:
        raise ToolFailed("invalid", "A standing approval cannot be for requesting standing approvals.")
    constraints = [
        *(Constraint(p, "equals", v) for p, v in params.equals.items()),
        *(Constraint(p, "one_of", v) for p, v in params.one_of.items()),
        *(Constraint(p, "domain", v.strip().lstrip("@").lower()) for p, v in params.domain.items()),
        *(Constraint(p, "prefix", v) for p, v in params.prefix.items()),
    ]
    now = maker.gate.now()
    try:
        return make_rule(
            maker.lookup(params.tool, ctx.principal),  # hidden from the caller: as if it did not exist
            params.tool,
            principal=ctx.principal.id,
            expires_at=now + params.minutes * 60,
            now=now,
            constraints=constraints,
            agent=ctx.principal.agent,
            created_by=_REQUESTED,
            always_confirm=maker.gate.always_confirm,
        )
    except UserError as exc:
        raise ToolFailed("invalid", f"{exc}.") from None


def _checked(params: BaseModel, ctx: ToolContext) -> str | None:
    """Refused before anyone is asked: a request no person could approve (why, for the model)."""
    assert isinstance(params, RequestParams)
    try:
        _proposed(params, ctx)
    except ToolFailed as exc:
        return exc.message
    return None


def _describe(params: RequestParams, ctx: ToolContext) -> list[str]:
    """What the person approving reads: the rule as `gateway rules` would list it, and the reason."""
    rule = _proposed(params, ctx)
    return [
        f"it would let through {rule.describe()} for {params.minutes} minutes",
        f"reason: {params.reason}",
    ]


@tool(
    category="gateway",
    action="create",  # it creates a request, which a person's approval turns into a rule
    name=REQUEST_TOOL,
    summary="Ask the user for a standing approval of one destructive tool's calls, for a while.",
    destructive=True,
    permission=_checked,
    describe=_describe,
    examples=["ask the user to let me send these emails without asking each time"],
)
def request_standing_approval(params: RequestParams, ctx: ToolContext) -> dict[str, Any]:
    """Ask the user for a standing approval: for a while, calls of one destructive tool on the
    arguments named here run without asking each time. The user reads the rule and decides; nothing
    is granted until they approve."""
    rule = _proposed(params, ctx)
    maker = ctx.require(RuleRequests).maker
    assert maker is not None  # checked by _proposed
    maker.gate.add_rule(rule)
    audit_rule(maker.auditor, rule, "rule_added", _REQUESTED)
    return {"rule_id": rule.rule_id, "rule": rule.describe(), "expires_in_minutes": params.minutes}

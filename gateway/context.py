"""What every call carries (the context) and what it returns (the result). Both immutable."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal, TypeVar

from .errors import ErrorCode, UserError

T = TypeVar("T")

_EMPTY: Mapping[Any, Any] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class Principal:
    """Who is calling: a user or service identity, the roles it holds, and the agent acting for it.

    `toolsets`: the named toolsets the caller is confined to (gateway.named_toolsets): a tool must be
    in every one of them to be seen (empty: no narrowing beyond the policy).
    """

    id: str = "local"
    roles: frozenset[str] = frozenset()
    agent: str | None = None
    toolsets: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class InPlan:
    """The plan a program's calls belong to (`gateway.gate.plans`), set by the gateway, never by a model.

    Drawn (`drawing`): each destructive call is held with its preview and not run, nor asked about
    one at a time. Run: the gate lets through the `writes` (their pending ids) a person approved,
    each once, for the same tool and canonical arguments; any other destructive call is asked about
    as usual.
    """

    plan_id: str
    drawing: bool
    writes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ToolContext:
    """The immutable context of one call, handed to handlers and permission checks."""

    principal: Principal = Principal()
    session_id: str = "default"
    cwd: str = "."
    call_id: str = field(default_factory=lambda: os.urandom(6).hex())  # 12 hex digits, 48 random bits
    resources: Mapping[type, object] = field(default_factory=lambda: _EMPTY)
    plan: InPlan | None = None  # a call made by a program drawing a plan, or running an approved one

    def require(self, kind: type[T]) -> T:
        """The resource the host registered for `kind` (a backend, a client).

        Raises:
            UserError: the host did not provide one, a wiring mistake.
        """
        value = self.resources.get(kind)
        if value is None:
            raise UserError(f"no resource of type {kind.__name__} was provided to the gateway")
        if not isinstance(value, kind):
            raise UserError(f"resource registered for {kind.__name__} is a {type(value).__name__}")
        return value


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong with a call's arguments: where, and what."""

    loc: str
    msg: str


@dataclass(frozen=True, slots=True)
class ErrorInfo:
    """A model-facing error: a stable code, a message, the problems and one next step."""

    code: ErrorCode
    message: str
    next_step: str
    problems: tuple[Problem, ...] = ()
    suggestions: tuple[str, ...] = ()
    retry_after_seconds: int | None = None  # a limit refused the call: when one may pass


@dataclass(frozen=True, slots=True)
class PendingConfirmation:
    """A destructive call waiting for a human: what it will do and how to refer to it."""

    pending_id: str
    tool: str
    preview: str
    parameters: Mapping[str, Any]
    principal: str
    expires_at: float
    agent: str | None = None
    session: str | None = None
    toolsets: tuple[str, ...] = ()  # the named toolsets the caller was confined to, sorted (for the audit)
    plan: str | None = None
    """The plan this call is a write of (`InPlan`); on a plan's own record, its own id."""


Status = Literal["ok", "error", "confirmation_required"]


@dataclass(frozen=True, slots=True)
class ToolResult:
    """The outcome of one invocation: output or error, and how long it took."""

    tool: str
    call_id: str
    status: Status
    output: Any = None
    error: ErrorInfo | None = None
    pending: PendingConfirmation | None = None
    duration_ms: float = 0.0

    @property
    def ok(self) -> bool:
        """True when the call ran and returned output."""
        return self.status == "ok"

"""Errors, sorted by who has to act on them.

- The model can fix it (`ToolInputError` and its kin): bad arguments, unknown tool. The
  model is told exactly what to change.
- The call failed for good (`ToolFailed`): not found, conflict, refused by a permission
  check. The model should adapt, not retry the same call.
- The developer or operator made a mistake (`UserError`, `RegistrationError`,
  `ConfigError`): raised to the host, never shown to the model.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

FailureCode = Literal[
    "not_found",
    "conflict",
    "invalid",
    "permission_denied",
    "unavailable",
    "timeout",
    "declined",
    "rate_limited",
    "tool_changed",
    "not_connected",
    "internal",
]
"""Why a tool's call failed for good (`ToolFailed`): the model adapts, it does not retry unchanged."""

InputCode = Literal["invalid_arguments", "invalid_json", "unknown_tool"]
"""The model can fix the call: change what the error lists and call again."""

GateCode = Literal[
    "destructive_disabled",
    "too_large_to_confirm",
    "confirmation_invalid",
    "confirmation_mismatch",
    "confirmation_expired",
    "confirmation_used",
    "confirmation_pending",
    "confirmation_unavailable",
    "plan_changed",
]
"""The confirmation gate refused a destructive call (`declined` is a person's no, a `FailureCode`)."""

ProgramCode = Literal[
    "program_busy",
    "program_crashed",
    "program_ended",
    "program_error",
    "program_expired",
    "program_limit",
    "program_not_paused",
    "program_principal_changed",
    "program_syntax_error",
]
"""What became of a `run_code` program (docs/code-mode.md)."""

AgentCode = Literal["round_cap"]
"""The agent loop stopped a call the model asked for (the round cap was reached)."""

ErrorCode = Literal[FailureCode, InputCode, GateCode, ProgramCode, AgentCode]
"""Every code the model can read in an error; docs/errors.md tells what each asks of it."""


class GatewayError(Exception):
    """Base of every error this package raises."""


class UserError(GatewayError):
    """A developer or operator mistake. Never rendered to the model."""


class RegistrationError(UserError):
    """One or more tool definitions are invalid; every problem is listed."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = list(problems)
        lines = "\n".join(f"  - {p}" for p in self.problems)
        super().__init__(f"{len(self.problems)} problem(s) in tool definitions:\n{lines}")


class ConfigError(UserError):
    """A configuration file or value is invalid; nothing of it was applied."""

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None) -> None:
        self.path = path
        self.line = line
        where = path or "configuration"
        if line is not None:
            where = f"{where}, line {line}"
        super().__init__(f"{where}: {message}")


class ToolInputError(GatewayError):
    """Raised by a handler when the arguments are valid in shape but unusable.

    The model can fix this (for example a date it wrote that cannot be understood), so
    the message must say what to send instead.
    """

    def __init__(self, message: str, *, field: str | None = None) -> None:
        self.message = message
        self.field = field
        super().__init__(message)


class UnknownTool(ToolInputError):
    """The model named a tool that does not exist (or that it may not see)."""

    def __init__(self, name: str, suggestions: Sequence[str] = ()) -> None:
        self.name = name
        self.suggestions = tuple(suggestions)
        super().__init__(f"unknown tool {name!r}", field="tool_name")


class ToolFailed(GatewayError):
    """Raised by a handler when the call failed and retrying it unchanged will not help."""

    def __init__(self, code: FailureCode, message: str) -> None:
        self.code: FailureCode = code
        self.message = message
        super().__init__(f"{code}: {message}")


class NotFound(ToolFailed):
    """The item the call refers to does not exist."""

    def __init__(self, message: str) -> None:
        super().__init__("not_found", message)


class Conflict(ToolFailed):
    """The call clashes with the current state (already exists, changed meanwhile)."""

    def __init__(self, message: str) -> None:
        super().__init__("conflict", message)


class ToolChanged(ToolFailed):
    """The tool changed or was removed where it is defined (a fronted server) since it was found."""

    def __init__(self, message: str) -> None:
        super().__init__("tool_changed", message)


class RateLimited(ToolFailed):
    """An upstream refused the call for its own rate limit (HTTP 429); `retry_after`: its seconds, if it said."""

    def __init__(self, message: str, *, retry_after: float | None = None) -> None:
        super().__init__("rate_limited", message)
        self.retry_after = retry_after


class PermissionDenied(ToolFailed):
    """A tool's own permission check refused the call."""

    def __init__(self, message: str) -> None:
        super().__init__("permission_denied", message)

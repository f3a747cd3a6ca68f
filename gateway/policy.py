"""Who may use which tool: allow/deny rules by name pattern, category and action, scoped by role.

A denied tool is invisible: discovery does not list it, its schema is not shown, and
invoking it answers exactly as for a tool that does not exist.
"""

from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Literal

from .context import Principal
from .definition import ToolDefinition

Effect = Literal["allow", "deny"]


@dataclass(frozen=True)
class Rule:
    """One rule. Empty selectors match everything; `roles` limits whom the rule applies to.

    Attributes:
        effect: "allow" or "deny".
        names: glob patterns on tool names ("gmail_*").
        categories: categories the rule covers.
        actions: actions the rule covers.
        roles: the rule applies only to principals holding one of these roles (all when empty).
    """

    effect: Effect
    names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    actions: tuple[str, ...] = ()
    roles: tuple[str, ...] = ()

    def applies_to(self, principal: Principal) -> bool:
        return not self.roles or any(r in principal.roles for r in self.roles)

    def matches(self, tool: ToolDefinition) -> bool:
        if self.names and not any(fnmatchcase(tool.name, p) for p in self.names):
            return False
        if self.categories and tool.category not in self.categories:
            return False
        return not (self.actions and tool.action not in self.actions)


@dataclass(frozen=True)
class Policy:
    """Deny beats allow; a tool no rule mentions gets `default`."""

    rules: tuple[Rule, ...] = ()
    default: Effect = "allow"

    def allows(self, tool: ToolDefinition, principal: Principal) -> bool:
        applicable = [r for r in self.rules if r.applies_to(principal) and r.matches(tool)]
        if any(r.effect == "deny" for r in applicable):
            return False
        if any(r.effect == "allow" for r in applicable):
            return True
        return self.default == "allow"

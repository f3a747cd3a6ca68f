"""Who may use which tool: allow/deny rules by name pattern, category and action, scoped by role.

A denied tool is invisible: discovery does not list it, its schema is not shown, and
invoking it answers exactly as for a tool that does not exist. A tool may also name its own
audience (file tools do, with `roles` and `agents`); outside it, the tool is just as invisible.
So is a tool outside the named toolsets a principal is confined to (`gateway.named_toolsets`).
"""

from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Literal

from .context import Principal
from .definition import ToolDefinition
from .named_toolsets import NO_TOOLSETS, Toolsets

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
        """Whether the rule is for `principal` (no roles given: for everyone)."""
        return not self.roles or any(r in principal.roles for r in self.roles)

    def matches(self, tool: ToolDefinition) -> bool:
        """Whether `tool` is among the tools the rule names (every selector given must match)."""
        if self.names and not any(fnmatchcase(tool.name, p) for p in self.names):
            return False
        if self.categories and tool.category not in self.categories:
            return False
        return not (self.actions and tool.action not in self.actions)


@dataclass(frozen=True)
class Audience:
    """Whom a tool is for: a user holding one of `roles`, through one of `agents`. Empty: anyone."""

    roles: frozenset[str] = frozenset()
    agents: frozenset[str] = frozenset()

    def admits(self, principal: Principal) -> bool:
        """Whether `principal` has one of the roles and is one of the agents given (none given: anyone)."""
        if self.roles and not self.roles & principal.roles:
            return False
        return not self.agents or principal.agent in self.agents


def audience_of(tool: ToolDefinition) -> Audience | None:
    """The audience a tool declares for itself, if any (an `audience` attribute, as file tools carry)."""
    found = getattr(tool, "audience", None)
    return found if isinstance(found, Audience) else None


@dataclass(frozen=True)
class Policy:
    """The caller's toolsets and the tool's own audience first; then deny beats allow; a tool no rule
    mentions gets `default`."""

    rules: tuple[Rule, ...] = ()
    default: Effect = "allow"
    toolsets: Toolsets = NO_TOOLSETS

    def allows(self, tool: ToolDefinition, principal: Principal) -> bool:
        """Whether `principal` may see and call `tool`: its toolsets, its audience, then the rules (deny wins)."""
        if principal.toolsets and not self.toolsets.admit(principal.toolsets, tool):
            return False
        audience = audience_of(tool)
        if audience is not None and not audience.admits(principal):
            return False
        applicable = [r for r in self.rules if r.applies_to(principal) and r.matches(tool)]
        if any(r.effect == "deny" for r in applicable):
            return False
        if any(r.effect == "allow" for r in applicable):
            return True
        return self.default == "allow"

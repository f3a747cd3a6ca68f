"""Named toolsets: the part of the catalog one client works with, by tool-name glob, category and source.

A toolset narrows what a principal sees and never widens it. A principal confined to toolsets
(`Principal.toolsets`) sees a tool when the policy allows it *and* every one of those toolsets holds
it; `Policy.allows` asks here for each tool it judges, so a tool outside the toolset is hidden on
every path a denied tool is (discovery, schemas, invocation, ranking, learning), the same way.

What confines a principal: a static token bound to a toolset, an OAuth client id, scope or
audience bound to one, or the endpoint it calls (`/mcp/<toolset>`). Each binding narrows further.

(`gateway.toolset` is another thing: how a catalog provider hands its tools to a gateway.)
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from types import MappingProxyType

from .context import Principal
from .definition import ToolDefinition
from .limits import source_of
from .usage import NO_SESSION

NAME_PATTERN = r"^[a-z0-9][a-z0-9_-]{0,63}$"
"""A toolset's name: also a path segment (`/mcp/<name>`), so nothing that needs escaping."""


@dataclass(frozen=True)
class NamedToolset:
    """One toolset: a tool is in it when its name matches one of `tools`, or its category one of
    `categories`, or its source one of `sources` (globs, each; see `gateway.limits.source_of`).

    Attributes:
        name: the toolset's name (its endpoint is `/mcp/<name>`).
        tools: tool-name globs ("tickets_*").
        categories: category globs.
        sources: source globs: "openapi:NAME", "mcp:SERVER", "google-apis", "builtin".
        clients: OAuth client ids (a token's `client_id` or `azp`) confined to this toolset.
        scopes: OAuth scopes that confine a token carrying one of them to this toolset.
        description: what the toolset is for, for the operator.
    """

    name: str
    tools: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    clients: tuple[str, ...] = ()
    scopes: tuple[str, ...] = ()
    description: str = ""

    def holds(self, d: ToolDefinition) -> bool:
        """Whether `d` is in this toolset."""
        return (
            any(fnmatchcase(d.name, g) for g in self.tools)
            or any(fnmatchcase(d.category, g) for g in self.categories)
            or (bool(self.sources) and any(fnmatchcase(source_of(d), g) for g in self.sources))
        )


@dataclass(frozen=True)
class Toolsets:
    """The configured toolsets, by name."""

    all: tuple[NamedToolset, ...] = ()
    _by_name: Mapping[str, NamedToolset] = field(init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_name", MappingProxyType({t.name: t for t in self.all}))

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def get(self, name: str) -> NamedToolset | None:
        """The toolset named `name`, or None."""
        return self._by_name.get(name)

    @property
    def names(self) -> list[str]:
        """Every toolset's name, sorted."""
        return sorted(self._by_name)

    def admit(self, confined_to: Collection[str], d: ToolDefinition) -> bool:
        """Whether every toolset in `confined_to` holds `d` (an unknown name holds nothing)."""
        for name in confined_to:
            found = self._by_name.get(name)
            if found is None or not found.holds(d):
                return False
        return True

    def bound(self, *, client: str | None = None, scopes: Iterable[str] = ()) -> frozenset[str]:
        """The toolsets an OAuth token is confined to by its client id and its scopes."""
        held = set(scopes)
        return frozenset(
            t.name for t in self.all if (client is not None and client in t.clients) or held & set(t.scopes)
        )


NO_TOOLSETS = Toolsets()
"""None configured."""


def confine(principal: Principal, toolsets: Iterable[str]) -> Principal:
    """`principal`, confined to `toolsets` as well as to those it already is."""
    more = frozenset(toolsets)
    if more <= principal.toolsets:
        return principal
    return Principal(principal.id, principal.roles, principal.agent, principal.toolsets | more)


def session_of(principal: Principal, session: str) -> str:
    """The session learning keys a call by: a toolset's searches pair only with calls made in it.

    The same session id used with and without a toolset are two sessions, so a pair is never made
    of a search in one toolset and a call of a tool outside it.
    """
    if not principal.toolsets or session in (NO_SESSION, ""):  # no session: pairs with nothing anyway
        return session
    return f"{session}\x1ftoolsets:{','.join(sorted(principal.toolsets))}"

"""Companions: the tools a request usually needs together, learned from the pairs the store keeps.

A pair is (query, tool, principal): a search followed, in one session, by a successful call. Two
tools paired with the same query by the same principal were needed by one request ("reschedule the
standup and tell the team": `calendar_update_event` and `gmail_send_message`). Their evidence is the
weaker of the two pairs' weights (capped, decayed, as the store weighs them), summed over queries.

The trust rules of learning hold: for anyone but the principal that taught it, a companion counts
only once `min_principals` distinct principals taught it (the operator's import counts as that
many), and a destructive tool is named as a companion only from the caller's own pairs, never
from others'. Only tools the caller sees are named.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence

from ..definition import ToolDefinition
from .store import IMPORT_PRINCIPAL, Evidence

MAX_NAMED = 2
"""Companions named under one hit of a page (each costs a page about 6 tokens)."""
NAMED_UNDER = 3
"""Hits of a page that name their companions: the first ones, a model's likely choices (every hit of
a page of 10 would cost it about 100 tokens; benchmarks.token_footprint)."""
MIN_WEIGHT = 0.5
"""The evidence a companion needs (one fresh request of one's own weighs 1)."""
_MAX_TOOLS_A_REQUEST = 6  # a past request followed by more tools than this says nothing of pairs


class Companions:
    """Which tools are used together, from a snapshot of the store's evidence."""

    def __init__(self, evidence: Sequence[Evidence], *, min_principals: int = 3) -> None:
        self.min_principals = max(1, min_principals)
        by_query: dict[str, list[Evidence]] = {}
        for e in evidence:
            by_query.setdefault(e.query, []).append(e)
        # (tool, companion) -> principal -> evidence
        together: dict[tuple[str, str], dict[str, float]] = {}
        for rows in by_query.values():
            if not 2 <= len(rows) <= _MAX_TOOLS_A_REQUEST:
                continue
            for a in rows:
                for b in rows:
                    if a.tool == b.tool:
                        continue
                    taught_b = dict(b.by)
                    who = together.setdefault((a.tool, b.tool), {})
                    for principal, weight in a.by:
                        if principal in taught_b:
                            who[principal] = who.get(principal, 0.0) + min(weight, taught_b[principal])
        # tool -> companion -> (weight for everyone, weight for each principal alone)
        self._of: dict[str, dict[str, tuple[float, dict[str, float]]]] = {}
        for (tool, other), who in together.items():
            if who:
                self._of.setdefault(tool, {})[other] = (self._public(who), who)

    def _public(self, who: Mapping[str, float]) -> float:
        each = {p: min(1.0, w) for p, w in who.items()}
        imported = each.pop(IMPORT_PRINCIPAL, 0.0)
        if len(each) < self.min_principals and imported <= 0.0:
            return 0.0
        return min(1.0, imported + sum(each.values()) / self.min_principals)

    def __len__(self) -> int:
        return len(self._of)

    def of(self, tool: str, principal: str, see: Callable[[str], ToolDefinition | None]) -> list[str]:
        """The companions of `tool` for `principal`, strongest first, among the tools it sees (`see`:
        a name's tool when `principal` may see it, else None)."""
        found = []
        for other, (public, who) in self._of.get(tool, {}).items():
            d = see(other)
            if d is None:
                continue
            own = who.get(principal, 0.0)  # uncapped: of one's own companions, the most used first
            weight = own if d.is_destructive else max(public, own)
            if weight >= MIN_WEIGHT:
                found.append((-weight, other))
        return [name for _, name in sorted(found)[:MAX_NAMED]]

    def named(
        self, tools: Collection[str], principal: str, see: Callable[[str], ToolDefinition | None]
    ) -> dict[str, list[str]]:
        """`of` for each of `tools` that has companions."""
        return {t: found for t in tools if (found := self.of(t, principal, see))}

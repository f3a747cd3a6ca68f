"""Boosts whose amounts depend on what the text ranks near the top (`SearchIndex.page`'s `boosts`).

The index reads the text's best tools in the same pass that blends the boosts, so a condition on
them costs a search nothing.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence


class EvenBoosts(dict[str, float]):
    """Tool name -> amount, with `raised`: other amounts (for the same or other tools), used instead
    only where each of the text's best `depth` tools is in `known` (where every rival could have been
    raised too: learning's summed votes, `gateway.discovery.scored_page`). As a mapping it holds
    every tool either may boost."""

    def __init__(
        self, amounts: Mapping[str, float], raised: Mapping[str, float], known: Collection[str], depth: int
    ) -> None:
        super().__init__({**amounts, **raised})
        self.amounts, self.raised, self.known, self.depth = amounts, raised, known, depth

    def for_text(self, best: Sequence[str]) -> Mapping[str, float]:
        """The amounts for a page whose text ranks `best` first (at least `depth` of them, or all)."""
        if best and all(name in self.known for name in best[: self.depth]):
            return self.raised
        return self.amounts

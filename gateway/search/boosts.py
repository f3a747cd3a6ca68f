"""Boosts whose amounts depend on what the text ranks near the top (`SearchIndex.page`'s `boosts`).

The index reads the text's best tools in the same pass that blends the boosts, so a condition on
them costs a search nothing.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence


class EvenBoosts(dict[str, float]):
    """Tool name -> amount, with `raised`: larger amounts for some of the same tools, used instead
    only where each of the text's best `depth` tools is in `known` (where every rival could have been
    raised too: learning's summed votes, `gateway.discovery.scored_page`)."""

    def __init__(
        self, amounts: Mapping[str, float], raised: Mapping[str, float], known: Collection[str], depth: int
    ) -> None:
        super().__init__(amounts)
        self.raised = {name: amount for name, amount in raised.items() if name in amounts}
        self.known = known
        self.depth = depth

    def for_text(self, best: Sequence[str]) -> Mapping[str, float]:
        """The amounts for a page whose text ranks `best` first (at least `depth` of them, or all)."""
        if self.raised and best and all(name in self.known for name in best[: self.depth]):
            return {**self, **self.raised}
        return self

"""Boosts whose amounts depend on what the text ranks near the top (`SearchIndex.page`'s `boosts`).

The index reads the text's best tools in the same pass that blends the boosts, so a condition on
them costs a search nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence

from .ranking import blend_boosts

Blend = Callable[..., tuple[list[int], list[float], int]]
"""`blend_boosts`'s signature."""


class EvenBoosts(dict[str, float]):
    """Tool name -> amount, where some tools' evidence may be uneven against the text's best.

    `raised`: other amounts, used instead where each of the text's best `depth` tools is in `known`
    (every rival could have been raised too: learning's summed votes). Elsewhere the first place is
    decided by the amounts as they are, and the rest of the page by the amounts of the `crowding`
    tools scaled by the share of the text's best `depth` in `known`: a few tools known from much
    evidence do not fill a page against tools the evidence has not seen. As a mapping it holds
    every tool either may boost (`gateway.discovery.scored_page`)."""

    def __init__(
        self,
        amounts: Mapping[str, float],
        raised: Mapping[str, float],
        known: Collection[str],
        depth: int,
        crowding: Collection[str] = (),
    ) -> None:
        super().__init__({**amounts, **raised})
        self.amounts, self.raised, self.known, self.depth = amounts, raised, known, depth
        self.crowding = crowding

    def for_text(self, best: Sequence[str]) -> tuple[Mapping[str, float], Mapping[str, float]]:
        """The amounts for the first place and for the rest of a page whose text ranks `best` first
        (at least `depth` of them, or all)."""
        best = best[: self.depth]
        if best and all(name in self.known for name in best):
            return self.raised, self.raised
        if not best or not any(name in self.crowding for name in self.amounts):
            return self.amounts, self.amounts
        seen = sum(name in self.known for name in best) / len(best)
        rest = {
            name: amount * seen if name in self.crowding else amount for name, amount in self.amounts.items()
        }
        return self.amounts, rest

    def blender(self, names: Sequence[str]) -> Blend:
        """`blend_boosts` with the amounts the text's best (positions named by `names`) call for, for
        the tools of its `boost` (their amounts are read from here)."""

        def blend(
            ids: list[int],
            scores: list[float],
            total: int,
            probed: dict[int, tuple[float, bool]],
            boost: dict[int, float],
            *,
            hold: float = 0.0,
        ) -> tuple[list[int], list[float], int]:
            first, rest = self.for_text([names[i] for i in ids[: self.depth]])
            at = {names[i]: i for i in boost}
            chosen = {at[name]: amount for name, amount in first.items() if name in at}
            hits = {i: hit for i, hit in probed.items() if i in chosen}
            ranked, blended_scores, counted = blend_boosts(ids, scores, total, hits, chosen, hold=hold)
            if rest is first or not ranked:
                return ranked, blended_scores, counted
            # The same tools (a scaled amount may be 0: the tool stays a candidate, as counted).
            scaled = {i: rest.get(names[i], 0.0) for i in chosen}
            others, other_scores, _ = blend_boosts(ids, scores, total, hits, scaled, hold=hold)
            lead = ranked[0]
            kept = [(i, s) for i, s in zip(others, other_scores, strict=True) if i != lead]
            return [lead, *(i for i, _ in kept)], [blended_scores[0], *(s for _, s in kept)], counted

        return blend

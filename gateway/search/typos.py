"""Typo correction for queries: an unknown word is read as the indexed word one edit away.

Every indexed word of four letters or more is filed under itself and each of its one-letter
deletions (symmetric deletion), so a misspelt word ("calender") finds its neighbours by looking up
its own deletions: no edit distance is computed against the vocabulary.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from .text import deletions

MAX_CORRECTIONS = 50_000
"""Remembered corrections (words seen in queries) per index; forgotten all at once beyond it."""


class Corrector:
    """Corrections over one index's words; `frequency(word)` breaks ties (the most frequent wins)."""

    def __init__(self, words: Iterable[str], frequency: Callable[[str], int]) -> None:
        self._words = words
        self._frequency = frequency
        self._map: dict[str, tuple[str, ...]] | None = None
        self._corrections: dict[str, str | None] = {}

    def variants(self) -> dict[str, tuple[str, ...]]:
        """Every indexed word of four letters or more under itself and each of its one-letter deletions.

        Built by the first query with an unknown word; an index built in the background (the learned
        index) builds it there, so that no search waits for it.
        """
        if self._map is None:
            variants: dict[str, list[str]] = {}
            for word in self._words:
                if len(word) >= 4 and word.isalpha():
                    for variant in deletions(word) | {word}:
                        variants.setdefault(variant, []).append(word)
            self._map = {k: tuple(v) for k, v in variants.items()}
        return self._map

    def correct(self, token: str) -> str | None:
        """The indexed word one edit away from `token` (the most frequent, then the first by spelling)."""
        if token in self._corrections:
            return self._corrections[token]
        variants = self.variants()
        candidates: set[str] = set()
        for variant in deletions(token) | {token}:
            candidates.update(variants.get(variant, ()))
        candidates.discard(token)
        best = min(candidates, key=lambda t: (-self._frequency(t), t)) if candidates else None
        if len(self._corrections) >= MAX_CORRECTIONS:
            self._corrections.clear()
        self._corrections[token] = best
        return best

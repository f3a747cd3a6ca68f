"""The past requests nearest a request by their words, found with arrays (the semantic layer's numpy).

A past request's closeness by words is the overlap of its stems with the request's, weighted by
rarity among past requests (a weighted Jaccard, `LearnedIndex._closeness`). Here every past request
sharing a word with the request gets that overlap at once: per word, the past requests holding it
(its postings) and its rarity, summed over the request's words in one `bincount`. The nearest are
the strongest overlaps, so the neighbours are the ones the closeness ranks first, and finding them
costs one pass over the request's postings instead of a BM25 search of the past requests.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


class WordNeighbours:
    """The past requests of `words` (their stems, in the learned index's order), by weighted overlap.

    Args:
        np: numpy.
        words: each past request's stems.
        rarity: each stem's rarity among the past requests.
        mass: each past request's rarity summed over its stems.
    """

    def __init__(
        self, np: Any, words: Sequence[frozenset[str]], rarity: Mapping[str, float], mass: Sequence[float]
    ) -> None:
        held: dict[str, list[int]] = {}
        for i, stems in enumerate(words):
            for stem in stems:
                held.setdefault(stem, []).append(i)
        self._np = np
        self._postings = {
            stem: (np.array(at, dtype=np.intp), np.full(len(at), rarity[stem])) for stem, at in held.items()
        }
        self._mass = np.array(mass, dtype=np.float64)
        self._n = len(words)

    def nearest(self, words: frozenset[str], whole: float, limit: int) -> tuple[list[int], list[float]]:
        """(the `limit` past requests whose weighted overlap with `words` is largest, best first and
        ties by number; that overlap for each), among those sharing a word with it. `whole` is the
        request's rarity summed over its words (a word no past request holds counts as unknown)."""
        np = self._np
        # Sorted, so that the sums are the same whatever the set's order.
        held = [self._postings[w] for w in sorted(words) if w in self._postings]
        if not held or limit <= 0:
            return [], []
        at = np.concatenate([h[0] for h in held])
        shared = np.bincount(at, np.concatenate([h[1] for h in held]), minlength=self._n)
        found = (shared > 0.0).nonzero()[0]  # every rarity is positive (faster than flatnonzero)
        overlap = shared[found] / (whole + self._mass[found] - shared[found])
        if len(found) > limit:
            # Every overlap at least the `limit`-th largest (ties included), then ordered.
            cut = -np.partition(-overlap, limit - 1)[limit - 1]
            keep = overlap >= cut
            found, overlap = found[keep], overlap[keep]
        order = np.lexsort((found, -overlap))[:limit]
        return found[order].tolist(), overlap[order].tolist()

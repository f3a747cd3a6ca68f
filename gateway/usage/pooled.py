"""Each tool's past requests pooled into one document: what its requesters asked, in their words and
their meaning.

A past request alone is thin evidence (a few words); a tool's past requests together say what the
tool is asked for in the words its users use. A request is scored against each tool's pool by BM25
over the pooled words (each past request's words once, weighted by how much the pair counts for
everyone) and by the cosine of its embedding with the pool's mean embedding (the semantic layer).
Both are absolute, in [0, 1]: the share of the request's rare words the pool holds, and the cosine
above `SIMILARITY_FLOOR` rescaled. The sum is scaled by the amount of evidence, n / (n + `EVIDENCE`)
for n past requests, so a tool asked for once (a near-twin's single request) moves little and a tool
asked for often in these words moves much.

A tool whose action a request does not ask ("delete ...", the request "create ...") is scored against
the pool of its past requests that did not ask that action either, kept beside the whole pool.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Mapping, Sequence
from typing import Any

EVIDENCE = 7.0
"""A tool with n past requests counts n / (n + EVIDENCE) of its closeness: one past request an
eighth, seven half."""
WORDS = 2.0
"""How much the share of the request's words a pool holds weighs (before the evidence scale)."""
MEANING = 0.5
"""How much the closeness in meaning to a pool's mean weighs (before the evidence scale)."""
SIMILARITY_FLOOR = 0.3
"""Below this cosine a request and a pool are unrelated."""
CANDIDATES = 256
"""The most tools scored for one request by their words, and by their meaning: bounds a search's cost
whatever the number of tools with evidence."""
_K1, _B = 1.2, 0.5  # BM25: saturation of a word's count, and how much a long pool is penalised


class _Pool:
    """The pooled words, their total, the evidence and the mean embedding of some past requests."""

    __slots__ = ("counts", "evidence", "length", "mean")

    def __init__(self) -> None:
        self.counts: dict[str, float] = {}
        self.evidence = 0.0
        self.length = 0.0
        self.mean: Any = None

    def add(self, words: frozenset[str], weight: float, vector: Any) -> None:
        counts = self.counts
        for word in words:
            counts[word] = counts.get(word, 0.0) + weight
        self.evidence += weight
        self.length += weight * len(words)
        if vector is not None:
            self.mean = weight * vector if self.mean is None else self.mean + weight * vector


class PooledEvidence:
    """The pools of `tools`' past requests.

    Args:
        requests: each past request's words, the actions it asked, and (tool, weight for everyone) for
            each tool it is credited to; pairs that count for no one else are left out by the caller.
        actions: each tool's action.
        vectors: the past requests' embeddings (rows in `requests`' order), or None without meaning.
    """

    def __init__(
        self,
        requests: Sequence[tuple[frozenset[str], frozenset[str], Sequence[tuple[str, float]]]],
        actions: Mapping[str, str],
        vectors: Any = None,
    ) -> None:
        self._whole: dict[str, _Pool] = {}
        self._other: dict[str, _Pool] = {}  # without the past requests that asked the tool's action
        if vectors is not None:
            norms = (vectors * vectors).sum(axis=1, keepdims=True) ** 0.5
            vectors = vectors / (norms + (norms == 0))
        for i, (words, asked, tools) in enumerate(requests):
            vector = None if vectors is None else vectors[i]
            for tool, weight in tools:
                if weight <= 0.0:
                    continue
                self._whole.setdefault(tool, _Pool()).add(words, weight, vector)
                if actions[tool] not in asked:
                    self._other.setdefault(tool, _Pool()).add(words, weight, vector)
        self._actions = {tool: actions[tool] for tool in self._whole}
        frequency: dict[str, int] = {}
        for pool in self._whole.values():
            for word in pool.counts:
                frequency[word] = frequency.get(word, 0) + 1
        n = len(self._whole)
        self._rarity = {w: math.log(1 + (n - f + 0.5) / (f + 0.5)) for w, f in frequency.items()}
        self._unknown = math.log(1 + n) if n else 0.0  # a word no pool holds: rarer than all
        self._average = sum(p.length for p in self._whole.values()) / n if n else 0.0
        self._postings: dict[str, list[str]] = {}  # word -> the tools whose pool holds it
        for tool, pool in self._whole.items():
            for word in pool.counts:
                self._postings.setdefault(word, []).append(tool)
        for pool in (*self._whole.values(), *self._other.values()):
            if pool.mean is not None:
                norm = float((pool.mean * pool.mean).sum()) ** 0.5
                pool.mean = pool.mean / norm if norm else pool.mean
        # The pools' means as rows, so a request's cosines with all of them are one product.
        self._names = list(self._whole)
        self._np: Any = None
        self._means: Any = None
        if vectors is not None and self._names:
            self._np = importlib.import_module("numpy")  # the semantic layer's numpy
            self._means = self._np.stack([self._whole[t].mean for t in self._names])

    def __len__(self) -> int:
        return len(self._whole)

    def votes(self, words: frozenset[str], asked: frozenset[str], vector: Any = None) -> dict[str, float]:
        """Tool name -> vote in (0, 1] for a request of `words` that asked `asked` (its embedding,
        normalised, for the meaning)."""
        rarity, unknown = self._rarity, self._unknown
        whole = sum(rarity.get(w, unknown) for w in words)
        average = self._average or 1.0
        meaning: dict[str, float] = {}
        if vector is not None and self._means is not None:
            np, names = self._np, self._names
            cosines = self._means @ vector
            if len(names) > CANDIDATES:  # the pools closest in meaning: the others' votes are weak
                best = np.argpartition(-cosines, CANDIDATES)[:CANDIDATES]
            else:
                best = range(len(names))
            for k in best:
                tool = names[k]
                cosine = float(cosines[k])
                if asked and self._actions[tool] not in asked:
                    other = self._other.get(tool)
                    cosine = (
                        float(other.mean @ vector) if other is not None and other.mean is not None else 0.0
                    )
                if cosine > SIMILARITY_FLOOR:
                    meaning[tool] = (cosine - SIMILARITY_FLOOR) / (1.0 - SIMILARITY_FLOOR)
        # The tools whose pool holds the request's rarest words, up to `CANDIDATES` (a word many
        # pools hold weighs little in any of them).
        candidates = set(meaning)
        by_words: set[str] = set()
        for word in sorted(words, key=lambda w: -rarity.get(w, unknown)):
            held = self._postings.get(word, ())
            if len(held) > CANDIDATES:  # no need to build the union to know it is too large
                break
            more = by_words.union(held)
            if len(more) > CANDIDATES:
                break
            by_words = more
        candidates |= by_words
        out: dict[str, float] = {}
        for tool in candidates:
            pool = self._whole[tool]
            used = pool
            if asked and self._actions[tool] not in asked:
                other = self._other.get(tool)
                if other is None:
                    continue
                used = other
            score = 0.0
            if whole:
                counts, norm = used.counts, _K1 * (1 - _B + _B * pool.length / average)
                for word in words:
                    count = counts.get(word)
                    if count:
                        score += rarity[word] * count / (count + norm)
                score /= whole
            vote = (
                used.evidence
                / (used.evidence + EVIDENCE)
                * (WORDS * score + MEANING * meaning.get(tool, 0.0))
            )
            if vote > 0.0:
                out[tool] = min(1.0, vote)
        return out

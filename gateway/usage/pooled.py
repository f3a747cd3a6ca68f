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

A word's rarity is counted among the pools, and weighed by its rarity in a background that does
not shrink with the store (the tools' own texts and every past request), as much as the pools fall
short of covering the catalog: a handful of pools cannot tell an everyday word from a distinctive one
(a word one of nine pools holds is as rare, among them, as a word none holds), so with part of the
history two everyday words found once in a large pool gave it a full vote over the text's clear match.
With a pool for every tool the pools' own rarity is used as it is.

A tool whose action a request does not ask ("delete ...", the request "create ...") is scored against
the pool of its past requests that did not ask that action either, kept beside the whole pool.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..search.encoder import similarities

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
MEANING_CANDIDATES = 128
"""With numpy, the pools whose meaning is weighed: those holding some of the request's words, the
strongest this many by their words' vote. A pool sharing no word with the request moved no page of
the shared sets' replays, and reading every pool's mean was most of the pools' cost."""
_K1, _B = 1.2, 0.5  # BM25: saturation of a word's count, and how much a long pool is penalised


def _commonness(background: Iterable[frozenset[str]], weight: float) -> dict[str, float]:
    """Word -> its rarity in `background` over the rarest's (BM25's), to the power `weight`: what the
    pools' rarity of it is multiplied by. Words not in `background` are left out (a factor of 1), and
    so is everything when `weight` is 0 (a pool for every tool: the pools' rarity alone)."""
    if weight <= 0.0:
        return {}
    frequency: dict[str, int] = {}
    documents = 0
    for words in background:
        documents += 1
        for word in words:
            frequency[word] = frequency.get(word, 0) + 1
    rarest = math.log(1 + documents)
    return {
        w: (math.log(1 + (documents - f + 0.5) / (f + 0.5)) / rarest) ** weight for w, f in frequency.items()
    }


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
        background: the words of the catalog's tools' texts and of every past request, whose
            frequencies say how common a word is whatever the number of pools; None: the pools' alone.
    """

    def __init__(
        self,
        requests: Sequence[tuple[frozenset[str], frozenset[str], Sequence[tuple[str, float]]]],
        actions: Mapping[str, str],
        vectors: Any = None,
        background: Iterable[frozenset[str]] = (),
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
        # Trusted as much as the pools cover the catalog, and as little as they are large: a large
        # pool holds everyday words by chance (a small one, a near-twin's, holds few words at all).
        fill = sum(p.evidence for p in self._whole.values()) / n if n else 0.0
        self._common = _commonness(
            background, (1.0 - n / len(actions)) * fill / (fill + EVIDENCE) if actions else 0.0
        )
        common = self._common
        self._rarity = {
            w: math.log(1 + (n - f + 0.5) / (f + 0.5)) * common.get(w, 1.0) for w, f in frequency.items()
        }
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

        self._arrays: Any = None
        if self._np is not None:
            self._arrays = self._build_arrays()

    def _build_arrays(self) -> Any:
        """Per word, the positions of the pools holding it and what it adds to their scores there
        (whole, other: its rarity times its saturated count, already divided by the pool's length
        norm); per pool its evidence scale (whole, other), whether it is of each action, and its
        whole and other means."""
        np, names = self._np, self._names
        at = {tool: k for k, tool in enumerate(names)}
        average = self._average or 1.0
        norm = np.array([_K1 * (1 - _B + _B * self._whole[t].length / average) for t in names])
        postings = {}
        for word, tools in self._postings.items():
            idx = np.fromiter((at[t] for t in tools), dtype=np.intp, count=len(tools))
            cw = np.array([self._whole[t].counts[word] for t in tools])
            co = np.array([self._other[t].counts.get(word, 0.0) if t in self._other else 0.0 for t in tools])
            rarity = self._rarity[word]
            postings[word] = (idx, rarity * cw / (cw + norm[idx]), rarity * co / (co + norm[idx]))
        evidence = np.array([self._whole[t].evidence for t in names])
        other_evidence = np.array([self._other[t].evidence if t in self._other else 0.0 for t in names])
        zero = self._means[0] * 0.0
        other_means = np.stack(
            [
                self._other[t].mean if t in self._other and self._other[t].mean is not None else zero
                for t in names
            ]
        )
        of_action = {
            action: np.array([self._actions[t] == action for t in names])
            for action in set(self._actions.values())
        }
        # Each pool's whole mean, then each pool's other mean: row k + n is pool k's other mean.
        means = np.concatenate([self._means, other_means])
        return (
            postings,
            evidence / (evidence + EVIDENCE),
            other_evidence / (other_evidence + EVIDENCE),
            means,
            of_action,
            np.array(names, dtype=object),
        )

    def _votes_arrays(
        self, words: frozenset[str], asked: frozenset[str], vector: Any, limit: int | None
    ) -> dict[str, float]:
        np = self._np
        postings, scale, other_scale, means, of_action, names = self._arrays
        rarity = self._rarity
        whole = sum(rarity[w] if w in rarity else self._unheld(w) for w in words)
        n = len(names)
        # One pass over the postings of the request's words: each word's share, added in the
        # request's word order (the same sums, to the bit, as one addition per word).
        held = [postings[w] for w in words if w in postings]
        idx = np.concatenate([h[0] for h in held]) if held else None
        # The pools of a tool whose action the request does not ask: their other pools count.
        other: Any = None
        if asked:
            of_asked = [of_action[a] for a in asked if a in of_action]
            other = ~np.logical_or.reduce(of_asked) if of_asked else np.ones(n, dtype=bool)
            if not other.any():
                other = None

        def share(column: int) -> Any:
            """Each pool's share of the request's rare words: column 1 of the whole pools, 2 of the others."""
            if idx is None:
                return np.zeros(n)
            out = np.bincount(idx, np.concatenate([h[column] for h in held]), minlength=n)
            return out / whole if whole else out

        if other is None or other.all():
            column, ev = (1, scale) if other is None else (2, other_scale)
            score = share(column) * WORDS
        else:
            score = np.where(other, share(2), share(1)) * WORDS
            ev = np.where(other, other_scale, scale)
        # Only the pools the request's words reach have a vote: the rest is worked out for them alone.
        reached = (score > 0.0).nonzero()[0]  # faster than flatnonzero over floats
        score, ev = score[reached], ev[reached]
        if vector is not None and len(reached):
            # Their meaning, for the strongest by their words' vote: one gathered row each (its whole
            # or other mean), not every pool's mean.
            near = np.arange(len(reached))
            if len(near) > MEANING_CANDIDATES:
                near = np.argpartition(-(ev * score), MEANING_CANDIDATES - 1)[:MEANING_CANDIDATES]
            rows = reached[near] if other is None else reached[near] + n * other[reached[near]]
            cosines = similarities(np, means[rows], vector)
            score[near] += MEANING * np.maximum(cosines - SIMILARITY_FLOOR, 0.0) / (1.0 - SIMILARITY_FLOOR)
        votes = np.minimum(ev * score, 1.0)
        found = (votes > 0.0).nonzero()[0]
        if limit is not None and len(found) > limit:
            # Every vote at least the `limit`-th strongest (ties included: the caller orders them by name).
            strongest = votes[found]
            found = found[strongest >= -np.partition(-strongest, limit - 1)[limit - 1]]
        if len(found) > 2 * CANDIDATES:  # the strongest: a page holds no more voted tools
            found = found[np.argpartition(-votes[found], 2 * CANDIDATES)[: 2 * CANDIDATES]]
        return dict(zip(names[reached[found]].tolist(), votes[found].tolist(), strict=True))

    def _unheld(self, word: str) -> float:
        """The rarity of a word no pool holds: rarer than all the pools' words, less so if common."""
        return self._unknown * self._common.get(word, 1.0)

    def __len__(self) -> int:
        return len(self._whole)

    def votes(
        self, words: frozenset[str], asked: frozenset[str], vector: Any = None, *, limit: int | None = None
    ) -> dict[str, float]:
        """Tool name -> vote in (0, 1] for a request of `words` that asked `asked` (its embedding,
        normalised, for the meaning); with `limit`, at least the `limit` strongest (with the votes
        equal to the last of them), and maybe more."""
        if self._arrays is not None:
            return self._votes_arrays(words, asked, vector, limit)
        rarity = self._rarity
        whole = sum(rarity[w] if w in rarity else self._unheld(w) for w in words)
        average = self._average or 1.0
        meaning: dict[str, float] = {}
        if vector is not None and self._means is not None:
            np, names = self._np, self._names
            cosines = similarities(np, self._means, vector)
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
        for word in sorted(words, key=lambda w: -(rarity[w] if w in rarity else self._unheld(w))):
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

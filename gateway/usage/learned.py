"""Past queries as evidence for their tools: the nearest earlier requests vote for where they ended.

Every distinct past query is a small document in a lexical index (the catalog's own engine,
`gateway.search`: stems, typos, verbs), which finds a request's `NEIGHBOURS` nearest past queries
cheaply. Each votes for its tools with its closeness to the request times the pair's weight (capped
at 1; it decays with age); a tool's vote is the sum, capped at 1. Closeness is absolute, never
relative to the best neighbour, so a request that shares one common word with the history gets a
small vote, not a strong one: with the semantic layer, the cosine of the two requests' embeddings
above `SIMILARITY_FLOOR`, rescaled to (0, 1]; without it, the overlap of their stems weighted by
rarity (a weighted Jaccard), to the power 1.5.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

from ..definition import NoParams, ToolDefinition
from ..search import SearchIndex, tokenize
from ..search.semantic import embedder
from .store import Evidence

NEIGHBOURS = 30
"""How many past queries vote on one request."""
MIN_VOTE = 0.05
"""Weaker votes are dropped: at twice the page's best text score, 0.05 can only break a near-tie."""
SIMILARITY_FLOOR = 0.3
"""Below this cosine two requests are unrelated (the embeddings of unrelated requests land around it)."""


def _nothing(params: NoParams) -> None:
    return None


class LearnedIndex:
    """The evidence of a store snapshot for `tools` (a principal's visible tools; others are ignored)."""

    def __init__(
        self, evidence: Sequence[Evidence], tools: Iterable[ToolDefinition], *, semantic: bool | None = None
    ) -> None:
        self._tools = {d.name: d for d in tools}
        owners: dict[str, dict[str, float]] = {}
        for e in evidence:
            if e.tool in self._tools:
                owners.setdefault(e.query, {})[e.tool] = min(1.0, e.weight)
        self._owners: list[dict[str, float]] = []
        self._words: list[frozenset[str]] = []
        documents = []
        for i, (query, tools_of) in enumerate(sorted(owners.items())):
            self._owners.append(tools_of)
            self._words.append(frozenset(tokenize(query)))
            documents.append(
                ToolDefinition(
                    name=f"q{i:08d}",
                    category="usage",
                    action="read",
                    summary="",
                    description=query,
                    params=NoParams,
                    handler=_nothing,
                    read_only=True,
                )
            )
        self.tools = frozenset(t for tools_of in self._owners for t in tools_of)
        self._index = SearchIndex(documents, semantic=False) if documents else None
        self._embedder = embedder() if semantic is not False and documents else None
        self._vectors: Any = None
        if self._embedder is not None:
            self._vectors = self._embedder.encode([d.description for d in documents])
        self._rarity: dict[str, float] = {}
        if documents and self._embedder is None:
            frequency: dict[str, int] = {}
            for words in self._words:
                for word in words:
                    frequency[word] = frequency.get(word, 0) + 1
            n = len(self._words)
            self._rarity = {w: math.log(1 + n / (f + 1)) for w, f in frequency.items()}

    def __len__(self) -> int:
        return len(self.tools)

    def votes(
        self,
        query: str,
        *,
        categories: Collection[str] | None = None,
        actions: Collection[str] | None = None,
    ) -> Mapping[str, float]:
        """Tool name -> vote in (0, 1]: how strongly earlier requests like this one ended in it."""
        if self._index is None:
            return {}
        hits, _ = self._index.page(query, limit=NEIGHBOURS)
        if not hits:
            return {}
        closeness = self._closeness(query, [int(d.name[1:]) for d, _ in hits])
        votes: dict[str, float] = {}
        for i, close in closeness:
            for tool, weight in self._owners[i].items():
                votes[tool] = votes.get(tool, 0.0) + close * weight
        out = {}
        for tool, vote in votes.items():
            d = self._tools[tool]
            if (
                vote >= MIN_VOTE
                and (not categories or d.category in categories)
                and (not actions or d.action in actions)
            ):
                out[tool] = min(1.0, vote)
        return out

    def _closeness(self, query: str, neighbours: list[int]) -> list[tuple[int, float]]:
        if self._embedder is not None:
            q = self._embedder.encode([query])[0]
            cosines = self._vectors[neighbours] @ q
            scale = 1.0 - SIMILARITY_FLOOR
            return [
                (i, max(0.0, (float(c) - SIMILARITY_FLOOR) / scale))
                for i, c in zip(neighbours, cosines, strict=True)
            ]
        words = frozenset(tokenize(query))
        rarity = self._rarity
        out = []
        for i in neighbours:
            union = sum(rarity.get(w, 1.0) for w in words | self._words[i])
            shared = sum(rarity.get(w, 1.0) for w in words & self._words[i])
            out.append((i, (shared / union) ** 1.5 if union else 0.0))
        return out

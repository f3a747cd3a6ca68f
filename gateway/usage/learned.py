"""Past queries as evidence for their tools: the nearest earlier requests vote for where they ended.

Every distinct past query is a small document in a lexical index (the catalog's own engine,
`gateway.search`: stems, typos, verbs), which finds a request's `NEIGHBOURS` nearest past queries
cheaply, by their words (`SearchIndex.positions`). Each votes for its tools with its closeness to
the request times the pair's weight (capped at 1; it decays with age); a tool's vote is the sum,
capped at 1. Closeness is absolute, never relative to the best neighbour, so a request that shares
one common word with the history gets a small vote, not a strong one: with the semantic layer, the
cosine of the two requests' embeddings above `SIMILARITY_FLOOR`, rescaled to (0, 1]; without it, the
overlap of their stems weighted by rarity (a weighted Jaccard), to the power 1.5.
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
            d = self._tools.get(e.tool)
            if d is not None:  # the tool's own name: one string for all its pairs, not one per row
                owners.setdefault(e.query, {})[d.name] = min(1.0, e.weight)
        self._owners: list[tuple[tuple[str, float], ...]] = []  # by past query: (tool, weight) pairs
        self._words: list[frozenset[str]] = []
        documents = []
        for i, (query, tools_of) in enumerate(sorted(owners.items())):
            self._owners.append(tuple(tools_of.items()))
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
        self.tools = frozenset(t for tools_of in self._owners for t, _ in tools_of)
        # The documents are named in their order, so an index position is a past query's number.
        self._index = SearchIndex(documents, semantic=False) if documents else None
        if self._index is not None:
            self._index.typo_map()  # built with the index (in the background), not by a search
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
        neighbours = self._index.positions(query, limit=NEIGHBOURS)
        if not neighbours:  # no past request shares a word with this one
            return {}
        votes: dict[str, float] = {}
        get, owners = votes.get, self._owners
        for i, close in zip(neighbours, self._closeness(query, neighbours), strict=True):
            if close > 0.0:
                for tool, weight in owners[i]:
                    votes[tool] = get(tool, 0.0) + close * weight
        if categories or actions:
            known = self._tools
            votes = {
                tool: vote
                for tool, vote in votes.items()
                if (not categories or known[tool].category in categories)
                and (not actions or known[tool].action in actions)
            }
        return {tool: min(1.0, vote) for tool, vote in votes.items() if vote > 0.0}

    def _closeness(self, query: str, neighbours: list[int]) -> list[float]:
        """How close each neighbour (a past query's number) is to `query`, in [0, 1]."""
        if self._embedder is not None:
            np = self._embedder.np
            cosines = (self._vectors[neighbours] @ self._embedder.encode_query(query)).astype(np.float64)
            closeness: list[float] = np.maximum(
                (cosines - SIMILARITY_FLOOR) / (1.0 - SIMILARITY_FLOOR), 0.0
            ).tolist()
            return closeness
        words = frozenset(tokenize(query))
        rarity = self._rarity
        out = []
        for i in neighbours:
            union = sum(rarity.get(w, 1.0) for w in words | self._words[i])
            shared = sum(rarity.get(w, 1.0) for w in words & self._words[i])
            out.append((shared / union) ** 1.5 if union else 0.0)
        return out

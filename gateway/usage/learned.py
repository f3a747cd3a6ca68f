"""Past queries as evidence for their tools: the nearest earlier requests vote for where they ended.

A request's `NEIGHBOURS` nearest past queries are found by their words: with the semantic layer,
those whose stems overlap most with the request's (`WordNeighbours`, the closeness's own measure);
without it, by BM25 in a lexical index where every distinct past query is a small document (the
catalog's own engine, `gateway.search`: stems, typos, verbs; `SearchIndex.positions`). Each votes for each of its tools with its
closeness to the request times the pair's weight for the caller (`_owner`), at most `ONE_REQUEST`;
a tool's vote is the sum, capped at 1. Closeness is absolute, never relative to the best neighbour,
so a request that shares one common word with the history gets a small vote, not a strong one: the
overlap of their stems weighted by rarity (a weighted Jaccard), to the power 1.5, and with the
semantic layer no more than the cosine of the two requests' embeddings above `SIMILARITY_FLOOR`,
rescaled to (0, 1]. A past request that asked another action than the request gives no vote to the
tools of its action.

A tool's pool (`PooledEvidence`) votes too, and its vote is the larger of the two; for a tool asked
for often the two are kinds of evidence that add up (`LearnedVotes.summed`), which the ranking uses
only where the store has evidence for every tool the words rank near the top
(`gateway.discovery.scored_page`).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

from ..definition import NoParams, ToolDefinition
from ..search import SearchIndex, tokenize
from ..search.encoder import similarities
from ..search.semantic import embedder
from ..search.verbs import analyse
from .nearest import WordNeighbours
from .pooled import PooledEvidence
from .store import IMPORT_PRINCIPAL, Evidence

NEIGHBOURS = 30
"""How many past queries vote on one request."""
ONE_REQUEST = 0.5
"""The most one past request adds to a tool's vote: a vote of 1 takes at least two close ones."""
SIMILARITY_FLOOR = 0.3
"""Below this cosine two requests are unrelated (the embeddings of unrelated requests land around it)."""
AGREEING = 4.5
"""The evidence a tool's pool needs (past requests that count for everyone, each weighing 1 when
fresh: five of them) before its vote and the nearest past requests' may add up; with less, the
nearest are most of the pool, counted once."""
CROWDING = 9.5
"""The evidence (ten fresh past requests) from which a tool's vote is scaled, below a page's first
place, by the share of the text's best tools the store holds evidence for: a few tools asked for
often do not fill the page against tools the store has not seen (`gateway.search.boosts`)."""


_Owner = tuple[float, Mapping[str, float]]


class LearnedVotes(dict[str, float]):
    """Tool name -> vote in (0, 1] (for each tool the larger of its nearest past requests' vote and
    its pool's), with `summed`: for the tools asked for often whose two votes add up to more, their
    sum (capped at 1); and `evidence`: the tools the store holds a past request of that counts for
    the caller; `crowding`: the voted tools with evidence of `CROWDING` or more. The ranking uses
    `summed` only where every tool the words rank near the top is in `evidence`, and scales the
    crowding tools' votes below the first place elsewhere (`gateway.discovery.scored_page`)."""

    def __init__(
        self,
        votes: Mapping[str, float],
        summed: Mapping[str, float],
        evidence: frozenset[str],
        crowding: frozenset[str] = frozenset(),
    ) -> None:
        super().__init__(votes)
        self.summed = summed
        self.evidence = evidence
        self.crowding = crowding


def _nothing(params: NoParams) -> None:
    return None


def _owner(e: Evidence, min_principals: int) -> _Owner:
    """(the pair's weight for everyone, its weight for each principal that taught it alone).

    Each principal counts at most 1 (its capped, decayed count); for everyone the pair weighs the
    sum over principals divided by `min_principals`, and nothing until `min_principals` distinct
    principals taught it; the operator's import counts as `min_principals` of them.
    """
    by = dict(e.by) if e.by else {"": e.weight}
    each = {who: min(1.0, w) for who, w in by.items()}
    imported = each.pop(IMPORT_PRINCIPAL, 0.0)
    independent = len(each) >= min_principals or imported > 0.0
    public = min(1.0, imported + sum(each.values()) / min_principals) if independent else 0.0
    return public, ({} if public >= 1.0 else each)


class LearnedIndex:
    """The evidence of a store snapshot for `tools` (a principal's visible tools; others are ignored).

    Args:
        evidence: the store's pairs, weighed, with who taught them.
        tools: the tools that may receive a vote.
        semantic: judge closeness by embeddings (None: when installed).
        min_principals: distinct principals a pair needs before it counts for anyone else than
            them; an imported pair (the operator's) counts for everyone at once.
    """

    def __init__(
        self,
        evidence: Sequence[Evidence],
        tools: Iterable[ToolDefinition],
        *,
        semantic: bool | None = None,
        min_principals: int = 1,
    ) -> None:
        self._tools = {d.name: d for d in tools}
        owners: dict[str, dict[str, _Owner]] = {}
        for e in evidence:
            d = self._tools.get(e.tool)
            if d is not None:  # the tool's own name: one string for all its pairs, not one per row
                owners.setdefault(e.query, {})[d.name] = _owner(e, min_principals)
        self._owners: list[tuple[tuple[str, float, Mapping[str, float]], ...]] = []  # by past query
        self._public: list[bool] = []  # whether a past query votes for anyone at all
        self._words: list[frozenset[str]] = []
        self._actions: list[frozenset[str]] = []  # the actions each past query asked
        documents = []
        for i, (query, tools_of) in enumerate(sorted(owners.items())):
            self._owners.append(tuple((t, public, own) for t, (public, own) in tools_of.items()))
            self._public.append(any(public > 0.0 for public, _ in tools_of.values()))
            self._words.append(frozenset(tokenize(query)))
            self._actions.append(frozenset(analyse(query)[1]))
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
        self.tools = frozenset(t for tools_of in self._owners for t, _, _ in tools_of)
        # Each tool's evidence for everyone (its pool's size: whether its two votes may add up), and
        # each principal's tools that only its own past requests count for: the votes' `evidence`.
        self._evidence: dict[str, float] = {}
        own_tools: dict[str, set[str]] = {}
        for owned in self._owners:
            for t, public, own in owned:
                if public > 0.0:
                    self._evidence[t] = self._evidence.get(t, 0.0) + public
                for who, weight in own.items():
                    if weight > 0.0:
                        own_tools.setdefault(who, set()).add(t)
        self._for_all = frozenset(self._evidence)
        self._own_tools = {who: frozenset(ts - self._for_all) for who, ts in own_tools.items()}
        # The past queries a principal taught that count for no one else yet: their numbers.
        self._own: dict[str, set[int]] = {}
        for i, owned in enumerate(self._owners):
            if not self._public[i]:
                for _, _, own in owned:
                    for who in own:
                        self._own.setdefault(who, set()).add(i)
        self._embedder = embedder() if semantic is not False and documents else None
        # Without the semantic layer the nearest past queries are found by BM25 over their words
        # (the documents are named in their order, so an index position is a past query's number).
        self._index: SearchIndex | None = None
        if documents and self._embedder is None:
            self._index = SearchIndex(documents, semantic=False)
            self._index.typo_map()  # built with the index (in the background), not by a search
        self._vectors: Any = None
        if self._embedder is not None:
            self._vectors = self._embedder.encode([d.description for d in documents])
        self._rarity: dict[str, float] = {}
        if documents:
            frequency: dict[str, int] = {}
            for words in self._words:
                for word in words:
                    frequency[word] = frequency.get(word, 0) + 1
            n = len(self._words)
            self._rarity = {w: math.log(1 + n / (f + 1)) for w, f in frequency.items()}
        rarity = self._rarity
        self._mass = [sum(rarity[w] for w in words) for words in self._words]  # each past query's
        # With it, by the overlap of their words (the closeness's own measure), with arrays.
        self._neighbours = (
            WordNeighbours(self._embedder.np, self._words, rarity, self._mass)
            if self._embedder is not None
            else None
        )
        # What counts for everyone, pooled by tool: many past requests of a tool in these words vote
        # for it though none of them alone is close (`PooledEvidence`).
        self._pooled = PooledEvidence(
            [
                (self._words[i], self._actions[i], [(t, public) for t, public, _ in tools_of])
                for i, tools_of in enumerate(self._owners)
            ],
            {name: d.action for name, d in self._tools.items()},
            self._vectors,
            # How common a word is, whatever the number of pools: in the tools' texts and all requests.
            [
                *(frozenset(tokenize(f"{d.name} {d.summary} {d.description}")) for d in self._tools.values()),
                *self._words,
            ],
        )

    def __len__(self) -> int:
        return len(self.tools)

    def votes(
        self,
        query: str,
        *,
        principal: str | None = None,
        categories: Collection[str] | None = None,
        actions: Collection[str] | None = None,
        limit: int | None = None,
    ) -> LearnedVotes:
        """Tool name -> vote in (0, 1]: how strongly earlier requests like this one ended in it, for
        `principal` (its own pairs count at once; others' once enough principals taught them), with
        the sums of a tool asked for often and the tools with evidence for `principal` (`LearnedVotes`).

        With `limit`, only the strongest `limit` votes, by vote then name (the order in which a page
        of that depth takes them, `gateway.discovery.scored_page`); the others cost a search nothing.
        """
        if not self._words:
            return LearnedVotes({}, {}, frozenset())
        asked = frozenset(analyse(query)[1])
        # The request's words and embedding, worked out once for the pools and the nearest.
        words = frozenset(tokenize(query))
        raw = None if self._embedder is None else self._embedder.encode_query(query)
        # Past queries that vote for nobody here (another principal's, not yet independent) are
        # skipped, so they cannot crowd the neighbours out.
        for_all = self._public
        mine = self._own.get(principal, ()) if principal is not None else ()
        overlaps: dict[int, float] | None = None
        if self._neighbours is not None:
            found, overlap = self._neighbours.nearest(words, self._whole(words), 2 * NEIGHBOURS)
            overlaps = dict(zip(found, overlap, strict=True))
        else:
            assert self._index is not None
            found = self._index.positions(query, limit=2 * NEIGHBOURS)
        neighbours = [i for i in found if for_all[i] or i in mine][:NEIGHBOURS]
        # The pools' vote, where it is stronger than the nearest past requests' (it is for a tool
        # asked for often in these words; one or two close past requests vote as before).
        # A nearest past request only raises a vote, so the `limit` strongest are among the pools'
        # `limit` strongest and the tools the nearest vote for (a filter is applied after: all then).
        votes = (
            self._pooled.votes(
                words,
                asked,
                _normalised(raw),
                limit=None if categories or actions else limit,
            )
            if len(self._pooled)
            else {}
        )
        nearest: dict[str, float] = {}
        get, owners, known = nearest.get, self._owners, self._tools
        for i, close in zip(neighbours, self._closeness(words, raw, neighbours, overlaps), strict=True):
            if close <= 0.0:
                continue
            other = self._actions[i] - asked if asked else frozenset()
            for tool, public, own in owners[i]:
                # A past request that asked another action ("delete ...", this one "create ...")
                # says nothing for the tools of its action.
                if other and known[tool].action in other:
                    continue
                weight = max(public, own.get(principal, 0.0)) if principal is not None else public
                if weight > 0.0:
                    nearest[tool] = get(tool, 0.0) + min(ONE_REQUEST, close * weight)
        summed: dict[str, float] = {}
        evidence = self._evidence
        for tool, vote in nearest.items():
            pooled = votes.get(tool, 0.0)
            votes[tool] = max(pooled, min(1.0, vote))
            # A tool asked for often: what it is asked for (its pool) and that this was asked before
            # (the nearest) are two kinds of evidence. A small pool is mostly the nearest themselves.
            if pooled > 0.0 and evidence.get(tool, 0.0) >= AGREEING:
                summed[tool] = min(1.0, pooled + vote)
        if categories or actions:
            votes = {
                tool: vote
                for tool, vote in votes.items()
                if (not categories or known[tool].category in categories)
                and (not actions or known[tool].action in actions)
            }
        out = {tool: min(1.0, vote) for tool, vote in votes.items() if vote > 0.0}
        if limit is not None and len(out) > limit:
            out = dict(sorted(out.items(), key=_strongest)[:limit])
        taught = self._own_tools.get(principal) if principal is not None else None
        return LearnedVotes(
            out,
            {tool: vote for tool, vote in summed.items() if tool in out and vote > out[tool]},
            self._for_all | taught if taught else self._for_all,
            frozenset(tool for tool in out if evidence.get(tool, 0.0) >= CROWDING),
        )

    def _whole(self, words: frozenset[str]) -> float:
        """The request's rarity summed over its words (a word no past query holds counts 1)."""
        rarity = self._rarity
        return sum(rarity.get(w, 1.0) for w in words)

    def _closeness(
        self,
        words: frozenset[str],
        vector: Any,
        neighbours: list[int],
        overlaps: Mapping[int, float] | None = None,
    ) -> list[float]:
        """How close each neighbour (a past query's number) is to the request of `words` (its
        embedding `vector`), in [0, 1]: by their words and, with the semantic layer, by their meaning
        too (the smaller of the two): requests alike in meaning but not in their words ("the area of a
        circle", "the area of a triangle") are not close. `overlaps`: their words' weighted overlaps,
        when already known."""
        meaning: list[float] | None = None
        if self._embedder is not None:
            np = self._embedder.np
            cosines = similarities(np, self._vectors[neighbours], vector).astype(np.float64)
            meaning = np.maximum((cosines - SIMILARITY_FLOOR) / (1.0 - SIMILARITY_FLOOR), 0.0).tolist()
        rarity, mass = self._rarity, self._mass
        whole = self._whole(words) if overlaps is None else 0.0  # the overlaps hold it already
        out = []
        for n, i in enumerate(neighbours):
            if meaning is not None and meaning[n] <= 0.0:
                out.append(0.0)
                continue
            if overlaps is not None:
                close = overlaps[i] ** 1.5
            else:
                shared = sum(rarity[w] for w in words & self._words[i])
                union = whole + mass[i] - shared
                close = (shared / union) ** 1.5 if union else 0.0
            out.append(close if meaning is None else min(close, meaning[n]))
        return out


def _strongest(item: tuple[str, float]) -> tuple[float, str]:
    return -item[1], item[0]


def _normalised(vector: Any) -> Any:
    """`vector` as a unit vector (None stays None)."""
    if vector is None:
        return None
    norm = float((vector * vector).sum()) ** 0.5
    return vector / norm if norm else vector

"""Ranking of tools for `discover_tools`: exact name, name prefix, then weighted BM25.

Every tool is indexed over everything it says about itself (name split on '_', '.', '-' and
camelCase, category, action, summary, description, parameter names and descriptions, tags, example
requests), each field with its own weight (BM25F: weighted term frequencies, one length
normalisation). Words are lowercased, stemmed (Porter) and stop words dropped. A query's verbs also
match the action vocabulary ("remove" finds delete, "set up" reads as create: `verbs`), unknown words
are corrected to the closest indexed word within one edit ("calender"), and categories and actions
are hard filters. Impacts are computed once at build time, so a query only adds numbers. Ties break by name.

The postings are built in `postings`, scored in `ranking` (pure Python, or one numpy `bincount`
for a query that touches many postings: the same ranking), blended with embedding similarity by
`semantic` when the `search` extra is installed, and cached on disk by `cache`.
"""

from __future__ import annotations

import bisect
import logging
import math
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from os import PathLike
from pathlib import Path
from typing import Any

from ..definition import ToolDefinition
from . import cache
from .boosts import EvenBoosts
from .cache import IndexParts, default_cache_dir, fingerprint
from .dense import DenseLayer
from .postings import ACTION_MARK, field_texts, numpy_available, numpy_module, postings
from .ranking import MAX_QUERY_CHARS, Ranking, blend_boosts, users_words
from .semantic import Vectors, dense_layer, embedder, embedding_text, param_names, semantic_available
from .text import stem
from .typos import Corrector
from .unsaid import everyday, proper_names, shown
from .verbs import analyse

_log = logging.getLogger(__name__)

MAX_QUERY_TERMS = 32
"""At most this many distinct indexed words of a query are scored (its rarest ones)."""
CACHE_MIN_TOOLS = 2_000
"""`SearchIndex.load_or_build` builds smaller catalogs directly: that takes well under 0.2 s."""

_SYNONYM_WEIGHT, _TYPO_WEIGHT = 0.6, 0.7  # a verb's action concept; a corrected misspelling
_NUMPY_MIN_POSTINGS = 500  # measured crossover: below it numpy's per-call overhead costs more than it saves

__all__ = ["CACHE_MIN_TOOLS", "MAX_QUERY_TERMS", "SearchIndex", "numpy_available"]


def _build(tools: Sequence[ToolDefinition], rows: Sequence[tuple[str, ...]], semantic: bool) -> IndexParts:
    parts = postings(rows, [d.action for d in tools])
    users_words(parts, tools)
    if semantic and tools:
        e = embedder()
        assert e is not None
        texts = [embedding_text(d) for d in tools]
        parts.vocabulary = e.vocabulary(texts)
        parts.vectors = e.encode(texts, parts.vocabulary, e.token_weights(parts.vocabulary))
    return parts


def _want_semantic(semantic: bool | None) -> bool:
    if semantic is None:
        return semantic_available()
    if semantic and not semantic_available():
        raise ImportError(
            "the semantic layer needs the 'search' extra: pip install 'metatool-gateway[search]'"
        )
    return semantic


class SearchIndex(Ranking):
    """An immutable index over a fixed list of tools.

    Args:
        tools: the tools to index; their order does not matter (the index sorts them by name).
        semantic: add embedding similarity to the lexical score (None: when the `search` extra is
            installed). Lexical matching still decides whether anything matched at all.
        vectorized: score lexical queries with numpy (None: when numpy is installed and a query
            touches enough postings to gain from it; the ranking is the same either way).
        dense: blend in a sentence encoder's similarity too (`dense`, the `dense` extra; it needs the
            semantic layer). Large catalogs are encoded in the background: see `DenseLayer`.
        dense_cache_dir: where the encoder's vectors are cached (None: not cached).
        dense_background: encode a large catalog's vectors in the background when none are cached
            (False: a one-shot command, which ends before they are ready, never starts).
    """

    def __init__(
        self,
        tools: Iterable[ToolDefinition],
        *,
        semantic: bool | None = None,
        vectorized: bool | None = None,
        dense: bool = False,
        dense_cache_dir: Path | None = None,
        dense_background: bool = True,
    ) -> None:
        ordered = sorted(tools, key=lambda d: d.name)
        parts = _build(ordered, [field_texts(d) for d in ordered], _want_semantic(semantic))
        layer = dense_layer(ordered, parts.vectors, dense, dense_cache_dir, background=dense_background)
        self._setup(ordered, parts, vectorized, layer)

    @classmethod
    def load_or_build(
        cls,
        tools: Iterable[ToolDefinition],
        cache_dir: str | PathLike[str] | None = None,
        *,
        semantic: bool | None = None,
        vectorized: bool | None = None,
        min_tools: int = CACHE_MIN_TOOLS,
        dense: bool = False,
        dense_background: bool = True,
    ) -> SearchIndex:
        """The index of `tools`, from the disk cache when the same text was indexed before.

        The cache key is a fingerprint of every tool's searchable text and the engine version, so
        any change to a tool builds (and caches) a new index. A catalog smaller than `min_tools` is
        built directly. A cache that cannot be read or written costs a build, never an error.

        Args:
            tools: the tools to index.
            cache_dir: where cached indexes live (None: `default_cache_dir()`, the user's cache).
            semantic, vectorized: as for `SearchIndex`.
            min_tools: catalogs with fewer tools are not cached (their dense vectors are).
            dense, dense_background: as for `SearchIndex`.
        """
        ordered = sorted(tools, key=lambda d: d.name)
        semantic = _want_semantic(semantic)
        directory = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        if len(ordered) < min_tools:
            return cls(
                ordered,
                semantic=semantic,
                vectorized=vectorized,
                dense=dense,
                dense_cache_dir=directory,
                dense_background=dense_background,
            )
        rows = [field_texts(d) for d in ordered]
        # The embedding also reads parameter names (a lazy model's stand-in, its search text, is
        # already in the row); ranking reads the required ones (`objects.acts_on_existing`).
        keyed = (
            (
                *row,
                *([] if d.is_lazy or not semantic else [param_names(d)]),
                ",".join(d.required_names()),
            )
            for row, d in zip(rows, ordered, strict=True)
        )
        model = embedder() if semantic else None
        key = fingerprint(keyed, semantic, model.model_id if model is not None else "")
        parts = cache.load(directory, key, len(ordered))
        if parts is None or (model is not None and not model.fits(parts.vectors, parts.vocabulary)):
            # Seconds for a large catalog: a line a program can show (the command line does, on stderr).
            _log.info("Building the search index of %s tools (cached for next time)...", f"{len(ordered):,}")
            parts = _build(ordered, rows, semantic)
            cache.save(directory, key, len(ordered), parts)
        index = cls.__new__(cls)
        layer = dense_layer(ordered, parts.vectors, dense, directory, background=dense_background)
        index._setup(ordered, parts, vectorized, layer)
        return index

    def _setup(
        self,
        tools: list[ToolDefinition],
        parts: IndexParts,
        vectorized: bool | None,
        dense: DenseLayer | None,
    ) -> None:
        self._tools = tools
        self._names = [d.name for d in tools]
        self._position = {name: i for i, name in enumerate(self._names)}
        self._terms = dict(zip(parts.terms, range(len(parts.terms)), strict=True))
        self._starts, self._ids, self._impacts = parts.starts, parts.ids, parts.impacts
        self._category = [d.category for d in tools]
        self._action = [d.action for d in tools]
        self._read_users_words(parts)
        # Each score is scaled by its tool's rank_weight before anything is ranked, so a page holds
        # the same tools whatever its size; None when every weight is 1 (nothing to scale).
        weights = [d.rank_weight for d in tools]
        self._weights: list[float] | None = weights if any(w != 1.0 for w in weights) else None
        self._typos = Corrector(self._terms, self._df)
        self._codes: dict[str, tuple[dict[str, int], Any]] = {}
        np = numpy_module() if vectorized is not False else None
        if vectorized and np is None:
            raise ImportError("vectorized scoring needs numpy: pip install 'metatool-gateway[fast]'")
        self._np: Any = np
        self._numpy_min = 0 if vectorized else _NUMPY_MIN_POSTINGS
        self._vectors = None if parts.vectors is None else Vectors(parts.vectors, parts.vocabulary, dense)
        if self._vectors is not None:
            np = self._np = numpy_module()
        if np is not None:
            self._np_ids = np.frombuffer(self._ids, dtype=np.uint32) if self._ids else np.zeros(0, np.uint32)
            self._np_impacts = (
                np.frombuffer(self._impacts, dtype=np.float32) if self._impacts else np.zeros(0, np.float32)
            )
            self._np_weights = None if self._weights is None else np.asarray(self._weights, dtype=np.float64)

    @property
    def dense(self) -> DenseLayer | None:
        """The sentence encoder's layer, when this index has one (`DenseLayer.ready` once encoded)."""
        return None if self._vectors is None else self._vectors.dense

    @property
    def semantic(self) -> bool:
        """Whether this index blends embedding similarity into its scores."""
        return self._vectors is not None

    # -- query side --------------------------------------------------------------------------------

    def _df(self, term: str) -> int:
        t = self._terms[term]
        return self._starts[t + 1] - self._starts[t]

    def typo_map(self) -> dict[str, tuple[str, ...]]:
        """The typo corrector's table (`typos.Corrector.variants`): built on first use."""
        return self._typos.variants()

    def query_terms(self, query: str) -> dict[str, float]:
        """The weighted index terms a query looks for: its words, typo corrections and action concepts."""
        counted, actions = (everyday if self._agreeing else analyse)(query[:MAX_QUERY_CHARS])[:2]
        lookups = shown(query[:MAX_QUERY_CHARS]) if self._agreeing else ()  # "show ...": any lookup
        names = proper_names(query[:MAX_QUERY_CHARS]) if self._agreeing else frozenset()
        terms: dict[str, float] = {}
        # Each distinct word once (a long request repeats its words), counted by its occurrences.
        for word, stemmed, count in counted:
            token, weight = stemmed, 1.0
            if token not in self._terms and 4 <= len(token) <= 24 and token.isalpha() and word not in names:
                # The stem of a misspelt word can be further from the right stem than the word itself.
                corrected = self._typos.correct(token) or self._typos.correct(word)
                if corrected is not None:
                    token, weight = corrected, _TYPO_WEIGHT
            terms[token] = terms.get(token, 0.0) + weight * count
        for action in (*actions, *lookups):
            terms[ACTION_MARK + action] = _SYNONYM_WEIGHT
            stemmed = stem(action)
            if stemmed not in terms and action in actions:
                terms[stemmed] = _SYNONYM_WEIGHT
        known = {t: w for t, w in terms.items() if t in self._terms}
        if len(known) > MAX_QUERY_TERMS:
            # A very long request keeps its rarest (most telling) words: bounded work for any input.
            rarest = sorted(known, key=lambda t: (self._df(t), t))[:MAX_QUERY_TERMS]
            known = {t: known[t] for t in rarest}
        # A repeated word counts, but less than linearly.
        return {t: math.sqrt(w) if w > 1 else w for t, w in known.items()}

    def tool(self, name: str) -> ToolDefinition | None:
        """The indexed tool called `name`."""
        i = self._position.get(name)
        return None if i is None else self._tools[i]

    def _name_hits(self, query: str) -> list[int]:
        """Tools named exactly like the query, then tools whose name starts with it, by name."""
        key = query.strip().lower()
        if not key or len(key) > 64 or not re.fullmatch(r"[a-z0-9_]+", key):
            return []
        start = bisect.bisect_left(self._names, key)
        hits = []
        for i in range(start, len(self._names)):
            if not self._names[i].startswith(key):
                break
            hits.append(i)
        return hits  # sorted by name, and the exact name sorts first

    def search(
        self,
        query: str,
        allowed: Collection[str] | None = None,
        *,
        categories: Collection[str] | None = None,
        actions: Collection[str] | None = None,
        limit: int | None = None,
    ) -> list[tuple[ToolDefinition, float]]:
        """Tools matching `query`, best first.

        An exact name comes first, then names starting with the query, then the rest by score; ties
        break by name. `allowed` (names), `categories` and `actions` are hard filters.

        Args:
            query: free text, a tool name or the start of one.
            allowed: only these tool names may be returned (None: any).
            categories: only tools in these categories (None or empty: any).
            actions: only tools with these actions (None or empty: any).
            limit: return at most this many (None: every match).
        """
        hits, _ = self.page(query, allowed, categories=categories, actions=actions, limit=limit)
        return hits

    def page(
        self,
        query: str,
        allowed: Collection[str] | None = None,
        *,
        categories: Collection[str] | None = None,
        actions: Collection[str] | None = None,
        offset: int = 0,
        limit: int | None = None,
        boosts: Mapping[str, float] | None = None,
        hold: float = 0.0,
    ) -> tuple[list[tuple[ToolDefinition, float]], int]:
        """One page of `search`, and the number of tools that match the query (its words or a name).

        With the semantic layer, the tools nearest the query in meaning may fill a page after the
        matches; they are not counted, so the total means the same with and without that layer.

        `boosts` (tool name -> amount) are added to the scores once each is divided by the best; a
        boosted tool the query does not match joins the page and counts as a match. A boost only
        raises its tool, so the text's best `offset + limit + len(boosts)`, with the boosted tools,
        hold every tool of the page (one pass: it scores the boosted tools, reads the text's best for
        `EvenBoosts`); the text's first stays first unless a boosted score passes its own by `hold`.
        """
        depth = None if limit is None else offset + limit
        if boosts:
            return self._boosted(
                query,
                boosts,
                offset,
                depth,
                allowed=allowed,
                categories=categories,
                actions=actions,
                hold=hold,
            )
        ids, scores, total, _ = self._rank(
            query, depth, [], allowed=allowed, categories=categories, actions=actions
        )
        tools = self._tools
        return [(tools[i], s) for i, s in zip(ids[offset:depth], scores[offset:depth], strict=True)], total

    def _boosted(
        self,
        query: str,
        boosts: Mapping[str, float],
        offset: int,
        depth: int | None,
        *,
        allowed: Collection[str] | None,
        categories: Collection[str] | None,
        actions: Collection[str] | None,
        hold: float = 0.0,
    ) -> tuple[list[tuple[ToolDefinition, float]], int]:
        boost = {self._position[name]: b for name, b in boosts.items() if name in self._position}
        if allowed is not None or categories or actions:
            keep = self._filter(allowed, categories, actions)
            boost = {i: b for i, b in boost.items() if keep(i)}
        even = boosts if isinstance(boosts, EvenBoosts) else None
        deeper = None if depth is None else max(depth + len(boost), even.depth if even else 0)
        ids, scores, total, probed = self._rank(
            query, deeper, list(boost), allowed=allowed, categories=categories, actions=actions
        )
        blend = blend_boosts if even is None else even.blender(self._names)  # what the text's best call for
        ranked, blended, total = blend(ids[:deeper], scores[:deeper], total, probed, boost, hold=hold)
        hits = zip(ranked[offset:depth], blended[offset:depth], strict=True)
        return [(self._tools[i], s) for i, s in hits], total

    def positions(self, query: str, *, limit: int) -> list[int]:
        """The best `limit` documents for `query` by their words alone (BM25F, ties by name), as
        positions in the index's order (by name).

        Names are not matched and the semantic layer is not asked: for an index whose documents stand
        for something else and whose names mean nothing (the learned index's past requests).
        """
        terms = [(self._terms[t], w) for t, w in self.query_terms(query).items()]
        if not terms or limit <= 0:
            return []
        if (
            self._np is not None
            and sum(self._starts[t + 1] - self._starts[t] for t, _ in terms) >= self._numpy_min
        ):
            return self._best_numpy(terms, limit)
        return self._page_python(query, terms, [], None, limit)[0][:limit]

    def _rank(
        self,
        query: str,
        depth: int | None,
        positions: list[int],
        *,
        allowed: Collection[str] | None = None,
        categories: Collection[str] | None = None,
        actions: Collection[str] | None = None,
    ) -> tuple[list[int], list[float], int, dict[int, tuple[float, bool]]]:
        terms = [(self._terms[t], w) for t, w in self.query_terms(query).items()]
        names = self._name_hits(query)
        filtered = allowed is not None or bool(categories) or bool(actions)
        if self._np is not None and (
            (terms and self._vectors is not None)
            or sum(self._starts[t + 1] - self._starts[t] for t, _ in terms) >= self._numpy_min
        ):
            mask = self._mask(allowed, categories, actions) if filtered else None
            return self._page_numpy(query, terms, names, mask, depth, probe=positions)
        keep = self._filter(allowed, categories, actions) if filtered else None
        return self._page_python(query, terms, names, keep, depth, probe=positions)

    def explain(self, query: str, names: Collection[str]) -> dict[str, tuple[float, float | None]]:
        """For each indexed tool in `names`: (its lexical score for `query`, its similarity in meaning).

        The lexical score is the BM25F sum over the query's terms, before the tool's rank weight;
        the similarity is the cosine of the query's and the tool's embeddings (None without the
        semantic layer). For showing why a tool ranked where it did; ranking never calls it.
        """
        wanted = {self._position[n]: n for n in names if n in self._position}
        lexical = dict.fromkeys(wanted, 0.0)
        for term, weight in self.query_terms(query).items():
            t = self._terms[term]
            a, b = self._starts[t], self._starts[t + 1]
            for i, impact in zip(self._ids[a:b], self._impacts[a:b], strict=True):
                if i in lexical:
                    lexical[i] += impact * weight
        similar: dict[int, float] = {}
        if self._vectors is not None and wanted:
            vectors = self._vectors
            q = vectors.embedder.encode_query(query[:MAX_QUERY_CHARS], vectors.vocabulary)
            similar = {i: float(vectors.matrix[i] @ q) for i in wanted}
        return {name: (lexical[i], similar.get(i)) for i, name in wanted.items()}

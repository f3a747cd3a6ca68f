"""Ranking of tools for `discover_tools`: exact name, name prefix, then weighted BM25.

Every tool is indexed over everything it says about itself (name split on '_', '.', '-' and
camelCase, category, action, summary, description, parameter names and descriptions, tags), each
field with its own weight (BM25F: weighted term frequencies, one length normalisation). Words are
lowercased, stemmed (Porter) and stop words dropped. A query's verbs also match the action vocabulary
("remove" finds delete tools), unknown words are corrected to the closest indexed word within one edit
("calender"), and categories and actions are hard filters. Impacts are computed once at build time,
so a query only adds numbers. Deterministic: ties break by tool name.

Scoring is pure Python. With numpy installed (the `search` or `fast` extra), a query that touches
many postings is scored with one `bincount` over its posting arrays instead: the same sums in the same
order, so the same ranking. `SearchIndex.load_or_build` caches large indexes on disk
(`gateway.search_cache`).
"""

from __future__ import annotations

import heapq
import importlib
import math
import re
from array import array
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Sequence
from os import PathLike
from pathlib import Path
from typing import Any

from . import search_cache
from .definition import ToolDefinition
from .search_cache import IndexParts, default_cache_dir, fingerprint
from .search_semantic import (
    SEMANTIC_CANDIDATES,
    SEMANTIC_EXACT_LIMIT,
    SEMANTIC_WEIGHT,
    Vectors,
    embedder,
    embedding_text,
    param_names,
    semantic_available,
)
from .search_text import STOP_WORDS, deletions, query_actions, stem, tokenize, words

__all__ = [
    "CACHE_MIN_TOOLS",
    "MAX_QUERY_CHARS",
    "MAX_QUERY_TERMS",
    "SEMANTIC_CANDIDATES",
    "SEMANTIC_EXACT_LIMIT",
    "SEMANTIC_WEIGHT",
    "SearchIndex",
    "default_cache_dir",
    "numpy_available",
    "rank_names",
    "semantic_available",
    "stem",
    "tokenize",
    "words",
]

MAX_QUERY_CHARS = 4096
"""Longer queries are cut here: no request for a tool needs more, and a hostile one costs no more."""
MAX_QUERY_TERMS = 32
"""At most this many distinct indexed words of a query are scored (its rarest ones)."""
CACHE_MIN_TOOLS = 2_000
"""`SearchIndex.load_or_build` builds smaller catalogs directly: that takes well under 0.2 s."""

_FIELDS = ("name", "category", "action", "summary", "description", "params", "tags")
_FIELD_WEIGHTS = (3.0, 1.5, 1.0, 1.5, 1.0, 0.4, 1.5)  # in the order of _FIELDS
_ACTION_WEIGHT = 1.0  # the action concept token, like the action field
_K1 = 1.2
_B = 0.75
_ACTION_MARK = "!"  # action concept tokens: "!delete" cannot collide with a word
_SYNONYM_WEIGHT = 0.6
_TYPO_WEIGHT = 0.7
_NUMPY_MIN_POSTINGS = 500  # measured crossover: below it numpy's per-call overhead costs more than it saves
_MAX_CORRECTIONS = 50_000  # remembered typo corrections (words seen in queries) per index

_NUMPY: list[Any] = []


def numpy_available() -> bool:
    """Whether numpy is installed (the `fast` or `search` extra): large queries are then vectorised."""
    return _numpy() is not None


def _numpy() -> Any:
    if not _NUMPY:
        try:
            _NUMPY.append(importlib.import_module("numpy"))
        except ImportError:
            _NUMPY.append(None)
    return _NUMPY[0]


def _field_texts(d: ToolDefinition) -> tuple[str, ...]:
    """The tool's text per field, in the order of `_FIELDS`."""
    summary = d.summary if d.summary.strip() != d.description.strip() else ""
    return (
        d.name,
        d.category,
        f"{d.action} {d.verb}",
        summary,
        d.description,
        d.parameter_text(),
        " ".join(d.tags),
    )


def _postings(rows: Sequence[tuple[str, ...]], actions: Sequence[str]) -> IndexParts:
    """BM25F postings of every tool (in index order), as flat arrays grouped by term."""
    seen: dict[str, tuple[tuple[str, int], ...]] = {}  # catalogs repeat texts (parameters above all)
    term_ids: dict[str, int] = {}
    docs_of: list[list[int]] = []
    tfs_of: list[list[float]] = []
    lengths: list[float] = []
    for i, (row, action) in enumerate(zip(rows, actions, strict=True)):
        weighted: dict[str, float] = {}
        get = weighted.get
        for text, weight in zip(row, _FIELD_WEIGHTS, strict=True):
            counts = seen.get(text)
            if counts is None:
                counts = seen[text] = tuple(Counter(tokenize(text)).items())
            for token, count in counts:
                weighted[token] = get(token, 0.0) + weight * count
        concept = _ACTION_MARK + action
        weighted[concept] = get(concept, 0.0) + _ACTION_WEIGHT
        lengths.append(sum(weighted.values()))
        for token, tf in weighted.items():
            t = term_ids.get(token)
            if t is None:
                t = term_ids[token] = len(docs_of)
                docs_of.append([])
                tfs_of.append([])
            docs_of[t].append(i)
            tfs_of[t].append(tf)
    n = len(rows)
    avg = (sum(lengths) / n) if n else 1.0
    norms = [_K1 * (1 - _B + _B * length / avg) for length in lengths]
    starts, ids, tfs, idfs = array("q", [0]), array("I"), array("d"), array("d")
    for docs, term_tfs in zip(docs_of, tfs_of, strict=True):
        ids.extend(docs)
        tfs.extend(term_tfs)
        starts.append(len(ids))
        idfs.append(math.log(1 + (n - len(docs) + 0.5) / (len(docs) + 0.5)))
    impacts = array("f")
    np = _numpy()
    if np is not None:  # the same operations, one array at a time
        tf = np.frombuffer(tfs, dtype=np.float64) if tfs else np.zeros(0)
        doc_norms = np.asarray(norms, dtype=np.float64)[np.frombuffer(ids, dtype=np.uint32)] if ids else tf
        idf = np.repeat(np.frombuffer(idfs, dtype=np.float64), np.diff(starts)) if idfs else tf
        impacts.frombytes((idf * (tf * (_K1 + 1) / (tf + doc_norms))).astype(np.float32).tobytes())
    else:
        for t, idf in enumerate(idfs):
            a, b = starts[t], starts[t + 1]
            impacts.extend(
                [idf * (tf * (_K1 + 1) / (tf + norms[d])) for d, tf in zip(ids[a:b], tfs[a:b], strict=True)]
            )
    return IndexParts(list(term_ids), starts, ids, impacts)


def _build(tools: Sequence[ToolDefinition], rows: Sequence[tuple[str, ...]], semantic: bool) -> IndexParts:
    parts = _postings(rows, [d.action for d in tools])
    if semantic and tools:
        e = embedder()
        assert e is not None
        texts = [embedding_text(d) for d in tools]
        parts.vectors = e.encode(texts)
        parts.vocabulary = e.vocabulary(texts)
    return parts


def _want_semantic(semantic: bool | None) -> bool:
    if semantic is None:
        return semantic_available()
    if semantic and not semantic_available():
        raise ImportError(
            "the semantic layer needs the 'search' extra: pip install 'metatool-gateway[search]'"
        )
    return semantic


class SearchIndex:
    """An immutable index over a fixed list of tools.

    Args:
        tools: the tools to index; their order does not matter (the index sorts them by name).
        semantic: add embedding similarity to the lexical score (None: when the `search` extra is
            installed). Lexical matching still decides whether anything matched at all.
        vectorized: score lexical queries with numpy (None: when numpy is installed and a query
            touches enough postings to gain from it; the ranking is the same either way).
    """

    def __init__(
        self,
        tools: Iterable[ToolDefinition],
        *,
        semantic: bool | None = None,
        vectorized: bool | None = None,
    ) -> None:
        ordered = sorted(tools, key=lambda d: d.name)
        parts = _build(ordered, [_field_texts(d) for d in ordered], _want_semantic(semantic))
        self._setup(ordered, parts, vectorized)

    @classmethod
    def load_or_build(
        cls,
        tools: Iterable[ToolDefinition],
        cache_dir: str | PathLike[str] | None = None,
        *,
        semantic: bool | None = None,
        vectorized: bool | None = None,
        min_tools: int = CACHE_MIN_TOOLS,
    ) -> SearchIndex:
        """The index of `tools`, from the disk cache when the same text was indexed before.

        The cache key is a fingerprint of every tool's searchable text and the engine version, so
        any change to a tool builds (and caches) a new index. A catalog smaller than `min_tools` is
        built directly. A cache that cannot be read or written costs a build, never an error.

        Args:
            tools: the tools to index.
            cache_dir: where cached indexes live (None: `default_cache_dir()`, the user's cache).
            semantic: as for `SearchIndex`.
            vectorized: as for `SearchIndex`.
            min_tools: catalogs with fewer tools are not cached.
        """
        ordered = sorted(tools, key=lambda d: d.name)
        semantic = _want_semantic(semantic)
        if len(ordered) < min_tools:
            return cls(ordered, semantic=semantic, vectorized=vectorized)
        rows = [_field_texts(d) for d in ordered]
        # The embedding also reads parameter names; a lazy model's stand-in (its search text) is
        # already in the row.
        keyed = (
            (row if d.is_lazy else (*row, param_names(d)) for row, d in zip(rows, ordered, strict=True))
            if semantic
            else rows
        )
        model = embedder() if semantic else None
        key = fingerprint(keyed, semantic, model.model_id if model is not None else "")
        directory = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        parts = search_cache.load(directory, key, len(ordered))
        if parts is None or (model is not None and not model.fits(parts.vectors, parts.vocabulary)):
            parts = _build(ordered, rows, semantic)
            search_cache.save(directory, key, len(ordered), parts)
        index = cls.__new__(cls)
        index._setup(ordered, parts, vectorized)
        return index

    def _setup(self, tools: list[ToolDefinition], parts: IndexParts, vectorized: bool | None) -> None:
        self._tools = tools
        self._names = [d.name for d in tools]
        self._position = {name: i for i, name in enumerate(self._names)}
        self._terms = dict(zip(parts.terms, range(len(parts.terms)), strict=True))
        self._starts, self._ids, self._impacts = parts.starts, parts.ids, parts.impacts
        self._category = [d.category for d in tools]
        self._action = [d.action for d in tools]
        # Each score is scaled by its tool's rank_weight before anything is ranked, so a page holds
        # the same tools whatever its size; None when every weight is 1 (nothing to scale).
        weights = [d.rank_weight for d in tools]
        self._weights: list[float] | None = weights if any(w != 1.0 for w in weights) else None
        self._typo_map: dict[str, tuple[str, ...]] | None = None
        self._corrections: dict[str, str | None] = {}
        self._codes: dict[str, tuple[dict[str, int], Any]] = {}
        np = _numpy() if vectorized is not False else None
        if vectorized and np is None:
            raise ImportError("vectorized scoring needs numpy: pip install 'metatool-gateway[fast]'")
        self._np: Any = np
        self._numpy_min = 0 if vectorized else _NUMPY_MIN_POSTINGS
        self._vectors = None if parts.vectors is None else Vectors(parts.vectors, parts.vocabulary)
        if self._vectors is not None:
            np = self._np = _numpy()
        if np is not None:
            self._np_ids = np.frombuffer(self._ids, dtype=np.uint32) if self._ids else np.zeros(0, np.uint32)
            self._np_impacts = (
                np.frombuffer(self._impacts, dtype=np.float32) if self._impacts else np.zeros(0, np.float32)
            )
            self._np_weights = None if self._weights is None else np.asarray(self._weights, dtype=np.float64)

    @property
    def semantic(self) -> bool:
        """Whether this index blends embedding similarity into its scores."""
        return self._vectors is not None

    def __len__(self) -> int:
        return len(self._tools)

    # -- query side --------------------------------------------------------------------------------

    def _df(self, term: str) -> int:
        t = self._terms[term]
        return self._starts[t + 1] - self._starts[t]

    def _correct(self, token: str) -> str | None:
        """The indexed word one edit away from `token` (the most frequent, then the first by spelling)."""
        if token in self._corrections:
            return self._corrections[token]
        if self._typo_map is None:
            typo_map: dict[str, list[str]] = {}
            for term in self._terms:
                if len(term) >= 4 and term.isalpha():
                    for variant in deletions(term) | {term}:
                        typo_map.setdefault(variant, []).append(term)
            self._typo_map = {k: tuple(v) for k, v in typo_map.items()}
        candidates: set[str] = set()
        for variant in deletions(token) | {token}:
            candidates.update(self._typo_map.get(variant, ()))
        candidates.discard(token)
        best = min(candidates, key=lambda t: (-self._df(t), t)) if candidates else None
        if len(self._corrections) >= _MAX_CORRECTIONS:
            self._corrections.clear()
        self._corrections[token] = best
        return best

    def query_terms(self, query: str) -> dict[str, float]:
        """The weighted index terms a query looks for: its words, typo corrections and action concepts."""
        raw = words(query[:MAX_QUERY_CHARS])
        terms: dict[str, float] = {}
        # Each distinct word once (a long request repeats its words), counted by its occurrences.
        for word, count in Counter(w for w in raw if w not in STOP_WORDS).items():
            token = stem(word)
            weight = 1.0
            if token not in self._terms and 4 <= len(token) <= 24 and token.isalpha():
                # The stem of a misspelt word can be further from the right stem than the word itself.
                corrected = self._correct(token) or self._correct(word)
                if corrected is not None:
                    token, weight = corrected, _TYPO_WEIGHT
            terms[token] = terms.get(token, 0.0) + weight * count
        for action in query_actions(raw):
            terms[_ACTION_MARK + action] = _SYNONYM_WEIGHT
            stemmed = stem(action)
            if stemmed not in terms:
                terms[stemmed] = _SYNONYM_WEIGHT
        known = {t: w for t, w in terms.items() if t in self._terms}
        if len(known) > MAX_QUERY_TERMS:
            # A very long request keeps its rarest (most telling) words: bounded work for any input.
            rarest = sorted(known, key=lambda t: (self._df(t), t))[:MAX_QUERY_TERMS]
            known = {t: known[t] for t in rarest}
        # A repeated word counts, but less than linearly.
        return {t: math.sqrt(w) if w > 1 else w for t, w in known.items()}

    def _name_hits(self, query: str) -> list[int]:
        """Tools named exactly like the query, then tools whose name starts with it, by name."""
        key = query.strip().lower()
        if not key or len(key) > 64 or not re.fullmatch(r"[a-z0-9_]+", key):
            return []
        start = self._bisect(key)
        hits = []
        for i in range(start, len(self._names)):
            if not self._names[i].startswith(key):
                break
            hits.append(i)
        return hits  # sorted by name, and the exact name sorts first

    def _bisect(self, key: str) -> int:
        lo, hi = 0, len(self._names)
        while lo < hi:
            mid = (lo + hi) // 2
            if self._names[mid] < key:
                lo = mid + 1
            else:
                hi = mid
        return lo

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
    ) -> tuple[list[tuple[ToolDefinition, float]], int]:
        """One page of `search`, and the exact number of matches in all pages."""
        terms = [(self._terms[t], w) for t, w in self.query_terms(query).items()]
        names = self._name_hits(query)
        depth = None if limit is None else offset + limit
        filtered = allowed is not None or bool(categories) or bool(actions)
        if self._np is not None and (
            (terms and self._vectors is not None)
            or sum(self._starts[t + 1] - self._starts[t] for t, _ in terms) >= self._numpy_min
        ):
            mask = self._mask(allowed, categories, actions) if filtered else None
            ids, scores, total = self._page_numpy(query, terms, names, mask, depth)
        else:
            keep = self._filter(allowed, categories, actions) if filtered else None
            ids, scores, total = self._page_python(query, terms, names, keep, depth)
        tools = self._tools
        return [(tools[i], s) for i, s in zip(ids[offset:depth], scores[offset:depth], strict=True)], total

    def _page_python(
        self,
        query: str,
        terms: list[tuple[int, float]],
        names: list[int],
        keep: Callable[[int], bool] | None,
        depth: int | None,
    ) -> tuple[list[int], list[float], int]:
        scores: dict[int, float] = {}
        get = scores.get
        starts, all_ids, all_impacts = self._starts, self._ids, self._impacts
        for t, weight in terms:
            ids, impacts = all_ids[starts[t] : starts[t + 1]], all_impacts[starts[t] : starts[t + 1]]
            if not scores and weight == 1.0:
                scores = dict(zip(ids, impacts, strict=True))
                get = scores.get
            elif weight == 1.0:
                for i, impact in zip(ids, impacts, strict=True):
                    scores[i] = get(i, 0.0) + impact
            else:
                for i, impact in zip(ids, impacts, strict=True):
                    scores[i] = get(i, 0.0) + impact * weight
        if self._weights is not None:
            weights = self._weights
            scores = {i: s * weights[i] for i, s in scores.items()}
        if names:
            top = max(scores.values(), default=0.0) + 1.0
            exact = self._names[names[0]] == query.strip().lower()
            for rank, i in enumerate(names):
                scores[i] = top * (2.0 if rank == 0 and exact else 1.0) + 1e-9
        if keep is not None:
            scores = {i: s for i, s in scores.items() if keep(i)}
        total = len(scores)
        if depth is not None and depth <= 0:
            ordered = []
        elif depth is None or depth >= total:
            ordered = sorted(scores, key=lambda i: (-scores[i], i))
        else:
            # Only the best `depth` are sorted; every tool tied with the last one is kept,
            # so ties still break by name (ids follow names).
            floor = heapq.nlargest(depth, scores.values())[-1]
            ordered = sorted((i for i, s in scores.items() if s >= floor), key=lambda i: (-scores[i], i))
        return ordered, [scores[i] for i in ordered], total

    def _page_numpy(
        self, query: str, terms: list[tuple[int, float]], names: list[int], mask: Any, depth: int | None
    ) -> tuple[list[int], list[float], int]:
        np = self._np
        n = len(self._tools)
        tier: Any = None
        if terms:
            starts = self._starts
            ranges = [(starts[t], starts[t + 1]) for t, _ in terms]
            # One bincount: each tool's sum is taken in term order, as the pure-Python loop does.
            postings = np.concatenate([self._np_ids[a:b] for a, b in ranges])
            impacts = np.concatenate(
                [
                    np.multiply(self._np_impacts[a:b], w, dtype=np.float64)
                    for (a, b), (_, w) in zip(ranges, terms, strict=True)
                ]
            )
            lexical = np.bincount(postings, weights=impacts, minlength=n)
            if self._vectors is not None:
                ids, scores, tier = self._vectors.blend(query[:MAX_QUERY_CHARS], lexical, mask, depth)
            else:
                ids = np.flatnonzero(lexical)
                scores = lexical[ids]
            if self._np_weights is not None:
                scores = scores * self._np_weights[ids]
        else:
            ids, scores = np.zeros(0, dtype=np.intp), np.zeros(0)
        if names:
            top = (float(scores.max()) if len(scores) else 0.0) + 1.0
            exact = self._names[names[0]] == query.strip().lower()
            named = np.asarray(names, dtype=np.intp)
            merged = np.union1d(ids, named)
            values = np.zeros(len(merged))
            values[np.searchsorted(merged, ids)] = scores
            values[np.searchsorted(merged, named)] = top + 1e-9
            if exact:
                values[np.searchsorted(merged, named[0])] = top * 2.0 + 1e-9
            if tier is not None:
                tiers = np.zeros(len(merged), dtype=np.int8)
                tiers[np.searchsorted(merged, ids)] = tier
                tiers[np.searchsorted(merged, named)] = 0
                tier = tiers
            ids, scores = merged, values
        if mask is not None:
            keep = mask[ids]
            ids, scores = ids[keep], scores[keep]
            tier = None if tier is None else tier[keep]
        total = len(ids)
        if tier is None or not tier.any():
            ordered, ordered_scores = self._top(ids, scores, depth)
            return ordered, ordered_scores, total
        # Tools scored exactly rank before those ranked on an approximation (large hybrid catalogs).
        first = tier == 0
        head, head_scores = self._top(ids[first], scores[first], depth)
        if depth is None or len(head) < depth:
            tail, tail_scores = self._top(
                ids[~first], scores[~first], None if depth is None else depth - len(head)
            )
            head, head_scores = head + tail, head_scores + tail_scores
        return head, head_scores, total

    def _top(self, ids: Any, scores: Any, depth: int | None) -> tuple[list[int], list[float]]:
        """The best `depth` of `ids` by score, ties by id (ids follow names)."""
        np = self._np
        if depth is not None and depth <= 0:
            return [], []
        if depth is not None and depth < len(ids):
            floor = np.partition(scores, len(scores) - depth)[len(scores) - depth]
            keep = scores >= floor
            ids, scores = ids[keep], scores[keep]
        order = np.lexsort((ids, -scores))[:depth]
        return ids[order].tolist(), scores[order].tolist()

    def _filter(
        self,
        allowed: Collection[str] | None,
        categories: Collection[str] | None,
        actions: Collection[str] | None,
    ) -> Callable[[int], bool]:
        names = self._names
        allowed_set = (
            None if allowed is None else (allowed if isinstance(allowed, (set, frozenset)) else set(allowed))
        )
        cats = set(categories) if categories else None
        acts = set(actions) if actions else None
        category, action = self._category, self._action

        def keep(i: int) -> bool:
            return (
                (allowed_set is None or names[i] in allowed_set)
                and (cats is None or category[i] in cats)
                and (acts is None or action[i] in acts)
            )

        return keep

    def _mask(
        self,
        allowed: Collection[str] | None,
        categories: Collection[str] | None,
        actions: Collection[str] | None,
    ) -> Any:
        """The filters as a boolean array over the tools."""
        np = self._np
        mask = np.ones(len(self._tools), dtype=bool)
        for kind, values, column in (
            ("category", categories, self._category),
            ("action", actions, self._action),
        ):
            if values:
                if kind not in self._codes:
                    code: dict[str, int] = {}
                    self._codes[kind] = (
                        code,
                        np.fromiter(
                            (code.setdefault(v, len(code)) for v in column), dtype=np.int32, count=len(column)
                        ),
                    )
                code, codes = self._codes[kind]
                mask &= np.isin(codes, [code[v] for v in values if v in code])
        if allowed is not None:
            position = self._position
            chosen = np.zeros(len(self._tools), dtype=bool)
            chosen[np.fromiter((position[a] for a in allowed if a in position), dtype=np.intp)] = True
            mask &= chosen
        return mask


def rank_names(index: SearchIndex, query: str, names: Sequence[str]) -> list[str]:
    """Names from `names` ranked for `query` (those that do not match are dropped)."""
    return [d.name for d, _ in index.search(query, set(names))]

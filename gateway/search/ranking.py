"""Scoring and paging over the postings: a pure-Python loop, or one numpy `bincount`.

Both paths take each tool's sum in term order, so they rank alike. Filters (allowed names,
categories, actions) apply before counting, and only the best `depth` tools are sorted; ties break
by tool id, and ids follow names.
"""

from __future__ import annotations

import heapq
from array import array
from collections.abc import Callable, Collection, Sequence
from typing import Any

from ..definition import ToolDefinition
from .cache import IndexParts
from .objects import (
    MAKING,
    ToolObjects,
    asked_category,
    category_markers,
    names_object,
    new_order,
    request_object,
)
from .semantic import Vectors
from .text import words
from .unsaid import meant
from .verbs import LOOKUPS, analyse, example_verbs, phrasal

ACTION_AGREEMENT = 0.5
"""A tool whose action is one the request asks for (its verbs name it, or a question looks something
up) scores this much more (x1.5): the words that say what to do outweigh those that merely match.
Only in an index where some tool has example requests, which say how users ask for the tools: there
it raised the first answer to everyday requests; on the datasets, whose tools have none, it lowered it
(docs/discovery.md, "First answers over the workspace tools")."""

OBJECT_AGREEMENT = 0.5
"""A tool of the one category a request's nouns point to (`objects.asked_category`) scores this much
more (x1.5); only where the catalog's categories have marker words (`objects.category_markers`)."""

NAMED_OBJECT = 0.25
"""A tool whose name or summary names what the request is about scores this much more."""

MAX_QUERY_CHARS = 4096
"""Longer queries are cut here: no request for a tool needs more, and a hostile one costs no more."""


def users_words(parts: IndexParts, tools: Sequence[ToolDefinition]) -> None:
    """What the tools' example requests teach, when some have them (`ACTION_AGREEMENT`), into `parts`:
    the verbs they open with, the words that mark each category, each tool's own object words (which
    read no schema: `objects.acts_on_existing`). Once, as the index is built; the cache keeps it."""
    parts.agreeing = any(d.example_requests for d in tools)
    parts.example_verbs = example_verbs(tools) if parts.agreeing else {}
    parts.markers = category_markers(tools) if parts.agreeing else {}
    parts.objects = ToolObjects.of(tools) if parts.agreeing else None


class Ranking:
    """The scoring half of `SearchIndex`: it reads the arrays `SearchIndex` sets up."""

    _names: list[str]
    _position: dict[str, int]
    _starts: array[int]
    _ids: array[int]
    _impacts: array[float]
    _category: list[str]
    _action: list[str]
    _example_verbs: dict[str, str]
    _markers: dict[str, str]
    _objects: ToolObjects | None
    _agreeing: bool
    _weights: list[float] | None
    _codes: dict[str, tuple[dict[str, int], Any]]
    _np: Any
    _np_ids: Any
    _np_impacts: Any
    _np_weights: Any
    _vectors: Vectors | None

    def __len__(self) -> int:
        return len(self._names)

    def _read_users_words(self, parts: IndexParts) -> None:
        """What the tools' example requests teach (`users_words`, read when the index was built)."""
        self._agreeing = parts.agreeing
        self._example_verbs = parts.example_verbs or {}
        self._markers = parts.markers or {}
        self._objects = parts.objects

    def _page_python(
        self,
        query: str,
        terms: list[tuple[int, float]],
        names: list[int],
        keep: Callable[[int], bool] | None,
        depth: int | None,
        *,
        probe: Sequence[int] = (),
    ) -> tuple[list[int], list[float], int, dict[int, tuple[float, bool]]]:
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
        agree = self._agreement(query)
        if agree:
            action, kept = self._action, self._not_new(query, agree)
            scores = {i: s * (agree.get(action[i], 1.0) if kept[i] else 1.0) for i, s in scores.items()}
        about = self._object(query)
        if about is not None:
            category = self._category
            raised = 1.0 + OBJECT_AGREEMENT
            scores = {i: s * raised if category[i] == about else s for i, s in scores.items()}
        named = self._named(query)
        if named and self._objects is not None:
            objects, levels = self._objects, (1.0, 1.0 + NAMED_OBJECT, (1.0 + NAMED_OBJECT) ** 2)
            scores = {i: s * levels[names_object(named, objects[i])] for i, s in scores.items()}
        if names:
            top = max(scores.values(), default=0.0) + 1.0
            exact = self._names[names[0]] == query.strip().lower()
            for rank, i in enumerate(names):
                scores[i] = top * (2.0 if rank == 0 and exact else 1.0) + 1e-9
        if keep is not None:
            scores = {i: s for i, s in scores.items() if keep(i)}
        total = len(scores)
        probed = {i: (scores.get(i, 0.0), i in scores) for i in probe}  # every candidate here matches
        if depth is not None and depth <= 0:
            ordered = []
        elif depth is None or depth >= total:
            ordered = sorted(scores, key=lambda i: (-scores[i], i))
        else:
            # Only the best `depth` are sorted; every tool tied with the last one is kept,
            # so ties still break by name (ids follow names).
            floor = heapq.nlargest(depth, scores.values())[-1]
            ordered = sorted((i for i, s in scores.items() if s >= floor), key=lambda i: (-scores[i], i))
        return ordered, [scores[i] for i in ordered], total, probed

    def _page_numpy(
        self,
        query: str,
        terms: list[tuple[int, float]],
        names: list[int],
        mask: Any,
        depth: int | None,
        *,
        probe: Sequence[int] = (),
    ) -> tuple[list[int], list[float], int, dict[int, tuple[float, bool]]]:
        np = self._np
        tier: Any = None
        matched: Any = None  # with the semantic layer: which candidates match the query's words
        if terms:
            lexical = self._lexical(terms)
            raised = self._raised(query)
            if self._vectors is not None:
                voters = None if raised is None or not raised.any() else raised
                ids, scores, tier = self._vectors.blend(self._meant(query), lexical, mask, depth, voters)
                matched = lexical[ids] > 0
            else:
                # Scores are positive: a boolean mask finds them several times faster than a float array.
                ids = np.flatnonzero(lexical > 0)
                scores = lexical[ids]
            if self._np_weights is not None:
                scores = scores * self._np_weights[ids]
            scores = self._agreed(query, ids, scores, raised)
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
            if matched is not None:
                hits = np.zeros(len(merged), dtype=bool)
                hits[np.searchsorted(merged, ids)] = matched
                hits[np.searchsorted(merged, named)] = True
                matched = hits
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
            matched = None if matched is None else matched[keep]
        # The total counts the tools that match the query's words (or name), as without the semantic
        # layer; its nearest neighbours in meaning may fill a page but are not matches.
        total = len(ids) if matched is None else int(matched.sum())
        probed = self._probed(ids, scores, matched, probe)
        ordered, ordered_scores = self._ordered(ids, scores, tier, depth)
        return ordered, ordered_scores, total, probed

    def _agreement(self, query: str) -> dict[str, float]:
        """Per action, how much a tool with that action is raised for `query` (what its verbs ask)."""
        if not self._agreeing:
            return {}
        _, named, asked, opener, first = analyse(query[:MAX_QUERY_CHARS])
        learned = self._example_verbs.get(opener) if opener else None
        if not (asked or learned or named or first) and opener.endswith("s") and not opener.endswith("ss"):
            asked = LOOKUPS  # no verb, things named: "invoices from march"
        return dict.fromkeys((*asked, learned) if learned else asked, 1.0 + ACTION_AGREEMENT)

    def _not_new(self, query: str, agree: dict[str, float]) -> list[bool]:
        """Per tool, whether the action agreement holds ("send Sam a note" is no reply: `objects.new_order`)."""
        if self._objects is None or not new_order(phrasal(words(query[:MAX_QUERY_CHARS])), agree):
            return [True] * len(self._action)
        making = MAKING
        return [
            not (e and a in making) for e, a in zip(self._objects.existing_list(), self._action, strict=True)
        ]

    def _not_new_numpy(self, query: str, agree: dict[str, float]) -> Any:
        """`_not_new` as numpy booleans, or None when it holds for every tool."""
        if self._objects is None or not new_order(phrasal(words(query[:MAX_QUERY_CHARS])), agree):
            return None
        codes, actions = self._action_codes()
        making = self._np.isin(actions, [codes[a] for a in MAKING if a in codes])
        return ~(self._objects.existing(self._np) & making)

    def _object(self, query: str) -> str | None:
        """The category the request's nouns point to, when the catalog has markers (`objects`)."""
        if not self._markers:
            return None
        return asked_category([stem for _, stem, _ in analyse(query[:MAX_QUERY_CHARS])[0]], self._markers)

    def _raised(self, query: str) -> Any:
        """Which tools the action agreement raises for `query` (numpy booleans), None if it asks none."""
        agree = self._agreement(query)
        if not agree:
            return None
        codes, actions = self._action_codes()
        asked = self._np.zeros(len(codes) + 1, dtype=bool)
        asked[[codes[name] for name in agree if name in codes]] = True
        kept = self._not_new_numpy(query, agree)
        return asked[actions] if kept is None else asked[actions] & kept

    def _agreed(self, query: str, ids: Any, scores: Any, raised: Any) -> Any:
        """`scores` of the tools `ids` raised by the action (`raised`) and object agreements (numpy)."""
        if raised is not None:
            scores = scores * self._np.where(raised[ids], 1.0 + ACTION_AGREEMENT, 1.0)
        np = self._np
        about = self._object(query)
        if about is not None:
            codes, categories = self._category_codes()
            in_category = categories[ids] == codes.get(about, -1)
            scores = scores * np.where(in_category, 1.0 + OBJECT_AGREEMENT, 1.0)
        named = self._named(query)
        if named and self._objects is not None:
            # Only the tools whose own words say one of the request's can be raised: those are asked.
            objects = self._objects
            naming = objects.holding(np, named)
            says = np.zeros(len(self._names), dtype=np.int8)
            says[naming] = [names_object(named, objects[i]) for i in naming.tolist()]
            scores = scores * (1.0 + NAMED_OBJECT) ** says[ids]
        return scores

    def _meant(self, query: str) -> str:
        """The text the semantic layers compare: where tools are described in users' words, without
        the words that do not name what the request wants (`unsaid`: "drop Mark a line")."""
        query = query[:MAX_QUERY_CHARS]
        return meant(query) if self._agreeing else query

    def _named(self, query: str) -> frozenset[str]:
        """The request's object words (`objects.request_object`), where the catalog agrees at all."""
        if not self._agreeing:
            return frozenset()
        return frozenset(request_object(phrasal(words(query[:MAX_QUERY_CHARS]))))

    def _category_codes(self) -> tuple[dict[str, int], Any]:
        """Each category's code, and every tool's category code (numpy), built on first use."""
        return self._coded("category", self._category)

    def _action_codes(self) -> tuple[dict[str, int], Any]:
        """Each action's code, and every tool's action code (numpy), built on first use."""
        return self._coded("action", self._action)

    def _coded(self, kind: str, values: list[str]) -> tuple[dict[str, int], Any]:
        codes = self._codes.get(kind)
        if codes is None:
            names = {v: n for n, v in enumerate(sorted(set(values)))}
            codes = self._codes[kind] = (names, self._np.asarray([names[v] for v in values]))
        return codes

    def _best_numpy(self, terms: list[tuple[int, float]], depth: int) -> list[int]:
        """The best `depth` tools by lexical score alone (rank weights applied), ties by id."""
        np = self._np
        lexical = self._lexical(terms)
        ids = np.flatnonzero(lexical > 0)
        scores = lexical[ids] if self._np_weights is None else lexical[ids] * self._np_weights[ids]
        return self._top(ids, scores, depth)[0]

    def _lexical(self, terms: list[tuple[int, float]]) -> Any:
        """Every tool's lexical score (dense, zero where no term matches), in one bincount: each tool's
        sum is taken in term order, as the pure-Python loop does."""
        np = self._np
        starts = self._starts
        ranges = [(starts[t], starts[t + 1]) for t, _ in terms]
        postings = np.concatenate([self._np_ids[a:b] for a, b in ranges])
        impacts = np.concatenate([self._np_impacts[a:b] for a, b in ranges]).astype(np.float64)
        if any(w != 1.0 for _, w in terms):  # the same products as weighing each term's slice
            impacts *= np.repeat([w for _, w in terms], [b - a for a, b in ranges])
        return np.bincount(postings, weights=impacts, minlength=len(self._names))

    def _probed(
        self, ids: Any, scores: Any, matched: Any, probe: Sequence[int]
    ) -> dict[int, tuple[float, bool]]:
        """(score, matches the query) of each probed tool among the candidates (ids are sorted)."""
        np = self._np
        if not probe or not len(ids):
            return dict.fromkeys(probe, (0.0, False))
        wanted = np.asarray(probe, dtype=np.intp)
        at = np.minimum(np.searchsorted(ids, wanted), len(ids) - 1)
        found = ids[at] == wanted
        hit_scores = np.where(found, scores[at], 0.0).tolist()
        hit_matched = (found if matched is None else found & matched[at]).tolist()
        return dict(zip(probe, zip(hit_scores, hit_matched, strict=True), strict=True))

    def _ordered(self, ids: Any, scores: Any, tier: Any, depth: int | None) -> tuple[list[int], list[float]]:
        """The best `depth` candidates; tools scored exactly first (large hybrid catalogs)."""
        if tier is None or not tier.any():
            return self._top(ids, scores, depth)
        first = tier == 0
        head, head_scores = self._top(ids[first], scores[first], depth)
        if depth is None or len(head) < depth:
            tail, tail_scores = self._top(
                ids[~first], scores[~first], None if depth is None else depth - len(head)
            )
            head, head_scores = head + tail, head_scores + tail_scores
        return head, head_scores

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
        mask = np.ones(len(self._names), dtype=bool)
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
            chosen = np.zeros(len(self._names), dtype=bool)
            chosen[np.fromiter((position[a] for a in allowed if a in position), dtype=np.intp)] = True
            mask &= chosen
        return mask


def blend_boosts(
    ids: list[int],
    scores: list[float],
    total: int,
    probed: dict[int, tuple[float, bool]],
    boost: dict[int, float],
    *,
    hold: float = 0.0,
) -> tuple[list[int], list[float], int]:
    """Candidates (a page's and the probed boosted tools) ranked by their score divided by the best
    plus their boost, ties by id (ids follow names); their blended scores; and the total, with each
    boosted tool the text does not match counted as a match. The text's first keeps first place
    unless another candidate's blended score passes its own by `hold` or more."""
    found = dict(zip(ids, scores, strict=True))
    for i, (score, matches) in probed.items():
        found.setdefault(i, score)
        total += not matches
    top = max(found.values(), default=0.0) or 1.0
    ranked = sorted([(-(s / top + boost.get(i, 0.0)), i) for i, s in found.items()])
    if hold and ids and ranked[0][1] != ids[0]:
        first = next(entry for entry in ranked if entry[1] == ids[0])
        if first[0] - ranked[0][0] < hold:
            ranked.remove(first)
            ranked.insert(0, first)
    return [i for _, i in ranked], [-b for b, _ in ranked], total

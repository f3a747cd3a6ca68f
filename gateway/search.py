"""Lexical ranking of tools for `discover_tools`.

BM25 over weighted fields (name, category, action, summary, description, parameter
names and descriptions), with the action vocabulary as verb synonyms, light stemming,
stop words and typo tolerance. Deterministic: ties break by tool name.
"""

from __future__ import annotations

import difflib
import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from functools import lru_cache

from .actions import normalize_action
from .definition import ToolDefinition

_SPLIT = re.compile(r"[^0-9a-z]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_STOP = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "can",
        "do",
        "for",
        "from",
        "how",
        "i",
        "in",
        "into",
        "is",
        "it",
        "its",
        "me",
        "my",
        "of",
        "on",
        "or",
        "please",
        "that",
        "the",
        "this",
        "to",
        "want",
        "was",
        "what",
        "when",
        "which",
        "who",
        "will",
        "with",
        "would",
        "you",
        "your",
    ]
)
_FIELD_WEIGHTS = {
    "name": 3.0,
    "category": 2.0,
    "action": 1.5,
    "summary": 2.0,
    "description": 1.0,
    "params": 0.5,
}
_K1 = 1.2
_B = 0.75


@lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    for suffix, keep in (("ies", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("s", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3 and not word.endswith("ss"):
            return word[: -len(suffix)] + keep
    return word


def tokenize(text: str) -> list[str]:
    """Lowercase words split on punctuation, '_', '.' and camelCase, stemmed, without stop words."""
    words = _SPLIT.split(_CAMEL.sub(" ", text).lower())
    return [_stem(w) for w in words if w and w not in _STOP]


def _tool_fields(d: ToolDefinition) -> dict[str, str]:
    return {
        "name": d.name,
        "category": d.category,
        "action": f"{d.action} {d.verb}",
        "summary": d.summary,
        "description": d.description,
        "params": d.parameter_text(),
    }


class SearchIndex:
    """An immutable BM25 index over a fixed list of tools."""

    def __init__(self, tools: Iterable[ToolDefinition]) -> None:
        self._tools = sorted(tools, key=lambda d: d.name)
        self._docs: list[dict[str, float]] = []
        self._lengths: list[float] = []
        df: Counter[str] = Counter()
        for d in self._tools:
            weighted: dict[str, float] = {}
            for field_name, text in _tool_fields(d).items():
                weight = _FIELD_WEIGHTS[field_name]
                for token in tokenize(text):
                    weighted[token] = weighted.get(token, 0.0) + weight
            self._docs.append(weighted)
            self._lengths.append(sum(weighted.values()))
            df.update(weighted.keys())
        n = max(len(self._tools), 1)
        self._idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}
        self._avg = (sum(self._lengths) / n) or 1.0
        self._vocab = sorted(self._idf)
        self._postings: dict[str, list[int]] = {}
        for i, doc in enumerate(self._docs):
            for token in doc:
                self._postings.setdefault(token, []).append(i)

    def _expand(self, query: str) -> tuple[list[str], str | None]:
        """Query tokens with typos corrected, and the action a verb in the query maps to."""
        tokens: list[str] = []
        action = None
        for raw in _SPLIT.split(query.lower()):
            if not raw or raw in _STOP:
                continue
            action = action or normalize_action(raw)
            token = _stem(raw)
            if token not in self._idf and len(token) > 3:
                close = difflib.get_close_matches(token, self._vocab, n=1, cutoff=0.8)
                token = close[0] if close else token
            tokens.append(token)
        return tokens, action

    def search(self, query: str, allowed: set[str] | None = None) -> list[tuple[ToolDefinition, float]]:
        """Tools scoring above zero for `query`, best first, restricted to `allowed` names if given."""
        tokens, action = self._expand(query)
        scores: dict[int, float] = {}
        for token in tokens:
            idf = self._idf.get(token)
            if idf is None:
                continue
            for i in self._postings[token]:
                tf = self._docs[i][token]
                norm = tf * (_K1 + 1) / (tf + _K1 * (1 - _B + _B * self._lengths[i] / self._avg))
                scores[i] = scores.get(i, 0.0) + idf * norm
        ranked: list[tuple[ToolDefinition, float]] = []
        for i, score in scores.items():
            d = self._tools[i]
            if allowed is not None and d.name not in allowed:
                continue
            boost = 1.5 if action is not None and d.action == action else 1.0
            ranked.append((d, score * boost))
        ranked.sort(key=lambda pair: (-pair[1], pair[0].name))
        return ranked


def rank_names(index: SearchIndex, query: str, names: Sequence[str]) -> list[str]:
    """Names from `names` ranked for `query` (those that do not match are dropped)."""
    return [d.name for d, _ in index.search(query, set(names))]

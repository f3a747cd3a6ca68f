"""The plain BM25 baselines every figure is printed next to: bm25s and rank-bm25, default parameters.

Both index the same text (name, description, category, parameter names and descriptions) with the
same tokenizer: bm25s's (lowercase words, English stop words) after splitting identifiers on '_'
and camelCase, and the Snowball English stemmer (PyStemmer). That is the evaluation data's
README baseline, and a stronger one than BM25 over raw identifiers.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def _split(text: str) -> str:
    return _CAMEL.sub(" ", text).replace("_", " ")


def tokenize(texts: Sequence[str], *, ids: bool) -> Any:
    import bm25s
    import Stemmer

    return bm25s.tokenize(
        [_split(t) for t in texts],
        stopwords="en",
        stemmer=Stemmer.Stemmer("english"),
        show_progress=False,
        return_ids=ids,
    )


class Bm25s:
    """bm25s (sparse-matrix BM25 over numpy)."""

    label = "BM25 (bm25s)"

    def __init__(self, texts: Sequence[str]) -> None:
        import bm25s

        self.n = len(texts)
        self.retriever = bm25s.BM25()
        self.retriever.index(tokenize(texts, ids=True), show_progress=False)

    def rank(self, query: str, k: int = 10, mask: Any = None) -> list[int]:
        """Indexes of the best `k` documents (fewer when fewer match), best first."""
        ids = self.retriever.get_tokens_ids(tokenize([query], ids=False)[0])
        if not ids:
            return []
        scores = self.retriever.get_scores(ids, weight_mask=mask)
        k = min(k, self.n)
        top = scores.argpartition(-k)[-k:]
        ordered = sorted(top.tolist(), key=lambda i: (-scores[i], i))
        return [i for i in ordered if scores[i] > 0]


class RankBm25:
    """rank-bm25's BM25Okapi (a Python loop over documents per query word, numpy for the sums)."""

    label = "BM25 (rank-bm25)"

    def __init__(self, texts: Sequence[str]) -> None:
        from rank_bm25 import BM25Okapi

        self.retriever = BM25Okapi(tokenize(texts, ids=False))

    def rank(self, query: str, k: int = 10) -> list[int]:
        scores = self.retriever.get_scores(tokenize([query], ids=False)[0])
        k = min(k, len(scores))
        top = scores.argpartition(-k)[-k:]
        ordered = sorted(top.tolist(), key=lambda i: (-scores[i], i))
        return [i for i in ordered if scores[i] > 0]

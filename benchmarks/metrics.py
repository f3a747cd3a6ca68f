"""Ranking metrics with the semantics of the evaluation data's reference scorer (`score.py`).

R@k: share of gold groups in the top k; N@k: binary nDCG, ideal over min(#groups, k); C@k: all gold
groups in the top k; H@k: any gold group in the top k; MRR@10. A group is found when any member is.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

KS = (1, 3, 5, 10)


def gold_groups(query: Mapping[str, Any]) -> list[list[str]]:
    groups: list[list[str]] = query.get("gold_groups") or [[g] for g in query["gold"]]
    return groups


def query_metrics(ranking: Sequence[str], groups: Sequence[Sequence[str]]) -> dict[str, float]:
    pos: dict[str, int] = {}
    for i, name in enumerate(ranking):
        pos.setdefault(name, i + 1)
    ranks = [min((pos.get(n, math.inf) for n in g), default=math.inf) for g in groups]
    out: dict[str, float] = {}
    for k in KS:
        hit = [r for r in ranks if r <= k]
        idcg = sum(1 / math.log2(i + 1) for i in range(1, min(len(ranks), k) + 1))
        out[f"R@{k}"] = len(hit) / len(ranks)
        out[f"N@{k}"] = sum(1 / math.log2(r + 1) for r in hit) / idcg
        out[f"C@{k}"] = float(len(hit) == len(ranks))
        out[f"H@{k}"] = float(bool(hit))
    first = min(ranks)
    out["MRR@10"] = 1 / first if first <= 10 else 0.0
    return out


def aggregate(rankings: Iterable[Sequence[str]], queries: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """Mean metrics over queries, as percentages rounded to two decimals."""
    total: dict[str, float] = {}
    for ranking, query in zip(rankings, queries, strict=True):
        for key, value in query_metrics(list(ranking)[: max(KS)], gold_groups(query)).items():
            total[key] = total.get(key, 0.0) + value
    return {key: round(100 * value / max(len(queries), 1), 2) for key, value in total.items()}

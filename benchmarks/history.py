"""History for the learning-from-use benchmark: a development split, and feeding it to a gateway.

History lines are in the datasets' `queries.jsonl` format; each is fed through `Usage.import_lines`,
the path `gateway usage import` takes, with every gold tool a positive for its query.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gateway.usage import Limits, SqliteUsageStore, Usage

from .datasets import Dataset


def is_history(query: str) -> bool:
    """The development split: sha1 of the query's UTF-8 bytes, as an integer, divisible by 4."""
    return int(hashlib.sha1(query.encode("utf-8")).hexdigest(), 16) % 4 == 0


def split(queries: Sequence[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(history, test) of a dataset's queries by `is_history`."""
    history = [q for q in queries if is_history(q["query"])]
    test = [q for q in queries if not is_history(q["query"])]
    return history, test


def usage_from(
    data: Dataset, history: Sequence[dict[str, Any]], *, semantic: bool, limits: Limits | None = None
) -> tuple[Usage, int]:
    """A `Usage` on an in-memory store holding `history` (with the store's default bounds, or
    `limits`); (it, pairs recorded)."""
    usage = Usage(SqliteUsageStore(":memory:", limits=limits), semantic=semantic)
    lines = []
    for record in history:
        gold = set(record.get("gold") or [])
        for group in record.get("gold_groups") or []:
            gold.update(group)
        tools = sorted(data.to_catalog[name] for name in gold if name in data.to_catalog)
        if tools:
            lines.append(json.dumps({"query": record["query"], "tools": tools}))
    recorded, problems = usage.import_lines(lines)
    assert not problems, problems[:3]
    usage.learned(list(data.catalog), wait=True)  # read the store now, not in the first query
    return usage, recorded


def plot_growth(
    points: Sequence[tuple[float, float, float]],
    zero_shot: float,
    bm25: float,
    out: Path,
    zero_shot_r1: float | None = None,
) -> None:
    """R@5 and R@1 against the share of history used (log scale), with zero-shot and BM25 lines."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    shares = [100 * share for share, _, _ in points]
    ax.plot(shares, [r5 for _, r5, _ in points], "o-", label="R@5 with history")
    ax.plot(shares, [r1 for _, _, r1 in points], "s--", label="R@1 with history")
    ax.axhline(zero_shot, color="grey", linestyle=":", label=f"R@5 zero-shot ({zero_shot:.1f})")
    if zero_shot_r1 is not None:
        ax.axhline(
            zero_shot_r1, color="tab:orange", linestyle=":", label=f"R@1 zero-shot ({zero_shot_r1:.1f})"
        )
    ax.axhline(bm25, color="black", linestyle="-.", linewidth=0.8, label=f"R@5 BM25 ({bm25:.1f})")
    ax.set_xscale("log")
    ax.set_xlabel("history imported (% of the development history)")
    ax.set_ylabel("% of the test requests")
    ax.set_title("metatool test split: learning from history")
    ax.legend(fontsize=8, loc="upper left")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(out, dpi=110)

"""Discovery quality: our `discover_tools` ranking next to plain BM25, on one dataset folder.

    python -m benchmarks.discovery DATASET_DIR [--rankings OUT.jsonl] [--max-queries N]

DATASET_DIR is a folder holding `tools.jsonl` and `queries.jsonl` (`benchmarks.datasets.WHERE_FROM`
says what they hold; the data is not part of the repository, and a missing folder exits with status 2
and that sentence). The tools are imported into a real `Catalog` (see `benchmarks.datasets`) and
every query goes through `Gateway.discover`, exactly the path a model's `discover_tools` call takes; a query's `categories`
hint, when the dataset gives one, is passed as the categories filter to both engines. The baseline
is bm25s over the same tool text, run in the same process. Metrics follow the reference scorer.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from gateway import Catalog, Gateway, Principal
from gateway.names import to_name
from gateway.search import SearchIndex, semantic_available

from .baseline import Bm25s
from .datasets import Dataset, baseline_text, load, require
from .metrics import aggregate

COLUMNS = ("R@1", "R@5", "N@5", "H@5")


def _progress(label: str, done: int, total: int) -> None:
    if done == total or done % max(total // 50, 1) == 0:
        print(f"\r  {label}: {done}/{total} queries", end="\n" if done == total else "", file=sys.stderr)


def _run(
    label: str, rank: Callable[[dict[str, Any]], list[str]], queries: Sequence[dict[str, Any]]
) -> tuple[list[list[str]], list[float]]:
    rankings: list[list[str]] = []
    latencies: list[float] = []
    for i, query in enumerate(queries, 1):
        start = time.perf_counter()
        rankings.append(rank(query))
        latencies.append((time.perf_counter() - start) * 1000)
        _progress(label, i, len(queries))
    return rankings, latencies


class _Gateway(Gateway):
    """A gateway whose index is built with the semantic layer on or off, whatever is installed."""

    def __init__(self, catalog: Catalog, semantic: bool) -> None:
        super().__init__(catalog)
        self._search_index = SearchIndex(catalog, semantic=semantic)

    def index(self, principal: Principal | None = None) -> SearchIndex:
        return self._search_index


def ours(data: Dataset, semantic: bool) -> Callable[[dict[str, Any]], list[str]]:
    gateway = _Gateway(data.catalog, semantic)
    principal = Principal()

    def rank(query: dict[str, Any]) -> list[str]:
        hint = query.get("categories")
        categories = sorted({to_name(c) for c in hint}) if hint else None
        out = gateway.discover(principal, query=query["query"], categories=categories, limit=10)
        return [data.to_source[t["name"]] for t in out.get("tools", [])]

    return rank


def baseline(data: Dataset) -> Callable[[dict[str, Any]], list[str]]:
    import numpy as np

    engine = Bm25s([baseline_text(t) for t in data.tools])
    names = [str(t["name"]) for t in data.tools]
    categories = np.array([str(t.get("category") or "") for t in data.tools])

    def rank(query: dict[str, Any]) -> list[str]:
        hint = query.get("categories")
        mask = np.isin(categories, list(hint)).astype(np.float32) if hint else None
        return [names[i] for i in engine.rank(query["query"], 10, mask)]

    return rank


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("dataset", type=Path, help="folder holding tools.jsonl and queries.jsonl")
    parser.add_argument("--rankings", type=Path, help="write each query's top-10 of our engine to this JSONL")
    parser.add_argument("--max-queries", type=int, default=0, help="score only the first N queries (0: all)")
    args = parser.parse_args(argv)
    require([args.dataset], "benchmarks.discovery")

    start = time.perf_counter()
    data = load(args.dataset)
    queries = data.queries[: args.max_queries] if args.max_queries else data.queries
    print(
        f"dataset {args.dataset.name}: {len(data.catalog)} tools, {len(queries)} queries "
        f"(loaded into a Catalog in {time.perf_counter() - start:.1f} s)",
        file=sys.stderr,
    )
    engines: list[tuple[str, Callable[[], Callable[[dict[str, Any]], list[str]]]]] = [
        ("ours, lexical (default install)", lambda: ours(data, semantic=False))
    ]
    if semantic_available():
        engines.append(("ours, hybrid ('search' extra)", lambda: ours(data, semantic=True)))
    else:
        print("the 'search' extra is not installed: hybrid engine skipped", file=sys.stderr)
    engines.append(("BM25 baseline (bm25s)", lambda: baseline(data)))
    our_rankings: list[list[str]] = []
    results: list[tuple[str, dict[str, float], list[float]]] = []
    for label, factory in engines:
        rankings, latencies = _run(label, factory(), queries)
        results.append((label, aggregate(rankings, queries), latencies))
        if label.startswith("ours"):
            our_rankings = rankings  # the best installed engine's: the last of ours

    load_avg = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(
        f"\n{args.dataset.name}: {len(data.catalog)} tools, {len(queries)} queries; load average {load_avg}"
    )
    print(f"| engine | {' | '.join(COLUMNS)} | median ms/query |")
    print(f"|---|{'---|' * len(COLUMNS)}---|")
    for label, metrics, latencies in results:
        cells = " | ".join(f"{metrics[c]:.1f}" for c in COLUMNS)
        print(f"| {label} | {cells} | {statistics.median(latencies):.3f} |")
    base = results[-1][1]
    for label, metrics, _ in results[:-1]:
        delta = " | ".join(f"{metrics[c] - base[c]:+.1f}" for c in COLUMNS)
        print(f"| {label.split(' (')[0]} minus baseline | {delta} | |")

    if args.rankings:
        with args.rankings.open("w", encoding="utf-8") as fh:
            for query, ranking in zip(queries, our_rankings, strict=True):
                fh.write(json.dumps({"query": query["query"], "ranking": ranking}, ensure_ascii=False) + "\n")
        print(f"rankings written to {args.rankings}", file=sys.stderr)


if __name__ == "__main__":
    main()

"""Learning from use, its cost: discover latency with stored pairs, and how fast history imports.

    python -m benchmarks.learning [--tools 10000] [--pairs 100000] [--import-pairs 20000] [--queries 300]

A catalog of `--tools` tools (the shared datasets' tools and altered copies, as `benchmarks.speed`
makes them) is served by `Gateway.discover`, the path of a model's `discover_tools`, three ways in
the same process: without learning (the baseline), with an empty usage store, and with `--pairs`
stored pairs (past queries drawn from the datasets' requests, each mostly leading to one tool). The
queries run once through a small index before any row is timed, so the word caches are as warm for
the first row as for the last. The import row times `Usage.import_lines`, the path of `gateway usage
import`, into a SQLite file.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
import sys
import tempfile
import time
import zlib
from collections.abc import Sequence
from pathlib import Path

from gateway import Catalog, Gateway, Principal, ToolDefinition
from gateway.search import SearchIndex
from gateway.usage import Pair, SqliteUsageStore, Usage

from .datasets import load, require
from .speed import DATASETS, DEFAULT_EVAL_DIR, load_average, measure_queries, sample_queries, synthetic


def _history(queries: Sequence[str], tools: Sequence[str], n: int, seed: int = 5) -> list[Pair]:
    """`n` pairs as traffic makes them: a request mostly leads to one tool (its own), now and then to
    another, and comes back in slightly different words from many principals."""
    rng = random.Random(seed)
    principals = [f"user{i}" for i in range(200)]
    pairs = []
    for _ in range(n):
        base = rng.choice(queries)
        tool = tools[zlib.crc32(base.encode()) % len(tools)] if rng.random() < 0.9 else rng.choice(tools)
        words = f"{base} {rng.choice(['', 'please', 'now', 'today', 'for me', 'again'])}".strip()
        pairs.append(Pair(words, tool, rng.choice(principals)))
    return pairs


def _base_tools(eval_dir: Path) -> list[ToolDefinition]:
    """Every tool of the shared datasets, named after its dataset (as `benchmarks.speed` imports them)."""
    base: list[ToolDefinition] = []
    for name in DATASETS:
        data = load(eval_dir / name)
        base.extend(dataclasses.replace(d, name=f"{name[:4]}_{d.name}"[:64]) for d in data.catalog)
    return base


def _warm(tools: Sequence[ToolDefinition], queries: Sequence[str]) -> None:
    """One pass over the queries, as `benchmarks.speed` makes: the stemmer's and the tokenizer's word
    caches are then as warm for the first row as for the others (and as in a running gateway)."""
    warm = SearchIndex(tools[:100])
    for q in queries:
        warm.search(q, limit=10)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--tools", type=int, default=10_000)
    parser.add_argument("--pairs", type=int, default=100_000)
    parser.add_argument("--import-pairs", type=int, default=20_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--eval-dir", type=Path, default=DEFAULT_EVAL_DIR)
    args = parser.parse_args(argv)
    require([args.eval_dir / name for name in DATASETS], "benchmarks.learning", " Pass --eval-dir DIR.")

    base = _base_tools(args.eval_dir)
    catalog = Catalog(synthetic(base, args.tools))
    names = sorted(catalog.by_name)
    queries = sample_queries(args.eval_dir, args.queries)
    pool = sample_queries(args.eval_dir, 20_000, seed=3)
    principal = Principal()
    rows: list[tuple[str, float, float, float]] = []

    def timed(label: str, gateway: Gateway) -> None:
        gateway.index()
        median, p99 = measure_queries(lambda q: gateway.discover(principal, query=q), queries)
        rows.append((label, median, p99, load_average()))
        print(f"  {label}: {median:.3f} ms median", file=sys.stderr)

    print(f"{args.tools:,} tools, {args.queries} queries", file=sys.stderr)
    _warm(base, queries)
    timed("no learning (baseline)", Gateway(catalog, search_cache_dir=False))
    timed("learning, empty store", Gateway(catalog, search_cache_dir=False, usage=Usage(SqliteUsageStore())))
    with tempfile.TemporaryDirectory() as directory:
        store = SqliteUsageStore(Path(directory) / "usage.sqlite3")
        start = time.perf_counter()
        store.add(_history(pool, names, args.pairs), daily_cap=False)
        print(f"  {args.pairs:,} pairs stored in {time.perf_counter() - start:.1f} s", file=sys.stderr)
        usage = Usage(store)
        start = time.perf_counter()
        learned = usage.learned(list(catalog), wait=True)
        built = time.perf_counter() - start
        print(
            f"  learned index of {len(learned or ()):,} tools read and built in {built:.1f} s",
            file=sys.stderr,
        )
        timed(f"learning, {args.pairs:,} pairs stored", Gateway(catalog, search_cache_dir=False, usage=usage))

        timed("no learning (baseline, again)", Gateway(catalog, search_cache_dir=False))

        lines = [
            json.dumps({"query": p.query, "tools": [p.tool]})
            for p in _history(pool, names, args.import_pairs, 9)
        ]
        importer = Usage(SqliteUsageStore(Path(directory) / "import.sqlite3"))
        start = time.perf_counter()
        recorded, problems = importer.import_lines(lines)
        imported = time.perf_counter() - start
        assert not problems

    # The baseline is timed first and last; the ratio is to their mean, so drift cancels.
    base_median = (rows[0][1] + rows[-1][1]) / 2
    print(f"\n{args.tools:,} tools, {args.queries} queries timed per row")
    print("| engine | median ms | p99 ms | median / baseline | load |")
    print("|---|---|---|---|---|")
    for label, median, p99, load_avg in rows:
        print(f"| {label} | {median:.3f} | {p99:.3f} | {median / base_median:.2f} | {load_avg:.2f} |")
    print(
        f"\nimport of {args.import_pairs:,} pairs (`gateway usage import`'s path): {imported:.2f} s ({recorded:,} recorded)"
    )
    print(
        f"reading {args.pairs:,} stored pairs and building the learned index: {built:.2f} s (in the background)"
    )


if __name__ == "__main__":
    main()

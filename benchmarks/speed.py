"""Discovery speed: query latency, index build time and memory per tool, ours next to BM25 libraries.

    python -m benchmarks.speed [--sizes 100 1000 10000 100000] [--queries 300] [--eval-dir ../shared/eval]

Catalogs of each size are synthesised from the real ones in the evaluation data (every tool of
metatool, livemcpbench and bfcl, imported as in `benchmarks.discovery`): copies get a new name, a
new category, and a second tool's summary appended to their description, so the vocabulary and the
posting lists grow as in a real catalog. Queries are drawn, with a fixed seed, from the three query
sets. Measured in one process, one engine after the other:

- ours, `SearchIndex.search(query, limit=10)` (the engine), and `Gateway.discover(query, limit=10)`
  (the whole meta-tool call: filters, exact and prefix names, paging, the JSON-ready answer);
- bm25s and rank-bm25 over the same text (`benchmarks.baseline`), top 10.

Memory is what tracemalloc sees allocated by the index build (Python objects and numpy arrays) and
still held after it, divided by the number of tools. rank-bm25 scores every document in Python for
every query, so it gets at most 30 queries at 10,000 tools and more, and none at 100,000.
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import json
import random
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from gateway import Catalog, Gateway, Principal, ToolDefinition
from gateway.search import SearchIndex, semantic_available

from .datasets import load

DATASETS = ("metatool", "livemcpbench", "bfcl")
DEFAULT_EVAL_DIR = Path(__file__).resolve().parents[2] / "shared" / "eval"


def synthetic(base: Sequence[ToolDefinition], size: int, seed: int = 7) -> list[ToolDefinition]:
    """`size` tools: the base tools first, then altered copies of them."""
    rng = random.Random(seed)
    out: list[ToolDefinition] = []
    for i in range(size):
        d = base[i % len(base)]
        copy = i // len(base)
        if copy:
            other = base[rng.randrange(len(base))]
            d = dataclasses.replace(
                d,
                name=f"{d.name[:54]}_v{copy}",
                category=f"{d.category[:40]}_{copy % 50}",
                description=f"{d.description} {other.summary}",
            )
        out.append(d)
    return out


def tool_text(d: ToolDefinition) -> str:
    """The baseline's text for a tool: name, description, category, parameter names and descriptions."""
    params = " ".join(f"{n} {f.description or ''}" for n, f in d.params.model_fields.items())
    return f"{d.name} {d.description} {d.category} {params}"


def measure_build(build: Callable[[], Any]) -> tuple[Any, float, int]:
    """(result, seconds, bytes held) of a build: timed untraced, then built again under tracemalloc."""
    gc.collect()
    start = time.perf_counter()
    result = build()
    seconds = time.perf_counter() - start
    del result
    gc.collect()
    tracemalloc.start()
    result = build()
    held, _peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return result, seconds, held


def measure_queries(run: Callable[[str], Any], queries: Sequence[str]) -> tuple[float, float]:
    """(median ms, p99 ms) of `run` over the queries, after a short warm-up."""
    for q in queries[:5]:
        run(q)
    latencies = []
    for q in queries:
        start = time.perf_counter()
        run(q)
        latencies.append((time.perf_counter() - start) * 1000)
    latencies.sort()
    p99 = latencies[min(len(latencies) - 1, round(0.99 * (len(latencies) - 1)))]
    return statistics.median(latencies), p99


@dataclasses.dataclass
class Row:
    size: int
    engine: str
    build_s: float
    bytes_per_tool: float
    median_ms: float
    p99_ms: float
    queries: int


def bench_size(size: int, base: Sequence[ToolDefinition], queries: Sequence[str]) -> list[Row]:
    from .baseline import Bm25s, RankBm25

    tools = synthetic(base, size)
    rows: list[Row] = []

    def add(engine: str, build: Callable[[], Any], run: Callable[[Any, str], Any], n_queries: int) -> None:
        print(f"  {size:>7} tools: {engine} ...", file=sys.stderr, flush=True)
        built, seconds, held = measure_build(build)
        median, p99 = measure_queries(lambda q: run(built, q), queries[:n_queries])
        rows.append(Row(size, engine, seconds, held / size, median, p99, n_queries))

    search = lambda ix, q: ix.search(q, limit=10)  # noqa: E731
    add("ours: SearchIndex, lexical", lambda: SearchIndex(tools, semantic=False), search, len(queries))
    if semantic_available():
        add("ours: SearchIndex, hybrid", lambda: SearchIndex(tools, semantic=True), search, len(queries))
    catalog = Catalog(tools)
    principal = Principal()

    def gateway() -> Gateway:
        gw = Gateway(catalog)
        gw.index()
        gw.visible(principal)
        return gw

    add(
        f"ours: Gateway.discover, {'hybrid' if semantic_available() else 'lexical'}",
        gateway,
        lambda gw, q: gw.discover(principal, query=q, limit=10),
        len(queries),
    )
    texts = [tool_text(d) for d in tools]
    add("bm25s", lambda: Bm25s(texts), lambda ix, q: ix.rank(q, 10), len(queries))
    if size <= 10_000:
        n = len(queries) if size < 10_000 else min(30, len(queries))
        add("rank-bm25", lambda: RankBm25(texts), lambda ix, q: ix.rank(q, 10), n)
    return rows


def sample_queries(eval_dir: Path, n: int, seed: int = 11) -> list[str]:
    rng = random.Random(seed)
    pools = []
    for name in DATASETS:
        with (eval_dir / name / "queries.jsonl").open(encoding="utf-8") as fh:
            pools.append([json.loads(line)["query"] for line in fh if line.strip()])
    return [rng.choice(pools[i % len(pools)]) for i in range(n)]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs="*", default=[100, 1_000, 10_000, 100_000])
    parser.add_argument("--queries", type=int, default=300, help="queries timed per engine and size")
    parser.add_argument("--eval-dir", type=Path, default=DEFAULT_EVAL_DIR)
    parser.add_argument("--json", type=Path, help="also write the rows to this JSON file (for the plot)")
    args = parser.parse_args(argv)

    base: list[ToolDefinition] = []
    for name in DATASETS:
        data = load(args.eval_dir / name)
        base.extend(dataclasses.replace(d, name=f"{name[:4]}_{d.name}"[:64]) for d in data.catalog)
    queries = sample_queries(args.eval_dir, args.queries)
    print(f"{len(base)} real tools, {len(queries)} queries", file=sys.stderr)

    rows: list[Row] = []
    for size in args.sizes:
        rows.extend(bench_size(size, base, queries))

    print("| tools | engine | build (s) | memory per tool | median (ms) | p99 (ms) | queries |")
    print("|---:|---|---:|---:|---:|---:|---:|")
    for r in rows:
        print(
            f"| {r.size:,} | {r.engine} | {r.build_s:.3f} | {r.bytes_per_tool / 1024:.1f} KiB "
            f"| {r.median_ms:.3f} | {r.p99_ms:.3f} | {r.queries} |"
        )
    if args.json:
        args.json.write_text(json.dumps([dataclasses.asdict(r) for r in rows], indent=1))


if __name__ == "__main__":
    main()

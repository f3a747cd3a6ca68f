"""Discovery speed: query latency, index build (or cache load) time, memory per tool; BM25 libraries beside.

    python -m benchmarks.speed [--eval-dir DIR] [--sizes 100 1000 10000 100000] [--queries 300] [--json FILE]

DIR holds the dataset folders metatool, livemcpbench and bfcl (see `benchmarks.datasets`; the data is
not part of the repository, and without it the command exits with status 2 and says so).

Catalogs of each size are synthesised from the real ones in the evaluation data (every tool of
metatool, livemcpbench and bfcl, imported as in `benchmarks.discovery`): copies get a new name, a
new category, and a second tool's summary appended to their description, so the vocabulary and the
posting lists grow as in a real catalog. Queries are drawn, with a fixed seed, from the three query
sets, and run once through a small index before timing (word caches warm, as in a running
gateway). Measured in one process, one engine after the other, each answering `limit=10`:

- ours, `SearchIndex.search`: lexical with numpy scoring (`fast` or `search` extra), lexical pure
  Python (the core install), hybrid (the `search` extra); the hybrid again loaded with
  `SearchIndex.load_or_build` from a warm disk cache (its build column is the load time);
- ours, `Gateway.discover` (the whole meta-tool call: filters, exact and prefix names, paging, the
  JSON-ready answer); `Gateway.index()` loads the index from that cache from `CACHE_MIN_TOOLS` tools
  up and builds it below that, so its build column is the gateway's start-up;
- bm25s and rank-bm25 over the same text (`benchmarks.baseline`).

Memory is what tracemalloc sees allocated by the build (Python objects and numpy arrays) and still
held after it, divided by the number of tools. rank-bm25 scores every document in Python for every
query, so it gets at most 30 queries at 10,000 tools and none at 100,000. Above
`SEMANTIC_EXACT_LIMIT` tools the hybrid shortlists with a vector prefix; its top 10 is compared with
exact scoring of every tool. Other processes share the machine: the load average is printed with
every row, and figures are only comparable within one run.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import gc
import json
import os
import platform
import random
import statistics
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from gateway import Catalog, Gateway, Principal, ToolDefinition
from gateway.search import SearchIndex, numpy_available, semantic_available
from gateway.search import semantic as search_semantic

from .datasets import load, require

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
    params = " ".join(f"{n} {f.description or ''}" for n, f in d.model.model_fields.items())
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
    load: float
    """The 1-minute load average when the row's queries were timed."""


def load_average() -> float:
    return os.getloadavg()[0]


def agreement(shortlisted: SearchIndex, exact: SearchIndex, queries: Sequence[str]) -> dict[str, float]:
    """How often the shortlisted hybrid's top 10 is exact scoring's: same list, and overlap."""
    same, overlap = 0, 0.0
    for q in queries:
        a = [d.name for d, _ in shortlisted.search(q, limit=10)]
        b = [d.name for d, _ in exact.search(q, limit=10)]
        same += a == b
        overlap += len(set(a) & set(b)) / max(len(b), 1)
    return {"identical_top10": 100 * same / len(queries), "top10_overlap": 100 * overlap / len(queries)}


def bench_size(
    size: int, base: Sequence[ToolDefinition], queries: Sequence[str], cache_dir: Path
) -> tuple[list[Row], dict[str, float] | None]:
    from .baseline import Bm25s, RankBm25

    tools = synthetic(base, size)
    rows: list[Row] = []

    def add(engine: str, build: Callable[[], Any], run: Callable[[Any, str], Any], n_queries: int) -> Any:
        print(f"  {size:>7} tools: {engine} ...", file=sys.stderr, flush=True)
        built, seconds, held = measure_build(build)
        load = load_average()
        median, p99 = measure_queries(lambda q: run(built, q), queries[:n_queries])
        rows.append(Row(size, engine, seconds, held / size, median, p99, n_queries, load))
        return built

    search = lambda ix, q: ix.search(q, limit=10)  # noqa: E731
    if numpy_available():
        add("ours: lexical, numpy", lambda: SearchIndex(tools, semantic=False), search, len(queries))
    add(
        "ours: lexical, pure Python",
        lambda: SearchIndex(tools, semantic=False, vectorized=False),
        search,
        len(queries),
    )
    layer = "hybrid" if semantic_available() else "lexical"
    if semantic_available():
        hybrid = add("ours: hybrid", lambda: SearchIndex(tools, semantic=True), search, len(queries))
        del hybrid
    SearchIndex.load_or_build(tools, cache_dir, min_tools=0)  # warm the cache (a build, untimed)
    cached = add(
        f"ours: {layer}, from the cache",
        lambda: SearchIndex.load_or_build(tools, cache_dir, min_tools=0),
        search,
        len(queries),
    )
    agreed = None
    if cached.semantic and size > search_semantic.SEMANTIC_EXACT_LIMIT:
        limit = search_semantic.SEMANTIC_EXACT_LIMIT
        search_semantic.SEMANTIC_EXACT_LIMIT = sys.maxsize
        try:
            exact = SearchIndex.load_or_build(tools, cache_dir, min_tools=0)
        finally:
            search_semantic.SEMANTIC_EXACT_LIMIT = limit
        agreed = agreement(cached, exact, queries)
        del exact
    del cached
    catalog = Catalog(tools)
    principal = Principal()

    def gateway() -> Gateway:
        gw = Gateway(catalog, search_cache_dir=cache_dir)
        gw.index()  # from the cache from CACHE_MIN_TOOLS tools up, built below that
        gw.visible(principal)
        return gw

    add(
        f"ours: Gateway.discover, {layer}",
        gateway,
        lambda gw, q: gw.discover(principal, query=q, limit=10),
        len(queries),
    )
    texts = [tool_text(d) for d in tools]
    add("bm25s", lambda: Bm25s(texts), lambda ix, q: ix.rank(q, 10), len(queries))
    if size <= 10_000:
        n = len(queries) if size < 10_000 else min(30, len(queries))
        add("rank-bm25", lambda: RankBm25(texts), lambda ix, q: ix.rank(q, 10), n)
    return rows, agreed


def machine() -> dict[str, Any]:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            cpu = next(line.split(":", 1)[1].strip() for line in fh if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    versions = {}
    for package in ("numpy", "bm25s", "rank-bm25", "wordllama"):
        with contextlib.suppress(metadata.PackageNotFoundError):
            versions[package] = metadata.version(package)
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "system": platform.platform(terse=True),
        **versions,
    }


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
    require(
        [args.eval_dir / name for name in DATASETS],
        "benchmarks.speed",
        f" Pass --eval-dir DIR, a folder holding the dataset folders {', '.join(DATASETS)}.",
    )

    base: list[ToolDefinition] = []
    for name in DATASETS:
        data = load(args.eval_dir / name)
        base.extend(dataclasses.replace(d, name=f"{name[:4]}_{d.name}"[:64]) for d in data.catalog)
    queries = sample_queries(args.eval_dir, args.queries)
    print(f"{len(base)} real tools, {len(queries)} queries", file=sys.stderr)

    info = machine()
    print(f"machine: {json.dumps(info)}", file=sys.stderr)
    # One pass over the queries first: the stemmer's and the tokenizer's word caches are then as
    # warm for the first engine measured as for the last (and as in a gateway that has been running).
    warm = SearchIndex(base[:100])
    for q in queries:
        warm.search(q, limit=10)
    start_load = os.getloadavg()
    rows: list[Row] = []
    agreements: dict[int, dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="search-cache-") as cache:
        for size in args.sizes:
            found, agreed = bench_size(size, base, queries, Path(cache))
            rows.extend(found)
            if agreed is not None:
                agreements[size] = agreed
    end_load = os.getloadavg()

    print(f"machine: {info['cpu']}, {info['cores']} cores, Python {info['python']}")
    print(
        "load average (1, 5, 15 min): at start "
        + ", ".join(f"{x:.2f}" for x in start_load)
        + "; at end "
        + ", ".join(f"{x:.2f}" for x in end_load)
    )
    print("| tools | engine | build (s) | memory per tool | median (ms) | p99 (ms) | queries | load |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(
            f"| {r.size:,} | {r.engine} | {r.build_s:.3f} | {r.bytes_per_tool / 1024:.1f} KiB "
            f"| {r.median_ms:.3f} | {r.p99_ms:.3f} | {r.queries} | {r.load:.2f} |"
        )
    for size, agreed in agreements.items():
        print(
            f"hybrid at {size:,} tools, prefix shortlist vs exact scoring of every tool: identical top 10 "
            f"for {agreed['identical_top10']:.1f}% of queries, top-10 overlap {agreed['top10_overlap']:.1f}%"
        )
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "machine": info,
                    "load_average": {"start": start_load, "end": end_load},
                    "rows": [dataclasses.asdict(r) for r in rows],
                    "shortlist_agreement": agreements,
                },
                indent=1,
            )
        )


if __name__ == "__main__":
    main()

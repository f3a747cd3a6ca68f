"""Discovery quality: our `discover_tools` ranking next to plain BM25, on one dataset folder.

    python -m benchmarks.discovery DATASET_DIR [--rankings OUT.jsonl] [--max-queries N]
        [--history HISTORY.jsonl | --history-split] [--growth] [--queries-per-tool N]
        [--openapi NAME=SPEC]

With `--openapi NAME=SPEC` the tools are the operations of an OpenAPI description, served as the
`[[openapi]]` entry NAME serves them, and DATASET_DIR needs only `queries.jsonl` (gold names are tool
names): `benchmarks/data/github` holds requests over GitHub's REST API (its description is fetched by
`python -m tests.openapi_specs` into `.cache/specs/github.json`).

With history (a file in the `queries.jsonl` format, or `--history-split`: the dataset's queries whose
sha1 % 4 == 0, the rest being ranked), it is imported as `gateway usage import` would, and rows
"with history" follow the zero-shot ones on the same queries, each with the number of queries whose
first tool was right without history and is wrong with it (learning's harm). `--growth` adds rows for
1%, 10%, 30% and 100% of the history (`GROWTH`); `--queries-per-tool N` stores the history with that bound instead of
the `[usage]` default `max_queries_per_tool` (to measure it).

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
from typing import Any, NoReturn

from gateway import Catalog, Gateway, Principal
from gateway.names import to_name
from gateway.search import SearchIndex, dense_available, semantic_available
from gateway.usage import Limits, Usage

from .baseline import Bm25s
from .datasets import Dataset, baseline_text, load, load_openapi, read_jsonl, require
from .history import plot_growth, split, usage_from
from .metrics import aggregate, gold_groups
from .models import use_published_model

COLUMNS = ("R@1", "R@5", "N@5", "H@5")
GROWTH = (0.01, 0.1, 0.3, 1.0)
"""The shares of the history `--growth` measures (the first of its requests in the set's order)."""


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

    def __init__(
        self, catalog: Catalog, semantic: bool, usage: Usage | None = None, dense: bool = False
    ) -> None:
        super().__init__(catalog, usage=usage)
        self._search_index = SearchIndex(catalog, semantic=semantic, dense=dense)
        if self._search_index.dense is not None:
            self._search_index.dense.wait()  # a large catalog is encoded in the background

    def index(self, principal: Principal | None = None) -> SearchIndex:
        return self._search_index


def ours(
    data: Dataset, semantic: bool, usage: Usage | None = None, *, dense: bool = False
) -> Callable[[dict[str, Any]], list[str]]:
    gateway = _Gateway(data.catalog, semantic, usage, dense)
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


Engine = tuple[str, Callable[[], Callable[[dict[str, Any]], list[str]]]]


def _engines(
    data: Dataset, history: Sequence[dict[str, Any]], *, growth: bool, limits: Limits | None = None
) -> list[Engine]:
    """Ours zero-shot, ours with (shares of) the history, then the baseline: the table's rows in order."""
    semantic = semantic_available()
    engines: list[Engine] = [("ours, lexical (default install)", lambda: ours(data, semantic=False))]
    if semantic:
        engines.append(("ours, hybrid ('search' extra)", lambda: ours(data, semantic=True)))
        if dense_available():
            engines.append(("ours, hybrid + dense ('dense' extra)", lambda: ours(data, True, dense=True)))
    else:
        print("the 'search' extra is not installed: hybrid engine skipped", file=sys.stderr)
    if history:
        rows = [(False, False, 1.0)]
        rows += [(semantic, False, share) for share in (GROWTH if growth else (1.0,))]
        if semantic and dense_available():
            rows.append((True, True, 1.0))
        for hybrid, dense, share in rows:
            part = history[: max(1, round(len(history) * share))]
            kind = "hybrid + dense" if dense else "hybrid" if hybrid else "lexical"
            label = f"ours, {kind}, with {share:.0%} of the history ({len(part)} queries)"
            engines.append(
                (
                    label,
                    lambda part=part, hybrid=hybrid, dense=dense: ours(
                        data, hybrid, usage_from(data, part, semantic=hybrid, limits=limits)[0], dense=dense
                    ),
                )
            )
    engines.append(("BM25 baseline (bm25s)", lambda: baseline(data)))
    return engines


def top1_harmed(
    before: Sequence[Sequence[str]], after: Sequence[Sequence[str]], queries: Sequence[dict[str, Any]]
) -> int:
    """How many queries had a right first tool without history and a wrong one with it."""

    def right(ranking: Sequence[str], query: dict[str, Any]) -> bool:
        return bool(ranking) and any(ranking[0] in group for group in gold_groups(query))

    return sum(right(b, q) and not right(a, q) for b, a, q in zip(before, after, queries, strict=True))


def _history(
    args: argparse.Namespace, queries: list[dict[str, Any]]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(the history, the queries to rank) of `--history-split` or `--history FILE` (a file, not a folder)."""
    if args.history_split:
        return split(queries)
    if not args.history:
        return [], queries
    if not args.history.is_file():
        print(
            f"benchmarks.discovery --history: no history file at {args.history} "
            "(one past request a line, in the queries.jsonl format)",
            file=sys.stderr,
        )
        raise SystemExit(2)
    return read_jsonl(args.history), queries


def _dataset(root: Path) -> Dataset:
    require([root], "benchmarks.discovery")
    return load(root)


def _openapi_dataset(root: Path, option: str) -> Dataset:
    """The dataset of `--openapi NAME=SPEC`; a bad option, description or gold name exits with status 2."""
    from gateway.errors import UserError
    from gateway.openapi import SpecError

    def fail(problem: str) -> NoReturn:
        print(f"benchmarks.discovery --openapi: {problem}", file=sys.stderr)
        raise SystemExit(2)

    entry, _, spec = option.partition("=")
    if not entry or not spec:
        fail(f"{option!r} is not NAME=SPEC (e.g. github=.cache/specs/github.json)")
    if not Path(spec).is_file():
        fail(f"no description at {spec} (python -m tests.openapi_specs fetches GitHub's)")
    hint = " With --openapi the folder needs only queries.jsonl; benchmarks/data/github holds requests over GitHub's."
    require([root], "benchmarks.discovery", hint, files=("queries.jsonl",))
    try:
        data = load_openapi(root, entry, Path(spec))
    except (UserError, SpecError, ValueError) as exc:
        fail(str(exc))
    names = {n for q in data.queries for group in gold_groups(q) for n in group}
    unknown = sorted(n for n in names if n not in data.to_catalog)
    if unknown:
        fail(f"gold names the description has no operation for: {', '.join(unknown[:10])}")
    return data


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("dataset", type=Path, help="folder holding tools.jsonl and queries.jsonl")
    parser.add_argument("--rankings", type=Path, help="write each query's top-10 of our engine to this JSONL")
    parser.add_argument("--max-queries", type=int, default=0, help="score only the first N queries (0: all)")
    parser.add_argument("--history", type=Path, help="earlier traffic (queries.jsonl format) to learn from")
    parser.add_argument(
        "--history-split",
        action="store_true",
        help="history: the queries whose sha1 %% 4 == 0; rank the rest",
    )
    parser.add_argument(
        "--growth", action="store_true", help="rows for 1%%, 10%%, 30%% and 100%% of the history"
    )
    parser.add_argument(
        "--queries-per-tool",
        type=int,
        metavar="N",
        help="with history: a tool keeps at most N past requests (default: the [usage] default)",
    )
    parser.add_argument("--plot", type=Path, help="with --growth: plot quality against history to this PNG")
    parser.add_argument(
        "--openapi",
        metavar="NAME=SPEC",
        help="rank over the operations of this OpenAPI description, served as entry NAME",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> None:
    use_published_model()
    args = _parser().parse_args(argv)

    start = time.perf_counter()
    data = _openapi_dataset(args.dataset, args.openapi) if args.openapi else _dataset(args.dataset)
    queries = data.queries
    history, queries = _history(args, queries)
    queries = queries[: args.max_queries] if args.max_queries else queries
    print(
        f"dataset {args.dataset.name}: {len(data.catalog)} tools, {len(queries)} queries "
        f"(loaded into a Catalog in {time.perf_counter() - start:.1f} s)",
        file=sys.stderr,
    )
    limits = Limits(max_queries_per_tool=args.queries_per_tool) if args.queries_per_tool else None
    engines = _engines(data, history, growth=args.growth, limits=limits)
    our_rankings: list[list[str]] = []
    results: list[tuple[str, dict[str, float], list[float]]] = []
    zero_shot: dict[str, list[list[str]]] = {}  # by kind (lexical, hybrid, hybrid + dense): without history
    harmed: dict[str, int] = {}
    for label, factory in engines:
        rankings, latencies = _run(label, factory(), queries)
        results.append((label, aggregate(rankings, queries), latencies))
        kind = label.split(",")[1].split("(")[0].strip() if label.startswith("ours") else ""
        if label.startswith("ours") and " of the history " not in label:
            zero_shot[kind] = rankings
        elif " of the history " in label:
            harmed[label] = top1_harmed(zero_shot[kind], rankings, queries)
        if label.startswith("ours") and " of the history " not in label:
            our_rankings = rankings  # the best installed engine's zero-shot: the last of ours

    load_avg = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(
        f"\n{args.dataset.name}: {len(data.catalog)} tools, {len(queries)} queries; load average {load_avg}"
    )
    print(f"| engine | {' | '.join(COLUMNS)} | median ms/query | right top-1 made wrong |")
    print(f"|---|{'---|' * len(COLUMNS)}---|---|")
    for label, metrics, latencies in results:
        cells = " | ".join(f"{metrics[c]:.1f}" for c in COLUMNS)
        harm = (
            f"{harmed[label]} ({100 * harmed[label] / max(len(queries), 1):.2f}%)" if label in harmed else ""
        )
        print(f"| {label} | {cells} | {statistics.median(latencies):.3f} | {harm} |")
    base = results[-1][1]
    for label, metrics, _ in results[:-1]:
        delta = " | ".join(f"{metrics[c] - base[c]:+.1f}" for c in COLUMNS)
        print(f"| {label.split(' (')[0]} minus baseline | {delta} | | |")

    if args.plot and args.growth:
        by_label = {label: metrics for label, metrics, _ in results}
        points = [
            (share, metrics["R@5"], metrics["R@1"])
            for label, metrics in by_label.items()
            for share in GROWTH
            if label.startswith(f"ours, {'hybrid' if semantic_available() else 'lexical'}, with {share:.0%}")
        ]
        zero_shot = by_label[
            "ours, hybrid ('search' extra)" if semantic_available() else "ours, lexical (default install)"
        ]
        plot_growth(points, zero_shot["R@5"], base["R@5"], args.plot, zero_shot["R@1"])
        print(f"plot written to {args.plot}", file=sys.stderr)

    if args.rankings:
        with args.rankings.open("w", encoding="utf-8") as fh:
            for query, ranking in zip(queries, our_rankings, strict=True):
                fh.write(json.dumps({"query": query["query"], "ranking": ranking}, ensure_ascii=False) + "\n")
        print(f"rankings written to {args.rankings}", file=sys.stderr)


if __name__ == "__main__":
    main()

"""Everyday requests over the 27 workspace tools (Calendar, Gmail, Tasks): is the first answer right?

    python -m benchmarks.workspace_requests [--check] [--requests-file FILE]

`benchmarks/data/workspace_requests.jsonl` holds requests as people ask them (terse, chatty,
indirect, idioms), none of them one of the tools' example requests or a test's request, each with
the tools that answer it (`{"query": ..., "gold": ["calendar_update_event"]}`; any of them counts).
`workspace_requests_check.jsonl` (`--check`) is a smaller set written at the same time in other
words and kept for checking that a change generalises. Each request goes through `Gateway.discover`
over the workspace catalog (no category hint), with the layers each row names, whatever is
installed. The baseline is bm25s over each tool's schema text (name, description, category,
parameter names and descriptions), in the same process. Top-1 is the share of requests whose first
tool is right, top-5 the share with a right tool in the first five.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from gateway import Catalog, Gateway, Principal
from gateway.search import SearchIndex, default_cache_dir, dense_available, semantic_available
from services.workspace import CATALOG

from .baseline import Bm25s
from .datasets import baseline_text, read_jsonl
from .metrics import aggregate
from .models import use_published_model

DATA = Path(__file__).parent / "data"
REQUESTS = DATA / "workspace_requests.jsonl"
CHECK = DATA / "workspace_requests_check.jsonl"
Rank = Callable[[str], list[str]]


class _Gateway(Gateway):
    """A gateway over the workspace tools whose index has exactly the layers asked for."""

    def __init__(self, semantic: bool, dense: bool) -> None:
        super().__init__(Catalog(CATALOG), search_cache_dir=False)
        self._fixed = SearchIndex(
            CATALOG, semantic=semantic, dense=dense, dense_cache_dir=default_cache_dir()
        )
        layer = self._fixed.dense
        if layer is not None and not layer.ready:
            layer.wait()

    def index(self, principal: Principal | None = None) -> SearchIndex:
        return self._fixed


def ours(semantic: bool, dense: bool = False) -> Rank:
    gateway = _Gateway(semantic, dense)
    return lambda query: [t["name"] for t in gateway.discover(Principal(), query=query, limit=10)["tools"]]


def baseline() -> Rank:
    tools = list(CATALOG)
    records = [
        {"name": d.name, "description": d.description, "category": d.category, "parameters": d.json_schema}
        for d in tools
    ]
    engine = Bm25s([baseline_text(r) for r in records])
    return lambda query: [tools[i].name for i in engine.rank(query, 10)]


def engines() -> list[tuple[str, Callable[[], Rank]]]:
    """The rows: the baseline, then each layer combination that is installed."""
    rows: list[tuple[str, Callable[[], Rank]]] = [
        ("BM25 baseline (bm25s), schema text", baseline),
        ("ours, lexical", lambda: ours(semantic=False)),
    ]
    if semantic_available():
        rows.append(("ours, hybrid ('search' extra)", lambda: ours(semantic=True)))
    else:
        print("the 'search' extra is not installed: the hybrid row is skipped", file=sys.stderr)
    if semantic_available() and dense_available():
        rows.append(("ours, hybrid + dense ('dense' extra)", lambda: ours(semantic=True, dense=True)))
    else:
        print("the 'dense' extra is not installed: its rows are skipped", file=sys.stderr)
    return rows


def run(path: Path, *, misses: bool = True) -> None:
    requests = read_jsonl(path)
    print(
        f"\neveryday requests over the workspace tools ({path.name}: {len(requests)} requests, {len(CATALOG)} tools)"
    )
    results: list[tuple[str, dict[str, float], list[str]]] = []
    for label, factory in engines():
        rank = factory()
        rankings = [rank(r["query"]) for r in requests]
        wrong = [
            f"{r['query']!r} -> {', '.join(ranking[:3])} (want {r['gold'][0]})"
            for r, ranking in zip(requests, rankings, strict=True)
            if not ranking or ranking[0] not in r["gold"]
        ]
        results.append((label, aggregate(rankings, requests), wrong))
    width = max(len(label) for label, _, _ in results)
    print(f"  {'engine':<{width}}   top-1   top-5  MRR@10")
    for label, metrics, _ in results:
        print(f"  {label:<{width}} {metrics['H@1']:>7.1f} {metrics['H@5']:>7.1f} {metrics['MRR@10']:>7.1f}")
    if misses:
        for label, _, wrong in results[1:]:
            print(f"  first answer wrong with {label} ({len(wrong)}):")
            for line in wrong:
                print(f"    {line}")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.workspace_requests", description=__doc__)
    parser.add_argument("--check", action="store_true", help="rank the held-out check set instead")
    parser.add_argument("--requests-file", type=Path, help="another file of requests in the same format")
    parser.add_argument("--quiet", action="store_true", help="print the figures only, not the misses")
    args = parser.parse_args(argv)
    path: Path = args.requests_file or (CHECK if args.check else REQUESTS)
    use_published_model()
    run(path, misses=not args.quiet)


if __name__ == "__main__":
    main()

"""Everyday requests over the whole Google API catalog, in their users' words: before and after context.

    python -m benchmarks.google_apis --requests [--requests-file FILE]

`benchmarks/data/google_requests.jsonl` holds requests written as people ask ("start a stopped
virtual machine", "email my landlord that the rent is paid"), each with the ids of the methods that
answer it (`{"query": ..., "gold": ["compute.instances.start"]}`; any of them counts for H@5, R@5 is
the share of them on the first page). Each request is ranked through `Gateway.discover` over every
method of the catalog (13,869 tools, no category hint), with the catalog's index built twice in this
run: with what the documents say around each method (the API, its resources, their schemas: as
served) and without it (each method's own text, as it was indexed before). The baseline is bm25s over
the method's own text (name, description, category, search words), in the same process. With the
`dense` extra a row adds the sentence encoder's layer (its vectors cached after a first run that
encodes every method, which takes minutes). A last row
gives each request its gold method's API as a category hint: not a way anyone asks, it tells how much
is lost finding the API and how much finding the method within it.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from gateway import Catalog, Gateway, Principal
from gateway.search import SearchIndex, default_cache_dir, dense_available, semantic_available
from services.google_apis import CatalogOptions, catalog_toolset
from services.google_apis.documents import documents_dir
from services.google_apis.index import Index, build_index
from services.google_apis.invoke import Connection, Session

from .baseline import Bm25s
from .datasets import read_jsonl
from .metrics import aggregate
from .models import use_published_model

REQUESTS = Path(__file__).parent / "data" / "google_requests.jsonl"
COLUMNS = ("H@1", "H@5", "R@5", "MRR@10")
Rank = Callable[[str], list[str]]
RankRequest = Callable[[dict[str, Any]], list[str]]


def _no_connection() -> Connection:
    raise RuntimeError("the benchmark only searches: nothing is called")


def catalog_of(index: Index) -> Catalog:
    """Every method of the index, as the `google-apis` provider serves them."""
    return catalog_toolset(CatalogOptions(), Session(_no_connection), index=index).catalog


class _Gateway(Gateway):
    """A gateway whose index is built with the semantic and dense layers on or off, whatever is installed.

    The dense layer's vectors are cached in the search cache directory; a first run encodes every
    method (minutes) and waits for it.
    """

    def __init__(self, catalog: Catalog, semantic: bool, dense: bool = False) -> None:
        super().__init__(catalog, search_cache_dir=False)
        self._search_index = SearchIndex(
            catalog, semantic=semantic, dense=dense, dense_cache_dir=default_cache_dir()
        )
        layer = self._search_index.dense
        if layer is not None and not layer.ready:
            print(
                f"  encoding {len(catalog):,} methods for the dense layer (cached after)...", file=sys.stderr
            )
            layer.wait()

    def index(self, principal: Principal | None = None) -> SearchIndex:
        return self._search_index


def ours(catalog: Catalog, semantic: bool, dense: bool = False) -> Rank:
    gateway = _Gateway(catalog, semantic, dense)
    method_ids = {d.name: str(d.metadata["method_id"]) for d in catalog}

    def rank(query: str) -> list[str]:
        page = gateway.discover(Principal(), query=query, limit=10)
        return [method_ids[t["name"]] for t in page.get("tools", [])]

    return rank


def within_gold_api(catalog: Catalog) -> RankRequest:
    """The best engine installed (hybrid, with the dense layer when it is), with context, told the API of the request's first gold method (a category hint).

    Not a way anyone asks: it splits what is lost between finding the API and finding the method in it.
    """
    gateway = _Gateway(catalog, semantic_available(), semantic_available() and dense_available())
    method_ids = {d.name: str(d.metadata["method_id"]) for d in catalog}
    category = {str(d.metadata["method_id"]).split(".")[0]: d.category for d in catalog}

    def rank(request: dict[str, Any]) -> list[str]:
        api = category[request["gold"][0].split(".")[0]]
        page = gateway.discover(Principal(), query=request["query"], categories=[api], limit=10)
        return [method_ids[t["name"]] for t in page.get("tools", [])]

    return rank


def baseline(catalog: Catalog) -> Rank:
    tools = list(catalog)
    engine = Bm25s([f"{d.name} {d.description} {d.category} {d.search_text}" for d in tools])
    method_ids = [str(d.metadata["method_id"]) for d in tools]
    return lambda query: [method_ids[i] for i in engine.rank(query, 10)]


def _asked(rank: Rank) -> RankRequest:
    return lambda request: rank(request["query"])


def _score(
    label: str, rank: RankRequest, requests: Sequence[dict[str, Any]]
) -> tuple[str, dict[str, float], list[str]]:
    rankings = [rank(r) for r in requests]
    misses = [
        f"{r['query']!r} -> {', '.join(ranking[:3]) or 'nothing'}"
        for r, ranking in zip(requests, rankings, strict=True)
        if not set(ranking[:5]) & set(r["gold"])
    ]
    print(f"  {label}: done", file=sys.stderr)
    return label, aggregate(rankings, requests), misses


def run(path: Path = REQUESTS) -> None:
    use_published_model()
    requests = read_jsonl(path)
    apis = {gold.split(".")[0] for r in requests for gold in r["gold"]}
    start = time.perf_counter()
    after = catalog_of(build_index(documents_dir(), "newest"))
    before = catalog_of(build_index(documents_dir(), "newest", context=False))
    print(
        f"\neveryday requests over the whole catalog ({path.name}: {len(requests)} requests, {len(apis)} APIs; "
        f"{len(after):,} tools, no category hint; indexes built in {time.perf_counter() - start:.0f} s)",
    )
    engines: list[tuple[str, Callable[[], Rank]]] = [
        ("BM25 baseline (bm25s), method's own text", lambda: baseline(before)),
        ("ours, lexical, method's own text (before)", lambda: ours(before, semantic=False)),
        ("ours, lexical, with context (after)", lambda: ours(after, semantic=False)),
    ]
    if semantic_available():
        engines += [
            ("ours, hybrid, method's own text (before)", lambda: ours(before, semantic=True)),
            ("ours, hybrid, with context (after)", lambda: ours(after, semantic=True)),
        ]
    else:
        print("the 'search' extra is not installed: hybrid rows skipped", file=sys.stderr)
    if semantic_available() and dense_available():
        engines.append(
            ("ours, hybrid + dense, with context ('dense' extra)", lambda: ours(after, True, dense=True))
        )
    else:
        print("the 'dense' extra is not installed: its row is skipped", file=sys.stderr)
    results = [_score(label, _asked(factory()), requests) for label, factory in engines]
    results.append(
        _score("hint: the gold method's API given (not a request)", within_gold_api(after), requests)
    )
    width = max(len(label) for label, _, _ in results)
    print(f"  {'engine':<{width}} " + " ".join(f"{c:>7}" for c in COLUMNS))
    for label, metrics, _ in results:
        print(f"  {label:<{width}} " + " ".join(f"{metrics[c]:>7.1f}" for c in COLUMNS))
    for label, _, misses in results[-2:-1]:
        print(f"  missed by {label} (gold not in the top 5; its top 3 shown):")
        for miss in misses:
            print(f"    {miss}")

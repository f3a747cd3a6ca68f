"""The Google API catalog (~13,800 tools): start-up, memory, discovery, schemas and tokens, beside a baseline.

    python -m benchmarks.google_apis [--runs 5] [--token-sample N]
    python -m benchmarks.google_apis --requests [--requests-file FILE]

Each figure is printed next to a baseline measured in the same run:

- cold start: wall time of a new `gateway discover QUERY` process (ending as the program does), median
  of `--runs`, over the full catalog with a warm cache (its index and the search index already on
  disk) and with no cache at all (both built from the shipped discovery documents), next to the
  same command over the 27 curated workspace tools. Then where the warm start's time goes, measured
  in one process: imports, the catalog provider, the gateway's catalog merge, the search index.
- memory: peak resident memory of those processes, and what the loaded catalog holds (tracemalloc).
- discover latency: `Gateway.discover` for a fixed set of requests, warm, over the full catalog and
  over the workspace tools.
- one method's schema: `get_tool_schema` of a method of a small API and of the largest documents
  (compute, the largest; aiplatform), first call (reads the document, makes the params model) and a
  second method of the same API; the baseline is a curated tool, whose model is written by hand.
- curated first: for everyday Calendar, Gmail and Tasks requests, whether a curated workspace tool ranks
  before the catalog's methods when both catalogs are served.
- tokens: the full catalog as Anthropic tool definitions (every params model made) against the three
  meta-tools, counted with `benchmarks.token_footprint.count` (cl100k_base via bpe-openai).
  `--token-sample N` counts N evenly spread tools and scales up instead of all of them.
- everyday requests (`--requests`, alone): H@5, R@5 and MRR of requests in users' words over the
  whole catalog, with and without the text around each method, next to bm25s (`google_requests`).

Other processes share the machine: the load average is printed, figures compare within one run only.
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable, Sequence
from functools import partial
from importlib import metadata
from pathlib import Path
from typing import Any

from gateway import Catalog, Gateway, Principal, ProviderOptions, load_provider
from gateway.adapters import anthropic
from services.google_apis.documents import documents_dir

from . import google_requests
from .token_footprint import count

QUERY = "create a calendar event"
REQUESTS = (
    "create a calendar event",
    "send an email",
    "list files in my drive",
    "start a compute engine instance",
    "delete a bigquery dataset",
    "translate text to french",
    "add a row to a spreadsheet",
    "upload a video to youtube",
    "list the members of a google group",
    "get the logs of a cloud run service",
    "create a kubernetes cluster",
    "search for places nearby",
)
EVERYDAY = (
    "what's on my calendar this week",
    "create a calendar event",
    "delete an event",
    "reschedule my meeting",
    "free time tomorrow",
    "find unread email",
    "send an email",
    "reply to an email",
    "create a draft",
    "archive an email",
    "label email",
    "search emails from alice",
    "add a task to my list",
    "list my task lists",
    "mark task complete",
    "delete a task",
    "clear completed tasks",
    "move an event to another time",
)
"""Requests the curated Calendar, Gmail and Tasks tools are made for."""
# Peak memory is the process's own high-water mark (VmHWM): getrusage's ru_maxrss survives exec on
# Linux and would report this benchmark's own size for a smaller child.
_CHILD = (
    "import os, resource, sys, time\n"
    "start = time.perf_counter()\n"
    "if os.environ.get('BENCH_LEXICAL_ONLY'):  # as installed without the `search` extra\n"
    "    import gateway.search.semantic as semantic\n"
    "    semantic._EMBEDDER.append(None)\n"
    "from gateway.cli import end, main\n"
    "code = main(sys.argv[1:])\n"
    "seconds = time.perf_counter() - start\n"
    "try:\n"
    "    status = open('/proc/self/status').read().split('VmHWM:')[1]\n"
    "    peak = int(status.split()[0])\n"
    "except (OSError, IndexError):\n"
    "    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
    "print(f'@@ {seconds} {peak}', file=sys.stderr)\n"
    "end(code)  # as the `gateway` program ends\n"
)


def _config(directory: Path, catalog: str) -> Path:
    path = directory / "config.toml"
    path.write_text(
        f'data_dir = "{directory / "data"}"\ncatalogs = ["{catalog}"]\nseed_demo = false\n\n'
        f'[google_apis]\ncache_dir = "{directory / "cache" / "google-apis"}"\n'
    )
    return path


def _cold(directory: Path, catalog: str, lexical_only: bool = False) -> tuple[float, float, float]:
    """(process wall seconds, seconds after the interpreter started, peak RSS in MiB) of one discover."""
    env = dict(
        os.environ, GATEWAY_CONFIG=str(_config(directory, catalog)), XDG_CACHE_HOME=str(directory / "cache")
    )
    if lexical_only:
        env["BENCH_LEXICAL_ONLY"] = "1"
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, "discover", QUERY, "--limit", "5"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    wall = time.perf_counter() - start
    marker = next(line for line in done.stderr.splitlines() if line.startswith("@@ "))
    _, inside, rss_kib = marker.split()
    return wall, float(inside), int(rss_kib) / 1024


def cold_starts(runs: int) -> None:
    print(f"\ncold start of `gateway discover '{QUERY}'` (new process; median of {runs})")
    print(f"  {'catalog':<34} {'wall s':>8} {'after start-up s':>17} {'peak RSS MiB':>13}")

    def row(label: str, samples: list[tuple[float, float, float]]) -> None:
        wall, inside, rss = (statistics.median(column) for column in zip(*samples, strict=True))
        print(f"  {label:<34} {wall:>8.2f} {inside:>17.2f} {rss:>13.0f}")

    with tempfile.TemporaryDirectory() as tmp:
        _cold(Path(tmp), "workspace")  # its search index is built below CACHE_MIN_TOOLS anyway
        row("workspace, 27 tools (baseline)", [_cold(Path(tmp), "workspace") for _ in range(runs)])
    uncached = []
    for _ in range(max(1, runs // 2)):
        with tempfile.TemporaryDirectory() as tmp:
            uncached.append(_cold(Path(tmp), "google-apis"))
    row("google-apis, no cache", uncached)
    with tempfile.TemporaryDirectory() as tmp:
        _cold(Path(tmp), "google-apis")  # fills both caches
        row("google-apis, warm cache", [_cold(Path(tmp), "google-apis") for _ in range(runs)])
        print("  without the semantic layer (as installed without the `search` extra):")
        _cold(Path(tmp), "google-apis", lexical_only=True)  # the lexical-only search index, cached
        row("workspace, 27 tools (baseline)", [_cold(Path(tmp), "workspace", True) for _ in range(runs)])
        row("google-apis, warm cache", [_cold(Path(tmp), "google-apis", True) for _ in range(runs)])


def _load(spec: str, options: ProviderOptions) -> Catalog:
    """A catalog loaded as `gateway.runtime` loads one: the collector paused, what exists then frozen."""
    gc.disable()
    try:
        return load_provider(spec)(options).catalog
    finally:
        gc.freeze()
        gc.enable()


def _timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


def breakdown(directory: Path) -> Gateway:
    """Where a warm start's time goes, one process: each step as the command line runs it."""
    options = ProviderOptions(
        data_dir=directory, extra={"google_apis": {"cache_dir": directory / "google-apis"}}
    )
    load_provider("google-apis")(options)  # warm the index cache
    gc.collect()
    gc.disable()  # as `gateway.runtime` loads catalogs (and freezes what it loaded)
    provide_s, toolset = _timed(lambda: load_provider("google-apis")(options))
    catalog = Catalog()
    merge_s, _ = _timed(partial(catalog.merge, toolset.catalog))
    gc.freeze()
    gc.enable()
    # Memory apart: tracemalloc slows every allocation down.
    tracemalloc.start()
    held_catalog = Catalog(load_provider("google-apis")(options).catalog)
    held = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    del held_catalog
    gw = Gateway(catalog, search_cache_dir=directory / "search")
    gw.index()  # fills the search index cache
    gw = Gateway(catalog, search_cache_dir=directory / "search")
    search_s, _ = _timed(gw.index)
    print("\nwarm start, step by step (one process)")
    print(f"  provider (read the index, make {len(catalog):,} definitions) {provide_s:>7.3f} s")
    print(f"  the gateway's catalog merge (takes the checked catalog)   {merge_s:>7.3f} s")
    semantic = "with" if gw.index().semantic else "without"
    print(f"  search index from its cache ({semantic} the semantic layer)   {search_s:>7.3f} s")
    print(f"  catalog held in memory: {held / 2**20:,.0f} MiB ({held / len(catalog):,.0f} bytes per tool)")
    return gw


def discover_latency(gw: Gateway, directory: Path, rounds: int = 5) -> None:
    options = ProviderOptions(data_dir=directory / "workspace", seed_demo=False)
    baseline = Gateway(_load("workspace", options), search_cache_dir=False)
    print(f"\ndiscover latency, warm ({len(REQUESTS)} requests x {rounds}, limit 10)")
    for label, gateway in (
        ("workspace, 27 tools (baseline)", baseline),
        (f"google-apis, {len(gw.catalog):,} tools", gw),
    ):
        for request in REQUESTS:  # word caches warm, as in a running gateway
            gateway.discover(Principal(), query=request)
        samples = []
        for _ in range(rounds):
            for request in REQUESTS:
                seconds, _ = _timed(partial(gateway.discover, Principal(), query=request))
                samples.append(seconds * 1000)
        samples.sort()
        p95 = samples[int(len(samples) * 0.95) - 1]
        print(f"  {label:<34} median {statistics.median(samples):>6.2f} ms   p95 {p95:>6.2f} ms")


def schema_times(directory: Path) -> None:
    options = ProviderOptions(
        data_dir=directory, extra={"google_apis": {"cache_dir": directory / "google-apis"}}
    )
    workspace = Gateway(_load("workspace", ProviderOptions(data_dir=directory / "ws", seed_demo=False)))
    gw = Gateway(_load("google-apis", options), search_cache_dir=False)
    docs = documents_dir()
    print("\none method's schema (get_tool_schema; first: reads the document and makes the model;")
    print("others: the median of up to 9 more methods of the same API)")
    rows: Sequence[tuple[str, str]] = (
        ("baseline: curated tool", "calendar_create_event"),
        ("small API (abusiveexperiencereport)", "abusiveexperiencereport_sites_get"),
        ("tasks", "tasks_tasks_insert"),
        ("largest document (compute v1)", "compute_instances_insert"),
        ("aiplatform v1", "aiplatform_projects_locations_endpoints_predict"),
    )
    for label, first in rows:
        gateway = workspace if label.startswith("baseline") else gw
        tool = gateway.catalog.by_name[first]
        one, answer = _timed(partial(gateway.schema, Principal(), first))
        line = f"  {label:<38} first {one * 1000:>7.1f} ms"
        if "api" in tool.metadata:
            name, version = str(tool.metadata["api"]).split()
            size = (docs / f"{name}.{version}.json").stat().st_size / 2**20
            others = [n for n in gateway.catalog.by_category[tool.category] if n != first][:9]
            again = [_timed(partial(gateway.schema, Principal(), n))[0] * 1000 for n in others]
            line += f"   others {statistics.median(again):>5.1f} ms   document {size:4.1f} MiB"
        print(f"{line}   schema {len(json.dumps(answer['parameters'])):>6,} chars")


def curated_first(directory: Path) -> None:
    """For everyday requests, does a curated workspace tool come before the first catalog method?"""
    options = ProviderOptions(
        data_dir=directory,
        seed_demo=False,
        extra={"google_apis": {"cache_dir": directory / "google-apis"}},
    )
    catalog = Catalog()
    catalog.merge(_load("workspace", options))
    catalog.merge(_load("google-apis", options))
    gw = Gateway(catalog, search_cache_dir=directory / "search")
    misses = []
    for request in EVERYDAY:
        names = [t["name"] for t in gw.discover(Principal(), query=request, limit=20)["tools"]]
        first = next((n for n in names if "method_id" not in catalog.by_name[n].metadata), None)
        if first is None or names.index(first) > 0:
            misses.append(f"{request!r} -> {names[0]}" + (f" before {first}" if first else ""))
    print(f"\ncurated tools first (workspace + google-apis, {len(catalog):,} tools)")
    print(f"  {len(EVERYDAY) - len(misses)} of {len(EVERYDAY)} everyday requests rank a curated tool first")
    for miss in misses:
        print(f"  miss: {miss}")


def tokens(directory: Path, sample: int | None) -> None:
    from bpe_openai import get_encoding  # type: ignore[import-untyped]

    encoding = get_encoding("cl100k_base")
    options = ProviderOptions(
        data_dir=directory, extra={"google_apis": {"cache_dir": directory / "google-apis"}}
    )
    catalog = _load("google-apis", options)
    workspace = load_provider("workspace")(
        ProviderOptions(data_dir=directory / "ws", seed_demo=False)
    ).catalog
    tools = list(catalog)
    chosen = tools if not sample else tools[:: max(1, len(tools) // sample)]
    start = time.perf_counter()
    total = 0
    for d in chosen:  # a copy per tool: its params model is dropped once counted
        total += count(encoding, anthropic.tool_param(dataclasses.replace(d)))
    whole = round(total * len(tools) / len(chosen)) + len(tools)
    meta = count(encoding, anthropic.tools(Gateway(catalog).meta))
    curated = count(encoding, anthropic.tools(workspace))
    how = "all tools" if len(chosen) == len(tools) else f"{len(chosen)} tools sampled, scaled up"
    print(f"\ntokens (cl100k_base; {how}; {time.perf_counter() - start:.0f} s to make and count)")
    print(f"  workspace as tool definitions (baseline)  {curated:>12,}")
    print(f"  google-apis as tool definitions           {whole:>12,}   ({whole / len(tools):,.0f} per tool)")
    print(f"  the three meta-tools                      {meta:>12,}   ({whole / meta:,.0f}x less)")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=5, help="processes per cold-start figure")
    parser.add_argument("--token-sample", type=int, default=None, help="count this many tools, not all")
    parser.add_argument(
        "--requests", action="store_true", help="only rank the everyday requests (benchmarks.google_requests)"
    )
    parser.add_argument("--requests-file", type=Path, default=google_requests.REQUESTS, help="JSONL requests")
    args = parser.parse_args()
    if args.requests:
        google_requests.run(args.requests_file)
        return
    print(
        f"google-api-python-client {metadata.version('google-api-python-client')}, Python {platform.python_version()}, "
        f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}"
    )
    cold_starts(args.runs)
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        gw = breakdown(directory)
        discover_latency(gw, directory)
        del gw
        schema_times(directory)
        curated_first(directory)
        tokens(directory, args.token_sample)
        gc.unfreeze()
    print(f"\nload average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()

"""OpenAPI catalogs: load time cold and cached, memory, discover latency and token cost, per spec.

    python -m benchmarks.openapi [SPEC ...]     # default: the specs of tests/openapi_specs.py

Each figure stands next to a baseline measured in the same run: load times next to a plain
`json.load` of the description, peak memory of the cached load next to parsing the description, the three meta-tools' tokens
next to every operation sent as a tool definition (its full description and parameter schema, as
a converter that makes every operation a tool does). Each load runs in a fresh process so caches
of an earlier one do not count. Tokens: cl100k_base (bpe-openai ships the vocabulary).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_CHILD = """
import json, sys, time, tracemalloc
from pathlib import Path
from gateway.catalog import Catalog
from gateway.settings.loading import OpenApiSettings
from gateway.openapi import OpenApi
mode, spec, cache, memory = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]), sys.argv[4] == "1"
if memory:
    tracemalloc.start()
start = time.perf_counter()
if mode == "json":
    json.loads(spec.read_bytes())
else:
    Catalog(OpenApi(OpenApiSettings(name="api", spec=spec), cache).definitions())
elapsed = time.perf_counter() - start
peak = tracemalloc.get_traced_memory()[1] / 2**20 if memory else 0.0
print(json.dumps({"seconds": elapsed, "peak_mb": peak}))
"""


def child(mode: str, spec: Path, cache: Path, *, memory: bool = False) -> dict[str, float]:
    """One load in a fresh process (modules imported before the clock starts); memory traced apart,
    since tracing slows the load several times."""
    argv = [sys.executable, "-c", _CHILD, mode, str(spec), str(cache), "1" if memory else "0"]
    result: dict[str, float] = json.loads(
        subprocess.run(argv, check=True, capture_output=True, text=True).stdout
    )
    return result


def tokens(spec: Path, cache: Path) -> tuple[int, int, float, int]:
    """(whole spec as tool definitions, three meta-tools, discover median ms, operations)."""
    from bpe_openai import get_encoding

    from benchmarks.token_footprint import count
    from gateway import Gateway
    from gateway.adapters import anthropic
    from gateway.catalog import Catalog
    from gateway.context import Principal
    from gateway.openapi import OpenApi
    from gateway.settings.loading import OpenApiSettings

    api = OpenApi(OpenApiSettings(name="api", spec=spec), cache)
    defs = api.definitions()
    encoding = get_encoding("cl100k_base")
    whole = 0
    for d in defs:  # what a converter sends: description and schema of every operation
        details = d.metadata.get("details") or ""
        payload = {
            "name": d.name,
            "description": f"{d.summary} {details}".strip(),
            "input_schema": d.json_schema,
        }
        whole += count(encoding, payload)
    gw = Gateway(Catalog(defs), search_cache_dir=False)
    meta = count(encoding, anthropic.tools(gw.meta))
    principal = Principal("bench")
    queries = [d.summary for d in defs[:: max(1, len(defs) // 50)]]
    gw.discover(principal, query=queries[0])  # the index is built once
    times = []
    for q in queries:
        start = time.perf_counter()
        gw.discover(principal, query=q)
        times.append((time.perf_counter() - start) * 1000)
    return whole, meta, statistics.median(times), len(defs)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("specs", nargs="*", type=Path)
    args = parser.parse_args()
    if args.specs:
        specs = args.specs
    else:
        from tests.openapi_specs import fetch

        specs = fetch()
    header = (
        f"{'spec':<18} {'ops':>5} {'json.load':>10} {'cold':>7} {'cached':>7} {'MB spec':>8} {'MB cached':>9} "
        f"{'discover':>9} {'tokens: all ops':>16} {'3 meta-tools':>13}"
    )
    print(header)
    for spec in specs:
        with tempfile.TemporaryDirectory() as tmp:
            cache = Path(tmp)
            baseline = child("json", spec, cache)
            cold = child("openapi", spec, cache)
            cached = child("openapi", spec, cache)
            baseline["peak_mb"] = child("json", spec, cache, memory=True)["peak_mb"]
            cached["peak_mb"] = child("openapi", spec, cache, memory=True)["peak_mb"]
            whole, meta, discover_ms, ops = tokens(spec, cache)
        print(
            f"{spec.name:<18} {ops:>5} {baseline['seconds'] * 1000:>8.0f}ms {cold['seconds'] * 1000:>5.0f}ms "
            f"{cached['seconds'] * 1000:>5.0f}ms {baseline['peak_mb']:>8.1f} {cached['peak_mb']:>9.1f} "
            f"{discover_ms:>7.2f}ms {whole:>16,} {meta:>13,}"
        )


if __name__ == "__main__":
    main()

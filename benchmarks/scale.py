"""The cost of every catalog size, from 27 tools to about 100,000, next to a floor timed in the same run.

    python -m benchmarks.scale [--runs 3] [--sizes 27 1250 13869 30000 100000] [--plot docs/scale.png]
    python -m benchmarks.scale --ci            # the short form CI runs: fails on a 10x regression

The floor is `python -c "import pydantic, anthropic"`: what any Python program that talks to a model
pays before doing anything. Every figure of a command is a ratio to it, measured alternately in the
same run (a floor run before each command run), so a loaded machine slows both alike.

For each catalog:

- cold: `gateway discover QUERY` as a new process with no cache at all (descriptions read, the
  search index built and cached), its wall time and peak resident memory (VmHWM);
- warm: the same command again, every cache on disk (median of `--runs`);
- in a warm process: the median `Gateway.discover` of a fixed set of requests (none from an evaluation
  set), and what the search index holds (its arrays' bytes);
- for the Google catalog, a server's start-up: `gateway serve` (stdio) until it answers `initialize`.

Catalogs: the 27 workspace tools; GitHub's description (`python -m tests.openapi_specs` fetches the
published descriptions into `.cache/specs/`); the Google catalog (13,869 methods); and combined
catalogs of about 30,000 and 100,000 tools: Google, GitHub, every other published description there,
and copies of them served under new entry names (new tool names, the same texts).

`--ci` runs the floor, the workspace, GitHub and Google (cold once, warm), and checks each figure
against `TARGETS` loosened ten times (`CI_SLACK`): an order-of-magnitude regression fails, noise never
does. It exits 1 naming every figure over its limit.
"""

from __future__ import annotations

import argparse
import json
import os
import select
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SPECS = ROOT / ".cache" / "specs"
QUERY = "resize a disk"
REQUESTS = (
    "resize a disk",
    "merge a pull request",
    "send an email to the team",
    "list the files in a folder",
    "create a customer",
    "delete a dataset",
    "add a comment to an issue",
    "what's on my calendar tomorrow",
    "upload a video",
    "start a virtual machine",
    "refund a payment",
    "list open tickets",
)
"""Requests of every kind, none taken from an evaluation set."""

TARGETS = {
    "google warm / floor": 1.0,
    "google warm peak MiB": 300.0,
    "github warm / floor": 1.0,
    "google cold s": 15.0,
    "100k warm / floor": 2.0,
    "100k discover p50 ms": 5.0,
    "100k index MiB": 1536.0,
}
"""The targets on the development machine (docs/benchmarks.md, "Large catalogs")."""
CI_SLACK = 10.0
"""CI fails a figure only past ten times its target: a regression of an order of magnitude."""

FLOOR = [sys.executable, "-c", "import pydantic, anthropic"]
# Peak memory is the process's own high-water mark (VmHWM), read as it ends.
_CHILD = (
    "import sys, time\n"
    "from gateway.cli import end, main\n"
    "code = main(sys.argv[1:])\n"
    "try:\n"
    "    peak = int(open('/proc/self/status').read().split('VmHWM:')[1].split()[0])\n"
    "except (OSError, IndexError):\n"
    "    import resource\n"
    "    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
    "print(f'@@ {peak}', file=sys.stderr)\n"
    "end(code)\n"
)


@dataclass
class Catalog:
    """One catalog to measure: its name, the configuration that serves it, its size once loaded."""

    label: str
    catalogs: list[str]
    openapi: list[tuple[str, Path]] = field(default_factory=list)
    tools: int = 0

    def config(self, home: Path) -> Path:
        lines = [
            f'data_dir = "{home / "data"}"',
            f"catalogs = {json.dumps(self.catalogs)}",
            "seed_demo = false",
            "",
            "[search]",
            'dense = "off"',
            "",
            "[google_apis]",
            f'cache_dir = "{home / "cache" / "google-apis"}"',
        ]
        for name, spec in self.openapi:
            lines += ["", "[[openapi]]", f'name = "{name}"', f'spec = "{spec}"']
        path = home / "config.toml"
        path.write_text("\n".join(lines) + "\n")
        return path


def env_for(home: Path, catalog: Catalog) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GATEWAY_")}
    env.update(
        GATEWAY_CONFIG=str(catalog.config(home)),
        XDG_CACHE_HOME=str(home / "cache"),
        GATEWAY_DENSE="off",
        PYTHONPATH=os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep),
    )
    return env


def published() -> list[Path]:
    """The published descriptions on disk, GitHub's first."""
    found = sorted(SPECS.glob("*.json"), key=lambda p: (p.stem != "github", p.stem))
    if not found:
        sys.exit(f"no descriptions in {SPECS}: run `python -m tests.openapi_specs` first")
    return found


def catalogs(sizes: Sequence[int]) -> list[Catalog]:
    """The catalogs of about each size (27, GitHub, Google, then combined ones)."""
    specs = published()
    github = next((s for s in specs if s.stem == "github"), None)
    out = []
    for size in sizes:
        if size <= 27:
            out.append(Catalog("workspace", ["workspace"]))
        elif size < 13_000:
            if github is None:
                sys.exit(f"GitHub's description is not in {SPECS}: run `python -m tests.openapi_specs`")
            out.append(Catalog("github", ["workspace"], [("github", github)]))
        elif size < 14_500:
            out.append(Catalog("google", ["google-apis"]))
        else:
            out.append(combined(size, specs))
    return out


def combined(size: int, specs: Sequence[Path]) -> Catalog:
    """Google, every published description, then copies of them under new entry names, to `size`."""
    counts = {spec: _operations(spec) for spec in specs}
    entries: list[tuple[str, Path]] = []
    total, copy = 13_869 + 27, 0
    while total < size:
        for spec in specs:
            if total >= size:
                break
            name = spec.stem[:24] if copy == 0 else f"{spec.stem[:24]}_{copy}"
            entries.append((name, spec))
            total += counts[spec]
        copy += 1
    label = f"{round(total, -3) // 1000}k" if total < 95_000 else "100k"
    return Catalog(label, ["workspace", "google-apis"], entries)


def _operations(spec: Path) -> int:
    doc = json.loads(spec.read_bytes())
    methods = {"get", "put", "post", "delete", "patch", "head", "options"}
    return sum(len(methods & set(item)) for item in doc.get("paths", {}).values() if isinstance(item, dict))


def timed(argv: Sequence[str], env: dict[str, str] | None = None) -> tuple[float, float]:
    """(wall seconds, peak MiB) of one process; the peak is the child's own report when it gives one."""
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"{' '.join(argv[:3])} ... failed ({done.returncode}):\n{done.stderr[-2000:]}")
    marks = [line for line in done.stderr.splitlines() if line.startswith("@@ ")]
    return wall, (int(marks[-1].split()[1]) / 1024 if marks else 0.0)


def discover(home: Path, catalog: Catalog) -> tuple[float, float]:
    return timed([sys.executable, "-c", _CHILD, "discover", QUERY, "--limit", "5"], env_for(home, catalog))


def floor() -> float:
    return timed(FLOOR)[0]


@dataclass
class Row:
    label: str
    tools: int
    cold: float
    cold_floor: float
    cold_peak: float
    warm: float
    warm_floor: float
    warm_peak: float
    p50_ms: float = 0.0
    index_mib: float = 0.0
    server_s: float | None = None


def measure(catalog: Catalog, runs: int, *, in_process: bool, server: bool) -> Row:
    with tempfile.TemporaryDirectory(prefix="scale-") as tmp:
        home = Path(tmp)
        cold_floor = floor()
        cold, cold_peak = discover(home, catalog)
        warm_samples, floors = [], []
        for _ in range(runs):
            floors.append(floor())
            warm_samples.append(discover(home, catalog))
        warm = statistics.median(w for w, _ in warm_samples)
        row = Row(
            catalog.label,
            0,
            cold,
            cold_floor,
            cold_peak,
            warm,
            statistics.median(floors),
            max(p for _, p in warm_samples),
        )
        if in_process:
            row.tools, row.p50_ms, row.index_mib = in_process_figures(home, catalog)
        if server:
            row.server_s = server_start(home, catalog)
        return row


def in_process_figures(home: Path, catalog: Catalog) -> tuple[int, float, float]:
    """(tools, median `Gateway.discover` ms, the index's MiB) in a warm process (a child: its own
    caches and environment)."""
    code = (
        "import json, statistics, sys, time\n"
        "from gateway import Principal\n"
        "from gateway.settings.loading import load_settings\n"
        "from gateway.runtime import open_gateway\n"
        "from benchmarks.scale import REQUESTS, index_bytes\n"
        "with open_gateway(load_settings()) as gw:\n"
        "    index = gw.index()\n"
        "    for q in REQUESTS: gw.discover(Principal(), query=q)\n"
        "    times = []\n"
        "    for _ in range(5):\n"
        "        for q in REQUESTS:\n"
        "            t = time.perf_counter(); gw.discover(Principal(), query=q, limit=10)\n"
        "            times.append(time.perf_counter() - t)\n"
        "    print(json.dumps([len(gw.catalog), statistics.median(times) * 1000, index_bytes(index) / 2**20]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], env=env_for(home, catalog), capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        sys.exit(f"the warm process failed:\n{done.stderr[-2000:]}")
    tools, p50, mib = json.loads(done.stdout.strip().splitlines()[-1])
    return int(tools), float(p50), float(mib)


def index_bytes(index: Any) -> int:
    """What a search index's arrays hold: postings, impacts, vectors (the bulk of its memory)."""
    total = 0
    for name in ("_starts", "_ids", "_impacts"):
        arr = getattr(index, name, None)
        if arr is not None:
            total += arr.itemsize * len(arr)
    vectors = getattr(index, "_vectors", None)
    if vectors is not None:
        total += int(vectors.matrix.nbytes)
    return total


def server_start(home: Path, catalog: Catalog) -> float:
    """Seconds from starting `gateway serve` (stdio, caches warm) to its answer to `initialize`."""
    hello = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "benchmarks.scale", "version": "1"},
        },
    }
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "gateway.cli", "serve", "--transport", "stdio"],
        env=env_for(home, catalog),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(json.dumps(hello).encode() + b"\n")
        proc.stdin.flush()
        ready, _, _ = select.select([proc.stdout], [], [], 600)
        if not ready or not proc.stdout.readline():
            sys.exit("gateway serve did not answer initialize")
        return time.perf_counter() - start
    finally:
        proc.stdin.close()
        proc.wait(timeout=60)


def show(rows: Sequence[Row]) -> None:
    print(
        f"\n  {'catalog':<10} {'tools':>7} {'cold s':>7} {'x floor':>8} {'MiB':>6}"
        f" {'warm s':>7} {'x floor':>8} {'MiB':>6} {'p50 ms':>7} {'index MiB':>10} {'serve s':>8}"
    )
    for r in rows:
        serve = f"{r.server_s:.2f}" if r.server_s is not None else "-"
        print(
            f"  {r.label:<10} {r.tools:>7,} {r.cold:>7.2f} {r.cold / r.cold_floor:>8.2f} {r.cold_peak:>6.0f}"
            f" {r.warm:>7.2f} {r.warm / r.warm_floor:>8.2f} {r.warm_peak:>6.0f} {r.p50_ms:>7.2f}"
            f" {r.index_mib:>10.1f} {serve:>8}"
        )
    floors = [r.warm_floor for r in rows]
    print(f"\n  floor (import pydantic, anthropic), median of this run: {statistics.median(floors):.2f} s")


def figures(rows: Sequence[Row]) -> dict[str, float]:
    """The figures `TARGETS` names, from the rows measured."""
    out: dict[str, float] = {}
    for r in rows:
        if r.label == "google":
            out["google warm / floor"] = r.warm / r.warm_floor
            out["google warm peak MiB"] = r.warm_peak
            out["google cold s"] = r.cold
        elif r.label == "github":
            out["github warm / floor"] = r.warm / r.warm_floor
        elif r.label == "100k":
            out["100k warm / floor"] = r.warm / r.warm_floor
            out["100k discover p50 ms"] = r.p50_ms
            out["100k index MiB"] = r.index_mib
    return out


def check(measured: dict[str, float], slack: float) -> list[str]:
    """Every figure over `slack` times its target, as a line."""
    return [
        f"{name}: {value:.2f} > {slack:g} x {TARGETS[name]:g}"
        for name, value in measured.items()
        if value > slack * TARGETS[name]
    ]


def report(measured: dict[str, float]) -> None:
    print(f"\n  {'figure':<22} {'measured':>9} {'target':>8}")
    for name, value in measured.items():
        mark = "ok" if value <= TARGETS[name] else "over"
        print(f"  {name:<22} {value:>9.2f} {TARGETS[name]:>8g}  {mark}")


def plot(rows: Sequence[Row], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = [r.tools for r in rows]
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.8))
    axes[0].plot(sizes, [r.warm / r.warm_floor for r in rows], "o-", label="warm discover")
    axes[0].plot(sizes, [r.cold / r.cold_floor for r in rows], "s--", label="cold discover")
    axes[0].axhline(1.0, color="grey", lw=0.8, ls=":", label="floor")
    axes[0].set_ylabel("x the floor (import pydantic, anthropic)")
    axes[1].plot(sizes, [r.p50_ms for r in rows], "o-", label="Gateway.discover p50")
    axes[1].set_ylabel("ms")
    axes[2].plot(sizes, [r.warm_peak for r in rows], "o-", label="warm peak RSS")
    axes[2].plot(sizes, [r.index_mib for r in rows], "s--", label="search index")
    axes[2].set_ylabel("MiB")
    for ax in axes:
        ax.set_xscale("log")
        ax.set_xlabel("tools in the catalog")
        ax.legend(loc="upper left", fontsize=8, frameon=False)
        ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"\n  plot: {path}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=3, help="warm runs per catalog (median)")
    parser.add_argument("--sizes", type=int, nargs="*", default=[27, 1_250, 13_869, 30_000, 100_000])
    parser.add_argument("--ci", action="store_true", help="the short form, checked against 10x the targets")
    parser.add_argument("--plot", type=Path, help="draw the curve into this PNG (needs matplotlib)")
    args = parser.parse_args(argv)
    sizes = [27, 1_250, 13_869] if args.ci else args.sizes
    runs = 2 if args.ci else args.runs
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; {runs} warm runs per catalog")
    rows = []
    for catalog in catalogs(sizes):
        print(f"  measuring {catalog.label} ...", file=sys.stderr, flush=True)
        rows.append(measure(catalog, runs, in_process=True, server=catalog.label == "google"))
    show(rows)
    measured = figures(rows)
    report(measured)
    if args.plot:
        plot(rows, args.plot)
    if args.ci:
        over = check(measured, CI_SLACK)
        for line in over:
            print(f"  over budget: {line}", file=sys.stderr)
        return 1 if over else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())

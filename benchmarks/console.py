"""Console speed: how long the activity pages take on large audit logs, beside reading the whole log.

    python -m benchmarks.console [--lines 100000 1000000] [--repeat 20]

Writes synthetic audit logs (the gateway's own line format: 40 tools, 8 principals, one in 5,000
lines from a rare principal, an interrupted attempt now and then) to a temporary directory and
serves the console in-process (its ASGI application through httpx's ASGI transport, signed in with
an admin bearer token: the whole page, template included, without a socket). Each page is
requested `--repeat` times; the median and the worst are printed. The baseline, measured in the
same run, is what a console that reads the whole log for each page would pay: every line parsed,
the filter applied, the newest 50 kept. Other processes share the machine: the load average is
printed, and figures are only comparable within one run.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

import httpx2

from gateway import Catalog, Gateway
from gateway.console import console_app
from gateway.settings.loading import Settings

TOKEN = "benchmark-admin-token"
TOOLS = [f"tool_{i:02d}" for i in range(40)]
PRINCIPALS = [f"user{i}" for i in range(8)]


def write_log(path: Path, lines: int) -> None:
    start = time.time() - lines
    with path.open("w") as out:
        for i in range(lines):
            outcome = "attempt" if i % 997 == 0 else "executed"
            record = {
                "time": start + i,
                "principal": "rare" if i % 5000 == 17 else PRINCIPALS[i % len(PRINCIPALS)],
                "session": f"s{i // 50}",
                "call_id": f"{i:012x}",
                "tool": TOOLS[(i * 7) % len(TOOLS)],
                "outcome": outcome,
                "duration_ms": 1.5,
                "error_code": None,
                "params": {"note_id": f"n{i}", "title": "a title of some length"},
                "agent": None,
            }
            out.write(json.dumps(record, separators=(",", ":")) + "\n")


def whole_log(path: Path, principal: str) -> int:
    """The baseline: parse every line, filter, keep the newest 50."""
    kept = []
    with path.open("rb") as f:
        for line in f:
            record = json.loads(line)
            if not principal or record["principal"] == principal:
                kept.append(record)
    return len(kept[-50:])


async def measure(client: httpx2.AsyncClient, url: str, repeat: int) -> list[float]:
    times = []
    for _ in range(repeat):
        begin = time.perf_counter()
        response = await client.get(url)
        times.append((time.perf_counter() - begin) * 1000)
        assert response.status_code == 200, (url, response.status_code)
    return times


async def run(lines: int, repeat: int, directory: Path) -> None:
    path = directory / f"audit-{lines}.jsonl"
    write_log(path, lines)
    size = path.stat().st_size
    settings = Settings.model_validate(
        {
            "data_dir": str(directory),
            "audit": {"path": str(path)},
            "console": {"admin_token_sha256": hashlib.sha256(TOKEN.encode()).hexdigest()},
        }
    )
    gw = Gateway(Catalog(), search_cache_dir=False)
    app = console_app(gw, settings, environ={})
    transport = httpx2.ASGITransport(app=app, root_path="/console")
    headers = {"Authorization": f"Bearer {TOKEN}"}
    middle = size // 2
    with path.open("rb") as f:
        detail = f.read(middle).rfind(b"\n") + 1
    pages = {
        "newest page": "/activity",
        "page in the middle": f"/activity?before={middle}",
        "filter: a tool": "/activity?tool=tool_07",
        "filter: rare principal": "/activity?principal=rare",
        "filter: interrupted": "/activity?outcome=interrupted",
        "one call's detail": f"/activity/{detail}",
    }
    print(f"\n{lines:,} lines ({size / 1e6:.0f} MB), load average {os.getloadavg()[0]:.2f}")
    print(f"{'page':<26}{'median ms':>12}{'worst ms':>12}")
    async with httpx2.AsyncClient(transport=transport, base_url="http://console", headers=headers) as client:
        for name, url in pages.items():
            times = await measure(client, "http://console/console" + url, repeat)
            print(f"{name:<26}{statistics.median(times):>12.2f}{max(times):>12.2f}")
    for name, principal in (("baseline: whole log", ""), ("baseline: rare principal", "rare")):
        begin = time.perf_counter()
        whole_log(path, principal)
        print(f"{name:<26}{(time.perf_counter() - begin) * 1000:>12.0f}{'':>12}")
    path.unlink()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        for lines in args.lines:
            asyncio.run(run(lines, args.repeat, Path(directory)))


if __name__ == "__main__":
    main()

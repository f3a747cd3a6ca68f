"""Load on `gateway serve` over Streamable HTTP: many concurrent MCP clients on loopback.

    python -m benchmarks.mcp_load [--catalog workspace] [--clients 16] [--rounds 20] [--seconds 30]
                                  [--mode auto|legacy] [--sessions both|on|off]

Starts `gateway serve --transport http` on a free loopback port as a subprocess. Each client (the
real MCP SDK client, its own connection) repeats a round of discover_tools then invoke_tool on a
read-only tool, until it has done `--rounds` rounds or `--seconds` have passed. Prints throughput
and latency percentiles per call, next to a baseline measured in the same run: the same calls at
the same concurrency straight into `Gateway.call` in this process (no MCP, no HTTP). Then checks
that no call failed and that every invocation is in the server's audit log; exits 1 otherwise.

The invoked tools are the catalog's read-only tools whose first example succeeds, so the mix is
the same whatever the catalog. Nothing leaves the machine: the server binds 127.0.0.1.

`--sessions both` (the default) serves twice, with MCP sessions and without (`[serve] sessions`).
Sessions only change what handshake-era clients do: `--mode legacy` makes every client speak
2025-11-25 (initialize, then `Mcp-Session-Id`), as Claude Code does; `auto` lets the SDK pick.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcp import Client

from gateway import Gateway, ToolContext
from gateway.runtime import open_gateway
from gateway.settings.loading import load_settings

MAX_CLIENTS = 64
MAX_ROUNDS = 1000
MAX_SECONDS = 120.0
START_SECONDS = 60.0

Call = tuple[str, dict[str, Any]]
Caller = Callable[[str, dict[str, Any]], Awaitable[bool]]


@dataclass
class Tally:
    """Latencies (ms) per meta-tool, and what went wrong."""

    latencies: dict[str, list[float]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    invocations: int = 0
    seconds: float = 0.0

    def add(self, name: str, ms: float) -> None:
        self.latencies.setdefault(name, []).append(ms)

    @property
    def calls(self) -> int:
        return sum(len(v) for v in self.latencies.values())


def _percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def workload(gw: Gateway, ctx: ToolContext) -> list[tuple[Call, Call]]:
    """(discover, invoke) pairs: each read-only tool whose example runs, found by its own summary."""
    pairs: list[tuple[Call, Call]] = []
    for d in gw.visible(ctx.principal):
        if not d.read_only or not d.example_calls:
            continue
        invoke = ("invoke_tool", {"tool_name": d.name, "parameters": dict(d.example_calls[0])})
        if asyncio.run(gw.call(*invoke, ctx)).ok:
            pairs.append((("discover_tools", {"query": d.summary, "limit": 5}), invoke))
    if not pairs:
        raise SystemExit("no read-only tool with a working example in this catalog")
    asyncio.run(gw.call(*pairs[0][0], ctx))  # warm up: the search index is built on first use
    return pairs


async def drive(
    clients: int,
    rounds: int,
    seconds: float,
    pairs: list[tuple[Call, Call]],
    open_caller: Callable[[], AbstractAsyncContextManager[Caller]],
) -> Tally:
    """`clients` concurrent loops over `pairs`, each through its own caller."""
    tally = Tally()
    deadline = time.monotonic() + seconds

    async def one(index: int) -> None:
        async with open_caller() as call:
            for n in range(rounds):
                if time.monotonic() >= deadline:
                    return
                for name, arguments in pairs[(index + n) % len(pairs)]:
                    start = time.perf_counter()
                    try:
                        problem = None if await call(name, arguments) else f"{name} returned an error result"
                    except Exception as exc:  # a benchmark reports failures, it does not stop at one
                        problem = f"{name}: {type(exc).__name__}: {exc}"
                    tally.add(name, (time.perf_counter() - start) * 1000)
                    if problem:
                        tally.errors.append(problem)
                    if name == "invoke_tool":
                        tally.invocations += 1

    start = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(clients)))
    tally.seconds = time.perf_counter() - start
    return tally


@asynccontextmanager
async def mcp_caller(url: str, mode: str) -> AsyncIterator[Caller]:
    """One MCP client connection (the SDK's `Client` over Streamable HTTP)."""
    async with Client(url, mode=mode) as client:

        async def call(name: str, arguments: dict[str, Any]) -> bool:
            return not (await client.call_tool(name, arguments)).is_error

        yield call


@asynccontextmanager
async def direct_caller(gw: Gateway, ctx: ToolContext) -> AsyncIterator[Caller]:
    """The baseline: straight into the gateway's chokepoint."""

    async def call(name: str, arguments: dict[str, Any]) -> bool:
        return (await gw.call(name, arguments, ctx)).ok

    yield call


def start_server(config: Path, sessions: bool) -> tuple[subprocess.Popen[bytes], str]:
    command = [sys.executable, "-m", "gateway.cli", "serve", "--config", str(config)]
    command += ["--transport", "http", "--host", "127.0.0.1", "--port", "0"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("GATEWAY_")}
    env["GATEWAY_SERVE_SESSIONS"] = "true" if sessions else "false"
    proc = subprocess.Popen(command, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, env=env)
    assert proc.stderr is not None
    end = time.monotonic() + START_SECONDS
    seen = b""
    while b"serving MCP on" not in seen:
        line = proc.stderr.readline()  # the server's first line says where it listens
        if not line or time.monotonic() > end:
            proc.kill()
            raise SystemExit(f"gateway serve did not start:\n{seen.decode(errors='replace')}")
        seen += line
    url = seen.decode().strip().split()[-1]
    return proc, url


def report(label: str, tally: Tally) -> None:
    rate = tally.calls / tally.seconds if tally.seconds else 0.0
    print(
        f"{label}: {tally.calls:,} calls in {tally.seconds:.2f} s = {rate:,.0f} calls/s, errors {len(tally.errors)}"
    )
    for name, values in sorted(tally.latencies.items()):
        figures = "  ".join(f"p{p} {_percentile(values, p):7.2f}" for p in (50, 90, 99))
        print(f"    {name:<16} n={len(values):<6,} ms: {figures}  max {max(values):7.2f}")


def audited_invocations(path: Path) -> int:
    if not path.exists():
        return 0
    return sum(1 for line in path.read_text().splitlines() if json.loads(line)["outcome"] == "executed")


Served = tuple[str, Tally, float, float, int]  # url, tally, server cpu s, clients' cpu s, audited


def serve_and_drive(
    root: Path,
    configs: dict[str, Path],
    sessions: bool,
    load: tuple[int, int, float],
    pairs: list[tuple[Call, Call]],
    *,
    mode: str,
) -> Served:
    """Start a server (with or without sessions), drive `load` (clients, rounds, seconds) at it."""
    name = "sessions-on" if sessions else "sessions-off"
    proc, url = start_server(configs[name], sessions)  # it builds its search index before listening
    own_cpu, before = time.process_time(), resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        tally = asyncio.run(drive(*load, pairs, lambda: mcp_caller(url, mode)))
    finally:
        own_cpu = time.process_time() - own_cpu
        proc.terminate()
        proc.wait(timeout=30)
        if proc.stderr is not None:
            proc.stderr.close()
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    server_cpu = usage.ru_utime + usage.ru_stime - before.ru_utime - before.ru_stime
    return url, tally, server_cpu, own_cpu, audited_invocations(root / name / "audit.jsonl")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--catalog", default="workspace", help="catalog provider (entry point or module:function)"
    )
    parser.add_argument(
        "--clients", type=int, default=16, help=f"concurrent MCP clients (at most {MAX_CLIENTS})"
    )
    parser.add_argument("--rounds", type=int, default=20, help=f"rounds per client (at most {MAX_ROUNDS})")
    parser.add_argument("--seconds", type=float, default=30.0, help=f"time limit (at most {MAX_SECONDS:g})")
    parser.add_argument(
        "--mode", choices=["auto", "legacy"], default="auto", help="the clients' protocol mode"
    )
    parser.add_argument(
        "--sessions", choices=["both", "on", "off"], default="both", help="serve with MCP sessions"
    )
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)  # first, so no library's own basicConfig turns on INFO
    clients = max(1, min(args.clients, MAX_CLIENTS))
    rounds = max(1, min(args.rounds, MAX_ROUNDS))
    seconds = max(1.0, min(args.seconds, MAX_SECONDS))
    print(f"machine: {platform.machine()}, {os.cpu_count()} cpus, {platform.system()} {platform.release()}")
    print(
        f"python {platform.python_version()}; catalog {args.catalog!r}; {clients} clients x {rounds} rounds; "
        f"client mode {args.mode}"
    )
    runs = {"both": [True, False], "on": [True], "off": [False]}[args.sessions]

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        configs = {}
        for name in ("sessions-on", "sessions-off", "baseline"):
            (root / name).mkdir()
            configs[name] = root / name / "config.toml"
            configs[name].write_text(f'catalogs = ["{args.catalog}"]\ndata_dir = "{root / name}"\n')

        with open_gateway(load_settings(configs["baseline"], environ={})) as gw:
            ctx = ToolContext(session_id="bench")
            pairs = workload(gw, ctx)
            print(f"invoked tools: {', '.join(sorted({p[1][1]['tool_name'] for p in pairs}))}")
            baseline = asyncio.run(drive(clients, rounds, seconds, pairs, lambda: direct_caller(gw, ctx)))

        served = {
            sessions: serve_and_drive(
                root, configs, sessions, (clients, rounds, seconds), pairs, mode=args.mode
            )
            for sessions in runs
        }

    report("baseline, Gateway.call in-process", baseline)
    base50 = {k: statistics.median(v) for k, v in baseline.latencies.items()}
    failed = bool(baseline.errors)
    for sessions, (url, tally, server_cpu, own_cpu, audited) in served.items():
        report(f"gateway serve over Streamable HTTP, sessions {'on' if sessions else 'off'} ({url})", tally)
        p50 = {k: statistics.median(v) for k, v in tally.latencies.items()}
        print(
            "    median overhead of MCP over HTTP: "
            + ", ".join(f"{k} +{p50[k] - base50[k]:.2f} ms" for k in sorted(p50))
        )
        print(
            f"    cpu: server process {server_cpu:.2f} s (with its start-up), clients {own_cpu:.2f} s, "
            f"over {tally.seconds:.2f} s on {os.cpu_count()} cpus"
        )
        print(f"    audit log: {audited:,} executed invocations for {tally.invocations:,} invoke_tool calls")
        for error in tally.errors[:5]:
            print(f"error: {error}")
        failed = failed or bool(tally.errors) or audited != tally.invocations
    for error in baseline.errors[:5]:
        print(f"error: {error}")
    if failed:
        raise SystemExit(1)


if __name__ == "__main__":
    main()

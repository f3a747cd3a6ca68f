"""Load on `gateway serve --transport http`, measured at the server, next to the SDK's own server.

    python -m benchmarks.mcp_load [--clients 50] [--seconds 5] [--rounds 3] [--sessions both|on|off]
                                  [--workers N] [--http auto|h11|httptools] [--loop auto|asyncio|uvloop]

What a call costs the server, not its client. Each server (the gateway, and the MCP SDK's minimal
server as the anchor: `benchmarks.mcp_anchor`) is started once as a subprocess on a loopback port;
the real SDK client then calls `invoke_tool` once through a recording proxy (the end-to-end check
that the bytes still match what the SDK sends), and `--clients` light clients replay those bytes
back to back over their own keep-alive connections (`benchmarks.mcp_wire`): the hand-shake once,
then `tools/call` with fresh ids. The invoked tool does nothing (`benchmarks.noop_catalog`).

The servers take turns, `--rounds` windows of `--seconds` each, so a load that changes on the
machine falls on all of them alike. Per window: calls/s, p50 and p99 latency, and the server's CPU
a call read from its own counters (/proc/PID/stat, every thread, its workers' too with `--workers`;
start-up and capture excluded).
The figures are the medians over the windows. In-process `Gateway.call` of the same invocation at
the same concurrency is the floor: the gateway's own work, with no MCP and no HTTP.

Sessions off: a 2026-07-28 client (`mode="auto"`) and a 2025-11-25 client (`mode="legacy"`, which
initializes and gets no session), stateless, plain JSON answers. Sessions on: a 2025-11-25 client
(initialize, then `Mcp-Session-Id`), SSE answers. Afterwards it
checks that every call succeeded and that every call that reached the gateway is in its audit log;
exits 1 otherwise. Linux only (the CPU counters); nothing leaves the machine.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from benchmarks.mcp_wire import Replayer, Script, capture
from gateway import ToolContext
from gateway.runtime import open_gateway
from gateway.settings.loading import load_settings

MAX_CLIENTS = 200
MAX_SECONDS = 60.0
MAX_ROUNDS = 10
MAX_WORKERS = 8
START_SECONDS = 60.0
CATALOG = "benchmarks.noop_catalog:provide"
ARGUMENTS = {"tool_name": "bench_noop", "parameters": {}}
_TICKS = os.sysconf("SC_CLK_TCK")


def http_stack() -> str:
    """What uvicorn's "auto" picks here: httptools and uvloop when they import, else h11 and asyncio."""
    found = []
    for fast, slow in (("httptools", "h11"), ("uvloop", "asyncio")):
        try:
            __import__(fast)
            found.append(fast)
        except ImportError:
            found.append(slow)
    return " + ".join(found)


def cpu_seconds(pid: int) -> float:
    """User and system CPU of process `pid` (all its threads) and its children, from /proc/PID/stat.

    The children are the workers of `gateway serve --workers`; a server without has none.
    """
    total = 0.0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:  # it ended meanwhile
            continue
        if int(entry.name) == pid or int(fields[1]) == pid:
            total += (int(fields[11]) + int(fields[12])) / _TICKS
    return total


@dataclass
class Window:
    """One timed window of load on one server."""

    calls: int
    seconds: float
    cpu: float  # the server's CPU seconds in the window (the in-process floor: this process's)
    latencies: list[float]
    errors: list[str]

    @property
    def rate(self) -> float:
        return self.calls / self.seconds

    @property
    def cpu_ms(self) -> float:
        return 1000 * self.cpu / self.calls if self.calls else float("nan")


@dataclass
class Target:
    """A server under load: how to start it, what its client sends, what came of each window."""

    label: str
    command: list[str]
    env: dict[str, str]
    mode: str  # the SDK client's mode for the capture
    data: Path | None = None  # the gateway's data directory (its audit log); None for the anchor
    sessions: bool = False
    proc: subprocess.Popen[bytes] | None = None
    url: str = ""
    script: Script | None = None
    windows: list[Window] = field(default_factory=list)
    replayers: list[Replayer] = field(default_factory=list)  # its clients, each keeping one session
    calls: int = 0  # every tools/call it answered: capture, warm-up and windows
    warmup_errors: list[str] = field(default_factory=list)  # a client that broke then is gone after

    def start(self) -> None:
        self.proc = subprocess.Popen(
            self.command, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, env=self.env
        )
        assert self.proc.stderr is not None
        end, seen = time.monotonic() + START_SECONDS, b""
        while b"serving MCP on" not in seen:
            line = self.proc.stderr.readline()  # the first line says where it listens
            if not line or time.monotonic() > end:
                self.proc.kill()
                raise SystemExit(f"{self.label} did not start:\n{seen.decode(errors='replace')}")
            seen += line
        self.url = seen.decode().strip().split()[-1]
        where = urlsplit(self.url)  # the line comes as the socket is bound, maybe before it listens
        while True:
            try:
                socket.create_connection((where.hostname, where.port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > end:
                    raise SystemExit(f"{self.label} does not accept connections at {self.url}") from None
                time.sleep(0.05)

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()  # an SSE stream a client left open may hold a graceful stop
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            if self.proc.stderr is not None:
                self.proc.stderr.close()


async def load(target: Target, clients: int, seconds: float) -> Window:
    """`clients` replayers calling back to back for `seconds`, the server's CPU counted meanwhile.

    The clients connect (and open their sessions) once, at the first window: later windows reuse
    them, as agents keep theirs, so no window counts a hand-shake."""
    assert target.script is not None and target.proc is not None
    if not target.replayers:
        target.replayers = [Replayer(target.url, target.script) for _ in range(clients)]
        await asyncio.gather(*(r.open() for r in target.replayers))
    replayers = [r for r in target.replayers if not r.broken]
    latencies: list[float] = []
    errors: list[str] = []
    deadline = time.monotonic() + seconds

    async def one(replayer: Replayer) -> None:
        while time.monotonic() < deadline:
            start = time.perf_counter()
            try:
                problem = await replayer.call()
            except (TimeoutError, ConnectionError, asyncio.IncompleteReadError) as exc:
                errors.append(f"{type(exc).__name__}: {exc}")
                replayer.broken = True  # its connection is in an unknown state: it stops
                return
            latencies.append((time.perf_counter() - start) * 1000)
            if problem:
                errors.append(problem)

    cpu, start = cpu_seconds(target.proc.pid), time.perf_counter()
    await asyncio.gather(*(one(r) for r in replayers))
    window = Window(
        len(latencies), time.perf_counter() - start, cpu_seconds(target.proc.pid) - cpu, latencies, errors
    )
    target.calls += window.calls
    return window


async def in_process(config: Path, clients: int, seconds: float) -> Window:
    """The floor: the same invocation straight into `Gateway.call`, at the same concurrency."""
    with open_gateway(load_settings(config, environ={})) as gw:
        ctx = ToolContext(session_id="bench")
        latencies: list[float] = []
        errors: list[str] = []
        for _ in range(200):  # warm up
            await gw.call("invoke_tool", ARGUMENTS, ctx)
        deadline = time.monotonic() + seconds

        async def one() -> None:
            while time.monotonic() < deadline:
                start = time.perf_counter()
                result = await gw.call("invoke_tool", ARGUMENTS, ctx)
                latencies.append((time.perf_counter() - start) * 1000)
                if not result.ok:
                    errors.append(f"in process: {result.error}")

        cpu, start = time.process_time(), time.perf_counter()
        await asyncio.gather(*(one() for _ in range(clients)))
        return Window(
            len(latencies), time.perf_counter() - start, time.process_time() - cpu, latencies, errors
        )


def _progress(n: int, label: str, window: Window) -> None:
    print(
        f"  window {n + 1}, {label}: {window.rate:,.0f} calls/s, {window.cpu_ms:.3f} ms CPU a call, "
        f"{len(window.errors)} errors",
        file=sys.stderr,
        flush=True,
    )


def _percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))] if ordered else float("nan")


def summary(windows: list[Window]) -> tuple[float, float, float, float]:
    """Medians over the windows: calls/s, p50 ms, p99 ms, server CPU ms a call."""
    return (
        statistics.median(w.rate for w in windows),
        statistics.median(_percentile(w.latencies, 50) for w in windows),
        statistics.median(_percentile(w.latencies, 99) for w in windows),
        statistics.median(w.cpu_ms for w in windows),
    )


def audited(path: Path) -> int:
    if not path.exists():
        return 0
    return sum(1 for line in path.read_text().splitlines() if json.loads(line)["outcome"] == "executed")


def targets(root: Path, sessions: list[bool], http: str, loop: str, workers: int = 1) -> list[Target]:
    """The gateway and the anchor for each sessions setting and client, in the order they take turns.

    With sessions a 2025-11-25 client; without, a 2026-07-28 client and a 2025-11-25 one (which
    initializes, gets no session and posts statelessly). For the 2026-07-28 client the gateway runs
    again with every request through the SDK (`[serve] fast_path = false`), the baseline in the same
    run, and with `workers` above 1 once more with that many workers. For the stateless 2025-11-25
    client, the gateway's own SDK path is the baseline: the SDK's minimal server stops answering
    such calls at 40 or more concurrent clients (every call waits out `CALL_SECONDS`).
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith("GATEWAY_")}
    out = []
    runs = [(True, "legacy")] if True in sessions else []
    runs = ([(False, "auto"), (False, "legacy")] if False in sessions else []) + runs
    for on, mode in runs:
        client = "2025-11-25 client" if mode == "legacy" else "2026-07-28 client"
        word = f"{'on' if on else 'off'} ({client})"
        variants = [("", 1)] if on else [("", 1), ("sdk-path", 1)]
        if (on, mode) == (False, "auto") and workers > 1:
            variants.append(("workers", workers))
        for variant, count in variants:
            name = f"sessions-{'on' if on else 'off'}-{mode}" + (f"-{variant}" if variant else "")
            (root / name).mkdir(mode=0o700)
            config = root / name / "config.toml"
            serve = f"sessions = {str(on).lower()}\nworkers = {count}\n"
            serve += "fast_path = false\n" if variant == "sdk-path" else ""
            config.write_text(f'catalogs = ["{CATALOG}"]\ndata_dir = "{root / name}"\n\n[serve]\n{serve}')
            gateway = [sys.executable, "-m", "gateway.cli", "serve", "--config", str(config)]
            gateway += ["--transport", "http", "--host", "127.0.0.1", "--port", "0"]
            shown = {"": "", "sdk-path": ", fast path off", "workers": f", {count} workers"}[variant]
            label = f"gateway, sessions {word}{shown}"
            out.append(Target(label, gateway, env, mode, data=root / name, sessions=on))
        if (on, mode) == (False, "legacy"):
            continue  # the SDK's minimal server stops answering this at 40 or more clients (docs/mcp.md#load)
        anchor = [sys.executable, "-m", "benchmarks.mcp_anchor", "--sessions", "on" if on else "off"]
        anchor += ["--http", http, "--loop", loop]
        out.append(Target(f"SDK minimal server, sessions {word}", anchor, env, mode, sessions=on))
    return out


async def run(args: argparse.Namespace, root: Path) -> bool:
    clients = max(1, min(args.clients, MAX_CLIENTS))
    seconds = max(0.5, min(args.seconds, MAX_SECONDS))
    rounds = max(1, min(args.rounds, MAX_ROUNDS))
    sessions = {"both": [False, True], "on": [True], "off": [False]}[args.sessions]
    servers = targets(root, sessions, args.http, args.loop, max(1, min(args.workers, MAX_WORKERS)))
    try:
        for target in servers:
            target.start()
            target.script = await capture(target.url, target.mode, ARGUMENTS)  # the SDK client, once
            target.calls += 1
            warm = await load(target, clients, min(1.0, seconds))  # warm up
            target.warmup_errors = warm.errors
        floor: list[Window] = []
        (root / "floor").mkdir(mode=0o700)
        floor_config = root / "floor" / "config.toml"  # an audit log of its own
        floor_config.write_text(f'catalogs = ["{CATALOG}"]\ndata_dir = "{root / "floor"}"\n')
        for n in range(rounds):
            floor.append(await in_process(floor_config, clients, seconds))
            _progress(n, "in-process Gateway.call", floor[-1])
            for target in servers if n % 2 == 0 else reversed(servers):
                target.windows.append(await load(target, clients, seconds))
                _progress(n, target.label, target.windows[-1])
    finally:
        for target in servers:
            await asyncio.gather(*(r.close() for r in target.replayers))
            target.stop()
    return report(servers, floor, clients, rounds, seconds)


def report(servers: list[Target], floor: list[Window], clients: int, rounds: int, seconds: float) -> bool:
    """Print the figures and comparisons; whether every call passed and was audited."""
    print(f"HTTP stack (uvicorn's choice, the gateway's and by default the anchor's): {http_stack()}")
    print(f"{clients} clients, {rounds} windows of {seconds:g} s each per server, taking turns; medians")
    print(f"{'':<54} {'calls/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'server CPU ms a call':>21}")
    rows = [("in-process Gateway.call (no MCP, no HTTP)", floor)] + [(t.label, t.windows) for t in servers]
    for label, windows in rows:
        rate, p50, p99, cpu = summary(windows)
        print(f"{label:<54} {rate:>9,.0f} {p50:>8.2f} {p99:>8.2f} {cpu:>21.3f}")
    gateways = [t for t in servers if t.data is not None]
    for gateway in gateways:
        anchor = next(
            (
                t
                for t in servers
                if t.data is None and (t.sessions, t.mode) == (gateway.sessions, gateway.mode)
            ),
            None,
        )
        if anchor is None:
            continue
        g, a = summary(gateway.windows), summary(anchor.windows)
        if not (g[0] and a[0]):
            continue  # no call passed: the errors below say why
        print(
            f"{gateway.label.split(', ', 1)[1]}: the gateway's CPU a call is {g[3] / a[3]:.2f}x the SDK "
            f"server's, its throughput {g[0] / a[0]:.2f}x"
        )
    for gateway in gateways:
        baseline = next((t for t in gateways if t.label == f"{gateway.label}, fast path off"), None)
        if baseline is not None and gateway.mode == "legacy" and summary(baseline.windows)[0]:
            g, b = summary(gateway.windows), summary(baseline.windows)
            print(
                f"{gateway.label.split(', ', 1)[1]}: the fast path's CPU a call is {g[3] / b[3]:.2f}x the "
                f"SDK path's, its throughput {g[0] / b[0]:.2f}x"
            )
    ok = True
    warmups = {t.label: t.warmup_errors for t in servers}
    for label, windows in rows:
        errors = warmups.get(label, []) + [e for w in windows for e in w.errors]
        if errors or not sum(w.calls for w in windows):
            errors = errors or ["no call answered"]
            ok = False
            print(f"error: {label}: {len(errors)} failed calls, first: {errors[0]}")
    for gateway in gateways:
        assert gateway.data is not None
        seen = audited(gateway.data / "audit.jsonl")
        print(f"audit log ({gateway.label}): {seen:,} executed invocations for {gateway.calls:,} calls")
        ok = ok and seen == gateway.calls
    return ok


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--clients", type=int, default=50, help=f"concurrent clients (at most {MAX_CLIENTS})")
    parser.add_argument(
        "--seconds", type=float, default=5.0, help=f"seconds a window (at most {MAX_SECONDS:g})"
    )
    parser.add_argument("--rounds", type=int, default=3, help=f"windows per server (at most {MAX_ROUNDS})")
    parser.add_argument("--sessions", choices=["both", "on", "off"], default="both")
    parser.add_argument(
        "--workers",
        type=int,
        default=1,
        help=f"also run the gateway without sessions with this many workers (at most {MAX_WORKERS})",
    )
    parser.add_argument("--http", default="auto", help="the anchor's uvicorn HTTP implementation")
    parser.add_argument("--loop", default="auto", help="the anchor's uvicorn event loop")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cpus, {platform.system()} {platform.release()}, "
        f"load {os.getloadavg()[0]:.1f}; python {platform.python_version()}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        ok = asyncio.run(run(args, Path(tmp)))
    if not ok:
        raise SystemExit(1)


if __name__ == "__main__":
    main()

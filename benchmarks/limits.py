"""Rate limits: what the check costs `Gateway.invoke`, and whether replicas sharing Redis over-admit.

    python -m benchmarks.limits [--calls 5000] [--redis redis://127.0.0.1:6379/0]

1. The cost: the same read-only tool invoked `--calls` times through `Gateway.invoke` with no limit
   (the baseline, same run), with a token bucket in memory, and with the bucket in Redis. The
   bucket is large enough never to refuse, so every call pays the check and runs. Prints the
   median and 95th percentile per call and the median's difference from the baseline.
2. Over-admission: two replica processes, each its own Gateway and Redis connection, with 25
   client threads each (50 in all), hammer one shared quota; prints the calls admitted next to the
   quota's exact allowance. Exits 1 if they differ.

Without `--redis`, a throw-away redis-server on a free loopback port is started (Debian's
`redis-server` package); without one, the Redis parts are skipped, saying so.
"""

from __future__ import annotations

import argparse
import multiprocessing
import platform
import shutil
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from pydantic import BaseModel, Field

from gateway import PARAMS_CONFIG, Catalog, Gateway, Principal, ToolContext, run_sync, tool
from gateway.limits import Limit, Limiter, RedisBackend

CLIENTS_PER_REPLICA = 25
ALLOWANCE = 500
CALLS_PER_CLIENT = 30  # 50 clients x 30 = 1,500 tries against 500


class Query(BaseModel):
    model_config = PARAMS_CONFIG
    text: str = Field(description="What to look up.")


@tool(category="bench", action="search", read_only=True, concurrency_safe=True)
def bench_lookup(params: Query) -> dict[str, Any]:
    """Look something up (returns it at once)."""
    return {"found": params.text}


def _per_call_us(gw: Gateway, calls: int) -> list[float]:
    ctx = ToolContext(principal=Principal("bench"))

    async def run() -> list[float]:
        out = []
        for _ in range(calls):
            start = time.perf_counter()
            result = await gw.invoke("bench_lookup", {"text": "x"}, context=ctx)
            out.append((time.perf_counter() - start) * 1e6)
            assert result.ok, result
        return out

    return run_sync(run())


def _summary(name: str, us: list[float], baseline: float | None) -> str:
    median = statistics.median(us)
    p95 = statistics.quantiles(us, n=20)[18]
    extra = "" if baseline is None else f"  (+{median - baseline:.1f} us on the baseline)"
    return f"  {name:<22} median {median:7.1f} us   p95 {p95:7.1f} us{extra}"


def _replica(url: str, prefix: str, out: Any) -> None:
    limiter = Limiter([Limit("shared", quota=ALLOWANCE, per="all")], RedisBackend(url, prefix=prefix))
    gw = Gateway(Catalog([bench_lookup]), limits=limiter)
    admitted: list[int] = []
    start = threading.Barrier(CLIENTS_PER_REPLICA)

    def client(i: int) -> None:
        ctx = ToolContext(principal=Principal(f"client{i}"))
        start.wait()
        admitted.append(
            sum(
                run_sync(gw.invoke("bench_lookup", {"text": "x"}, context=ctx)).ok
                for _ in range(CALLS_PER_CLIENT)
            )
        )

    threads = [threading.Thread(target=client, args=(i,)) for i in range(CLIENTS_PER_REPLICA)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    limiter.close()
    out.put(sum(admitted))


@contextmanager
def _redis(url: str | None) -> Iterator[str | None]:
    if url is not None:
        yield url
        return
    binary = shutil.which("redis-server")
    if binary is None:
        yield None
        return
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    command = [binary, "--bind", "127.0.0.1", "--port", str(port), "--save", "", "--appendonly", "no"]
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(200):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
                break
            except OSError:
                time.sleep(0.05)  # waiting for a server to listen, not synchronising a test
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.limits", description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=5000)
    parser.add_argument("--redis", help="a Redis to use (default: a throw-away redis-server)")
    args = parser.parse_args(argv)
    print(
        f"machine: {platform.machine()}, {platform.processor() or 'cpu'}, python {platform.python_version()}"
    )
    big = [Limit("bench", rate=1e9, burst=10**9)]  # never refuses: every call pays the check and runs
    print(f"1. the limit check on Gateway.invoke, {args.calls:,} calls each")
    baseline = _per_call_us(Gateway(Catalog([bench_lookup])), args.calls)
    median = statistics.median(baseline)
    print(_summary("no limit (baseline)", baseline, None))
    memory = _per_call_us(Gateway(Catalog([bench_lookup]), limits=Limiter(big)), args.calls)
    print(_summary("bucket in memory", memory, median))
    code = 0
    with _redis(args.redis) as url:
        if url is None:
            print("  (no redis-server: the Redis parts are skipped; apt-get install redis-server)")
            return 0
        limiter = Limiter(big, RedisBackend(url, prefix=f"bench:{time.time_ns()}"))
        print(
            _summary(
                "bucket in Redis",
                _per_call_us(Gateway(Catalog([bench_lookup]), limits=limiter), args.calls),
                median,
            )
        )
        limiter.close()
        clients = 2 * CLIENTS_PER_REPLICA
        print(f"2. {clients} clients on two replica processes, one shared quota of {ALLOWANCE}")
        context = multiprocessing.get_context("spawn")
        out = context.Queue()
        prefix = f"bench:{time.time_ns()}"
        replicas = [context.Process(target=_replica, args=(url, prefix, out)) for _ in range(2)]
        for r in replicas:
            r.start()
        admitted = [out.get(timeout=300) for _ in replicas]
        for r in replicas:
            r.join()
        tried = clients * CALLS_PER_CLIENT
        print(
            f"  admitted {sum(admitted)} of {tried:,} tries ({' + '.join(map(str, admitted))}); allowance {ALLOWANCE}"
        )
        code = 0 if sum(admitted) == ALLOWANCE else 1
    return code


if __name__ == "__main__":
    sys.exit(main())

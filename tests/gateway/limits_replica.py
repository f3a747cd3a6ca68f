"""One replica for the limits tests: a Gateway sharing a Redis limit, invoking from many threads at once.

Run as `python -m tests.gateway.limits_replica URL PREFIX THREADS CALLS`; prints how many calls ran.
"""

from __future__ import annotations

import sys
import threading

from gateway import Catalog, Gateway, Principal, ToolContext, run_sync
from gateway.limits import Limit, Limiter, RedisBackend

from .sample_tools import ALL_TOOLS

SHARED = (Limit("shared", quota=61, per="all", tools=("notes_search",)),)


def main(url: str, prefix: str, threads: int, calls: int) -> int:
    limiter = Limiter(SHARED, RedisBackend(url, prefix=prefix))
    gw = Gateway(Catalog(ALL_TOOLS), limits=limiter)
    ran: list[int] = []
    start = threading.Barrier(threads)

    def work(i: int) -> None:
        ctx = ToolContext(principal=Principal(f"p{i}"))
        start.wait()
        ran.append(
            sum(run_sync(gw.invoke("notes_search", {"title": "x"}, context=ctx)).ok for _ in range(calls))
        )

    workers = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    limiter.close()
    return sum(ran)


if __name__ == "__main__":
    print(main(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])))

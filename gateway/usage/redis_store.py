"""Learned pairs in Redis, shared by replicas on several machines (the `redis` extra)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from typing import Any

from ..redis_client import redis_client
from .store import DAY_SECONDS, Evidence, Limits, Pair, WeighingStore, normalize_query


class RedisUsageStore(WeighingStore):
    """Pairs in Redis, shared by replicas on several machines (the `redis` extra).

    One hash of pairs (field: the JSON of query, tool and principal; value: count, missed, last),
    a hash of searches, a daily counter per principal and a version counter.
    """

    def __init__(
        self,
        url: str,
        *,
        prefix: str = "gateway:usage",
        limits: Limits | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._redis: Any = redis_client(url, setting="usage.store")
        self._prefix = prefix
        self.limits = limits or Limits()
        self.clock = clock

    def _rows(self) -> list[tuple[str, str, str, int, int, float]]:
        rows = []
        for field, value in self._redis.hgetall(f"{self._prefix}:pairs").items():
            query, tool, principal = json.loads(field)
            count, missed, last = json.loads(value)
            rows.append((query, tool, principal, int(count), int(missed), float(last)))
        return rows

    def add(self, pairs: Sequence[Pair], *, daily_cap: bool = True) -> int:
        now = self.clock()
        key = f"{self._prefix}:pairs"
        accepted, touched = 0, set()
        for pair in pairs:
            query = normalize_query(pair.query)
            if not query or not pair.tool:
                continue
            at = now if pair.at is None else min(pair.at, now)
            daily = f"{self._prefix}:daily:{pair.principal}:{int(at // DAY_SECONDS)}"
            if daily_cap and int(self._redis.incr(daily)) > self.limits.max_pairs_per_principal_per_day:
                continue
            self._redis.expire(daily, int(3 * DAY_SECONDS))
            field = json.dumps([query, pair.tool, pair.principal])
            old = self._redis.hget(key, field)
            count, missed, last = json.loads(old) if old else (0, 0, at)
            self._redis.hset(
                key, field, json.dumps([count + 1, max(missed, int(pair.missed)), max(last, at)])
            )
            accepted += 1
            touched.add(pair.tool)
        if touched:
            self._trim(touched, now)
            self._redis.incr(f"{self._prefix}:version")
        return accepted

    def _trim(self, tools: set[str], now: float) -> None:
        key, cap, oldest = (
            f"{self._prefix}:pairs",
            self.limits.max_count_per_principal,
            now - self.limits.retention_days * DAY_SECONDS,
        )
        by_tool: dict[str, dict[str, tuple[int, float]]] = {}
        stale = []
        for query, tool, principal, count, _missed, last in self._rows():
            if last < oldest:
                stale.append(json.dumps([query, tool, principal]))
            elif tool in tools:
                n, seen = by_tool.setdefault(tool, {}).get(query, (0, 0.0))
                by_tool[tool][query] = (n + min(count, cap), max(seen, last))
        for tool, queries in by_tool.items():
            ranked = sorted(queries, key=lambda q: (-queries[q][0], -queries[q][1], q))
            dropped = set(ranked[self.limits.max_queries_per_tool :])
            stale += [
                json.dumps(list(f))
                for f in map(json.loads, self._redis.hkeys(key))
                if f[1] == tool and f[0] in dropped
            ]
        if stale:
            self._redis.hdel(key, *stale)

    def searched(self, searches: Sequence[tuple[str, int]], *, at: float | None = None) -> None:
        """Count searches, each (query, how many tools it found), in one round trip."""
        pipe = self._redis.pipeline(transaction=False)
        for query, found in searches:
            text = normalize_query(query)
            if text:
                pipe.hincrby(f"{self._prefix}:searches", text, 1)
                if found == 0:
                    pipe.hincrby(f"{self._prefix}:empty", text, 1)
        pipe.execute()

    def evidence(self) -> list[Evidence]:
        oldest = self.clock() - self.limits.retention_days * DAY_SECONDS
        return self._weigh(row for row in self._rows() if row[5] >= oldest)

    def version(self) -> int:
        return int(self._redis.get(f"{self._prefix}:version") or 0)

    def stats(self, top: int = 10) -> dict[str, Any]:
        rows = self._rows()
        invocations: dict[str, int] = {}
        for query, _tool, _principal, count, _missed, _last in rows:
            invocations[query] = invocations.get(query, 0) + count
        searches = {q: int(n) for q, n in self._redis.hgetall(f"{self._prefix}:searches").items()}
        empty = {q: int(n) for q, n in self._redis.hgetall(f"{self._prefix}:empty").items()}
        unfollowed = {q: n for q, n in searches.items() if q not in invocations and q not in empty}

        def best(counts: dict[str, int]) -> list[tuple[str, int]]:
            return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:top]

        return {
            "pairs": len({(r[0], r[1]) for r in rows}),
            "tools": len({r[1] for r in rows}),
            "top_queries": [{"query": q, "invocations": n} for q, n in best(invocations)],
            "found_nothing": [{"query": q, "searches": n} for q, n in best(empty)],
            "never_followed": [{"query": q, "searches": n} for q, n in best(unfollowed)],
        }

    def export(self) -> list[dict[str, Any]]:
        grouped: dict[str, set[str]] = {}
        for query, tool, *_ in self._rows():
            grouped.setdefault(query, set()).add(tool)
        return [{"query": q, "tools": sorted(grouped[q])} for q in sorted(grouped)]

    def forget(self, principal: str | None = None) -> int:
        key = f"{self._prefix}:pairs"
        if principal is None:
            gone = int(self._redis.hlen(key))
            self._redis.delete(key, f"{self._prefix}:searches", f"{self._prefix}:empty")
        else:
            fields = [f for f in self._redis.hkeys(key) if json.loads(f)[2] == principal]
            gone = int(self._redis.hdel(key, *fields)) if fields else 0
        self._redis.incr(f"{self._prefix}:version")
        return gone

    def close(self) -> None:
        self._redis.close()

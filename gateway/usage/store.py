"""Where learned pairs live: SQLite (a file, or memory) for one machine; Redis (`redis_store`) for several.

A pair is (query, tool, principal): a search in a session followed by a successful call of that
tool. Stores keep counts, not logs, and bound them: one principal's pair counts at most
`max_count_per_principal` however often it is repeated, one principal adds at most
`max_pairs_per_principal_per_day` new pairs a day, a tool keeps its `max_queries_per_tool` best
queries (most frequent, then most recent), and a pair not seen for `retention_days` is dropped.
A pair's weight decays by half every `half_life_days`.
"""

from __future__ import annotations

import math
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from ..files import private_dir, use_wal

DAY_SECONDS = 86_400.0


@dataclass(frozen=True)
class Limits:
    """The bounds of a usage store (the `[usage]` settings)."""

    max_queries_per_tool: int = 200  # measured: docs/discovery.md, "How many past requests a tool keeps"
    max_count_per_principal: int = 3
    max_pairs_per_principal_per_day: int = 500
    half_life_days: float = 30.0
    retention_days: float = 180.0


@dataclass(frozen=True)
class Pair:
    """One positive: `query` was followed, in one session, by a successful call of `tool`."""

    query: str
    tool: str
    principal: str
    missed: bool = False  # the tool was not among what the session's searches showed
    at: float | None = None


IMPORT_PRINCIPAL = "import"
"""The principal imported pairs are recorded for (`gateway usage forget --principal import` drops them)."""


@dataclass(frozen=True)
class Evidence:
    """What the store says for ranking: a past query, its tool, and its weight (capped, decayed),
    in all and by principal (`by`: who taught it, and how much each did)."""

    query: str
    tool: str
    weight: float
    by: tuple[tuple[str, float], ...] = ()


class UsageStore(Protocol):
    def add(self, pairs: Sequence[Pair], *, daily_cap: bool = True) -> int: ...
    def searched(self, searches: Sequence[tuple[str, int]], *, at: float | None = None) -> None: ...
    def evidence(self) -> list[Evidence]: ...
    def version(self) -> int: ...
    def stats(self, top: int = 10) -> dict[str, Any]: ...
    def export(self) -> list[dict[str, Any]]: ...
    def forget(self, principal: str | None = None) -> int: ...
    def close(self) -> None: ...


def normalize_query(text: str) -> str:
    """A query as it is stored: trimmed, inner whitespace collapsed, at most 500 characters."""
    return " ".join(text.split())[:500]


class WeighingStore:
    """The bounds and the weighing, shared by the stores; they provide the rows."""

    limits: Limits
    clock: Callable[[], float]

    def _weigh(self, rows: Iterable[tuple[str, str, str, int, int, float]]) -> list[Evidence]:
        now = self.clock()
        cap, half_life = self.limits.max_count_per_principal, self.limits.half_life_days * DAY_SECONDS
        by: dict[tuple[str, str], dict[str, float]] = {}
        for query, tool, principal, count, missed, last in rows:
            weight = (
                min(count, cap) * (2.0 if missed else 1.0) * math.pow(0.5, max(0.0, now - last) / half_life)
            )
            who = by.setdefault((query, tool), {})
            who[principal] = who.get(principal, 0.0) + weight
        return [
            Evidence(q, t, sum(who.values()), tuple(sorted(who.items())))
            for (q, t), who in sorted(by.items())
        ]


_SCHEMA = """
CREATE TABLE IF NOT EXISTS pairs (
    query TEXT NOT NULL, tool TEXT NOT NULL, principal TEXT NOT NULL,
    count INTEGER NOT NULL, missed INTEGER NOT NULL, last REAL NOT NULL,
    PRIMARY KEY (query, tool, principal));
CREATE INDEX IF NOT EXISTS pairs_by_tool ON pairs (tool);
CREATE TABLE IF NOT EXISTS searches (
    query TEXT PRIMARY KEY, count INTEGER NOT NULL, empty INTEGER NOT NULL, last REAL NOT NULL);
CREATE TABLE IF NOT EXISTS daily (
    principal TEXT NOT NULL, day INTEGER NOT NULL, count INTEGER NOT NULL, PRIMARY KEY (principal, day));
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
"""


class SqliteUsageStore(WeighingStore):
    """Pairs in a SQLite file (created readable by its owner only), or in memory (`":memory:"`)."""

    def __init__(
        self,
        path: Path | str = ":memory:",
        *,
        limits: Limits | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.limits = limits or Limits()
        self.clock = clock
        self.path = str(path)
        self._lock = threading.Lock()
        if self.path != ":memory:":
            private_dir(Path(self.path).parent)
            os.close(os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600))
        self._db = sqlite3.connect(self.path, timeout=10.0, isolation_level=None, check_same_thread=False)
        if self.path != ":memory:":
            use_wal(self._db)
        self._db.executescript(_SCHEMA)

    def add(self, pairs: Sequence[Pair], *, daily_cap: bool = True) -> int:
        """Record `pairs`; the number accepted. Without `daily_cap` (an operator's import) no daily limit applies."""
        accepted = 0
        with self._transaction():
            now = self.clock()
            self._db.execute(
                "DELETE FROM pairs WHERE last < ?", (now - self.limits.retention_days * DAY_SECONDS,)
            )
            touched: set[str] = set()
            for pair in pairs:
                if self._add(pair, now, daily_cap=daily_cap):
                    accepted += 1
                    touched.add(pair.tool)
            for tool in touched:
                self._trim(tool, now)
            if accepted:
                self._db.execute(
                    "INSERT INTO meta VALUES ('version', 1) ON CONFLICT (key) DO UPDATE SET value = value + 1"
                )
        return accepted

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        """One write transaction, under the store's lock: all of it is written, or none of it."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def _add(self, pair: Pair, now: float, *, daily_cap: bool) -> bool:
        query = normalize_query(pair.query)
        if not query or not pair.tool:
            return False
        at = now if pair.at is None else min(pair.at, now)
        day = int(at // DAY_SECONDS)
        row = self._db.execute(
            "SELECT count FROM daily WHERE principal = ? AND day = ?", (pair.principal, day)
        ).fetchone()
        if daily_cap and row is not None and row[0] >= self.limits.max_pairs_per_principal_per_day:
            return False
        self._db.execute(
            "INSERT INTO daily VALUES (?, ?, 1) ON CONFLICT (principal, day) DO UPDATE SET count = count + 1",
            (pair.principal, day),
        )
        self._db.execute("DELETE FROM daily WHERE day < ?", (day - 2,))
        self._db.execute(
            "INSERT INTO pairs VALUES (?, ?, ?, 1, ?, ?) ON CONFLICT (query, tool, principal) DO UPDATE SET "
            "count = count + 1, missed = max(missed, excluded.missed), last = max(last, excluded.last)",
            (query, pair.tool, pair.principal, int(pair.missed), at),
        )
        return True

    def _trim(self, tool: str, now: float) -> None:
        """Keep the tool's `max_queries_per_tool` best queries: most frequent (capped), then most recent."""
        rows = self._db.execute(
            "SELECT query, sum(min(count, ?)), max(last) FROM pairs WHERE tool = ? GROUP BY query",
            (self.limits.max_count_per_principal, tool),
        ).fetchall()
        if len(rows) <= self.limits.max_queries_per_tool:
            return
        ranked = sorted(rows, key=lambda r: (-r[1], -r[2], r[0]))
        dropped = [(tool, r[0]) for r in ranked[self.limits.max_queries_per_tool :]]
        self._db.executemany("DELETE FROM pairs WHERE tool = ? AND query = ?", dropped)

    def searched(self, searches: Sequence[tuple[str, int]], *, at: float | None = None) -> None:
        """Count searches, each (query, how many tools it found), in one transaction."""
        when = self.clock() if at is None else at
        rows = [
            (text, int(found == 0), when) for query, found in searches if (text := normalize_query(query))
        ]
        if not rows:
            return
        with self._transaction():
            self._db.executemany(
                "INSERT INTO searches VALUES (?, 1, ?, ?) ON CONFLICT (query) DO UPDATE SET "
                "count = count + 1, empty = empty + excluded.empty, last = max(last, excluded.last)",
                rows,
            )

    def evidence(self) -> list[Evidence]:
        with self._lock:
            rows = self._db.execute(
                "SELECT query, tool, principal, count, missed, last FROM pairs WHERE last >= ?",
                (self.clock() - self.limits.retention_days * DAY_SECONDS,),
            ).fetchall()
        return self._weigh(rows)

    def version(self) -> int:
        with self._lock:
            row = self._db.execute("SELECT value FROM meta WHERE key = 'version'").fetchone()
        return int(row[0]) if row else 0

    def stats(self, top: int = 10) -> dict[str, Any]:
        with self._lock:
            db = self._db
            pairs = db.execute("SELECT count(*) FROM (SELECT 1 FROM pairs GROUP BY query, tool)").fetchone()[
                0
            ]
            tools = db.execute("SELECT count(DISTINCT tool) FROM pairs").fetchone()[0]
            top_queries = db.execute(
                "SELECT query, sum(count) AS n FROM pairs GROUP BY query ORDER BY n DESC, query LIMIT ?",
                (top,),
            ).fetchall()
            empty = db.execute(
                "SELECT query, empty FROM searches WHERE empty > 0 ORDER BY empty DESC, query LIMIT ?", (top,)
            ).fetchall()
            unfollowed = db.execute(
                "SELECT query, count FROM searches WHERE empty = 0 AND query NOT IN (SELECT query FROM pairs) "
                "ORDER BY count DESC, query LIMIT ?",
                (top,),
            ).fetchall()
        return {
            "pairs": pairs,
            "tools": tools,
            "top_queries": [{"query": q, "invocations": n} for q, n in top_queries],
            "found_nothing": [{"query": q, "searches": n} for q, n in empty],
            "never_followed": [{"query": q, "searches": n} for q, n in unfollowed],
        }

    def export(self) -> list[dict[str, Any]]:
        with self._lock:
            rows = self._db.execute("SELECT DISTINCT query, tool FROM pairs ORDER BY query, tool").fetchall()
        grouped: dict[str, list[str]] = {}
        for query, tool in rows:
            grouped.setdefault(query, []).append(tool)
        return [{"query": q, "tools": tools} for q, tools in grouped.items()]

    def forget(self, principal: str | None = None) -> int:
        with self._lock:
            if principal is None:
                gone = self._db.execute("DELETE FROM pairs").rowcount
                self._db.execute("DELETE FROM searches")
                self._db.execute("DELETE FROM daily")
            else:
                gone = self._db.execute("DELETE FROM pairs WHERE principal = ?", (principal,)).rowcount
                self._db.execute("DELETE FROM daily WHERE principal = ?", (principal,))
            self._db.execute(
                "INSERT INTO meta VALUES ('version', 1) ON CONFLICT (key) DO UPDATE SET value = value + 1"
            )
        return int(gone)

    def close(self) -> None:
        self._db.close()

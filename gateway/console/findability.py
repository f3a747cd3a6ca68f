"""The console's findability page: the report of `gateway catalog --findability`, per principal.

Ranking every tool's requests takes about 25 s over the Google catalog, so a report is made in a
thread of its own the first time it is asked for (the page shows how far it is and looks again),
and kept for the catalog's version: a catalog that changes is ranked again.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from ..context import Principal
from ..engine import Gateway
from ..search import findability
from ..search.findability import Findability

_KEPT = 8  # reports kept (one per principal and catalog version; the oldest goes first)
AT_ONCE = 2000
"""Catalogs up to this many tools are reported on at once; larger ones in a thread the page waits for."""


@dataclass
class Job:
    """A report being made or made: how far it is, then the report or why it failed."""

    total: int
    done: int = 0
    result: Findability | None = None
    error: str | None = None


class Reports:
    def __init__(self, gw: Gateway) -> None:
        self.gw = gw
        self._jobs: dict[tuple[Principal, int], Job] = {}
        self._lock = threading.Lock()

    def of(self, principal: Principal) -> Job:
        """The report of the tools `principal` sees: made or under way (started if neither)."""
        key = (principal, self.gw.catalog.version)  # what it sees: its roles and toolsets too
        with self._lock:
            job = self._jobs.get(key)
            if job is not None:
                return job
            tools = self.gw.visible(principal)
            job = self._jobs[key] = Job(total=len(tools))
            while len(self._jobs) > _KEPT:
                del self._jobs[next(iter(self._jobs))]
        index = self.gw.index(principal)

        def make() -> None:
            def progress(done: int, total: int) -> None:
                job.done = done

            try:
                job.result = findability.report(index, tools, progress=progress)
                job.done = job.total
            except Exception as exc:  # the page says it; the console goes on
                job.error = f"{type(exc).__name__}: {exc}"

        if len(tools) <= AT_ONCE:  # no page that looks again
            make()
        else:
            threading.Thread(target=make, name="findability", daemon=True).start()
        return job

"""Learning from use: the gateway's searches and successful calls in, votes for ranking out.

`Usage` ties a store (the pairs), a session tracker (what each session searched for and was
shown) and a learned index (the pairs' past requests as small documents that vote for their tools).
The learned index is built from a snapshot of the store, re-read in a background thread when the
store changed, and searches are counted in memory and written by a background thread: a search never
waits for the store and uses the last snapshot meanwhile. With an empty store there is no index and
no vote, so rankings are exactly what they are without learning.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import threading
import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from ..definition import ToolDefinition
from .companions import Companions
from .learned import LearnedIndex
from .store import IMPORT_PRINCIPAL, Evidence, Pair, UsageStore, normalize_query
from .tracker import SessionTracker

log = logging.getLogger("gateway.usage")
_MAX_INDEXES = 8  # learned indexes of visible sets kept at once
_WRITE_EVERY = 64  # searches counted in memory before a background thread writes them


class Usage:
    """One gateway's learning from use.

    Args:
        store: where pairs are kept (shared by replicas when it is SQLite or Redis).
        tracker: the sessions' recent searches (default: a new one).
        check_seconds: how often a search looks whether the store changed (another replica, an import).
        semantic: judge how close two requests are by their embeddings (None: when the `search` extra
            is installed; False: by their words).
        min_principals: distinct principals whose pairs must agree before a pair moves the ranking
            of anyone but them (a principal's own pairs count for it at once).
    """

    def __init__(
        self,
        store: UsageStore,
        *,
        tracker: SessionTracker | None = None,
        check_seconds: float = 2.0,
        semantic: bool | None = None,
        min_principals: int = 3,
    ) -> None:
        self.store = store
        self.min_principals = min_principals
        self.tracker = tracker or SessionTracker()
        self.check_seconds = check_seconds
        self.semantic = semantic
        self._lock = threading.Lock()
        self._snapshot: tuple[int, list[Evidence]] | None = None  # the store's version and evidence
        self._companions: Companions | None = None  # of the snapshot's evidence
        # id of a visible tuple -> (that tuple, store version, its learned index, its names)
        self._indexes: dict[int, tuple[Sequence[ToolDefinition], int, LearnedIndex, tuple[str, ...]]] = {}
        self._checked = 0.0
        self._building: threading.Thread | None = None
        self._searches: list[tuple[str, int]] = []  # (query, tools found), not yet written
        self._flushing = threading.Lock()  # held while searches are written: a flush waits for the writer
        self._writer: ThreadPoolExecutor | None = None
        self._write_queued = False
        self._closed = False

    # -- what happened ---------------------------------------------------------------------------

    def searched(self, principal: str, session: str, query: str, shown: Sequence[str], total: int) -> None:
        """`principal`'s discover_tools query in `session` and the tools its page showed.

        The search is counted for `gateway usage stats` in memory; every `_WRITE_EVERY` searches a
        background thread writes the counts, so a search never waits for the store.
        """
        self.tracker.searched(principal, session, query, shown)
        with self._lock:
            self._searches.append((query, total))
            write = len(self._searches) >= _WRITE_EVERY and not self._write_queued and not self._closed
            if write:
                self._write_queued = True
                if self._writer is None:
                    self._writer = ThreadPoolExecutor(1, thread_name_prefix="gateway-usage-writer")
                writer = self._writer
        if write:
            # RuntimeError: the interpreter is exiting, and close() writes what is left.
            with contextlib.suppress(RuntimeError):
                writer.submit(self._write)

    def _write(self) -> None:
        with self._lock:
            self._write_queued = False
        try:
            self.flush()
        except Exception:
            log.exception("writing the search counts failed; they are not counted")

    def invoked(self, session: str, principal: str, tool: str) -> bool:
        """A successful call of `tool`; True when it taught something (a pair was recorded)."""
        found = self.tracker.invoked(principal, session, tool)
        return found is not None and self._learn(found[0], tool, principal, found[1])

    async def invoked_off_loop(self, session: str, principal: str, tool: str) -> bool:
        """`invoked` from async code: the store's write runs off the event loop (a stalled Redis holds
        up no other call), and a store that fails costs the lesson, never the call, which has run."""
        found = self.tracker.invoked(principal, session, tool)
        if found is None:  # no search led to it: nothing to write (most calls, at once)
            return False
        try:
            return await asyncio.to_thread(self._learn, found[0], tool, principal, found[1])
        except Exception:
            log.warning("could not record what %s's call of %s taught", principal, tool, exc_info=True)
            return False

    def _learn(self, query: str, tool: str, principal: str, missed: bool) -> bool:
        self.flush()
        return self.store.add([Pair(query, tool, principal, missed)]) > 0

    def flush(self) -> None:
        """Write the search counts not written yet (for `gateway usage stats`); when it returns, every
        earlier search is in the store, the background writer's too."""
        with self._flushing:
            with self._lock:
                searches, self._searches = self._searches, []
            if searches:
                self.store.searched(searches)

    # -- what was learned ------------------------------------------------------------------------

    def votes(
        self,
        tools: Sequence[ToolDefinition],
        query: str,
        *,
        principal: str | None = None,
        categories: Collection[str] | None = None,
        actions: Collection[str] | None = None,
        limit: int | None = None,
    ) -> Mapping[str, float]:
        """Tool name -> vote in (0, 1] for `principal`'s `query`, among `tools` (the caller's visible
        tools, by name); with `limit`, only the strongest `limit` (`LearnedIndex.votes`)."""
        learned = self.learned(tools)
        if learned is None:
            return {}
        return learned.votes(query, principal=principal, categories=categories, actions=actions, limit=limit)

    def learned(self, tools: Sequence[ToolDefinition], *, wait: bool = False) -> LearnedIndex | None:
        """The learned index over `tools`, from the latest snapshot of the store (None: no evidence).

        When the store changed (checked at most every `check_seconds`), the snapshot and the learned
        indexes of the visible sets in use are rebuilt in the background, and searches use the last
        ones meanwhile; the first snapshot, with `wait` the current one, and the index of a visible
        set not seen before are built now.
        """
        self._refresh(wait=wait)
        # The gateway hands the same tuple for the same visible set: found by identity, no hashing.
        with self._lock:
            snapshot, cached = self._snapshot, self._indexes.get(id(tools))
        if snapshot is None or not snapshot[1]:
            return None
        version, evidence = snapshot
        if cached is not None and cached[0] is tools and cached[1] == version:
            found = cached[2]
        else:
            names = tuple(d.name for d in tools)
            with self._lock:
                same = next((c[2] for c in self._indexes.values() if c[1] == version and c[3] == names), None)
            found = (
                same
                if same is not None
                else LearnedIndex(evidence, tools, semantic=self.semantic, min_principals=self.min_principals)
            )
            with self._lock:
                self._indexes[id(tools)] = (tools, version, found, names)
                while len(self._indexes) > _MAX_INDEXES:
                    del self._indexes[next(iter(self._indexes))]
        return found if len(found) else None

    def companions(
        self, tools: Collection[str], principal: str, see: Callable[[str], ToolDefinition | None]
    ) -> dict[str, list[str]]:
        """The tools usually needed with each of `tools`, for `principal`, among those it sees
        (`see`: a name's tool when it may see it); only tools that have some (`companions`)."""
        self._refresh(wait=False)
        with self._lock:
            companions = self._companions
        return companions.named(tools, principal, see) if companions is not None and len(companions) else {}

    def _refresh(self, *, wait: bool) -> None:
        now = time.monotonic()
        current = self._snapshot
        if current is not None and not wait and now - self._checked < self.check_seconds:
            return
        self._checked = now
        version = self.store.version()
        if current is not None and current[0] == version:
            return
        if current is None or wait:
            self._load(version)
        else:
            self._load_later(version)

    def _load(self, version: int) -> None:
        """Read the store, build the learned indexes of the visible sets in use from it, then put the
        snapshot and its indexes in place at once: a search never builds the index of a changed store."""
        evidence = self.store.evidence()
        with self._lock:
            in_use = list(self._indexes.items())
        indexes: dict[int, tuple[Sequence[ToolDefinition], int, LearnedIndex, tuple[str, ...]]] = {}
        built: dict[tuple[str, ...], LearnedIndex] = {}
        for key, (tools, _, _, names) in in_use if evidence else ():
            if names not in built:
                built[names] = LearnedIndex(
                    evidence, tools, semantic=self.semantic, min_principals=self.min_principals
                )
            indexes[key] = (tools, version, built[names], names)
        companions = Companions(evidence, min_principals=self.min_principals)
        with self._lock:
            self._snapshot = (version, evidence)
            self._indexes = indexes
            self._companions = companions

    def _load_later(self, version: int) -> None:
        with self._lock:
            if self._building is not None and self._building.is_alive():
                return

            def load() -> None:
                try:
                    self._load(version)
                except Exception:
                    log.exception("reading the usage store failed; the last snapshot stays in use")

            self._building = threading.Thread(target=load, name="gateway-usage-snapshot", daemon=True)
            self._building.start()

    # -- moving history in and out ---------------------------------------------------------------

    def import_lines(
        self,
        lines: Iterable[str],
        *,
        principal: str = IMPORT_PRINCIPAL,
        known: Collection[str] | None = None,
        unknown: set[str] | None = None,
    ) -> tuple[int, list[str]]:
        """Lines `{"query": ..., "tools": [names]}` as pairs; (pairs recorded, problems by line).

        With `known`, tools not in it are skipped (and added to `unknown`).
        """
        pairs: list[Pair] = []
        problems: list[str] = []
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
                query, tools = item["query"], item["tools"]
                if not isinstance(query, str) or not normalize_query(query) or not isinstance(tools, list):
                    raise TypeError
                if not all(isinstance(t, str) and t for t in tools):
                    raise TypeError
            except (ValueError, KeyError, TypeError):
                problems.append(f'line {number}: expected {{"query": "...", "tools": ["tool_name", ...]}}')
                continue
            for tool in tools:
                if known is not None and tool not in known:
                    if unknown is not None:
                        unknown.add(tool)
                    continue
                pairs.append(Pair(query, tool, principal))
        return (self.store.add(pairs, daily_cap=False) if pairs else 0), problems

    def export(self) -> list[dict[str, Any]]:
        return self.store.export()

    def stats(self, top: int = 10) -> dict[str, Any]:
        self.flush()
        return self.store.stats(top)

    def forget(self, principal: str | None = None) -> int:
        return self.store.forget(principal)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            writer, self._writer = self._writer, None
        if writer is not None:
            writer.shutdown(wait=True)
        self.flush()
        building = self._building
        if building is not None:
            building.join(timeout=30)
        self.store.close()

"""What each session searched for and was shown, so a later successful call becomes a learned pair.

A session belongs to the principal that opened it: the same session id presented by another
principal is another session (a client cannot pair its calls with someone else's searches), a call
without a session pairs with nothing, and a search pairs only with calls that follow it within
`window` seconds.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

NO_SESSION = "default"
"""`ToolContext.session_id` when the caller named no session: such calls teach nothing."""


@dataclass
class _Session:
    searches: deque[tuple[str, frozenset[str], float]] = field(default_factory=lambda: deque(maxlen=3))
    recorded: set[tuple[str, str]] = field(default_factory=set)
    seen: float = 0.0


class SessionTracker:
    """The last few searches of each recent session (bounded: sessions idle for `ttl` are forgotten).

    Args:
        max_sessions: sessions remembered at once (the least recently active go first).
        ttl: seconds after which an idle session's searches no longer count.
        depth: how many of a session's last searches decide whether a tool was shown.
        max_pairs: pairs one session may contribute.
        window: seconds after a search within which a call pairs with it.
    """

    def __init__(
        self,
        *,
        max_sessions: int = 10_000,
        ttl: float = 1800.0,
        depth: int = 3,
        max_pairs: int = 50,
        window: float = 600.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._sessions: OrderedDict[tuple[str, str], _Session] = OrderedDict()
        self._lock = threading.Lock()
        self.max_sessions, self.ttl, self.depth, self.max_pairs = max_sessions, ttl, depth, max_pairs
        self.window = window
        self._clock = clock

    def searched(self, principal: str, session: str, query: str, shown: Sequence[str]) -> None:
        """`principal`'s search in `session` and the tools its page showed."""
        if session == NO_SESSION or not session or not query.strip():
            return
        with self._lock:
            state = self._get((principal, session), create=True)
            assert state is not None
            if state.searches.maxlen != self.depth:
                state.searches = deque(state.searches, maxlen=self.depth)
            state.searches.append((query, frozenset(shown), state.seen))

    def invoked(self, principal: str, session: str, tool: str) -> tuple[str, bool] | None:
        """The pair a successful call of `tool` by `principal` in `session` makes: (the session's last
        query, whether it missed); None when the session has no search of `principal` within `window`."""
        if session == NO_SESSION or not session:
            return None
        with self._lock:
            state = self._get((principal, session), create=False)
            if state is None or not state.searches or len(state.recorded) >= self.max_pairs:
                return None
            query, _, at = state.searches[-1]
            if state.seen - at > self.window or (query, tool) in state.recorded:
                return None
            state.recorded.add((query, tool))
            missed = all(tool not in shown for _, shown, _ in state.searches)
            return query, missed

    def _get(self, session: tuple[str, str], *, create: bool) -> _Session | None:
        now = self._clock()
        state = self._sessions.get(session)
        if state is not None and now - state.seen > self.ttl:
            del self._sessions[session]
            state = None
        if state is None:
            if not create:
                return None
            state = self._sessions[session] = _Session()
            while len(self._sessions) > self.max_sessions:
                self._sessions.popitem(last=False)
        self._sessions.move_to_end(session)
        state.seen = now
        return state

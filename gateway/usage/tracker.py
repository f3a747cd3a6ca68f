"""What each session searched for and was shown, so a later successful call becomes a learned pair.

A session belongs to the principal that opened it: the same session id presented by another
principal is another session (a client cannot pair its calls with someone else's searches), a call
without a session pairs with nothing, and a search pairs only with calls that follow it within
`window` seconds.

Sessions are bounded per principal as well as in all: a client that names its own session ids (a
stateless HTTP client sends any `Mcp-Session-Id`) forgets its own sessions first, never another
principal's while it holds more, so one principal cannot crowd out the others' pairs.
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
        max_sessions: sessions remembered at once. When a new session needs room, sessions idle for
            `ttl` go first, then the least recently active one of the principal holding the most
            (the new one counted).
        max_sessions_per_principal: sessions one principal has remembered at once (its least
            recently active goes first).
        ttl: seconds after which an idle session's searches no longer count.
        depth: how many of a session's last searches decide whether a tool was shown.
        max_pairs: pairs one session may contribute.
        window: seconds after a search within which a call pairs with it.
    """

    def __init__(
        self,
        *,
        max_sessions: int = 10_000,
        max_sessions_per_principal: int = 1_000,
        ttl: float = 1800.0,
        depth: int = 3,
        max_pairs: int = 50,
        window: float = 600.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._sessions: OrderedDict[tuple[str, str], _Session] = OrderedDict()  # least recently active first
        self._held: dict[str, OrderedDict[str, None]] = {}  # each principal's sessions, the same order
        self._lock = threading.Lock()
        self.max_sessions, self.ttl, self.depth, self.max_pairs = max_sessions, ttl, depth, max_pairs
        self.max_sessions_per_principal = max_sessions_per_principal
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
            self._forget(session)
            state = None
        if state is None:
            if not create:
                return None
            self._make_room(session[0], now)
            state = self._sessions[session] = _Session()
            self._held.setdefault(session[0], OrderedDict())[session[1]] = None
        self._sessions.move_to_end(session)
        self._held[session[0]].move_to_end(session[1])
        state.seen = now
        return state

    def _make_room(self, principal: str, now: float) -> None:
        """Room for one more session of `principal`, within both bounds."""
        own = self._held.get(principal)
        if own is not None and len(own) >= self.max_sessions_per_principal:
            self._forget((principal, next(iter(own))))
        while self._sessions and now - next(iter(self._sessions.values())).seen > self.ttl:
            self._forget(next(iter(self._sessions)))
        while len(self._sessions) >= self.max_sessions:
            held = {p: len(ids) for p, ids in self._held.items()}
            held[principal] = held.get(principal, 0) + 1
            most = max(held.values())
            # Its own first: a principal never ends another's session while it holds as many.
            ends = principal if held[principal] == most and principal in self._held else None
            ends = ends or next(p for p, n in held.items() if n == most and p != principal)
            self._forget((ends, next(iter(self._held[ends]))))

    def _forget(self, session: tuple[str, str]) -> None:
        del self._sessions[session]
        own = self._held[session[0]]
        del own[session[1]]
        if not own:
            del self._held[session[0]]

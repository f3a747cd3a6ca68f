"""Learning from use: which tool a session invoked after a search ranks that tool for similar requests.

Owns the pairs' stores (`store`: SQLite in the data directory or in memory, Redis for replicas;
bounded and decaying; Redis in `redis_store`), what each session searched for and was shown
(`tracker`), the pairs' past requests as a second small index whose nearest neighbours vote for
their tools (`learned`), and `Usage`, which ties them together and imports and exports history
(`learning`). It may import the core (`definition`, `catalog`, `errors`) and the search engine; the
engine asks it for votes and tells it what happened.
"""

from __future__ import annotations

from .learned import LearnedIndex
from .learning import Usage
from .redis_store import RedisUsageStore
from .store import IMPORT_PRINCIPAL, Evidence, Limits, Pair, SqliteUsageStore, UsageStore
from .tracker import NO_SESSION, SessionTracker

__all__ = [
    "IMPORT_PRINCIPAL",
    "NO_SESSION",
    "Evidence",
    "LearnedIndex",
    "Limits",
    "Pair",
    "RedisUsageStore",
    "SessionTracker",
    "SqliteUsageStore",
    "Usage",
    "UsageStore",
]

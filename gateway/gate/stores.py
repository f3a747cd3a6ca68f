"""Confirmation stores shared between processes: a SQLite file (one machine) and Redis (several).

Replicas of `gateway serve` that share a store and the gate's secret honour each other's
pending confirmations: a call made on one replica can be approved, and then run, on another.
Every state change is one atomic operation in the store (an `UPDATE ... RETURNING` in SQLite,
a Lua script in Redis), so a confirmation is used at most once whichever replica redeems it.

Records are kept a while after they expire, so a late redemption reads "expired" rather than
"unknown", and are then dropped.

Both also mark the call a paused `run_code` program waits on with the process holding the program,
and tell whether that process still runs (`holders.py`).
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, cast, runtime_checkable

from pydantic import SecretStr

from ..context import PendingConfirmation
from ..files import private_dir, private_secret, use_wal
from ..redis_client import redis_client, redis_failures
from .confirmation import ConfirmationStore, MemoryConfirmationStore, Record, State
from .holders import LEASE_SECONDS, Held, Lease, ProcessLocks, parse_held, why_held_ended

if TYPE_CHECKING:
    from ..settings.loading import Settings

KEEP_AFTER_EXPIRY_SECONDS = 3600.0
SECRET_FILE = "confirmation-secret"
"""In the data directory: the secret of the "auto" store, generated on first use, readable by its owner only."""
_STATES: frozenset[str] = frozenset({"pending", "approved", "denied", "used"})
_OPEN: tuple[State, ...] = ("pending", "approved")  # a call that may still run


@runtime_checkable
class Holders(Protocol):
    """A shared store that marks a paused program's call with the process holding the program."""

    def hold(self, pending_id: str, call_id: str) -> None:
        """Mark `pending_id` as the call (its call id `call_id`) of a program this process holds."""
        ...

    def orphans(self) -> list[tuple[Record, str]]:
        """The marked calls still pending or approved whose holding process ended, with their call ids."""
        ...

    def end_orphan(self, pending_id: str) -> bool:
        """Decline an orphan (open, its process ended), marking it so; whether this call declined it."""
        ...

    def why_ended(self, pending_id: str) -> str | None:
        """`holders.PROGRAM_ENDED` when the call's holding process ended; None otherwise, or unmarked."""
        ...


def record_to_json(record: Record) -> str:
    p = record.pending
    return json.dumps(
        {
            "pending_id": p.pending_id,
            "tool": p.tool,
            "preview": p.preview,
            "parameters": dict(p.parameters),
            "principal": p.principal,
            "expires_at": p.expires_at,
            "agent": p.agent,
            "session": p.session,
            "toolsets": list(p.toolsets),
            "plan": p.plan,
            "binding": record.binding,
            "counted": [list(c) for c in record.counted],
            "counted_at": record.counted_at,
        },
        ensure_ascii=False,
        separators=(",", ":"),
        default=str,
    )


def record_from_json(text: str, state: str) -> Record:
    data = json.loads(text)
    binding = data.pop("binding")
    data["toolsets"] = tuple(data.get("toolsets", ()))  # a record from before toolsets were kept has none
    counted = tuple((str(k), str(kind), float(a), float(b)) for k, kind, a, b in data.pop("counted", ()))
    counted_at = float(data.pop("counted_at", 0.0))
    if state not in _STATES:
        raise ValueError(f"unknown confirmation state {state!r}")
    return Record(PendingConfirmation(**data), binding, cast(State, state), counted, counted_at)


class SqliteConfirmationStore:
    """Confirmations in a SQLite file that several processes on one machine open together.

    The file is created readable by its owner only. WAL mode lets readers and the one writer
    proceed together; each operation is a single statement, atomic on its own.
    """

    unavailable: tuple[type[BaseException], ...] = (sqlite3.OperationalError,)
    """A file locked past its timeout, or a disk that failed: the gate refuses the call that needed it."""

    def __init__(self, path: Path | str, *, clock: Callable[[], float] = time.time) -> None:
        self.path = Path(path)
        private_dir(self.path.parent)
        os.close(os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600))
        self._clock = clock
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, timeout=10.0, isolation_level=None, check_same_thread=False)
        with self._lock:
            self._db.execute("PRAGMA busy_timeout = 10000")
            use_wal(self._db)
            # One transaction, taken before reading the schema: workers starting together on a new
            # file must not both find the column missing and both add it.
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._db.execute(
                    "CREATE TABLE IF NOT EXISTS confirmations ("
                    " pending_id TEXT PRIMARY KEY, state TEXT NOT NULL, expires_at REAL NOT NULL,"
                    " record TEXT NOT NULL, holder TEXT)"
                )
                self._db.execute("CREATE INDEX IF NOT EXISTS by_expiry ON confirmations (state, expires_at)")
                self._db.execute(
                    "CREATE TABLE IF NOT EXISTS rules (rule_id TEXT PRIMARY KEY, expires_at REAL NOT NULL, rule TEXT NOT NULL)"
                )
                columns = {row[1] for row in self._db.execute("PRAGMA table_info(confirmations)")}
                if "holder" not in columns:  # a store from before paused programs were marked
                    self._db.execute("ALTER TABLE confirmations ADD COLUMN holder TEXT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")
        # Beside the file itself: every name a process opens it by (a symlink, say) finds the same locks.
        real = self.path.resolve()
        self.locks = ProcessLocks(real.parent / f"{real.name}.holders")
        self.locks.sweep(self._named())

    def put(self, record: Record) -> None:
        with self._lock:
            self._db.execute(
                "DELETE FROM confirmations WHERE expires_at < ?", (self._clock() - KEEP_AFTER_EXPIRY_SECONDS,)
            )
            self._db.execute(
                "INSERT OR REPLACE INTO confirmations (pending_id, state, expires_at, record) VALUES (?, ?, ?, ?)",
                (record.pending.pending_id, record.state, record.pending.expires_at, record_to_json(record)),
            )

    def get(self, pending_id: str) -> Record | None:
        with self._lock:
            row = self._db.execute(
                "SELECT record, state FROM confirmations WHERE pending_id = ?", (pending_id,)
            ).fetchone()
        return record_from_json(row[0], row[1]) if row else None

    def transition(self, pending_id: str, from_states: tuple[State, ...], to: State) -> Record | None:
        if not from_states:
            return None
        marks = ", ".join("?" for _ in from_states)
        with self._lock:
            row = self._db.execute(
                f"UPDATE confirmations SET state = ? WHERE pending_id = ? AND state IN ({marks})"
                " RETURNING record, state",
                (to, pending_id, *from_states),
            ).fetchone()
        return record_from_json(row[0], row[1]) if row else None

    def pending(self) -> list[Record]:
        with self._lock:
            rows = self._db.execute(
                "SELECT record, state FROM confirmations WHERE state = 'pending' ORDER BY expires_at"
            ).fetchall()
        return [record_from_json(text, state) for text, state in rows]

    def hold(self, pending_id: str, call_id: str) -> None:
        holder = Held(self.locks.mine(), call_id).to_json()
        with self._lock:
            self._db.execute("UPDATE confirmations SET holder = ? WHERE pending_id = ?", (holder, pending_id))

    # -- standing approvals (`rules.py`) --

    def add_rule(self, rule_id: str, expires_at: float, text: str) -> None:
        with self._lock:
            self._db.execute("DELETE FROM rules WHERE expires_at < ?", (self._clock(),))
            self._db.execute("INSERT OR REPLACE INTO rules VALUES (?, ?, ?)", (rule_id, expires_at, text))

    def rule_texts(self) -> list[str]:
        with self._lock:
            rows = self._db.execute(
                "SELECT rule FROM rules WHERE expires_at >= ? ORDER BY expires_at", (self._clock(),)
            ).fetchall()
        return [row[0] for row in rows]

    def revoke_rule(self, rule_id: str) -> bool:
        with self._lock:
            return (
                self._db.execute("DELETE FROM rules WHERE rule_id = ? RETURNING 1", (rule_id,)).fetchone()
                is not None
            )

    def orphans(self) -> list[tuple[Record, str]]:
        with self._lock:
            rows = self._db.execute(
                "SELECT record, state, holder FROM confirmations"
                " WHERE holder IS NOT NULL AND state IN ('pending', 'approved') ORDER BY expires_at"
            ).fetchall()
        held = [(text, state, parse_held(holder)) for text, state, holder in rows]
        return [
            (record_from_json(text, state), h.call_id)
            for text, state, h in held
            if h is not None and not h.ended and not self.locks.alive(h.process)
        ]

    def end_orphan(self, pending_id: str) -> bool:
        with self._lock:
            row = self._db.execute(
                "SELECT holder FROM confirmations WHERE pending_id = ?", (pending_id,)
            ).fetchone()
            held = parse_held(row[0]) if row else None
            if held is None or self.locks.alive(held.process):
                return False
            ended = Held(held.process, held.call_id, ended=True).to_json()
            # Only if still open and still so marked: whichever process finds it declines it once.
            declined = self._db.execute(
                "UPDATE confirmations SET state = 'denied', holder = ?"
                " WHERE pending_id = ? AND holder = ? AND state IN ('pending', 'approved') RETURNING 1",
                (ended, pending_id, row[0]),
            )
            return declined.fetchone() is not None

    def why_ended(self, pending_id: str) -> str | None:
        with self._lock:
            row = self._db.execute(
                "SELECT holder, state FROM confirmations WHERE pending_id = ?", (pending_id,)
            ).fetchone()
        return why_held_ended(parse_held(row[0]), row[1], self.locks.alive) if row else None

    def close(self) -> None:
        self.locks.close()
        self.locks.sweep(self._named())
        with self._lock:
            self._db.close()

    def _named(self) -> set[str]:
        """The processes that open (pending or approved) calls are marked with."""
        with self._lock:
            rows = self._db.execute(
                "SELECT holder FROM confirmations WHERE holder IS NOT NULL AND state IN ('pending', 'approved')"
            ).fetchall()
        return {held.process for (text,) in rows if (held := parse_held(text)) is not None}


# KEYS: record key, index key. ARGV: new state, pending id, then the states it may move from.
_TRANSITION = """
local state = redis.call('HGET', KEYS[1], 'state')
if not state then return false end
for i = 3, #ARGV do
  if ARGV[i] == state then
    redis.call('HSET', KEYS[1], 'state', ARGV[1])
    if ARGV[1] ~= 'pending' then redis.call('ZREM', KEYS[2], ARGV[2]) end
    return redis.call('HGET', KEYS[1], 'record')
  end
end
return false
"""

# KEYS: record key, index key. ARGV: the holder it was marked with, the holder marked ended, pending id.
_END_ORPHAN = """
local state = redis.call('HGET', KEYS[1], 'state')
if (state ~= 'pending' and state ~= 'approved') or redis.call('HGET', KEYS[1], 'holder') ~= ARGV[1] then
  return false
end
redis.call('HSET', KEYS[1], 'state', 'denied', 'holder', ARGV[2])
redis.call('ZREM', KEYS[2], ARGV[3])
return 1
"""


class RedisConfirmationStore:
    """Confirmations in Redis, for replicas on several machines.

    One hash per confirmation (`record`, `state`) that Redis expires on its own, plus a sorted
    set of the pending ones by expiry. Needs the `redis` extra.
    """

    unavailable: tuple[type[BaseException], ...] = (OSError,)
    """With the client's errors (set when it is made): a Redis that does not answer within the
    client's timeouts (`gateway.redis_client`) refuses the call that needed it."""

    def __init__(
        self,
        url: str,
        *,
        prefix: str = "gateway:confirmation",
        clock: Callable[[], float] = time.time,
        lease_seconds: float = LEASE_SECONDS,
    ) -> None:
        self._redis: Any = redis_client(url, setting="confirmation.store")
        self.unavailable = redis_failures()
        self._prefix = prefix
        self._index = f"{prefix}s:pending"
        self._held = f"{prefix}s:held"
        self._rules = f"{prefix}s:rules"
        self._rule_expiry = f"{prefix}s:rules-expiry"
        self._clock = clock
        self._transition: Any = self._redis.register_script(_TRANSITION)
        self._end_orphan: Any = self._redis.register_script(_END_ORPHAN)
        self.lease = Lease(self._redis, prefix, lease_seconds)

    def _key(self, pending_id: str) -> str:
        return f"{self._prefix}:{pending_id}"

    def put(self, record: Record) -> None:
        key = self._key(record.pending.pending_id)
        pipe = self._redis.pipeline(transaction=True)
        pipe.hset(key, mapping={"record": record_to_json(record), "state": record.state})
        pipe.expireat(key, int(record.pending.expires_at + KEEP_AFTER_EXPIRY_SECONDS))
        if record.state == "pending":
            pipe.zadd(self._index, {record.pending.pending_id: record.pending.expires_at})
        pipe.execute()

    def get(self, pending_id: str) -> Record | None:
        text, state = self._redis.hmget(self._key(pending_id), ["record", "state"])
        return record_from_json(text, state) if text and state else None

    def transition(self, pending_id: str, from_states: tuple[State, ...], to: State) -> Record | None:
        text = self._transition(
            keys=[self._key(pending_id), self._index], args=[to, pending_id, *from_states]
        )
        return record_from_json(text, to) if text else None

    def pending(self) -> list[Record]:
        """Every record still pending, those past their expiry included (as the other stores: the gate
        declines those, `ConfirmationGate.sweep`), until they are kept no longer; ids whose record is
        gone or decided leave the index."""
        self._redis.zremrangebyscore(self._index, "-inf", f"({self._clock() - KEEP_AFTER_EXPIRY_SECONDS}")
        ids: list[str] = self._redis.zrange(self._index, 0, -1)
        pipe = self._redis.pipeline(transaction=False)
        for pending_id in ids:
            pipe.hmget(self._key(pending_id), ["record", "state"])
        rows: list[list[str | None]] = pipe.execute() if ids else []
        gone = [
            pending_id
            for pending_id, (text, state) in zip(ids, rows, strict=True)
            if not text or state != "pending"
        ]
        if gone:
            self._redis.zrem(self._index, *gone)
        return [
            record_from_json(text, state) for text, state in rows if text and state and state == "pending"
        ]

    def hold(self, pending_id: str, call_id: str) -> None:
        holder = Held(self.lease.mine(), call_id).to_json()
        pipe = self._redis.pipeline(transaction=True)
        pipe.hset(self._key(pending_id), "holder", holder)
        pipe.sadd(self._held, pending_id)
        pipe.execute()

    def orphans(self) -> list[tuple[Record, str]]:
        found = []
        for pending_id in sorted(self._redis.smembers(self._held)):
            text, state, holder = self._redis.hmget(self._key(pending_id), ["record", "state", "holder"])
            held = parse_held(holder)
            if (
                not (text and state and held) or state not in _OPEN or held.ended
            ):  # gone, decided or malformed
                self._redis.srem(self._held, pending_id)
                continue
            if not self.lease.alive(held.process):
                found.append((record_from_json(text, state), held.call_id))
        return found

    def end_orphan(self, pending_id: str) -> bool:
        holder = self._redis.hget(self._key(pending_id), "holder")
        held = parse_held(holder)
        if held is None or self.lease.alive(held.process):
            return False
        ended = Held(held.process, held.call_id, ended=True).to_json()
        keys = [self._key(pending_id), self._index]
        return bool(self._end_orphan(keys=keys, args=[holder, ended, pending_id]))

    def why_ended(self, pending_id: str) -> str | None:
        state, holder = self._redis.hmget(self._key(pending_id), ["state", "holder"])
        return why_held_ended(parse_held(holder), state, self.lease.alive)

    # -- standing approvals (`rules.py`): one hash, rule id -> its JSON, and their expiries --

    def add_rule(self, rule_id: str, expires_at: float, text: str) -> None:
        pipe = self._redis.pipeline(transaction=True)
        pipe.hset(self._rules, rule_id, text)
        pipe.zadd(self._rule_expiry, {rule_id: expires_at})
        pipe.execute()
        self._drop_expired_rules()

    def rule_texts(self) -> list[str]:
        texts: list[str | None] = self._redis.hvals(self._rules)
        return [t for t in texts if t]

    def revoke_rule(self, rule_id: str) -> bool:
        pipe = self._redis.pipeline(transaction=True)
        pipe.hdel(self._rules, rule_id)
        pipe.zrem(self._rule_expiry, rule_id)
        removed, _ = pipe.execute()
        return bool(removed)

    def _drop_expired_rules(self) -> None:
        expired: list[str] = self._redis.zrangebyscore(self._rule_expiry, "-inf", f"({self._clock()}")
        if expired:
            pipe = self._redis.pipeline(transaction=True)
            pipe.hdel(self._rules, *expired)
            pipe.zrem(self._rule_expiry, *expired)
            pipe.execute()

    def close(self) -> None:
        self.lease.close()
        self._redis.close()


def open_store(settings: Settings) -> ConfirmationStore:
    """The confirmation store the settings name ("auto" not made concrete: memory); close it with `close_store`."""
    kind = settings.confirmation.store
    if kind == "sqlite":
        return SqliteConfirmationStore(settings.confirmation_path)
    if kind == "redis":
        confirmation = settings.confirmation
        return RedisConfirmationStore(confirmation.redis_url, lease_seconds=confirmation.lease_seconds)
    return MemoryConfirmationStore()


def resolve_auto_store(settings: Settings, *, shared: bool) -> Settings:
    """`confirmation.store = "auto"` made concrete for one command.

    Shared (a served gateway, and the commands that answer for one): a SQLite store in the data
    directory, with the configured secret or one generated there on first use, so a pending call
    can be approved from another terminal on the same machine with no configuration. Otherwise
    (one process that asks, or is asked, itself): in memory. An explicit store is left as it is.
    """
    confirmation = settings.confirmation
    if confirmation.store != "auto":
        return settings
    if not shared:
        return settings.model_copy(
            update={"confirmation": confirmation.model_copy(update={"store": "memory"})}
        )
    secret = confirmation.secret or SecretStr(local_secret(settings.data_dir))
    concrete = confirmation.model_copy(update={"store": "sqlite", "secret": secret})
    return settings.model_copy(update={"confirmation": concrete})


def local_secret(data_dir: Path) -> str:
    """The confirmation secret in `data_dir`, made (mode 0600) when there is none yet.

    Raises:
        UserError: the file is readable by others, too short, or cannot be read or made (then set
            [confirmation] secret or GATEWAY_CONFIRMATION_SECRET instead).
    """
    return private_secret(data_dir / SECRET_FILE, what="the confirmation secret")


def close_store(store: ConfirmationStore) -> None:
    close = getattr(store, "close", None)
    if callable(close):
        close()

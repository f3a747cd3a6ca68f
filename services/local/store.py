"""The SQLite file behind the local workspace: schema, connections and transactions.

One connection per call keeps handlers in worker threads (and other processes) independent; SQLite's own
locking and WAL mode do the rest. Every write runs in one `BEGIN IMMEDIATE` transaction, so a call that
fails part-way changes nothing.
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from gateway.errors import UserError
from gateway.files import create_private, use_wal
from gateway.settings.loading import path_problem

from ..backends import DEFAULT_TASKLIST, PRIMARY_CALENDAR, SYSTEM_LABELS

SCHEMA_VERSION = 1
FILE_NAME = "workspace.sqlite3"
DEFAULT_OWNER = "you@example.com"
_BUSY_TIMEOUT_SECONDS = 10.0

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)",
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    """CREATE TABLE IF NOT EXISTS calendars (
        id TEXT PRIMARY KEY, name TEXT NOT NULL, description TEXT, is_primary INTEGER NOT NULL DEFAULT 0)""",
    """CREATE TABLE IF NOT EXISTS events (
        id TEXT PRIMARY KEY,
        calendar_id TEXT NOT NULL REFERENCES calendars(id) ON DELETE CASCADE,
        title TEXT NOT NULL, start TEXT NOT NULL, end TEXT NOT NULL, all_day INTEGER NOT NULL,
        location TEXT, description TEXT, attendees TEXT NOT NULL, created TEXT NOT NULL, updated TEXT NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS events_by_time ON events (calendar_id, start)",
    """CREATE TABLE IF NOT EXISTS labels (
        id TEXT PRIMARY KEY, name TEXT NOT NULL, type TEXT NOT NULL CHECK (type IN ('system', 'user')))""",
    """CREATE TABLE IF NOT EXISTS messages (
        id TEXT PRIMARY KEY, thread_id TEXT NOT NULL, rfc822_id TEXT NOT NULL,
        sender TEXT NOT NULL, recipients_to TEXT NOT NULL, recipients_cc TEXT NOT NULL,
        recipients_bcc TEXT NOT NULL, subject TEXT NOT NULL, body TEXT NOT NULL, date TEXT NOT NULL,
        in_reply_to TEXT, refs TEXT NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS messages_by_date ON messages (date)",
    "CREATE INDEX IF NOT EXISTS messages_by_thread ON messages (thread_id)",
    """CREATE TABLE IF NOT EXISTS message_labels (
        message_id TEXT NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
        label_id TEXT NOT NULL REFERENCES labels(id) ON DELETE CASCADE,
        PRIMARY KEY (message_id, label_id))""",
    "CREATE INDEX IF NOT EXISTS message_labels_by_label ON message_labels (label_id)",
    """CREATE TABLE IF NOT EXISTS drafts (
        id TEXT PRIMARY KEY, message_id TEXT NOT NULL UNIQUE REFERENCES messages(id) ON DELETE CASCADE)""",
    """CREATE TABLE IF NOT EXISTS tasklists (
        id TEXT PRIMARY KEY, title TEXT NOT NULL, updated TEXT NOT NULL, is_default INTEGER NOT NULL DEFAULT 0)""",
    """CREATE TABLE IF NOT EXISTS tasks (
        id TEXT PRIMARY KEY,
        tasklist_id TEXT NOT NULL REFERENCES tasklists(id) ON DELETE CASCADE,
        parent TEXT REFERENCES tasks(id) ON DELETE CASCADE,
        title TEXT NOT NULL, notes TEXT, due TEXT,
        status TEXT NOT NULL CHECK (status IN ('needsAction', 'completed')),
        completed_at TEXT, updated TEXT NOT NULL, position INTEGER NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS tasks_by_list ON tasks (tasklist_id, status, due)",
)


_ELSEWHERE = "Choose another data directory (--data-dir or GATEWAY_DATA_DIR)"


def _unusable(path: Path, exc: sqlite3.DatabaseError) -> str:
    """Why SQLite refused the workspace file, and what to do; the file is left as it is."""
    reason = str(exc)
    if path.is_dir():
        return f"cannot open the local workspace {path}: it is a directory, not a file. {_ELSEWHERE}"
    if isinstance(exc, sqlite3.OperationalError) and "readonly" in reason.replace("-", "").replace(" ", ""):
        return (
            f"cannot write the local workspace {path}: the file or its directory is read-only. "
            f"Make both writable, or {_ELSEWHERE[0].lower()}{_ELSEWHERE[1:]}"
        )
    if isinstance(exc, sqlite3.OperationalError):
        return (
            f"cannot open the local workspace {path} ({reason}): check that you may read and write it "
            f"and its directory, or {_ELSEWHERE[0].lower()}{_ELSEWHERE[1:]}"
        )
    return (
        f"the local workspace {path} is not a workspace database ({reason}); it was left untouched. "
        f"Move it aside to start a fresh workspace, or {_ELSEWHERE[0].lower()}{_ELSEWHERE[1:]}"
    )


def _refuse_another_database(conn: sqlite3.Connection, path: Path) -> None:
    """Refuse a SQLite file that holds tables but not a workspace's (another program's database).

    An empty file is a new workspace; one with `schema_version` is a workspace (of any version).
    """
    tables = [row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    if tables and "schema_version" not in tables:
        listed = ", ".join(sorted(tables)[:5]) + (", ..." if len(tables) > 5 else "")
        raise UserError(
            f"the local workspace {path} is not a workspace database (it holds other tables: {listed}); "
            f"it was left untouched. Move it aside to start a fresh workspace, or "
            f"{_ELSEWHERE[0].lower()}{_ELSEWHERE[1:]}"
        )


def new_id() -> str:
    """A fresh opaque id, like the ones Google hands out."""
    return uuid.uuid4().hex[:16]


def to_db(moment: datetime) -> str:
    """A fixed-width UTC text form, so SQL compares moments as strings."""
    if moment.tzinfo is None:
        raise ValueError("naive datetimes cannot be stored")
    return moment.astimezone(UTC).isoformat(timespec="microseconds")


def from_db(text: str) -> datetime:
    """The aware UTC datetime `to_db` stored."""
    return datetime.fromisoformat(text)


def dump_list(items: Sequence[str]) -> str:
    """A list of strings as stored text (JSON keeps every character exactly)."""
    return json.dumps(list(items), ensure_ascii=False)


def load_list(text: str) -> list[str]:
    """The list `dump_list` stored."""
    loaded: list[str] = json.loads(text)
    return loaded


def _contains_text(haystack: str | None, needle: str | None) -> bool:
    # A Python function instead of LIKE: no wildcards to escape, Unicode-aware case folding.
    if haystack is None or needle is None:
        return False
    return needle.casefold() in haystack.casefold()


def _list_contains(stored: str | None, needle: str | None) -> bool:
    if stored is None or needle is None:
        return False
    folded = needle.casefold()
    return any(folded in item.casefold() for item in load_list(stored))


def _same_label(name: str | None, label_id: str | None, wanted: str | None) -> bool:
    # Gmail lets "label:my-receipts" name the label "My Receipts".
    if name is None or wanted is None:
        return False
    folded = wanted.casefold()
    return folded in (name.casefold(), name.casefold().replace(" ", "-")) or wanted == label_id


class LocalStore:
    """The workspace file: opens (creating and migrating it when needed) and hands out transactions.

    Args:
        path: the SQLite file; its directory is created when missing.
        clock: the current moment, for timestamps the store sets itself.
        owner: the mailbox address of the workspace user, fixed when the file is created.
    """

    def __init__(self, path: Path, *, clock: Callable[[], datetime], owner: str = DEFAULT_OWNER) -> None:
        self.path = path
        self._clock = clock
        self._closed = False
        try:
            # Mail, events and tasks: made readable by the owner only before SQLite opens it (its
            # journals then take the same mode).
            create_private(path)
            conn = self._connect()
            try:
                _refuse_another_database(conn, path)  # before anything is written to it
                # WAL lets readers in other threads and processes proceed while one call writes.
                use_wal(conn)
            finally:
                conn.close()
            with self.write() as conn:
                self._migrate(conn, owner)
                row = conn.execute("SELECT value FROM meta WHERE key = 'owner'").fetchone()
                self.owner: str = row[0]
        except OSError as exc:
            raise UserError(
                f"cannot open the local workspace {path}: {path_problem(path, exc)}. {_ELSEWHERE}"
            ) from None
        except sqlite3.DatabaseError as exc:
            raise UserError(_unusable(path, exc)) from None

    def now(self) -> datetime:
        """The clock's reading as an aware datetime (a naive reading is taken as UTC)."""
        moment = self._clock()
        return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)

    def _connect(self) -> sqlite3.Connection:
        if self._closed:
            raise UserError("the local workspace store has been closed")
        # isolation_level=None: transactions are opened explicitly below, never implicitly.
        conn = sqlite3.connect(self.path, timeout=_BUSY_TIMEOUT_SECONDS, isolation_level=None)
        conn.row_factory = sqlite3.Row
        conn.execute("PRAGMA foreign_keys = ON")
        conn.create_function("contains_text", 2, _contains_text, deterministic=True)
        conn.create_function("list_contains", 2, _list_contains, deterministic=True)
        conn.create_function("same_label", 3, _same_label, deterministic=True)
        return conn

    @contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        """A connection inside a read transaction: every query sees the same snapshot."""
        conn = self._connect()
        try:
            conn.execute("BEGIN")
            yield conn
        finally:
            conn.rollback()
            conn.close()

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """A connection inside a write transaction, committed only when the block ends without error."""
        conn = self._connect()
        try:
            # IMMEDIATE takes the write lock up front, so two writers queue instead of deadlocking.
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.rollback()
                raise
            conn.commit()
        finally:
            conn.close()

    def is_empty(self) -> bool:
        """True when no event, message or task was ever added and no demo was seeded."""
        with self.read() as conn:
            return is_empty_in(conn)

    def close(self) -> None:
        """Refuse further calls. Connections are per call, so there is nothing left open."""
        self._closed = True

    def _migrate(self, conn: sqlite3.Connection, owner: str) -> None:
        for statement in _SCHEMA:
            conn.execute(statement)
        row = conn.execute("SELECT version FROM schema_version").fetchone()
        if row is None:
            conn.execute("INSERT INTO schema_version (version) VALUES (?)", (SCHEMA_VERSION,))
            self._create_defaults(conn, owner)
        elif row[0] > SCHEMA_VERSION:
            raise UserError(
                f"{self.path} was written by a newer version (schema {row[0]}, this one reads "
                f"{SCHEMA_VERSION}); upgrade metatool-gateway or choose another data directory"
            )

    def _create_defaults(self, conn: sqlite3.Connection, owner: str) -> None:
        now = to_db(self.now())
        conn.execute("INSERT INTO meta (key, value) VALUES ('owner', ?)", (owner,))
        conn.execute(
            "INSERT INTO calendars (id, name, is_primary) VALUES (?, ?, 1)", (PRIMARY_CALENDAR, owner)
        )
        conn.execute(
            "INSERT INTO tasklists (id, title, updated, is_default) VALUES (?, 'My Tasks', ?, 1)",
            (new_id(), now),
        )
        conn.executemany(
            "INSERT INTO labels (id, name, type) VALUES (?, ?, 'system')",
            [(label, label) for label in SYSTEM_LABELS],
        )


def is_empty_in(conn: sqlite3.Connection) -> bool:
    """`LocalStore.is_empty` inside a transaction the caller already holds."""
    for table in ("events", "messages", "tasks"):  # fixed names, never input
        if conn.execute(f"SELECT 1 FROM {table} LIMIT 1").fetchone() is not None:
            return False
    return conn.execute("SELECT 1 FROM meta WHERE key = 'demo_seeded'").fetchone() is None


def resolve_tasklist(conn: sqlite3.Connection, tasklist_id: str) -> str | None:
    """The real id for a task list id or "@default"; None when there is no such list."""
    if tasklist_id == DEFAULT_TASKLIST:
        row = conn.execute("SELECT id FROM tasklists WHERE is_default = 1").fetchone()
    else:
        row = conn.execute("SELECT id FROM tasklists WHERE id = ?", (tasklist_id,)).fetchone()
    return None if row is None else str(row[0])

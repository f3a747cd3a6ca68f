"""The mailbox of the local workspace (implements `MailBackend`). Nothing leaves the machine."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from datetime import datetime

from gateway.errors import Conflict, NotFound, ToolInputError

from ..backends import SYSTEM_LABELS, Draft, Label, Message, MessageSummary, OutgoingMessage, Profile
from ..dates import zone_of
from .mail_query import compile_query, parse_query
from .store import LocalStore, dump_list, from_db, load_list, new_id, to_db

SNIPPET_LENGTH = 120
MAX_LABEL_NAME = 225  # Gmail's limit


class LocalMail:
    """`MailBackend` over a `LocalStore`. Sending files the message under SENT; nothing is delivered."""

    def __init__(self, store: LocalStore, *, timezone: str) -> None:
        self._store = store
        self._zone = zone_of(timezone)

    def get_profile(self) -> Profile:
        return Profile(email_address=self._store.owner)

    def search_messages(self, query: str, *, max_results: int) -> list[MessageSummary]:
        where, args = compile_query(parse_query(query), zone=self._zone)
        # `where` is built from fixed fragments in mail_query; every value is in `args`.
        sql = f"SELECT m.* FROM messages m WHERE {where} ORDER BY m.date DESC, m.id LIMIT ?"
        with self._store.read() as conn:
            rows = conn.execute(sql, [*args, max_results]).fetchall()
            labels = _labels_of(conn, [row["id"] for row in rows])
        return [_summary(row, labels.get(row["id"], [])) for row in rows]

    def get_message(self, message_id: str) -> Message:
        with self._store.read() as conn:
            return _message(conn, message_id)

    def send_message(self, message: OutgoingMessage) -> Message:
        _check_recipients(message)
        with self._store.write() as conn:
            message_id = insert_message(
                conn, message, sender=self._store.owner, date=self._store.now(), labels=["SENT"]
            )
            return _message(conn, message_id)

    def create_draft(self, message: OutgoingMessage) -> Draft:
        with self._store.write() as conn:
            message_id = insert_message(
                conn, message, sender=self._store.owner, date=self._store.now(), labels=["DRAFT"]
            )
            draft_id = new_id()
            conn.execute("INSERT INTO drafts (id, message_id) VALUES (?, ?)", (draft_id, message_id))
            return Draft(id=draft_id, message=_message(conn, message_id))

    def get_draft(self, draft_id: str) -> Draft:
        with self._store.read() as conn:
            return Draft(id=draft_id, message=_message(conn, _draft_message_id(conn, draft_id)))

    def send_draft(self, draft_id: str) -> Message:
        with self._store.write() as conn:
            message_id = _draft_message_id(conn, draft_id)
            draft = _message(conn, message_id)
            if not (draft.to or draft.cc or draft.bcc):
                raise Conflict(f"draft {draft_id!r} has no recipients, so it cannot be sent")
            conn.execute("DELETE FROM drafts WHERE id = ?", (draft_id,))
            conn.execute(
                "DELETE FROM message_labels WHERE message_id = ? AND label_id = 'DRAFT'", (message_id,)
            )
            conn.execute(
                "INSERT INTO message_labels (message_id, label_id) VALUES (?, 'SENT')", (message_id,)
            )
            conn.execute("UPDATE messages SET date = ? WHERE id = ?", (to_db(self._store.now()), message_id))
            return _message(conn, message_id)

    def modify_labels(
        self, message_ids: Sequence[str], *, add: Sequence[str], remove: Sequence[str]
    ) -> list[MessageSummary]:
        with self._store.write() as conn:
            for label_id in [*add, *remove]:
                if conn.execute("SELECT 1 FROM labels WHERE id = ?", (label_id,)).fetchone() is None:
                    raise NotFound(f"no label with id {label_id!r}")
            for message_id in message_ids:
                # Checked one by one on purpose: a bad id late in the list rolls back the earlier ones.
                _message_row(conn, message_id)
                conn.executemany(
                    "INSERT OR IGNORE INTO message_labels (message_id, label_id) VALUES (?, ?)",
                    [(message_id, label_id) for label_id in add],
                )
                conn.executemany(
                    "DELETE FROM message_labels WHERE message_id = ? AND label_id = ?",
                    [(message_id, label_id) for label_id in remove],
                )
            return [_summary_of(conn, message_id) for message_id in dict.fromkeys(message_ids)]

    def trash_message(self, message_id: str) -> MessageSummary:
        with self._store.write() as conn:
            _message_row(conn, message_id)
            conn.execute(
                "INSERT OR IGNORE INTO message_labels (message_id, label_id) VALUES (?, 'TRASH')",
                (message_id,),
            )
            return _summary_of(conn, message_id)

    def delete_message(self, message_id: str) -> None:
        with self._store.write() as conn:
            _message_row(conn, message_id)
            conn.execute("DELETE FROM messages WHERE id = ?", (message_id,))

    def list_labels(self, *, counts: bool = True) -> list[Label]:
        # Counting is one query here, so the counts are always filled in.
        with self._store.read() as conn:
            rows = conn.execute(
                "SELECT l.id, l.name, l.type,"
                " (SELECT COUNT(*) FROM message_labels ml WHERE ml.label_id = l.id) AS total,"
                " (SELECT COUNT(*) FROM message_labels ml JOIN message_labels u"
                "   ON u.message_id = ml.message_id AND u.label_id = 'UNREAD'"
                "   WHERE ml.label_id = l.id) AS unread"
                " FROM labels l"
            ).fetchall()
        labels = [
            Label(
                id=row["id"],
                name=row["name"],
                type=row["type"],
                messages_total=row["total"],
                messages_unread=row["unread"],
            )
            for row in rows
        ]
        system_order = {name: i for i, name in enumerate(SYSTEM_LABELS)}
        return sorted(
            labels, key=lambda lb: (lb.type == "user", system_order.get(lb.id, 0), lb.name.casefold())
        )

    def create_label(self, name: str) -> Label:
        with self._store.write() as conn:
            return Label(id=insert_label(conn, name), name=name.strip(), type="user")


def insert_label(conn: sqlite3.Connection, name: str) -> str:
    """Create a user label inside the caller's transaction; returns its id."""
    name = name.strip()
    if not name or len(name) > MAX_LABEL_NAME:
        raise ToolInputError(f"a label name needs 1 to {MAX_LABEL_NAME} characters", field="name")
    for row in conn.execute("SELECT name FROM labels").fetchall():
        if row["name"].casefold() == name.casefold():
            raise Conflict(f"a label named {row['name']!r} already exists")
    label_id = f"Label_{new_id()}"
    conn.execute("INSERT INTO labels (id, name, type) VALUES (?, ?, 'user')", (label_id, name))
    return label_id


def insert_message(
    conn: sqlite3.Connection,
    message: OutgoingMessage,
    *,
    sender: str,
    date: datetime,
    labels: Sequence[str],
) -> str:
    """Store a message inside the caller's transaction; returns its id.

    A message without a thread starts its own, named after itself, as Gmail does.

    Raises:
        NotFound: the thread or one of the labels does not exist.
    """
    message_id = new_id()
    thread_id = message.thread_id or message_id
    if message.thread_id is not None:
        found = conn.execute("SELECT 1 FROM messages WHERE thread_id = ? LIMIT 1", (thread_id,)).fetchone()
        if found is None:
            raise NotFound(f"no thread with id {thread_id!r}")
    conn.execute(
        "INSERT INTO messages (id, thread_id, rfc822_id, sender, recipients_to, recipients_cc, recipients_bcc,"
        " subject, body, date, in_reply_to, refs) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            message_id,
            thread_id,
            f"<{message_id}@workspace.local>",
            sender,
            dump_list(message.to),
            dump_list(message.cc),
            dump_list(message.bcc),
            message.subject,
            message.body,
            to_db(date),
            message.in_reply_to,
            dump_list(message.references),
        ),
    )
    for label_id in dict.fromkeys(labels):
        if conn.execute("SELECT 1 FROM labels WHERE id = ?", (label_id,)).fetchone() is None:
            raise NotFound(f"no label with id {label_id!r}")
        conn.execute(
            "INSERT INTO message_labels (message_id, label_id) VALUES (?, ?)", (message_id, label_id)
        )
    return message_id


def _check_recipients(message: OutgoingMessage) -> None:
    if not (message.to or message.cc or message.bcc):
        raise ToolInputError("a message needs at least one recipient", field="to")


def _draft_message_id(conn: sqlite3.Connection, draft_id: str) -> str:
    row = conn.execute("SELECT message_id FROM drafts WHERE id = ?", (draft_id,)).fetchone()
    if row is None:
        raise NotFound(f"no draft with id {draft_id!r}")
    return str(row["message_id"])


def _message_row(conn: sqlite3.Connection, message_id: str) -> sqlite3.Row:
    row: sqlite3.Row | None = conn.execute("SELECT * FROM messages WHERE id = ?", (message_id,)).fetchone()
    if row is None:
        raise NotFound(f"no message with id {message_id!r}")
    return row


def _labels_of(conn: sqlite3.Connection, message_ids: Sequence[str]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    if not message_ids:
        return found
    marks = ", ".join("?" * len(message_ids))  # only placeholders go into the SQL text
    rows = conn.execute(
        f"SELECT message_id, label_id FROM message_labels WHERE message_id IN ({marks}) ORDER BY label_id",
        list(message_ids),
    ).fetchall()
    for row in rows:
        found.setdefault(row["message_id"], []).append(row["label_id"])
    return found


def _snippet(body: str) -> str:
    flat = " ".join(body.split())
    return flat if len(flat) <= SNIPPET_LENGTH else flat[: SNIPPET_LENGTH - 1] + "…"


def _summary(row: sqlite3.Row, labels: list[str]) -> MessageSummary:
    return MessageSummary(
        id=row["id"],
        thread_id=row["thread_id"],
        sender=row["sender"],
        to=load_list(row["recipients_to"]),
        subject=row["subject"],
        snippet=_snippet(row["body"]),
        date=from_db(row["date"]),
        labels=labels,
    )


def _summary_of(conn: sqlite3.Connection, message_id: str) -> MessageSummary:
    return _summary(_message_row(conn, message_id), _labels_of(conn, [message_id]).get(message_id, []))


def _message(conn: sqlite3.Connection, message_id: str) -> Message:
    row = _message_row(conn, message_id)
    summary = _summary(row, _labels_of(conn, [message_id]).get(message_id, []))
    return Message(
        **dict(summary),
        cc=load_list(row["recipients_cc"]),
        bcc=load_list(row["recipients_bcc"]),
        body=row["body"],
        rfc822_message_id=row["rfc822_id"],
        in_reply_to=row["in_reply_to"],
        references=load_list(row["refs"]),
    )

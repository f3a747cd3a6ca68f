"""services.local: the SQLite workspace file, its transactions, hostile input and the Gmail query parser."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

import services
from gateway.errors import NotFound, ToolInputError, UserError
from services.backends import NewEvent, NewTask, OutgoingMessage
from services.local.calendar import LocalCalendar, insert_event
from services.local.mail import LocalMail, insert_label, insert_message
from services.local.mail_query import Term, parse_query
from services.local.store import SCHEMA_VERSION, LocalStore
from services.local.tasks import LocalTasks

BERLIN = ZoneInfo("Europe/Berlin")
NOW = datetime(2025, 3, 5, 10, 0, tzinfo=BERLIN)
PROJECT_ROOT = Path(services.__file__).resolve().parents[1]
HOSTILE = [
    "'; DROP TABLE events; --",
    "Robert'); DROP TABLE messages;--",
    "100% off _everything_ \\ %_%",
    "quotes \" and ' and `backticks`",
    "nul\x00byte",
    "emoji 🎉 👩‍👩‍👧 and RTL \u202e text",
    "line\nbreak\r\nand\ttab",
    "x" * 100_000,
]


def _store(path: Path) -> LocalStore:
    return LocalStore(path, clock=lambda: NOW)


def _run(code: str) -> str:
    """Run Python in a fresh interpreter (another process on the same file) and return its stdout."""
    env = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=env, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_new_store_is_one_wal_mode_file_with_a_schema_version(tmp_path: Path) -> None:
    path = tmp_path / "nested" / "workspace.sqlite3"
    _store(path)
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("SELECT version FROM schema_version").fetchall() == [(SCHEMA_VERSION,)]


def test_reopening_a_store_keeps_one_default_calendar_list_and_label_set(tmp_path: Path) -> None:
    path = tmp_path / "ws.sqlite3"
    _store(path)
    store = _store(path)
    assert [c.id for c in LocalCalendar(store, timezone="UTC").list_calendars()] == ["primary"]
    assert len(LocalTasks(store).list_tasklists()) == 1
    assert len(LocalMail(store, timezone="UTC").list_labels()) == 8


def test_a_file_from_a_newer_schema_is_refused_with_a_user_error(tmp_path: Path) -> None:
    path = tmp_path / "ws.sqlite3"
    _store(path)
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE schema_version SET version = ?", (SCHEMA_VERSION + 1,))
    with pytest.raises(UserError, match="newer version"):
        _store(path)


def test_a_closed_store_refuses_further_calls(tmp_path: Path) -> None:
    store = _store(tmp_path / "ws.sqlite3")
    store.close()
    with pytest.raises(UserError, match="closed"):
        LocalTasks(store).list_tasklists()


def test_writes_persist_across_processes(tmp_path: Path) -> None:
    path = tmp_path / "ws.sqlite3"
    written = _run(
        f"""
        import json
        from datetime import datetime, timedelta, timezone
        from pathlib import Path
        from services.backends import NewEvent, NewTask, OutgoingMessage
        from services.local.calendar import LocalCalendar
        from services.local.mail import LocalMail
        from services.local.store import LocalStore
        from services.local.tasks import LocalTasks

        now = datetime(2025, 3, 5, 9, 0, tzinfo=timezone.utc)
        store = LocalStore(Path({str(path)!r}), clock=lambda: now)
        event = LocalCalendar(store, timezone="UTC").create_event(
            "primary", NewEvent(title="Written elsewhere", start=now, end=now + timedelta(hours=1)))
        sent = LocalMail(store, timezone="UTC").send_message(
            OutgoingMessage(to=["ana@example.com"], subject="From another process", body="hi"))
        task = LocalTasks(store).create_task("@default", NewTask(title="Cross-process task"))
        print(json.dumps({{"event": event.id, "message": sent.id, "task": task.id}}))
        """
    )
    ids = json.loads(written)
    read_back = _run(
        f"""
        from datetime import datetime, timezone
        from pathlib import Path
        from services.local.calendar import LocalCalendar
        from services.local.mail import LocalMail
        from services.local.store import LocalStore
        from services.local.tasks import LocalTasks

        store = LocalStore(Path({str(path)!r}), clock=lambda: datetime.now(timezone.utc))
        print(LocalCalendar(store, timezone="UTC").get_event("primary", {ids["event"]!r}).title)
        print(LocalMail(store, timezone="UTC").get_message({ids["message"]!r}).subject)
        print(LocalTasks(store).get_task("@default", {ids["task"]!r}).title)
        """
    )
    assert read_back.splitlines() == ["Written elsewhere", "From another process", "Cross-process task"]
    store = _store(path)
    assert (
        LocalCalendar(store, timezone="UTC").get_event("primary", ids["event"]).title == "Written elsewhere"
    )
    assert LocalMail(store, timezone="UTC").get_message(ids["message"]).labels == ["SENT"]


def test_a_failed_label_change_leaves_every_message_unchanged(tmp_path: Path) -> None:
    store = _store(tmp_path / "ws.sqlite3")
    mail = LocalMail(store, timezone="Europe/Berlin")
    first = mail.send_message(OutgoingMessage(to=["a@example.com"], subject="one"))
    with pytest.raises(NotFound, match="missing"):
        mail.modify_labels([first.id, "missing"], add=["STARRED"], remove=["SENT"])
    assert mail.get_message(first.id).labels == ["SENT"]


def test_an_error_inside_a_write_rolls_back_everything_written_before_it(tmp_path: Path) -> None:
    store = _store(tmp_path / "ws.sqlite3")
    calendar = LocalCalendar(store, timezone="Europe/Berlin")
    with pytest.raises(RuntimeError), store.write() as conn:
        insert_event(
            conn, "primary", NewEvent(title="half", start=NOW, end=NOW + timedelta(hours=1)), now=NOW
        )
        raise RuntimeError("the call failed after its first insert")
    assert (
        calendar.list_events("primary", time_min=NOW - timedelta(days=1), time_max=NOW + timedelta(days=1))
        == []
    )
    assert store.is_empty()


def test_an_event_that_ends_before_it_starts_is_refused_and_not_stored(tmp_path: Path) -> None:
    store = _store(tmp_path / "ws.sqlite3")
    calendar = LocalCalendar(store, timezone="Europe/Berlin")
    with pytest.raises(ToolInputError):
        calendar.create_event("primary", NewEvent(title="backwards", start=NOW, end=NOW - timedelta(hours=1)))
    assert store.is_empty()


@pytest.mark.parametrize("hostile", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_strings_are_stored_and_read_back_exactly(tmp_path: Path, hostile: str) -> None:
    store = _store(tmp_path / "ws.sqlite3")
    calendar = LocalCalendar(store, timezone="Europe/Berlin")
    mail = LocalMail(store, timezone="Europe/Berlin")
    tasks = LocalTasks(store)
    event = calendar.create_event(
        "primary",
        NewEvent(
            title=hostile, start=NOW, end=NOW + timedelta(hours=1), location=hostile, attendees=[hostile]
        ),
    )
    sent = mail.send_message(OutgoingMessage(to=[hostile], subject=hostile, body=hostile))
    task = tasks.create_task("@default", NewTask(title=hostile, notes=hostile))
    label = mail.create_label(hostile[:225])
    mail.modify_labels([sent.id], add=[label.id], remove=[])

    assert calendar.get_event("primary", event.id).model_dump() == event.model_dump()
    assert (event.title, event.location, event.attendees) == (hostile, hostile, [hostile])
    again = mail.get_message(sent.id)
    assert (again.subject, again.body, again.to) == (hostile, hostile, [hostile])
    assert tasks.get_task("@default", task.id).notes == hostile
    assert hostile[:225] in [lb.name for lb in mail.list_labels()]
    # The text is data for searches too: it finds its own rows and drops no table.
    window: dict[str, Any] = {"time_min": NOW - timedelta(days=1), "time_max": NOW + timedelta(days=1)}
    assert [e.id for e in calendar.list_events("primary", query=hostile, **window)] == [event.id]
    assert [m.id for m in mail.search_messages(f"label:{label.id}", max_results=5)] == [sent.id]
    with sqlite3.connect(store.path) as conn:
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"events", "messages", "tasks", "labels"} <= tables


def test_percent_and_underscore_in_a_search_are_literal_characters(tmp_path: Path) -> None:
    store = _store(tmp_path / "ws.sqlite3")
    mail = LocalMail(store, timezone="UTC")
    mail.send_message(OutgoingMessage(to=["a@example.com"], subject="save 100% now", body="a"))
    mail.send_message(OutgoingMessage(to=["a@example.com"], subject="save 1000 now", body="b"))
    mail.send_message(OutgoingMessage(to=["a@example.com"], subject="snake_case", body="c"))
    mail.send_message(OutgoingMessage(to=["a@example.com"], subject="snakeXcase", body="d"))
    assert [m.subject for m in mail.search_messages("100%", max_results=10)] == ["save 100% now"]
    assert [m.subject for m in mail.search_messages("snake_case", max_results=10)] == ["snake_case"]


def test_handlers_writing_from_worker_threads_all_land(tmp_path: Path) -> None:
    store = _store(tmp_path / "ws.sqlite3")
    tasks = LocalTasks(store)
    with ThreadPoolExecutor(max_workers=8) as pool:
        created = list(
            pool.map(lambda n: tasks.create_task("@default", NewTask(title=f"task {n}")), range(40))
        )
    listed = tasks.list_tasks("@default", max_results=100)
    assert sorted(t.id for t in listed) == sorted(t.id for t in created)


# Gmail search ---------------------------------------------------------------------------------------


def test_query_parser_splits_operators_phrases_negations_and_words() -> None:
    query = 'from:ana subject:"weekly report" is:unread -label:Receipts hello "exact phrase" foo:bar -spam'
    assert parse_query(query) == [
        Term("from", "ana"),
        Term("subject", "weekly report"),
        Term("is", "unread"),
        Term("label", "Receipts", negated=True),
        Term("text", "hello"),
        Term("text", "exact phrase"),
        Term("text", "foo:bar"),
        Term("text", "spam", negated=True),
    ]


def test_query_parser_tolerates_an_unclosed_quote_and_empty_input() -> None:
    assert parse_query('subject:"half open') == [Term("subject", "half open")]
    assert parse_query("   ") == []
    assert parse_query('""') == []


@pytest.fixture
def mailbox(tmp_path: Path) -> LocalMail:
    store = _store(tmp_path / "ws.sqlite3")
    me = store.owner

    def at(day: int) -> datetime:
        return datetime(2025, 3, day, 10, 0, tzinfo=BERLIN)

    with store.write() as conn:
        receipts = insert_label(conn, "My Receipts")
        rows = [
            ("Ana Ruiz <ana@example.com>", [me], [], "Weekly report", "Numbers are up this week", at(1),
             ["INBOX", "UNREAD"]),
            ("bob@example.com", ["carol@example.com"], ["ana@example.com"], "Lunch", "an exact phrase here",
             at(3), ["INBOX", "STARRED"]),
            (me, ["ana@example.com"], [], "Re: Weekly report", "thanks", at(2), ["SENT"]),
            ("prize@bad.example", [me], [], "You won", "claim the prize", at(4), ["TRASH"]),
            ("store@shop.example", [me], [], "Receipt 0042", "Total: 12.50", at(2) - timedelta(days=10),
             [receipts]),
        ]  # fmt: skip
        for sender, to, cc, subject, body, date, labels in rows:
            message = OutgoingMessage(to=to, cc=cc, subject=subject, body=body)
            insert_message(conn, message, sender=sender, date=date, labels=labels)
    return LocalMail(store, timezone="Europe/Berlin")


@pytest.mark.parametrize(
    ("query", "subjects"),
    [
        ("", ["Lunch", "Re: Weekly report", "Weekly report", "Receipt 0042"]),
        ("from:ana", ["Weekly report"]),
        ("from:ANA@EXAMPLE.COM", ["Weekly report"]),
        ("to:ana", ["Lunch", "Re: Weekly report"]),
        ("subject:weekly", ["Re: Weekly report", "Weekly report"]),
        ('subject:"weekly report"', ["Re: Weekly report", "Weekly report"]),
        ("is:unread", ["Weekly report"]),
        ("is:read in:inbox", ["Lunch"]),
        ("is:starred", ["Lunch"]),
        ("in:inbox", ["Lunch", "Weekly report"]),
        ("in:sent", ["Re: Weekly report"]),
        ("in:trash", ["You won"]),
        ("in:anywhere prize", ["You won"]),
        ("prize", []),
        ("label:my-receipts", ["Receipt 0042"]),
        ('label:"my receipts"', ["Receipt 0042"]),
        ("-label:my-receipts -in:sent", ["Lunch", "Weekly report"]),
        ("after:2025/03/02", ["Lunch", "Re: Weekly report"]),
        ("after:2025-03-02 before:2025-03-03", ["Re: Weekly report"]),
        ("before:2025/03/01", ["Receipt 0042"]),
        ('"exact phrase"', ["Lunch"]),
        ('"phrase exact"', []),
        ("numbers", ["Weekly report"]),
        ("bob", ["Lunch"]),
        ("weekly -thanks", ["Weekly report"]),
    ],
)
def test_gmail_queries_select_the_right_messages(mailbox: LocalMail, query: str, subjects: list[str]) -> None:
    assert [m.subject for m in mailbox.search_messages(query, max_results=20)] == subjects


def test_an_unsupported_is_value_asks_for_a_supported_one(mailbox: LocalMail) -> None:
    with pytest.raises(ToolInputError, match="is:unread") as caught:
        mailbox.search_messages("is:snoozed", max_results=5)
    assert caught.value.field == "query"


@pytest.mark.parametrize("query", ["after:yesterday", "before:2025/13/40", "after:03/05/2025"])
def test_a_bad_date_in_a_query_asks_for_yyyy_mm_dd(mailbox: LocalMail, query: str) -> None:
    with pytest.raises(ToolInputError, match="YYYY/MM/DD") as caught:
        mailbox.search_messages(query, max_results=5)
    assert caught.value.field == "query"


def test_search_results_stop_at_max_results_newest_first(mailbox: LocalMail) -> None:
    found = mailbox.search_messages("", max_results=2)
    assert [m.subject for m in found] == ["Lunch", "Re: Weekly report"]

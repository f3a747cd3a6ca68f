"""A small, realistic demo workspace, dated relative to the clock so it always looks current.

Six events over the coming days, eight emails (some unread, a three-message thread, a "Receipts" label)
and two task lists with seven tasks (some due, one completed). Seeding happens once, in one transaction,
and only into a workspace that has never held anything.
"""

from __future__ import annotations

import sqlite3
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from ..backends import NewEvent, NewTask, OutgoingMessage
from ..dates import localize, to_zone
from .calendar import insert_event
from .mail import insert_label, insert_message
from .store import LocalStore, is_empty_in, resolve_tasklist, to_db
from .tasks import insert_task, insert_tasklist


def seed_demo(store: LocalStore, *, zone: ZoneInfo) -> bool:
    """Fill an empty workspace with the demo set; returns False (and does nothing) when it is not empty."""
    now = to_zone(store.now(), zone)
    with store.write() as conn:
        # Checked inside the write transaction, so two processes starting together seed once.
        if not is_empty_in(conn):
            return False
        _events(conn, now, zone)
        _mail(conn, now, store.owner)
        _tasks(conn, now)
        conn.execute("INSERT INTO meta (key, value) VALUES ('demo_seeded', ?)", (to_db(now),))
    return True


def _at(day: date, hour: int, minute: int, zone: ZoneInfo) -> datetime:
    return localize(datetime.combine(day, time(hour, minute)), zone)


def _events(conn: sqlite3.Connection, now: datetime, zone: ZoneInfo) -> None:
    today = now.date()
    day = [today + timedelta(days=n) for n in range(5)]
    events = [
        NewEvent(title="Team standup", start=_at(day[0], 9, 30, zone), end=_at(day[0], 9, 45, zone),
                 location="Video call", attendees=["jordan@example.com", "priya@example.com"]),
        NewEvent(title="Lunch with Priya", start=_at(day[0], 12, 30, zone), end=_at(day[0], 13, 30, zone),
                 location="Café Lumen, 12 Harbor St"),
        NewEvent(title="Product review", start=_at(day[1], 10, 0, zone), end=_at(day[1], 11, 0, zone),
                 description="Walk through the Q3 roadmap and open design questions.",
                 attendees=["priya@example.com", "sam@example.com"]),
        NewEvent(title="1:1 with Jordan", start=_at(day[2], 15, 0, zone), end=_at(day[2], 15, 30, zone),
                 attendees=["jordan@example.com"]),
        NewEvent(title="Company offsite", start=_at(day[3], 0, 0, zone), end=_at(day[4], 0, 0, zone),
                 all_day=True, location="Lakeside Lodge"),
        NewEvent(title="Dentist appointment", start=_at(day[4], 16, 0, zone), end=_at(day[4], 17, 0, zone),
                 location="Smile Dental, 4 Elm Ave"),
    ]  # fmt: skip
    for event in events:
        insert_event(conn, "primary", event, now=now)


def _mail(conn: sqlite3.Connection, now: datetime, owner: str) -> None:
    receipts = insert_label(conn, "Receipts")
    me = [owner]

    def mail(
        sender: str, subject: str, body: str, hours_ago: float, labels: list[str], **extra: object
    ) -> str:
        message = OutgoingMessage.model_validate({"to": me, "subject": subject, "body": body, **extra})
        return insert_message(
            conn, message, sender=sender, date=now - timedelta(hours=hours_ago), labels=labels
        )

    priya = "Priya Shah <priya@example.com>"
    first = mail(
        priya,
        "Lunch this week?",
        "Hi! Are you free for lunch this week? Thursday works for me.",
        30,
        ["INBOX", "IMPORTANT"],
    )
    first_id = _rfc822_id(conn, first)
    reply = mail(
        owner,
        "Re: Lunch this week?",
        "Thursday is great. Café Lumen at 12:30?",
        28,
        ["SENT"],
        to=[priya],
        thread_id=first,
        in_reply_to=first_id,
        references=[first_id],
    )
    reply_id = _rfc822_id(conn, reply)
    mail(
        priya,
        "Re: Lunch this week?",
        "Perfect, see you there!",
        3,
        ["INBOX", "UNREAD"],
        thread_id=first,
        in_reply_to=reply_id,
        references=[first_id, reply_id],
    )
    mail(
        "Jordan Lee <jordan@example.com>",
        "Weekly project update",
        "Highlights: the beta shipped on Monday, two bugs are open, and the Q3 report is due Friday.",
        5,
        ["INBOX", "UNREAD"],
    )
    mail(
        "Northwind Coffee <receipts@northwind.example>",
        "Your receipt from Northwind Coffee",
        "Thanks for your order! 1 x Ethiopian Yirgacheffe, 250 g: $14.50. Order #NW-20931.",
        50,
        ["INBOX", receipts],
    )
    mail(
        "Acme Cloud Billing <billing@acme.example>",
        "Invoice #1042 from Acme Cloud",
        "Your invoice for last month is ready. Amount due: $42.00, charged to the card ending 4242.",
        74,
        [receipts, "STARRED"],
    )
    mail(
        "SkyWays <noreply@skyways.example>",
        "Flight confirmation: BOS → SFO",
        "Confirmation code QX7Z2P. Departs Boston 08:05, arrives San Francisco 11:40. Seat 14C.",
        96,
        ["INBOX", "STARRED"],
    )
    mail("Tech Weekly <newsletter@techweekly.example>", "This week in tech",
         "The five stories you missed this week, and one you should read twice.", 120, ["INBOX", "UNREAD"])  # fmt: skip


def _rfc822_id(conn: sqlite3.Connection, message_id: str) -> str:
    return str(conn.execute("SELECT rfc822_id FROM messages WHERE id = ?", (message_id,)).fetchone()[0])


def _tasks(conn: sqlite3.Connection, now: datetime) -> None:
    today = now.date()
    default = resolve_tasklist(conn, "@default")
    if default is None:  # the store creates the default list with the file; reaching here is a bug
        raise RuntimeError("the workspace has no default task list")
    errands = insert_tasklist(conn, "Errands", now=now)
    report = insert_task(conn, default, NewTask(title="Send Q3 report to Jordan", due=today), now=now)
    insert_task(conn, default, NewTask(title="Collect numbers from finance", parent=report), now=now)
    insert_task(
        conn,
        default,
        NewTask(
            title="Review Priya's design doc",
            notes="Focus on the sync API section.",
            due=today + timedelta(1),
        ),
        now=now,
    )
    insert_task(conn, default, NewTask(title="Renew passport"), now=now)
    insert_task(
        conn,
        default,
        NewTask(title="Submit expense report", due=today - timedelta(days=1)),
        now=now,
        status="completed",
        completed_at=now - timedelta(hours=20),
    )
    insert_task(conn, errands, NewTask(title="Pick up dry cleaning", due=today + timedelta(days=2)), now=now)
    insert_task(conn, errands, NewTask(title="Buy coffee beans"), now=now)

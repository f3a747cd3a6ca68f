"""Gmail tools, called through the catalog on a real workspace file (Europe/Berlin, Wed 2025-03-05 10:00)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from pydantic import ValidationError

from gateway.errors import NotFound, ToolInputError

if TYPE_CHECKING:
    from tests.services.conftest import MakeWorkspace, Workspace

ME = "you@example.com"
ANA = "Ana Ruiz <ana@example.com>"


def _subjects(workspace: Workspace, query: str) -> list[str]:
    found = workspace.call("gmail_search_messages", query=query, max_results=50)
    return [m["subject"] for m in found["messages"]]


def _labels(workspace: Workspace, message_id: str) -> list[str]:
    labels: list[str] = workspace.call("gmail_read_message", message_id=message_id)["labels"]
    return labels


def test_search_returns_compact_summaries_newest_first(workspace: Workspace) -> None:
    older = workspace.deliver(ANA, "Budget", "Draft numbers attached", hours_ago=5)
    newer = workspace.deliver("bob@example.com", "Lunch?", "Noon at the usual place?", hours_ago=1)
    found = workspace.call("gmail_search_messages")
    assert [m["id"] for m in found["messages"]] == [newer, older]
    assert found["messages"][1] == {
        "id": older,
        "thread_id": older,
        "from": ANA,
        "to": [ME],
        "subject": "Budget",
        "snippet": "Draft numbers attached",
        "date": "2025-03-05T05:00:00+01:00",
        "labels": ["INBOX", "UNREAD"],
        "unread": True,
    }
    assert found["more"] is False


def test_search_says_more_when_max_results_cuts_the_list(workspace: Workspace) -> None:
    for n in range(3):
        workspace.deliver(ANA, f"Note {n}", hours_ago=n + 1)
    found = workspace.call("gmail_search_messages", query="from:ana", max_results=2)
    assert [m["subject"] for m in found["messages"]] == ["Note 0", "Note 1"]
    assert found["more"] is True


def test_a_bad_query_operator_value_names_the_query_field(workspace: Workspace) -> None:
    with pytest.raises(ToolInputError) as caught:
        workspace.call("gmail_search_messages", query="is:snoozed")
    assert caught.value.field == "query"


def test_send_puts_a_message_in_sent_with_the_right_headers(workspace: Workspace) -> None:
    sent = workspace.call(
        "gmail_send_message",
        to=[ANA],
        cc=["bob@example.com"],
        bcc=["carol@example.com"],
        subject="Q3 report",
        body="Attached.\n\nBest",
    )
    assert sent["labels"] == ["SENT"]
    assert sent["unread"] is False
    full = workspace.call("gmail_read_message", message_id=sent["id"])
    assert {k: full[k] for k in ("from", "to", "cc", "bcc", "subject", "body", "date", "body_truncated")} == {
        "from": ME,
        "to": [ANA],
        "cc": ["bob@example.com"],
        "bcc": ["carol@example.com"],
        "subject": "Q3 report",
        "body": "Attached.\n\nBest",
        "date": "2025-03-05T10:00:00+01:00",
        "body_truncated": False,
    }
    assert _subjects(workspace, "in:sent") == ["Q3 report"]
    assert _subjects(workspace, "in:inbox") == []


def test_a_bad_recipient_is_refused_and_nothing_is_sent(workspace: Workspace) -> None:
    with pytest.raises(ToolInputError) as caught:
        workspace.call("gmail_send_message", to=["ana@example.com", "not an address"], subject="Hi", body="x")
    assert caught.value.field == "to"
    assert _subjects(workspace, "in:sent") == []


def test_a_message_needs_at_least_one_recipient(workspace: Workspace) -> None:
    with pytest.raises(ValidationError):
        workspace.call("gmail_send_message", to=[], subject="Hi", body="x")


def test_reading_caps_the_body_with_a_flag_and_does_not_mark_read(workspace: Workspace) -> None:
    message_id = workspace.deliver(ANA, "Long one", "word " * 100)
    full = workspace.call("gmail_read_message", message_id=message_id, max_body_chars=100)
    assert len(full["body"]) == 100
    assert full["body_truncated"] is True
    assert full["unread"] is True


def test_reading_an_unknown_message_is_not_found(workspace: Workspace) -> None:
    with pytest.raises(NotFound):
        workspace.call("gmail_read_message", message_id="nope")


def test_a_draft_is_kept_until_sent_and_then_filed_under_sent(workspace: Workspace) -> None:
    created = workspace.call("gmail_create_draft", to=[ANA], subject="Plan", body="Thoughts?")
    assert created["message"]["labels"] == ["DRAFT"]
    assert _subjects(workspace, "in:drafts") == ["Plan"]
    assert _subjects(workspace, "in:sent") == []
    workspace.clock.now = workspace.clock.now.replace(hour=11)
    sent = workspace.call("gmail_send_draft", draft_id=created["draft_id"])
    assert (sent["id"], sent["labels"], sent["date"]) == (
        created["message"]["id"],
        ["SENT"],
        "2025-03-05T11:00:00+01:00",
    )
    assert _subjects(workspace, "in:drafts") == []
    assert _subjects(workspace, "in:sent") == ["Plan"]
    with pytest.raises(NotFound):
        workspace.call("gmail_send_draft", draft_id=created["draft_id"])


def test_reply_stays_in_the_thread_with_re_subject_and_threading_headers(workspace: Workspace) -> None:
    original_id = workspace.deliver(ANA, "Offsite venue", "Lakeside or city?", cc=["bob@example.com"])
    original = workspace.mail.get_message(original_id)
    reply = workspace.call("gmail_reply", message_id=original_id, body="Lakeside!")
    assert (reply["thread_id"], reply["subject"], reply["to"]) == (original_id, "Re: Offsite venue", [ANA])
    stored = workspace.mail.get_message(reply["id"])
    assert stored.in_reply_to == original.rfc822_message_id
    assert stored.references == [original.rfc822_message_id]
    assert stored.cc == []
    again = workspace.call("gmail_reply", message_id=reply["id"], body="Or the city, fine too.")
    second = workspace.mail.get_message(again["id"])
    assert (again["subject"], again["to"], again["thread_id"]) == ("Re: Offsite venue", [ANA], original_id)
    assert second.references == [original.rfc822_message_id, stored.rfc822_message_id]


def test_reply_all_copies_everyone_but_me_once(workspace: Workspace) -> None:
    original_id = workspace.deliver(
        ANA,
        "Dinner",
        "Friday?",
        to=[ME, "bob@example.com", "ANA@example.com"],
        cc=["carol@example.com", "Bob <bob@example.com>"],
    )
    reply = workspace.call("gmail_reply", message_id=original_id, body="Yes", reply_all=True)
    stored = workspace.mail.get_message(reply["id"])
    assert stored.to == [ANA]
    assert stored.cc == ["bob@example.com", "carol@example.com"]


def test_mark_read_and_unread_round_trip(workspace: Workspace) -> None:
    first = workspace.deliver(ANA, "One")
    second = workspace.deliver(ANA, "Two")
    result = workspace.call("gmail_mark_read", message_ids=[first, second])
    assert [m["labels"] for m in result["messages"]] == [["INBOX"], ["INBOX"]]
    assert _subjects(workspace, "is:unread") == []
    workspace.call("gmail_mark_read", message_ids=[first], read=False)
    assert _subjects(workspace, "is:unread") == ["One"]


def test_modify_labels_creates_new_labels_and_removing_inbox_archives(workspace: Workspace) -> None:
    message_id = workspace.deliver(ANA, "Contract")
    result = workspace.call(
        "gmail_modify_labels", message_ids=[message_id], add=["Legal", "starred"], remove=["INBOX"]
    )
    assert sorted(result["messages"][0]["labels"]) == ["Legal", "STARRED", "UNREAD"]
    assert _subjects(workspace, "label:legal") == ["Contract"]
    assert _subjects(workspace, "in:inbox") == []
    labels = {lb["name"]: lb for lb in workspace.call("gmail_list_labels")["labels"]}
    assert labels["Legal"] == {"name": "Legal", "type": "user", "total": 1, "unread": 1}


def test_modify_labels_refuses_unknown_removals_protected_labels_and_empty_changes(
    workspace: Workspace,
) -> None:
    message_id = workspace.deliver(ANA, "Contract")
    with pytest.raises(ToolInputError, match="labels are") as caught:
        workspace.call("gmail_modify_labels", message_ids=[message_id], remove=["Nonexistent"])
    assert caught.value.field == "remove"
    with pytest.raises(ToolInputError) as caught:
        workspace.call("gmail_modify_labels", message_ids=[message_id], add=["SENT"])
    assert caught.value.field == "add"
    with pytest.raises(ToolInputError):
        workspace.call("gmail_modify_labels", message_ids=[message_id])
    assert _labels(workspace, message_id) == ["INBOX", "UNREAD"]


def test_a_label_change_with_one_unknown_message_changes_no_message(workspace: Workspace) -> None:
    message_id = workspace.deliver(ANA, "Contract")
    with pytest.raises(NotFound):
        workspace.call("gmail_archive", message_ids=[message_id, "missing"])
    assert _labels(workspace, message_id) == ["INBOX", "UNREAD"]


def test_archive_leaves_the_inbox_but_keeps_the_message_searchable(workspace: Workspace) -> None:
    message_id = workspace.deliver(ANA, "Old thread")
    workspace.call("gmail_archive", message_ids=[message_id])
    assert _subjects(workspace, "in:inbox") == []
    assert _subjects(workspace, "old thread") == ["Old thread"]


def test_trash_hides_a_message_from_searches_except_in_trash(workspace: Workspace) -> None:
    message_id = workspace.deliver(ANA, "Spammy")
    trashed = workspace.call("gmail_trash_message", message_id=message_id)
    assert "TRASH" in trashed["labels"]
    assert _subjects(workspace, "spammy") == []
    assert _subjects(workspace, "in:trash") == ["Spammy"]


def test_delete_removes_a_message_for_good(workspace: Workspace) -> None:
    message_id = workspace.deliver(ANA, "Secret")
    workspace.call("gmail_trash_message", message_id=message_id)
    assert workspace.call("gmail_delete_message", message_id=message_id) == {
        "deleted": True,
        "message_id": message_id,
    }
    with pytest.raises(NotFound):
        workspace.call("gmail_read_message", message_id=message_id)
    assert _subjects(workspace, "in:anywhere") == []


def test_list_labels_counts_the_demo_mailbox(make_workspace: MakeWorkspace) -> None:
    workspace = make_workspace(seed_demo=True)
    labels = {lb["name"]: lb for lb in workspace.call("gmail_list_labels")["labels"]}
    assert labels["INBOX"] == {"name": "INBOX", "type": "system", "total": 6, "unread": 3}
    assert labels["Receipts"] == {"name": "Receipts", "type": "user", "total": 2, "unread": 0}
    assert labels["SENT"]["total"] == 1


def test_the_demo_thread_has_three_messages_and_replying_joins_it(make_workspace: MakeWorkspace) -> None:
    workspace = make_workspace(seed_demo=True)
    latest = workspace.call("gmail_search_messages", query="from:priya is:unread")["messages"]
    assert [m["subject"] for m in latest] == ["Re: Lunch this week?"]
    thread_id = latest[0]["thread_id"]
    reply = workspace.call("gmail_reply", message_id=latest[0]["id"], body="See you!")
    assert (reply["thread_id"], reply["subject"]) == (thread_id, "Re: Lunch this week?")
    in_thread: list[dict[str, Any]] = [
        m for m in workspace.call("gmail_search_messages", query="lunch", max_results=50)["messages"]
    ]
    assert sum(m["thread_id"] == thread_id for m in in_thread) == 4

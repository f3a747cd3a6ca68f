"""The Gmail tools on Gmail v1: the exact requests and MIME sent, and what the model gets back."""

from __future__ import annotations

import base64
from datetime import datetime, timedelta
from typing import Any

import pytest

from gateway.errors import ToolFailed, ToolInputError

from ..conftest import WEDNESDAY_10AM
from .conftest import GoogleWorkspace, MakeGoogleWorkspace, rfc3339_ms

MESSAGES = "/gmail/v1/users/me/messages"
LABELS = {
    "labels": [
        {"id": "INBOX", "name": "INBOX", "type": "system"},
        {"id": "SENT", "name": "SENT", "type": "system"},
        {"id": "UNREAD", "name": "UNREAD", "type": "system"},
        {"id": "STARRED", "name": "STARRED", "type": "system"},
        {"id": "Label_7", "name": "Receipts", "type": "user"},
    ]
}


def b64(text: str, charset: str = "utf-8") -> str:
    return base64.urlsafe_b64encode(text.encode(charset)).decode().rstrip("=")


def message(
    message_id: str = "m1",
    *,
    shape: str = "full",
    thread_id: str | None = None,
    labels: tuple[str, ...] = ("INBOX", "UNREAD"),
    sender: str = "Priya Shah <priya@example.com>",
    to: str = "you@example.com",
    subject: str = "Q3 report",
    body: str = "Numbers attached.\r\nPriya",
    headers: tuple[tuple[str, str], ...] = (),
    when: datetime = WEDNESDAY_10AM - timedelta(hours=1),
) -> dict[str, Any]:
    """A users.messages resource, full or metadata, as Gmail returns it."""
    all_headers = [
        {"name": "Delivered-To", "value": "you@example.com"},
        {"name": "From", "value": sender},
        {"name": "To", "value": to},
        {"name": "Subject", "value": subject},
        {"name": "Date", "value": "Wed, 5 Mar 2025 09:00:00 +0100"},
        {"name": "Message-ID", "value": f"<{message_id}@mail.example.com>"},
        *({"name": n, "value": v} for n, v in headers),
    ]
    payload: dict[str, Any] = {"partId": "", "mimeType": "text/plain", "filename": "", "headers": all_headers}
    if shape == "metadata":
        payload = {
            "mimeType": "text/plain",
            "headers": [h for h in all_headers if h["name"] in ("From", "To", "Subject", "Date")],
        }
    else:
        payload["body"] = {"size": len(body), "data": b64(body)}
    return {
        "id": message_id,
        "threadId": thread_id or message_id,
        "labelIds": list(labels),
        "snippet": body.split("\r\n", maxsplit=1)[0].replace("&", "&amp;"),
        "sizeEstimate": 2048,
        "historyId": "9876",
        "internalDate": str(rfc3339_ms(when)),
        "payload": payload,
    }


SUMMARY = {
    "id": "m1",
    "thread_id": "m1",
    "from": "Priya Shah <priya@example.com>",
    "to": ["you@example.com"],
    "subject": "Q3 report",
    "snippet": "Numbers attached.",
    "date": "2025-03-05T09:00:00+01:00",
    "labels": ["INBOX", "UNREAD"],
    "unread": True,
}


def test_search_runs_gmails_query_then_reads_each_hits_headers(gws: GoogleWorkspace) -> None:
    gws.google.reply({"messages": [{"id": "m1", "threadId": "m1"}], "resultSizeEstimate": 1})
    gws.google.reply(message(shape="metadata")).reply(LABELS)
    result = gws.call("gmail_search_messages", query="from:priya is:unread", max_results=10)
    search, read, labels = gws.google.sent
    assert (search.method, search.path, search.query) == (
        "GET",
        MESSAGES,
        {"q": ["from:priya is:unread"], "maxResults": ["11"]},
    )
    assert (read.path, read.query) == (
        f"{MESSAGES}/m1",
        {"format": ["metadata"], "metadataHeaders": ["From", "To", "Subject", "Date"]},
    )
    assert labels.path == "/gmail/v1/users/me/labels"
    assert result == {"messages": [SUMMARY], "more": False}


def test_search_pages_through_results_and_reports_more(gws: GoogleWorkspace) -> None:
    gws.google.reply({"messages": [{"id": "a"}, {"id": "b"}], "nextPageToken": "n2"}).reply(
        {"messages": [{"id": "c"}]}
    )
    gws.google.batch({str(i): message(m, shape="metadata") for i, m in enumerate("abc")})
    gws.google.reply(LABELS)
    result = gws.call("gmail_search_messages", query="in:anywhere", max_results=2)
    assert [m["id"] for m in result["messages"]] == ["a", "b"] and result["more"] is True
    _first, second, batch, _labels = gws.google.sent
    assert second.query == {"q": ["in:anywhere"], "maxResults": ["1"], "pageToken": ["n2"]}
    assert (batch.method, batch.host, batch.path) == ("POST", "gmail.googleapis.com", "/batch")
    assert [(r.method, r.path, r.query["format"]) for r in batch.body] == [
        ("GET", f"{MESSAGES}/{m}", ["metadata"]) for m in "abc"
    ]  # every hit's headers in one request, not one request each


def test_a_rate_limited_part_of_a_batch_is_sent_again_alone(gws: GoogleWorkspace) -> None:
    gws.google.reply({"messages": [{"id": "a"}, {"id": "b"}, {"id": "c"}]})
    limited = (429, {"error": {"code": 429, "message": "Too many concurrent requests for user"}})
    gws.google.batch({"0": message("a", shape="metadata"), "1": limited, "2": message("c", shape="metadata")})
    gws.google.batch({"1": message("b", shape="metadata")}).reply(LABELS)
    result = gws.call("gmail_search_messages", query="in:inbox", max_results=10)
    assert [m["id"] for m in result["messages"]] == ["a", "b", "c"]
    _search, first, again, _labels = gws.google.sent
    assert [r.path for r in again.body] == [f"{MESSAGES}/b"] and len(first.body) == 3
    assert len(gws.google.sleeps) == 1


def test_a_part_that_fails_otherwise_fails_the_call_naming_the_messages(gws: GoogleWorkspace) -> None:
    gws.google.reply({"messages": [{"id": "a"}, {"id": "gone"}]})
    missing = (404, {"error": {"code": 404, "message": "Requested entity was not found."}})
    gws.google.batch({"0": message("a", shape="metadata"), "1": missing})
    with pytest.raises(ToolFailed) as failed:
        gws.call("gmail_search_messages", query="in:inbox", max_results=10)
    assert failed.value.code == "not_found" and gws.google.sleeps == []


def test_an_unusable_query_is_for_the_model_to_fix(gws: GoogleWorkspace) -> None:
    gws.google.fail(400, "invalidArgument", "Invalid search query")
    with pytest.raises(ToolInputError) as bad:
        gws.call("gmail_search_messages", query="after:yesterday-ish")
    assert bad.value.field == "query"


def test_read_message_returns_the_plain_text_body_and_threading(gws: GoogleWorkspace) -> None:
    gws.google.reply(
        message(
            headers=(("Cc", "Bo <bo@example.com>, cy@example.com"), ("In-Reply-To", "<m0@mail.example.com>"))
        )
    ).reply(LABELS)
    result = gws.call("gmail_read_message", message_id="m1")
    assert gws.google.sent[0].query == {"format": ["full"]}
    assert result == SUMMARY | {
        "cc": ["Bo <bo@example.com>", "cy@example.com"],
        "bcc": [],
        "body": "Numbers attached.\nPriya",
        "body_truncated": False,
        "in_reply_to": "<m0@mail.example.com>",
    }


def test_a_html_only_message_is_read_as_text_in_its_charset(gws: GoogleWorkspace) -> None:
    html = "<html><head><style>p{}</style></head><body><p>Caf\xe9 &amp; cr\xeape</p><p>Line two</p></body></html>"
    item = message()
    item["payload"] = {
        "mimeType": "multipart/alternative",
        "headers": item["payload"]["headers"],
        "parts": [
            {"mimeType": "image/png", "filename": "logo.png", "body": {"attachmentId": "x"}},
            {
                "mimeType": "text/html",
                "filename": "",
                "headers": [{"name": "Content-Type", "value": 'text/html; charset="iso-8859-1"'}],
                "body": {"data": b64(html, "iso-8859-1")},
            },
        ],
    }
    gws.google.reply(item).reply(LABELS)
    assert gws.call("gmail_read_message", message_id="m1")["body"] == "Caf\xe9 & cr\xeape\nLine two"


def test_send_posts_a_utf8_mime_message_with_cc_and_bcc(gws: GoogleWorkspace) -> None:
    gws.google.reply({"id": "s1", "threadId": "s1", "labelIds": ["SENT"]})
    gws.google.reply(
        message("s1", labels=("SENT",), sender="you@example.com", to="ana@example.com", subject="Grüße ✓")
    )
    gws.google.reply(LABELS)
    result = gws.call(
        "gmail_send_message",
        to=["Ana Núñez <ana@example.com>"],
        cc=["bo@example.com"],
        bcc=["boss@example.com"],
        subject="Grüße ✓",
        body="Bis später — Ü",
    )
    send = gws.google.sent[0]
    assert (send.method, send.path, send.query) == ("POST", f"{MESSAGES}/send", {})
    assert set(send.body) == {"raw"}
    mime = send.mime
    assert mime["To"] == "Ana Núñez <ana@example.com>" and mime["Cc"] == "bo@example.com"
    assert mime["Bcc"] == "boss@example.com" and mime["Subject"] == "Grüße ✓"
    assert mime.get_content_type() == "text/plain" and mime.get_content_charset() == "utf-8"
    assert mime.get_content() == "Bis später — Ü\r\n"  # CRLF, as RFC 5322 wants on the wire
    raw = base64.urlsafe_b64decode(send.body["raw"]).decode("ascii")
    assert "Subject: =?utf-8?" in raw and "In-Reply-To" not in raw
    assert gws.google.sent[1].path == f"{MESSAGES}/s1"
    assert result["labels"] == ["SENT"] and result["unread"] is False


def test_reply_goes_in_the_thread_with_reply_headers(gws: GoogleWorkspace) -> None:
    original = message(thread_id="t1", headers=(("References", "<m0@mail.example.com>"),))
    gws.google.reply(original).reply({"emailAddress": "you@example.com", "messagesTotal": 10})
    gws.google.reply({"id": "r1", "threadId": "t1", "labelIds": ["SENT"]})
    gws.google.reply(
        message("r1", thread_id="t1", labels=("SENT",), sender="you@example.com", subject="Re: Q3 report")
    )
    gws.google.reply(LABELS)
    result = gws.call("gmail_reply", message_id="m1", body="Thanks!")
    read, profile, send = gws.google.sent[:3]
    assert read.query == {"format": ["full"]} and profile.path == "/gmail/v1/users/me/profile"
    assert send.body["threadId"] == "t1"
    mime = send.mime
    assert mime["To"] == "Priya Shah <priya@example.com>" and mime["Subject"] == "Re: Q3 report"
    assert mime["In-Reply-To"] == "<m1@mail.example.com>"
    assert mime["References"] == "<m0@mail.example.com> <m1@mail.example.com>"
    assert result["thread_id"] == "t1"


def test_create_draft_then_send_it(gws: GoogleWorkspace) -> None:
    gws.google.reply({"id": "d1", "message": {"id": "m9", "threadId": "m9", "labelIds": ["DRAFT"]}})
    gws.google.reply(
        message("m9", labels=("DRAFT",), sender="you@example.com", to="ana@example.com", subject="Thursday")
    )
    gws.google.reply(LABELS)
    draft = gws.call(
        "gmail_create_draft", to=["ana@example.com"], subject="Thursday", body="See you at noon!"
    )
    create = gws.google.sent[0]
    assert (create.method, create.path) == ("POST", "/gmail/v1/users/me/drafts")
    assert set(create.body) == {"message"} and create.mime["Subject"] == "Thursday"
    assert draft["draft_id"] == "d1" and draft["message"]["id"] == "m9"

    gws.google.reply({"id": "m9", "threadId": "m9", "labelIds": ["SENT"]})
    gws.google.reply(message("m9", labels=("SENT",), sender="you@example.com")).reply(LABELS)
    sent = gws.call("gmail_send_draft", draft_id="d1")
    request = gws.google.sent[3]
    assert (request.method, request.path, request.body) == (
        "POST",
        "/gmail/v1/users/me/drafts/send",
        {"id": "d1"},
    )
    assert sent["labels"] == ["SENT"]


def test_mark_read_removes_unread_in_one_batch_and_reports_the_labels(gws: GoogleWorkspace) -> None:
    gws.google.empty().batch(
        {
            "0": message("a", shape="metadata", labels=("INBOX",)),
            "1": message("b", shape="metadata", labels=("INBOX",)),
        }
    )
    gws.google.reply(LABELS)
    result = gws.call("gmail_mark_read", message_ids=["a", "b", "a"])
    batch = gws.google.sent[0]
    assert (batch.method, batch.path) == ("POST", f"{MESSAGES}/batchModify")
    assert batch.body == {"ids": ["a", "b"], "addLabelIds": [], "removeLabelIds": ["UNREAD"]}
    assert result == {"messages": [{"id": "a", "labels": ["INBOX"]}, {"id": "b", "labels": ["INBOX"]}]}


def test_modify_labels_creates_an_unknown_label_first(gws: GoogleWorkspace) -> None:
    gws.google.reply(LABELS).reply({"id": "Label_9", "name": "Travel", "type": "user"}).reply(LABELS)
    gws.google.empty().reply(message(shape="metadata", labels=("Label_9",)))
    gws.google.reply({"labels": [*LABELS["labels"], {"id": "Label_9", "name": "Travel", "type": "user"}]})
    result = gws.call("gmail_modify_labels", message_ids=["m1"], add=["Travel"], remove=["inbox"])
    create, batch = gws.google.sent[1], gws.google.sent[3]
    assert (create.method, create.path) == ("POST", "/gmail/v1/users/me/labels")
    assert create.body == {
        "name": "Travel",
        "labelListVisibility": "labelShow",
        "messageListVisibility": "show",
    }
    assert batch.body == {"ids": ["m1"], "addLabelIds": ["Label_9"], "removeLabelIds": ["INBOX"]}
    assert result == {"messages": [{"id": "m1", "labels": ["Travel"]}]}


def test_archive_removes_inbox(gws: GoogleWorkspace) -> None:
    gws.google.empty().reply(message(shape="metadata", labels=())).reply(LABELS)
    gws.call("gmail_archive", message_ids=["m1"])
    assert gws.google.sent[0].body == {"ids": ["m1"], "addLabelIds": [], "removeLabelIds": ["INBOX"]}


def test_trash_moves_the_message_to_the_trash(gws: GoogleWorkspace) -> None:
    gws.google.reply({"id": "m1", "threadId": "m1", "labelIds": ["TRASH"]})
    gws.google.reply(message(shape="metadata", labels=("TRASH",))).reply(LABELS)
    result = gws.call("gmail_trash_message", message_id="m1")
    assert (gws.google.sent[0].method, gws.google.sent[0].path) == ("POST", f"{MESSAGES}/m1/trash")
    assert result["labels"] == ["TRASH"]


def test_permanent_delete_is_refused_without_full_gmail_access(gws: GoogleWorkspace) -> None:
    with pytest.raises(ToolFailed) as refused:
        gws.call("gmail_delete_message", message_id="m1")
    assert refused.value.code == "permission_denied" and "gmail_trash_message" in refused.value.message
    assert gws.google.sent == []


def test_permanent_delete_sends_a_delete_when_the_operator_allows_it(
    make_google_workspace: MakeGoogleWorkspace,
) -> None:
    gws = make_google_workspace(allow_permanent_delete=True)
    gws.google.empty()
    assert gws.call("gmail_delete_message", message_id="m1") == {"deleted": True, "message_id": "m1"}
    assert (gws.google.only().method, gws.google.only().path) == ("DELETE", f"{MESSAGES}/m1")


def test_list_labels_reads_each_labels_counts(gws: GoogleWorkspace) -> None:
    gws.google.reply(
        {
            "labels": [
                {"id": "Label_7", "name": "Receipts", "type": "user"},
                {"id": "INBOX", "name": "INBOX", "type": "system"},
            ]
        }
    )
    gws.google.reply(
        {"id": "Label_7", "name": "Receipts", "type": "user", "messagesTotal": 4, "messagesUnread": 1}
    )
    gws.google.reply(
        {
            "id": "INBOX",
            "name": "INBOX",
            "type": "system",
            "messagesTotal": 120,
            "messagesUnread": 3,
            "threadsTotal": 99,
        }
    )
    result = gws.call("gmail_list_labels")
    assert [r.path for r in gws.google.sent] == [
        "/gmail/v1/users/me/labels",
        "/gmail/v1/users/me/labels/Label_7",
        "/gmail/v1/users/me/labels/INBOX",
    ]
    assert result == {
        "labels": [
            {"name": "INBOX", "type": "system", "total": 120, "unread": 3},
            {"name": "Receipts", "type": "user", "total": 4, "unread": 1},
        ]
    }

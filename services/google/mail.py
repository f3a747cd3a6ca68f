"""Gmail v1 as a `MailBackend`: users.getProfile, users.messages, users.drafts and users.labels.

Searches run Gmail's own query language (so every operator Gmail knows works), then read each hit's
headers (`format=metadata`); a message is read whole with `format=full` and its body reduced to text.
Sent messages, drafts and replies are MIME built by `mime.py`; a reply goes in its thread (`threadId`)
with `In-Reply-To` and `References` set by the tool. Permanent deletion needs full Gmail access
(`https://mail.google.com/`), granted only when the operator allows it; without it the model is told to
trash instead.
"""

from __future__ import annotations

import html
import threading
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from gateway.errors import ToolFailed, ToolInputError

from ..backends import SYSTEM_LABELS, Draft, Label, Message, MessageSummary, OutgoingMessage, Profile
from .client import GoogleClient
from .errors import Call
from .mime import address_list, body_text, build_raw, headers_of, message_ids

SERVICE = "Gmail"
ME = "me"
PAGE_SIZE = 100
SUMMARY_HEADERS = ["From", "To", "Subject", "Date"]
_FIELDS = {"q": "query", "id": "message_id", "raw": "to", "name": "name"}


class GoogleMail:
    """`MailBackend` over Gmail v1, for the authorized user ("me").

    Args:
        allow_delete: the credentials carry full Gmail access, so permanent deletion may be tried.
    """

    def __init__(self, client: GoogleClient, *, allow_delete: bool = False) -> None:
        self._client = client
        self._allow_delete = allow_delete
        self._profile: Profile | None = None
        self._lock = threading.Lock()

    def get_profile(self) -> Profile:
        with self._lock:
            if self._profile is None:
                found = self._client.call(
                    "gmail", "users.getProfile", Call(SERVICE, "your profile"), userId=ME
                )
                self._profile = Profile(email_address=found["emailAddress"])
            return self._profile

    def search_messages(self, query: str, *, max_results: int) -> list[MessageSummary]:
        found = self._client.collect(
            "gmail",
            "users.messages.list",
            Call(SERVICE, "the search", _FIELDS, field="query"),
            items="messages",
            limit=max_results,
            page_size=PAGE_SIZE,
            userId=ME,
            q=query,
        )
        return self._summaries([ref["id"] for ref in found])

    def get_message(self, message_id: str) -> Message:
        return _message(self._get(message_id, "full"))

    def send_message(self, message: OutgoingMessage) -> Message:
        if not (message.to or message.cc or message.bcc):
            raise ToolInputError("a message needs at least one recipient", field="to")
        sent = self._client.call(
            "gmail",
            "users.messages.send",
            self._call("the message to send"),
            userId=ME,
            body=_wire(message),
        )
        return self.get_message(sent["id"])

    def create_draft(self, message: OutgoingMessage) -> Draft:
        draft = self._client.call(
            "gmail",
            "users.drafts.create",
            self._call("the draft"),
            userId=ME,
            body={"message": _wire(message)},
        )
        return Draft(id=draft["id"], message=self.get_message(draft["message"]["id"]))

    def get_draft(self, draft_id: str) -> Draft:
        draft = self._client.call(
            "gmail",
            "users.drafts.get",
            self._call(f"draft {draft_id!r}"),
            userId=ME,
            id=draft_id,
            format="full",
        )
        return Draft(id=draft["id"], message=_message(draft["message"]))

    def send_draft(self, draft_id: str) -> Message:
        sent = self._client.call(
            "gmail", "users.drafts.send", self._call(f"draft {draft_id!r}"), userId=ME, body={"id": draft_id}
        )
        return self.get_message(sent["id"])

    def modify_labels(
        self, message_ids: Sequence[str], *, add: Sequence[str], remove: Sequence[str]
    ) -> list[MessageSummary]:
        unique = list(dict.fromkeys(message_ids))
        self._client.call(
            "gmail",
            "users.messages.batchModify",
            self._call("the messages"),
            idempotent=True,  # setting the same labels twice changes nothing
            userId=ME,
            body={"ids": unique, "addLabelIds": list(add), "removeLabelIds": list(remove)},
        )
        return self._summaries(unique)

    def trash_message(self, message_id: str) -> MessageSummary:
        self._client.call(
            "gmail",
            "users.messages.trash",
            self._call(f"message {message_id!r}"),
            idempotent=True,
            userId=ME,
            id=message_id,
        )
        return self._summary_of(message_id)

    def delete_message(self, message_id: str) -> None:
        if not self._allow_delete:
            raise ToolFailed(
                "permission_denied",
                "permanent deletion is turned off for this Gmail account; move the message to the trash "
                "with gmail_trash_message instead",
            )
        self._client.call(
            "gmail", "users.messages.delete", self._call(f"message {message_id!r}"), userId=ME, id=message_id
        )

    def list_labels(self, *, counts: bool = True) -> list[Label]:
        call = Call(SERVICE, "the labels")
        listed = self._client.call("gmail", "users.labels.list", call, userId=ME).get("labels", [])
        if counts:
            listed = [
                self._client.call(
                    "gmail", "users.labels.get", self._call(f"label {lb['id']!r}"), userId=ME, id=lb["id"]
                )
                for lb in listed
            ]
        labels = [_label(item) for item in listed]
        order = {label_id: i for i, label_id in enumerate(SYSTEM_LABELS)}
        return sorted(labels, key=lambda lb: (lb.type == "user", order.get(lb.id, 0), lb.name.casefold()))

    def create_label(self, name: str) -> Label:
        created = self._client.call(
            "gmail",
            "users.labels.create",
            self._call(f"label {name.strip()!r}"),
            userId=ME,
            body={"name": name.strip(), "labelListVisibility": "labelShow", "messageListVisibility": "show"},
        )
        return _label(created)

    def _call(self, item: str) -> Call:
        return Call(SERVICE, item, _FIELDS)

    def _get(self, message_id: str, shape: str) -> dict[str, Any]:
        found: dict[str, Any] = self._client.call(
            "gmail",
            "users.messages.get",
            self._call(f"message {message_id!r}"),
            **_get_params(message_id, shape),
        )
        return found

    def _summary_of(self, message_id: str) -> MessageSummary:
        return _summary(self._get(message_id, "metadata"))

    def _summaries(self, message_ids: Sequence[str]) -> list[MessageSummary]:
        """The headers of several messages in one batch request, not a request each."""
        items = self._client.call_each(
            "gmail",
            "users.messages.get",
            self._call(f"message {message_ids[0]!r}" if len(message_ids) == 1 else "the messages"),
            [_get_params(message_id, "metadata") for message_id in message_ids],
        )
        return [_summary(item) for item in items]


def _get_params(message_id: str, shape: str) -> dict[str, Any]:
    params: dict[str, Any] = {"userId": ME, "id": message_id, "format": shape}
    if shape == "metadata":
        params["metadataHeaders"] = SUMMARY_HEADERS
    return params


def _wire(message: OutgoingMessage) -> dict[str, Any]:
    body: dict[str, Any] = {"raw": build_raw(message)}
    if message.thread_id:
        body["threadId"] = message.thread_id
    return body


def _summary(item: dict[str, Any]) -> MessageSummary:
    headers = headers_of(item.get("payload", {}))
    return MessageSummary(
        id=item["id"],
        thread_id=item.get("threadId", item["id"]),
        sender=headers.get("from", ""),
        to=address_list(headers.get("to", "")),
        subject=headers.get("subject", ""),
        snippet=html.unescape(item.get("snippet", "")),
        date=datetime.fromtimestamp(int(item.get("internalDate", "0")) / 1000, UTC),
        labels=list(item.get("labelIds", [])),
    )


def _message(item: dict[str, Any]) -> Message:
    payload = item.get("payload", {})
    headers = headers_of(payload)
    return Message(
        **dict(_summary(item)),
        cc=address_list(headers.get("cc", "")),
        bcc=address_list(headers.get("bcc", "")),
        body=body_text(payload),
        rfc822_message_id=headers.get("message-id", ""),
        in_reply_to=headers.get("in-reply-to") or None,
        references=message_ids(headers.get("references", "")),
    )


def _label(item: dict[str, Any]) -> Label:
    return Label(
        id=item["id"],
        name=item.get("name", item["id"]),
        type="system" if item.get("type") == "system" else "user",
        messages_total=int(item.get("messagesTotal", 0)),
        messages_unread=int(item.get("messagesUnread", 0)),
    )

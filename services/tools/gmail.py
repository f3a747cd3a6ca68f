"""Gmail tools: search, read, send, draft, reply, label, archive, trash and delete messages."""

from __future__ import annotations

from email.utils import parseaddr
from typing import Any
from zoneinfo import ZoneInfo

from pydantic import BaseModel, Field

from gateway.context import ToolContext
from gateway.definition import PARAMS_CONFIG, NoParams, tool
from gateway.errors import ToolInputError

from ..backends import MailBackend, MessageSummary, OutgoingMessage
from ._common import MAX_ID_LENGTH, Address, addresses, mail_of, out, settings_of
from ._describe import describe_draft, describe_message
from ._requests import REQUESTS

DEFAULT_BODY_CHARS = 20_000
MAX_BODY = 200_000
_PROTECTED_LABELS = frozenset(("SENT", "DRAFT", "TRASH"))
"""Set by sending, drafting and trashing; changing them by hand would misfile the message."""

_MESSAGE_ID = Field(
    min_length=1, max_length=MAX_ID_LENGTH, description="Message id, from gmail_search_messages."
)
_MESSAGE_IDS = Field(min_length=1, max_length=100, description="Message ids, from gmail_search_messages.")


class SearchParams(BaseModel):
    model_config = PARAMS_CONFIG
    query: str = Field(
        default="in:inbox",
        max_length=2000,
        description=(
            'Gmail search: words, "exact phrase", from:, to:, subject:, is:unread, is:read, is:starred, '
            "label:, in:inbox|sent|trash|drafts|anywhere, after:YYYY/MM/DD, before:YYYY/MM/DD, -term to "
            "exclude. Trash and spam are skipped unless asked for. Default: in:inbox."
        ),
    )
    max_results: int = Field(default=20, ge=1, le=100, description="Most messages to return, newest first.")


@tool(
    category="gmail",
    action="search",
    read_only=True,
    concurrency_safe=True,
    examples=[
        *REQUESTS["gmail_search_messages"],
        {"query": "from:priya is:unread after:2025/03/01", "max_results": 10},
    ],
)
def gmail_search_messages(params: SearchParams, ctx: ToolContext) -> dict[str, Any]:
    """Search email messages with Gmail query syntax (is:unread, from:...), newest first.

    Returns summaries; each has id, thread_id, from, to, subject, snippet, date, labels and unread. Read the full
    body with gmail_read_message.
    """
    mail = mail_of(ctx)
    found = mail.search_messages(params.query, max_results=params.max_results + 1)
    names = _label_names(mail)
    zone = settings_of(ctx).zone
    return {
        "messages": [_summary_out(m, names, zone) for m in found[: params.max_results]],
        "more": len(found) > params.max_results,
    }


class ReadParams(BaseModel):
    model_config = PARAMS_CONFIG
    message_id: str = _MESSAGE_ID
    max_body_chars: int = Field(
        default=DEFAULT_BODY_CHARS,
        ge=100,
        le=MAX_BODY,
        description="Longest body to return; a longer one is cut and body_truncated is true.",
    )


@tool(
    category="gmail",
    action="read",
    read_only=True,
    concurrency_safe=True,
    examples=[*REQUESTS["gmail_read_message"], {"message_id": "18c2f0a1"}],
)
def gmail_read_message(params: ReadParams, ctx: ToolContext) -> dict[str, Any]:
    """Read one email message: headers, labels and body. Does not mark it read."""
    mail = mail_of(ctx)
    message = mail.get_message(params.message_id)
    result = _summary_out(message, _label_names(mail), settings_of(ctx).zone)
    result.update(cc=message.cc, bcc=message.bcc, body=message.body[: params.max_body_chars])
    result["body_truncated"] = len(message.body) > params.max_body_chars
    if message.in_reply_to:
        result["in_reply_to"] = message.in_reply_to
    return result


class ComposeParams(BaseModel):
    model_config = PARAMS_CONFIG
    to: list[Address] = Field(
        min_length=1, max_length=100, description="Recipient addresses, e.g. ['ana@example.com']."
    )
    cc: list[Address] = Field(
        default_factory=list, max_length=100, description="Copy recipients. Default: none."
    )
    bcc: list[Address] = Field(
        default_factory=list, max_length=100, description="Hidden recipients. Default: none."
    )
    subject: str = Field(max_length=998, description="Subject line.")
    body: str = Field(max_length=MAX_BODY, description="Plain-text body.")


_COMPOSE_EXAMPLE = {"to": ["ana@example.com"], "subject": "Thursday", "body": "See you at noon!"}


@tool(category="gmail", action="send", examples=[*REQUESTS["gmail_send_message"], _COMPOSE_EXAMPLE])
def gmail_send_message(params: ComposeParams, ctx: ToolContext) -> dict[str, Any]:
    """Send a new email (a message, a note) now. It cannot be unsent."""
    mail = mail_of(ctx)
    sent = mail.send_message(_outgoing(params))
    return _summary_out(sent, _label_names(mail), settings_of(ctx).zone)


@tool(
    category="gmail",
    action="create",
    destructive=False,
    examples=[*REQUESTS["gmail_create_draft"], _COMPOSE_EXAMPLE],
)
def gmail_create_draft(params: ComposeParams, ctx: ToolContext) -> dict[str, Any]:
    """Save an email as a draft without sending it.

    Send it later with gmail_send_draft.
    """
    mail = mail_of(ctx)
    draft = mail.create_draft(_outgoing(params))
    return {
        "draft_id": draft.id,
        "message": _summary_out(draft.message, _label_names(mail), settings_of(ctx).zone),
    }


class SendDraftParams(BaseModel):
    model_config = PARAMS_CONFIG
    draft_id: str = Field(
        min_length=1, max_length=MAX_ID_LENGTH, description="Draft id, from gmail_create_draft."
    )


@tool(
    category="gmail",
    action="send",
    examples=[*REQUESTS["gmail_send_draft"], {"draft_id": "d1e2f3"}],
    describe=describe_draft,
)
def gmail_send_draft(params: SendDraftParams, ctx: ToolContext) -> dict[str, Any]:
    """Send a draft saved earlier now. It cannot be unsent."""
    mail = mail_of(ctx)
    sent = mail.send_draft(params.draft_id)
    return _summary_out(sent, _label_names(mail), settings_of(ctx).zone)


class ReplyParams(BaseModel):
    model_config = PARAMS_CONFIG
    message_id: str = _MESSAGE_ID
    body: str = Field(min_length=1, max_length=MAX_BODY, description="Plain-text reply.")
    reply_all: bool = Field(
        default=False,
        description="Also reply to everyone in To and Cc of the original. Default: sender only.",
    )


@tool(
    category="gmail",
    action="send",
    examples=[*REQUESTS["gmail_reply"], {"message_id": "18c2f0a1", "body": "Thanks, works for me."}],
    describe=describe_message,
)
def gmail_reply(params: ReplyParams, ctx: ToolContext) -> dict[str, Any]:
    """Reply to a message in its thread; sends now.

    The subject gets "Re:" and the threading headers are set.
    """
    mail = mail_of(ctx)
    original = mail.get_message(params.message_id)
    me = _address(mail.get_profile().email_address)
    # Replying to a message you sent goes to its recipients, as Gmail does.
    to = list(original.to) if _address(original.sender) == me else [original.sender]
    cc: list[str] = []
    if params.reply_all:
        cc = [a for a in [*original.to, *original.cc] if _address(a) != me]
    to, cc = _dedupe(to, exclude=set()), _dedupe(cc, exclude={_address(a) for a in to})
    subject = original.subject if original.subject.lower().startswith("re:") else f"Re: {original.subject}"
    references = [*original.references, original.rfc822_message_id] if original.rfc822_message_id else []
    reply = OutgoingMessage(
        to=to,
        cc=cc,
        subject=subject,
        body=params.body,
        thread_id=original.thread_id,
        in_reply_to=original.rfc822_message_id or None,
        references=references,
    )
    sent = mail.send_message(reply)
    return _summary_out(sent, _label_names(mail), settings_of(ctx).zone)


class MarkReadParams(BaseModel):
    model_config = PARAMS_CONFIG
    message_ids: list[str] = _MESSAGE_IDS
    read: bool = Field(default=True, description="true marks them read, false unread. Default: true.")


@tool(
    category="gmail",
    action="update",
    destructive=False,
    examples=[*REQUESTS["gmail_mark_read"], {"message_ids": ["18c2f0a1"], "read": True}],
)
def gmail_mark_read(params: MarkReadParams, ctx: ToolContext) -> dict[str, Any]:
    """Mark messages read (or unread with read=false)."""
    add, remove = ([], ["UNREAD"]) if params.read else (["UNREAD"], [])
    return _modify(ctx, params.message_ids, add=add, remove=remove)


class ModifyLabelsParams(BaseModel):
    model_config = PARAMS_CONFIG
    message_ids: list[str] = _MESSAGE_IDS
    add: list[str] = Field(
        default_factory=list,
        max_length=20,
        description="Label names to add, e.g. ['Receipts', 'STARRED']; a new name creates the label. Default: none.",
    )
    remove: list[str] = Field(
        default_factory=list,
        max_length=20,
        description="Label names to remove; removing INBOX archives. Default: none.",
    )


@tool(
    category="gmail",
    action="update",
    destructive=False,
    examples=[
        *REQUESTS["gmail_modify_labels"],
        {"message_ids": ["18c2f0a1"], "add": ["Receipts"], "remove": ["INBOX"]},
    ],
)
def gmail_modify_labels(params: ModifyLabelsParams, ctx: ToolContext) -> dict[str, Any]:
    """Add and remove labels on messages by name (STARRED, IMPORTANT or your own).

    System labels such as UNREAD and INBOX work too.
    """
    if not (params.add or params.remove):
        raise ToolInputError("give at least one label in add or remove", field="add")
    mail = mail_of(ctx)
    add = [_label_id(mail, name, field="add", create=True) for name in params.add]
    remove = [_label_id(mail, name, field="remove", create=False) for name in params.remove]
    return _modify(ctx, params.message_ids, add=add, remove=remove)


class ArchiveParams(BaseModel):
    model_config = PARAMS_CONFIG
    message_ids: list[str] = _MESSAGE_IDS


@tool(
    category="gmail",
    action="update",
    destructive=False,
    examples=[*REQUESTS["gmail_archive"], {"message_ids": ["18c2f0a1"]}],
)
def gmail_archive(params: ArchiveParams, ctx: ToolContext) -> dict[str, Any]:
    """Archive emails: take them out of the inbox, keeping them searchable."""
    return _modify(ctx, params.message_ids, add=[], remove=["INBOX"])


class MessageParams(BaseModel):
    model_config = PARAMS_CONFIG
    message_id: str = _MESSAGE_ID


# Trash is reversible (the message stays findable with in:trash), so it is not marked destructive even
# though its action is "delete"; gmail_delete_message is the irreversible one.
@tool(
    category="gmail",
    action="delete",
    destructive=False,
    examples=[*REQUESTS["gmail_trash_message"], {"message_id": "18c2f0a1"}],
)
def gmail_trash_message(params: MessageParams, ctx: ToolContext) -> dict[str, Any]:
    """Move a message to the trash; it can still be found with in:trash."""
    mail = mail_of(ctx)
    trashed = mail.trash_message(params.message_id)
    return _summary_out(trashed, _label_names(mail), settings_of(ctx).zone)


@tool(
    category="gmail",
    action="delete",
    examples=[*REQUESTS["gmail_delete_message"], {"message_id": "18c2f0a1"}],
    describe=describe_message,
)
def gmail_delete_message(params: MessageParams, ctx: ToolContext) -> dict[str, Any]:
    """Delete a message for good, skipping the trash. It cannot be recovered."""
    mail_of(ctx).delete_message(params.message_id)
    return {"deleted": True, "message_id": params.message_id}


@tool(
    category="gmail",
    action="list",
    read_only=True,
    concurrency_safe=True,
    examples=[*REQUESTS["gmail_list_labels"], {}],
)
def gmail_list_labels(params: NoParams, ctx: ToolContext) -> dict[str, Any]:
    """List mail labels, system and your own, with total and unread message counts."""
    labels = mail_of(ctx).list_labels()
    return {
        "labels": [
            {"name": lb.name, "type": lb.type, "total": lb.messages_total, "unread": lb.messages_unread}
            for lb in labels
        ]
    }


def _outgoing(params: ComposeParams) -> OutgoingMessage:
    return OutgoingMessage(
        to=addresses(params.to, field="to"),
        cc=addresses(params.cc, field="cc"),
        bcc=addresses(params.bcc, field="bcc"),
        subject=params.subject,
        body=params.body,
    )


def _modify(ctx: ToolContext, message_ids: list[str], *, add: list[str], remove: list[str]) -> dict[str, Any]:
    mail = mail_of(ctx)
    changed = mail.modify_labels(message_ids, add=add, remove=remove)
    names = _label_names(mail)
    return {"messages": [{"id": m.id, "labels": [names.get(i, i) for i in m.labels]} for m in changed]}


def _label_names(mail: MailBackend) -> dict[str, str]:
    return {label.id: label.name for label in mail.list_labels(counts=False)}


def _label_id(mail: MailBackend, name: str, *, field: str, create: bool) -> str:
    wanted = name.strip().casefold()
    labels = mail.list_labels(counts=False)
    for label in labels:
        if wanted in (label.name.casefold(), label.id.casefold()):
            if label.id in _PROTECTED_LABELS:
                raise ToolInputError(
                    f"{label.id} cannot be set by hand; use gmail_send_message, gmail_create_draft or "
                    "gmail_trash_message",
                    field=field,
                )
            return label.id
    if create:
        return mail.create_label(name).id
    known = ", ".join(label.name for label in labels)
    raise ToolInputError(f"no label named {name[:60]!r}; labels are: {known}", field=field)


def _summary_out(message: MessageSummary, names: dict[str, str], zone: ZoneInfo) -> dict[str, Any]:
    return {
        "id": message.id,
        "thread_id": message.thread_id,
        "from": message.sender,
        "to": message.to,
        "subject": message.subject,
        "snippet": message.snippet,
        "date": out(message.date, zone),
        "labels": [names.get(label_id, label_id) for label_id in message.labels],
        "unread": message.unread,
    }


def _address(value: str) -> str:
    return parseaddr(value)[1].casefold()


def _dedupe(values: list[str], *, exclude: set[str]) -> list[str]:
    seen = set(exclude)
    kept = []
    for value in values:
        key = _address(value)
        if key not in seen:
            seen.add(key)
            kept.append(value)
    return kept

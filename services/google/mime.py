"""Email on the wire: the MIME message Gmail sends, and the parts of a Gmail message a model reads.

Outgoing: one `text/plain; charset=utf-8` part; headers folded and RFC 2047-encoded where they are not
ASCII (subjects, display names); Bcc kept in the raw message, as Gmail's API wants, which strips it
before delivery; `In-Reply-To` and `References` for replies. Gmail takes it base64url-encoded.

Incoming: Gmail's `payload` tree (headers and base64url bodies); the body is the first `text/plain`
part, else the first `text/html` part turned into text.
"""

from __future__ import annotations

import base64
import html
import re
from collections.abc import Mapping, Sequence
from email.headerregistry import Address
from email.message import EmailMessage
from email.policy import SMTP
from email.utils import getaddresses, parseaddr
from typing import Any

from ..backends import OutgoingMessage

_TAG = re.compile(r"<[^>]+>")
_BLOCK_END = re.compile(r"</(p|div|tr|li|h\d)>|<br\s*/?>", re.I)
_HIDDEN = re.compile(r"<(script|style|head)\b.*?</\1>", re.I | re.S)
_BLANK_LINES = re.compile(r"\n\s*\n\s*\n+")
_CHARSET = re.compile(r'charset="?([\w.:-]+)"?', re.I)


def build_raw(message: OutgoingMessage) -> str:
    """The base64url `raw` field of a Gmail message or draft (Gmail fills in From and Message-ID)."""
    mime = EmailMessage(policy=SMTP)
    for header, values in (("To", message.to), ("Cc", message.cc), ("Bcc", message.bcc)):
        if values:
            mime[header] = [_address(value) for value in values]
    mime["Subject"] = message.subject
    if message.in_reply_to:
        mime["In-Reply-To"] = message.in_reply_to
    if message.references:
        mime["References"] = " ".join(message.references)
    # Quoted-printable keeps the message 7-bit clean for every relay, and readable where it is ASCII.
    mime.set_content(message.body, subtype="plain", charset="utf-8", cte="quoted-printable")
    return base64.urlsafe_b64encode(mime.as_bytes()).decode("ascii")


def headers_of(payload: Mapping[str, Any]) -> dict[str, str]:
    """The message headers by lower-case name (the first of a repeated header)."""
    found: dict[str, str] = {}
    for header in payload.get("headers", []):
        found.setdefault(str(header.get("name", "")).lower(), str(header.get("value", "")))
    return found


def address_list(value: str) -> list[str]:
    """A To/Cc header as a list of addresses, each "Name <a@b>" or "a@b" as written."""
    found = []
    for name, address in getaddresses([value]):
        if address:
            found.append(f"{name} <{address}>" if name else address)
    return found


def message_ids(value: str) -> list[str]:
    """The `<id@host>` tokens of a References or In-Reply-To header."""
    return re.findall(r"<[^<>\s]+>", value)


def body_text(payload: Mapping[str, Any]) -> str:
    """The readable body: the first text/plain part, else the first text/html part as text."""
    plain = _first_part(payload, "text/plain")
    if plain is not None:
        return plain
    rich = _first_part(payload, "text/html")
    return "" if rich is None else html_to_text(rich)


def html_to_text(markup: str) -> str:
    """Rough but safe: drop scripts and styles, break lines at blocks, strip tags, unescape."""
    text = _HIDDEN.sub("", markup)
    text = _BLOCK_END.sub("\n", text)
    text = html.unescape(_TAG.sub("", text))
    lines = [line.strip() for line in text.splitlines()]
    return _BLANK_LINES.sub("\n\n", "\n".join(lines)).strip()


def _first_part(payload: Mapping[str, Any], mime_type: str) -> str | None:
    if payload.get("mimeType") == mime_type and not payload.get("filename"):
        data = payload.get("body", {}).get("data")
        if data is not None:
            charset = _CHARSET.search(headers_of(payload).get("content-type", ""))
            return _decode(str(data), charset.group(1) if charset else "utf-8")
    parts: Sequence[Mapping[str, Any]] = payload.get("parts", [])
    for part in parts:
        found = _first_part(part, mime_type)
        if found is not None:
            return found
    return None


def _decode(data: str, charset: str) -> str:
    raw = base64.urlsafe_b64decode(data + "=" * (-len(data) % 4))
    try:
        text = raw.decode(charset, "replace")
    except LookupError:  # a charset Python does not know
        text = raw.decode("utf-8", "replace")
    return text.replace("\r\n", "\n")


def _address(value: str) -> Address:
    name, address = parseaddr(value)
    user, _, domain = address.rpartition("@")
    return Address(display_name=name, username=user, domain=domain)

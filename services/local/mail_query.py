"""Gmail search syntax for the local mailbox: parse a query into terms, compile the terms into SQL.

Supported: `from:`, `to:`, `cc:`, `bcc:`, `subject:`, `is:unread|read|starred|unstarred|important`,
`after:` and `before:` (YYYY/MM/DD or YYYY-MM-DD, in the workspace timezone; after is inclusive, before
exclusive), `label:`, `in:inbox|sent|trash|spam|drafts|starred|anywhere`, quoted phrases, free words
(matched in subject, body and sender) and `-` to negate any of them. Unknown `word:value` pairs are plain
text, as in Gmail. Like Gmail, trash and spam are left out unless the query asks for them.

Every value reaches SQLite as a bound parameter; the SQL text is assembled from fixed fragments only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from zoneinfo import ZoneInfo

from gateway.errors import ToolInputError

from ..dates import localize
from .store import to_db

OPERATORS = frozenset(("from", "to", "cc", "bcc", "subject", "is", "after", "before", "label", "in"))
_TOKEN = re.compile(r'(?P<neg>-)?(?:(?P<op>[A-Za-z_]+):)?(?:"(?P<quoted>[^"]*)"?|(?P<bare>\S+))')
_DATE = re.compile(r"(?P<y>\d{4})[/-](?P<m>\d{1,2})[/-](?P<d>\d{1,2})")
_HAS_LABEL = "EXISTS (SELECT 1 FROM message_labels ml WHERE ml.message_id = m.id AND ml.label_id = ?)"
_HAS_NAMED_LABEL = (
    "EXISTS (SELECT 1 FROM message_labels ml JOIN labels l ON l.id = ml.label_id"
    " WHERE ml.message_id = m.id AND same_label(l.name, l.id, ?))"
)
_NOT_TRASH_OR_SPAM = "NOT EXISTS (SELECT 1 FROM message_labels ml WHERE ml.message_id = m.id AND ml.label_id IN ('TRASH', 'SPAM'))"
_IS = {
    "unread": (_HAS_LABEL, "UNREAD", False),
    "read": (_HAS_LABEL, "UNREAD", True),
    "starred": (_HAS_LABEL, "STARRED", False),
    "unstarred": (_HAS_LABEL, "STARRED", True),
    "important": (_HAS_LABEL, "IMPORTANT", False),
}
_IN = {
    "inbox": "INBOX", "sent": "SENT", "trash": "TRASH", "spam": "SPAM", "draft": "DRAFT",
    "drafts": "DRAFT", "starred": "STARRED", "important": "IMPORTANT",
}  # fmt: skip
_FIELD_CLAUSES = {
    "from": ("contains_text(m.sender, ?)", 1),
    "to": ("(list_contains(m.recipients_to, ?) OR list_contains(m.recipients_cc, ?))", 2),
    "cc": ("list_contains(m.recipients_cc, ?)", 1),
    "bcc": ("list_contains(m.recipients_bcc, ?)", 1),
    "subject": ("contains_text(m.subject, ?)", 1),
    "text": ("(contains_text(m.subject, ?) OR contains_text(m.body, ?) OR contains_text(m.sender, ?))", 3),
}


@dataclass(frozen=True, slots=True)
class Term:
    """One piece of a query: an operator and its value, or `text` for a word or quoted phrase."""

    kind: str
    value: str
    negated: bool = False


def parse_query(query: str) -> list[Term]:
    """Split a Gmail search query into terms, left to right."""
    terms: list[Term] = []
    position = 0
    while True:
        while position < len(query) and query[position].isspace():
            position += 1
        if position >= len(query):
            return terms
        match = _TOKEN.match(query, position)
        if match is None:  # pragma: no cover - the bare alternative matches any non-space character
            return terms
        position = match.end()
        value = match["quoted"] if match["quoted"] is not None else match["bare"]
        op = (match["op"] or "").lower()
        negated = match["neg"] is not None
        if op and op not in OPERATORS:
            # Not an operator Gmail knows here ("http://x", "re:"): the whole token is text.
            op, value = "", match.group(0)[1:] if negated else match.group(0)
        if value:
            terms.append(Term(kind=op or "text", value=value, negated=negated))


def compile_query(terms: list[Term], *, zone: ZoneInfo) -> tuple[str, list[object]]:
    """A WHERE clause over `messages m` and its parameters.

    Raises:
        ToolInputError: an `is:` value or a date that cannot be used (field "query").
    """
    clauses: list[str] = []
    args: list[object] = []
    wants_trash = False
    for term in terms:
        clause, params = _clause(term, zone)
        clauses.append(f"NOT ({clause})" if term.negated else clause)
        args.extend(params)
        if not term.negated and term.kind in ("in", "label"):
            wants_trash = wants_trash or term.value.lower() in ("trash", "spam", "anywhere")
    if not wants_trash:
        clauses.append(_NOT_TRASH_OR_SPAM)
    return " AND ".join(clauses), args


def _clause(term: Term, zone: ZoneInfo) -> tuple[str, list[object]]:
    value = term.value
    if term.kind in _FIELD_CLAUSES:
        sql, count = _FIELD_CLAUSES[term.kind]
        return sql, [value] * count
    if term.kind == "is":
        if value.lower() not in _IS:
            raise ToolInputError(
                f"is:{value} is not supported; use is:unread, is:read, is:starred, is:unstarred or is:important",
                field="query",
            )
        sql, label, negate = _IS[value.lower()]
        return (f"NOT {sql}" if negate else sql), [label]
    if term.kind == "in":
        if value.lower() == "anywhere":
            return "1", []
        if value.lower() in _IN:
            return _HAS_LABEL, [_IN[value.lower()]]
        return _HAS_NAMED_LABEL, [value]
    if term.kind == "label":
        return _HAS_NAMED_LABEL, [value]
    # after: / before:
    moment = _day_start(value, zone)
    return ("m.date >= ?" if term.kind == "after" else "m.date < ?"), [to_db(moment)]


def _day_start(value: str, zone: ZoneInfo) -> datetime:
    match = _DATE.fullmatch(value)
    try:
        if match is None:
            raise ValueError(value)
        return localize(datetime(int(match["y"]), int(match["m"]), int(match["d"])), zone)
    except ValueError:
        raise ToolInputError(
            f"cannot read the date {value[:40]!r} in the query; write after: and before: dates as "
            "YYYY/MM/DD, e.g. after:2025/03/01 before:2025/04/01",
            field="query",
        ) from None

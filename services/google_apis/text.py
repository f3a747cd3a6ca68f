"""Discovery descriptions made fit for a model: plain text, no URL, a one-sentence summary.

Descriptions are written for Google's reference pages, in Markdown with some HTML; `markup` reads
them with real parsers. The model gets the words only (no URL is ever shown to it), one line per
paragraph or list item; the summary is the first sentence, and long texts are cut at a word boundary.

Some documents (compute's above all) were made from HTML by a tool that dropped the space before a
link or code element: "stopped using theinstances().stop method", "seeRestart an instance". `unglue`
puts the space back where a common word is fused with what can only be a link's or a code element's
text: a capitalised word, an acronym, an enum value, or an identifier of the document.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, NamedTuple

from gateway.rendering import cut

from . import markup

MAX_SUMMARY = 160
"""The gateway's limit for a summary line."""
MAX_DESCRIPTION = 1500
"""A tool's description is cut here: the rest of a very long reference text is detail for humans."""
MAX_FIELD_DESCRIPTION = 600
"""A parameter's or a body field's description is cut here."""

_URL = re.compile(r"\b(?:https?|ftp)://[^\s)\]>\"']+|\bwww\.[^\s)\]>\"']+")
# Brackets a removed URL left empty; not a call's "()" ("instances().stop").
_EMPTY_BRACKETS = re.compile(r"(?<![\w)\]])\(\s*(?:see|refer(?: to)?)?\s*[.,:;]?\s*\)|\[\s*\]", re.I)
_DANGLING = re.compile(r"\b(?:see|at|visit|in|refer to)\s*[:.]?\s*(?=[.;,)]|$)", re.I)
_BARE_MARKER = re.compile(r"-|\d+\.")
_SPACE_BEFORE_PUNCT = re.compile(r"\s+([.,;:)])")
# A sentence ends at '.', '!' or '?' followed by a space and a capital, a digit or a quote, unless the
# period closes a common abbreviation.
_SENTENCE_END = re.compile(r"(?<!\be\.g)(?<!\bi\.e)(?<!\betc)(?<!\bvs)(?<!\bcf)[.!?](?=\s+[A-Z0-9\"'`(])")

# Words that stood before a link or code element where the documents lost the space; longest first,
# so that "and" is tried before "an" and "a".
_GLUE_WORDS = sorted(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "by",
        "creating",
        "for",
        "from",
        "in",
        "into",
        "is",
        "of",
        "on",
        "or",
        "read",
        "see",
        "supports",
        "than",
        "the",
        "to",
        "use",
        "uses",
        "using",
        "via",
        "with",
    ],
    key=lambda w: (-len(w), w),
)
_GLUED = re.compile(rf"(?<![\w`'/.{{$*\[<\\@&=-])({'|'.join(_GLUE_WORDS)})([A-Za-z]\w*(?:\(\))?)(?![\w(])")
_CAPS = re.compile(r"[A-Z][A-Z0-9_]+")  # an acronym or an enum value: JSON, RFC3339, INTERNAL_MANAGED
_WORD = re.compile(r"[A-Z][a-z]+")
_NAME_PREFIXES = frozenset(("to", "from", "is", "in", "on", "as", "use"))  # toMap, isClosed, inProgress


class Text(NamedTuple):
    """A cleaned description."""

    text: str
    """Plain lines (one per paragraph or list item) without URLs."""
    spans: tuple[str, ...] = ()
    """Texts of links and code of more than one word: no summary is cut inside one."""


def identifiers(doc: dict[str, Any]) -> frozenset[str]:
    """The names a document defines: keys (schemas, fields, parameters, methods), enum values, id parts."""
    found: set[str] = set()
    for key, value in _items(doc):
        found.add(key)
        if key == "enum" and isinstance(value, list):
            found.update(str(v) for v in value)
        elif key == "id" and isinstance(value, str):
            found.update(value.split("."))
    return frozenset(found)


def _items(node: Any) -> Iterator[tuple[str, Any]]:
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key, value in item.items():
                if key != "description":
                    yield key, value
                    stack.append(value)
        elif isinstance(item, list):
            stack.extend(item)


def unglue(line: str, known: frozenset[str] = frozenset()) -> str:
    """`line` with a space put back between a common word and the link or code text fused to it."""

    def split(match: re.Match[str]) -> str:
        word, rest = match.groups()
        if match[0] in known:  # an identifier of the document: useAdminAccess, inProgress
            return match[0]
        bare = rest.removesuffix("()")
        if rest[0].isupper():  # a capitalised word after "to" or "in" may be a name: toString, inProgress
            glued = bool(_CAPS.fullmatch(rest) or (word not in _NAME_PREFIXES and _WORD.fullmatch(rest)))
            glued = glued or rest in known
        elif any(c.isupper() for c in bare) or rest.endswith("()"):
            glued = bare in known  # thanmaxResults, thesetLabels, theinstances().stop
        else:
            glued = word in ("the", "than") and len(rest) >= 4 and rest in known  # theregion
        return f"{word} {rest}" if glued else match[0]

    return _GLUED.sub(split, line)


def cleaned(raw: str | None, known: frozenset[str] = frozenset()) -> Text:
    """A description as plain lines: markup read, URLs removed, fused words split (`unglue`)."""
    if not raw:
        return Text("")
    plain = markup.from_markup(raw, lambda prose: unglue(prose, known))
    lines = (_tidy(line) for line in plain.lines)
    return Text("\n".join(line for line in lines if line), plain.spans)


def clean(raw: str | None, known: frozenset[str] = frozenset()) -> str:
    """A description as plain lines (see `cleaned`)."""
    return cleaned(raw, known).text


def _tidy(line: str) -> str:
    """A line without URLs, and without what they leave behind ("(see )", "see:", a bare bullet)."""
    out = _URL.sub("", line)
    if out == line:
        return line
    out = _EMPTY_BRACKETS.sub("", out)
    out = " ".join(out.split())
    out = _DANGLING.sub("", out)
    out = _SPACE_BEFORE_PUNCT.sub(r"\1", out)
    out = " ".join(out.split()).lstrip(",;: ").rstrip(",; ")
    return "" if _BARE_MARKER.fullmatch(out) else out


def first_sentence(text: str | Text) -> str:
    """The first sentence of its first line; a sentence never ends inside a link's or code's text."""
    line, _, _ = (text.text if isinstance(text, Text) else text).partition("\n")
    spans = text.spans if isinstance(text, Text) else ()
    inside = [(i, i + len(s)) for s in spans for i in _occurrences(line, s)]
    for match in _SENTENCE_END.finditer(line):
        if not any(start <= match.start() < end for start, end in inside):
            return line[: match.start() + 1]
    return line


def _occurrences(line: str, span: str) -> Iterator[int]:
    at = line.find(span)
    while at >= 0:
        yield at
        at = line.find(span, at + 1)


def summary(description: str | Text, fallback: str) -> str:
    """The first sentence, at most `MAX_SUMMARY` characters; `fallback` when there is no text."""
    sentence = first_sentence(description) or fallback
    return cut(sentence, MAX_SUMMARY)

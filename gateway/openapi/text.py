"""Text from a description is untrusted: it reaches the model, so it is cleaned and cut here.

A spec is written by whoever publishes the API, for human readers: Markdown, HTML, links, and at
worst text aimed at the model. What the model reads of it is plain words: control and invisible
characters dropped, links reduced to their words, URLs and tags removed, whitespace collapsed and
every text capped.
"""

from __future__ import annotations

import html
import re

from ..rendering import cut

MAX_SUMMARY = 160
"""The gateway's limit for a summary line."""
MAX_DESCRIPTION = 1500
"""An operation's description is cut here."""
MAX_FIELD_DESCRIPTION = 400
"""A parameter's or a schema's description is cut here."""
MAX_MESSAGE = 300
"""A server's error message is cut here."""

_ANSI = re.compile(r"\x1b(?:\[[0-9;?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-_])")
# C0/C1 controls (tab and newline become spaces later); zero-width, bidi-override and tag characters.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_INVISIBLE = re.compile(
    "[\u00ad\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\U000e0000-\U000e007f]"
)
_MD_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_HTML_LINK = re.compile(r"<a\s[^>]*>(.*?)</a>", re.I | re.S)
_TAG = re.compile(r"</?[a-zA-Z][^<>]*>")
_URL = re.compile(r"\b(?:https?|ftp)://[^\s)\]>\"']+|\bwww\.[^\s)\]>\"']+")
_EMPTY_BRACKETS = re.compile(r"\(\s*(?:see|refer(?: to)?)?\s*[.,:;]?\s*\)|\[\s*\]", re.I)
_DANGLING = re.compile(r"\b(?:see|at|visit|in|refer to)\s*[:.]?\s*(?=[.;,)]|$)", re.I)
# A space left before closing punctuation goes; not before a word that starts with it (".git", ".env").
_SPACE_BEFORE_PUNCT = re.compile(r"\s+([.,;:)])(?=\s|$|[.,;:)])")
_HEADING = re.compile(r"(^|\s)#{1,6}\s+")
_SENTENCE_END = re.compile(r"(?<!\be\.g)(?<!\bi\.e)(?<!\betc)(?<!\bvs)(?<!\bcf)[.!?](?=\s+[A-Z0-9\"'`(])")


def strip_unsafe(raw: object) -> str:
    """Terminal escape sequences, control and invisible characters removed; nothing else changed."""
    text = _ANSI.sub("", str(raw if raw is not None else ""))
    return _INVISIBLE.sub("", _CONTROL.sub(" ", text))


def clean(raw: object) -> str:
    """One line of plain words: no links, tags, entities, URLs, headings, backticks or repeated spaces."""
    if raw is None or raw == "":
        return ""
    out = strip_unsafe(raw)
    out = _HTML_LINK.sub(r"\1", out)
    out = _MD_LINK.sub(r"\1", out)
    out = _TAG.sub(" ", out)
    out = strip_unsafe(html.unescape(out))  # an entity may spell a control character
    out = _URL.sub("", out)
    out = _HEADING.sub(r"\1", out.replace("`", "").replace("**", ""))
    out = _EMPTY_BRACKETS.sub("", out)
    out = " ".join(out.split())
    out = _DANGLING.sub("", out)
    out = _SPACE_BEFORE_PUNCT.sub(r"\1", out)
    return " ".join(out.split()).strip(" ,;:")


def first_sentence(text: str) -> str:
    match = _SENTENCE_END.search(text)
    return text[: match.start() + 1] if match else text


def summary(raw: object, fallback: str) -> str:
    """The first sentence of cleaned text, at most `MAX_SUMMARY` characters; `fallback` when empty."""
    sentence = first_sentence(clean(raw)) or clean(fallback)
    return cut(sentence, MAX_SUMMARY)


def field_description(raw: object) -> str:
    """A parameter's or a schema's description, cleaned and cut."""
    return cut(clean(raw), MAX_FIELD_DESCRIPTION)

"""Discovery descriptions made fit for a model: links and markup cleaned, a one-sentence summary.

Descriptions are written for Google's reference pages: Markdown and HTML links, `code`, entities and
URLs. The model gets the words only (no URL is ever shown to it), the summary is the first sentence,
and long texts are cut at a word boundary.
"""

from __future__ import annotations

import html
import re

MAX_SUMMARY = 160
"""The gateway's limit for a summary line."""
MAX_DESCRIPTION = 1500
"""A tool's description is cut here: the rest of a very long reference text is detail for humans."""
MAX_FIELD_DESCRIPTION = 600
"""A parameter's or a body field's description is cut here."""

_MD_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_HTML_LINK = re.compile(r"<a\s[^>]*>(.*?)</a>", re.I | re.S)
_TAG = re.compile(r"</?[a-zA-Z][^<>]*>")
_URL = re.compile(r"\b(?:https?|ftp)://[^\s)\]>\"']+|\bwww\.[^\s)\]>\"']+")
_EMPTY_BRACKETS = re.compile(r"\(\s*(?:see|refer(?: to)?)?\s*[.,:;]?\s*\)|\[\s*\]", re.I)
_DANGLING = re.compile(r"\b(?:see|at|visit|in|refer to)\s*[:.]?\s*(?=[.;,)]|$)", re.I)
_SPACE_BEFORE_PUNCT = re.compile(r"\s+([.,;:)])")
# A sentence ends at '.', '!' or '?' followed by a space and a capital, a digit or a quote, unless the
# period closes a common abbreviation.
_SENTENCE_END = re.compile(r"(?<!\be\.g)(?<!\bi\.e)(?<!\betc)(?<!\bvs)(?<!\bcf)[.!?](?=\s+[A-Z0-9\"'`(])")


def clean(text: str | None) -> str:
    """One line of plain words: no links, tags, entities, URLs, backticks or repeated spaces."""
    if not text:
        return ""
    out = _HTML_LINK.sub(r"\1", text)
    out = _MD_LINK.sub(r"\1", out)
    out = _TAG.sub(" ", out)
    out = html.unescape(out)
    out = _URL.sub("", out)
    out = out.replace("`", "").replace("**", "")
    out = _EMPTY_BRACKETS.sub("", out)
    out = " ".join(out.split())
    out = _DANGLING.sub("", out)
    out = _SPACE_BEFORE_PUNCT.sub(r"\1", out)
    return " ".join(out.split()).strip(" ,;:")


def cut(text: str, limit: int) -> str:
    """`text` if it fits, else its head up to a word boundary and '...'."""
    if len(text) <= limit:
        return text
    head = text[: limit - 3]
    space = head.rfind(" ")
    if space > limit // 2:
        head = head[:space]
    return head.rstrip(" ,;:") + "..."


def first_sentence(text: str) -> str:
    """The first sentence of cleaned text (all of it when it has one sentence)."""
    match = _SENTENCE_END.search(text)
    return text[: match.start() + 1] if match else text


def summary(description: str, fallback: str) -> str:
    """The first sentence, at most `MAX_SUMMARY` characters; `fallback` when there is no text."""
    sentence = first_sentence(description) or fallback
    return cut(sentence, MAX_SUMMARY)

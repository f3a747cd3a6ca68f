"""Discovery descriptions as plain text: their Markdown and HTML read by real parsers.

Descriptions are written for Google's reference pages, in Markdown (links, `code`, emphasis, lists,
fenced examples) with some HTML (`<code>`, `<a href>`, `<b>`, `<br>`, `<p>`, lists) and entities.
markdown-it-py reads the Markdown (raw HTML passed through), and the standard library's HTML parser
turns the result into text: a block element or a list item starts a line, an inline element leaves
the spaces around it as written, a link keeps its text and loses its target, code keeps its text.

A tag that is no formatting element is text (`updateMask=<field1>,<field2>`, "An <iframe> tag"), so
placeholders are never lost.
"""

from __future__ import annotations

import html.parser
import re
from collections.abc import Callable
from functools import lru_cache
from typing import NamedTuple

from markdown_it import MarkdownIt
from markdown_it.token import Token

# Elements that make a new line (block elements, line breaks, list items, table cells).
_BLOCK = frozenset(
    [
        "address",
        "article",
        "aside",
        "blockquote",
        "br",
        "dd",
        "details",
        "div",
        "dl",
        "dt",
        "figcaption",
        "figure",
        "footer",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "header",
        "hr",
        "li",
        "main",
        "nav",
        "ol",
        "p",
        "pre",
        "section",
        "summary",
        "table",
        "tbody",
        "td",
        "tfoot",
        "th",
        "thead",
        "tr",
        "ul",
    ]
)
# Elements that only format their text: removed, their text kept as it is.
_INLINE = frozenset(
    [
        "a",
        "abbr",
        "b",
        "bdi",
        "bdo",
        "big",
        "cite",
        "code",
        "data",
        "del",
        "dfn",
        "em",
        "font",
        "i",
        "img",
        "ins",
        "kbd",
        "mark",
        "q",
        "s",
        "samp",
        "small",
        "span",
        "strike",
        "strong",
        "sub",
        "sup",
        "time",
        "tt",
        "u",
        "var",
        "wbr",
    ]
)
# Elements whose content is no description text.
_DROPPED = frozenset(("script", "style", "template"))
# Elements a sentence never ends in: a link's text, code.
_UNBROKEN = frozenset(("a", "code", "kbd", "pre", "samp", "tt", "var"))
# Emphasis holds words: it starts at a word or an opening mark and ends at a word or a closing one.
_FIRST = frozenset("\"'([<")
_LAST = frozenset(".,:;!?)]>\"'")
_SPACES = re.compile(r"[ \t\r\f\v\n]+")


@lru_cache(maxsize=1)
def _markdown() -> MarkdownIt:
    # CommonMark with raw HTML passed through to the HTML parser; no typographic replacements.
    # Backslash escapes are off: a backslash in Google's text belongs to a pattern (`[a-z\\-]`).
    return MarkdownIt("commonmark", {"html": True}).disable("escape")


class _Text(html.parser.HTMLParser):
    """Collects the text of an HTML fragment, line by line."""

    def __init__(self, prose: Callable[[str], str]) -> None:
        super().__init__(convert_charrefs=True)
        self.prose = prose
        self.marked = 0  # open inline elements: their text is not prose
        self.lines: list[str] = []
        self.line: list[str] = []
        self.lists: list[int] = []  # per open list: 0 for <ul>, else the next number of an <ol>
        self.bullet = ""  # the marker of a list item whose text has not come yet
        self.pre = 0
        self.dropped = 0
        self.spans: list[str] = []
        self.open_spans: list[list[str]] = []  # the text so far of each open link or code element

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _UNBROKEN:
            self.open_spans.append([])
        if tag in _DROPPED:
            self.dropped += 1
        elif tag in _BLOCK:
            self._break()
            if tag == "pre":
                self.pre += 1
            elif tag in ("ul", "ol"):
                self.lists.append(0 if tag == "ul" else int(dict(attrs).get("start") or 1))
            elif tag == "li":
                self._bullet()
        elif tag in _INLINE:
            self.marked += 1
        else:
            self.handle_data(self.get_starttag_text() or f"<{tag}>")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _BLOCK:
            self._break()
        elif tag not in _INLINE and tag not in _DROPPED:
            self.handle_data(self.get_starttag_text() or f"<{tag}/>")

    def handle_endtag(self, tag: str) -> None:
        if tag in _UNBROKEN and self.open_spans:
            span = _SPACES.sub(" ", "".join(self.open_spans.pop())).strip()
            if " " in span:
                self.spans.append(span)
        if tag in _DROPPED:
            self.dropped = max(0, self.dropped - 1)
        elif tag in _BLOCK:
            self._break()
            if tag == "pre":
                self.pre = max(0, self.pre - 1)
            elif tag in ("ul", "ol") and self.lists:
                self.lists.pop()
        elif tag in _INLINE:
            self.marked = max(0, self.marked - 1)
        else:
            self.handle_data(f"</{tag}>")

    def handle_data(self, data: str) -> None:
        if self.dropped:
            return
        for span in self.open_spans:
            span.append(data)
        if self.bullet and data.strip():
            self.line.append(self.bullet)
            self.bullet = ""
        if not self.pre:
            self.line.append(data if self.marked else self.prose(data))
            return
        first, *rest = data.split("\n")  # preformatted text keeps its lines
        self.line.append(first)
        for line in rest:
            self._break()
            self.line.append(line)

    def _bullet(self) -> None:
        if self.lists and self.lists[-1]:
            self.bullet = f"{self.lists[-1]}. "
            self.lists[-1] += 1
        else:
            self.bullet = "- "

    def _break(self) -> None:
        line = _SPACES.sub(" ", "".join(self.line)).strip()
        if line:
            self.lines.append(line)
        self.line = []

    def result(self) -> Plain:
        self.close()
        self._break()
        return Plain(tuple(self.lines), tuple(self.spans))


class Plain(NamedTuple):
    """A description as plain text."""

    lines: tuple[str, ...]
    """One line per block element or list item, spaces collapsed."""
    spans: tuple[str, ...]
    """The texts of links and code of more than one word: no sentence ends inside one."""


def _same(text: str) -> str:
    return text


def from_html(fragment: str, prose: Callable[[str], str] = _same) -> Plain:
    """The text of an HTML fragment; `prose` is applied to text outside inline elements and code."""
    parser = _Text(prose)
    parser.feed(fragment)
    return parser.result()


def from_markup(text: str, prose: Callable[[str], str] = _same) -> Plain:
    """The text of a description: Markdown with some HTML (`prose` as for `from_html`)."""
    md = _markdown()
    tokens = md.parse(text)
    for token in tokens:
        if token.type == "inline" and token.children:
            _literal_delimiters(token.children)
    return from_html(md.renderer.render(tokens, md.options, {}), prose)


def _holds_words(char: str, marks: frozenset[str]) -> bool:
    return char.isalnum() or char in marks


def _literal_delimiters(children: list[Token]) -> None:
    """Emphasis around no word is text: "Wildcards (*) are allowed: "ad*2015"" keeps its asterisks.

    CommonMark lets `*` after '(' open emphasis; an author's emphasis starts and ends at a word.
    """
    opened: list[int] = []
    for i, child in enumerate(children):
        if child.type in ("em_open", "strong_open"):
            opened.append(i)
        elif child.type in ("em_close", "strong_close") and opened:
            start = opened.pop()
            inner = "".join(c.content for c in children[start + 1 : i] if c.type in ("text", "code_inline"))
            if not (_holds_words(inner[:1], _FIRST) and _holds_words(inner[-1:], _LAST)):
                for at in (start, i):
                    children[at] = Token("text", "", 0, content=children[at].markup)

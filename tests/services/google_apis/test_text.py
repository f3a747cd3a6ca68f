"""Descriptions as plain text: each kind of markup on small samples, then every text of the catalog."""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from typing import Any

import pytest

from services.google_apis import text
from services.google_apis.documents import available, choose, documents_dir, is_alias, read_document
from services.google_apis.index import Index


def test_html_links_and_code_keep_their_text_and_the_spaces_around_them() -> None:
    raw = 'Starts an instance stopped with the\n<a href="/compute/docs/x"><code>instances().stop</code></a>\nmethod.'
    assert text.clean(raw) == "Starts an instance stopped with the instances().stop method."


def test_html_blocks_and_list_items_become_lines() -> None:
    raw = "<p>Lists disks.</p><p>Use <b>filter</b>:<br>zone or<br/>size.</p><ul><li>one</li><li><i>two</i></li></ul>"
    assert text.clean(raw) == "Lists disks.\nUse filter:\nzone or\nsize.\n- one\n- two"


def test_an_ordered_list_is_numbered_from_its_start() -> None:
    assert text.clean("<ol start='3'><li>a</li><li>b</li></ol>") == "3. a\n4. b"


def test_markdown_links_code_and_emphasis_are_their_text() -> None:
    raw = "See [Restart an\ninstance](https://cloud.google.com/x) and `name` with *only* **IAM** _once_."
    assert text.clean(raw) == "See Restart an instance and name with only IAM once."


def test_markdown_lists_and_paragraphs_become_lines() -> None:
    raw = "Allowed values:  \n- PROTOCOL_ADX \n- PROTOCOL_OPENRTB_2_2\n\nThe second paragraph."
    assert text.clean(raw) == "Allowed values:\n- PROTOCOL_ADX\n- PROTOCOL_OPENRTB_2_2\nThe second paragraph."


def test_a_fenced_example_keeps_its_lines() -> None:
    assert text.clean('Example:\n```\n{ "a": 1,\n  "b": 2 }\n```') == 'Example:\n{ "a": 1,\n"b": 2 }'


def test_entities_are_decoded_once() -> None:
    assert text.clean("say &quot;hi&quot; &amp; <code>&amp;lt;</code> &x;") == 'say "hi" & &lt; &x;'


def test_placeholders_that_are_no_html_element_stay() -> None:
    raw = "Set updateMask=<field1>,<field2>. An <iframe> tag. Format <schema id>.<facet>; `a <b>`."
    assert (
        text.clean(raw)
        == "Set updateMask=<field1>,<field2>. An <iframe> tag. Format <schema id>.<facet>; a <b>."
    )


def test_asterisks_and_backslashes_that_are_not_markup_stay() -> None:
    raw = 'Wildcards (*) are allowed: "ad*2015" matches. Match [a-z\\-]{1,5} in projects/*/keys/*.'
    assert text.clean(raw) == raw


def test_urls_are_never_shown_and_a_list_item_of_one_url_goes() -> None:
    raw = "Scopes:\n\n- https://www.googleapis.com/auth/calendar\n- <https://example.com/x>\n- the rest"
    assert text.clean(raw) == "Scopes:\n- the rest"


def test_words_the_documents_fused_at_a_former_link_are_split() -> None:
    known = frozenset({"instances", "stop", "maxResults", "zone", "useAdminAccess"})
    raw = (
        "Starts an instance that was stopped using theinstances().stop\nmethod. For more information, "
        "seeRestart an\ninstance. Not greater thanmaxResults, inRFC3339 text, in thezone; supportsPATCH."
    )
    assert text.clean(raw, known) == (
        "Starts an instance that was stopped using the instances().stop method. For more information, "
        "see Restart an instance. Not greater than maxResults, in RFC3339 text, in the zone; supports PATCH."
    )


def test_identifiers_names_and_code_are_not_split() -> None:
    known = frozenset({"useAdminAccess"})
    raw = "Set useAdminAccess, toMap(), isUserPerceived, inProgress and `theJSON` or *seeMore*; inactive."
    assert text.clean(raw, known) == (
        "Set useAdminAccess, toMap(), isUserPerceived, inProgress and theJSON or seeMore; inactive."
    )


def test_the_summary_is_the_first_sentence_and_never_ends_inside_a_link_or_code() -> None:
    described = text.cleaned("See [Cloud. Docs](https://x) and `a. B` first. Then more.")
    assert text.summary(described, "fallback") == "See Cloud. Docs and a. B first."
    assert text.summary(text.cleaned("Lists:\n\n- one. Two"), "f") == "Lists:"


# The whole catalog: every method's summary and description, every parameter's description.

_FORMATTING_TAG = re.compile(r"</?(?:a|b|br|code|em|i|li|ol|p|pre|strong|ul)\b[^>]*>", re.I)
_ENTITY = re.compile(r"&(?:#\d+|#x[0-9a-f]+|[a-z][a-z0-9]*);", re.I)
# A link's target, bold words ("**IAM Permissions**"), a code fence. Not `]()` in a pattern, nor
# "`**part**`" (code keeps its text) or "** Examples **" (no emphasis in Markdown either).
_MARKDOWN = re.compile(r"\]\((?:https?://|/|#)|\*\*[A-Z][a-z]+(?: [A-Za-z]+)*:?\*\*|```")
# Where a document fused a word with a link's or code's text: "seeRestart", "theJSON", "inRFC3339" ...
_FUSED_NAME = re.compile(
    r"(?<![\w./`'~-])(?:see|the|than|supports|uses|using|with|of|or|in)(?:[A-Z]{2}|[A-Z][a-z]+\b)\w*"
)
# ... and "thanmaxResults", "thesetLabels": a word and one of the document's identifiers.
_FUSED_IDENTIFIER = re.compile(r"(?<![\w./`'~-])(?:the|than|with|of|or|in)([a-z]+[A-Z]\w*)")


@dataclass(frozen=True)
class _Doc:
    known: frozenset[str]
    parameters: tuple[str, ...]
    """Raw parameter descriptions."""


@pytest.fixture(scope="module")
def documents() -> dict[str, _Doc]:
    """Every served document's identifiers and raw parameter descriptions, read once."""
    found = {}
    directory = documents_dir()
    for ref, _ in choose(available(directory), "newest"):
        doc = read_document(directory, ref)
        if not is_alias(ref, doc):
            found[ref.file_name] = _Doc(text.identifiers(doc), tuple(_parameter_texts(doc)))
    return found


def _parameter_texts(node: dict[str, Any]) -> list[str]:
    texts = [
        p.get("description") or ""
        for m in node.get("methods", {}).values()
        for p in m.get("parameters", {}).values()
    ]
    for resource in node.get("resources", {}).values():
        texts += _parameter_texts(resource)
    return texts


def _markup_left(cleaned: str) -> list[str]:
    found = _FORMATTING_TAG.findall(cleaned) + _MARKDOWN.findall(cleaned)
    return found + [e for e in _ENTITY.findall(cleaned) if html.unescape(e) != e]


def _fused(cleaned: str, known: frozenset[str]) -> list[str]:
    names = [w for w in _FUSED_NAME.findall(cleaned) if w not in known and not w.startswith("in")]
    names += [w for w in _FUSED_NAME.findall(cleaned) if w.startswith("in") and w[2:4].isupper()]
    identifiers = [m[0] for m in _FUSED_IDENTIFIER.finditer(cleaned) if m[1] in known and m[0] not in known]
    return names + identifiers


def test_no_method_text_keeps_markup_or_fused_words(index: Index, documents: dict[str, _Doc]) -> None:
    bad = []
    for m in index.methods:
        known = documents[m.api.ref.file_name].known
        for cleaned in (m.summary, m.description):
            problems = _markup_left(cleaned) + _fused(cleaned, known)
            if problems:
                bad.append((m.name, problems[:3]))
    assert bad == []


def test_no_parameter_description_keeps_markup_or_fused_words(documents: dict[str, _Doc]) -> None:
    bad = []
    for name, doc in documents.items():
        for raw in doc.parameters:
            cleaned = text.clean(raw, doc.known)
            problems = _markup_left(cleaned) + _fused(cleaned, doc.known)
            if problems:
                bad.append((name, problems[:3]))
    assert bad == []


def test_the_compute_examples_read_as_sentences(index: Index) -> None:
    by_name = {m.name: m for m in index.methods}
    start = by_name["compute_instances_start"]
    assert start.summary == "Starts an instance that was stopped using the instances().stop method."
    assert start.description.endswith("For more information, see Restart an instance.")

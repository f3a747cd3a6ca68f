"""The findability report: each tool's own requests ranked against the whole catalog.

Its bookkeeping (found, first, shadowed, depth) is checked against an index whose rankings the test
writes; what it says of real catalogs, against the real index: each finding is what an independent
search gives.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

import pytest

from gateway import Catalog
from gateway.definition import ToolDefinition
from gateway.search import SearchIndex
from gateway.search.findability import report, requests_of
from services.workspace import CATALOG
from tests.openapi_specs import spec

from .findable_tools import TOOLS, _tool


class Ranked:
    """An index that answers each request with the names the test gives (best first)."""

    def __init__(self, tools: Sequence[ToolDefinition], rankings: dict[str, list[str]]) -> None:
        self.by_name = {d.name: d for d in tools}
        self.rankings = rankings
        self.asked: list[str] = []

    def search(self, query: str, allowed: Collection[str] | None = None, *, limit: int | None = None) -> Any:
        self.asked.append(query)
        return [(self.by_name[n], 1.0) for n in self.rankings.get(query, [])[:limit]]


A = _tool("notes_archive", "notes", "update", "Archive a note.", "put this note away")
B = _tool("notes_archive_old", "notes", "update", "Archive old notes in bulk.")
C = _tool("notes_pin", "notes", "update", "Pin a note to the top.")


def test_a_tool_is_found_when_one_request_ranks_it_within_the_depth_and_first_when_one_ranks_it_first() -> (
    None
):
    rankings = {
        "put this note away": ["notes_archive"],
        "Archive a note": ["notes_pin", "notes_archive"],
        "archive": ["notes_archive_old", "notes_archive", "notes_pin"],
        "Archive old notes in bulk": ["notes_archive", "notes_pin", "notes_archive_old"],
        "archive old": ["notes_archive", "notes_archive_old"],
        "Pin a note to the top": ["notes_archive", "notes_archive_old"],
        "pin": ["notes_archive", "notes_archive_old", "notes_pin"],
    }
    index = Ranked([A, B, C], rankings)
    found = report(index, [A, B, C], depth=2)  # type: ignore[arg-type]
    by_name = {t.name: t for t in found.tools}
    assert by_name["notes_archive"].ranks == {"example": [1], "summary": [2], "name": [2]}
    assert by_name["notes_archive_old"].ranks == {"summary": [None], "name": [2]}
    assert by_name["notes_pin"].ranks == {"summary": [None], "name": [None]}  # third is past the depth
    assert [t.name for t in found.never_found] == ["notes_pin"]
    assert (found.found, found.first) == (2, 1)
    assert found.by_kind() == {"example": (1, 1), "summary": (3, 1), "name": (3, 2)}
    assert sorted(index.asked) == sorted(rankings)  # every request, once each
    # notes_archive is above notes_archive_old on both of its requests, and above notes_pin on both
    # of its own, always higher than notes_archive_old there: it shadows both.
    assert by_name["notes_archive_old"].shadowed_by == "notes_archive"
    assert by_name["notes_pin"].shadowed_by == "notes_archive"
    assert by_name["notes_archive"].shadowed_by is None  # first on its own example
    assert found.as_dict()["never_found"] == ["notes_pin"]


def test_of_several_tools_always_above_the_one_usually_higher_is_named() -> None:
    rankings = {
        "Pin a note to the top": ["notes_archive_old", "notes_archive", "notes_pin"],
        "pin": ["notes_archive", "notes_archive_old", "notes_pin"],
    }
    found = report(Ranked([A, B, C], {**rankings}), [C], depth=5)  # type: ignore[arg-type]
    assert found.tools[0].shadowed_by == "notes_archive"  # places 1 and 0 against 0 and 1: by name
    rankings["pin"] = ["notes_archive_old", "notes_archive", "notes_pin"]
    found = report(Ranked([A, B, C], rankings), [C], depth=5)  # type: ignore[arg-type]
    assert found.tools[0].shadowed_by == "notes_archive_old"


def test_the_requests_are_the_examples_the_first_sentence_and_the_name_without_its_category() -> None:
    d = _tool(
        "gmail_send_message", "gmail", "send", "Send a message. It goes out at once.", "a", "b", "c", "d"
    )
    assert requests_of(d) == {
        "example": ["a", "b", "c"],
        "summary": ["Send a message"],
        "name": ["send message"],
    }
    alone = _tool("notes", "notes", "read", "")
    assert requests_of(alone) == {"name": ["notes"]}  # nothing but its category: the name as it is


def test_summaries_with_no_word_of_their_own_name_the_tool_that_has_them_all() -> None:
    found = report(SearchIndex(Catalog(TOOLS)), TOOLS)
    twins = {t.name: t.twin for t in found.indistinct}
    assert (
        twins["files_folder_copy"] == "files_drive_copy" and twins["files_drive_copy"] == "files_folder_copy"
    )
    assert {f"notes_search_{w}" for w in ("the", "them", "their", "these", "those", "this")} <= set(twins)
    # A word of its own ("calendar", "event", "email", "title") keeps a summary out of the list.
    assert not {"calendar_create_event", "mail_send", "notes_create"} & set(twins)


def _check_against_the_index(index: SearchIndex, tools: Sequence[ToolDefinition]) -> None:
    found = report(index, tools)
    assert len(found.tools) == len(tools)
    for finding in found.tools:
        d = next(t for t in tools if t.name == finding.name)
        for kind, texts in requests_of(d).items():
            for text, rank in zip(texts, finding.ranks[kind], strict=True):
                names = [h.name for h, _ in index.search(text, limit=5)]
                assert rank == (names.index(d.name) + 1 if d.name in names else None), (d.name, text)


def test_every_rank_on_the_workspace_is_what_a_search_gives_and_every_tool_is_found() -> None:
    index = SearchIndex(CATALOG)
    _check_against_the_index(index, list(CATALOG))
    assert report(index, list(CATALOG)).found_share == 1.0


@pytest.fixture(scope="module")
def github() -> tuple[SearchIndex, list[ToolDefinition]]:
    from gateway.openapi import OpenApi
    from gateway.settings.sections import OpenApiSettings

    api = OpenApi(OpenApiSettings(name="github", spec=spec("github.json")), None)
    tools = list(api.definitions())
    return SearchIndex(tools), tools


def test_on_githubs_description_each_tool_never_found_is_in_no_first_five_of_its_requests(
    github: tuple[SearchIndex, list[ToolDefinition]],
) -> None:
    index, tools = github
    found = report(index, tools)
    assert len(found.tools) == len(tools) > 1000
    for finding in found.never_found:
        d = next(t for t in tools if t.name == finding.name)
        for texts in requests_of(d).values():
            for text in texts:
                assert d.name not in [h.name for h, _ in index.search(text, limit=5)]
    for finding in found.shadowed:
        d = next(t for t in tools if t.name == finding.name)
        for texts in requests_of(d).values():
            for text in texts:
                names = [h.name for h, _ in index.search(text, limit=5)]
                cut = names.index(d.name) if d.name in names else len(names)
                assert finding.shadowed_by in names[:cut], (d.name, text)

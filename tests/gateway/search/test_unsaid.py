"""Words a request says that do not name what it wants, where tools are described in users' words:
who gets a message, a verb it refuses, what a question says happened, what to do later."""

from __future__ import annotations

from dataclasses import replace

import pytest

from gateway.search import SearchIndex, semantic_available
from gateway.search.objects import names_object, request_object, tool_objects
from gateway.search.text import words
from gateway.search.unsaid import everyday, meant, unsaid
from gateway.search.verbs import phrasal
from services.workspace import CATALOG

MODES = [
    pytest.param(False, id="lexical"),
    pytest.param(
        True,
        id="hybrid",
        marks=pytest.mark.skipif(not semantic_available(), reason="the 'search' extra is not installed"),
    ),
]


@pytest.fixture(scope="module", params=MODES)
def index(request: pytest.FixtureRequest) -> SearchIndex:
    return SearchIndex(CATALOG, semantic=request.param)


def _first(index: SearchIndex, query: str) -> str:
    return index.search(query, limit=1)[0][0].name


def test_a_name_after_the_verb_is_who_gets_it_not_what_to_do() -> None:
    dropped, _, _, text = unsaid("ping Mark a note about the rota")
    assert dropped == {"mark"}
    assert text == "ping a note about the rota"
    assert unsaid("ping mark a note")[0] == frozenset()  # not written as a name: no reading


def test_a_refused_verb_is_neither_matched_nor_asked() -> None:
    counted, actions = everyday("take the receipts out of my inbox but do not delete them")
    assert "delete" not in {word for word, _, _ in counted}
    assert "delete" not in actions


def test_the_verb_of_a_question_whether_something_happened_is_not_matched() -> None:
    assert unsaid("did the council reply about the permit")[0] == {"reply"}
    assert unsaid("has the school answered")[0] == {"answered"}
    assert unsaid("reply to the council")[0] == frozenset()


def test_the_verb_after_remember_to_is_what_to_do_later() -> None:
    assert unsaid("remember to water the ferns")[0] == {"water"}
    assert unsaid("remind me to call the vet")[0] == {"call"}


def test_an_opening_idiom_also_matches_as_its_action() -> None:
    counted, _ = everyday("call off the picnic on sunday")
    assert ("delete", "delet", 1) in counted
    assert meant("call off the picnic on sunday") == "call off the picnic on sunday"


def test_a_verb_whose_order_asks_another_action_is_not_looked_for_as_its_own() -> None:
    # "make ... instead" changes what exists: nothing is made.
    assert everyday("please make the dinner booking 8pm instead")[1] == ("update",)
    # "call ... off" cancels: nothing is called.
    assert "execute" not in everyday("call the barbecue off")[1]
    assert "create" in everyday("make a booking for dinner at 8pm")[1]


def test_an_order_to_show_something_looks_for_every_lookup_alike() -> None:
    index = SearchIndex(CATALOG, semantic=False)
    several = index.query_terms("show the invoices Kim sent in june")
    assert several["!list"] == several["!search"] and "!read" not in several  # several: none to read
    one = index.query_terms("please show me the note from Kim")
    assert one["!list"] == one["!search"] == one["!read"]
    assert "search" not in one  # the concept, not the word: a tool's name saying "search" is no nearer
    assert "!search" not in index.query_terms("list the invoices Kim sent")  # "list" says which
    bare = SearchIndex([replace(d, examples=()) for d in CATALOG], semantic=False)
    assert "!search" not in bare.query_terms("show the invoices Kim sent in june")  # no users' words


def test_a_name_is_never_corrected_as_a_misspelling() -> None:
    index = SearchIndex(CATALOG, semantic=False)
    assert "list" in index.query_terms("meet with lisa on friday")  # a lowercase word may be a typo
    assert "list" not in index.query_terms("meet with Lisa on friday")


def test_a_tool_named_after_a_longer_word_is_about_another_thing() -> None:
    tasklists = next(d for d in CATALOG if d.name == "tasks_list_tasklists")
    tasks = next(d for d in CATALOG if d.name == "tasks_list_tasks")
    about = frozenset(request_object(phrasal(words("which tasks are overdue"))))
    assert names_object(about, tool_objects(tasklists)) == 0
    assert names_object(about, tool_objects(tasks)) == 2


def test_an_order_for_something_new_does_not_agree_with_a_tool_that_needs_an_existing_one() -> None:
    index = SearchIndex(CATALOG, semantic=False)

    def agreed(request: str) -> dict[str, bool]:
        kept = index._not_new(request, {"send": 1.5})
        if index._np is not None:  # the numpy path agrees with the pure-Python one
            vectorized = index._not_new_numpy(request, {"send": 1.5})
            assert ([True] * len(kept) if vectorized is None else [bool(v) for v in vectorized]) == kept
        tools = sorted(CATALOG, key=lambda d: d.name)  # the index's order
        return {d.name: k for d, k in zip(tools, kept, strict=True)}

    new = agreed("shoot Kim a message about lunch")
    assert not new["gmail_reply"] and not new["gmail_send_draft"] and new["gmail_send_message"]
    assert all(agreed("shoot Kim the message about lunch").values())  # the one that exists may be a draft


@pytest.mark.parametrize(
    ("request_text", "tool"),
    [
        ("ping Mark a note about the rota", "gmail_send_message"),  # a new note to Mark: nothing marked
        ("take the receipts out of my inbox but do not delete them", "gmail_archive"),
        ("did the council reply about the permit", "gmail_search_messages"),  # no reply to send
        ("send the promo to the bin", "gmail_trash_message"),
        ("make the dentist 4pm instead", "calendar_update_event"),
        ("what's the address for the offsite", "calendar_get_event"),
        ("show the tasks in my garden list", "tasks_list_tasks"),
        # "show" asks any lookup: a list tool that lists other things (labels) is no nearer.
        ("show emails from the bank this month", "gmail_search_messages"),
        ("show messages about the car insurance", "gmail_search_messages"),
    ],
)
def test_an_everyday_request_finds_its_tool_first(index: SearchIndex, request_text: str, tool: str) -> None:
    assert _first(index, request_text) == tool

"""Ranking behaviours of the search index: names, filters, synonyms, typos, order, hostile input."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, Field

from gateway import PARAMS_CONFIG, NoParams, ToolDefinition
from gateway.search import SearchIndex, numpy_available, semantic_available, stem, tokenize
from gateway.search.text import words
from gateway.search.verbs import phrasal, query_actions

# Every ranking behaviour holds for both scorers: the pure-Python loop and numpy's bincount.
SCORERS = [
    pytest.param(False, id="python"),
    pytest.param(
        True, id="numpy", marks=pytest.mark.skipif(not numpy_available(), reason="numpy is not installed")
    ),
]


class EventParams(BaseModel):
    model_config = PARAMS_CONFIG
    calendar_id: str = Field(description="Calendar holding the event.")
    event_id: str = Field(description="Id of the event.")


def _tool(
    name: str, category: str, action: str, summary: str, params: type[BaseModel] = NoParams
) -> ToolDefinition:
    return ToolDefinition(
        name=name,
        category=category,
        action=action,
        verb=action,
        summary=summary,
        description=summary,
        params=params,
        handler=lambda p: None,
    )


TOOLS = [
    _tool("calendar_events_delete", "calendar", "delete", "Delete an event from a calendar.", EventParams),
    _tool("calendar_events_insert", "calendar", "create", "Add an event to a calendar.", EventParams),
    _tool("calendar_events_list", "calendar", "list", "List the events of a calendar in a time range."),
    _tool("calendar_events_get", "calendar", "read", "Read one calendar event.", EventParams),
    _tool("gmail_messages_send", "gmail", "send", "Send an email message."),
    _tool("gmail_messages_search", "gmail", "search", "Search email messages with a query."),
    _tool("gmail_messages_trash", "gmail", "delete", "Move an email message to the trash."),
    _tool("tasks_create", "tasks", "create", "Create a task in a task list."),
    _tool("tasks_delete", "tasks", "delete", "Delete a task."),
    _tool("weather_forecast", "weather", "read", "Get the weather forecast for a city."),
]


@pytest.fixture(scope="module", params=SCORERS)
def index(request: pytest.FixtureRequest) -> SearchIndex:
    return SearchIndex(TOOLS, semantic=False, vectorized=request.param)


def names(hits: list[tuple[ToolDefinition, float]]) -> list[str]:
    return [d.name for d, _ in hits]


def test_tokenize_splits_identifiers_stems_and_drops_stop_words() -> None:
    assert tokenize("getCalendarEvents for the user_id") == ["get", "calendar", "event", "user", "id"]
    assert stem("scheduling") == stem("schedules") == stem("scheduled")


def test_two_stop_words_joined_by_a_hyphen_are_one_word() -> None:
    # Read apart, "to" and "do" are both dropped and "my to-do list" is just "list".
    assert tokenize("my To-Do list") == ["todo", "list"]
    assert tokenize("keep it up-to-date") == ["keep", "date"]  # a longer chain is read part by part


def test_exact_name_wins_even_against_stronger_text_matches(index: SearchIndex) -> None:
    assert names(index.search("tasks_delete"))[0] == "tasks_delete"
    assert names(index.search("  Calendar_Events_Get "))[0] == "calendar_events_get"


def test_name_prefix_comes_next_in_name_order(index: SearchIndex) -> None:
    assert names(index.search("calendar_events"))[:4] == [
        "calendar_events_delete",
        "calendar_events_get",
        "calendar_events_insert",
        "calendar_events_list",
    ]


def test_filters_are_hard_and_combine_with_the_query(index: SearchIndex) -> None:
    hits = names(index.search("delete", categories={"gmail"}))
    assert hits == ["gmail_messages_trash"]
    assert names(index.search("calendar", actions={"read"})) == ["calendar_events_get"]
    assert names(index.search("calendar_events_delete", categories={"tasks"})) == ["tasks_delete"]
    assert names(index.search("delete", allowed={"tasks_delete"})) == ["tasks_delete"]
    assert index.search("calendar", categories={"calendar"}, actions={"send"}) == []


@pytest.mark.parametrize(
    ("query", "best"),
    [
        ("remove an event from my calendar", "calendar_events_delete"),
        ("erase the task", "tasks_delete"),
        ("cancel a calendar event", "calendar_events_delete"),
        ("schedule a new calendar event", "calendar_events_insert"),
        ("look up email messages", "gmail_messages_search"),
        ("find emails", "gmail_messages_search"),
        ("what's on my calendar", "calendar_events_list"),
        ("show calendar events", "calendar_events_list"),
    ],
)
def test_verbs_map_onto_the_action_vocabulary(index: SearchIndex, query: str, best: str) -> None:
    assert names(index.search(query))[0] == best


@pytest.mark.parametrize(
    ("query", "actions"),
    [
        ("add a task to my list", ["create"]),
        ("list my tasks", ["list"]),
        ("send the update", ["send"]),
        ("delete this search", ["delete"]),
        ("what's on my calendar", ["list"]),
    ],
)
def test_a_word_after_a_determiner_is_a_noun_not_the_verb(query: str, actions: list[str]) -> None:
    assert query_actions(words(query)) == actions


@pytest.mark.parametrize(
    ("query", "meant"),
    [
        ("set up a new cluster", ["create", "a", "new", "cluster"]),
        ("back up my database", ["backup", "my", "database"]),
        ("shut down the server", ["stop", "the", "server"]),
        ("turn on my vacation reply", ["enable", "my", "vacation", "reply"]),
        ("the set up guide", ["the", "set", "up", "guide"]),  # a noun, not a verb
        ("set", ["set"]),
    ],
)
def test_a_phrasal_verb_reads_as_the_word_it_means(query: str, meant: list[str]) -> None:
    assert phrasal(words(query)) == meant


@pytest.mark.parametrize("vectorized", SCORERS)
def test_a_phrasal_verb_finds_the_tool_that_does_it(vectorized: bool) -> None:
    tools = [
        _tool("clusters_create", "clusters", "create", "Create a cluster."),
        _tool("clusters_set_logging", "clusters", "update", "Set the logging service of a cluster."),
        _tool("clusters_set_labels", "clusters", "update", "Set labels on a cluster."),
        _tool("servers_stop", "servers", "execute", "Stop a running server."),
        _tool("servers_set_down_time", "servers", "update", "Set the down time window of a server."),
    ]
    index = SearchIndex(tools, semantic=False, vectorized=vectorized)
    assert names(index.search("set up a cluster"))[0] == "clusters_create"
    assert names(index.search("shut down the server"))[0] == "servers_stop"


@pytest.mark.parametrize(
    ("query", "best"), [("wether forcast", "weather_forecast"), ("calender", "calendar")]
)
def test_typos_within_one_edit_still_match(index: SearchIndex, query: str, best: str) -> None:
    hits = names(index.search(query))
    assert hits and hits[0].startswith(best)


def test_order_is_stable_and_ties_break_by_name() -> None:
    twins = [_tool(f"twin_{c}", "twins", "read", "Read the same thing.") for c in "dbca"]
    forward = SearchIndex(twins, semantic=False)
    backward = SearchIndex(reversed(twins), semantic=False)
    assert names(forward.search("read the thing")) == ["twin_a", "twin_b", "twin_c", "twin_d"]
    assert forward.search("read the thing") == backward.search("read the thing")


def test_limit_and_pages_agree_with_the_full_ranking(index: SearchIndex) -> None:
    full = names(index.search("calendar event"))
    assert names(index.search("calendar event", limit=2)) == full[:2]
    page, total = index.page("calendar event", offset=1, limit=2)
    assert names(page) == full[1:3] and total == len(full)


def test_positions_are_the_ranking_by_words_in_the_index_order(index: SearchIndex) -> None:
    ordered = sorted(d.name for d in TOOLS)
    for query in ["calendar event", "delete", "remove the email", "nothing like it"]:
        full = names(index.search(query, limit=3))
        assert [ordered[i] for i in index.positions(query, limit=3)] == full
    # A name is not matched as a name: its words rank.
    assert index.positions("calendar_events_list", limit=5) == index.positions(
        "calendar events list", limit=5
    )


def test_a_boost_raises_its_tool_and_a_boosted_tool_the_text_misses_joins_the_page(
    index: SearchIndex,
) -> None:
    plain, total = index.page("calendar event", limit=3)
    third = names(plain)[2]
    boosted, boosted_total = index.page(
        "calendar event", limit=3, boosts={"weather_forecast": 2.0, third: 1.0}
    )
    assert names(boosted)[:2] == ["weather_forecast", third]  # 2 beats any score over the best
    assert boosted_total == total + 1  # the boosted tool the text misses counts as a match
    outside, _ = index.page(
        "calendar event", categories=["calendar"], limit=3, boosts={"weather_forecast": 2.0}
    )
    assert "weather_forecast" not in names(outside)  # a boost never lifts a tool past the filters


@pytest.mark.parametrize(
    "query", ["", "   ", "the of and", ".*+?[](){}|^$\\", "(((((", "a" * 100_000, "🙂 ∑ 漢字", "\x00\n\t"]
)
def test_empty_and_hostile_queries_return_quietly(index: SearchIndex, query: str) -> None:
    assert index.search(query) == []


def test_a_huge_query_with_real_words_still_ranks(index: SearchIndex) -> None:
    query = ("delete a calendar event " + "lorem ipsum " * 10_000)[:100_000]
    assert names(index.search(query, limit=1)) == ["calendar_events_delete"]


def test_regex_metacharacters_are_plain_text(index: SearchIndex) -> None:
    assert names(index.search("weather.*forecast|["))[0] == "weather_forecast"


def test_unknown_words_match_nothing(index: SearchIndex) -> None:
    assert index.search("xylophone quantum") == []


def test_what_an_apostrophe_leaves_of_a_word_matches_nothing() -> None:
    # "org's" and "Dependabot's" split into "s": a possessive is not a word a tool is found by.
    tools = [
        _tool("dependabot_access", "dependabot", "update", "Update Dependabot's repository access list."),
        _tool("repos_list_for_org", "repos", "list", "List organization repositories."),
    ]
    index = SearchIndex(tools, semantic=False)
    assert tokenize("the org's repos, don't I'll we've") == ["org", "repo"]
    assert index.search("that's what's") == []
    assert names(index.search("the org's repositories"))[0] == "repos_list_for_org"


def test_an_empty_index_finds_nothing() -> None:
    assert SearchIndex([], semantic=False).search("anything") == []


@pytest.mark.skipif(not semantic_available(), reason="the 'search' extra is not installed")
def test_the_semantic_layer_keeps_names_filters_and_honest_misses() -> None:
    hybrid = SearchIndex(TOOLS, semantic=True)
    assert hybrid.semantic
    assert names(hybrid.search("tasks_delete"))[0] == "tasks_delete"
    assert {d.category for d, _ in hybrid.search("delete something", categories={"gmail"})} == {"gmail"}
    assert hybrid.search("xylophone quantum") == []
    assert names(hybrid.search("remove an event from my calendar"))[0] == "calendar_events_delete"
    assert hybrid.search("weather forecast") == hybrid.search("weather forecast")

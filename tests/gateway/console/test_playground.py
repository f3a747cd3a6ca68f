"""The discovery playground: the page discover_tools would give, its scores split, and nothing recorded."""

from __future__ import annotations

from gateway import Catalog, Gateway
from gateway.console.playground import run, traffic
from gateway.context import Principal, ToolContext
from gateway.engine import run_sync
from gateway.usage import SqliteUsageStore, Usage

from ..sample_tools import ALL_TOOLS


def _gateway() -> Gateway:
    return Gateway(Catalog(ALL_TOOLS), usage=Usage(SqliteUsageStore(":memory:")), search_cache_dir=False)


def test_the_playground_ranks_like_discover_tools_and_splits_each_score() -> None:
    gw = _gateway()
    principal = Principal()
    answer = run_sync(gw.call("discover_tools", {"query": "delete a note"}, ToolContext(session_id="x")))
    result = run(gw, principal, query="delete a note")
    assert [t.name for t in result.tools] == [t["name"] for t in answer.output["tools"]]
    top = result.tools[0]
    assert top.name == "notes_delete" and top.lexical > 0 and top.learned == 0.0
    assert result.tools[-1].lexical <= top.lexical
    exact = run(gw, principal, query="notes_delete").tools[0]
    assert exact.name == "notes_delete" and exact.name_match == "exact"


def test_a_playground_search_is_not_recorded_as_traffic() -> None:
    gw = _gateway()
    run(gw, Principal(), query="archive a note")
    assert traffic(gw).never_followed == []
    run_sync(gw.call("discover_tools", {"query": "archive a note"}, ToolContext(session_id="x")))
    assert [q["query"] for q in traffic(gw).never_followed] == ["archive a note"]


def test_tools_never_found_are_those_in_no_learned_pair() -> None:
    gw = _gateway()
    ctx = ToolContext(session_id="s")
    run_sync(gw.call("discover_tools", {"query": "search notes"}, ctx))
    run_sync(gw.call("invoke_tool", {"tool_name": "notes_search", "parameters": {"title": "x"}}, ctx))
    seen = traffic(gw)
    assert "notes_search" not in seen.never_found and "notes_delete" in seen.never_found
    assert seen.never_found_count == len(ALL_TOOLS) - 1


def test_a_bad_filter_is_said_in_words() -> None:
    result = run(_gateway(), Principal(), query="x", categories=["nope"])
    assert result.error.startswith("Unknown categories: nope")


def test_the_score_column_explains_the_order_after_the_name_matches() -> None:
    gw = _gateway()
    ctx = ToolContext(session_id="s")
    for _ in range(3):  # earlier sessions taught that this request means a new note
        run_sync(gw.call("discover_tools", {"query": "remember the milk"}, ctx))
        run_sync(gw.call("invoke_tool", {"tool_name": "notes_create", "parameters": {"title": "milk"}}, ctx))
    assert gw.usage is not None and gw.usage.learned(gw.visible(Principal()), wait=True) is not None
    for query in ("delete a note", "remember the milk"):
        result = run(gw, Principal(), query=query)
        scores = [t.score for t in result.tools if not t.name_match]
        assert scores and None not in scores, query
        assert scores == sorted(scores, reverse=True), query  # type: ignore[type-var]
    learned = run(gw, Principal(), query="remember the milk").tools
    assert learned[0].name == "notes_create" and learned[0].learned > 0


def test_a_tool_called_without_a_search_is_not_listed_as_never_found() -> None:
    gw = _gateway()
    seen = traffic(gw, called={"notes_delete", "no_longer_served"})
    assert "notes_delete" not in seen.never_found and "notes_create" in seen.never_found
    assert seen.never_found_count == len(ALL_TOOLS) - 1

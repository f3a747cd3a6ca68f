"""Learning from use cannot be steered: one pair, one principal, or one session id reused by another
principal moves no one else's ranking, and a destructive tool comes first only when it is asked for."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gateway import Catalog, Gateway, Principal, ToolContext, discovery, run_sync, tool
from gateway.cli import main
from gateway.usage import SqliteUsageStore, Usage
from gateway.usage.learned import LearnedVotes

from ..sample_tools import ALL_TOOLS
from ..test_discovery_visibility import VISIBLE

WORDS = "landlord stuff"  # words no sample tool's text uses
ANA, BOB = Principal("ana"), Principal("bob")


def _discover(gw: Gateway, who: Principal, query: str, session: str = "look") -> list[str]:
    out = run_sync(
        gw.call("discover_tools", {"query": query}, ToolContext(principal=who, session_id=session))
    )
    return [t["name"] for t in out.output["tools"]]


def _teach(gw: Gateway, who: Principal, session: str, query: str = WORDS) -> None:
    ctx = ToolContext(principal=who, session_id=session)
    run_sync(gw.call("discover_tools", {"query": query}, ctx))
    done = run_sync(
        gw.call("invoke_tool", {"tool_name": "notes_create", "parameters": {"title": "Rent"}}, ctx)
    )
    assert done.status == "ok"


def _learning(**options: Any) -> tuple[Gateway, Usage]:
    usage = Usage(SqliteUsageStore(), check_seconds=0.0, **options)
    gw = Gateway(Catalog(ALL_TOOLS), usage=usage, search_cache_dir=False)
    return gw, usage


def _reread(gw: Gateway, usage: Usage, *who: Principal) -> None:
    """The store read again now (a running gateway does it in the background)."""
    for principal in who:
        usage.learned(gw.visible(principal), wait=True)


def test_one_principal_teaches_itself_at_once_and_others_only_with_independent_evidence() -> None:
    gw, usage = _learning()
    plain = Gateway(Catalog(ALL_TOOLS), search_cache_dir=False)
    for session in ("s1", "s2", "s3", "s4"):  # one principal, many sessions: still one source
        _teach(gw, ANA, session)
    _reread(gw, usage, ANA, BOB)
    assert _discover(gw, ANA, WORDS)[:1] == ["notes_create"]
    assert _discover(gw, BOB, WORDS) == _discover(plain, BOB, WORDS) == []
    _teach(gw, Principal("cy"), "c1")
    _reread(gw, usage, BOB)
    assert _discover(gw, BOB, WORDS) == []  # two principals: not yet
    _teach(gw, Principal("di"), "d1")
    _reread(gw, usage, BOB)
    assert _discover(gw, BOB, WORDS)[:1] == ["notes_create"]  # three distinct principals


def test_a_one_person_gateway_learns_from_its_own_use_with_min_principals_one() -> None:
    gw, usage = _learning(min_principals=1)
    _teach(gw, ANA, "s1")
    _reread(gw, usage, BOB)
    assert _discover(gw, BOB, WORDS)[:1] == ["notes_create"]


def test_a_session_id_used_by_another_principal_pairs_nothing() -> None:
    gw, usage = _learning()
    ctx_ana = ToolContext(principal=ANA, session_id="shared")
    ctx_bob = ToolContext(principal=BOB, session_id="shared")
    run_sync(gw.call("discover_tools", {"query": WORDS}, ctx_ana))
    call = {"tool_name": "notes_create", "parameters": {"title": "Rent"}}
    assert run_sync(gw.call("invoke_tool", call, ctx_bob)).status == "ok"
    assert usage.export() == []


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


REQUESTS_NOT_DELETING = [
    "create a calendar event",
    "add an event to my calendar",
    "show my calendar events",
    "update a calendar event",
    "what's on my calendar tomorrow",
    "move my dentist appointment",
]


def test_one_imported_pair_puts_no_destructive_tool_first_for_requests_that_do_not_delete(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "config.toml"
    config.write_text(f'data_dir = "{tmp_path}"\n')  # the workspace catalog on the local backend
    monkeypatch.setenv("GATEWAY_CONFIG", str(config))
    history = tmp_path / "history.jsonl"
    history.write_text('{"query": "delete a calendar event", "tools": ["calendar_delete_event"]}\n')
    assert _cli(capsys, "usage", "import", str(history), "--json")["imported"] == 1
    for request in REQUESTS_NOT_DELETING:
        first = _cli(capsys, "discover", request, "--json")["tools"][0]["name"]
        assert first != "calendar_delete_event", request
    for request in ("delete a calendar event", "cancel my 3pm"):
        assert _cli(capsys, "discover", request, "--json")["tools"][0]["name"] == "calendar_delete_event"


@tool(category="files", action="delete", destructive=True)
def files_purge_old(path: str) -> str:
    """Old files, old logs and old caches taking disk space: erased for good.

    Args:
        path: The folder.
    """
    return path


@tool(category="files", action="read", read_only=True)
def files_disk_usage(path: str) -> str:
    """How much disk space a folder takes.

    Args:
        path: The folder.
    """
    return path


def test_a_tool_that_deletes_is_first_only_when_the_request_asks_to_delete() -> None:
    tools = [files_purge_old, files_disk_usage]
    gw = Gateway(Catalog(tools), search_cache_dir=False)
    # The words match the deleting tool best; they do not ask to delete.
    assert gw.index().search("old files old logs disk space")[0][0].name == "files_purge_old"
    assert _discover(gw, ANA, "old files old logs disk space") == ["files_disk_usage", "files_purge_old"]
    assert _discover(gw, ANA, "clear old files old logs disk space")[0] == "files_purge_old"
    # Nor from learning: a request that ended in the deleting tool, asked again without a verb.
    usage = Usage(SqliteUsageStore(), check_seconds=0.0)
    usage.import_lines([json.dumps({"query": "my old junk", "tools": ["files_purge_old"]})])
    learned = Gateway(Catalog(tools), usage=usage, search_cache_dir=False)
    assert _discover(learned, ANA, "my old junk")[0] == "files_disk_usage"
    assert _discover(learned, ANA, "remove my old junk")[0] == "files_purge_old"


def test_one_past_request_never_takes_first_place_from_the_words_clear_match_and_more_evidence_does() -> None:
    def first_tools(*past: str) -> list[str]:
        usage = Usage(SqliteUsageStore(), check_seconds=0.0, semantic=False)
        usage.import_lines(json.dumps({"query": q, "tools": ["notes_archive"]}) for q in past)
        gw = Gateway(Catalog([*ALL_TOOLS, *VISIBLE]), usage=usage, search_cache_dir=False)
        return _discover(gw, ANA, "settle my bill")[:2]

    # The words ask to pay an invoice; one request that ended in an archive moves that tool up, not first.
    assert first_tools("settle my bill") == ["billing_pay_invoice", "notes_archive"]
    assert first_tools("settle my bill", "settle the bill", "settle my bills now") == [
        "notes_archive",
        "billing_pay_invoice",
    ]


def test_a_past_request_credited_to_several_tools_votes_for_each() -> None:
    usage = Usage(SqliteUsageStore(), check_seconds=0.0)
    usage.import_lines([json.dumps({"query": WORDS, "tools": ["notes_create", "notes_archive"]})])
    gw = Gateway(Catalog(ALL_TOOLS), usage=usage, search_cache_dir=False)
    assert sorted(_discover(gw, ANA, WORDS)) == ["notes_archive", "notes_create"]


@tool(category="files", action="read", read_only=True)
def files_recent(folder: str) -> str:
    """The files changed in a folder this week.

    Args:
        folder: The folder.
    """
    return folder


def test_one_past_request_never_puts_a_tool_first_in_place_of_a_destructive_first_the_request_did_not_ask() -> (
    None
):
    def first_tools(*past: str) -> list[str]:
        usage = Usage(SqliteUsageStore(), check_seconds=0.0, semantic=False)
        usage.import_lines(json.dumps({"query": q, "tools": ["files_recent"]}) for q in past)
        gw = Gateway(
            Catalog([files_purge_old, files_disk_usage, files_recent]), usage=usage, search_cache_dir=False
        )
        return _discover(gw, ANA, "old files old logs disk space")

    # The words match the deleting tool best, and do not ask to delete: the tool they match next leads,
    # and one past request moves its tool up the page, not into that first place.
    assert first_tools()[:2] == ["files_disk_usage", "files_purge_old"]
    assert first_tools("old files old logs disk space")[:2] == ["files_disk_usage", "files_recent"]
    many = (
        "old files old logs disk space",
        "old files and old logs on disk",
        "disk space old logs old files",
    )
    assert first_tools(*many)[0] == "files_recent"


def test_a_word_many_past_requests_of_a_tool_share_votes_fully_for_it_and_one_past_request_does_not() -> None:
    def vote(*past: str) -> float:
        usage = Usage(SqliteUsageStore(), check_seconds=0.0, semantic=False)
        usage.import_lines(json.dumps({"query": q, "tools": ["notes_archive"]}) for q in past)
        gw = Gateway(Catalog([*ALL_TOOLS, *VISIBLE]), usage=usage, search_cache_dir=False)
        return usage.votes(gw.visible(ANA), "landlord").get("notes_archive", 0.0)

    # Each past request is long and shares one word with the request, so none of them alone is close;
    # together they say what the tool is asked for (the pooled evidence), and one of them says little.
    things = [
        "letter",
        "lease",
        "receipt",
        "notice",
        "invoice",
        "papers",
        "contract",
        "reminder",
        "email",
        "bill",
        "agreement",
        "deposit",
    ]
    assert vote(*(f"file away the {thing} from the landlord" for thing in things)) == 1.0
    assert vote("file away the letter from the landlord") <= 0.5


def test_a_tool_asked_for_often_adds_up_its_votes_only_where_the_store_has_seen_each_of_the_words_best_tools() -> (
    None
):
    tools = Catalog([*ALL_TOOLS, *VISIBLE])
    request = "the landlord note"
    text, _ = Gateway(tools, search_cache_dir=False).index(ANA).page(request, limit=discovery.EVEN_DEPTH)
    best = [d.name for d, _ in text]
    assert "notes_archive" in best and len(best) > 2
    unseen = next(name for name in reversed(best) if name != "notes_archive")

    def scores(*never_asked: str) -> tuple[float, float, float]:
        """(notes_archive's score on the page, its text part, its vote) with six past requests of it
        and one, in other words, of every other tool but `never_asked`."""
        usage = Usage(SqliteUsageStore(), check_seconds=0.0, semantic=False)
        things = ["letter", "receipt", "notice", "invoice", "papers", "deposit"]
        lines = [
            {"query": f"file away the {t} from the landlord", "tools": ["notes_archive"]} for t in things
        ]
        lines += [
            {"query": f"past request number {i}", "tools": [d.name]}
            for i, d in enumerate(tools)
            if d.name not in (*never_asked, "notes_archive")
        ]
        usage.import_lines(json.dumps(line) for line in lines)
        gw = Gateway(tools, usage=usage, search_cache_dir=False)
        index = gw.index(ANA)
        votes = usage.votes(gw.visible(ANA), request, principal=ANA.id)
        assert isinstance(votes, LearnedVotes)
        # Its pool (what it is asked for) and the nearest past requests (that this was asked) add up.
        assert votes.summed["notes_archive"] > votes["notes_archive"]
        top = max(s for _, s in text)
        found, _ = discovery.scored_page(index, request, votes, categories=None, actions=None, depth=10)
        score = dict((d.name, s) for d, s in found)["notes_archive"]
        return score, dict((d.name, s / top) for d, s in text)["notes_archive"], votes["notes_archive"]

    # The store has seen every tool the words rank near the top: every rival could have summed votes.
    score, text_part, larger = scores()
    summed = score - text_part
    assert summed / discovery.VOTE_WEIGHT > larger
    # One of them it has never seen: summed votes would pass it for lack of history alone.
    score, text_part, larger = scores(unseen)
    assert score == pytest.approx(text_part + discovery.VOTE_WEIGHT * larger)


def test_a_tool_asked_for_most_keeps_the_first_place_its_votes_win_but_does_not_crowd_the_rest_of_a_page_the_store_has_not_seen() -> (
    None
):
    tools = Catalog([*ALL_TOOLS, *VISIBLE])
    things = [
        "letter",
        "receipt",
        "notice",
        "invoice",
        "papers",
        "deposit",
        "lease",
        "contract",
        "bill",
        "form",
    ]

    def page(request: str, *also_asked: str) -> tuple[list[str], dict[str, float], float, float]:
        """(the page's names, their scores, notes_archive's text part and vote) with ten past
        requests of notes_archive and one of each of `also_asked`."""
        usage = Usage(SqliteUsageStore(), check_seconds=0.0, semantic=False)
        lines = [
            {"query": f"file away the {t} from the landlord", "tools": ["notes_archive"]} for t in things
        ]
        lines += [{"query": f"past request number {i}", "tools": [name]} for i, name in enumerate(also_asked)]
        usage.import_lines(json.dumps(line) for line in lines)
        gw = Gateway(tools, usage=usage, search_cache_dir=False)
        index = gw.index(ANA)
        votes = usage.votes(gw.visible(ANA), request, principal=ANA.id)
        text, _ = index.page(request, limit=discovery.EVEN_DEPTH)
        top = max(s for _, s in text)
        found, _ = discovery.scored_page(index, request, votes, categories=None, actions=None, depth=10)
        text_part = dict((d.name, s / top) for d, s in text).get("notes_archive", 0.0)
        return [d.name for d, _ in found], {d.name: s for d, s in found}, text_part, votes["notes_archive"]

    # Words the store's only busy tool shares with the request ("landlord"), the text's clear match
    # another: below the first place its vote counts as much as the store has seen of the text's best.
    request = "search my notes for the landlord"
    names, scores, text_part, vote = page(request)
    text, _ = Gateway(tools, search_cache_dir=False).index(ANA).page(request, limit=discovery.EVEN_DEPTH)
    best = [d.name for d, _ in text]
    assert names[0] == best[0] != "notes_archive"
    assert scores["notes_archive"] == pytest.approx(text_part + discovery.VOTE_WEIGHT * vote / len(best))
    assert names.index("notes_archive") > 1
    # When the store has seen every one of them, the vote counts in full.
    names, scores, text_part, vote = page(request, *(name for name in best if name != "notes_archive"))
    assert names[1] == "notes_archive"
    assert scores["notes_archive"] >= text_part + discovery.VOTE_WEIGHT * vote
    # A request the busy tool's past requests are close to: its votes win the first place, as before.
    assert page("read the landlord file")[0][0] == "notes_archive"

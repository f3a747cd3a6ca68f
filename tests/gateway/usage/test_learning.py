"""Learning from use: the signal, the store's bounds, the ranking, forgetting, import and export."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from gateway import Catalog, Gateway, Policy, Principal, Rule, ToolContext, run_sync
from gateway.cli import main
from gateway.usage import LearnedIndex, Limits, Pair, SessionTracker, SqliteUsageStore, Usage
from gateway.usage import learning as learning_module
from tests.discovery_answers import as_page

from ..sample_tools import ALL_TOOLS
from ..test_discovery_visibility import HIDDEN, REQUESTS, VISIBLE

TOOLS = [*ALL_TOOLS, *VISIBLE]
ANA = Principal("ana")


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


def learning(tmp_path: Path | None = None, **limits: Any) -> Usage:
    path = ":memory:" if tmp_path is None else tmp_path / "usage.sqlite3"
    return Usage(SqliteUsageStore(path, limits=Limits(**limits)), check_seconds=0.0)


def call(gw: Gateway, tool: str, args: dict[str, Any], session: str = "s1", who: Principal = ANA) -> Any:
    return run_sync(gw.call(tool, args, ToolContext(principal=who, session_id=session)))


def test_with_an_empty_store_every_answer_is_todays() -> None:
    plain = Gateway(Catalog(TOOLS), search_cache_dir=False)
    learning_gw = Gateway(Catalog(TOOLS), search_cache_dir=False, usage=learning())
    for request in REQUESTS:
        assert (
            call(learning_gw, "discover_tools", request).output
            == call(plain, "discover_tools", request).output
        )


def test_a_search_then_a_successful_call_in_one_session_teaches_the_gateway() -> None:
    usage = learning()
    gw = Gateway(Catalog(TOOLS), usage=usage)
    shown = call(gw, "discover_tools", {"query": "landlord stuff"})
    assert shown.output["total"] == 0  # the tools' text says nothing of landlords
    call(gw, "invoke_tool", {"tool_name": "notes_create", "parameters": {"title": "Rent"}})
    assert usage.export() == [{"query": "landlord stuff", "tools": ["notes_create"]}]
    # A tool the search did not show: a miss counts double.
    assert usage.store.evidence()[0].weight == pytest.approx(2.0)
    # Once the store is read again (in the background; a search never waits for it), another
    # session asking the same finds it, and the total counts it.
    usage.learned(gw.visible(ANA), wait=True)
    again = call(gw, "discover_tools", {"query": "landlord stuff"}, session="s2")
    assert [t["name"] for t in again.output["tools"]] == ["notes_create"]
    assert again.output["total"] == 1


@pytest.mark.parametrize(
    ("session", "invocation", "why"),
    [
        ("default", {"tool_name": "notes_create", "parameters": {"title": "x"}}, "no session"),
        ("s1", {"tool_name": "notes_create", "parameters": {"title": 7}}, "invalid"),
        ("s1", {"tool_name": "files_boom", "parameters": {"path": "/srv/files/a"}}, "failed"),
        ("s1", {"tool_name": "notes_delete", "parameters": {"note_id": "n1"}}, "pending, not approved"),
        ("s1", {"tool_name": "no_such_tool", "parameters": {}}, "unknown"),
    ],
)
def test_calls_that_did_not_succeed_or_have_no_session_teach_nothing(
    session: str, invocation: dict[str, Any], why: str
) -> None:
    usage = learning()
    gw = Gateway(Catalog(TOOLS), usage=usage)
    call(gw, "discover_tools", {"query": "write something down"}, session=session)
    call(gw, "invoke_tool", invocation, session=session)
    assert usage.export() == [], why


def test_a_tool_the_search_did_not_show_is_recorded_as_a_miss() -> None:
    tracker = SessionTracker()
    tracker.searched("ana", "s", "pay the bill", ["billing_list_invoices"])
    assert tracker.invoked("ana", "s", "billing_pay_invoice") == ("pay the bill", True)
    tracker.searched("ana", "s", "list invoices", ["billing_list_invoices"])
    assert tracker.invoked("ana", "s", "billing_list_invoices") == ("list invoices", False)
    assert tracker.invoked("ana", "s", "billing_list_invoices") is None  # the same pair once per session
    assert tracker.invoked("ana", "other", "billing_list_invoices") is None  # no search in that session


def test_a_search_pairs_only_with_its_own_principals_calls_that_follow_it_soon() -> None:
    now = [0.0]
    tracker = SessionTracker(window=60.0, clock=lambda: now[0])
    tracker.searched("ana", "s", "pay the bill", [])
    assert tracker.invoked("bob", "s", "billing_pay_invoice") is None  # ana's session id, bob's call
    now[0] = 61.0
    assert tracker.invoked("ana", "s", "billing_pay_invoice") is None  # too long after the search
    tracker.searched("ana", "s", "pay the bill", [])
    assert tracker.invoked("ana", "s", "billing_pay_invoice") == ("pay the bill", True)


def test_one_principals_flood_of_session_ids_does_not_drop_anothers_search() -> None:
    tracker = SessionTracker()  # the defaults: 10,000 sessions, 1,000 of one principal
    tracker.searched("bob", "b", "pay the bill", [])
    for n in range(12_000):  # a client naming a new session id with each search
        tracker.searched("mallory", f"m{n}", "anything", [])
    assert tracker.invoked("bob", "b", "billing_pay_invoice") == ("pay the bill", True)
    assert tracker.invoked("mallory", "m11999", "billing_pay_invoice") == ("anything", True)  # its newest
    assert tracker.invoked("mallory", "m10999", "billing_pay_invoice") is None  # forgotten: its own went


def test_when_every_session_is_taken_the_principal_holding_the_most_forgets_its_own_oldest() -> None:
    tracker = SessionTracker(max_sessions=4, max_sessions_per_principal=3)
    tracker.searched("ana", "a1", "pay the bill", [])
    for n in range(3):
        tracker.searched("mallory", f"m{n}", "anything", [])
    tracker.searched("bob", "b1", "send the invoice", [])  # all four taken: mallory holds the most
    assert tracker.invoked("mallory", "m0", "t") is None
    assert tracker.invoked("ana", "a1", "t") == ("pay the bill", True)
    tracker.searched("ana", "a2", "list invoices", [])  # ana as many as mallory, the new one counted
    assert tracker.invoked("ana", "a1", "t") is None  # so her own oldest went, not another's
    tracker.searched("mallory", "m3", "anything", [])  # mallory holds the most again
    assert tracker.invoked("mallory", "m1", "t") is None
    assert tracker.invoked("bob", "b1", "t") == ("send the invoice", True)
    assert tracker.invoked("ana", "a2", "t") == ("list invoices", True)
    assert tracker.invoked("mallory", "m3", "t") == ("anything", True)


def test_a_session_idle_past_its_ttl_makes_room_before_anyone_active_is_forgotten() -> None:
    now = [0.0]
    tracker = SessionTracker(max_sessions=2, ttl=100.0, clock=lambda: now[0])
    tracker.searched("ana", "idle", "old", [])
    now[0] = 50.0
    tracker.searched("bob", "b", "pay the bill", [])
    now[0] = 120.0
    tracker.searched("mallory", "m", "anything", [])  # ana's session is idle: it goes, not bob's
    assert tracker.invoked("bob", "b", "t") == ("pay the bill", True)


def test_one_principal_cannot_push_a_tool_up_for_everyone() -> None:
    clock = Clock()
    store = SqliteUsageStore(
        limits=Limits(max_count_per_principal=3, max_pairs_per_principal_per_day=5), clock=clock
    )
    store.add([Pair("send money", "billing_pay_invoice", "mallory")] * 50)
    (evidence,) = store.evidence()
    assert evidence.weight == 3.0  # 50 repetitions count as 3, and only 5 were accepted today
    assert store.add([Pair("another query", "billing_pay_invoice", "mallory")]) == 0  # the day's cap
    assert store.add([Pair("another query", "billing_pay_invoice", "ana")]) == 1  # others still teach
    clock.now += 86_400
    assert store.add([Pair("another query", "billing_pay_invoice", "mallory")]) == 1  # a new day


def test_a_tool_keeps_its_most_frequent_then_most_recent_queries() -> None:
    clock = Clock()
    store = SqliteUsageStore(limits=Limits(max_queries_per_tool=2), clock=clock)
    store.add([Pair("often", "t", "a"), Pair("often", "t", "b"), Pair("once", "t", "a")])
    clock.now += 10
    store.add([Pair("recent", "t", "c")])
    assert [e.query for e in store.evidence()] == ["often", "recent"]


def test_a_tool_keeps_two_hundred_past_requests_by_default() -> None:
    # Measured on a history split: keeping 100 dropped popular tools' requests and cost R@5.
    store = SqliteUsageStore()
    store.add([Pair(f"request number {n}", "t", f"user{n}") for n in range(250)], daily_cap=False)
    assert len(store.evidence()) == 200


def test_weights_decay_and_old_pairs_are_dropped() -> None:
    clock = Clock()
    store = SqliteUsageStore(limits=Limits(half_life_days=10, retention_days=30), clock=clock)
    store.add([Pair("q", "t", "a")])
    clock.now += 10 * 86_400
    assert store.evidence()[0].weight == pytest.approx(0.5)
    clock.now += 21 * 86_400
    assert store.evidence() == []


def test_a_learned_pair_never_reveals_a_hidden_tool() -> None:
    others = sorted({d.category for d in Catalog(TOOLS)})
    policy = Policy(
        rules=(
            Rule("allow", categories=("support",), roles=("support",)),
            Rule("allow", categories=tuple(others)),
        ),
        default="deny",
    )
    usage = learning()
    usage.import_lines(
        json.dumps({"query": q, "tools": ["support_refund_order"]}) for q in ("refund", "my order")
    )
    hidden = Gateway(Catalog([*TOOLS, *HIDDEN]), policy=policy, usage=usage, search_cache_dir=False)
    plain = Gateway(Catalog(TOOLS), search_cache_dir=False)
    guest = Principal("guest")
    for request in [*REQUESTS, {"query": "refund"}, {"query": "my order"}]:
        assert (
            call(hidden, "discover_tools", request, who=guest).output
            == call(plain, "discover_tools", request, who=guest).output
        )
    support = Principal("sam", frozenset({"support"}))
    assert as_page(hidden.discover(support, query="my order"))["tools"][0]["name"] == "support_refund_order"


def test_pairs_of_tools_that_left_the_catalog_are_ignored() -> None:
    usage = learning()
    usage.import_lines([json.dumps({"query": "settle my bill", "tools": ["gone_tool"]})])
    gw = Gateway(Catalog(TOOLS), usage=usage, search_cache_dir=False)
    plain = Gateway(Catalog(TOOLS), search_cache_dir=False)
    assert gw.discover(ANA, query="settle my bill") == plain.discover(ANA, query="settle my bill")


def test_an_exact_tool_name_stays_first_whatever_was_learned() -> None:
    usage = learning()
    # Requests spelt like a tool's name that once ended in another tool.
    usage.import_lines(
        json.dumps({"query": q, "tools": ["notes_archive"]}) for q in ("notes_create", " notes_create ")
    )
    gw = Gateway(Catalog(TOOLS), usage=usage, search_cache_dir=False)
    for query in ("notes_create", "  Notes_Create "):
        assert as_page(gw.discover(ANA, query=query))["tools"][0]["name"] == "notes_create"


def test_every_search_is_counted_for_stats_though_a_search_never_writes_the_store(tmp_path: Path) -> None:
    usage = learning(tmp_path)
    gw = Gateway(Catalog(TOOLS), usage=usage, search_cache_dir=False)
    for _ in range(150):  # more than one batch: the background writer writes some of them
        gw.discover(ANA, query="jot down a note")
    gw.discover(ANA, query="zzqx vvmk")
    stats = usage.stats()  # waits for the writer, then writes the rest
    assert stats["never_followed"] == [{"query": "jot down a note", "searches": 150}]
    assert stats["found_nothing"] == [{"query": "zzqx vvmk", "searches": 1}]
    gw.discover(ANA, query="zzqx vvmk")
    usage.close()  # writes what is left
    assert learning(tmp_path).stats()["found_nothing"] == [{"query": "zzqx vvmk", "searches": 2}]


def test_a_changed_store_is_indexed_in_the_background_while_searches_use_the_last_index(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    usage = learning()
    usage.import_lines([json.dumps({"query": "landlord stuff", "tools": ["notes_archive"]})])
    gw = Gateway(Catalog(TOOLS), usage=usage, search_cache_dir=False)
    before = as_page(gw.discover(ANA, query="landlord stuff"))  # the first snapshot and its index: built now
    assert before["tools"][0]["name"] == "notes_archive"
    builders: list[threading.Thread] = []
    release = threading.Event()

    def building(*args: Any, **kwargs: Any) -> LearnedIndex:
        builders.append(threading.current_thread())
        if threading.current_thread() is not threading.main_thread():
            release.wait(timeout=30)  # the build takes as long as the test wants
        return LearnedIndex(*args, **kwargs)

    monkeypatch.setattr(learning_module, "LearnedIndex", building)
    usage.import_lines([json.dumps({"query": "landlord stuff", "tools": ["notes_delete"]})])
    assert gw.discover(ANA, query="landlord stuff") == before  # the build has not finished
    release.set()
    usage.close()  # waits for the build
    assert builders and threading.main_thread() not in builders


def test_forgetting_one_principal_or_everything(tmp_path: Path) -> None:
    usage = learning(tmp_path)
    usage.store.add([Pair("a", "notes_create", "ana"), Pair("b", "notes_create", "bob")])
    assert usage.forget("ana") == 1
    assert usage.export() == [{"query": "b", "tools": ["notes_create"]}]
    assert usage.forget() == 1
    assert usage.export() == []


def test_import_reports_bad_lines_and_keeps_the_good_ones() -> None:
    usage = learning()
    lines = [
        '{"query": "pay", "tools": ["billing_pay_invoice"]}',
        "not json",
        '{"query": "", "tools": []}',
        "",
    ]
    recorded, problems = usage.import_lines(lines)
    assert recorded == 1
    assert problems == [
        'line 2: expected {"query": "...", "tools": ["tool_name", ...]}',
        'line 3: expected {"query": "...", "tools": ["tool_name", ...]}',
    ]


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, Any]:
    code = main(list(argv))
    out = capsys.readouterr().out
    return code, json.loads(out) if out.strip().startswith(("{", "[")) else out


def test_the_usage_commands_import_export_stats_and_forget(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "config.toml"
    config.write_text(f'catalogs = ["tests.gateway.sample_tools:provide"]\ndata_dir = "{tmp_path}"\n')
    monkeypatch.setenv("GATEWAY_CONFIG", str(config))
    history = tmp_path / "history.jsonl"
    history.write_text(
        '{"query": "jot this down", "tools": ["notes_create"]}\n'
        '{"query": "bin that note", "tools": ["notes_delete", "elsewhere_tool"]}\n'
    )
    code, out = _cli(capsys, "usage", "import", str(history), "--json")
    assert code == 0 and out["imported"] == 2 and out["unknown_tools"] == ["elsewhere_tool"]
    code, out = _cli(capsys, "usage", "stats", "--json")
    assert out["pairs"] == 2 and out["tools"] == 2
    exported = tmp_path / "out.jsonl"
    assert _cli(capsys, "usage", "export", str(exported))[0] == 0
    assert [json.loads(line) for line in exported.read_text().splitlines()] == [
        {"query": "bin that note", "tools": ["notes_delete"]},
        {"query": "jot this down", "tools": ["notes_create"]},
    ]
    code, out = _cli(capsys, "discover", "jot this down", "--json")
    assert out["tools"][0]["name"] == "notes_create"
    code = main(["usage", "forget", "import"])  # no terminal to ask on, and no --yes
    assert (code, capsys.readouterr().err) == (
        2,
        "gateway: gateway usage forget deletes what import taught: pass --yes to confirm\n",
    )
    assert _cli(capsys, "usage", "stats", "--json")[1]["pairs"] == 2
    code, out = _cli(capsys, "usage", "forget", "import", "--json", "--yes")
    assert out["forgotten"] == 2
    assert _cli(capsys, "usage", "stats", "--json")[1]["pairs"] == 0

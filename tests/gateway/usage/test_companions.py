"""Companions: the tools one request needed together, named under a hit of discover_tools and given
with a schema when asked, under learning's trust rules (no source names a companion for others
alone, a destructive one only from one's own use, a hidden one never)."""

from __future__ import annotations

from gateway import Catalog, Gateway, Principal, ToolContext, run_sync
from gateway.policy import Policy, Rule
from gateway.usage import SqliteUsageStore, Usage
from gateway.usage.companions import Companions
from gateway.usage.store import IMPORT_PRINCIPAL, Evidence

from ..sample_tools import ALL_TOOLS

ANA, BOB = Principal("ana"), Principal("bob")
REQUEST = "jot the rent down and look up last month"
TOOLS = {d.name: d for d in Catalog(ALL_TOOLS)}


def _gateway(policy: Policy | None = None, **options: object) -> tuple[Gateway, Usage]:
    usage = Usage(SqliteUsageStore(), check_seconds=0.0, **options)  # type: ignore[arg-type]
    kwargs = {"policy": policy} if policy is not None else {}
    return Gateway(Catalog(ALL_TOOLS), usage=usage, search_cache_dir=False, **kwargs), usage  # type: ignore[arg-type]


def _one_request_two_tools(gw: Gateway, who: Principal, session: str) -> None:
    """A search, then two successful calls in the same session: one request needing both tools."""
    ctx = ToolContext(principal=who, session_id=session)
    run_sync(gw.call("discover_tools", {"query": REQUEST}, ctx))
    for name in ("notes_create", "notes_search"):
        done = run_sync(gw.call("invoke_tool", {"tool_name": name, "parameters": {"title": "Rent"}}, ctx))
        assert done.status == "ok", done


def _hits(gw: Gateway, usage: Usage, who: Principal, query: str) -> list[dict[str, object]]:
    usage.learned(gw.visible(who), wait=True)  # the store read again now (a server does it in the background)
    out = run_sync(gw.call("discover_tools", {"query": query}, ToolContext(principal=who, session_id="look")))
    return list(out.output["tools"])


def _page(gw: Gateway, usage: Usage, who: Principal, query: str = "create a note") -> dict[str, list[str]]:
    return {str(t["name"]): t["with"] for t in _hits(gw, usage, who, query) if "with" in t}  # type: ignore[misc]


def test_tools_called_after_one_search_are_named_with_each_other_for_who_used_them() -> None:
    gw, usage = _gateway()
    assert _page(gw, usage, ANA) == {}  # no history: no companion, the page as it was
    _one_request_two_tools(gw, ANA, "s1")
    assert _page(gw, usage, ANA) == {"notes_create": ["notes_search"], "notes_search": ["notes_create"]}
    assert _page(gw, usage, BOB) == {}  # one principal's use names nothing for another


def test_only_the_first_three_hits_name_their_companions() -> None:
    gw, usage = _gateway()
    _one_request_two_tools(gw, ANA, "s1")
    hits = _hits(gw, usage, ANA, "notes")
    names = [t["name"] for t in hits]
    assert names.index("notes_create") < 3 <= names.index("notes_search")  # the page's order, as it is
    assert [t.get("with") for t in hits] == [
        ["notes_search"] if t["name"] == "notes_create" else None for t in hits
    ]


def test_others_see_a_companion_once_enough_principals_taught_it() -> None:
    gw, usage = _gateway()
    for who, session in ((ANA, "a"), (Principal("cy"), "c")):
        _one_request_two_tools(gw, who, session)
    assert _page(gw, usage, BOB) == {}  # two principals: not yet
    _one_request_two_tools(gw, Principal("di"), "d")
    assert _page(gw, usage, BOB)["notes_create"] == ["notes_search"]  # three distinct principals


def test_one_principal_in_many_sessions_is_still_one_source() -> None:
    gw, usage = _gateway()
    for session in ("s1", "s2", "s3", "s4", "s5"):
        _one_request_two_tools(gw, ANA, session)
    assert _page(gw, usage, BOB) == {}


def test_a_companion_the_caller_may_not_see_is_never_named() -> None:
    policy = Policy(rules=(Rule("deny", names=("notes_search",), roles=("guest",)),))
    gw, usage = _gateway(policy, min_principals=1)
    _one_request_two_tools(gw, ANA, "s1")
    guest = Principal("gus", roles=frozenset({"guest"}))
    assert _page(gw, usage, ANA)["notes_create"] == ["notes_search"]
    assert "notes_create" not in _page(gw, usage, guest)
    schema = run_sync(
        gw.call(
            "get_tool_schema",
            {"tool_name": "notes_create", "with_companions": True},
            ToolContext(principal=guest, session_id="g"),
        )
    )
    assert schema.output["companions"] == []


def test_get_tool_schema_gives_the_companions_schemas_when_asked_and_only_then() -> None:
    gw, usage = _gateway()
    _one_request_two_tools(gw, ANA, "s1")
    usage.learned(gw.visible(ANA), wait=True)
    ctx = ToolContext(principal=ANA, session_id="x")
    plain = run_sync(gw.call("get_tool_schema", {"tool_name": "notes_create"}, ctx)).output
    asked = run_sync(gw.call("get_tool_schema", {"tool_name": "notes_create", "with_companions": True}, ctx))
    assert "companions" not in plain
    assert [c["name"] for c in asked.output["companions"]] == ["notes_search"]
    assert asked.output["companions"][0]["parameters"] == gw.schema(ANA, "notes_search")["parameters"]
    wrong = run_sync(gw.call("get_tool_schema", {"tool_name": "notes_create", "with_companions": "yes"}, ctx))
    assert wrong.status == "error" and wrong.error is not None and wrong.error.code == "invalid_arguments"


def _evidence(query: str, tool: str, *by: tuple[str, float]) -> Evidence:
    return Evidence(query, tool, sum(w for _, w in by), tuple(by))


def test_a_destructive_companion_is_named_only_from_the_callers_own_use() -> None:
    rows = [
        _evidence(f"q{i}", tool, (who, 1.0))
        for i, who in enumerate(("ana", "cy", "di"))
        for tool in ("notes_create", "notes_archive")  # notes_archive is destructive (no flags said)
    ]
    companions = Companions(rows, min_principals=3)
    assert TOOLS["notes_archive"].is_destructive
    assert companions.of("notes_create", "bob", TOOLS.get) == []  # three others taught it: not enough
    assert companions.of("notes_create", "ana", TOOLS.get) == ["notes_archive"]
    assert companions.of("notes_archive", "bob", TOOLS.get) == [
        "notes_create"
    ]  # the other way: not destructive


def test_an_import_counts_for_everyone_and_a_weak_or_crowded_request_names_nothing() -> None:
    imported = Companions(
        [_evidence("q", t, (IMPORT_PRINCIPAL, 1.0)) for t in ("notes_create", "notes_search")]
    )
    assert imported.of("notes_create", "bob", TOOLS.get) == ["notes_search"]
    faded = Companions(
        [_evidence("q", t, ("ana", 0.3)) for t in ("notes_create", "notes_search")], min_principals=1
    )
    assert faded.of("notes_create", "ana", TOOLS.get) == []  # old evidence, decayed below MIN_WEIGHT
    followed = [*TOOLS, "mail_send"]  # seven tools after one request: it says nothing of pairs
    crowded = Companions([_evidence("q", name, ("ana", 1.0)) for name in followed], min_principals=1)
    assert crowded.of("notes_create", "ana", TOOLS.get) == []


def test_at_most_two_are_named_strongest_first() -> None:
    rows = [
        *(_evidence(f"a{i}", t, ("ana", 1.0)) for i in range(3) for t in ("notes_create", "notes_search")),
        *(_evidence(f"b{i}", t, ("ana", 1.0)) for i in range(2) for t in ("notes_create", "files_read")),
        _evidence("c", "notes_create", ("ana", 1.0)),
        _evidence("c", "files_boom", ("ana", 1.0)),
    ]
    assert Companions(rows, min_principals=1).of("notes_create", "ana", TOOLS.get) == [
        "notes_search",
        "files_read",
    ]

"""Named toolsets: a principal confined to one sees exactly what it holds, on every path a denied tool is hidden.

Each test goes through the meta-tools, as a model does: discovery (pages, totals, suggestions),
schemas, invocation, the audit log, ranking and learning. A tool outside the toolset must change
nothing of what the confined caller is told, compared with a catalog that does not hold it at all.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gateway import (
    Catalog,
    ConfirmationGate,
    Gateway,
    MemoryAuditLog,
    Policy,
    Principal,
    Rule,
    ToolContext,
    run_sync,
)
from gateway.errors import ConfigError
from gateway.named_toolsets import NamedToolset, Toolsets, confine, session_of
from gateway.runtime import policy_from
from gateway.settings.loading import load_settings
from gateway.usage import SqliteUsageStore, Usage
from tests.discovery_answers import as_page

from . import cli_support, test_discovery_visibility
from .sample_tools import ALL_TOOLS
from .test_discovery_visibility import HIDDEN, REQUESTS, VISIBLE, _answers

TOOLS = [*ALL_TOOLS, *VISIBLE]
# Everything but the support tools: by category, by glob, by source (the sample tools are built-in).
EVERYTHING_BUT_SUPPORT = NamedToolset(
    "desk", tools=("notes_*", "files_*", "mail_*"), categories=("billing", "calendar")
)
SUPPORT = NamedToolset("support", categories=("support",))
TOOLSETS = Toolsets((EVERYTHING_BUT_SUPPORT, SUPPORT, NamedToolset("all", sources=("builtin",))))
ANA = Principal("ana")
ANA_AT_DESK = confine(ANA, ["desk"])


def call(gw: Gateway, tool: str, args: dict[str, Any], who: Principal, session: str = "s1") -> Any:
    return run_sync(gw.call(tool, args, ToolContext(principal=who, session_id=session)))


engine = (
    test_discovery_visibility.engine
)  # the fixture: lexical, and hybrid when the search extra is installed


def test_a_tool_outside_the_toolset_changes_no_answer_of_discovery(engine: str) -> None:
    confined = Gateway(Catalog([*TOOLS, *HIDDEN]), policy=Policy(toolsets=TOOLSETS), search_cache_dir=False)
    without = Gateway(Catalog(TOOLS), search_cache_dir=False)
    assert _answers(confined, ANA_AT_DESK) == _answers(without, ANA)
    # The tools are there for a caller not confined, or confined to a toolset holding them.
    assert as_page(confined.discover(ANA, query="open a ticket"))["tools"][0]["name"] == "support_open_ticket"
    assert as_page(confined.discover(confine(ANA, ["all"]), query="open a ticket"))["total"] > 0
    assert [d.name for d in confined.visible(confine(ANA, ["support"]))] == sorted(d.name for d in HIDDEN)


def test_schema_and_invoke_of_a_tool_outside_the_toolset_answer_as_for_a_tool_that_does_not_exist() -> None:
    audit = MemoryAuditLog()
    gw = Gateway(Catalog([*TOOLS, *HIDDEN]), policy=Policy(toolsets=TOOLSETS), audit=audit)
    plain = Gateway(Catalog(TOOLS))
    for name in ("support_refund_order", "support_refund_ordr"):
        schema = call(gw, "get_tool_schema", {"tool_name": name}, ANA_AT_DESK)
        assert schema.error == call(plain, "get_tool_schema", {"tool_name": name}, ANA).error
        invoked = call(gw, "invoke_tool", {"tool_name": name, "parameters": {"title": "x"}}, ANA_AT_DESK)
        assert invoked.error == call(plain, "invoke_tool", {"tool_name": name, "parameters": {}}, ANA).error
        assert invoked.error is not None and invoked.error.code == "unknown_tool"
    assert [r.outcome for r in audit.records if r.tool == "support_refund_order"] == ["denied"]
    # Inside the toolset the same call goes on (to the confirmation gate: it changes something).
    refund = {"tool_name": "support_refund_order", "parameters": {"title": "x"}}
    assert call(gw, "invoke_tool", refund, confine(ANA, ["support"])).status == "confirmation_required"


def test_a_toolset_never_widens_what_the_policy_allows() -> None:
    policy = Policy(rules=(Rule("deny", categories=("support",), roles=("guest",)),), toolsets=TOOLSETS)
    gw = Gateway(Catalog([*TOOLS, *HIDDEN]), policy=policy, search_cache_dir=False)
    guest = Principal("gus", frozenset({"guest"}))
    assert gw.visible(confine(guest, ["support"])) == ()
    assert len(gw.visible(confine(ANA, ["support"]))) == len(HIDDEN)
    # Two toolsets: only what both hold; an unknown one holds nothing.
    assert gw.visible(confine(ANA, ["support", "desk"])) == ()
    assert gw.visible(confine(ANA, ["support", "all"])) == gw.visible(confine(ANA, ["support"]))
    assert gw.visible(confine(ANA, ["nosuch"])) == ()


def _learning() -> Usage:
    return Usage(SqliteUsageStore(":memory:"), check_seconds=0.0, min_principals=1)


def test_pairs_recorded_in_a_toolset_never_mention_a_tool_outside_it() -> None:
    usage = _learning()
    gate = ConfirmationGate(approver=lambda pending: True)  # the host approves every call
    gw = Gateway(Catalog([*TOOLS, *HIDDEN]), policy=Policy(toolsets=TOOLSETS), usage=usage, gate=gate)
    ticket = {"tool_name": "support_open_ticket", "parameters": {"title": "x"}}
    # A search in the toolset, then the same session id used outside it to call a tool the toolset lacks.
    call(gw, "discover_tools", {"query": "complaint"}, ANA_AT_DESK)
    assert call(gw, "invoke_tool", ticket, ANA_AT_DESK).error.code == "unknown_tool"
    assert call(gw, "invoke_tool", ticket, ANA).ok
    assert usage.export() == []
    # Inside the toolset, a search and a call of a tool in it teach as ever.
    call(gw, "invoke_tool", {"tool_name": "notes_create", "parameters": {"title": "x"}}, ANA_AT_DESK)
    assert usage.export() == [{"query": "complaint", "tools": ["notes_create"]}]
    assert session_of(ANA_AT_DESK, "default") == "default"  # no session still pairs with nothing


def test_evidence_about_tools_outside_the_toolset_never_moves_its_ranking(engine: str) -> None:
    usage = _learning()
    usage.import_lines(
        json.dumps({"query": q, "tools": ["support_refund_order", "support_open_ticket"]})
        for q in ("refund", "my order", "send an email", "pay an invoice", "notes")
    )
    learned = Gateway(
        Catalog([*TOOLS, *HIDDEN]), policy=Policy(toolsets=TOOLSETS), usage=usage, search_cache_dir=False
    )
    plain = Gateway(Catalog(TOOLS), search_cache_dir=False)
    for request in [*REQUESTS, {"query": "refund"}, {"query": "my order"}]:
        assert (
            call(learned, "discover_tools", request, ANA_AT_DESK).output
            == call(plain, "discover_tools", request, ANA).output
        ), request
    # The evidence is there: it moves the ranking of a caller who may see those tools.
    assert as_page(learned.discover(ANA, query="my order"))["tools"][0]["name"].startswith("support_")


def test_toolsets_are_read_from_the_configuration_and_bad_ones_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(
        '[[toolsets]]\nname = "support"\ncategories = ["support"]\nsources = ["openapi:zendesk"]\n'
        'clients = ["support-bot"]\nscopes = ["toolset:support"]\n'
    )
    policy = policy_from(load_settings(path, environ={}))
    support = policy.toolsets.get("support")
    assert support is not None and support.clients == ("support-bot",)
    assert policy.toolsets.bound(client="support-bot") == {"support"}
    assert policy.toolsets.bound(client="other", scopes=["openid", "toolset:support"]) == {"support"}
    assert policy.toolsets.bound(client="other", scopes=["openid"]) == frozenset()
    for body, said in [
        ('[[toolsets]]\nname = "empty"\n', "give tools, categories or sources"),
        (
            '[[toolsets]]\nname = "a"\ntools=["x"]\n[[toolsets]]\nname = "a"\ntools=["y"]\n',
            "must be unique: a",
        ),
        ('[[toolsets]]\nname = "Has Space"\ntools=["x"]\n', "should match pattern"),
        (
            '[[serve.tokens]]\nprincipal = "bot"\nsha256 = "' + "0" * 64 + '"\ntoolset = "nosuch"\n',
            "not configured: nosuch",
        ),
        (
            '[serve.oauth]\nissuer = "https://id.example.com"\nscopes = ["mcp:tools"]\n'
            '[[toolsets]]\nname = "support"\ntools = ["x"]\nscopes = ["toolset:support", "mcp:tools"]\n',
            "toolset scopes that serve.oauth.scopes requires of every token: support \\(mcp:tools\\); "
            "every OAuth token would be confined to them",
        ),
    ]:
        path.write_text(body)
        with pytest.raises(ConfigError, match=said):
            load_settings(path, environ={})


config = cli_support.config  # the fixture


def test_gateway_discover_with_a_toolset_sees_only_its_tools(
    config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config.write_text(
        config.read_text() + '[[toolsets]]\nname = "reading"\ntools = ["files_*", "notes_search"]\n'
    )
    code, out, _ = cli_support.run(capsys, "discover", "--json", "--toolset", "reading")
    assert code == 0
    assert {c["name"]: c["tools"] for c in json.loads(out)["categories"]} == {"files": 2, "notes": 1}
    code, out, _ = cli_support.run(capsys, "discover", "--json", "delete a note", "--toolset", "reading")
    assert code == 0 and "notes_delete" not in out
    code, out, _ = cli_support.run(capsys, "catalog", "--json", "--toolset", "reading")
    assert code == 0 and json.loads(out)["total_tools"] == 3
    code, out, _ = cli_support.run(capsys, "schema", "notes_delete", "--json", "--toolset", "reading")
    assert code != 0 and json.loads(out)["error"]["code"] == "unknown_tool"
    code, out, err = cli_support.run(capsys, "discover", "--toolset", "nosuch")
    assert code == 2 and out == ""
    assert err == "gateway: no toolset named 'nosuch'; the configured ones: reading\n"


def test_a_person_is_told_a_tool_exists_outside_the_toolset(
    config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config.write_text(config.read_text() + '[[toolsets]]\nname = "reading"\ntools = ["files_*"]\n')
    code, out, _ = cli_support.run(capsys, "schema", "notes_delete", "--toolset", "reading")
    assert code != 0
    assert "A tool named 'notes_delete' exists, but not in toolset reading." in out
    assert "Run without --toolset" in out

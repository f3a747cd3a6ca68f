"""Who may use a file tool: the user's roles and the agent's identity, end to end through the meta-tools."""

from __future__ import annotations

from pathlib import Path

import pytest

from gateway import Catalog, Gateway, MemoryAuditLog, Policy, Principal, Rule
from gateway.filetools.directories import FileTools

from ..filetools_support import TEXT_SCHEMA, call, invoke, write_tool

ANYONE = Principal("guest")
STAFF = Principal("sam", frozenset({"staff"}))
PLANNER_FOR_GUEST = Principal("guest", agent="planner")
STAFF_PLANNER = Principal("sam", frozenset({"staff"}), agent="planner")
STAFF_WRITER = Principal("sam", frozenset({"staff"}), agent="writer")


@pytest.fixture
def tools(tmp_path: Path) -> Path:
    folder = tmp_path / "tools"
    write_tool(folder, "shared_echo", parameters=TEXT_SCHEMA)
    write_tool(folder, "staff_report", parameters=TEXT_SCHEMA, roles=["staff", "admin"])
    write_tool(folder, "planner_notes", parameters=TEXT_SCHEMA, agents=["planner"])
    write_tool(folder, "staff_planner_plan", parameters=TEXT_SCHEMA, roles=["staff"], agents=["planner"])
    return folder


@pytest.fixture
def audit() -> MemoryAuditLog:
    return MemoryAuditLog()


def gateway(tools: Path, audit: MemoryAuditLog, policy: Policy | None = None) -> Gateway:
    catalog = Catalog()
    FileTools([tools], catalog=catalog).refresh()
    return Gateway(catalog, audit=audit, policy=policy)


def discovered(gw: Gateway, principal: Principal) -> list[str]:
    found = call(gw, "discover_tools", {"categories": ["test"], "limit": 50}, principal)
    return [t["name"] for t in found["tools"]]


@pytest.mark.parametrize(
    ("principal", "visible"),
    [
        (ANYONE, ["shared_echo"]),
        (STAFF, ["shared_echo", "staff_report"]),
        (PLANNER_FOR_GUEST, ["planner_notes", "shared_echo"]),
        (STAFF_PLANNER, ["planner_notes", "shared_echo", "staff_planner_plan", "staff_report"]),
        (STAFF_WRITER, ["shared_echo", "staff_report"]),
    ],
)
def test_discovery_lists_only_the_tools_the_user_and_the_agent_may_both_use(
    tools: Path, audit: MemoryAuditLog, principal: Principal, visible: list[str]
) -> None:
    gw = gateway(tools, audit)
    assert discovered(gw, principal) == visible
    found = call(gw, "discover_tools", {"query": "tool for tests", "limit": 50}, principal)
    assert sorted(t["name"] for t in found["tools"]) == visible
    assert call(gw, "discover_tools", {}, principal)["total_tools"] == len(visible)


def test_a_tool_the_caller_may_not_use_has_no_schema_as_if_it_did_not_exist(
    tools: Path, audit: MemoryAuditLog
) -> None:
    gw = gateway(tools, audit)
    hidden = call(gw, "get_tool_schema", {"tool_name": "staff_report"}, ANYONE)
    missing = call(gw, "get_tool_schema", {"tool_name": "staff_repork"}, ANYONE)
    assert hidden["error"]["code"] == missing["error"]["code"] == "unknown_tool"
    assert hidden["error"]["message"] == "There is no tool named 'staff_report'."
    assert "staff_report" not in str(missing)
    assert call(gw, "get_tool_schema", {"tool_name": "staff_report"}, STAFF)["name"] == "staff_report"


def test_roles_and_agents_are_checked_before_the_parameters(tools: Path, audit: MemoryAuditLog) -> None:
    gw = gateway(tools, audit)
    # Invalid parameters for a tool the agent may not use: the answer is "no such tool", nothing more.
    refused = invoke(gw, "staff_planner_plan", {"bogus": 1}, STAFF_WRITER)
    assert refused["error"]["code"] == "unknown_tool"
    assert "problems" not in refused["error"]
    assert [(r.tool, r.outcome, r.params) for r in audit.records] == [("staff_planner_plan", "denied", None)]


def test_a_permitted_call_runs_and_the_script_knows_who_called(tools: Path, audit: MemoryAuditLog) -> None:
    gw = gateway(tools, audit)
    out = invoke(gw, "staff_planner_plan", {"text": "next week"}, STAFF_PLANNER)
    assert out["stdin"] == {"text": "next week"}
    assert (out["env"]["GATEWAY_PRINCIPAL"], out["env"]["GATEWAY_AGENT"]) == ("sam", "planner")
    assert [(r.principal, r.outcome) for r in audit.records] == [("sam", "executed")]


def test_policy_rules_still_apply_to_file_tools(tools: Path, audit: MemoryAuditLog) -> None:
    deny = Policy(rules=(Rule("deny", names=("staff_*",), roles=("staff",)),))
    gw = gateway(tools, audit, deny)
    assert discovered(gw, STAFF_PLANNER) == ["planner_notes", "shared_echo"]

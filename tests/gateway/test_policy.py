"""Policy: denied tools are invisible to all three meta-tools; roles decide who may use what."""

from __future__ import annotations

import json
from typing import Any

from gateway import Catalog, Gateway, MemoryAuditLog, Policy, Principal, Rule, ToolContext, render, run_sync

from .sample_tools import ALL_TOOLS, Calls

READERS_ONLY_READ = Policy(
    (
        Rule("deny", categories=("files",)),
        Rule("allow", actions=("search", "read"), roles=("reader",)),
        Rule("allow", roles=("admin",)),
    ),
    default="deny",
)


def meta(gw: Gateway, tool: str, args: dict[str, Any], principal: Principal) -> Any:
    return json.loads(render(run_sync(gw.call(tool, args, ToolContext(principal=principal)))))


def test_a_denied_tool_is_invisible_to_discovery_schema_and_invoke(calls: Calls) -> None:
    gw = Gateway(Catalog(ALL_TOOLS), policy=Policy((Rule("deny", names=("notes_del*",)),)))
    who = Principal()
    overview = meta(gw, "discover_tools", {}, who)
    assert overview["total_tools"] == 5 and "delete" not in overview["actions"]
    assert "notes_delete" not in json.dumps(meta(gw, "discover_tools", {"query": "delete note"}, who))
    assert "notes_delete" not in json.dumps(meta(gw, "discover_tools", {"query": "notes_delete"}, who))
    hidden = meta(gw, "get_tool_schema", {"tool_name": "notes_delete"}, who)
    missing = meta(gw, "get_tool_schema", {"tool_name": "notes_nothing"}, who)
    assert hidden["error"]["code"] == missing["error"]["code"] == "unknown_tool"
    assert "notes_delete" not in hidden["error"]["did_you_mean"]
    invoked = meta(gw, "invoke_tool", {"tool_name": "notes_delete", "parameters": {"note_id": "1"}}, who)
    assert invoked["error"]["code"] == "unknown_tool" and calls == []


def test_denied_and_unknown_tools_answer_identically() -> None:
    gw = Gateway(Catalog(ALL_TOOLS), policy=Policy((Rule("deny", names=("files_read",)),)))
    denied = meta(gw, "invoke_tool", {"tool_name": "files_read", "parameters": {}}, Principal())
    gw2 = Gateway(Catalog([t for t in ALL_TOOLS if t.__name__ != "files_read"]))
    unknown = meta(gw2, "invoke_tool", {"tool_name": "files_read", "parameters": {}}, Principal())
    assert denied == unknown


def test_roles_decide_who_sees_what() -> None:
    gw = Gateway(Catalog(ALL_TOOLS), policy=READERS_ONLY_READ)
    reader = meta(gw, "discover_tools", {}, Principal("r", frozenset({"reader"})))
    admin = meta(gw, "discover_tools", {}, Principal("a", frozenset({"admin"})))
    nobody = meta(gw, "discover_tools", {}, Principal("n"))
    assert reader["actions"] == {"search": 1}
    assert admin["total_tools"] == 4  # deny on files beats the admin allow
    assert nobody["total_tools"] == 0


def test_a_tools_own_permission_check_refuses_with_a_structured_audited_error(calls: Calls) -> None:
    audit = MemoryAuditLog()
    gw = Gateway(Catalog(ALL_TOOLS), audit=audit)
    bad = meta(
        gw, "invoke_tool", {"tool_name": "files_read", "parameters": {"path": "/etc/passwd"}}, Principal()
    )
    good = meta(
        gw, "invoke_tool", {"tool_name": "files_read", "parameters": {"path": "/srv/files/a"}}, Principal()
    )
    assert bad["error"] == {
        "code": "permission_denied",
        "message": "Paths must stay under /srv/files/.",
        "next_step": "Do not retry; tell the user this action is not permitted.",
    }
    assert good == "contents of /srv/files/a"
    assert [(r.outcome, r.error_code) for r in audit.records] == [
        ("denied", "permission_denied"),
        ("executed", None),
    ]
    assert calls.names() == ["files_read"]


def test_prompt_fragments_come_only_from_visible_tools() -> None:
    from gateway import ToolDefinition
    from gateway.definition import NoParams

    def make(name: str) -> ToolDefinition:
        return ToolDefinition(
            name=name,
            category="x",
            action="read",
            summary="S.",
            description="D.",
            params=NoParams,
            handler=lambda p: None,
            read_only=True,
            prompt=f"use {name} wisely",
        )

    gw = Gateway(Catalog([make("x_one"), make("x_two")]), policy=Policy((Rule("deny", names=("x_two",)),)))
    assert gw.prompt_fragments(Principal()) == ["use x_one wisely"]

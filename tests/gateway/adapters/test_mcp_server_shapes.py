"""The MCP shapes of tools, results and instructions, and the server's small pure parts."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import anyio
import pytest
from syrupy.assertion import SnapshotAssertion

from gateway import Catalog, Gateway, Policy, Principal, Rule, ToolResult
from gateway.adapters import mcp
from gateway.adapters.mcp_server import TokenVerifier, category_counts, request_state_key, token_digests
from gateway.context import ErrorInfo, PendingConfirmation
from gateway.errors import UserError
from gateway.rendering import MAX_OUTPUT_CHARS
from gateway.settings.loading import Settings

from ..sample_tools import ALL_TOOLS


def test_the_meta_tools_as_mcp_tools(gw: Gateway, snapshot: SnapshotAssertion) -> None:
    assert mcp.tools(gw.meta) == snapshot


def test_only_invoke_tool_may_change_anything(gw: Gateway) -> None:
    hints = {t["name"]: t["annotations"] for t in mcp.tools(gw.meta)}
    assert [name for name, h in hints.items() if h["readOnlyHint"]] == ["discover_tools", "get_tool_schema"]
    assert hints["invoke_tool"]["destructiveHint"] is True


def _result(status: Any, output: Any = None, **extra: Any) -> ToolResult:
    return ToolResult("invoke_tool", "c1", status, output=output, **extra)


def test_a_result_is_its_text_and_the_same_value_structured() -> None:
    shaped = mcp.call_result(_result("ok", {"id": "n1"}))
    assert shaped == {
        "content": [{"type": "text", "text": '{"id":"n1"}'}],
        "structuredContent": {"id": "n1"},
        "isError": False,
    }


def test_a_value_that_is_not_an_object_is_wrapped_in_the_structured_content() -> None:
    shaped = mcp.call_result(_result("ok", ["a", "b"]))
    assert shaped["content"][0]["text"] == '["a","b"]'
    assert shaped["structuredContent"] == {"result": ["a", "b"]}


def test_errors_are_flagged_and_pending_calls_are_not() -> None:
    error = _result("error", error=ErrorInfo("declined", "The user declined this action.", "Do not retry."))
    assert mcp.call_result(error)["isError"] is True
    pending = PendingConfirmation("p1", "notes_delete", "Delete", {}, "local", 0.0)
    shaped = mcp.call_result(_result("confirmation_required", pending=pending))
    assert shaped["isError"] is False and shaped["structuredContent"]["pending_id"] == "p1"


def test_a_truncated_text_is_truncated_in_the_structured_content_too() -> None:
    shaped = mcp.call_result(_result("ok", {"blob": "x" * (MAX_OUTPUT_CHARS + 10)}))
    assert shaped["structuredContent"] == json.loads(shaped["content"][0]["text"])
    assert shaped["structuredContent"]["truncated"] is True


def test_instructions_name_the_categories_largest_first() -> None:
    text = mcp.instructions({"notes": 4, "files": 2, "calendar": 4})
    assert text.startswith("This server reaches a catalog of 10 tools through three meta-tools")
    assert text.endswith("\nCategories (tools): calendar (4), notes (4), files (2).")


def test_instructions_stay_within_the_budget_and_count_what_they_leave_out() -> None:
    counts = {f"category_{i:03}": 1000 - i for i in range(400)}
    text = mcp.instructions(counts)
    assert len(text) <= mcp.INSTRUCTIONS_BUDGET
    listed = text.split("Categories (tools): ")[1].split(", ")
    hidden = int(listed[-1].split()[1])
    assert listed[0] == "category_000 (1000)" and len(listed) - 1 + hidden == 400


def test_the_instructions_are_pinned_and_say_how_to_use_run_code_only_in_code_mode(
    snapshot: SnapshotAssertion,
) -> None:
    counts = {"notes": 4, "files": 2}
    three, four = mcp.instructions(counts), mcp.instructions(counts, code=True)
    assert three == snapshot(name="three meta-tools")
    assert four == snapshot(name="code mode")
    assert "run_code" not in three and "run_code" in four
    many = {f"category_{i:03}": 1000 - i for i in range(400)}
    assert len(mcp.instructions(many, code=True)) <= mcp.INSTRUCTIONS_BUDGET


def test_instructions_of_an_empty_catalog() -> None:
    assert "catalog of 0 tools" in mcp.instructions({})


def test_the_overview_counts_only_what_every_token_holder_may_see() -> None:
    policy = Policy((Rule("deny", categories=("files",), roles=("guest",)),))
    gw = Gateway(Catalog(ALL_TOOLS), policy=policy)
    admin, guest = Principal("alice", frozenset({"admin"})), Principal("bob", frozenset({"guest"}))
    assert category_counts(gw, [admin]) == {"notes": 4, "files": 2}
    assert category_counts(gw, [admin, guest]) == {"notes": 4}


def test_tokens_are_known_by_digest_and_map_to_a_principal() -> None:
    verifier = TokenVerifier({hashlib.sha256(b"s3cret").hexdigest(): "alice"})

    async def check() -> None:
        found = await verifier.verify_token("s3cret")
        assert found is not None and found.client_id == "alice" and found.token == ""
        assert await verifier.verify_token("s3cret ") is None
        assert await verifier.verify_token("") is None

    anyio.run(check)


def test_a_token_named_by_an_unset_variable_stops_the_server() -> None:
    settings = Settings.model_validate({"serve": {"tokens": [{"principal": "bob", "env": "BOB_TOKEN"}]}})
    assert token_digests(settings, {"BOB_TOKEN": "t"}) == {hashlib.sha256(b"t").hexdigest(): "bob"}
    with pytest.raises(UserError, match="BOB_TOKEN"):
        token_digests(settings, {})


def test_request_state_is_sealed_with_a_key_of_its_own() -> None:
    secret = b"k" * 32
    key = request_state_key(secret)
    assert len(key) == 32 and key != secret and key == request_state_key(secret)


def test_with_run_code_alone_the_instructions_are_pinned_and_speak_only_of_programs(
    snapshot: SnapshotAssertion,
) -> None:
    alone = mcp.instructions({"notes": 4, "files": 2}, code=True, alone=True)
    assert alone == snapshot
    assert "run_code" in alone and not any(
        name in alone for name in ("discover_tools", "get_tool_schema", "invoke_tool")
    )
    budget = len(mcp.instructions({}, code=True, alone=True)) + 60  # room for the count, not a category
    many = mcp.instructions({f"category_{i:03}": 1 for i in range(400)}, budget=budget, code=True, alone=True)
    assert many.endswith("\n400 categories; run discover() in a program to see them.")

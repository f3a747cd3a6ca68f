"""run_code's definition and the texts the model reads about a program, pinned."""

from __future__ import annotations

import json

import pytest
from syrupy.assertion import SnapshotAssertion

from gateway import Catalog, Gateway, ToolContext, render, run_sync
from gateway.adapters import anthropic
from gateway.code import enable, text
from gateway.context import ErrorInfo, ToolResult
from gateway.meta_tools import META_TOOL_NAMES
from gateway.settings.sections import CodeSettings

from ..sample_tools import ALL_TOOLS


@pytest.mark.filterwarnings("ignore:open_binary:DeprecationWarning")  # bpe-openai reading its vocabulary
def test_run_codes_definition_is_pinned_and_within_260_tokens(snapshot: SnapshotAssertion) -> None:
    from bpe_openai import get_encoding

    gw = Gateway(Catalog(ALL_TOOLS))
    programs = enable(gw, CodeSettings(enabled=True))
    try:
        (definition,) = [d for d in anthropic.tools(gw.meta) if d["name"] == "run_code"]
    finally:
        programs.close()
    assert definition == snapshot
    assert len(get_encoding("cl100k_base").encode(json.dumps(definition))) <= 260


def test_the_errors_a_program_ends_with_are_pinned(snapshot: SnapshotAssertion) -> None:
    calls = ["calendar_list_events", "gmail_send_message", "gmail_send_message"]
    errors: list[ErrorInfo] = [
        text.syntax_error(2, "y = (", "unexpected EOF while parsing"),
        text.program_error(3, "x['a']", error_type="KeyError", message="a", calls=calls, failed=None),
        text.program_error(
            4,
            "call('gmail_send', {})",
            error_type="RuntimeError",
            message="gmail_send: unknown_tool: There is no tool named 'gmail_send'.",
            calls=calls[:1],
            failed="gmail_send",
        ),
        text.limit_reached("it reached its limit of 50 calls", calls),
        text.crashed([]),
        text.busy(60),
        text.not_paused(True),
        text.not_paused(False),
        text.expired(calls),
        text.still_pending("The user has not approved this action yet."),
        text.needs_code(),
        text.other_program(),
        text.principal_changed(),
    ]
    assert [render(ToolResult("run_code", "c", "error", error=e)) for e in errors] == snapshot


# -- next steps inside a program: its own functions, never the meta-tools --------------------------

FOUR_TOOLS, ALONE = CodeSettings(enabled=True), CodeSettings(enabled=True, only=True)
PROGRAMS = {
    "overview": "discover()",
    "nothing_matched": "discover('zzqx frobnicate')",
    "unknown_tool": "call('notes_creat', title='milk')",
    "unknown_tool_no_close_name": "call('zzqx', title='milk')",
    "invalid_arguments": "call('notes_create', {'title': 'milk', 'priority': 9})",
    "schema_of_unknown_tool": "schema('zzqx')",
    "caught": "try:\n    call('notes_creat', title='milk')\nexcept ToolError as e:\n    r = str(e)\nr",
}


def _run(gw: Gateway, code: str) -> str:
    return render(run_sync(gw.call("run_code", {"code": code}, ToolContext(call_id="p", session_id="s"))))


@pytest.mark.parametrize("settings", [FOUR_TOOLS, ALONE], ids=["four_tools", "run_code_alone"])
def test_every_next_step_a_program_reads_names_discover_schema_or_call_not_a_meta_tool(
    settings: CodeSettings, snapshot: SnapshotAssertion
) -> None:
    gw = Gateway(Catalog(ALL_TOOLS))
    programs = enable(gw, settings)
    try:
        answers = {name: _run(gw, code) for name, code in PROGRAMS.items()}
    finally:
        programs.close()
    for name, answer in answers.items():
        assert not [m for m in META_TOOL_NAMES if m in answer], (name, answer)
        assert "discover(" in answer or "schema(" in answer, (name, answer)
    assert answers == snapshot


def test_a_programs_unknown_tool_is_told_to_use_a_close_name_or_discover(snapshot: SnapshotAssertion) -> None:
    gw = Gateway(Catalog(ALL_TOOLS))
    programs = enable(gw, ALONE)
    try:
        answer = json.loads(_run(gw, PROGRAMS["unknown_tool"]))["error"]["message"]
    finally:
        programs.close()
    assert (
        "Did you mean: notes_create, notes_search, notes_delete? Next: Use one of those names if it fits; "
        in answer
    )
    assert "otherwise find the tool with discover(query)." in answer


def test_the_meta_tools_own_answers_keep_their_next_steps_in_code_mode() -> None:
    gw = Gateway(Catalog(ALL_TOOLS))
    programs = enable(gw, FOUR_TOOLS)
    try:
        ctx = ToolContext(call_id="m", session_id="s")
        overview = run_sync(gw.call("discover_tools", {}, ctx)).output
        missing = run_sync(gw.call("invoke_tool", {"tool_name": "notes_creat", "parameters": {}}, ctx)).error
    finally:
        programs.close()
    assert overview["next_step"] == (
        "Call discover_tools with a query and/or categories or actions to list matching tools."
    )
    assert missing is not None
    assert missing.next_step == "Use a name from did_you_mean if it fits; otherwise call discover_tools."


def test_a_tool_errors_next_step_inside_a_program_is_pinned(snapshot: SnapshotAssertion) -> None:
    errors = [
        ErrorInfo(
            "unknown_tool", "There is no tool named 'x'.", "Call discover_tools ...", suggestions=("y",)
        ),
        ErrorInfo("unknown_tool", "There is no tool named 'x'.", "Call discover_tools ..."),
        ErrorInfo("invalid_arguments", "The parameters for y are invalid.", "... invoke_tool ..."),
        ErrorInfo("confirmation_used", "That confirmation was already used.", "... invoke_tool ..."),
        ErrorInfo("not_found", "No note n9.", "Check the id: search or list to find the right item."),
        ErrorInfo("tool_changed", "y changed or was removed on its server.", "Call discover_tools to ..."),
    ]
    messages = [text.tool_error("y", e) for e in errors]
    assert not [m for m in messages if any(meta in m for meta in META_TOOL_NAMES)]
    assert messages == snapshot


def test_a_discover_with_an_unknown_category_raises_inside_the_program_which_may_handle_it() -> None:
    gw = Gateway(Catalog(ALL_TOOLS))
    programs = enable(gw, ALONE)
    code = "try:\n    discover(categories=['nope'])\nexcept ValueError as e:\n    r = str(e)\nr"
    try:
        answer = run_sync(gw.call("run_code", {"code": code}, ToolContext(call_id="p", session_id="s")))
    finally:
        programs.close()
    assert answer.output == {
        "result": "discover(): categories: Unknown categories: nope. Categories: files, notes",
        "calls": 0,
    }

"""run_code in-process: every call a program makes goes through Gateway.invoke, its policy and its audit."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from gateway import Catalog, Gateway, MemoryAuditLog, Policy, ToolContext, render, run_sync
from gateway.code import Programs, enable
from gateway.context import Principal, ToolResult
from gateway.policy import Rule
from gateway.settings.sections import CodeSettings

from ..sample_tools import ALL_TOOLS, Calls

CODE = CodeSettings(enabled=True)


@pytest.fixture
def coded(calls: Calls) -> Iterator[tuple[Gateway, MemoryAuditLog, Programs]]:
    audit = MemoryAuditLog()
    gw = Gateway(Catalog(ALL_TOOLS), audit=audit, policy=Policy((Rule("deny", names=("files_boom",)),)))
    programs = enable(gw, CODE)
    yield gw, audit, programs
    programs.close()


def run(
    gw: Gateway, code: str | None = None, *, confirmation: str | None = None, call_id: str = "prog1"
) -> ToolResult:
    arguments: dict[str, Any] = {"code": code} if code is not None else {}
    if confirmation is not None:
        arguments["confirmation"] = confirmation
    return run_sync(gw.call("run_code", arguments, ToolContext(call_id=call_id, session_id="s1")))


def test_run_code_is_not_offered_unless_code_mode_is_enabled() -> None:
    gw = Gateway(Catalog(ALL_TOOLS))
    assert [d.name for d in gw.meta] == ["discover_tools", "get_tool_schema", "invoke_tool"]
    assert run_sync(gw.call("run_code", {"code": "1"})).error.code == "unknown_tool"  # type: ignore[union-attr]


def test_enabling_code_mode_adds_run_code_after_the_three_meta_tools_unchanged() -> None:
    plain = Gateway(Catalog(ALL_TOOLS))
    gw = Gateway(Catalog(ALL_TOOLS))
    programs = enable(gw, CODE)
    try:
        assert [d.name for d in gw.meta] == ["discover_tools", "get_tool_schema", "invoke_tool", "run_code"]
        assert [d.json_schema for d in gw.meta][:3] == [d.json_schema for d in plain.meta]
        assert [d.description for d in gw.meta][:3] == [d.description for d in plain.meta]
    finally:
        programs.close()


def test_a_program_calls_tools_and_only_its_result_comes_back(coded: Any, calls: Calls) -> None:
    gw, _, _ = coded
    result = run(
        gw,
        "ids = []\nfor t in ['a', 'b', 'c']:\n    ids.append(call('notes_create', {'title': t})['id'])\nlen(ids)",
    )
    assert result.ok and result.output == {"result": 3, "calls": 3}
    assert calls.names() == ["notes_create"] * 3


def test_each_inner_call_is_audited_with_a_call_id_naming_the_program(coded: Any) -> None:
    gw, audit, _ = coded
    run(gw, "call('notes_search', {'title': 'x'})\ncall('notes_create', title='y')", call_id="p42")
    lines = [(r.call_id, r.tool, r.outcome) for r in audit.records]
    assert lines == [
        ("p42.1", "notes_search", "executed"),
        ("p42.2", "notes_create", "attempt"),
        ("p42.2", "notes_create", "executed"),
        ("p42", "run_code", "executed"),
    ]
    assert audit.records[-1].params == {
        "code": "call('notes_search', {'title': 'x'})\ncall('notes_create', title='y')"
    }


def test_a_hidden_tool_does_not_exist_inside_a_program(coded: Any, calls: Calls) -> None:
    gw, audit, _ = coded
    hidden = run(gw, "call('files_boom', {'path': '/srv/files/a'})")
    missing = run(gw, "call('files_bom', {'path': '/srv/files/a'})")
    assert calls.names() == []
    assert hidden.error is not None and missing.error is not None
    assert "There is no tool named 'files_boom'" in hidden.error.message
    assert "files_boom" not in (missing.error.message.split("Did you mean")[-1])
    assert [r.outcome for r in audit.records if r.tool == "files_boom"] == ["denied"]


def test_invalid_arguments_raise_a_tool_error_the_program_may_handle(coded: Any, calls: Calls) -> None:
    gw, _, _ = coded
    code = "try:\n    call('notes_create', {'title': 'x', 'priority': 9})\nexcept ToolError as e:\n    r = str(e)\nr"
    result = run(gw, code)
    assert (
        result.ok and "invalid_arguments" in result.output["result"] and "priority" in result.output["result"]
    )
    assert calls.names() == []


def test_a_tools_permission_check_applies_to_calls_from_a_program(coded: Any, calls: Calls) -> None:
    gw, _, _ = coded
    result = run(gw, "call('files_read', {'path': '/etc/passwd'})")
    assert result.error is not None and "permission_denied" in result.error.message
    assert calls.names() == []


def test_discover_and_schema_answer_inside_a_program_as_python_signatures(coded: Any) -> None:
    gw, _, _ = coded
    result = run(
        gw,
        "page = discover('create a note')\nname = page['tools'][0].split('(')[0]\n[name, schema(name).split('(')[0]]",
    )
    assert result.ok and result.output["result"] == ["notes_create", "def notes_create"]


def test_a_syntax_error_names_its_line(coded: Any) -> None:
    gw, _, _ = coded
    result = run(gw, "x = 1\ny = (\n")
    assert result.error is not None and result.error.code == "program_syntax_error"
    assert render(result).startswith('{"error":{"code":"program_syntax_error","message":"Line ')


def test_a_runtime_error_names_its_line_and_the_call_that_raised_it(coded: Any) -> None:
    gw, _, _ = coded
    result = run(gw, "a = call('notes_search', {'title': 'x'})\nb = call('notes_create', {})\n")
    assert result.error is not None and result.error.code == "program_error"
    message = result.error.message
    assert message.startswith(
        "Line 2 `b = call('notes_create', {})`: ToolError: notes_create: invalid_arguments"
    )
    assert message.endswith("Done before it stopped: 1 call (notes_search).")
    plain = run(gw, "x = {}\ny = x['missing']")
    assert plain.error is not None and plain.error.message.startswith("Line 2 `y = x['missing']`: KeyError")


def test_inner_calls_are_spans_under_the_programs_span() -> None:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from gateway.telemetry.otel import OpenTelemetry

    spans = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(spans))
    gw = Gateway(Catalog(ALL_TOOLS), telemetry=OpenTelemetry(tracer_provider=provider))
    programs = enable(gw, CODE)
    try:
        run(gw, "call('notes_search', {'title': 'x'})\ncall('notes_create', {'title': 'y'})", call_id="p7")
    finally:
        programs.close()
    *inner, outer = spans.get_finished_spans()
    assert [s.name for s in inner] == ["execute_tool notes_search", "execute_tool notes_create"]
    assert outer.name == "execute_tool run_code"
    assert all(s.parent is not None and s.parent.span_id == outer.context.span_id for s in inner)
    assert [s.attributes["gen_ai.tool.call.id"] for s in inner] == ["p7.1", "p7.2"]  # type: ignore[index]


def test_learning_from_use_sees_the_calls_a_program_makes(coded: Any) -> None:
    gw, _, _ = coded
    learned: list[tuple[str, str, str]] = []

    class Usage:
        async def invoked_off_loop(self, session: str, principal: str, tool: str) -> None:
            learned.append((session, principal, tool))

    gw.usage = Usage()
    run(gw, "call('notes_search', {'title': 'x'})")
    assert learned == [("s1", "local", "notes_search")]


def test_a_program_runs_as_its_caller(coded: Any, calls: Calls) -> None:
    gw, _, _ = coded
    ctx = ToolContext(principal=Principal("alice"), call_id="p1")
    result = run_sync(gw.call("run_code", {"code": "call('notes_create', {'title': 'x'})"}, ctx))
    assert result.ok
    _, audit, _ = coded
    assert {r.principal for r in audit.records} == {"alice"}


def test_enabling_code_mode_without_the_sandbox_installed_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import sys

    from gateway.errors import UserError

    monkeypatch.setitem(sys.modules, "pydantic_monty", None)  # as if the code extra were not installed
    gw = Gateway(Catalog(ALL_TOOLS))
    with pytest.raises(UserError, match=r"pip install 'metatool-gateway\[code\]'"):
        enable(gw, CODE)
    assert [d.name for d in gw.meta] == ["discover_tools", "get_tool_schema", "invoke_tool"]


@pytest.mark.parametrize(
    "program",
    [
        "import os\nos.listdir('/')",
        "x = 1\nfrom pathlib import Path\nPath('/etc/passwd')",
        "import json, sys",
        "__import__('sys')",
        "__import__(''.join(['o', 's']))",
        "from . import secrets",
    ],
)
def test_an_import_beyond_the_four_the_description_names_is_refused_before_anything_runs(
    coded: Any, calls: Calls, program: str
) -> None:
    """run_code's description promises no imports beyond json, re, math and datetime: the sandbox
    knows more modules, but the program is held to the text the model read."""
    gw, _, _ = coded
    assert (
        "imports beyond json, re, math and datetime"
        in next(d for d in gw.meta if d.name == "run_code").description
    )
    result = run(gw, program)
    assert result.error is not None and result.error.code == "program_error"
    assert "cannot be imported here: only json, re, math, datetime" in result.error.message
    assert result.error.message.endswith("No call had run.") and calls == []


def test_the_four_modules_import(coded: Any) -> None:
    gw, _, _ = coded
    result = run(
        gw,
        "import json, re, math\nfrom datetime import date\njson.dumps([math.floor(2.5), date(2026, 1, 2).day])",
    )
    assert result.status == "ok" and result.output["result"] == "[2, 2]"

"""Arguments that would crash a JSON parser or a serialiser are refused as invalid and audited.

A 5,000-deep text raised `RecursionError`, a 5,000-digit integer `ValueError`; both escaped
`Gateway.invoke` (or became `internal` under invoke_tool) with no audit line.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from gateway import Gateway, MemoryAuditLog, run_sync

from .sample_tools import Calls

DEEP_TEXT = '{"title": ' + "[" * 5000 + "]" * 5000 + "}"
LONG_TEXT = '{"title": "x", "priority": ' + "7" * 5000 + "}"


def _deep(levels: int) -> Any:
    value: Any = "x"
    for _ in range(levels):
        value = [value]
    return value


def _loop() -> Any:
    loop: list[Any] = []
    loop.append(loop)
    return loop


@pytest.mark.parametrize(
    ("parameters", "problem"),
    [
        (DEEP_TEXT, "Nested more than 64 levels deep"),
        (LONG_TEXT, "integer of more than 100 digits"),
        ({"title": _deep(5000)}, "Nested more than 64 levels deep"),
        ({"title": _loop()}, "Nested more than 64 levels deep"),
        ({"title": "x", "priority": 7 * 10**4999}, "integer of more than 100 digits"),
    ],
    ids=["deep-text", "long-number-text", "deep-object", "object-containing-itself", "long-number-object"],
)
def test_arguments_too_deep_or_with_too_long_a_number_are_invalid_and_audited(
    gw: Gateway, audit: MemoryAuditLog, calls: Calls, parameters: Any, problem: str
) -> None:
    result = run_sync(gw.invoke("notes_create", parameters))

    assert result.error is not None and result.error.code == "invalid_arguments"
    assert [p.loc for p in result.error.problems] == ["parameters"]
    assert problem in result.error.problems[0].msg
    assert calls == []
    assert [(r.tool, r.outcome, r.error_code) for r in audit.records] == [
        ("notes_create", "invalid", "invalid_arguments")
    ]


def test_invoke_tool_with_a_deep_parameters_string_names_the_problem_and_audits_the_attempt(
    gw: Gateway, audit: MemoryAuditLog
) -> None:
    result = run_sync(gw.call("invoke_tool", {"tool_name": "notes_create", "parameters": DEEP_TEXT}))

    assert result.error is not None and result.error.code == "invalid_arguments"
    assert "Nested more than 64 levels deep" in result.error.problems[0].msg
    assert [(r.tool, r.outcome) for r in audit.records] == [("notes_create", "invalid")]


def test_arguments_at_the_bounds_are_read_as_usual(gw: Gateway, calls: Calls) -> None:
    nested = {"title": "x", "priority": 1}
    text = json.dumps({"title": json.dumps(_deep(60)), "priority": 1})
    assert run_sync(gw.invoke("notes_create", text)).ok
    assert run_sync(gw.invoke("notes_create", nested)).ok

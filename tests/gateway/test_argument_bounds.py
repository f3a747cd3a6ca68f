"""Arguments that would crash a JSON parser or a serialiser are refused as invalid and audited.

A 5,000-deep text raised `RecursionError`, a 5,000-digit integer `ValueError`; both escaped
`Gateway.invoke` (or became `internal` under invoke_tool) with no audit line.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from gateway import Gateway, MemoryAuditLog, run_sync
from gateway.arguments import Unusable, check_shape, read_arguments

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


_ODD_TEXTS = ["", "plain", 'quo"te\\', "\n\t\x00\x1f", "é ünï", "☕" * 3, "𝄞😀", "\ud800"]
_NUMBERS = [0, -1, 10**99, -(10**99), 1.5, -1.2345678901234567e-308, float("inf"), float("nan"), 1e300]


def _values(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.randrange(6 if depth < 5 else 3)
    if kind == 0:
        return rng.choice(_ODD_TEXTS) * rng.randrange(1, 4)
    if kind == 1:
        return rng.choice([*_NUMBERS, True, False, None])
    if kind == 2:
        return rng.choice(_ODD_TEXTS)
    if kind == 3:
        return [_values(rng, depth + 1) for _ in range(rng.randrange(4))]
    if kind == 4:
        return tuple(_values(rng, depth + 1) for _ in range(rng.randrange(3)))
    return {rng.choice(_ODD_TEXTS) + str(i): _values(rng, depth + 1) for i in range(rng.randrange(4))}


def test_the_size_bound_of_arguments_is_never_below_their_json_text() -> None:
    rng = random.Random(7)
    for _ in range(3000):
        value = _values(rng)
        bound = check_shape(value)
        assert bound is not None and bound >= len(json.dumps(value, default=str).encode()), value
    assert check_shape({"when": object()}) is None  # not JSON data: its text is not known beforehand
    assert check_shape({1: "x"}) is None


def test_arguments_just_over_the_limit_are_refused_with_their_size_and_just_under_are_read() -> None:
    for text in ("x" * 1000, "é" * 1000, "😀" * 500):
        size = len(json.dumps({"title": text}).encode())
        assert read_arguments({"title": text}, size) == {"title": text}
        with pytest.raises(Unusable) as refused:
            read_arguments({"title": text}, size - 1)
        assert refused.value.too_large == size

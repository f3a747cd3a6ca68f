"""Tool-call text built to crash a JSON parser, sent by a scripted model through the real SDK clients.

A text nested 5,000 levels deep or holding a 5,000-digit integer once ended `Agent.run`; now the
model is told its arguments cannot be used, nothing runs, the run goes on and the audit log
records the attempt.
"""

from __future__ import annotations

import json

import pytest

from gateway import Gateway, MemoryAuditLog

from ..sample_tools import Calls
from .replay import Replay
from .vendors import ANTHROPIC, RESPONSES, VENDORS, Vendor, call, converse

DEEP = '{"tool_name": "notes_create", "parameters": ' + "[" * 5000 + "]" * 5000 + "}"
LONG_NUMBER = '{"tool_name": "notes_create", "parameters": {"title": "x", "priority": ' + "7" * 5000 + "}}"


@pytest.mark.parametrize("vendor", VENDORS, ids=lambda v: v.name)
@pytest.mark.parametrize(
    ("text", "problem"),
    [(DEEP, "Nested more than 64 levels deep"), (LONG_NUMBER, "integer of more than 100 digits")],
    ids=["deep", "long-number"],
)
def test_a_tool_call_too_deep_or_with_too_long_a_number_is_refused_and_the_run_goes_on(
    vendor: Vendor,
    replay: Replay,
    text: str,
    problem: str,
    *,
    agent_gateway: Gateway,
    audit: MemoryAuditLog,
    calls: Calls,
) -> None:
    replay.script(vendor.turn(calls=[call("c1", "invoke_tool", text)]), vendor.turn("Sorry."))

    results, _, _ = converse(vendor, replay, agent_gateway, ["Add a note"])

    assert results[0].text == "Sorry."
    [(call_id, sent)] = vendor.results(replay.bodies[1])
    error = json.loads(sent if isinstance(sent, str) else sent[0]["text"])["error"]
    assert call_id == "c1" and error["code"] == "invalid_arguments"
    assert problem in json.dumps(error["problems"])
    assert calls == []
    assert [(r.tool, r.outcome, r.error_code) for r in audit.records] == [
        ("invoke_tool", "invalid", "invalid_arguments")
    ]


@pytest.mark.parametrize("vendor", [ANTHROPIC, RESPONSES], ids=lambda v: v.name)
def test_a_direct_call_of_a_catalog_tool_too_deep_is_refused_too(
    vendor: Vendor, replay: Replay, agent_gateway: Gateway, audit: MemoryAuditLog, calls: Calls
) -> None:
    deep = '{"title": ' + "[" * 5000 + "]" * 5000 + "}"
    replay.script(vendor.turn(calls=[call("c1", "notes_create", deep)]), vendor.turn("Sorry."))

    results, _, _ = converse(vendor, replay, agent_gateway, ["Add a note"], deferred=True)

    assert results[0].text == "Sorry." and calls == []
    assert [(r.tool, r.outcome) for r in audit.records] == [("notes_create", "invalid")]

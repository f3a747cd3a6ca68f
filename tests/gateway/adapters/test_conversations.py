"""Whole conversations on the real SDK clients of all three APIs, sync and async, against scripted turns.

Each test scripts what the model says, runs an Agent, and checks what the SDK sent back to the
model (the tool results, in order, with their ids), what ran, and what the host was told.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from gateway import Gateway, MemoryAuditLog, PendingConfirmation, render, run_sync
from gateway.agent import (
    WRAP_UP_NOTE,
    ConfirmationAnswered,
    ConfirmationRequested,
    RoundCapReached,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
)

from ..sample_tools import Calls
from .probe_tools import Probe
from .replay import Replay
from .vendors import VENDORS, Vendor, call, converse

pytestmark = [
    pytest.mark.parametrize("vendor", VENDORS, ids=lambda v: v.name),
    pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"]),
]


@pytest.fixture
def gw(agent_gateway: Gateway) -> Gateway:
    return agent_gateway


def model_text(gw: Gateway, tool: str, arguments: dict[str, Any]) -> str:
    """What the gateway renders for a meta-tool call that has no side effects."""
    return render(run_sync(gw.call(tool, arguments)))


def error_of(text: Any) -> dict[str, Any]:
    error: dict[str, Any] = json.loads(text)["error"]
    return error


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
def test_a_conversation_discovers_reads_the_schema_invokes_and_answers(
    vendor: Vendor, use_async: bool, stream: bool, replay: Replay, *, gw: Gateway, calls: Calls
) -> None:
    replay.script(
        vendor.turn("Looking.", [call("c1", "discover_tools", {"query": "create a note"})], stream=stream),
        vendor.turn(calls=[call("c2", "get_tool_schema", {"tool_name": "notes_create"})], stream=stream),
        vendor.turn(
            calls=[call("c3", "invoke_tool", {"tool_name": "notes_create", "parameters": {"title": "Milk"}})],
            stream=stream,
        ),
        vendor.turn("Created note n1.", stream=stream),
    )
    (result,), events, _ = converse(
        vendor, replay, gw, ["Add a note: milk"], use_async=use_async, provider_options={"stream": stream}
    )

    assert result.text == "Created note n1." and result.stop == "answer" and result.rounds == 3
    assert calls == [("notes_create", {"title": "Milk", "priority": 1, "color": None})]
    assert [vendor.results(b) for b in replay.bodies] == [
        [],
        [("c1", model_text(gw, "discover_tools", {"query": "create a note"}))],
        [("c2", model_text(gw, "get_tool_schema", {"tool_name": "notes_create"}))],
        [("c3", '{"id":"n1","title":"Milk"}')],
    ]
    started = [e.call.name for e in events if isinstance(e, ToolCallStarted)]
    assert started == ["discover_tools", "get_tool_schema", "invoke_tool"]
    streamed = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert streamed == ("Looking.Created note n1." if stream else "")


def test_a_call_with_malformed_json_never_runs_and_the_model_re_emits_it(
    vendor: Vendor, use_async: bool, replay: Replay, gw: Gateway, calls: Calls
) -> None:
    broken = '{"tool_name": "notes_create", "parameters": {"title": "Milk"'
    fixed = {"tool_name": "notes_create", "parameters": {"title": "Milk"}}
    replay.script(
        vendor.turn(calls=[call("c1", "invoke_tool", broken)]),
        vendor.turn(calls=[call("c2", "invoke_tool", fixed)]),
        vendor.turn("Done."),
    )
    converse(vendor, replay, gw, ["Add a note: milk"], use_async=use_async)

    ((call_id, text),) = vendor.results(replay.bodies[1])
    assert call_id == "c1"
    assert error_of(text) == {
        "code": "invalid_json",
        "message": "The arguments of this invoke_tool call are not valid JSON: Expecting ',' delimiter "
        "at line 1 column 61. Nothing was run.",
        "next_step": "Call invoke_tool again with its complete arguments as one JSON object.",
    }
    assert calls.names() == ["notes_create"]  # only the re-emitted call ran


def test_invalid_parameters_come_back_as_problems_and_the_fixed_call_runs(
    vendor: Vendor, use_async: bool, replay: Replay, gw: Gateway, calls: Calls
) -> None:
    replay.script(
        vendor.turn(
            calls=[call("c1", "invoke_tool", {"tool_name": "notes_create", "parameters": {"priority": 9}})]
        ),
        vendor.turn(
            calls=[call("c2", "invoke_tool", {"tool_name": "notes_create", "parameters": {"title": "A"}})]
        ),
        vendor.turn("Done."),
    )
    converse(vendor, replay, gw, ["Add a note"], use_async=use_async)

    ((_, text),) = vendor.results(replay.bodies[1])
    assert error_of(text)["problems"] == [
        {"loc": "title", "msg": "Required parameter is missing"},
        {"loc": "priority", "msg": "Input should be less than or equal to 5"},
    ]
    assert vendor.results(replay.bodies[2]) == [("c2", '{"id":"n1","title":"A"}')]
    assert calls == [("notes_create", {"title": "A", "priority": 1, "color": None})]


def test_read_only_concurrency_safe_calls_of_one_turn_run_concurrently_and_keep_their_order(
    vendor: Vendor, use_async: bool, replay: Replay, gw: Gateway, probe: type[Probe]
) -> None:
    replay.script(
        vendor.turn(
            calls=[
                call("c1", "invoke_tool", {"tool_name": "probe_together", "parameters": {"word": "a"}}),
                call("c2", "invoke_tool", {"tool_name": "probe_together", "parameters": {"word": "b"}}),
            ]
        ),
        vendor.turn("Both done."),
    )
    converse(vendor, replay, gw, ["Probe"], use_async=use_async)

    # Each call waits at a barrier for the other: both finishing proves they ran at the same time.
    assert vendor.results(replay.bodies[1]) == [("c1", '"a"'), ("c2", '"b"')]
    assert probe.log[:2] == ["start a", "start b"]


def test_calls_run_one_after_another_when_one_is_not_concurrency_safe(
    vendor: Vendor, use_async: bool, replay: Replay, gw: Gateway, probe: type[Probe]
) -> None:
    replay.script(
        vendor.turn(
            calls=[
                call("c1", "invoke_tool", {"tool_name": "probe_alone", "parameters": {"word": "a"}}),
                call("c2", "discover_tools", {"query": "probe"}),
                call("c3", "invoke_tool", {"tool_name": "probe_alone", "parameters": {"word": "b"}}),
            ]
        ),
        vendor.turn("Done."),
    )
    converse(vendor, replay, gw, ["Probe"], use_async=use_async)

    assert probe.log == ["start a", "end a", "start b", "end b"]
    assert [cid for cid, _ in vendor.results(replay.bodies[1])] == ["c1", "c2", "c3"]


def test_a_destructive_call_runs_once_the_host_approves_it(
    vendor: Vendor, use_async: bool, replay: Replay, *, gw: Gateway, calls: Calls, audit: MemoryAuditLog
) -> None:
    asked: list[PendingConfirmation] = []

    async def approver(pending: PendingConfirmation) -> bool:
        asked.append(pending)
        return True

    replay.script(
        vendor.turn(
            calls=[call("c1", "invoke_tool", {"tool_name": "notes_delete", "parameters": {"note_id": "n1"}})]
        ),
        vendor.turn("Deleted."),
    )
    _, events, _ = converse(vendor, replay, gw, ["Delete n1"], use_async=use_async, approver=approver)

    assert [p.preview for p in asked] == ['Delete a note for good [notes_delete] with note_id="n1"']
    assert vendor.results(replay.bodies[1]) == [("c1", '{"deleted":"n1","by":"local"}')]
    assert calls.names() == ["notes_delete"]
    outcomes = [r.outcome for r in audit.records]
    assert outcomes == ["pending_confirmation", "approved_by_host", "approved", "attempt", "executed"]
    assert audit.records[1].decided_by == {"channel": "host", "operator": None}
    kinds = [type(e) for e in events if isinstance(e, ConfirmationRequested | ConfirmationAnswered)]
    assert kinds == [ConfirmationRequested, ConfirmationAnswered]


def test_a_destructive_call_the_host_refuses_never_runs(
    vendor: Vendor, use_async: bool, replay: Replay, gw: Gateway, calls: Calls
) -> None:
    replay.script(
        vendor.turn(
            calls=[call("c1", "invoke_tool", {"tool_name": "notes_delete", "parameters": {"note_id": "n1"}})]
        ),
        vendor.turn("Not deleted."),
    )
    _, events, _ = converse(vendor, replay, gw, ["Delete n1"], use_async=use_async, approver=lambda p: False)

    ((_, text),) = vendor.results(replay.bodies[1])
    assert error_of(text)["code"] == "declined"
    assert calls == []
    assert [e.approved for e in events if isinstance(e, ConfirmationAnswered)] == [False]


def test_a_model_flag_is_never_consent_and_a_host_approval_lets_the_repeated_call_run(
    vendor: Vendor, use_async: bool, replay: Replay, gw: Gateway, calls: Calls
) -> None:
    # No approver: the model gets the pending id; it cannot approve by itself.
    delete = {"tool_name": "notes_delete", "parameters": {"note_id": "n1"}}
    replay.script(vendor.turn(calls=[call("c1", "invoke_tool", delete)]), vendor.turn("Please approve."))
    converse(vendor, replay, gw, ["Delete n1"], use_async=use_async)
    ((_, text),) = vendor.results(replay.bodies[1])
    pending_id = json.loads(text)["pending_id"]
    assert json.loads(text)["status"] == "confirmation_required" and calls == []

    replay.script(
        vendor.turn(calls=[call("c2", "invoke_tool", {**delete, "confirmation": pending_id})]),
        vendor.turn("No."),
    )
    converse(vendor, replay, gw, ["I approve"], use_async=use_async)
    assert error_of(vendor.results(replay.bodies[3])[0][1])["code"] == "confirmation_pending" and calls == []

    assert gw.approve(pending_id) is not None  # the host, outside the model's channel
    replay.script(
        vendor.turn(calls=[call("c3", "invoke_tool", {**delete, "confirmation": pending_id})]),
        vendor.turn("Done."),
    )
    converse(vendor, replay, gw, ["Approved"], use_async=use_async)
    assert vendor.results(replay.bodies[5]) == [("c3", '{"deleted":"n1","by":"local"}')]
    assert calls.names() == ["notes_delete"]


def test_the_round_cap_stops_tool_calls_and_asks_for_an_answer_without_tools(
    vendor: Vendor, use_async: bool, replay: Replay, gw: Gateway
) -> None:
    replay.script(
        vendor.turn(calls=[call("c1", "discover_tools", {"query": "notes"})]),
        vendor.turn(calls=[call("c2", "discover_tools", {"query": "files"})]),
        vendor.turn("Here is what I found."),
    )
    (result,), events, _ = converse(vendor, replay, gw, ["Look around"], use_async=use_async, max_rounds=2)

    assert (result.text, result.stop, result.rounds) == ("Here is what I found.", "round_cap", 2)
    assert [e for e in events if isinstance(e, RoundCapReached)] == [RoundCapReached(2)]
    final = replay.bodies[-1]
    assert final["tool_choice"] in ("none", {"type": "none"})
    assert vendor.last_text(final) == WRAP_UP_NOTE
    assert [cid for cid, _ in vendor.results(final)] == ["c2"]
    assert all("tool_choice" not in body for body in replay.bodies[:-1])
    assert sum(isinstance(e, ToolCallFinished) for e in events) == 2

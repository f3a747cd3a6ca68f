"""run_code's definition and the texts the model reads about a program, pinned."""

from __future__ import annotations

import json

import pytest
from syrupy.assertion import SnapshotAssertion

from gateway import Catalog, Gateway, render
from gateway.adapters import anthropic
from gateway.client_settings import CodeSettings
from gateway.code import enable, text
from gateway.context import ErrorInfo, ToolResult

from ..sample_tools import ALL_TOOLS


@pytest.mark.filterwarnings("ignore:open_binary:DeprecationWarning")  # bpe-openai reading its vocabulary
def test_run_codes_definition_is_pinned_and_within_250_tokens(snapshot: SnapshotAssertion) -> None:
    from bpe_openai import get_encoding

    gw = Gateway(Catalog(ALL_TOOLS))
    programs = enable(gw, CodeSettings(enabled=True))
    try:
        (definition,) = [d for d in anthropic.tools(gw.meta) if d["name"] == "run_code"]
    finally:
        programs.close()
    assert definition == snapshot
    assert len(get_encoding("cl100k_base").encode(json.dumps(definition))) <= 250


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

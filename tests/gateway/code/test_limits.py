"""A program's limits (wall time, execution time, memory, calls, result size): each a clear error with what was done."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import BaseModel

from gateway import PARAMS_CONFIG, Catalog, Gateway, ToolContext, run_sync, tool
from gateway.code import enable
from gateway.context import ToolResult
from gateway.settings.sections import CodeSettings

from ..sample_tools import ALL_TOOLS, Calls

NEVER = asyncio.Event()


class NoParams(BaseModel):
    model_config = PARAMS_CONFIG


@tool(category="notes", action="read", read_only=True)
async def notes_wait(params: NoParams) -> str:
    """Waits for an event that never comes."""
    await NEVER.wait()
    return "never"


def gateway_with(settings: CodeSettings) -> Iterator[Gateway]:
    gw = Gateway(Catalog([*ALL_TOOLS, notes_wait]))
    programs = enable(gw, settings)
    yield gw
    programs.close()


@pytest.fixture
def gw(calls: Calls) -> Iterator[Gateway]:
    yield from gateway_with(
        CodeSettings(
            enabled=True, max_calls=5, cpu_seconds=0.2, memory_mb=16, max_result_bytes=1000, wall_seconds=0.5
        )
    )


def run(gw: Gateway, code: str) -> ToolResult:
    return run_sync(gw.call("run_code", {"code": code}, ToolContext(call_id="p")))


def error_of(result: ToolResult) -> tuple[str, str]:
    assert result.error is not None, result
    return result.error.code, result.error.message


def test_a_program_stops_at_its_limit_of_calls_saying_what_ran(gw: Gateway, calls: Calls) -> None:
    code, message = error_of(run(gw, "for i in range(100):\n    call('notes_search', {'title': str(i)})"))
    assert code == "program_limit"
    assert message == (
        "The program stopped: it reached its limit of 5 calls. Done before it stopped: 5 calls (notes_search x5)."
    )
    assert len(calls) == 5


def test_an_infinite_loop_ends_at_its_execution_time_limit(gw: Gateway, calls: Calls) -> None:
    code, message = error_of(run(gw, "call('notes_search', {'title': 'a'})\nwhile True:\n    pass"))
    assert code == "program_limit"
    assert message == (
        "The program stopped: it ran past its limit of 0.2 seconds of execution. "
        "Done before it stopped: 1 call (notes_search)."
    )


def test_a_huge_allocation_ends_at_the_memory_limit(gw: Gateway) -> None:
    for program in ("x = 'a' * (10 ** 9)", "x = [0] * (10 ** 8)", "x = [1]\nwhile True:\n    x = x + x"):
        code, message = error_of(run(gw, program))
        assert code == "program_limit"
        assert message.startswith("The program stopped: it needed more than its limit of 16 MB of memory.")


def test_a_recursion_without_end_is_stopped(gw: Gateway) -> None:
    code, message = error_of(run(gw, "def f(n):\n    return f(n + 1)\nf(0)"))
    assert code == "program_limit" and "nested too deep" in message


def test_a_result_over_its_size_limit_is_refused(gw: Gateway) -> None:
    code, message = error_of(run(gw, "call('notes_search', {'title': 'a'})\n'x' * 5000"))
    assert code == "program_limit"
    assert message.startswith("The program stopped: its result is 5,")
    assert message.endswith("over the limit of 1,000. Done before it stopped: 1 call (notes_search).")
    printed = run(gw, "for i in range(300):\n    print('line', i)\n'short'")
    assert error_of(printed)[0] == "program_limit"


def test_a_program_stops_at_its_wall_time_while_a_call_is_running(gw: Gateway) -> None:
    code, message = error_of(run(gw, "call('notes_search', {'title': 'a'})\ncall('notes_wait', {})"))
    assert code == "program_limit"
    assert message == (
        "The program stopped: it ran past its limit of 0.5 seconds (calls included). "
        "Done before it stopped: 1 call (notes_search)."
    )


def test_printed_output_comes_back_with_the_result(gw: Gateway) -> None:
    result = run(gw, "print('hello')\n42")
    assert result.ok and result.output == {"result": 42, "printed": "hello\n", "calls": 0}


def test_an_empty_program_is_a_clear_error(gw: Gateway) -> None:
    assert error_of(run(gw, "   "))[0] == "invalid_arguments"
    assert error_of(run_sync(gw.call("run_code", {})))[0] == "invalid_arguments"


def test_settings_limits_reach_the_sandbox() -> None:
    settings: Any = CodeSettings(enabled=True, memory_mb=32, cpu_seconds=1.5)
    for gw in gateway_with(settings):
        programs = gw.meta
        assert "run_code" in programs

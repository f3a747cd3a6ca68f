"""Arguments are checked as the JSON they are: strictly for booleans and numbers, strings still parse."""

from __future__ import annotations

import enum
from datetime import date, datetime
from typing import Any, Literal

import pytest
from pydantic import BaseModel, Field

from gateway import PARAMS_CONFIG, Catalog, Gateway, RegistrationError, ToolResult, run_sync, tool

SEEN: list[dict[str, Any]] = []


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Window(BaseModel):
    model_config = PARAMS_CONFIG
    days: int = Field(1, description="How many days.")


class EventParams(BaseModel):
    model_config = PARAMS_CONFIG
    title: str = Field(description="Title.")
    all_day: bool = Field(False, description="A whole day.")
    max_results: int = Field(10, description="Most results.")
    weight: float = Field(1.0, description="A weight.")
    day: date | None = Field(None, description="A day.")
    at: datetime | None = Field(None, description="A moment.")
    color: Color | None = Field(None, description="A color.")
    kind: Literal["a", "b"] | None = Field(None, description="A kind.")
    tags: tuple[str, ...] = Field((), description="Tags.")
    window: Window | None = Field(None, description="A window.")
    loose: int = Field(0, strict=False, description="Takes '3' too (opted out of strictness).")


@tool(category="demo", action="create", destructive=False)
def demo_event(params: EventParams) -> str:
    """Create an event."""
    SEEN.append(params.model_dump())
    return "ok"


@pytest.fixture
def gw() -> Gateway:
    SEEN.clear()
    return Gateway(Catalog([demo_event]))


def invoke(gw: Gateway, **arguments: Any) -> ToolResult:
    return run_sync(
        gw.call("invoke_tool", {"tool_name": "demo_event", "parameters": {"title": "t", **arguments}})
    )


@pytest.mark.parametrize(
    ("arguments", "loc", "msg"),
    [
        ({"all_day": "yes"}, "all_day", "Input should be a valid boolean, not a string: send true or false without quotes"),
        ({"all_day": "true"}, "all_day", "Input should be a valid boolean, not a string: send true or false without quotes"),
        ({"all_day": 1}, "all_day", "Input should be a valid boolean, not a number: send true or false"),
        ({"max_results": "10"}, "max_results", "Input should be a valid integer, not a string: send a whole number without quotes"),
        ({"max_results": 2.5}, "max_results", "Input should be a valid integer, not a decimal: send a whole number"),
        ({"max_results": None}, "max_results", "Input should be a valid integer, not null: send a whole number"),
        ({"weight": "1.5"}, "weight", "Input should be a valid number, not a string: send a number without quotes"),
        ({"window": {"days": "2"}}, "window.days", "Input should be a valid integer, not a string: send a whole number without quotes"),
    ],
)  # fmt: skip
def test_a_boolean_or_number_sent_as_something_else_is_refused_with_how_to_fix_it(
    gw: Gateway, arguments: dict[str, Any], loc: str, msg: str
) -> None:
    result = invoke(gw, **arguments)
    assert result.error is not None and result.error.code == "invalid_arguments"
    assert [(p.loc, p.msg) for p in result.error.problems] == [(loc, msg)]
    assert SEEN == []


def test_the_refusal_never_echoes_the_value_sent(gw: Gateway) -> None:
    result = invoke(gw, all_day="sk-secret-token")
    assert result.error is not None and "sk-secret" not in repr(result.error)


def test_strings_still_parse_where_the_schema_says_string_and_integers_are_fine_numbers(gw: Gateway) -> None:
    result = invoke(
        gw,
        all_day=True,
        max_results=5,
        weight=2,
        day="2025-03-04",
        at="2025-03-04T09:30:00+01:00",
        color="red",
        kind="b",
        tags=["x", "y"],
        window={"days": 3},
    )
    assert result.ok, result.error
    seen = SEEN[0]
    assert (seen["day"], seen["color"], seen["tags"], seen["window"]) == (
        date(2025, 3, 4),
        Color.RED,
        ("x", "y"),
        {"days": 3},
    )
    assert seen["at"].isoformat() == "2025-03-04T09:30:00+01:00" and seen["weight"] == 2.0


def test_a_field_can_opt_out_of_strictness(gw: Gateway) -> None:
    assert invoke(gw, loose="3").ok and SEEN[0]["loose"] == 3


def test_parameters_sent_as_a_json_string_are_checked_the_same_way(gw: Gateway) -> None:
    arguments = {"tool_name": "demo_event", "parameters": '{"title": "t", "max_results": "10"}'}
    result = run_sync(gw.call("invoke_tool", arguments))
    assert result.error is not None and result.error.problems[0].loc == "max_results"


def test_a_host_may_pass_python_values_that_have_a_json_form(gw: Gateway) -> None:
    result = run_sync(gw.invoke("demo_event", {"title": "t", "day": date(2025, 3, 4), "color": Color.GREEN}))
    assert result.ok and SEEN[0]["day"] == date(2025, 3, 4) and SEEN[0]["color"] is Color.GREEN


def test_a_host_passing_a_value_with_no_json_form_gets_an_error_not_a_crash(gw: Gateway) -> None:
    result = run_sync(gw.invoke("demo_event", {"title": object()}))
    assert result.error is not None and result.error.code == "invalid_arguments"
    assert result.error.problems[0].loc == "parameters" and SEEN == []


def test_meta_tool_arguments_are_strict_too(gw: Gateway) -> None:
    result = run_sync(gw.call("discover_tools", {"query": "event", "limit": "5"}))
    assert result.error is not None and result.error.problems[0].loc == "limit"


def test_an_example_the_model_could_not_send_is_a_registration_error() -> None:
    @tool(category="demo", action="create", destructive=False, examples=[{"title": "t", "max_results": "10"}])
    def demo_other(params: EventParams) -> str:
        """Create another event."""
        return "ok"

    with pytest.raises(RegistrationError, match=r"example 0 does not validate: max_results: Input should be"):
        Catalog([demo_other])

"""Plain typed functions as tools: the schema from the signature, the words from the docstring."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import date
from pathlib import Path
from typing import Annotated, Any

import pytest
from pydantic import BaseModel, Field

from gateway import PARAMS_CONFIG, Catalog, Gateway, Principal, RegistrationError, ToolContext, run_sync, tool
from gateway.definition import definition_from_function

from .plain_tools import CALLS, PLAIN_TOOLS, demo_schedule, greet


@pytest.fixture
def gw() -> Gateway:
    CALLS.clear()
    return Gateway(Catalog(PLAIN_TOOLS))


GREET_SCHEMA = {
    "additionalProperties": False,
    "properties": {
        "name": {"description": "Who to greet.", "type": "string"},
        "excited": {"default": False, "description": "End with an exclamation mark.", "type": "boolean"},
    },
    "required": ["name"],
    "type": "object",
}


def test_a_plain_function_gets_its_schema_from_the_signature_and_the_docstring() -> None:
    d = Catalog([greet]).by_name["greet"]
    assert d.json_schema == GREET_SCHEMA
    assert (d.summary, d.description) == ("Say hello to someone.", "Say hello to someone.")
    assert (d.category, d.action, d.flags) == ("demo", "read", ("read_only",))


def test_the_function_is_called_with_keyword_arguments(gw: Gateway) -> None:
    result = run_sync(gw.invoke("greet", {"name": "Ada", "excited": True}))
    assert result.ok and result.output == "Hello, Ada!"
    assert CALLS == [("greet", {"name": "Ada", "excited": True})]


def test_the_decorated_function_is_still_an_ordinary_function() -> None:
    assert greet("Bo") == "Hello, Bo."


GOOGLE = """Say hello to someone.

    Args:
        name: Who to greet.
        excited: End with an
            exclamation mark.
    """
NUMPY = """Say hello to someone.

    Parameters
    ----------
    name : str
        Who to greet.
    excited : bool, optional
        End with an exclamation mark.
    """
REST = """Say hello to someone.

    :param name: Who to greet.
    :param bool excited: End with an exclamation mark.
    """


@pytest.mark.parametrize("doc", [GOOGLE, NUMPY, REST], ids=["google", "numpy", "rest"])
def test_google_numpy_and_rest_docstrings_describe_the_same_schema(doc: str) -> None:
    def greet(name: str, excited: bool = False) -> str:
        return name

    greet.__doc__ = doc
    d = Catalog([tool(category="demo", action="read", read_only=True)(greet)]).by_name["greet"]
    assert d.json_schema == GREET_SCHEMA
    assert d.description == "Say hello to someone."


def test_the_description_keeps_the_text_and_what_is_returned_but_not_the_parameters() -> None:
    d = Catalog([demo_schedule]).by_name["demo_schedule"]
    assert d.description == (
        "Book a room.\n\nBooks a room for a meeting of the given length.\n\n"
        "Returns: The booking, with the principal who made it."
    )


def test_a_context_parameter_is_injected_and_never_shown(gw: Gateway) -> None:
    d = gw.catalog.by_name["demo_schedule"]
    assert list(d.json_schema["properties"]) == ["title", "minutes", "room"]
    assert d.json_schema["required"] == ["title"]
    ctx = ToolContext(principal=Principal("ada"))
    result = run_sync(gw.invoke("demo_schedule", {"title": "Plan", "room": "blue"}, context=ctx))
    assert result.output == {"title": "Plan", "minutes": 30, "room": "blue", "by": "ada"}


def test_annotated_constraints_are_in_the_schema_and_enforced(gw: Gateway) -> None:
    minutes = gw.catalog.by_name["demo_schedule"].json_schema["properties"]["minutes"]
    assert minutes == {
        "default": 30,
        "description": "How long it lasts, in minutes.",
        "maximum": 480,
        "minimum": 5,
        "type": "integer",
    }
    result = run_sync(gw.invoke("demo_schedule", {"title": "Plan", "minutes": 1}))
    assert result.error is not None and result.error.problems[0].loc == "minutes"
    assert CALLS == []


def test_an_async_function_is_awaited(gw: Gateway) -> None:
    assert gw.catalog.by_name["demo_schedule"].is_async
    result = run_sync(gw.invoke("demo_schedule", {"title": "Plan", "minutes": 45}))
    assert result.ok and result.output["minutes"] == 45


def test_a_description_given_with_field_wins_over_the_docstring() -> None:
    @tool(category="demo", action="read", read_only=True)
    def demo_find(
        query: Annotated[str, Field(description="Words to look for.", max_length=50)],
        limit: int = Field(10, description="Most results.", ge=1),
        page: int = Field(1, ge=1),
    ) -> list[str]:
        """Find things.

        Args:
            query: Overridden by the Field description.
            page: Which page of results.
        """
        return [query] * limit * page

    schema = Catalog([demo_find]).by_name["demo_find"].json_schema
    assert schema["properties"] == {
        "query": {"description": "Words to look for.", "maxLength": 50, "type": "string"},
        "limit": {"default": 10, "description": "Most results.", "minimum": 1, "type": "integer"},
        "page": {"default": 1, "description": "Which page of results.", "minimum": 1, "type": "integer"},
    }
    assert schema["required"] == ["query"]


def test_an_undocumented_parameter_names_the_function_and_the_parameter_with_every_other_problem() -> None:
    @tool(category="Bad Category", action="read", read_only=True)
    def demo_lookup(city: str, when: date, units: str = "metric") -> str:
        """Look up the weather.

        Args:
            city: The city.
            unit: Misspelled.
        """
        return city

    with pytest.raises(RegistrationError) as info:
        Catalog([demo_lookup, greet])
    problems = info.value.problems
    assert "demo_lookup: category 'Bad Category' must match [a-z0-9_]+" in problems
    assert (
        "demo_lookup: the docstring of demo_lookup() describes 'unit', which is not one of its parameters"
        in problems
    )
    for name in ("when", "units"):
        assert (
            f"demo_lookup: parameter {name!r} has no description (describe it under Args in the docstring "
            "of demo_lookup(), or with Annotated[..., Field(description=...)])"
        ) in problems
    assert len(problems) == 4


def test_a_signature_the_model_cannot_be_told_about_is_refused() -> None:
    @tool(category="demo", action="read", read_only=True)
    def demo_any(thing, *more: str, **options: str) -> None:  # type: ignore[no-untyped-def]
        """Take anything.

        Args:
            thing: Something.
        """

    problems = definition_from_function(demo_any)[1]
    assert (
        "demo_any: parameter 'thing' of demo_any() has no type annotation (the schema needs one)" in problems
    )
    assert any("demo_any() takes *more: name each parameter" in p for p in problems)
    assert any("demo_any() takes **options: name each parameter" in p for p in problems)


def test_a_parameter_named_like_a_pydantic_attribute_is_refused() -> None:
    @tool(category="demo", action="read", read_only=True)
    def demo_dump(json: str) -> str:
        """Dump.

        Args:
            json: Text.
        """
        return json

    definition, problems = definition_from_function(demo_dump)
    assert definition is None
    assert problems == ["demo_dump: parameter 'json' of demo_dump() is a name pydantic reserves; rename it"]


class Opaque:
    pass


def test_a_type_with_no_schema_is_a_registration_problem_not_a_crash() -> None:
    @tool(category="demo", action="read", read_only=True)
    def demo_opaque(thing: Opaque) -> None:
        """Take an opaque thing.

        Args:
            thing: The thing.
        """

    problems = definition_from_function(demo_opaque)[1]
    assert len(problems) == 1 and problems[0].startswith("demo_opaque: no params model can be made")


def test_a_function_without_parameters_takes_an_empty_object() -> None:
    @tool(category="demo", action="read", read_only=True)
    def demo_ping() -> str:
        """Answer pong."""
        return "pong"

    gw = Gateway(Catalog([demo_ping]))
    assert gw.catalog.by_name["demo_ping"].json_schema == {
        "additionalProperties": False,
        "properties": {},
        "type": "object",
    }
    assert run_sync(gw.invoke("demo_ping", {})).output == "pong"


def test_positional_only_parameters_are_passed_by_position() -> None:
    @tool(category="demo", action="read", read_only=True)
    def demo_add(a: int, b: int, /, *, scale: float = 1.0) -> float:
        """Add two numbers.

        Args:
            a: First.
            b: Second.
            scale: Multiply the sum by this.
        """
        return (a + b) * scale

    gw = Gateway(Catalog([demo_add]))
    assert run_sync(gw.invoke("demo_add", {"a": 2, "b": 3, "scale": 2})).output == 10.0


class Address(BaseModel):
    street: str = Field(description="Street and number.")
    city: str = Field(description="City.")


def test_a_model_followed_by_other_parameters_is_a_nested_parameter_not_the_params_model() -> None:
    @tool(category="demo", action="create", destructive=False)
    def demo_ship(to: Address, express: bool = False) -> str:
        """Ship a parcel.

        Args:
            to: Where it goes.
            express: Ship overnight.
        """
        return f"{to.city}{' express' if express else ''}"

    gw = Gateway(Catalog([demo_ship]))
    schema = gw.catalog.by_name["demo_ship"].json_schema
    assert list(schema["properties"]) == ["to", "express"] and "Address" in schema["$defs"]
    result = run_sync(
        gw.invoke("demo_ship", {"to": {"street": "1 Main St", "city": "Oslo"}, "express": True})
    )
    assert result.output == "Oslo express"


class Query(BaseModel):
    model_config = PARAMS_CONFIG
    q: str = Field(description="What to look for.")


def test_the_params_model_form_is_unchanged_beside_plain_functions() -> None:
    @tool(category="demo", action="search", read_only=True)
    def demo_search(params: Query, ctx: ToolContext) -> str:
        """Search.

        Args:
            params: Kept in the description: a params-model tool's docstring is taken whole.
        """
        return f"{params.q} for {ctx.principal.id}"

    catalog = Catalog()
    catalog.register(demo_search, greet)
    d = catalog.by_name["demo_search"]
    assert d.params is Query and d.handler is demo_search
    assert "Kept in the description" in d.description
    result = run_sync(Gateway(catalog).invoke("demo_search", {"q": "milk"}))
    assert result.output == "milk for local"


def test_examples_of_a_plain_function_must_validate() -> None:
    @tool(category="demo", action="read", read_only=True, examples=[{"name": "Ada", "excited": "yes"}])
    def demo_hello(name: str, excited: bool = False) -> str:
        """Say hello.

        Args:
            name: Who.
            excited: Shout.
        """
        return name

    problems = definition_from_function(demo_hello)[1]
    assert problems == [
        "demo_hello: example 0 does not validate: excited: Input should be a valid boolean (1 error(s))"
    ]


def test_the_command_line_serves_plain_functions(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(f'catalogs = ["tests.gateway.plain_tools:provide"]\ndata_dir = "{tmp_path}"\n')
    program = [sys.executable, "-m", "gateway.cli"]

    def run(*argv: str) -> tuple[int, Any]:
        done = subprocess.run(
            [*program, *argv, "--json", "--config", str(config)], capture_output=True, text=True, check=False
        )
        return done.returncode, json.loads(done.stdout)

    code, schema = run("schema", "greet")
    assert code == 0 and schema["parameters"] == GREET_SCHEMA
    code, output = run("invoke", "greet", '{"name": "Ada", "excited": true}')
    assert (code, output) == (0, "Hello, Ada!")
    code, output = run("invoke", "greet", '{"name": "Ada", "excited": "yes"}')
    assert code == 1 and output["error"]["problems"] == [
        {
            "loc": "excited",
            "msg": "Input should be a valid boolean, not a string: send true or false without quotes",
        }
    ]

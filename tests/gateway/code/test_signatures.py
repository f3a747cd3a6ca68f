"""Found tools as Python signatures: what discover() gives a program, pinned and checked against validation."""

from __future__ import annotations

import ast
import json
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import BaseModel, Field, ValidationError
from syrupy.assertion import SnapshotAssertion

from gateway import PARAMS_CONFIG, Catalog, Gateway, Policy, ToolContext, run_sync, tool
from gateway.arguments import validate_arguments
from gateway.code import enable
from gateway.code.text import signature, stub
from gateway.definition import ToolDefinition
from gateway.discovery import schema_answer
from gateway.policy import Rule
from gateway.settings.sections import CodeSettings
from services.workspace import CATALOG

from ..sample_tools import ALL_TOOLS

TOOLS = [*CATALOG, *Catalog(ALL_TOOLS)]


@pytest.fixture
def hidden_boom() -> Iterator[Gateway]:
    gw = Gateway(Catalog(ALL_TOOLS), policy=Policy((Rule("deny", names=("files_boom",)),)))
    programs = enable(gw, CodeSettings(enabled=True))
    yield gw
    programs.close()


def program(gw: Gateway, code: str) -> Any:
    result = run_sync(gw.call("run_code", {"code": code}, ToolContext(session_id="s1")))
    assert result.ok, result
    return result.output["result"]


def test_the_workspace_tools_signatures_are_pinned(snapshot: SnapshotAssertion) -> None:
    assert [signature(d) for d in CATALOG] == snapshot


def test_every_workspace_tools_stub_is_python_and_shorter_than_its_schema() -> None:
    for d in CATALOG:
        text = stub(d)
        ast.parse(text + "\n")
        assert len(text) < len(json.dumps(schema_answer(d))), d.name


def test_schema_in_a_program_gives_the_tool_as_a_python_stub(
    hidden_boom: Gateway, snapshot: SnapshotAssertion
) -> None:
    stubs = program(hidden_boom, "[schema('notes_delete'), schema('notes_create')]")
    assert stubs == snapshot
    for text in stubs:  # each parses as Python
        ast.parse(text + "\n")


def test_schema_of_a_hidden_tool_raises_as_for_a_name_that_exists_nowhere(hidden_boom: Gateway) -> None:
    answers = program(
        hidden_boom,
        "out = []\nfor n in ['files_boom', 'files_nowhere']:\n    try:\n        schema(n)\n"
        "    except ToolError as e:\n        out.append(str(e))\nout",
    )
    assert [a.split(" Did you mean")[0] for a in answers] == [
        "schema: unknown_tool: There is no tool named 'files_boom'.",
        "schema: unknown_tool: There is no tool named 'files_nowhere'.",
    ]
    assert answers[0].count("files_boom") == 1  # never suggested


def test_discover_in_a_program_lists_each_found_tool_as_its_signature(hidden_boom: Gateway) -> None:
    page = program(hidden_boom, "discover('create a note', limit=1)")
    assert page == {
        "tools": [
            "notes_create(title: str, priority=1, color: Literal['red', 'green'] = None)  # Create a note."
        ],
        "total": page["total"],
        "next_cursor": page["next_cursor"],
    }


def test_a_hidden_tool_never_appears_among_the_signatures(hidden_boom: Gateway) -> None:
    pages = program(
        hidden_boom,
        "[discover('files boom raise', limit=50), discover(categories=['files'], limit=50), "
        "discover('files_boom'), discover('read a file under srv')]",
    )
    shown = " ".join(t for page in pages for t in page.get("tools", ()))
    assert "files_read(" in shown
    assert "files_boom" not in repr(pages)


def test_a_page_that_found_nothing_reads_as_discover_tools_answers_it(hidden_boom: Gateway) -> None:
    page = program(hidden_boom, "discover('zzqx wibble')")
    assert page["tools"] == [] and page["message"] == "No tool matched."


def _parameters(d: ToolDefinition) -> tuple[list[ast.arg], list[ast.expr | None]]:
    """The signature's parameters, and the defaults of its last ones (it parses as Python)."""
    (function,) = ast.parse(f"def {signature(d).split('  # ')[0]}: ...").body
    assert isinstance(function, ast.FunctionDef)
    return function.args.args, list(function.args.defaults)


def _sample(annotation: ast.expr | None, default: ast.expr | None) -> list[Any]:
    """Values a program could pass for a parameter so annotated (every value of a Literal)."""
    if annotation is None:  # typed by its default
        assert default is not None
        return [ast.literal_eval(default)]
    text = ast.unparse(annotation)
    if text.startswith("Literal["):
        return list(
            ast.literal_eval(text[len("Literal") :]) if "," in text else [ast.literal_eval(text[8:-1])]
        )
    return [{"str": "x", "int": 1, "float": 1.5, "bool": True, "list[str]": ["x"], "dict": {}}[text]]


@pytest.mark.parametrize("d", TOOLS, ids=lambda d: d.name)
def test_a_signature_calls_the_tool_as_its_validation_accepts(d: ToolDefinition) -> None:
    params, shown = _parameters(d)
    defaults: list[ast.expr | None] = [*[None] * (len(params) - len(shown)), *shown]
    names = [p.arg for p in params]
    fields = {info.alias or name: info for name, info in d.model.model_fields.items()}
    assert sorted(names) == sorted(fields)
    required = [n for n, default in zip(names, defaults, strict=True) if default is None]
    assert required == [n for n in names if fields[n].is_required()]  # and they come first
    base = {n: _sample(p.annotation, None)[0] for n, p in zip(names, params, strict=True) if n in required}
    validate_arguments(d.model, base)
    for missing in required:  # each required parameter is required
        with pytest.raises(ValidationError):
            validate_arguments(d.model, {n: v for n, v in base.items() if n != missing})
    for p, default in zip(params, defaults, strict=True):
        if default is None:
            continue
        text = ast.unparse(default)
        info = fields[p.arg]
        if text != "...":  # the default shown is the tool's own
            expected = info.get_default(call_default_factory=True)
            assert ast.literal_eval(text) == expected, p.arg
        if text == "None":  # None may be passed
            validate_arguments(d.model, {**base, p.arg: None})
        for value in _sample(p.annotation, default):  # every value the annotation allows is valid
            validate_arguments(d.model, {**base, p.arg: value})
        if p.annotation is not None and ast.unparse(p.annotation).startswith("Literal["):
            with pytest.raises(ValidationError):  # and only those
                validate_arguments(d.model, {**base, p.arg: "not-one-of-them"})
    with pytest.raises(ValidationError):
        validate_arguments(d.model, {**base, "not_a_parameter": 1})


class _Wide(BaseModel):
    model_config = PARAMS_CONFIG
    gid: str = Field(description="The workspace.")
    opt_0: int | None = Field(None, description="An option.")
    opt_1: int | None = Field(None, description="An option.")
    opt_2: int | None = Field(None, description="An option.")
    opt_3: int | None = Field(None, description="An option.")
    opt_4: int | None = Field(None, description="An option.")
    opt_5: int | None = Field(None, description="An option.")
    opt_6: int | None = Field(None, description="An option.")
    opt_7: int | None = Field(None, description="An option.")
    opt_8: int | None = Field(None, description="An option.")
    opt_9: int | None = Field(None, description="An option.")
    opt_10: int | None = Field(None, description="An option.")
    assignee_any: str | None = Field(None, alias="assignee.any", description="Any of these assignees.")
    opt_12: int | None = Field(None, description="An option.")


@tool(category="tasks", action="search", summary="Search tasks", read_only=True)
def tasks_search_wide(params: _Wide) -> list[str]:
    """Search tasks"""
    return []


def test_a_tool_with_many_parameters_shows_twelve_optional_ones_and_points_to_schema_for_the_rest() -> None:
    (d,) = Catalog([tasks_search_wide])
    assert signature(d) == (
        "tasks_search_wide(gid: str, opt_0: int = None, opt_1: int = None, opt_2: int = None, "
        "opt_3: int = None, opt_4: int = None, opt_5: int = None, opt_6: int = None, opt_7: int = None, "
        "opt_8: int = None, opt_9: int = None, opt_10: int = None, 'assignee.any': str = None, **more)"
        "  # Search tasks. 1 more optional parameter: schema(name)."
    )
    assert "opt_12: int = None" in stub(d) and "        'assignee.any': Any of these assignees." in stub(d)

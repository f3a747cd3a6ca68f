from __future__ import annotations

import dataclasses
import inspect
from types import MappingProxyType
from typing import Any

import pytest
from pydantic import BaseModel, Field

from gateway import PARAMS_CONFIG, Catalog, Gateway, RegistrationError, ToolDefinition, run_sync, tool
from gateway.definition import NoParams

from .sample_tools import ALL_TOOLS, NoteId, notes_create


def test_index_maps_are_sorted_by_key_and_by_name(catalog: Catalog) -> None:
    assert list(catalog.by_category) == ["files", "notes"]
    assert catalog.by_category["notes"] == ("notes_archive", "notes_create", "notes_delete", "notes_search")
    assert list(catalog.by_action) == ["create", "delete", "read", "search", "update"]
    assert catalog.by_action["read"] == ("files_boom", "files_read")
    assert list(catalog.by_name) == sorted(catalog.by_name)


def test_index_is_the_same_whatever_the_registration_order() -> None:
    forward = Catalog(ALL_TOOLS)
    backward = Catalog(reversed(ALL_TOOLS))
    assert dict(forward.by_category) == dict(backward.by_category)
    assert dict(forward.by_action) == dict(backward.by_action)


def test_index_maps_are_read_only(catalog: Catalog) -> None:
    with pytest.raises(TypeError):
        catalog.by_category["x"] = ()  # type: ignore[index]


def test_a_tool_that_says_nothing_is_destructive_and_not_concurrency_safe(catalog: Catalog) -> None:
    archive = catalog.by_name["notes_archive"]
    assert archive.is_destructive and not archive.concurrency_safe
    assert archive.flags == ("destructive",)


def test_read_only_tools_are_not_destructive(catalog: Catalog) -> None:
    assert catalog.by_name["notes_search"].flags == ("read_only", "concurrency_safe")


def test_decorator_returns_the_function_unchanged() -> None:
    def plain(params: Query) -> str:
        """Echo."""
        return params.q

    marked = tool(category="x", action="read", read_only=True)(plain)
    assert marked is plain and marked(Query(q="t")) == "t"


class Loose(BaseModel):
    x: int


class Undocumented(BaseModel):
    model_config = PARAMS_CONFIG
    y: int


class Query(BaseModel):
    model_config = PARAMS_CONFIG
    q: str = Field(description="q")


def test_every_registration_problem_is_reported_at_once() -> None:
    @tool(category="Bad Category", action="frobnicate")
    def BadName(params: Loose) -> None:  # noqa: N802
        pass

    @tool(category="ok")
    def ok_read(params: Undocumented) -> None:
        """Read."""

    with pytest.raises(RegistrationError) as info:
        Catalog([BadName, ok_read, notes_create, notes_create])
    text = "\n".join(info.value.problems)
    assert "may only use lowercase" in text
    assert "category 'Bad Category'" in text
    assert "action 'frobnicate' is not in the vocabulary" in text
    assert "missing summary" in text
    assert "extra='forbid'" in text
    assert "parameter 'y' has no description" in text
    assert "notes_create: defined 2 times" in text
    assert len(info.value.problems) >= 7


def test_what_is_not_a_tool_is_named_among_the_problems_and_a_list_of_tools_type_checks() -> None:
    tools = [notes_create, "notes_search", 42]  # one list of whatever: typed as list[object]
    with pytest.raises(RegistrationError) as info:
        Catalog(tools)
    assert info.value.problems == [
        "'notes_search': neither a ToolDefinition nor an @tool function",
        "42: neither a ToolDefinition nor an @tool function",
    ]


def test_a_failed_registration_adds_nothing(catalog: Catalog) -> None:
    before = dict(catalog.by_name)
    good = ToolDefinition(
        name="fine_tool",
        category="x",
        action="read",
        summary="Fine.",
        description="Fine.",
        params=NoParams,
        handler=lambda p: None,
        read_only=True,
    )
    with pytest.raises(RegistrationError):
        catalog.register(good, notes_create)
    assert dict(catalog.by_name) == before


def test_names_longer_than_64_characters_are_refused() -> None:
    d = ToolDefinition(
        name="a" * 65,
        category="x",
        action="read",
        summary="S.",
        description="D.",
        params=NoParams,
        handler=lambda p: None,
    )
    with pytest.raises(RegistrationError, match="longer than 64"):
        Catalog([d])


def test_examples_must_validate_against_the_params_model() -> None:
    @tool(category="x", action="delete", examples=[{"note_id": 3}])
    def x_delete(params: NoteId) -> None:
        """Delete."""

    with pytest.raises(RegistrationError, match="example 0 does not validate"):
        Catalog([x_delete])


def test_the_verb_maps_onto_the_action_vocabulary_and_is_kept() -> None:
    @tool(category="x", action="insert", destructive=False, params=Query)
    def x_insert(params: Query) -> None:
        """Insert."""

    d = Catalog([x_insert]).by_name["x_insert"]
    assert (d.action, d.verb) == ("create", "insert")


def test_schema_has_no_noisy_titles_and_forbids_extra_fields(catalog: Catalog) -> None:
    schema = catalog.by_name["notes_create"].json_schema
    assert "title" not in schema
    assert schema["additionalProperties"] is False
    assert "title" in schema["properties"]  # the *field* called title stays
    assert "title" not in schema["properties"]["priority"]


def test_a_lazy_params_model_is_built_on_first_use_only() -> None:
    built: list[str] = []

    def make() -> type[BaseModel]:
        built.append("x")
        return Query

    d = ToolDefinition(
        name="lazy_read",
        category="x",
        action="read",
        summary="S.",
        description="D.",
        params=make,
        handler=lambda p: p.q,
        read_only=True,
        search_text="q query",
    )
    catalog = Catalog([d])
    assert built == [] and catalog.by_name["lazy_read"].is_lazy
    assert run_sync(Gateway(catalog).invoke("lazy_read", {"q": "hi"})).output == "hi"
    assert d.json_schema["required"] == ["q"] and d.model is Query
    assert built == ["x"]


def test_merging_into_an_empty_catalog_takes_every_tool_and_index() -> None:
    source = Catalog(ALL_TOOLS)
    target = Catalog()
    before = target.version
    target.merge(source)
    assert target.version > before and len(target) == len(source)
    assert dict(target.by_name) == dict(source.by_name)
    assert dict(target.by_category) == dict(source.by_category)
    assert dict(target.by_action) == dict(source.by_action)
    with pytest.raises(RegistrationError, match="notes_create: already registered"):
        target.register(notes_create)
    source.replace(["notes_create"])  # changing either later does not reach the other
    target.replace(["notes_search"])
    assert "notes_create" in target and "notes_create" not in source
    assert "notes_search" in source and "notes_search" not in target
    assert "notes_search" in source.by_category["notes"] and "notes_search" not in target.by_category["notes"]


def test_merging_a_clashing_catalog_changes_nothing() -> None:
    target = Catalog(ALL_TOOLS)
    version = target.version
    with pytest.raises(RegistrationError, match="notes_create: already registered"):
        target.merge(Catalog([notes_create]))
    assert target.version == version and len(target) == len(ALL_TOOLS)


def test_the_written_out_init_takes_every_field_in_order_with_its_default() -> None:
    parameters = list(inspect.signature(ToolDefinition.__init__).parameters.values())[1:]
    fields = dataclasses.fields(ToolDefinition)
    assert [p.name for p in parameters] == [f.name for f in fields]
    for p, f in zip(parameters, fields, strict=True):
        if f.default is not dataclasses.MISSING:
            assert p.default == f.default, f.name
        elif f.default_factory is not dataclasses.MISSING:
            assert p.default is None, f.name  # made per definition, as the factory would
        else:
            assert p.default is inspect.Parameter.empty, f.name
    made = ToolDefinition("x_read", "x", "read", "S.", "D.", NoParams, print)
    assert made.metadata == {} and isinstance(made.metadata, MappingProxyType)
    given: dict[str, Any] = {
        "read_only": True,
        "destructive": False,
        "concurrency_safe": True,
        "verb": "fetch",
        "tags": ("t",),
        "examples": ({"a": 1},),
        "timeout": 3.0,
        "permission": lambda p, c: None,
        "prompt": "P.",
        "search_text": "words",
        "rank_weight": 0.5,
        "metadata": MappingProxyType({"k": "v"}),
    }
    full = ToolDefinition("x_read", "x", "read", "S.", "D.", NoParams, print, **given)
    assert {name: getattr(full, name) for name in given} == given  # every value lands, none defaults
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.name = "y"  # type: ignore[misc]

"""Examples from tool authors: requests (what a user might say) are searched and shown; calls validate."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, Field

from gateway import (
    PARAMS_CONFIG,
    Catalog,
    Gateway,
    NoParams,
    Principal,
    RegistrationError,
    ToolDefinition,
    tool,
)
from gateway.definition import MAX_EXAMPLE_REQUESTS, MAX_REQUEST_LENGTH, definition_from_function
from gateway.filetools.directories import scaffold
from gateway.search import SearchIndex, postings, semantic_available
from gateway.search.semantic import embedding_text

from .filetools_support import TEXT_SCHEMA, call, gateway_over, write_tool


class Title(BaseModel):
    model_config = PARAMS_CONFIG
    title: str = Field(description="What the note says.")


def _definition(name: str, summary: str, examples: tuple[Any, ...] = ()) -> ToolDefinition:
    return ToolDefinition(
        name=name,
        category=name.split("_", maxsplit=1)[0],
        action="read",
        summary=summary,
        description=summary,
        params=NoParams,
        handler=lambda p: None,
        read_only=True,
        examples=examples,
    )


def test_strings_are_requests_and_mappings_are_calls_in_every_form_of_tool() -> None:
    @tool(category="notes", action="create", destructive=False, examples=["jot this down", {"title": "Milk"}])
    def notes_add(params: Title) -> None:
        """Add a note."""

    @tool(category="notes", action="create", destructive=False, examples=[{"title": "Eggs"}, "remember eggs"])
    def notes_write(title: str) -> None:
        """Write a note.

        Args:
            title: What the note says.
        """

    for fn, requests, calls in (
        (notes_add, ("jot this down",), ({"title": "Milk"},)),
        (notes_write, ("remember eggs",), ({"title": "Eggs"},)),
    ):
        d, problems = definition_from_function(fn)
        assert problems == [] and d is not None
        assert (d.example_requests, d.example_calls) == (requests, calls)


def test_one_example_given_bare_is_one_example_not_its_letters() -> None:
    @tool(category="notes", action="read", read_only=True, examples="show my notes")
    def notes_show() -> None:
        """Show the notes."""

    d, problems = definition_from_function(notes_show)
    assert problems == [] and d is not None and d.example_requests == ("show my notes",)


def test_bad_requests_are_refused_at_registration_all_at_once() -> None:
    too_many = tuple(f"request number {i}" for i in range(MAX_EXAMPLE_REQUESTS + 1))
    bad = _definition("notes_read", "Read notes.", ("  ", "x" * (MAX_REQUEST_LENGTH + 1), 42, *too_many))
    with pytest.raises(RegistrationError) as raised:
        Catalog([bad])
    message = str(raised.value)
    assert "example 0 must be a request of 1 to 200 characters" in message
    assert "example 1 must be a request of 1 to 200 characters" in message
    assert "example 2 must be a request (a string) or a call" in message
    assert f"{MAX_EXAMPLE_REQUESTS + 3} example requests; at most {MAX_EXAMPLE_REQUESTS}" in message
    ok = _definition("notes_read", "Read notes.", tuple(too_many[:MAX_EXAMPLE_REQUESTS]))
    assert len(Catalog([ok])) == 1


def test_requests_of_a_lazily_built_tool_are_checked_without_building_it() -> None:
    built: list[int] = []

    def model() -> type[BaseModel]:
        built.append(1)
        return NoParams

    lazy = dataclasses.replace(_definition("notes_read", "Read notes.", ("",)), params=model)
    with pytest.raises(RegistrationError, match="example 0 must be a request"):
        Catalog([lazy])
    assert built == []


def test_get_tool_schema_shows_the_requests_and_the_first_call() -> None:
    @tool(
        category="notes",
        action="create",
        destructive=False,
        examples=["jot this down", {"title": "Milk"}, "note that", {"title": "Eggs"}],
    )
    def notes_add(params: Title) -> None:
        """Add a note."""

    schema = Gateway(Catalog([notes_add])).schema(Principal(), "notes_add")
    assert schema["example_requests"] == ["jot this down", "note that"]
    assert schema["example"] == {"tool_name": "notes_add", "parameters": {"title": "Milk"}}
    plain = Gateway(Catalog([_definition("notes_read", "Read notes.")])).schema(Principal(), "notes_read")
    assert "example_requests" not in plain and "example" not in plain


def test_a_request_finds_its_tool_by_words_nothing_else_about_it_says() -> None:
    tools = [
        _definition("notes_read", "Read notes.", ("what did I scribble about the dentist",)),
        _definition("files_read", "Read a file."),
    ]
    index = SearchIndex(tools, semantic=False)
    assert [d.name for d, _ in index.search("scribble dentist")] == ["notes_read"]
    assert index.search("scribble", allowed={"files_read"}) == []


def test_a_tool_without_requests_is_indexed_as_before() -> None:
    # The new field is empty: the document, its length and so every score are what they were.
    d = _definition("notes_read", "Read notes.")
    assert postings.field_texts(d)[-1] == ""
    assert postings.FIELD_WEIGHTS[:7] == (3.0, 1.5, 1.0, 1.5, 1.0, 0.4, 1.5)
    assert embedding_text(d) == "notes read . notes . Read notes. "


@pytest.mark.skipif(not semantic_available(), reason="the 'search' extra is not installed")
def test_requests_are_embedded_before_a_long_description_that_would_cut_them() -> None:
    d = _definition("notes_read", "word " * 2000, ("what did I scribble",))
    assert embedding_text(d).index("what did I scribble") < embedding_text(d).index("word")


def test_a_changed_request_builds_a_new_cached_index(tmp_path: Path) -> None:
    tools = [
        _definition("notes_read", "Read notes.", ("show my jottings",)),
        _definition("files_read", "Read."),
    ]
    SearchIndex.load_or_build(tools, tmp_path, semantic=False, min_tools=0)
    changed = [_definition("notes_read", "Read notes.", ("show my scribbles",)), tools[1]]
    index = SearchIndex.load_or_build(changed, tmp_path, semantic=False, min_tools=0)
    assert len(list(tmp_path.iterdir())) == 2
    assert [d.name for d, _ in index.search("scribbles")] == ["notes_read"]


def test_strings_in_front_matter_are_requests(tmp_path: Path) -> None:
    write_tool(tmp_path, "echo_text", schema=TEXT_SCHEMA, examples=["say it back to me", {"text": "hi"}])
    gw, tools = gateway_over(tmp_path)
    assert tools.problems == ()
    schema = call(gw, "get_tool_schema", {"tool_name": "echo_text"})
    assert schema["example_requests"] == ["say it back to me"]
    assert schema["example"]["parameters"] == {"text": "hi"}


def test_bad_examples_in_front_matter_are_reported_on_the_examples_line(tmp_path: Path) -> None:
    write_tool(tmp_path, "echo_text", schema=TEXT_SCHEMA, examples=["", 10, {"text": "hi"}])
    _, tools = gateway_over(tmp_path)
    lines = (tmp_path / "echo_text.md").read_text().splitlines()
    assert [(p.line, p.message) for p in tools.problems] == [
        (
            lines.index("examples:") + 1,
            "example 0 must be a request of 1 to 200 characters (what a user might say)",
        ),
        (
            lines.index("examples:") + 1,
            "example 1 must be a request (a string) or a call (a mapping of parameters)",
        ),
    ]


def test_the_scaffold_shows_a_request_and_a_call(tmp_path: Path) -> None:
    scaffold(tmp_path, "echo_back")
    gw, tools = gateway_over(tmp_path)
    assert tools.problems == ()
    schema = call(gw, "get_tool_schema", {"tool_name": "echo_back"})
    assert len(schema["example_requests"]) == 1 and schema["example"]["parameters"] == {"text": "hello"}

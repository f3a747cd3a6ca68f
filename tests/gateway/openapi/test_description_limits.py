"""A description cannot exhaust the gateway that reads it: alias bombs, deep nesting, huge files."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pytest

from gateway.openapi import OpenApi, document
from gateway.openapi.document import SpecError
from gateway.settings.loading import OpenApiSettings

from .conftest import op

HEAD = 'openapi: 3.0.3\ninfo: {title: Laughs}\npaths:\n  /a: {get: {operationId: a, responses: {"200": {description: ok}}}}\n'


def billion_laughs(levels: int = 9) -> str:
    """The classic document: nine levels of nine aliases, 10**9 strings once expanded (under 1 KB)."""
    lines = ['lol0: &lol0 "lol"']
    for i in range(1, levels + 1):
        lines.append(f"lol{i}: &lol{i} [{', '.join([f'*lol{i - 1}'] * 9)}]")
    return HEAD + "x-laughs:\n" + "".join(f"  {line}\n" for line in lines)


def serve(tmp_path: Path, text: str, name: str = "spec.yaml") -> OpenApi:
    path = tmp_path / name
    path.write_text(text)
    return OpenApi(OpenApiSettings(name="laughs", spec=path), tmp_path / "cache")


def test_a_billion_laughs_description_is_refused_with_one_line_and_little_memory(tmp_path: Path) -> None:
    text = billion_laughs()
    assert len(text.encode()) < 1024
    tracemalloc.start()
    try:
        with pytest.raises(SpecError) as refused:
            serve(tmp_path, text)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    message = str(refused.value)
    assert "YAML aliases expand to more than 100,000 further nodes" in message and "\n" not in message
    assert peak < 20 * 1024 * 1024


def test_a_yaml_alias_that_contains_itself_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="a YAML alias refers to itself"):
        serve(tmp_path, HEAD + "x-loop: &loop [1, *loop]\n")


def test_a_description_using_a_few_aliases_is_served(tmp_path: Path) -> None:
    text = HEAD.replace("paths:", "x-shared: &shared {name: id, in: query, schema: {type: string}}\npaths:")
    text += "  /b: {get: {operationId: b, parameters: [*shared], responses: {'200': {description: ok}}}}\n"
    api = serve(tmp_path, text + billion_laughs(3).removeprefix(HEAD))
    assert [d.name for d in api.definitions()] == ["laughs_a", "laughs_b"]
    assert "id" in api.model(api.operations()[1]).model_json_schema()["properties"]


@pytest.mark.parametrize("depth", [150, 100_000], ids=["deep", "past-the-recursion-limit"])
def test_a_json_description_nested_too_deep_is_refused(tmp_path: Path, depth: int) -> None:
    doc = {"openapi": "3.0.3", "info": {"title": "Deep"}, "paths": {"/a": {"get": op("a")}}}
    text = json.dumps(doc)[:-1] + ', "x-deep": ' + "[" * depth + "]" * depth + "}"
    with pytest.raises(SpecError, match="nests deeper than 100 levels") as refused:
        serve(tmp_path, text, "spec.json")
    assert "\n" not in str(refused.value)


def test_a_yaml_description_nested_too_deep_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="nests deeper than 100 levels"):
        serve(tmp_path, HEAD + "x-deep: " + "[" * 150 + "]" * 150 + "\n")


def test_a_description_past_the_size_cap_is_refused_before_it_is_parsed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(document, "MAX_DESCRIPTION_BYTES", 1000)
    with pytest.raises(SpecError, match="larger than 1,000 bytes"):
        serve(tmp_path, HEAD + "x-pad: " + "a" * 2000 + "\n")

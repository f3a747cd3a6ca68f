"""A description of 10,000 operations serves `discover_tools` without building a params model or a
schema, from its first start and from the caches after it; only the tool asked for builds its own.

Counted, not timed (`tests.work_counts`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gateway import Principal, ToolInputError
from gateway.runtime import open_gateway
from gateway.settings.loading import load_settings
from tests.discovery_answers import as_page

from ...work_counts import counted
from .conftest import op, write_spec

RESOURCES = 2_500  # four operations each


def description(resources: int = RESOURCES) -> dict[str, Any]:
    """Resources with list, create (a body by `$ref`), read and delete by id (a path parameter)."""
    paths: dict[str, Any] = {}
    schemas: dict[str, Any] = {}
    for r in range(resources):
        thing = f"widget{r}"
        schemas[thing] = {
            "type": "object",
            "required": ["title"],
            "properties": {"title": {"type": "string"}, "size": {"type": "integer"}},
        }
        body = {
            "required": True,
            "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{thing}"}}},
        }
        limit = {"name": "limit", "in": "query", "schema": {"type": "integer"}}
        one = {"name": f"{thing}_id", "in": "path", "required": True, "schema": {"type": "string"}}
        tags = ["widgets"]
        paths[f"/{thing}s"] = {
            "get": op(
                f"list_{thing}s", summary=f"List the {thing}s of a shop.", parameters=[limit], tags=tags
            ),
            "post": op(f"create_{thing}", summary=f"Create a {thing}.", requestBody=body, tags=tags),
        }
        paths[f"/{thing}s/{{{thing}_id}}"] = {
            "parameters": [one],
            "get": op(f"get_{thing}", summary=f"Read one {thing}.", tags=tags),
            "delete": op(f"delete_{thing}", summary=f"Delete a {thing}.", tags=tags),
        }
    return {
        "openapi": "3.1.0",
        "info": {"title": "Shop", "version": "1"},
        "servers": [{"url": "https://shop.example"}],
        "paths": paths,
        "components": {"schemas": schemas},
    }


@pytest.fixture(scope="module")
def spec(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_spec(tmp_path_factory.mktemp("shop"), description())


def _settings(spec: Path, home: Path) -> Any:
    return load_settings(
        environ={},
        overrides={"data_dir": str(home), "openapi": [{"name": "shop", "spec": str(spec)}]},
    )


def test_ten_thousand_operations_are_discovered_without_building_a_model(
    spec: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("GATEWAY_DENSE", "off")
    work = counted(monkeypatch)
    for start in ("first", "cached"):
        with open_gateway(_settings(spec, tmp_path)) as gw:
            assert len(gw.catalog) >= 4 * RESOURCES, start
            page = as_page(gw.discover(Principal(), query="delete widget77"))["tools"]
            assert page[0]["name"] == "shop_delete_widget77", start
            assert as_page(gw.discover(Principal(), query="send an email to Sam"))["tools"]
            assert (
                as_page(gw.discover(Principal(), categories=["shop_widgets"], actions=["delete"]))["total"]
                == RESOURCES
            )
    assert work == {}


def test_what_search_reads_of_a_schema_is_what_the_schema_says(spec: Path, tmp_path: Path) -> None:
    with open_gateway(_settings(spec, tmp_path)) as gw:
        tools = [d for d in gw.catalog if d.name.startswith("shop_")]
        for d in tools[:: len(tools) // 200]:
            assert sorted(d.required_names()) == sorted(d.json_schema.get("required", [])), d.name
        read = gw.catalog.get("shop_get_widget5")
        assert read is not None and read.required_names() == ("widget5_id",)


def test_an_unknown_category_among_thousands_is_answered_in_a_line(spec: Path, tmp_path: Path) -> None:
    """A description with a category per resource: the error names the closest, not all 2,500."""
    doc = description(60)
    for item in doc["paths"].values():
        for method in ("get", "post", "delete"):
            if method in item:
                item[method]["tags"] = [item[method]["operationId"].split("_", 1)[1].rstrip("s")]
    with (
        open_gateway(_settings(write_spec(tmp_path, doc), tmp_path)) as gw,
        pytest.raises(ToolInputError) as caught,
    ):
        gw.discover(Principal(), categories=["shop_widget7s"])
    message = str(caught.value)
    assert message.startswith("Unknown categories: shop_widget7s. Closest: shop_widget7, ")
    assert message.endswith("Call discover_tools with no arguments for all 63 categories.")
    assert len(message) < 300


def test_the_findability_report_over_ten_thousand_operations_builds_no_model(
    spec: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its requests come from names, summaries and examples, its ranks from the index: a report on
    a slice of the catalog, ranked against all of it, reads no schema."""
    from gateway.search.findability import report

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("GATEWAY_DENSE", "off")
    with open_gateway(_settings(spec, tmp_path)) as gw:
        tools = list(gw.catalog)
        work = counted(monkeypatch)
        found = report(gw.index(), tools[:: len(tools) // 300])
    assert len(found.tools) >= 300 and found.found > 0
    assert work == {}

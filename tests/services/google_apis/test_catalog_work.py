"""The whole Google catalog, 13,869 methods, starts and answers `discover_tools` without building a
single params model or schema: what ranking needs of a schema is read from the catalog's own index.

Counted, not timed (`tests.work_counts`): a heuristic that reads every tool's schema once made one
`gateway discover` over this catalog take minutes.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gateway import Catalog, Gateway, Principal, ToolDefinition
from gateway.gate.confirmation import ConfirmationGate
from services.google_apis import CatalogOptions, catalog_toolset
from services.google_apis.index import Index
from services.google_apis.invoke import Connection, Session
from services.workspace import CATALOG as WORKSPACE
from tests.discovery_answers import as_page

from ...work_counts import counted
from ..google.conftest import Google

REQUESTS = ["resize a disk", "send an email to Sam", "delete the file report.pdf", "list my calendars"]


def _gateway(index: Index, cache: Path) -> Gateway:
    """The workspace's tools (which have example requests: every heuristic that reads users' words
    is on) and the full Google catalog, its search index cached in `cache`."""
    session = Session(lambda: Connection(Google().client, None))
    toolset = catalog_toolset(CatalogOptions(), session, index=index)
    catalog = Catalog(list(WORKSPACE))
    catalog.merge(toolset.catalog)
    return Gateway(catalog, gate=ConfirmationGate("host"), search_cache_dir=cache, dense=False)


def test_starting_and_discovering_build_no_model_and_read_no_schema(
    index: Index, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = counted(monkeypatch)
    built = _gateway(index, tmp_path)
    assert len(built.catalog) > 13_869
    for request in REQUESTS:  # the first builds the search index and caches it
        assert as_page(built.discover(Principal(), query=request))["tools"]
    overview = built.discover(Principal())
    assert "total_tools" in overview, overview  # no request, no filter: the overview
    assert overview["total_tools"] == len(built.catalog)
    loaded = _gateway(index, tmp_path)  # a new start: the index comes from the cache
    pages = [as_page(loaded.discover(Principal(), query=r))["tools"] for r in REQUESTS]
    assert [t["name"] for t in pages[0][:2]] == ["compute_disks_resize", "compute_region_disks_resize"]
    assert work == {}


def test_only_the_tool_asked_for_builds_its_model(
    index: Index, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gw = _gateway(index, tmp_path)
    gw.discover(Principal(), query="resize a disk")
    work = counted(monkeypatch)
    schema = gw.schema(Principal(), "compute_disks_resize")
    assert set(schema["parameters"]["required"]) == {"project", "zone", "disk"}
    assert work == {"models": 1, "schemas": 1}


def test_what_search_reads_of_a_schema_is_what_the_schema_says(index: Index) -> None:
    """Each method's required parameters, as the index keeps them, are its built model's (a sample of
    every API's methods: building all 13,869 models is what the catalog must never need)."""
    session = Session(lambda: Connection(Google().client, None))
    tools = list(catalog_toolset(CatalogOptions(), session, index=index).catalog)
    first_of_api: dict[str, ToolDefinition] = {}
    for d in tools:
        first_of_api.setdefault(str(d.metadata["api"]), d)
    sample = [*first_of_api.values(), *tools[::97]]
    assert len(sample) > 400
    for d in sample:
        assert sorted(d.required_names()) == sorted(d.json_schema.get("required", [])), d.name

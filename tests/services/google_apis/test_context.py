"""What the documents say around a method is searched with it: requests in their users' words find it."""

from __future__ import annotations

from typing import Any

import pytest

from gateway import Catalog
from gateway.search import SearchIndex
from services.google_apis import CatalogOptions, catalog_toolset
from services.google_apis.context import Context
from services.google_apis.index import Index
from services.google_apis.invoke import Connection, Session


def by_id(index: Index, method_id: str) -> Any:
    return next(m for m in index.methods if m.method_id == method_id and m.api.default)


def test_a_method_is_indexed_with_its_api_and_its_resources_schema_description(index: Index) -> None:
    start = by_id(index, "compute.instances.start")
    assert "virtual machine" not in start.description
    # The API's title and description, the resource, its schema (what `instances.get` returns).
    assert start.context.startswith("Compute Engine API Creates and runs virtual machines")
    assert " instances " in start.context
    assert "An instance is a virtual machine that is hosted on Google Cloud Platform" in start.context


def test_the_schemas_a_method_takes_and_returns_are_described_but_generic_ones_are_not(index: Index) -> None:
    vacation = by_id(index, "gmail.users.settings.updateVacation")
    assert "Vacation auto-reply settings for an account" in vacation.context
    # instances.start returns an Operation, as a hundred other compute methods do: nothing about VMs.
    assert "Operation" not in by_id(index, "compute.instances.start").context
    # A schema is generic by its whole name: monitoring's AlertPolicy is no IAM Policy.
    alert = by_id(index, "monitoring.projects.alertPolicies.create")
    assert "the ways to notify people or services about this state" in alert.context


def test_the_served_tool_searches_the_context_after_its_own_words(index: Index) -> None:
    toolset = catalog_toolset(CatalogOptions(apis=("compute",)), Session(no_connection), index=index)
    tool = toolset.catalog.by_name["compute_instances_start"]
    assert tool.search_text.startswith("instance project requestId zone Operation ")
    assert tool.search_text.endswith(by_id(index, "compute.instances.start").context)
    assert "virtual machine" not in tool.description  # the model reads the method's own text only


def test_a_resource_without_a_get_method_takes_the_schema_named_after_it() -> None:
    doc = {
        "title": "Notes API",
        "description": "Keeps <b>notes</b>. See https://example.com/notes.",
        "schemas": {
            "Note": {"description": "A short text someone wrote down."},
            "Empty": {"description": "A generic empty message."},
        },
    }
    create = {"request": {"$ref": "Note"}, "response": {"$ref": "Note"}}
    delete = {"response": {"$ref": "Empty"}}
    methods = [(("notes", "create"), create), (("notes", "delete"), delete)]
    context = Context(doc, "Notes API", frozenset(), methods)
    assert (
        context.of(("notes", "delete"), delete)
        == "Notes API Keeps notes. notes A short text someone wrote down."
    )
    assert context.of(("notes", "create"), create) == context.of(("notes", "delete"), delete)


def no_connection() -> Connection:
    raise AssertionError("searching calls nothing")


@pytest.fixture(scope="module")
def whole_catalog(index: Index) -> SearchIndex:
    """The lexical index (the default install's) over every method of the catalog."""
    toolset = catalog_toolset(CatalogOptions(), Session(no_connection), index=index)
    catalog: Catalog = toolset.catalog
    return SearchIndex(catalog, semantic=False)


@pytest.mark.parametrize(
    ("request_text", "method_id"),
    [
        ("power on a stopped virtual machine", "compute.instances.start"),
        ("turn on the vacation auto-reply", "gmail.users.settings.updateVacation"),
        ("create a table in the data warehouse", "bigquery.tables.insert"),
        ("delete a table from the data warehouse", "bigquery.tables.delete"),
        ("detect text in an image with optical character recognition", "vision.images.annotate"),
        ("send an email message", "gmail.users.messages.send"),
    ],
)
def test_a_request_in_its_users_words_ranks_the_method_first_over_the_whole_catalog(
    whole_catalog: SearchIndex, request_text: str, method_id: str
) -> None:
    best, _ = whole_catalog.search(request_text, limit=1)[0]
    assert best.metadata["method_id"] == method_id

"""One entry per discovery method: names, actions, flags and texts as the model sees them."""

from __future__ import annotations

import pytest

from gateway.names import name_problem
from services.google_apis import text
from services.google_apis.documents import DocumentRef, documents_dir, read_document
from services.google_apis.index import Index
from services.google_apis.methods import (
    action_for,
    api_of,
    assign_names,
    is_destructive,
    methods_of,
    tool_name,
)


@pytest.mark.parametrize(
    ("method_id", "version", "name"),
    [
        ("calendar.events.insert", None, "calendar_events_insert"),
        ("calendar.events.quickAdd", None, "calendar_events_quick_add"),
        ("compute.instances.insert", "beta", "compute_beta_instances_insert"),
        # Too long: the API, the innermost resources and the verb, then a hash of the whole id.
        (
            "healthcare.projects.locations.datasets.fhirStores.setIamPolicy",
            None,
            "healthcare_datasets_fhir_stores_set_iam_policy_bde9eceb",
        ),
    ],
)
def test_a_tool_is_named_after_its_method_id(method_id: str, version: str | None, name: str) -> None:
    assert tool_name(method_id, version) == name


@pytest.mark.parametrize(
    ("verb", "http_method", "action"),
    [
        ("list", "GET", "list"),
        ("aggregatedList", "GET", "list"),
        ("get", "GET", "read"),
        ("getIamPolicy", "POST", "read"),
        ("insert", "POST", "create"),
        ("batchCreate", "POST", "create"),
        ("patch", "PATCH", "update"),
        ("setLabels", "POST", "update"),
        ("delete", "DELETE", "delete"),
        ("emptyTrash", "DELETE", "delete"),
        ("send", "POST", "send"),
        ("move", "POST", "update"),
        ("copy", "POST", "create"),
        ("export", "POST", "read"),
        ("start", "POST", "execute"),
        ("cancel", "POST", "delete"),
        ("testIamPermissions", "POST", "execute"),
        ("testIamPermissions", "GET", "read"),
    ],
)
def test_verbs_map_onto_the_action_vocabulary(verb: str, http_method: str, action: str) -> None:
    assert action_for(verb, http_method) == action


@pytest.mark.parametrize(
    ("verb", "http_method", "destructive"),
    [
        ("delete", "DELETE", True),
        ("stop", "DELETE", True),
        ("clear", "POST", True),
        ("emptyTrash", "DELETE", True),
        ("batchDelete", "POST", True),
        ("purge", "POST", True),
        ("obliterate", "POST", True),
        ("trash", "POST", True),
        ("send", "POST", True),
        ("sendVerificationCode", "POST", True),
        ("untrash", "POST", False),
        ("undelete", "POST", False),
        ("insert", "POST", False),
        ("get", "GET", False),
    ],
)
def test_deletes_and_destructive_verbs_are_destructive(
    verb: str, http_method: str, destructive: bool
) -> None:
    assert is_destructive(verb, http_method) is destructive


def test_gets_are_read_only_and_other_methods_writes(index: Index) -> None:
    by_name = {m.name: m for m in index.methods}
    get, insert, delete = (by_name[f"calendar_events_{verb}"] for verb in ("get", "insert", "delete"))
    assert (get.read_only, get.destructive) == (True, False)
    assert (insert.read_only, insert.destructive) == (False, False)
    assert (delete.read_only, delete.destructive) == (False, True)
    assert (insert.verb, insert.action, insert.method_id) == ("insert", "create", "calendar.events.insert")


def test_the_whole_catalog_has_over_13000_unique_valid_names(index: Index) -> None:
    names = [m.name for m in index.methods]
    assert len(names) >= 13_000 and len(set(names)) == len(names)
    assert [n for n in names if name_problem(n) is not None] == []
    assert max(map(len, names)) == 64


def test_one_method_id_in_two_documents_gets_two_names(index: Index) -> None:
    owners = {(m.name, m.api.name) for m in index.methods if m.method_id == "webmasters.sites.list"}
    assert owners == {
        ("webmasters_sites_list", "webmasters"),
        ("webmasters_sites_list_searchconsole_v1", "searchconsole"),
    }


def test_every_summary_is_one_clean_line(index: Index) -> None:
    bad = [
        m.name
        for m in index.methods
        if not m.summary or len(m.summary) > text.MAX_SUMMARY or "\n" in m.summary or "http" in m.summary
    ]
    assert bad == []


def test_links_and_markup_are_cleaned_and_the_summary_is_the_first_sentence() -> None:
    raw = (
        "Lists a file's comments, e.g. open ones. For more information, see "
        "[Manage comments](https://developers.google.com/drive/api/guides/manage-comments). "
        "The `fields` parameter must be set &amp; <b>kept</b>."
    )
    cleaned = text.clean(raw)
    assert cleaned == (
        "Lists a file's comments, e.g. open ones. For more information, see Manage comments. "
        "The fields parameter must be set & kept."
    )
    assert text.summary(cleaned, "fallback") == "Lists a file's comments, e.g. open ones."
    assert text.summary("", "Calls get on files (Drive API).") == "Calls get on files (Drive API)."


def test_media_methods_say_what_is_not_supported(index: Index) -> None:
    by_name = {m.name: m for m in index.methods}
    assert by_name["drive_files_create"].media == "upload"
    assert "only the request's metadata is sent" in by_name["drive_files_create"].description
    assert by_name["drive_files_get"].media == "download"
    assert by_name["drive_files_export"].media == "download_only"


def test_names_do_not_depend_on_the_order_documents_are_read_in() -> None:
    directory = documents_dir()
    apis = [DocumentRef("webmasters", "v3"), DocumentRef("searchconsole", "v1")]
    read = [(ref, read_document(directory, ref)) for ref in apis]
    found = [m for ref, doc in read for m in methods_of(api_of(ref, doc, True), doc)]
    forward = {(m.api.name, m.method_id): m.name for m in assign_names(found)}
    backward = {(m.api.name, m.method_id): m.name for m in assign_names(found[::-1])}
    assert forward == backward and len(set(forward.values())) == len(found)

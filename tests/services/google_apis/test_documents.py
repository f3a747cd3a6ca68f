"""Which shipped discovery documents the catalog serves: version families, newest stable first."""

from __future__ import annotations

import pytest

from services.google_apis.documents import DocumentRef, available, choose, documents_dir, version_order
from services.google_apis.index import Index


def chosen(*versions: str, mode: str = "newest") -> list[tuple[str, bool]]:
    refs = [DocumentRef("api", v) for v in versions]
    return [(ref.version, default) for ref, default in choose(refs, mode)]  # type: ignore[arg-type]


def test_the_newest_stable_version_is_the_default() -> None:
    assert chosen("v1", "v2beta1", "v2", "v1beta1") == [("v2", True)]


def test_the_newest_pre_release_stands_in_when_there_is_no_stable_version() -> None:
    assert chosen("v1alpha", "v1beta1", "v1beta2", "v2alpha1") == [("v2alpha1", True)]


def test_named_pre_releases_sit_beside_v1_like_compute_alpha_and_beta() -> None:
    assert chosen("alpha", "beta", "preview", "v1") == [("v1", True)]


def test_point_and_minor_versions_order_as_numbers() -> None:
    assert chosen("v3.3", "v3.5", "v4", "v1.4", "v10") == [("v10", True)]
    assert version_order("v1p1beta1")[1:] < version_order("v1p2beta1")[1:] < version_order("v1.3")[1:]


def test_a_prefixed_version_starts_a_family_of_its_own() -> None:
    assert chosen("directory_v1", "reports_v1", "reports_v1beta", "datatransfer_v1") == [
        ("datatransfer_v1", True),
        ("directory_v1", True),
        ("reports_v1", True),
    ]


def test_every_version_is_kept_on_request_with_the_default_marked() -> None:
    assert chosen("v1", "v2beta1", "v2", mode="all") == [("v1", False), ("v2", True), ("v2beta1", False)]


def test_the_shipped_documents_are_found_without_importing_the_client() -> None:
    refs = available(documents_dir())
    assert DocumentRef("calendar", "v3") in refs and len(refs) > 500
    assert all(ref.name != "index" for ref in refs)


@pytest.mark.parametrize(
    ("name", "version"),
    [("compute", "v1"), ("drive", "v3"), ("admin", "directory_v1"), ("admin", "reports_v1")],
)
def test_the_served_index_holds_the_default_versions(index: Index, name: str, version: str) -> None:
    assert any((a.name, a.version, a.default) == (name, version, True) for a in index.apis)


def test_alias_documents_are_skipped(index: Index) -> None:
    assert {a.version for a in index.apis if a.name == "admin"} == {
        "datatransfer_v1",
        "directory_v1",
        "reports_v1",
    }

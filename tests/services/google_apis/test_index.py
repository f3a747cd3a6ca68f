"""The catalog's index: built once per package version and versions mode, then read from the cache."""

from __future__ import annotations

import json
import logging
import os
import shutil
from pathlib import Path

import pytest

from gateway.errors import UserError
from services.google_apis import index as index_module
from services.google_apis.documents import package_version
from services.google_apis.index import INDEX_FORMAT, Index, decode, encode, load_index


def cache_file(directory: Path, versions: str = "newest") -> Path:
    return directory / f"google-apis-{INDEX_FORMAT}-{package_version()}-{versions}.json"


@pytest.fixture
def builds(index: Index, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Each build of the index, recorded; a build answers with the session's index at once."""
    made: list[str] = []

    def build(directory: Path, versions: str) -> Index:
        made.append(versions)
        return index

    monkeypatch.setattr(index_module, "build_index", build)
    return made


def test_the_cache_file_is_named_by_the_package_version_and_holds_the_index_exactly(
    index: Index, index_dir: Path
) -> None:
    path = cache_file(index_dir)
    assert path.is_file() and index.package_version == package_version()
    assert decode(encode(index), package_version(), "newest") == index


def test_a_cached_index_is_read_not_built(
    index: Index, index_dir: Path, tmp_path: Path, builds: list[str]
) -> None:
    shutil.copy(cache_file(index_dir), tmp_path)
    assert load_index(tmp_path, "newest") == index
    assert builds == []


def test_a_missing_cache_is_built_and_written(index: Index, tmp_path: Path, builds: list[str]) -> None:
    load_index(tmp_path / "new", "newest")
    assert builds == ["newest"] and cache_file(tmp_path / "new").is_file()
    assert load_index(tmp_path / "new", "newest") == index and builds == ["newest"]


def test_an_index_made_for_another_package_version_is_rebuilt(
    index: Index, tmp_path: Path, builds: list[str], caplog: pytest.LogCaptureFixture
) -> None:
    cache_file(tmp_path).write_text(json.dumps(encode(index) | {"package_version": "0.0.1"}))
    with caplog.at_level(logging.WARNING, logger="services.google_apis"):
        load_index(tmp_path, "newest")
    assert builds == ["newest"] and f"built for ({INDEX_FORMAT}, '0.0.1', 'newest')" in caplog.text


def test_a_damaged_cache_is_rebuilt_with_a_warning(
    tmp_path: Path, builds: list[str], caplog: pytest.LogCaptureFixture
) -> None:
    cache_file(tmp_path).write_bytes(b'{"format": 1, "methods": [')
    with caplog.at_level(logging.WARNING, logger="services.google_apis"):
        load_index(tmp_path, "newest")
    assert builds == ["newest"] and "rebuilding the google-apis index" in caplog.text


def test_a_cache_that_cannot_be_written_costs_a_build_not_an_error(tmp_path: Path, builds: list[str]) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a directory")
    assert len(load_index(blocked, "newest").methods) > 13_000


def test_apis_are_picked_by_name_or_category_and_excluded(index: Index) -> None:
    drive = index.select(["drive"])
    assert drive and {m.api.name for m in drive} == {"drive"}
    assert {m.api.name for m in index.select(["youtube_analytics"])} == {"youtubeAnalytics"}
    rest = index.select(exclude=["drive", "compute"])
    assert len(rest) == len(index.methods) - len(drive) - len(index.select(["compute"]))


def test_an_unknown_api_is_an_operator_error_with_the_closest_names(index: Index) -> None:
    with pytest.raises(UserError, match=r"'drvie' \(did you mean drive"):
        index.select(["drvie"])


def test_every_version_can_be_served_each_named_apart(tmp_path: Path) -> None:
    every = load_index(tmp_path, "all")
    names = {m.name for m in every.methods}
    assert {"compute_instances_insert", "compute_beta_instances_insert", "drive_v2_files_list"} <= names
    assert len(names) == len(every.methods) > 27_000
    assert cache_file(tmp_path, "all").is_file()


def test_only_the_most_recently_used_index_files_are_kept(tmp_path: Path, builds: list[str]) -> None:
    for age, name in enumerate(["a", "b", "c", "d"]):
        old = tmp_path / f"google-apis-1-{name}-newest.json"
        old.write_text("{}")
        os.utime(old, (1_000_000 - age, 1_000_000 - age))
    load_index(tmp_path, "newest")
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "google-apis-1-a-newest.json",
        "google-apis-1-b-newest.json",
        "google-apis-1-c-newest.json",
        cache_file(tmp_path).name,
    ]

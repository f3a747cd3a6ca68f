"""`python -m benchmarks.discovery DIR --openapi NAME=SPEC`: ranks over a description's operations."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

SPEC = {
    "openapi": "3.0.3",
    "info": {"title": "Pets", "version": "1"},
    "servers": [{"url": "https://pets.example"}],
    "paths": {
        "/pets": {
            "get": {"operationId": "listPets", "summary": "List all pets", "tags": ["pets"]},
            "post": {"operationId": "createPet", "summary": "Add a new pet to the store", "tags": ["pets"]},
        },
        "/pets/{id}": {
            "delete": {
                "operationId": "deletePet",
                "summary": "Delete a pet",
                "tags": ["pets"],
                "parameters": [{"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}],
            }
        },
        "/stores": {"get": {"operationId": "listStores", "summary": "List the stores", "tags": ["stores"]}},
    },
}


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "benchmarks.discovery", *args],
        check=False,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture
def spec(tmp_path: Path) -> Path:
    path = tmp_path / "pets.json"
    path.write_text(json.dumps(SPEC))
    return path


def _queries(folder: Path, *records: dict[str, object]) -> Path:
    folder.mkdir()
    (folder / "queries.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return folder


def test_the_operations_are_ranked_next_to_the_baseline_without_a_tools_file(
    spec: Path, tmp_path: Path
) -> None:
    folder = _queries(
        tmp_path / "pets",
        {"query": "add a pet and then list every pet", "gold": ["pets_create_pet", "pets_list_pets"]},
        {"query": "remove a pet", "gold": ["pets_delete_pet"]},
    )
    done = _run(str(folder), "--openapi", f"pets={spec}")
    assert done.returncode == 0, done.stderr
    assert "pets: 4 tools, 2 queries" in done.stdout
    engines = [
        line.split(" | ")[0].removeprefix("| ")
        for line in done.stdout.splitlines()
        if line.startswith("| ours") or line.startswith("| BM25")
    ]
    engines = [e for e in engines if not e.endswith("minus baseline")]
    assert engines[0] == "ours, lexical (default install)" and engines[-1] == "BM25 baseline (bm25s)"


@pytest.mark.parametrize(
    ("option", "says"),
    [
        ("pets", "'pets' is not NAME=SPEC"),
        ("pets={missing}", "no description at"),
        ("Pets!={spec}", "[[openapi]] configuration: name"),
    ],
)
def test_a_bad_openapi_option_is_an_error_that_says_what_to_do(
    spec: Path, tmp_path: Path, option: str, says: str
) -> None:
    folder = _queries(tmp_path / "pets", {"query": "list pets", "gold": ["pets_list_pets"]})
    done = _run(str(folder), "--openapi", option.format(missing=tmp_path / "none.json", spec=spec))
    assert done.returncode == 2 and done.stdout == "" and "Traceback" not in done.stderr
    assert done.stderr.startswith("benchmarks.discovery --openapi: ") and says in done.stderr


def test_a_gold_name_the_description_lacks_is_named(spec: Path, tmp_path: Path) -> None:
    folder = _queries(
        tmp_path / "pets",
        {"query": "list pets", "gold": ["pets_list_pets"]},
        {
            "query": "feed a pet",
            "gold_groups": [["pets_feed_pet", "pets_list_pets"]],
            "gold": ["pets_feed_pet"],
        },
    )
    done = _run(str(folder), "--openapi", f"pets={spec}")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip().endswith("gold names the description has no operation for: pets_feed_pet")


def test_a_folder_without_queries_says_where_the_data_comes_from(spec: Path, tmp_path: Path) -> None:
    done = _run(str(tmp_path / "nowhere"), "--openapi", f"pets={spec}")
    assert done.returncode == 2 and done.stdout == ""
    assert "queries.jsonl not found" in done.stderr and "tools.jsonl not found" not in done.stderr


def test_a_history_file_is_learned_from_and_each_history_row_says_its_harm(
    spec: Path, tmp_path: Path
) -> None:
    folder = _queries(tmp_path / "pets", {"query": "get rid of my goldfish", "gold": ["pets_delete_pet"]})
    history = tmp_path / "history.jsonl"
    history.write_text(json.dumps({"query": "get rid of the goldfish", "gold": ["pets_delete_pet"]}) + "\n")
    done = _run(str(folder), "--openapi", f"pets={spec}", "--history", str(history))
    assert done.returncode == 0, done.stderr
    rows = [line for line in done.stdout.splitlines() if "with 100% of the history (1 queries)" in line]
    assert rows and all(row.endswith("| 0 (0.00%) |") for row in rows)


def test_a_missing_history_file_is_named_as_a_file(spec: Path, tmp_path: Path) -> None:
    folder = _queries(tmp_path / "pets", {"query": "list pets", "gold": ["pets_list_pets"]})
    done = _run(str(folder), "--openapi", f"pets={spec}", "--history", str(tmp_path / "none.jsonl"))
    assert done.returncode == 2 and done.stdout == ""
    assert (
        done.stderr.startswith("benchmarks.discovery --history: no history file at")
        and "dataset" not in done.stderr
    )


def test_queries_per_tool_bounds_what_the_history_keeps_for_a_tool(spec: Path, tmp_path: Path) -> None:
    folder = _queries(tmp_path / "pets", {"query": "buy fish food nearby", "gold": ["pets_list_stores"]})
    history = tmp_path / "history.jsonl"
    past = ("a shop for my parrot", "buy fish food nearby please")  # the first is kept alone (ties by text)
    history.write_text("".join(json.dumps({"query": q, "gold": ["pets_list_stores"]}) + "\n" for q in past))

    def first_right(*options: str) -> str:
        done = _run(str(folder), "--openapi", f"pets={spec}", "--history", str(history), *options)
        assert done.returncode == 0, done.stderr
        row = next(line for line in done.stdout.splitlines() if line.startswith("| ours, lexical, with"))
        return row.split("|")[2].strip()  # R@1

    assert first_right() == "100.0"
    assert first_right("--queries-per-tool", "1") == "0.0"

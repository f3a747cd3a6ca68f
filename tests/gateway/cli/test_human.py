"""What `gateway discover` and `gateway catalog` print for a person; `--json` is for programs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gateway import Catalog, NoParams, ToolDefinition, Toolset
from gateway.cli import main

from .. import cli_support

config = cli_support.config  # the fixture
run = cli_support.run

LONG = "analyticsadmin_properties_data_streams"  # a Google API category's length


def provide_long_categories(options: Any) -> Toolset:
    """A catalog whose categories are far longer than a column of 16."""
    tools = [
        ToolDefinition(
            name=f"{category}_{verb}",
            category=category,
            action=action,
            verb=verb,
            summary=f"{verb.capitalize()} one.",
            description=f"{verb.capitalize()} one.",
            params=NoParams,
            handler=lambda p: None,
        )
        for category in ("ads", LONG)
        for verb, action in (("list", "list"), ("get", "read"))
    ]
    return Toolset(catalog=Catalog(tools))


def test_discover_without_words_prints_the_counts_for_a_person(
    config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "discover")
    assert code == 0 and out.splitlines() == [
        "6 tools",
        "  files  2  (read 2)",
        "  notes  4  (create 1, delete 1, search 1, update 1)",
        "Run 'gateway discover WORDS' (or -c CATEGORY / -a ACTION) to list matching tools.",
    ]
    code, out, _ = run(capsys, "discover", "--json")
    assert code == 0 and json.loads(out)["total_tools"] == 6


def test_discover_that_matches_nothing_prints_lines_not_json(
    config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "discover", "zzqxv")
    assert code == 0 and out.splitlines() == [
        "No tool matched.",
        "Categories: files, notes",
        "Try other words (a verb and an object, e.g. 'delete event'), drop the filters, "
        "or browse a category with 'gateway discover -c CATEGORY'.",
    ]
    code, out, _ = run(capsys, "discover", "zzqxv", "--json")
    assert json.loads(out)["suggestions"] == {"categories": ["files", "notes"]}


@pytest.mark.parametrize("limit", ["0", "-1", "51", "ten"])
def test_a_limit_outside_1_to_50_is_refused_not_taken_for_10(
    config: Path, capsys: pytest.CaptureFixture[str], limit: str
) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["discover", "note", "--limit", limit])
    assert stopped.value.code == 2
    assert f"argument --limit: {limit!r} is not a number from 1 to 50" in capsys.readouterr().err


def test_catalog_columns_stay_in_line_with_long_category_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "config.toml"
    catalog = "tests.gateway.cli.test_human:provide_long_categories"
    path.write_text(f'catalogs = ["{catalog}"]\ndata_dir = "{tmp_path}"\n')
    monkeypatch.setenv("GATEWAY_CONFIG", str(path))
    code, out, _ = run(capsys, "catalog")
    assert code == 0 and out.splitlines() == [
        f"4 tools ({catalog})",
        f"  ads{' ' * (len(LONG) - 3)}  2  (list 1, read 1)",
        f"  {LONG}  2  (list 1, read 1)",
    ]


def test_catalog_names_the_openapi_catalogs_it_serves(
    config: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = tmp_path / "pets.json"
    operation = {
        "operationId": "listPets",
        "summary": "List pets.",
        "responses": {"200": {"description": "ok"}},
    }
    document = {
        "openapi": "3.0.0",
        "info": {"title": "Pets", "version": "1"},
        "paths": {"/pets": {"get": operation}},
    }
    spec.write_text(json.dumps(document))
    code, out, _ = run(capsys, "catalog", "--openapi", f"pets={spec}")
    assert code == 0 and out.splitlines()[0] == "7 tools (tests.gateway.sample_tools:provide; openapi: pets)"

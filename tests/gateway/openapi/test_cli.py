"""`gateway openapi check`, `[[openapi]]` entries in the config file, `--openapi` and `--catalog openapi:NAME`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gateway.cli import main

from .conftest import op, write_spec


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def specs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    pets = write_spec(
        tmp_path,
        {
            "openapi": "3.0.0",
            "info": {"title": "Pets"},
            "paths": {
                "/pets": {"get": op("listPets", tags=["pets"]), "post": op("addPet", tags=["pets"])},
                "/pets/{id}": {"delete": op("deletePet", tags=["pets"], parameters=[{"$ref": "#/x"}])},
            },
        },
        "pets.json",
    )
    shop = write_spec(
        tmp_path,
        {"openapi": "3.1.0", "info": {"title": "Shop"}, "paths": {"/orders": {"get": op("listOrders")}}},
        "shop.yaml",
    )
    config = tmp_path / "config.toml"
    config.write_text(
        f'data_dir = "{tmp_path}"\ncatalogs = ["workspace"]\n\n'
        f'[[openapi]]\nname = "pets"\nspec = "{pets}"\nsafe = ["addPet"]\n\n'
        f'[[openapi]]\nname = "shop"\nspec = "{shop}"\n'
    )
    monkeypatch.setenv("GATEWAY_CONFIG", str(config))
    return {"pets": pets, "shop": shop}


def test_check_lists_problems_with_pointers_and_counts(
    specs: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "openapi", "check", str(specs["pets"]))
    assert code == 0
    assert "3 operations" in out and "#/paths/~1pets~1{id}/delete/parameters/0/$ref" in out
    assert "by flag: read_only 1, write 0, destructive 2" in out
    code, out, _ = run(capsys, "openapi", "check", "pets", "--json")  # a configured entry, its safe marks
    report = json.loads(out)
    assert report["by_flag"] == {"read_only": 1, "write": 1, "destructive": 1}
    assert report["by_tag"] == {"pets": 3} and report["problems"][0]["action"]


def test_check_refuses_swagger_with_how_to_convert(
    tmp_path: Path, specs: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    old = write_spec(tmp_path, {"swagger": "2.0", "paths": {}}, "old.json")
    code, _, err = run(capsys, "openapi", "check", str(old))
    assert code == 2 and "swagger2openapi" in err


def test_configured_entries_join_the_configured_catalogs(
    specs: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    _, out, _ = run(capsys, "catalog", "--json")
    categories = {c["name"] for c in json.loads(out)["categories"]}
    assert {"pets", "shop_orders"} <= categories and "calendar" in categories


def test_catalog_openapi_name_selects_one_entry(
    specs: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "catalog", "--json", "--catalog", "openapi:shop")
    assert code == 0 and [c["name"] for c in json.loads(out)["categories"]] == ["shop_orders"]
    code, _, err = run(capsys, "catalog", "--catalog", "openapi:pest")
    assert code == 2 and "did you mean pets" in err


def test_openapi_flag_points_a_configured_entry_at_another_spec_or_adds_one(
    specs: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    _, out, _ = run(
        capsys, "catalog", "--json", "--catalog", "openapi:shop", "--openapi", f"shop={specs['pets']}"
    )
    assert [c["name"] for c in json.loads(out)["categories"]] == ["shop_pets"]
    # the configured entry keeps its other settings: pets' safe marks do not fit the shop's spec
    code, _, err = run(capsys, "catalog", "--catalog", "openapi:pets", "--openapi", f"pets={specs['shop']}")
    assert code == 2 and "safe matches nothing" in err
    _, out, _ = run(
        capsys, "catalog", "--json", "--catalog", "openapi:more", "--openapi", f"more={specs['shop']}"
    )
    assert [c["name"] for c in json.loads(out)["categories"]] == ["more_orders"]
    code, _, err = run(capsys, "catalog", "--openapi", "no-equals")
    assert code == 2 and "NAME=SPEC" in err


def test_a_destructive_operation_is_not_run_without_approval(
    specs: dict[str, Path], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin.isatty", lambda: False)
    code, out, err = run(capsys, "invoke", "--catalog", "openapi:pets", "pets_delete_pet", "{}")
    assert code == 3 and '"declined"' in out and "pets_delete_pet" in err

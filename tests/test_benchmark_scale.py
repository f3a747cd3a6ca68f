"""`python -m benchmarks.scale`: the catalogs it builds and the budget CI checks with it."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.scale import CI_SLACK, TARGETS, Row, check, combined, figures
from gateway.settings.sections import OpenApiSettings


def _spec(path: Path, operations: int) -> Path:
    paths = {f"/things{i}": {"get": {"operationId": f"get{i}", "responses": {}}} for i in range(operations)}
    path.write_text(json.dumps({"openapi": "3.1.0", "info": {"title": "t", "version": "1"}, "paths": paths}))
    return path


def test_a_combined_catalog_copies_the_descriptions_under_new_valid_names_up_to_its_size(
    tmp_path: Path,
) -> None:
    specs = [_spec(tmp_path / "github.json", 1_000), _spec(tmp_path / "stripe.json", 500)]
    catalog = combined(30_000, specs)
    names = [name for name, _ in catalog.openapi]
    assert len(names) == len(set(names)) and names[:3] == ["github", "stripe", "github_1"]
    for name in names:
        OpenApiSettings(name=name, spec=tmp_path / "github.json")  # a valid entry name
    operations = sum(1_000 if spec.stem == "github" else 500 for _, spec in catalog.openapi)
    assert 30_000 <= 13_896 + operations < 31_000
    assert catalog.catalogs == ["workspace", "google-apis"]


def _row(label: str, warm: float, floor: float, peak: float = 100.0, cold: float = 5.0) -> Row:
    return Row(label, 0, cold, 1.0, peak, warm, floor, peak, p50_ms=1.0, index_mib=10.0)


def test_the_budget_fails_a_figure_only_past_ten_times_its_target() -> None:
    noisy = figures([_row("google", warm=3.0, floor=1.0, cold=40.0), _row("github", warm=2.5, floor=1.0)])
    assert set(noisy) == {
        "google warm / floor",
        "google warm peak MiB",
        "google cold s",
        "github warm / floor",
    }
    assert check(noisy, CI_SLACK) == []  # three times a target: noise, or a slow machine
    broken = figures([_row("google", warm=36.0, floor=1.05, peak=800.0, cold=41.0)])
    assert check(broken, CI_SLACK) == ["google warm / floor: 34.29 > 10 x 1"]
    assert CI_SLACK * TARGETS["google warm peak MiB"] > 800.0  # memory's budget is loose: time fails first

"""Published descriptions (fetched by `python -m tests.openapi_specs`): every schema valid, GitHub searchable."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from gateway.cli import main
from gateway.openapi import OpenApi, check
from gateway.settings.loading import OpenApiSettings
from tests.openapi_specs import SPECS, spec

EXPECTED_OPERATIONS = {
    "github.json": 1223,
    "stripe.json": 452,
    "asana.json": 167,
    "digitalocean.json": 290,
    "jira.json": 499,
}


@pytest.mark.parametrize("name", sorted(SPECS))
def test_every_operation_of_a_published_spec_has_a_valid_json_schema(name: str, tmp_path: Path) -> None:
    api = OpenApi(OpenApiSettings(name=name.removesuffix(".json"), spec=spec(name)), tmp_path)
    tools = api.definitions()
    assert len(tools) == EXPECTED_OPERATIONS[name]
    assert len({t.name for t in tools}) == len(tools) and all(len(t.name) <= 64 for t in tools)
    for tool in tools:
        schema = tool.json_schema
        Draft202012Validator.check_schema(schema)
        assert schema["type"] == "object" and schema["additionalProperties"] is False


@pytest.mark.parametrize("name", sorted(SPECS))
def test_check_reports_problems_with_pointers_and_counts(name: str) -> None:
    report = check(spec(name), "api")
    assert report.operations == EXPECTED_OPERATIONS[name]
    assert sum(report.by_flag.values()) == report.operations
    assert all(p.pointer.startswith("#") and p.action for p in report.problems)
    assert not [p for p in report.problems if "schema is invalid" in p.message]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_discover_merge_a_pull_request_ranks_pulls_merge_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GATEWAY_CONFIG", str(tmp_path / "none.toml"))
    (tmp_path / "none.toml").write_text(f'data_dir = "{tmp_path}"\n')
    github = spec("github.json")
    code, out, _ = run(capsys, "discover", "--json", "--openapi", f"github={github}", "merge a pull request")
    assert code == 0
    hits = json.loads(out)["tools"]
    assert hits[0]["operation_id"] == "pulls/merge" and hits[0]["name"] == "github_pulls_merge"
    code, out, _ = run(capsys, "schema", "--openapi", f"github={github}", "github_pulls_merge")
    schema = json.loads(out)
    assert schema["http"] == "PUT /repos/{owner}/{repo}/pulls/{pull_number}/merge"
    assert {"owner", "repo", "pull_number", "merge_method"} <= set(schema["parameters"]["properties"])

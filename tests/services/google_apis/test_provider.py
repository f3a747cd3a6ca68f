"""The `google-apis` catalog as an operator meets it: configuration, the command line, credentials."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from gateway.cli import main
from gateway.runtime import open_gateway
from gateway.settings.loading import load_settings
from gateway.toolset import load_provider
from services.google.credentials import CALENDAR_EVENTS, GoogleOptions
from services.google_apis import provide
from services.google_apis.invoke import google_connection

DRIVE_READONLY = "https://www.googleapis.com/auth/drive.readonly"


@pytest.fixture
def config(tmp_path: Path, index_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A configuration serving the workspace, with the catalog's index cached for the session."""
    path = tmp_path / "config.toml"
    path.write_text(
        f'data_dir = "{tmp_path}"\ncatalogs = ["workspace"]\n\n[google_apis]\ncache_dir = "{index_dir}"\n'
    )
    monkeypatch.setenv("GATEWAY_CONFIG", str(path))
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_the_catalog_is_an_installed_entry_point() -> None:
    assert load_provider("google-apis") is provide


def test_the_catalog_command_reports_the_tool_count_categories_and_actions(
    config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "catalog", "--catalog", "google-apis", "--json")
    overview = json.loads(out)
    assert code == 0 and overview["total_tools"] >= 13_000
    categories = {c["name"]: c for c in overview["categories"]}
    assert {"calendar", "gmail", "drive", "compute", "admin", "youtube_analytics"} <= set(categories)
    assert set(overview["actions"]) == {
        "search",
        "list",
        "read",
        "create",
        "update",
        "delete",
        "send",
        "execute",
    }
    assert categories["tasks"]["tools"] == 14


def test_discover_json_shows_each_tools_method_id(config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys, "discover", "--catalog", "google-apis", "-c", "tasks", "-a", "delete", "--json"
    )
    assert code == 0
    assert json.loads(out)["tools"] == [
        {
            "name": "tasks_tasklists_delete",
            "summary": "Deletes the authenticated user's specified task list.",
            "destructive": True,
            "method_id": "tasks.tasklists.delete",
        },
        {
            "name": "tasks_tasks_clear",
            "summary": "Clears all completed tasks from the specified task list.",
            "destructive": True,
            "method_id": "tasks.tasks.clear",
        },
        {
            "name": "tasks_tasks_delete",
            "summary": "Deletes the specified task from the task list.",
            "destructive": True,
            "method_id": "tasks.tasks.delete",
        },
    ]


def test_the_schema_shows_the_method_id_and_the_http_request(
    config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "schema", "--catalog", "google-apis", "calendar_events_insert", "--json")
    answer = json.loads(out)
    assert code == 0
    assert (answer["method_id"], answer["api"], answer["http"]) == (
        "calendar.events.insert",
        "calendar v3",
        "POST calendars/{calendarId}/events",
    )
    assert answer["action"] == "create" and answer["parameters"]["required"] == ["calendarId"]


def test_the_catalog_option_replaces_the_configured_catalogs_and_repeats(config: Path) -> None:
    only = load_settings(overrides={"catalogs": ["google-apis"], "google_apis.apis": ["tasks"]})
    with open_gateway(only) as gw:
        assert "calendar_create_event" not in gw.catalog and "tasks_tasks_insert" in gw.catalog
    both = load_settings(overrides={"catalogs": ["workspace", "google-apis"], "google_apis.apis": ["tasks"]})
    with open_gateway(both) as gw:  # no name is taken twice
        assert "calendar_create_event" in gw.catalog and "tasks_tasks_insert" in gw.catalog


def test_the_command_line_takes_catalogs_from_the_option(
    config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def total(*argv: str) -> int:
        code, out, _ = run(capsys, "catalog", "--json", *argv)
        assert code == 0
        count: int = json.loads(out)["total_tools"]
        return count

    workspace, catalog = total(), total("--catalog", "google-apis")
    assert total("--catalog", "workspace", "--catalog", "google-apis") == workspace + catalog


def test_the_google_apis_section_picks_apis(config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config.write_text(config.read_text() + 'apis = ["tasks", "drive"]\nexclude_apis = ["drive"]\n')
    code, out, _ = run(capsys, "catalog", "--catalog", "google-apis", "--json")
    assert code == 0 and [c["name"] for c in json.loads(out)["categories"]] == ["tasks"]


def test_an_unknown_api_in_the_section_is_refused_with_the_closest_names(
    config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config.write_text(config.read_text() + 'apis = ["calender"]\n')
    code, _, err = run(capsys, "catalog", "--catalog", "google-apis")
    assert code == 2 and "'calender' (did you mean calendar" in err


def test_extra_scopes_are_asked_for_beside_the_services_own(tmp_path: Path) -> None:
    options = GoogleOptions.parse(
        {"services": ["calendar"], "extra_scopes": [DRIVE_READONLY, CALENDAR_EVENTS]}, data_dir=tmp_path
    )
    assert options.scopes == [
        CALENDAR_EVENTS,
        "https://www.googleapis.com/auth/calendar.calendarlist.readonly",
        DRIVE_READONLY,
    ]


def test_the_stored_tokens_scopes_are_the_ones_calls_are_checked_against(tmp_path: Path) -> None:
    token = tmp_path / "google-token.json"
    token.write_text(
        json.dumps(
            {
                "client_id": "1.apps.googleusercontent.com",
                "client_secret": "s",
                "refresh_token": "1//r",
                "token": "ya29.a",
                "scopes": [DRIVE_READONLY],
            }
        )
    )
    os.chmod(token, 0o600)
    connection = google_connection({"services": [], "extra_scopes": [DRIVE_READONLY]}, tmp_path)
    assert connection.scopes == frozenset({DRIVE_READONLY})

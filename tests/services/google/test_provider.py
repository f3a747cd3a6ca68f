"""Choosing the Google backend: configuration, the provider, lazy imports, and `gateway auth google`."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gateway.cli import main
from gateway.context import ToolContext
from gateway.errors import UserError
from gateway.settings.loading import load_settings
from gateway.toolset import ProviderOptions
from services.backends import CalendarBackend, MailBackend, TasksBackend, WorkspaceSettings
from services.google.calendar import GoogleCalendar
from services.google.credentials import TokenFile, scopes_for
from services.google.mail import GoogleMail
from services.google.tasks import GoogleTasks
from services.workspace import CATALOG, provide

from .test_credentials import ACCESS, REFRESH, SECRET, client_secrets, user_creds


def google_options(tmp_path: Path, **google: Any) -> ProviderOptions:
    return ProviderOptions(
        data_dir=tmp_path, timezone="Europe/Berlin", backend="google", extra={"google": google}
    )


def test_the_google_backend_provides_every_tool_on_google_backends(tmp_path: Path) -> None:
    TokenFile(tmp_path / "google-token.json").save(user_creds())
    toolset = provide(google_options(tmp_path))
    ctx = ToolContext(resources=toolset.resources)
    assert isinstance(ctx.require(CalendarBackend), GoogleCalendar)
    assert isinstance(ctx.require(MailBackend), GoogleMail)
    assert isinstance(ctx.require(TasksBackend), GoogleTasks)
    assert ctx.require(WorkspaceSettings).timezone == "Europe/Berlin"
    assert toolset.catalog is CATALOG and toolset.close is None
    assert not (tmp_path / "workspace.sqlite3").exists()


def test_only_the_enabled_services_tools_are_offered(tmp_path: Path) -> None:
    TokenFile(tmp_path / "google-token.json").save(user_creds(scopes=scopes_for(["tasks"])))
    toolset = provide(google_options(tmp_path, services=["tasks"]))
    assert {d.category for d in toolset.catalog} == {"tasks"} and len(toolset.catalog) == 7
    assert MailBackend not in toolset.resources


def test_bad_google_settings_fail_at_startup(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="credentials"):
        provide(google_options(tmp_path, credentials="password"))


def test_importing_the_workspace_loads_no_google_library() -> None:
    code = "import sys, services.workspace; print(sorted(m for m in sys.modules if m.startswith(('googleapiclient', 'google.auth', 'httplib2'))))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_the_google_section_comes_from_the_file_and_the_environment(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(
        'backend = "google"\n[google]\ncredentials = "service_account"\nservices = ["calendar"]\n'
    )
    settings = load_settings(
        config,
        environ={
            "GATEWAY_GOOGLE_SUBJECT": "ana@corp.example",
            "GATEWAY_GOOGLE_SERVICE_ACCOUNT_FILE": "/keys/sa.json",
        },
    )
    assert settings.backend == "google"
    assert settings.google.model_dump() == {
        "credentials": "service_account",
        "client_secrets": None,
        "token_file": None,
        "service_account_file": Path("/keys/sa.json"),
        "subject": "ana@corp.example",
        "services": ["calendar"],
        "allow_permanent_delete": False,
        "send_updates": "all",
        "extra_scopes": [],
        "per_principal": False,
    }


def test_gateway_auth_google_stores_the_token_and_says_which_backend_is_active(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "config.toml"
    config.write_text(f'data_dir = "{tmp_path}"\n[google]\nclient_secrets = "{client_secrets(tmp_path)}"\n')
    monkeypatch.setenv("GATEWAY_CONFIG", str(config))
    opened: list[bool] = []

    def run_flow(flow: Any, open_browser: bool) -> Any:
        opened.append(open_browser)
        return user_creds()

    monkeypatch.setattr("services.google.credentials._run_local_server", run_flow)
    code = main(["auth", "google", "--no-browser"])
    out, err = capsys.readouterr()
    token = tmp_path / "google-token.json"
    assert code == 0 and opened == [False]
    assert str(token) in out and "active backend: local" in out
    assert stat.S_IMODE(token.stat().st_mode) == 0o600
    assert [s for s in (ACCESS, REFRESH, SECRET) if s in out + err] == []


def test_gateway_auth_google_without_client_secrets_exits_2_saying_what_to_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("GATEWAY_CONFIG", str(tmp_path / "none.toml"))
    (tmp_path / "none.toml").write_text(f'data_dir = "{tmp_path}"\n')
    assert main(["auth", "google"]) == 2
    assert "client_secrets" in capsys.readouterr().err
    assert not os.path.exists(tmp_path / "google-token.json")


def test_the_catalog_command_names_the_active_backend(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    TokenFile(tmp_path / "google-token.json").save(user_creds())
    (tmp_path / "c.toml").write_text(
        f'data_dir = "{tmp_path}"\nbackend = "google"\n[audit]\nenabled = false\n'
    )
    monkeypatch.setenv("GATEWAY_CONFIG", str(tmp_path / "c.toml"))
    assert main(["catalog"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == "27 tools (workspace: google backend)"

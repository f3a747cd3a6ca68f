"""The sign-in scopes of a selection of APIs: covering, least broad on ties, asked for and then required."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, cast

import pytest

from gateway import run_sync
from gateway.cli import main
from services.google_apis.index import Index
from services.google_apis.invoke import Connection, Session, google_connection
from services.google_apis.provider import CatalogOptions, catalog_toolset, sign_in_scopes
from services.google_apis.scopes import (
    CLOUD_PLATFORM,
    FULL_GMAIL,
    covering_scopes,
    is_read_only_scope,
    selection_scopes,
)

from ..google.test_credentials import ACCESS, REFRESH, SECRET, client_secrets, user_creds

AUTH = "https://www.googleapis.com/auth/"
SAMPLE = ("drive", "compute", "gmail", "youtube", "bigquery", "sheets", "secretmanager")


@pytest.mark.parametrize("read_only", [False, True])
def test_the_scopes_authorise_every_method_of_the_selection(index: Index, read_only: bool) -> None:
    methods = index.select(SAMPLE)
    scopes = covering_scopes(methods, read_only=read_only)
    wanted = [m for m in methods if m.scopes and (m.read_only or not read_only)]
    if read_only:  # only read-only scopes, and every read one of them authorises
        assert all(is_read_only_scope(s) for s in scopes)
        wanted = [m for m in wanted if any(map(is_read_only_scope, m.scopes))]
    assert len(wanted) > 300 and all(set(m.scopes) & set(scopes) for m in wanted)
    assert len(scopes) == len(set(scopes))
    assert covering_scopes(reversed(methods), read_only=read_only) == scopes  # order given does not matter


def test_an_apis_own_scope_beats_cloud_platform_and_reads_get_a_read_only_scope(index: Index) -> None:
    compute = index.select(["compute"])
    assert {CLOUD_PLATFORM, AUTH + "compute"} <= {s for m in compute for s in m.scopes}
    assert covering_scopes(compute) == [AUTH + "compute"]
    assert covering_scopes(compute, read_only=True) == [AUTH + "compute.readonly"]
    assert covering_scopes(index.select(["drive"]), read_only=True)[0] == AUTH + "drive.readonly"
    assert covering_scopes(index.select(["drive"]))[0] == AUTH + "drive"
    assert [
        is_read_only_scope(AUTH + s) for s in ("drive.readonly", "x.read-only", "x.read_only", "gmail")
    ] == [
        True,
        True,
        True,
        False,
    ]


def test_a_scope_already_chosen_for_one_api_covers_the_next(index: Index) -> None:
    both = covering_scopes(index.select(["aiplatform", "bigquery"]))
    assert both == [CLOUD_PLATFORM]  # aiplatform needs it; every bigquery method accepts it too


def test_full_gmail_access_is_asked_for_only_when_permanent_deletion_is_allowed(index: Index) -> None:
    gmail = index.select(["gmail"])
    everyday = selection_scopes(gmail, "auto", selected=True)
    assert AUTH + "gmail.modify" in everyday and FULL_GMAIL not in everyday
    assert FULL_GMAIL in selection_scopes(gmail, "auto", selected=True, allow_permanent_delete=True)
    deletes = [m for m in gmail if m.method_id == "gmail.users.messages.delete"]
    assert deletes and deletes[0].scopes == (FULL_GMAIL,)  # so it stays refused without that grant


def test_nothing_is_added_for_the_whole_surface_or_with_scopes_none(index: Index) -> None:
    drive = index.select(["drive"])
    assert selection_scopes(drive, "auto", selected=False) == []
    assert selection_scopes(drive, "none", selected=True) == []
    assert selection_scopes(drive, "auto", selected=True, read_only=True) == covering_scopes(
        drive, read_only=True
    )
    assert sign_in_scopes(CatalogOptions(), index) == []
    read = CatalogOptions(apis=("compute",), read_only=True)
    assert sign_in_scopes(read, index) == [AUTH + "compute.readonly"]


def test_a_read_only_catalog_serves_only_read_only_methods(index: Index) -> None:
    options = CatalogOptions(apis=("drive", "gmail"), read_only=True)
    tools = list(
        catalog_toolset(options, Session(lambda: cast(Connection, None)), index=index).catalog
    )  # never connects
    everything = index.select(["drive", "gmail"])
    assert len(tools) == sum(m.read_only for m in everything) < len(everything)
    assert all(d.read_only and not d.is_destructive for d in tools)


def test_gateway_auth_google_asks_for_the_served_apis_scopes(
    tmp_path: Path, index_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "config.toml"
    config.write_text(
        f'data_dir = "{tmp_path}"\ncatalogs = ["workspace", "google-apis"]\n'
        f'[google]\nclient_secrets = "{client_secrets(tmp_path)}"\n'
        f'[google_apis]\napis = ["drive", "compute"]\nread_only = true\ncache_dir = "{index_dir}"\n'
    )
    monkeypatch.setenv("GATEWAY_CONFIG", str(config))
    asked: list[list[str]] = []

    def run_flow(flow: Any, open_browser: bool) -> Any:
        asked.append(list(flow.oauth2session.scope))
        return user_creds(scopes=list(flow.oauth2session.scope))

    monkeypatch.setattr("services.google.credentials._run_local_server", run_flow)
    assert main(["auth", "google", "--no-browser"]) == 0
    out, err = capsys.readouterr()
    assert {AUTH + "compute.readonly", AUTH + "drive.readonly", AUTH + "calendar.events"} <= set(asked[0])
    assert AUTH + "drive.readonly" in out and not {ACCESS, REFRESH, SECRET} & set((out + err).split())
    stored = json.loads((tmp_path / "google-token.json").read_text())
    assert AUTH + "compute.readonly" in stored["scopes"]


def test_the_served_apis_scopes_are_asked_for_at_sign_in_not_required_of_a_token(
    tmp_path: Path, make_gateway: Any, google: Any
) -> None:
    token = tmp_path / "google-token.json"
    token.write_text(
        json.dumps(
            {
                "client_id": "1.apps.googleusercontent.com",
                "client_secret": "s",
                "refresh_token": "1//r",
                "token": "ya29.a",
                "scopes": [AUTH + "drive.readonly"],
            }
        )
    )
    os.chmod(token, 0o600)
    connection = google_connection({"services": []}, tmp_path)  # no compute scope: still connects
    assert connection.scopes == frozenset({AUTH + "drive.readonly"})
    gw = make_gateway("compute", scopes=connection.scopes)
    refused = run_sync(gw.invoke("compute_instances_list", {"project": "p", "zone": "z"}))
    assert refused.status == "error" and refused.error is not None
    assert refused.error.code == "permission_denied" and "gateway auth google" in refused.error.message
    assert AUTH + "compute.readonly" in refused.error.message and google.sent == []

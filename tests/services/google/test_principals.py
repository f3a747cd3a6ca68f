"""Each person's own Google account behind one gateway: the real google-api-python-client, its shipped
discovery documents and `HttpMockSequence`, with google-auth adding each principal's own token; the
grants in a real SQLite vault. Through `Gateway.call("invoke_tool")`, the model's path.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from googleapiclient.http import HttpMockSequence  # type: ignore[import-untyped]  # ships no stubs

from gateway import Catalog, Gateway, ToolContext, run_sync
from gateway.context import Principal, ToolResult
from gateway.errors import UserError
from gateway.vault import Grant, SqliteVault, VaultKeys, new_key
from services.backends import PrincipalWorkspace, WorkspaceSettings
from services.google.credentials import GoogleOptions
from services.google.principals import SERVICE, OAuthClient, PerPrincipalGoogle
from services.workspace import CATALOG

from ..conftest import WEDNESDAY_10AM

LISTS = {"items": [{"id": "L1", "title": "My Tasks", "updated": "2025-03-04T10:00:00.000Z"}]}
DEFAULT = {"id": "L1", "title": "My Tasks", "updated": "2025-03-04T10:00:00.000Z"}
CLIENT = OAuthClient("123.apps.googleusercontent.com", "GOCSPX-operator-client-secret")


class Wire:
    """One scripted Google for every principal's client: answers queued, requests recorded."""

    def __init__(self) -> None:
        self.responses: list[tuple[dict[str, str], str]] = []
        self.http = HttpMockSequence(self.responses)

    def reply(self, body: Any) -> None:
        self.responses.append(({"status": "200"}, json.dumps(body)))

    def bearers(self) -> list[str]:
        return [h.get("authorization", "") for _, _, _, h in self.http.request_sequence]


def _grant(principal: str, *, expires_at: float | None = None) -> Grant:
    return Grant(
        principal,
        SERVICE,
        account=f"{principal}@example.com",
        scopes=("https://www.googleapis.com/auth/tasks",),
        expires_at=expires_at if expires_at is not None else time.time() + 3600,
        access_token=f"ya29.{principal}-access",
        refresh_token=f"1//{principal}-refresh",
    )


@pytest.fixture
def vault(tmp_path: Path) -> SqliteVault:
    opened = SqliteVault(tmp_path / "vault.sqlite3", VaultKeys([new_key()]))
    for principal in ("alice", "bob"):
        opened.put(_grant(principal))
    return opened


def _gateway(vault: SqliteVault, wire: Wire) -> Gateway:
    settings = WorkspaceSettings("Europe/Berlin", lambda: WEDNESDAY_10AM)
    router = PerPrincipalGoogle(
        GoogleOptions(services=("tasks",), per_principal=True),
        vault,
        CLIENT,
        settings,
        transport=lambda: wire.http,
    )
    tools = Catalog([d for d in CATALOG if d.category == "tasks"])
    return Gateway(tools, resources={WorkspaceSettings: settings, PrincipalWorkspace: router})


def _lists(gw: Gateway, principal: str) -> ToolResult:
    ctx = ToolContext(principal=Principal(principal))
    return run_sync(gw.call("invoke_tool", {"tool_name": "tasks_list_tasklists", "parameters": {}}, ctx))


def test_each_principals_calls_carry_their_own_token(vault: SqliteVault) -> None:
    wire = Wire()
    gw = _gateway(vault, wire)
    for _ in ("alice", "bob"):
        wire.reply(LISTS)
        wire.reply(DEFAULT)
    assert _lists(gw, "alice").ok and _lists(gw, "bob").ok
    assert wire.bearers() == ["Bearer ya29.alice-access"] * 2 + ["Bearer ya29.bob-access"] * 2


def test_a_principal_with_no_grant_gets_not_connected_and_nothing_is_sent(vault: SqliteVault) -> None:
    wire = Wire()
    refused = _lists(_gateway(vault, wire), "carol")
    assert refused.error is not None and refused.error.code == "not_connected"
    assert "gateway connect google" in refused.error.message
    assert wire.http.request_sequence == []


def test_an_expired_token_is_refreshed_for_its_owner_and_sealed_back(vault: SqliteVault) -> None:
    vault.put(_grant("alice", expires_at=time.time() - 60))
    wire = Wire()
    wire.reply({"access_token": "ya29.alice-fresh", "expires_in": 3600})  # the token endpoint
    wire.reply(LISTS)
    wire.reply(DEFAULT)
    assert _lists(_gateway(vault, wire), "alice").ok
    uri, _, body, _ = wire.http.request_sequence[0]
    assert uri == "https://oauth2.googleapis.com/token" and b"1%2F%2Falice-refresh" in body
    assert wire.bearers()[1:] == ["Bearer ya29.alice-fresh"] * 2
    refreshed = vault.get("alice", SERVICE)
    assert refreshed is not None and refreshed.access_token == "ya29.alice-fresh"
    assert refreshed.refresh_token == "1//alice-refresh"  # the rest of the grant kept
    bob = vault.get("bob", SERVICE)
    assert bob is not None and bob.access_token == "ya29.bob-access"  # nobody else's touched


def test_a_disconnection_holds_at_the_next_call(vault: SqliteVault) -> None:
    wire = Wire()
    gw = _gateway(vault, wire)
    wire.reply(LISTS)
    wire.reply(DEFAULT)
    assert _lists(gw, "alice").ok
    vault.delete("alice", SERVICE)
    refused = _lists(gw, "alice")
    assert refused.error is not None and refused.error.code == "not_connected"
    assert len(wire.http.request_sequence) == 2


def test_the_oauth_client_is_read_from_a_client_secrets_file(tmp_path: Path) -> None:
    path = tmp_path / "client_secrets.json"
    path.write_text(
        json.dumps({"installed": {"client_id": "abc", "client_secret": "s", "token_uri": "https://t"}})
    )
    assert OAuthClient.from_file(path) == OAuthClient("abc", "s", "https://t")
    path.write_text("{}")
    with pytest.raises(UserError, match="not a Google OAuth client file"):
        OAuthClient.from_file(path)


def test_a_person_connects_their_own_account_into_the_vault_not_the_token_file(
    tmp_path: Path, vault: SqliteVault
) -> None:
    from google.oauth2 import credentials as user_credentials

    from services.google.principals import connect

    secrets = tmp_path / "client_secrets.json"
    secrets.write_text(
        json.dumps(
            {
                "installed": {
                    "client_id": CLIENT.client_id,
                    "client_secret": CLIENT.client_secret,
                    "auth_uri": "https://accounts.google.com/o/oauth2/auth",
                    "token_uri": "https://oauth2.googleapis.com/token",
                    "redirect_uris": ["http://localhost"],
                }
            }
        )
    )
    options = GoogleOptions.parse(
        {"client_secrets": secrets, "services": ["tasks"], "per_principal": True}, data_dir=tmp_path
    )

    def run_flow(flow: Any, open_browser: bool) -> Any:  # the browser's part: Google's consent, answered
        return user_credentials.Credentials(  # type: ignore[no-untyped-call]
            token="ya29.carol-access",
            refresh_token="1//carol-refresh",
            token_uri=CLIENT.token_uri,
            client_id=CLIENT.client_id,
            client_secret=CLIENT.client_secret,
            scopes=options.scopes,
        )

    said = connect(options, vault, "carol", open_browser=False, run_flow=run_flow)
    assert "connected Google for carol" in said and "ya29" not in said
    grant = vault.get("carol", SERVICE)
    assert grant is not None and grant.refresh_token == "1//carol-refresh"
    assert not (tmp_path / "google-token.json").exists()
    wire = Wire()
    wire.reply(LISTS)
    wire.reply(DEFAULT)
    assert _lists(_gateway(vault, wire), "carol").ok
    assert wire.bearers() == ["Bearer ya29.carol-access"] * 2


def test_a_grant_google_refuses_is_forgotten_and_its_owner_told_never_retried(vault: SqliteVault) -> None:
    vault.put(_grant("alice", expires_at=time.time() - 60))
    wire = Wire()
    wire.responses.append(
        ({"status": "400"}, json.dumps({"error": "invalid_grant", "error_description": "revoked"}))
    )
    gw = _gateway(vault, wire)
    refused = _lists(gw, "alice")
    assert refused.error is not None and refused.error.code == "not_connected"
    assert "refused the grant of alice" in refused.error.message and "connect" in refused.error.message
    assert vault.get("alice", SERVICE) is None  # forgotten: the next call asks nothing of Google
    sent = len(wire.http.request_sequence)
    again = _lists(gw, "alice")
    assert again.error is not None and again.error.code == "not_connected"
    assert len(wire.http.request_sequence) == sent
    assert vault.get("bob", SERVICE) is not None  # nobody else's touched

"""`gateway vault` at a terminal: a new key, who connected what (never a secret), rotation, forgetting."""

from __future__ import annotations

from pathlib import Path

import pytest

from gateway.cli import main
from gateway.vault import Grant, SqliteVault, VaultKeys

SECRET_TOKEN = "ya29.do-not-print-me-0123456789"


def test_the_operator_lists_rotates_and_forgets_without_ever_seeing_a_secret(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["vault", "key"]) == 0
    old = capsys.readouterr().out.strip()
    vault = SqliteVault(tmp_path / "vault.sqlite3", VaultKeys([old]))
    vault.put(Grant("alice", "google", account="alice@example.com", access_token=SECRET_TOKEN))
    vault.put(Grant("bob", "github", kind="api_key", api_key="ghp_" + SECRET_TOKEN))
    vault.close()
    data = ["--data-dir", str(tmp_path)]

    monkeypatch.setenv("GATEWAY_VAULT_KEYS", old)
    assert main(["vault", "list", *data]) == 0
    listed = capsys.readouterr().out
    assert "alice  google  alice@example.com  (oauth)" in listed and "bob  github" in listed
    assert main(["vault", "list", "--principal", "bob", *data]) == 0
    assert "alice" not in capsys.readouterr().out
    assert main(["vault", "key"]) == 0
    new = capsys.readouterr().out.strip()
    monkeypatch.setenv("GATEWAY_VAULT_KEYS", f"{new},{old}")
    assert main(["vault", "rotate", *data]) == 0
    assert "2 grant(s) sealed again" in capsys.readouterr().out
    monkeypatch.setenv("GATEWAY_VAULT_KEYS", new)  # the old key dropped: every grant still opens
    assert SqliteVault(tmp_path / "vault.sqlite3", VaultKeys([new])).get("alice", "google") is not None
    assert main(["vault", "forget", "alice", "google", *data]) == 0
    assert main(["vault", "forget", "alice", "google", *data]) == 1
    out, err = capsys.readouterr()
    assert SECRET_TOKEN not in out + err

    monkeypatch.delenv("GATEWAY_VAULT_KEYS")
    assert main(["vault", "list", *data]) == 2  # a configuration to fix, as every UserError
    assert "the vault has no key: set GATEWAY_VAULT_KEYS" in capsys.readouterr().err

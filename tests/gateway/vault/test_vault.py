"""The vault: each principal's grants sealed at rest in a real SQLite file, opened only with the
operator's keys, rotated without losing one, and never handed to another principal.
"""

from __future__ import annotations

import shutil
import sqlite3
import stat
import threading
from pathlib import Path

import pytest

from gateway.vault import Grant, SqliteVault, VaultKeyError, VaultKeys, new_key

TOKEN = "ya29.access-token-of-alice-0123456789"
REFRESH = "1//refresh-token-of-alice-9876543210"


def _grant(principal: str = "alice", token: str = TOKEN) -> Grant:
    return Grant(
        principal=principal,
        service="google",
        account=f"{principal}@example.com",
        scopes=("https://www.googleapis.com/auth/gmail.modify",),
        expires_at=2_000_000_000.0,
        access_token=token,
        refresh_token=REFRESH + principal,
    )


@pytest.fixture
def key() -> str:
    return new_key()


def test_a_grant_is_sealed_at_rest_and_opened_whole_for_its_principal(tmp_path: Path, key: str) -> None:
    vault = SqliteVault(tmp_path / "vault.sqlite3", VaultKeys([key]))
    vault.put(_grant())
    vault.close()
    raw = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.is_file())
    assert TOKEN.encode() not in raw and REFRESH.encode() not in raw  # nor in the WAL
    assert stat.S_IMODE((tmp_path / "vault.sqlite3").stat().st_mode) == 0o600
    again = SqliteVault(tmp_path / "vault.sqlite3", VaultKeys([key]))
    assert again.get("alice", "google") == _grant()
    assert again.get("bob", "google") is None  # bob connected nothing: there is nothing for him
    assert TOKEN not in repr(again.get("alice", "google"))  # nor in a log line or a traceback
    [seen] = again.connections()
    assert (seen.principal, seen.service, seen.account) == ("alice", "google", "alice@example.com")
    assert TOKEN not in repr(seen)


def test_keys_rotate_without_losing_a_grant(tmp_path: Path, key: str) -> None:
    path = tmp_path / "vault.sqlite3"
    SqliteVault(path, VaultKeys([key])).put(_grant())
    newer = new_key()
    both = SqliteVault(path, VaultKeys([newer, key]))  # the new key first: it seals, both open
    assert both.get("alice", "google") == _grant()
    assert both.rotate() == 1
    assert both.rotate() == 0  # every grant is sealed with the current key now
    only_new = SqliteVault(path, VaultKeys([newer]))  # the old key dropped
    assert only_new.get("alice", "google") == _grant()


def test_a_lost_key_is_one_clear_error_and_nothing_is_opened_wrong(tmp_path: Path, key: str) -> None:
    path = tmp_path / "vault.sqlite3"
    original = SqliteVault(path, VaultKeys([key]))
    original.put(_grant())
    original.close()
    copied = tmp_path / "elsewhere" / "vault.sqlite3"  # the stopped gateway's data copied to another machine
    copied.parent.mkdir()
    shutil.copy(path, copied)
    stranger = SqliteVault(copied, VaultKeys([new_key()]))
    assert [c.principal for c in stranger.connections()] == ["alice"]  # who connected what is readable
    with pytest.raises(VaultKeyError, match=r"was sealed with vault key .* not among the vault.s keys"):
        stranger.get("alice", "google")
    with pytest.raises(VaultKeyError, match="could not be"):
        stranger.rotate()
    assert SqliteVault(path, VaultKeys([key])).get("alice", "google") == _grant()  # the original is intact


def test_a_row_moved_onto_another_principal_is_refused_not_used(tmp_path: Path, key: str) -> None:
    path = tmp_path / "vault.sqlite3"
    vault = SqliteVault(path, VaultKeys([key]))
    vault.put(_grant("alice"))
    vault.put(_grant("mallory", token="mallory-token-0000"))
    db = sqlite3.connect(path)
    sealed = db.execute("SELECT sealed FROM grants WHERE principal = 'alice'").fetchone()[0]
    db.execute("UPDATE grants SET sealed = ? WHERE principal = 'mallory'", (sealed,))  # a hand edit
    db.commit()
    db.close()
    with pytest.raises(VaultKeyError, match="another principal's"):
        vault.get("mallory", "google")
    db = sqlite3.connect(path)
    db.execute("UPDATE grants SET sealed = ? WHERE principal = 'alice'", (b"gAAAA" + sealed[5:-4] + b"AAAA",))
    db.commit()
    db.close()
    with pytest.raises(VaultKeyError, match="changed, or is damaged"):
        vault.get("alice", "google")


def test_keys_come_from_the_environment_or_a_private_file_and_a_bad_one_is_named(
    tmp_path: Path, key: str
) -> None:
    assert (
        VaultKeys.from_settings("VK", None, {"VK": f"{key}, {new_key()}"}).current == VaultKeys([key]).current
    )
    with pytest.raises(VaultKeyError, match="has no key: set GATEWAY_VAULT_KEYS"):
        VaultKeys.from_settings("VK", None, {})
    with pytest.raises(VaultKeyError, match="vault key 2 is not a Fernet key"):
        VaultKeys([key, "not-a-key"])
    key_file = tmp_path / "vault.key"
    key_file.write_text(key + "\n")
    key_file.chmod(0o644)
    with pytest.raises(VaultKeyError, match="readable by other users"):
        VaultKeys.from_settings("VK", key_file, {})
    key_file.chmod(0o600)
    assert VaultKeys.from_settings("VK", key_file, {}).current == VaultKeys([key]).current


def test_replicas_on_one_file_see_each_others_grants_and_disconnections(tmp_path: Path, key: str) -> None:
    path = tmp_path / "vault.sqlite3"
    replicas = [SqliteVault(path, VaultKeys([key])) for _ in range(2)]
    writers = [threading.Thread(target=replicas[n % 2].put, args=(_grant(f"p{n}"),)) for n in range(8)]
    for thread in writers:
        thread.start()
    for thread in writers:
        thread.join()
    assert [c.principal for c in replicas[1].connections()] == [f"p{n}" for n in range(8)]
    assert replicas[0].delete("p3", "google") and not replicas[1].delete("p3", "google")
    assert replicas[1].get("p3", "google") is None
    assert [c.principal for c in replicas[0].connections("p4")] == ["p4"]

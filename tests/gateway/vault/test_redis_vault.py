"""The vault in a real Redis, for replicas on several machines: sealed the same, shared, rotated."""

from __future__ import annotations

from pathlib import Path

import pytest

from gateway.vault import Grant, VaultKeyError, VaultKeys, new_key
from gateway.vault.redis_store import RedisVault

from ..adapters.mcp_server_support import redis_server

TOKEN = "ya29.redis-held-token-0123456789"


def test_replicas_share_grants_sealed_in_redis_and_rotate_them(tmp_path: Path) -> None:
    key, newer = new_key(), new_key()
    with redis_server(tmp_path / "redis") as url:
        a, b = RedisVault(url, VaultKeys([key])), RedisVault(url, VaultKeys([key]))
        try:
            a.put(Grant("alice", "google", account="alice@example.com", access_token=TOKEN))
            a.put(Grant("bob", "openapi:shop", kind="api_key", api_key="bob-key-42"))
            assert b.get("alice", "google") == Grant(
                "alice", "google", account="alice@example.com", access_token=TOKEN
            )
            assert b.get("carol", "google") is None
            raw = a._redis.hgetall("gateway:vault")
            assert TOKEN not in str(raw) and "bob-key-42" not in str(raw)
            assert [c.principal for c in b.connections()] == ["alice", "bob"]
            assert [c.service for c in b.connections("bob")] == ["openapi:shop"]
            rotated = RedisVault(url, VaultKeys([newer, key]))
            assert rotated.rotate() == 2
            only_new = RedisVault(url, VaultKeys([newer]))
            assert only_new.get("bob", "openapi:shop") is not None
            with pytest.raises(VaultKeyError, match="not among the vault's keys"):
                RedisVault(url, VaultKeys([key])).get(
                    "bob", "openapi:shop"
                )  # the old key alone no longer opens it
            swapped = a._redis.hget("gateway:vault", '["alice", "google"]')
            a._redis.hset("gateway:vault", '["bob", "google"]', swapped)  # a hand edit onto another principal
            with pytest.raises(VaultKeyError, match="another principal's"):
                only_new.get("bob", "google")
            assert b.delete("alice", "google") and not a.delete("alice", "google")
            for vault in (rotated, only_new):
                vault.close()
        finally:
            a.close()
            b.close()

"""Each person's own grants to the services behind the gateway, sealed at rest (docs/security.md).

A grant is what a principal gave the gateway for one service: an OAuth refresh and access token
with their expiry and scopes, or an API key, and the account they belong to (`grants.py`). The
vault keeps them per principal and service, each sealed with Fernet (AES-128-CBC with an
HMAC-SHA256, from `cryptography`) under a key the operator provides, never kept beside the data
(`keys.py`), in a SQLite file of the data directory (`store.py`) or in Redis (`redis_store.py`). Which grant a call uses is
decided by who calls: the vault is asked for the caller's, never for an account a model names.

It may import the core's `errors` and `files` only, and `cryptography` (the `oauth` extra) only
when a key is read or a grant sealed or opened.
"""

from typing import Protocol

from .grants import Connection, Grant
from .keys import VaultKeyError, VaultKeys, new_key
from .store import SqliteVault


class Vault(Protocol):
    """Each principal's grants per service (`SqliteVault`, or `redis_store.RedisVault` for replicas)."""

    def put(self, grant: Grant) -> None: ...

    def get(self, principal: str, service: str) -> Grant | None: ...

    def delete(self, principal: str, service: str) -> bool: ...

    def connections(self, principal: str | None = None) -> list[Connection]: ...

    def rotate(self) -> int: ...

    def close(self) -> None: ...


__all__ = ["Connection", "Grant", "SqliteVault", "Vault", "VaultKeyError", "VaultKeys", "new_key"]

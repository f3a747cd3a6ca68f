"""The vault in a SQLite file of the data directory: one row a principal and service, its secrets sealed.

Who connected what (the principal, the service, the account, the scopes, the expiry) is kept in the
clear, for the console and `gateway vault list`; the secrets are one sealed value that also names
the principal and the service it belongs to, so a row moved onto another principal's (a hand edit,
a restored backup of another row) opens as nobody's and is refused, never used.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..files import private_dir, use_wal
from .grants import Connection, Grant
from .keys import VaultKeyError, VaultKeys

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS grants ("
    " principal TEXT NOT NULL, service TEXT NOT NULL, kind TEXT NOT NULL, account TEXT,"
    " scopes TEXT NOT NULL, expires_at REAL, updated_at REAL NOT NULL, key_id TEXT NOT NULL,"
    " sealed BLOB NOT NULL, PRIMARY KEY (principal, service))"
)
_SECRETS = ("access_token", "refresh_token", "api_key")


def seal(keys: VaultKeys, grant: Grant) -> tuple[str, bytes]:
    """The grant's secrets sealed with the current key, naming whose they are; and that key's id."""
    secrets = {name: getattr(grant, name) for name in _SECRETS}
    payload = json.dumps({"principal": grant.principal, "service": grant.service, **secrets}).encode()
    return keys.seal(payload)


def opened(  # noqa: PLR0917 (a stored row's columns)
    keys: VaultKeys,
    principal: str,
    service: str,
    kind: Any,
    account: str | None,
    scopes: list[str],
    expires_at: float | None,
    key_id: str,
    sealed: bytes,
) -> Grant:
    """A stored grant opened for `principal` and `service`.

    Raises:
        VaultKeyError: no key of the vault opens it, or it is another principal's or service's.
    """
    what = f"the grant of {principal} for {service}"
    secrets = json.loads(keys.open(key_id, sealed, what=what))
    if secrets.get("principal") != principal or secrets.get("service") != service:
        raise VaultKeyError(f"{what} holds another principal's or service's secrets: it is refused")
    return Grant(
        principal=principal,
        service=service,
        kind=kind,
        account=account,
        scopes=tuple(scopes),
        expires_at=expires_at,
        **{name: secrets.get(name) for name in _SECRETS},
    )


class SqliteVault:
    """Grants per principal and service in `path`, sealed with `keys`."""

    def __init__(self, path: Path | str, keys: VaultKeys, *, clock: Callable[[], float] = time.time) -> None:
        self.path = Path(path)
        self.keys = keys
        self._clock = clock
        private_dir(self.path.parent)
        os.close(os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600))
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, timeout=10.0, isolation_level=None, check_same_thread=False)
        with self._lock:
            self._db.execute("PRAGMA busy_timeout = 10000")
            use_wal(self._db)
            self._db.execute(_SCHEMA)

    def put(self, grant: Grant) -> None:
        """Keep `grant`, replacing the principal's earlier one for the service."""
        key_id, sealed = seal(self.keys, grant)
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO grants VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    grant.principal,
                    grant.service,
                    grant.kind,
                    grant.account,
                    json.dumps(list(grant.scopes)),
                    grant.expires_at,
                    self._clock(),
                    key_id,
                    sealed,
                ),
            )

    def get(self, principal: str, service: str) -> Grant | None:
        """The principal's own grant for `service`; None when they have not connected it.

        Raises:
            VaultKeyError: no key of the vault opens it, or it is not this principal's.
        """
        with self._lock:
            row = self._db.execute(
                "SELECT kind, account, scopes, expires_at, key_id, sealed FROM grants WHERE principal = ? AND service = ?",
                (principal, service),
            ).fetchone()
        if row is None:
            return None
        kind, account, scopes, expires_at, key_id, sealed = row
        return opened(
            self.keys, principal, service, kind, account, json.loads(scopes), expires_at, key_id, sealed
        )

    def delete(self, principal: str, service: str) -> bool:
        """Forget the principal's grant for `service` (disconnect); whether there was one."""
        with self._lock:
            gone = self._db.execute(
                "DELETE FROM grants WHERE principal = ? AND service = ? RETURNING 1", (principal, service)
            ).fetchone()
        return gone is not None

    def connections(self, principal: str | None = None) -> list[Connection]:
        """Who connected what (one principal's, or everyone's for an operator), no secret opened or shown."""
        query = "SELECT principal, service, kind, account, scopes, expires_at, updated_at FROM grants"
        args: tuple[str, ...] = ()
        if principal is not None:
            query, args = query + " WHERE principal = ?", (principal,)
        with self._lock:
            rows = self._db.execute(query + " ORDER BY principal, service", args).fetchall()
        return [Connection(p, s, k, a, tuple(json.loads(sc)), e, u) for p, s, k, a, sc, e, u in rows]

    def rotate(self) -> int:
        """Seal again with the current key every grant sealed with another; how many.

        Raises:
            VaultKeyError: a grant no key opens (nothing is changed for it; the others are resealed first).
        """
        with self._lock:
            rows = self._db.execute(
                "SELECT principal, service, key_id, sealed FROM grants WHERE key_id != ?",
                (self.keys.current,),
            ).fetchall()
        resealed, failed = 0, []
        for principal, service, key_id, sealed in rows:
            try:
                payload = self.keys.open(key_id, sealed, what=f"the grant of {principal} for {service}")
            except VaultKeyError as exc:
                failed.append(str(exc))
                continue
            new_id, new_sealed = self.keys.seal(payload)
            with self._lock:
                self._db.execute(
                    "UPDATE grants SET key_id = ?, sealed = ? WHERE principal = ? AND service = ? AND key_id = ?",
                    (new_id, new_sealed, principal, service, key_id),
                )
            resealed += 1
        if failed:
            raise VaultKeyError(f"{resealed} grant(s) resealed; {len(failed)} could not be: {failed[0]}")
        return resealed

    def close(self) -> None:
        with self._lock:
            self._db.close()

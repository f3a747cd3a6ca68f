"""The vault in Redis, for replicas on several machines: one hash, a field per principal and service.

Each field holds what `store.py` keeps in a row (who connected what in the clear, the secrets sealed
and naming whose they are), as JSON; the sealing and the checks on opening are the same. Needs the
`redis` extra.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from ..redis_client import redis_client
from .grants import Connection, Grant
from .keys import VaultKeyError, VaultKeys
from .store import opened, seal


class RedisVault:
    """Grants per principal and service in the Redis at `url`, sealed with `keys`."""

    def __init__(
        self,
        url: str,
        keys: VaultKeys,
        *,
        prefix: str = "gateway:vault",
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.keys = keys
        self._redis: Any = redis_client(url, setting="vault.store")
        self._key = prefix
        self._clock = clock

    @staticmethod
    def _field(principal: str, service: str) -> str:
        return json.dumps([principal, service])

    def put(self, grant: Grant) -> None:
        """Keep `grant`, replacing the principal's earlier one for the service."""
        key_id, sealed = seal(self.keys, grant)
        row = {
            "kind": grant.kind,
            "account": grant.account,
            "scopes": list(grant.scopes),
            "expires_at": grant.expires_at,
            "updated_at": self._clock(),
            "key_id": key_id,
            "sealed": sealed.decode(),  # a Fernet token is URL-safe base64 already
        }
        self._redis.hset(self._key, self._field(grant.principal, grant.service), json.dumps(row))

    def get(self, principal: str, service: str) -> Grant | None:
        """The principal's own grant for `service`; None when they have not connected it.

        Raises:
            VaultKeyError: no key of the vault opens it, or it is not this principal's.
        """
        text = self._redis.hget(self._key, self._field(principal, service))
        if not text:
            return None
        row = json.loads(text)
        return opened(
            self.keys,
            principal,
            service,
            row["kind"],
            row.get("account"),
            row.get("scopes", []),
            row.get("expires_at"),
            row["key_id"],
            row["sealed"].encode(),
        )

    def delete(self, principal: str, service: str) -> bool:
        """Forget the principal's grant for `service` (disconnect); whether there was one."""
        return bool(self._redis.hdel(self._key, self._field(principal, service)))

    def connections(self, principal: str | None = None) -> list[Connection]:
        """Who connected what (one principal's, or everyone's), no secret opened or shown."""
        found = []
        for field, text in sorted(self._redis.hgetall(self._key).items()):
            p, s = json.loads(field)
            if principal is not None and p != principal:
                continue
            row = json.loads(text)
            found.append(
                Connection(
                    p,
                    s,
                    row["kind"],
                    row.get("account"),
                    tuple(row.get("scopes", [])),
                    row.get("expires_at"),
                    row["updated_at"],
                )
            )
        return found

    def rotate(self) -> int:
        """Seal again with the current key every grant sealed with another; how many.

        Raises:
            VaultKeyError: a grant no key opens (the others are resealed first).
        """
        resealed, failed = 0, []
        for c in self.connections():
            text = self._redis.hget(self._key, self._field(c.principal, c.service))
            if not text or json.loads(text)["key_id"] == self.keys.current:
                continue
            try:
                grant = self.get(c.principal, c.service)
            except VaultKeyError as exc:
                failed.append(str(exc))
                continue
            if grant is not None:
                self.put(grant)
                resealed += 1
        if failed:
            raise VaultKeyError(f"{resealed} grant(s) resealed; {len(failed)} could not be: {failed[0]}")
        return resealed

    def close(self) -> None:
        self._redis.close()

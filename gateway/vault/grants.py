"""A principal's grant to one service, and what of it may be shown (never its secrets)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Kind = Literal["oauth", "api_key"]


@dataclass(frozen=True)
class Grant:
    """What `principal` gave the gateway for `service`.

    The secrets (`access_token`, `refresh_token`, `api_key`) are left out of the repr, so a grant
    in a log line or a traceback shows none of them.
    """

    principal: str
    service: str
    kind: Kind = "oauth"
    account: str | None = None  # whose account it is, as the service names it (an email address)
    scopes: tuple[str, ...] = ()
    expires_at: float | None = None  # when the access token expires (None: not known, or an API key)
    access_token: str | None = field(default=None, repr=False)
    refresh_token: str | None = field(default=None, repr=False)
    api_key: str | None = field(default=None, repr=False)

    def connection(self, updated_at: float) -> Connection:
        return Connection(
            self.principal, self.service, self.kind, self.account, self.scopes, self.expires_at, updated_at
        )


@dataclass(frozen=True)
class Connection:
    """A grant as a person or an operator may see it: who connected which account, never a secret."""

    principal: str
    service: str
    kind: Kind
    account: str | None
    scopes: tuple[str, ...]
    expires_at: float | None
    updated_at: float

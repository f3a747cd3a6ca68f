"""Who connected which account (the vault, `gateway.vault`): listed for the operator, never a secret,
and disconnected from the console, audited."""

from __future__ import annotations

from ..engine import Gateway
from ..vault import Connection, Vault


def vault_of(gw: Gateway) -> Vault | None:
    """The gateway's vault, when it keeps each caller's grants (None: a personal gateway)."""
    found = gw.resources.get(Vault)
    return found  # type: ignore[return-value]  # registered under its protocol by the runtime


def listed(gw: Gateway) -> list[Connection] | None:
    vault = vault_of(gw)
    return None if vault is None else vault.connections()


def disconnect(gw: Gateway, principal: str, service: str, *, who: str) -> bool:
    """Forget `principal`'s grant for `service`; whether there was one. Audited, naming who did it."""
    vault = vault_of(gw)
    if vault is None or not vault.delete(principal, service):
        return False
    gw.auditor.log(
        principal=principal,
        session="console",
        call_id=service,
        tool=service,
        outcome="disconnected",
        decided_by={"channel": "console", "operator": who},
    )
    return True

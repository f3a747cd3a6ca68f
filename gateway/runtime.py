"""Assemble a Gateway from Settings: load the configured catalogs, policy, gate and audit log."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from datetime import datetime

from .audit import JsonlAuditLog
from .catalog import Catalog
from .config import Settings
from .confirmation import Approver, ConfirmationGate
from .context import Principal
from .engine import Gateway
from .policy import Policy, Rule
from .toolset import ProviderOptions, load_provider


def policy_from(settings: Settings) -> Policy:
    rules = tuple(
        Rule(
            effect=r.effect,
            names=tuple(r.names),
            categories=tuple(r.categories),
            actions=tuple(r.actions),
            roles=tuple(r.roles),
        )
        for r in settings.policy.rules
    )
    return Policy(rules=rules, default=settings.policy.default)


def principal_from(settings: Settings, principal_id: str | None = None) -> Principal:
    pid = principal_id or settings.principal
    entry = settings.principals.get(pid)
    return Principal(id=pid, roles=frozenset(entry.roles if entry else ()))


@contextmanager
def open_gateway(
    settings: Settings,
    *,
    approver: Approver | None = None,
    clock: Callable[[], datetime] | None = None,
) -> Iterator[Gateway]:
    """A Gateway over the configured catalogs; resources are closed on exit."""
    options = ProviderOptions(
        data_dir=settings.data_dir,
        timezone=settings.timezone,
        backend=settings.backend,
        seed_demo=settings.seed_demo,
        clock=clock,
    )
    catalog = Catalog()
    resources: dict[type, object] = {}
    closers: list[Callable[[], None]] = []
    audit = JsonlAuditLog(settings.audit_path, fsync=settings.audit.fsync) if settings.audit.enabled else None
    try:
        for spec in settings.catalogs:
            toolset = load_provider(spec)(options)
            if toolset.close is not None:
                closers.append(toolset.close)
            catalog.merge(toolset.catalog)
            resources.update(toolset.resources)
        gate = ConfirmationGate(
            settings.confirmation.mode, approver=approver, ttl_seconds=settings.confirmation.ttl_seconds
        )
        yield Gateway(catalog, resources=resources, policy=policy_from(settings), gate=gate, audit=audit)
    finally:
        for close in reversed(closers):
            with suppress(Exception):
                close()
        if audit is not None:
            audit.close()

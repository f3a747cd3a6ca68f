"""What a gateway can be configured with: every section of the TOML file, and `Settings`.

Where the values come from (the file, the environment, the command line) is `gateway.config`'s job;
this module only says what is valid, with a sentence for each thing that is not.

The sections of `gateway serve` over HTTP and of the console are declared in `serve_settings`.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import platformdirs
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    field_validator,
    model_validator,
)

from .client_settings import CodeSettings, LimiterSettings, LimitSettings, ToolsetSettings
from .serve_settings import ConsoleSettings, ServeSettings

APP_NAME = "metatool-gateway"


def default_config_path() -> Path:
    return platformdirs.user_config_path(APP_NAME) / "config.toml"


def default_data_dir() -> Path:
    return platformdirs.user_data_path(APP_NAME)


def path_problem(path: Path, exc: OSError) -> str:
    """Why `path` cannot be used, in words: the part of it that is a file, or the system's reason."""
    for part in reversed((path, *path.parents)):
        if part.exists() and not part.is_dir() and part != path:
            return f"{part} is a file, not a directory"
    return exc.strerror or type(exc).__name__


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RuleSettings(_Section):
    effect: Literal["allow", "deny"]
    names: list[str] = []
    categories: list[str] = []
    actions: list[str] = []
    roles: list[str] = []


class PolicySettings(_Section):
    default: Literal["allow", "deny"] = "allow"
    rules: list[RuleSettings] = []


class PrincipalSettings(_Section):
    roles: list[str] = []


class ConfirmationSettings(_Section):
    mode: Literal["host", "model", "deny"] = "host"
    ttl_seconds: float = Field(300.0, gt=0)
    # Where pending confirmations live: one process (memory), processes on one machine (sqlite),
    # several machines (redis). Processes sharing a store must share `secret` too. "auto": a served
    # gateway and `gateway pending/approve/deny` share a SQLite store in the data directory, with a
    # secret generated there; every other command keeps its confirmations in memory.
    store: Literal["auto", "memory", "sqlite", "redis"] = "auto"
    path: Path | None = None
    redis_url: str = "redis://127.0.0.1:6379/0"
    # With redis: how long a process counts as running after its last lease renewal (it renews every
    # third of this). A process that cannot renew this long has its paused programs' calls declined.
    lease_seconds: float = Field(30.0, ge=3)
    secret: SecretStr | None = None
    # Who may approve a destructive call. Not "elicitation" by default: there the MCP client that
    # made the call answers its own question. Any channel may decline.
    approvers: list[Literal["elicitation", "console", "terminal", "host"]] = ["console", "terminal", "host"]
    # The preview an approver reads is never cut; past this size the call is refused instead.
    max_preview_bytes: int = Field(8192, ge=256)

    @field_validator("secret")
    @classmethod
    def _long_enough(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and len(value.get_secret_value()) < 32:
            raise ValueError(
                "too short: a secret needs 32 characters or more, e.g. the output of "
                "python -c 'import secrets; print(secrets.token_hex(32))'"
            )
        return value

    @model_validator(mode="after")
    def _shared_store_has_a_shared_secret(self) -> ConfirmationSettings:
        if self.store in ("sqlite", "redis") and self.secret is None:
            raise ValueError(
                f"store {self.store!r} is shared between processes, so they need the same secret: "
                "set GATEWAY_CONFIRMATION_SECRET (32 characters or more) in each"
            )
        return self


class AuditSettings(_Section):
    enabled: bool = True
    path: Path | None = None
    fsync: bool = False


class TelemetrySettings(_Section):
    """Traces and metrics, with the `otel` extra (docs/observability.md)."""

    otlp_endpoint: str | None = Field(None, pattern=r"^https?://")  # OTLP/HTTP, e.g. http://otel:4318
    service_name: str = APP_NAME
    metrics_open: bool = False  # /metrics answers without the admin token


class UsageSettings(_Section):
    """Learning from use: which tools sessions ran after their searches (docs/discovery.md)."""

    enabled: bool = True
    # Where pairs live: sqlite (a file in the data directory), memory (this process), redis (replicas).
    store: Literal["sqlite", "memory", "redis"] = "sqlite"
    path: Path | None = None  # default: <data_dir>/usage.sqlite3
    redis_url: str = "redis://127.0.0.1:6379/0"
    max_queries_per_tool: int = Field(200, ge=1)
    max_count_per_principal: int = Field(3, ge=1)  # one principal repeating a pair counts at most this
    max_pairs_per_principal_per_day: int = Field(500, ge=1)
    # Distinct principals a pair needs before it moves anyone else's ranking (one's own count at once).
    min_principals: int = Field(3, ge=1)
    # Sessions whose searches are remembered at once, and of one principal (its own go first).
    max_sessions: int = Field(10_000, ge=1)
    max_sessions_per_principal: int = Field(1_000, ge=1)
    half_life_days: float = Field(30.0, gt=0)
    retention_days: float = Field(180.0, gt=0)


_MODEL_FILES = ("config.json", "tokenizer.json", "model.safetensors")  # what the encoder reads


class DenseSettings(_Section):
    """The dense layer of search and its sentence encoder, named by reference (docs/discovery.md).

    `dense = "off"` is short for `[search.dense] mode = "off"`.
    """

    # "auto": on when the `dense` extra is installed and the model's files are on this machine.
    mode: Literal["auto", "on", "off"] = "auto"
    # Another BERT-family sentence encoder on the Hugging Face hub (default: all-MiniLM-L6-v2 at
    # its pinned revision, with its files' sha256 pinned in code); `revision` and `files` required.
    model: str | None = Field(None, pattern=r"^[\w.-]+/[\w.-]+$")
    revision: str | None = Field(None, pattern=r"^[0-9a-f]{40}$")  # the commit, never a branch
    files: dict[str, str] = {}  # sha256 of config.json, tokenizer.json and model.safetensors
    path: Path | None = None  # a directory holding the files, looked at before the Hugging Face cache

    @model_validator(mode="after")
    def _pinned(self) -> DenseSettings:
        if self.model is not None and (self.revision is None or not self.files):
            raise ValueError("a model other than the default needs its revision and files (their sha256)")
        if self.revision is not None and self.model is None:
            raise ValueError("revision is the commit of `model`: set model too")
        if self.files:
            if sorted(self.files) != sorted(_MODEL_FILES):
                raise ValueError(f"files must give the sha256 of exactly {', '.join(_MODEL_FILES)}")
            bad = [name for name, digest in self.files.items() if not re.fullmatch(r"[0-9a-f]{64}", digest)]
            if bad:
                raise ValueError(f"not a sha256 (64 lowercase hex digits): {', '.join(sorted(bad))}")
        return self


class SearchSettings(_Section):
    """How `discover_tools` ranks (docs/discovery.md)."""

    # The sentence encoder's layer (the `dense` extra): a mode ("auto", "on", "off") or a table.
    dense: DenseSettings = DenseSettings()

    @field_validator("dense", mode="before")
    @classmethod
    def _mode_alone(cls, value: Any) -> Any:
        return {"mode": value} if isinstance(value, str) else value


class GoogleSettings(_Section):
    """The Google backend (`backend = "google"`): how to authenticate and which services to enable."""

    credentials: Literal["oauth", "adc", "service_account"] = "oauth"
    client_secrets: Path | None = None  # the OAuth "Desktop app" client file, for `gateway auth google`
    token_file: Path | None = None  # default: <data_dir>/google-token.json
    service_account_file: Path | None = None
    subject: str | None = None  # the user a service account acts as (domain-wide delegation)
    services: list[Literal["calendar", "gmail", "tasks"]] = ["calendar", "gmail", "tasks"]
    allow_permanent_delete: bool = False  # gmail_delete_message; needs full Gmail access
    send_updates: Literal["all", "externalOnly", "none"] = "all"  # guest emails on event changes
    extra_scopes: list[str] = []  # OAuth scopes beyond the services' own, e.g. for the google-apis catalog


class GoogleApisSettings(_Section):
    """The `google-apis` catalog: which Google APIs, at which versions, become tools (docs/google-apis.md)."""

    versions: Literal["newest", "all"] = "newest"  # newest: each API once, at its newest stable version
    apis: list[str] = []  # only these APIs (e.g. ["drive", "sheets"]); empty: every API
    exclude_apis: list[str] = []
    read_only: bool = False  # serve only read-only methods (and ask only for read-only scopes)
    # Sign-in scopes for the APIs in `apis`: auto (those covering the served methods) or none
    scopes: Literal["auto", "none"] = "auto"
    cache_dir: Path | None = None  # where the catalog's index is cached (default: the user's cache)


class OpenApiAuthSettings(_Section):
    """How calls to one OpenAPI entry authenticate; secrets come from a variable or a file, never the config."""

    type: Literal["none", "bearer", "api_key", "basic", "oauth2"] = "none"
    env: str | None = None  # the variable holding the token, API key, password or client secret
    file: Path | None = None  # or a file holding it (its content, stripped)
    username: str | None = None  # basic: the user; oauth2: the client id (or username_env)
    username_env: str | None = None
    name: str | None = None  # api_key: the header, query or cookie name (default: the spec's scheme)
    location: Literal["header", "query", "cookie"] | None = None  # api_key (default: the spec's, else header)
    token_url: str | None = None  # oauth2 (default: the spec's clientCredentials flow)
    scopes: list[str] = []  # oauth2


class OpenApiSettings(_Section):
    """One REST API described in OpenAPI, served as a catalog (`[[openapi]]`, docs/openapi.md)."""

    name: str = Field(pattern=r"^[a-z][a-z0-9_]{0,31}$")  # the tools' name and category prefix
    spec: Path  # the description: JSON or YAML, OpenAPI 3.0 or 3.1
    base_url: str | None = None  # default: the spec's first server, its variables at their defaults
    server_variables: dict[str, str] = {}
    allowed_servers: list[str] = []  # other servers (origins) requests and credentials may go to
    include_tags: list[str] = []
    exclude_tags: list[str] = []
    include_paths: list[str] = []  # path globs, e.g. "/repos/*"
    exclude_paths: list[str] = []
    include_operations: list[str] = []  # operation ids (or tool names), globs allowed
    exclude_operations: list[str] = []
    read_only: bool = False  # serve only GET, HEAD and OPTIONS operations
    safe: list[str] = []  # POST/PUT/PATCH that are not destructive: operation ids, "tag:NAME" or path globs
    auth: OpenApiAuthSettings = OpenApiAuthSettings()
    timeout: float = Field(30.0, gt=0)  # seconds per request, connect to last byte
    retries: int = Field(2, ge=0, le=5)  # of safe methods on 429 and 503
    max_response_bytes: int = Field(1_000_000, gt=0)
    max_in_flight: int = Field(4, ge=1, le=64)  # calls at once; more are refused as busy


class Settings(_Section):
    """Everything a gateway process is configured with."""

    data_dir: Path = Field(default_factory=default_data_dir)
    backend: Literal["local", "google"] = "local"
    timezone: str = "UTC"
    catalogs: list[str] = ["workspace"]
    mcp_servers: Path | None = None
    """A fronting file in the `mcpServers` shape; its servers' tools join the catalog (docs/mcp-fronting.md)."""
    tools_dirs: list[Path] = []
    """Directories of tools defined as files; an earlier one wins a name (docs/file-tools.md)."""
    seed_demo: bool = True
    principal: str = "local"
    agent: str | None = None
    """The agent identity calls are made for; file tools may be limited to some agents."""
    principals: dict[str, PrincipalSettings] = {}
    policy: PolicySettings = PolicySettings()
    confirmation: ConfirmationSettings = ConfirmationSettings()
    audit: AuditSettings = AuditSettings()
    serve: ServeSettings = ServeSettings()
    console: ConsoleSettings = ConsoleSettings()
    usage: UsageSettings = UsageSettings()
    search: SearchSettings = SearchSettings()
    telemetry: TelemetrySettings = TelemetrySettings()
    google: GoogleSettings = GoogleSettings()
    google_apis: GoogleApisSettings = GoogleApisSettings()
    openapi: list[OpenApiSettings] = []
    """REST APIs described in OpenAPI, each a catalog of its operations (docs/openapi.md)."""
    limits: list[LimitSettings] = []
    """Rate limits and quotas on calls, by principal, tool, category and source (docs/limits.md)."""
    limiter: LimiterSettings = LimiterSettings()
    code: CodeSettings = CodeSettings()
    toolsets: list[ToolsetSettings] = []
    """Named toolsets: what a token, an OAuth client or scope, or `/mcp/<name>` is confined to."""

    @field_validator("limits")
    @classmethod
    def _unique_limit_names(cls, value: list[LimitSettings]) -> list[LimitSettings]:
        names = [limit.name for limit in value]
        if twice := sorted({n for n in names if names.count(n) > 1}):
            raise ValueError(f"limit names must be unique: {', '.join(twice)}")
        return value

    @field_validator("toolsets")
    @classmethod
    def _unique_toolset_names(cls, value: list[ToolsetSettings]) -> list[ToolsetSettings]:
        names = [t.name for t in value]
        if twice := sorted({n for n in names if names.count(n) > 1}):
            raise ValueError(f"toolset names must be unique: {', '.join(twice)}")
        return value

    @model_validator(mode="after")
    def _toolsets_are_bound_as_meant(self) -> Settings:
        known = {t.name for t in self.toolsets}
        unknown = sorted({t.toolset for t in self.serve.tokens if t.toolset and t.toolset not in known})
        if unknown:
            raise ValueError(
                f"serve.tokens name toolsets that are not configured: {', '.join(unknown)} "
                "(add a [[toolsets]] entry with that name)"
            )
        required = set(self.serve.oauth.scopes) if self.serve.oauth is not None else set()
        # A scope every token carries would confine every token: the toolset would be all anyone sees.
        if clashes := [f"{t.name} ({s})" for t in self.toolsets for s in t.scopes if s in required]:
            raise ValueError(
                f"toolset scopes that serve.oauth.scopes requires of every token: {', '.join(clashes)}; "
                "every OAuth token would be confined to them. Give each toolset a scope of its own "
                "(e.g. toolset:NAME) that only its clients' tokens carry"
            )
        return self

    @field_validator("timezone")
    @classmethod
    def _known_timezone(cls, value: str) -> str:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(
                f"unknown time zone {value!r} (use an IANA name such as Europe/Berlin)"
            ) from None
        return value

    @property
    def audit_path(self) -> Path:
        return self.audit.path or self.data_dir / "audit.jsonl"

    @property
    def usage_path(self) -> Path:
        return self.usage.path or self.data_dir / "usage.sqlite3"

    @property
    def confirmation_path(self) -> Path:
        return self.confirmation.path or self.data_dir / "confirmations.sqlite3"

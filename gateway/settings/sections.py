"""What a gateway can be configured with: every section of the TOML file, and `Settings`.

Where the values come from (the file, the environment, the command line) is
`gateway.settings.sections.loading`'s job; this module only says what is valid, with a sentence for each
thing that is not. Every section derives from `Section`: unknown keys are errors.

In order: what each client gets (named toolsets, rate limits and quotas, code mode), `gateway serve`
over HTTP and the console (tokens, OAuth, hosts), then the rest and `Settings`, which holds them all.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import platformdirs
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationInfo,
    field_validator,
    model_validator,
)

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


class Section(BaseModel):
    """One table of the configuration file: its keys are these fields, and no other."""

    model_config = ConfigDict(extra="forbid")


# -- what each client gets ----------------------------------------------------------------------


_WINDOWS = {"minute": 60.0, "hour": 3600.0, "day": 86400.0}


class LimitSettings(Section):
    """One rate limit or quota (`[[limits]]`, docs/limits.md): which calls it counts, and how many pass.

    A call is counted when it matches every selector given (`tools`, `categories`, `sources`) and
    its principal is one of `principals` and holds one of `roles` (each: any, when empty).
    """

    name: str = Field(pattern=r"^[A-Za-z0-9_.-]{1,64}$")  # named in the model's error and `gateway limits`
    tools: list[str] = []  # tool-name globs, e.g. "gmail_send_*"
    categories: list[str] = []
    sources: list[str] = []  # "openapi:NAME", "mcp:SERVER", "google-apis", "builtin"; globs allowed
    principals: list[str] = []
    roles: list[str] = []
    per: Literal["principal", "all"] = "principal"  # one budget each, or one shared by every principal
    rate: float | None = Field(None, gt=0)  # a token bucket: calls per second, refilled continuously
    burst: int | None = Field(None, ge=1)  # the bucket's size (default: the rate per second, at least 1)
    quota: int | None = Field(None, ge=1)  # or a quota: this many calls per window
    window: Literal["minute", "hour", "day"] = "day"  # fixed windows, from midnight UTC

    @model_validator(mode="after")
    def _one_kind(self) -> LimitSettings:
        if (self.rate is None) == (self.quota is None):
            raise ValueError("give exactly one of rate (a token bucket) or quota (calls per window)")
        if self.burst is not None and self.rate is None:
            raise ValueError("burst is the size of a token bucket: set rate too")
        return self

    @property
    def window_seconds(self) -> float:
        return _WINDOWS[self.window]


class CodeSettings(Section):
    """Code mode (docs/code-mode.md): `run_code`, a program over the catalog, run in a sandbox."""

    enabled: bool = False
    # run_code alone: discover, schema and call only inside programs. Needs `enabled`, so turning
    # code mode off never leaves run_code listed alone by a forgotten line.
    only: bool = False
    wall_seconds: float = Field(60.0, gt=0)  # a program's running time, tool calls included, pauses not
    cpu_seconds: float = Field(5.0, gt=0)  # time the sandbox spends executing the program itself
    memory_mb: int = Field(64, ge=8)
    max_calls: int = Field(50, ge=1)  # calls of call(), discover() and schema() in one program
    max_result_bytes: int = Field(20_000, ge=256)  # its result and printed text, as JSON
    max_paused: int = Field(64, ge=1)  # programs waiting for an approval at once; see Programs._to_end
    max_paused_mb: int = Field(256, ge=1)  # the states of the programs waiting, held in memory

    @model_validator(mode="after")
    def _only_when_enabled(self) -> CodeSettings:
        if self.only and not self.enabled:
            raise ValueError(
                "only = true offers run_code alone, which is code mode: set enabled = true too "
                "(or use gateway serve --code-only)"
            )
        return self


class ToolsetSettings(Section):
    """A named toolset (`[[toolsets]]`, docs/confirmation-and-policy.md): the tools one client works with.

    A tool is in it when it matches any selector: a `tools` glob, a `categories` glob or a
    `sources` glob. It narrows what a principal sees, never widens it.
    """

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]{0,63}$")  # also its endpoint: /mcp/<name>
    description: str = ""
    tools: list[str] = []  # tool-name globs, e.g. "tickets_*"
    categories: list[str] = []
    sources: list[str] = []  # "openapi:NAME", "mcp:SERVER", "google-apis", "builtin"; globs allowed
    clients: list[str] = []  # OAuth client ids (client_id or azp) whose tokens are confined to it
    scopes: list[str] = []  # OAuth scopes that confine a token carrying one to it

    @model_validator(mode="after")
    def _selects_something(self) -> ToolsetSettings:
        if not (self.tools or self.categories or self.sources):
            raise ValueError("a toolset names the tools it holds: give tools, categories or sources")
        return self


class LimiterSettings(Section):
    """Where the `[[limits]]` keep their counts (docs/limits.md)."""

    store: Literal["memory", "redis"] = "memory"  # memory: this process; redis: shared by replicas
    redis_url: str = "redis://127.0.0.1:6379/0"
    on_error: Literal["open", "closed"] = "open"  # Redis unreachable: admit every call, or refuse it


# -- gateway serve over HTTP, and the console ----------------------------------------------------


class TokenSettings(Section):
    """A bearer token of `gateway serve` over HTTP, mapped to a principal (its roles: [principals])."""

    principal: str
    sha256: str | None = Field(None, pattern=r"^[0-9a-f]{64}$")
    env: str | None = None
    toolset: str | None = None  # the [[toolsets]] entry this token is confined to

    @model_validator(mode="after")
    def _one_source(self) -> TokenSettings:
        if (self.sha256 is None) == (self.env is None):
            raise ValueError(
                "give exactly one of sha256 (the token's hex digest) or env (a variable holding it)"
            )
        return self


_LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")
# Asymmetric only: a key published in a JWKS can never be an HMAC secret, and "none" is no signature.
JwtAlgorithm = Literal[
    "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"
]


def https_or_loopback(value: str | None, what: str) -> str | None:
    """`value` if it is an https URL, or http on a loopback address.

    Raises:
        ValueError: anything else, saying why.
    """
    if value is None:
        return value
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"{what} must be an http(s) URL, e.g. https://auth.example.com")
    if parts.scheme == "http" and parts.hostname not in _LOOPBACK_NAMES:
        raise ValueError(
            f"{what} must use https (plain http only on a loopback address): keys fetched in clear can be forged"
        )
    return value


class OAuthSettings(Section):
    """`gateway serve --transport http` as an OAuth resource server (docs/mcp.md, "Authentication").

    Access tokens are JWTs from `issuer`, checked against its published keys (JWKS).
    """

    issuer: str  # the authorization server; a token's `iss` must be exactly this
    resource: str | None = None  # this server's URL as clients reach it; default: the URL it serves
    audience: str | None = None  # what a token's `aud` must hold; default: `resource`
    jwks_uri: str | None = None  # default: the `jwks_uri` of the issuer's discovery document
    scopes: list[str] = []  # every token must carry these; advertised as `scopes_supported`
    algorithms: list[JwtAlgorithm] = Field(["RS256", "ES256"], min_length=1)
    principal_claim: str = Field("sub", min_length=1)  # the claim naming the principal
    roles_claim: str | None = "roles"  # a list (or space-separated string) of roles; dots reach into objects
    leeway_seconds: float = Field(30.0, ge=0, le=300)  # clock skew allowed on `exp` and `nbf`
    jwks_min_refresh_seconds: float = Field(60.0, ge=1)  # an unknown `kid` refetches at most this often
    jwks_max_age_seconds: float = Field(3600.0, ge=60)  # keys are refetched at least this often

    @field_validator("issuer", "resource", "jwks_uri")
    @classmethod
    def _secure(cls, value: str | None, info: ValidationInfo) -> str | None:
        return https_or_loopback(value, info.field_name or "url")


class ServeSettings(Section):
    transport: Literal["stdio", "http"] = "stdio"
    host: str = "127.0.0.1"
    port: int = Field(8765, ge=0, le=65535)
    path: str = Field("/mcp", pattern=r"^/")
    tokens: list[TokenSettings] = []
    # Host names answered on every route (docs/mcp.md); default: loopback names, or the bound address.
    allowed_hosts: list[str] | None = None
    allowed_origins: list[str] = []  # web origins allowed besides the server's own
    oauth: OAuthSettings | None = None  # JWT access tokens from an authorization server
    # MCP sessions (Mcp-Session-Id): what lets an elicitation reach a handshake-era client (docs/mcp.md)
    sessions: bool = True
    max_sessions_per_principal: int = Field(1000, ge=1)  # sessions one principal holds open at once
    # Without sessions, plain 2026-07-28 tools/call and tools/list answered without the SDK's dispatch
    # (adapters/mcp_fast.py); false sends every request through the SDK
    fast_path: bool = True
    # Processes serving one port (SO_REUSEPORT), each a whole gateway on the shared stores; needs
    # sessions = false and no state in memory (adapters/mcp_workers.py, docs/mcp.md#workers)
    workers: int = Field(1, ge=1, le=64)
    # On SIGTERM: new connections are refused at once; calls still running this long after are
    # cancelled, each audited as cancelled, and the server stops (keep it below an orchestrator's
    # grace period, e.g. Kubernetes' 30 s default)
    stop_seconds: int = Field(25, ge=1, le=3600)


class ConsoleSettings(Section):
    """The operator console (docs/console.md); principals with the `admin` role in [[serve.tokens]] are admins too."""

    admin_token_sha256: str | None = Field(None, pattern=r"^[0-9a-f]{64}$")
    admin_token_env: str | None = None  # or a variable holding the token
    host: str = "127.0.0.1"
    port: int = Field(8766, ge=0, le=65535)
    session_idle_minutes: float = Field(30.0, gt=0)  # a browser session unused this long ends
    session_hours: float = Field(8.0, gt=0)  # and every session ends this long after sign-in

    @model_validator(mode="after")
    def _at_most_one_source(self) -> ConsoleSettings:
        if self.admin_token_sha256 is not None and self.admin_token_env is not None:
            raise ValueError("give admin_token_sha256 (the token's digest) or admin_token_env, not both")
        return self


# -- the rest, and Settings ----------------------------------------------------------------------


class RuleSettings(Section):
    effect: Literal["allow", "deny"]
    names: list[str] = []
    categories: list[str] = []
    actions: list[str] = []
    roles: list[str] = []


class PolicySettings(Section):
    default: Literal["allow", "deny"] = "allow"
    rules: list[RuleSettings] = []


class PrincipalSettings(Section):
    roles: list[str] = []


class ConfirmationSettings(Section):
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
    # Tools (names or fnmatch patterns) asked about at every call: no standing approval applies.
    always_confirm: list[str] = []
    # The model may ask a person for a standing approval (the tool gateway_request_standing_approval).
    rule_requests: bool = False

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


class AuditSettings(Section):
    enabled: bool = True
    path: Path | None = None
    fsync: bool = False


class TelemetrySettings(Section):
    """Traces and metrics, with the `otel` extra (docs/observability.md)."""

    otlp_endpoint: str | None = Field(None, pattern=r"^https?://")  # OTLP/HTTP, e.g. http://otel:4318
    service_name: str = APP_NAME
    metrics_open: bool = False  # /metrics answers without the admin token


class UsageSettings(Section):
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


class DenseSettings(Section):
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
    # As the model was trained (its card says): a text's vector is the mean of its tokens' last
    # states ("mean": all-MiniLM-L6-v2, e5) or the first token's ("cls": bge); and what is put
    # before a request's text and a tool's ("query: " and "passage: " for e5).
    pooling: Literal["mean", "cls"] = "mean"
    query_prefix: str = Field("", max_length=500)
    document_prefix: str = Field("", max_length=500)

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


class SearchSettings(Section):
    """How `discover_tools` ranks (docs/discovery.md)."""

    # The sentence encoder's layer (the `dense` extra): a mode ("auto", "on", "off") or a table.
    dense: DenseSettings = DenseSettings()

    @field_validator("dense", mode="before")
    @classmethod
    def _mode_alone(cls, value: Any) -> Any:
        return {"mode": value} if isinstance(value, str) else value


class VaultSettings(Section):
    """Each person's own grants to services, sealed at rest (docs/security.md, "The vault")."""

    # An environment variable holding the vault's keys (Fernet, comma-separated, the first seals),
    # and/or a file holding one a line (mode 0600); never in the data directory they protect.
    keys_env: str = "GATEWAY_VAULT_KEYS"
    key_file: Path | None = None
    path: Path | None = None  # default: <data_dir>/vault.sqlite3
    store: Literal["sqlite", "redis"] = "sqlite"  # redis: replicas on several machines share it
    redis_url: str = "redis://127.0.0.1:6379/0"


class GoogleSettings(Section):
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
    # Each caller's own Google account, from the vault (a team gateway); the token file is not used.
    per_principal: bool = False


class GoogleApisSettings(Section):
    """The `google-apis` catalog: which Google APIs, at which versions, become tools (docs/google-apis.md)."""

    versions: Literal["newest", "all"] = "newest"  # newest: each API once, at its newest stable version
    apis: list[str] = []  # only these APIs (e.g. ["drive", "sheets"]); empty: every API
    exclude_apis: list[str] = []
    read_only: bool = False  # serve only read-only methods (and ask only for read-only scopes)
    # Sign-in scopes for the APIs in `apis`: auto (those covering the served methods) or none
    scopes: Literal["auto", "none"] = "auto"
    cache_dir: Path | None = None  # where the catalog's index is cached (default: the user's cache)


class OpenApiAuthSettings(Section):
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
    # bearer, api_key: each caller's own token or key, from the vault (`gateway connect openapi:NAME`),
    # never the operator's; env and file are then not set.
    per_principal: bool = False


class OpenApiSettings(Section):
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


class Settings(Section):
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
    vault: VaultSettings = VaultSettings()
    google_apis: GoogleApisSettings = GoogleApisSettings()
    openapi: list[OpenApiSettings] = []
    """REST APIs described in OpenAPI, each a catalog of its operations (docs/openapi.md)."""
    limits: list[LimitSettings] = []
    """Rate limits and quotas on calls, by principal, tool, category and source (docs/limits.md)."""
    limiter: LimiterSettings = LimiterSettings()
    code: CodeSettings = CodeSettings()
    toolsets: list[ToolsetSettings] = []
    """Named toolsets: what a token, an OAuth client or scope, or `/mcp/<name>` is confined to."""

    @field_validator("limits", "toolsets")
    @classmethod
    def _unique_names(
        cls, value: list[LimitSettings] | list[ToolsetSettings], info: ValidationInfo
    ) -> list[LimitSettings] | list[ToolsetSettings]:
        names = [item.name for item in value]
        if twice := sorted({n for n in names if names.count(n) > 1}):
            what = "limit" if info.field_name == "limits" else "toolset"
            raise ValueError(f"{what} names must be unique: {', '.join(twice)}")
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

    @property
    def vault_path(self) -> Path:
        return self.vault.path or self.data_dir / "vault.sqlite3"

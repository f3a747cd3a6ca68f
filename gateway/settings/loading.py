"""Configuration: a TOML file, then environment variables, then command-line flags.

Later sources win. A broken file is refused whole, with the line of the problem;
nothing of it is applied.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..errors import ConfigError
from .sections import (
    APP_NAME,
    AuditSettings,
    ConfirmationSettings,
    ConsoleSettings,
    GoogleApisSettings,
    GoogleSettings,
    OpenApiAuthSettings,
    OpenApiSettings,
    PolicySettings,
    PrincipalSettings,
    RuleSettings,
    SearchSettings,
    ServeSettings,
    Settings,
    TelemetrySettings,
    TokenSettings,
    UsageSettings,
    default_config_path,
    default_data_dir,
    path_problem,
)

__all__ = [
    "APP_NAME",
    "ENVIRONMENT",
    "AuditSettings",
    "ConfirmationSettings",
    "ConsoleSettings",
    "GoogleApisSettings",
    "GoogleSettings",
    "OpenApiAuthSettings",
    "OpenApiSettings",
    "PolicySettings",
    "PrincipalSettings",
    "RuleSettings",
    "SearchSettings",
    "ServeSettings",
    "Settings",
    "TelemetrySettings",
    "TokenSettings",
    "UsageSettings",
    "default_config_path",
    "default_data_dir",
    "load_settings",
    "path_problem",
    "read_file",
]


# Environment variable -> dotted settings key. Lists are comma-separated; tools directories os.pathsep-separated.
ENVIRONMENT: Mapping[str, str] = {
    "GATEWAY_DATA_DIR": "data_dir",
    "GATEWAY_BACKEND": "backend",
    "GATEWAY_TIMEZONE": "timezone",
    "GATEWAY_CATALOGS": "catalogs",
    "GATEWAY_MCP_SERVERS": "mcp_servers",
    "GATEWAY_TOOLS_DIR": "tools_dirs",
    "GATEWAY_AGENT": "agent",
    "GATEWAY_SEED_DEMO": "seed_demo",
    "GATEWAY_PRINCIPAL": "principal",
    "GATEWAY_CONFIRMATION_MODE": "confirmation.mode",
    "GATEWAY_AUDIT_LOG": "audit.path",
    "GATEWAY_CONFIRMATION_STORE": "confirmation.store",
    "GATEWAY_CONFIRMATION_SECRET": "confirmation.secret",
    "GATEWAY_REDIS_URL": "confirmation.redis_url",
    "GATEWAY_USAGE": "usage.enabled",
    "GATEWAY_DENSE": "search.dense.mode",
    "GATEWAY_DENSE_MODEL_PATH": "search.dense.path",
    "GATEWAY_USAGE_STORE": "usage.store",
    "GATEWAY_SERVE_TRANSPORT": "serve.transport",
    "GATEWAY_SERVE_HOST": "serve.host",
    "GATEWAY_SERVE_PORT": "serve.port",
    "GATEWAY_SERVE_ALLOWED_HOSTS": "serve.allowed_hosts",
    "GATEWAY_SERVE_ALLOWED_ORIGINS": "serve.allowed_origins",
    "GATEWAY_SERVE_SESSIONS": "serve.sessions",
    "GATEWAY_SERVE_FAST_PATH": "serve.fast_path",
    "GATEWAY_SERVE_WORKERS": "serve.workers",
    "GATEWAY_SERVE_STOP_SECONDS": "serve.stop_seconds",
    "GATEWAY_CONSOLE_HOST": "console.host",
    "GATEWAY_CONSOLE_PORT": "console.port",
    "GATEWAY_OTLP_ENDPOINT": "telemetry.otlp_endpoint",
    "GATEWAY_GOOGLE_CREDENTIALS": "google.credentials",
    "GATEWAY_GOOGLE_CLIENT_SECRETS": "google.client_secrets",
    "GATEWAY_GOOGLE_TOKEN_FILE": "google.token_file",
    "GATEWAY_GOOGLE_SERVICE_ACCOUNT_FILE": "google.service_account_file",
    "GATEWAY_GOOGLE_SUBJECT": "google.subject",
}


def _set(tree: dict[str, Any], dotted: str, value: Any) -> None:
    *parents, leaf = dotted.split(".")
    for part in parents:
        if isinstance(tree.get(part), str):  # `dense = "off"` is short for the table's mode
            tree[part] = {"mode": tree[part]}
        tree = tree.setdefault(part, {})
    tree[leaf] = value


def _line_of(text: str, loc: tuple[int | str, ...]) -> int | None:
    """Best effort: the line where the last named key of `loc` is set."""
    keys = [part for part in loc if isinstance(part, str)]
    for key in reversed(keys):
        pattern = re.compile(rf"^\s*(\[+\s*)?([\w.]*\.)?{re.escape(key)}\s*(=|\]|\.)", re.M)
        match = pattern.search(text)
        if match:
            return text.count("\n", 0, match.start()) + 1
    return None


def read_file(path: Path) -> tuple[dict[str, Any], str]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read: {exc.strerror}", path=str(path)) from None
    try:
        return tomllib.loads(text), text
    except tomllib.TOMLDecodeError as exc:
        match = re.search(r"line (\d+)", str(exc))
        line = int(match.group(1)) if match else None
        raise ConfigError(f"not valid TOML: {exc}", path=str(path), line=line) from None


def load_settings(
    config_path: Path | str | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> Settings:
    """Settings from the config file, the environment and explicit overrides (dotted keys).

    The file is `config_path`, else $GATEWAY_CONFIG, else the per-user default if it exists.

    Raises:
        ConfigError: the file or a value is invalid; nothing was applied.
    """
    env = os.environ if environ is None else environ
    explicit = config_path or env.get("GATEWAY_CONFIG")
    path = Path(explicit) if explicit else default_config_path()
    tree: dict[str, Any] = {}
    text = ""
    if explicit or path.exists():
        tree, text = read_file(path)
    sources: dict[str, str] = {}  # dotted key -> where its value came from, when not the file
    for var, key in ENVIRONMENT.items():
        if var in env and env[var] != "":
            value: Any = env[var]
            if key in ("catalogs", "serve.allowed_hosts", "serve.allowed_origins"):
                value = [part.strip() for part in value.split(",") if part.strip()]
            elif key == "tools_dirs":  # a search path, like PATH
                value = [part for part in value.split(os.pathsep) if part]
            _set(tree, key, value)
            sources[key] = f"environment variable {var}"
    for key, value in (overrides or {}).items():
        if value is not None:
            _set(tree, key, value)
            sources[key] = "the command line"
    try:
        return Settings.model_validate(tree)
    except ValidationError as exc:
        raise _invalid(exc, path if text else None, text, sources) from None


def _invalid(exc: ValidationError, path: Path | None, text: str, sources: Mapping[str, str]) -> ConfigError:
    """Every problem, each blamed on where its value came from: a line of the file, a variable or a flag."""
    from_file: list[str] = []
    elsewhere: list[str] = []
    first_line: int | None = None
    for error in exc.errors(include_url=False, include_input=False):
        dotted = ".".join(str(p) for p in error["loc"])
        msg = error["msg"].removeprefix("Value error, ")
        source = next((s for k, s in sources.items() if dotted == k or dotted.startswith(f"{k}.")), None)
        if source is not None:
            elsewhere.append(f"{dotted} (from {source}): {msg}")
            continue
        line = _line_of(text, error["loc"]) if text else None
        if not from_file:
            first_line = line
        elif line:
            dotted = f"{dotted} (line {line})"
        from_file.append(f"{dotted}: {msg}" if dotted else msg)  # a whole-file check names its keys itself
    described = from_file + elsewhere
    return ConfigError(
        "; ".join(described),
        path=str(path) if path and from_file else None,
        line=first_line if from_file else None,
    )

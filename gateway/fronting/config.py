"""The fronting configuration: the `mcpServers` file MCP users already know, plus a few gateway keys.

```json
{"mcpServers": {
  "notes":   {"command": "uvx", "args": ["notes-mcp"], "env": {"NOTES_TOKEN": "${NOTES_TOKEN}"}},
  "weather": {"url": "https://weather.example/mcp", "headers": {"Authorization": "Bearer ${WEATHER_TOKEN}"}}
}}
```

`${VAR}` in `command`, `args`, `env`, `cwd`, `url` and `headers` is read from the environment
when the file is loaded, so secrets need not be written into it.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ..errors import ConfigError
from ..names import to_name
from .untrusted import fingerprint

_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


class ServerSettings(BaseModel):
    """One fronted server: a command to start (stdio) or a URL to connect to (Streamable HTTP)."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["stdio", "http", "streamable-http", "streamableHttp"] | None = None
    command: str | None = None
    args: list[str] = []
    env: dict[str, str] = {}
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = {}
    # Gateway keys: everything below is optional.
    category: str | None = Field(None, pattern=r"^[a-z0-9_]{1,64}$")
    prefix: str | None = Field(None, pattern=r"^[a-z0-9_]{0,40}$")
    timeout: float | None = Field(None, gt=0)
    idle_timeout: float = Field(600.0, gt=0)
    on_change: Literal["block", "warn"] = "block"
    # A server's annotations are its own claims: a tool that says readOnlyHint may still delete.
    trust_hints: bool = False
    protocol: Literal["auto", "legacy"] = "auto"
    disabled: bool = False

    @model_validator(mode="after")
    def _one_transport(self) -> ServerSettings:
        if (self.command is None) == (self.url is None):
            raise ValueError("give either 'command' (a stdio server) or 'url' (a Streamable HTTP server)")
        if self.type == "stdio" and self.command is None:
            raise ValueError("type 'stdio' needs 'command'")
        if self.type not in (None, "stdio") and self.url is None:
            raise ValueError(f"type {self.type!r} needs 'url'")
        if self.url is not None and not re.match(r"^https?://", self.url):
            raise ValueError("url must start with http:// or https://")
        return self

    @property
    def is_stdio(self) -> bool:
        return self.command is not None

    def identity(self) -> str:
        """A hash of what makes this the same server; secrets (env, headers) are left out."""
        return fingerprint([self.command, self.args, self.cwd, self.url])

    def secrets(self) -> list[str]:
        """Values that must never appear in a log or a result."""
        values = [*self.env.values(), *self.headers.values()]
        for value in self.headers.values():
            values.extend(value.split())  # "Bearer abc": the token alone must not leak either
        return sorted({v for v in values if len(v) >= 4}, key=len, reverse=True)


class FrontConfig(BaseModel):
    """The whole file: servers by name."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    servers: dict[str, ServerSettings] = Field(default_factory=dict, alias="mcpServers")

    def categories(self) -> dict[str, str]:
        """Server name -> catalog category, for every enabled server."""
        return {name: s.category or to_name(name) for name, s in self.servers.items() if not s.disabled}


def _expand(value: Any, environ: Mapping[str, str], missing: set[str]) -> Any:
    if isinstance(value, str):

        def lookup(match: re.Match[str]) -> str:
            name = match.group(1)
            if name not in environ:
                missing.add(name)
                return ""
            return environ[name]

        return _VAR.sub(lookup, value)
    if isinstance(value, list):
        return [_expand(v, environ, missing) for v in value]
    if isinstance(value, dict):
        return {k: _expand(v, environ, missing) for k, v in value.items()}
    return value


_EXPANDED = ("command", "args", "env", "cwd", "url", "headers")


def load_front_config(path: Path | str, *, environ: Mapping[str, str] | None = None) -> FrontConfig:
    """Read and check a fronting file; `${VAR}` references are filled from the environment.

    Raises:
        ConfigError: the file is unreadable or invalid; every problem is listed.
    """
    path = Path(path).expanduser()
    env = os.environ if environ is None else environ
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read: {exc.strerror}", path=str(path)) from None
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"not valid JSON: {exc.msg}", path=str(path), line=exc.lineno) from None
    if not isinstance(raw, dict):
        raise ConfigError("must be a JSON object with an 'mcpServers' object", path=str(path))
    missing: set[str] = set()
    for server in (raw.get("mcpServers") or {}).values():
        if isinstance(server, dict):
            for key in _EXPANDED:
                if key in server:
                    server[key] = _expand(server[key], env, missing)
    problems: list[str] = []
    if missing:
        problems.append(f"environment variables not set: {', '.join(sorted(missing))}")
    try:
        config = FrontConfig.model_validate(raw)
    except ValidationError as exc:
        # include_input=False: a bad value may be a secret.
        for e in exc.errors(include_url=False, include_input=False):
            problems.append(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}")
        config = None
    if config is not None:
        seen: dict[str, str] = {}
        for name, category in config.categories().items():
            if category in seen:
                problems.append(
                    f"mcpServers.{name}: category {category!r} is also used by {seen[category]!r}"
                )
            seen[category] = name
    if problems or config is None:
        raise ConfigError("; ".join(problems), path=str(path))
    return config

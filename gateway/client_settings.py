"""The sections of what each client gets: named toolsets, rate limits and quotas, code mode.

Declared apart from `gateway.settings`, whose `Settings` holds them, so each module stays one page.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


_WINDOWS = {"minute": 60.0, "hour": 3600.0, "day": 86400.0}


class LimitSettings(_Section):
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


class CodeSettings(_Section):
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


class ToolsetSettings(_Section):
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


class LimiterSettings(_Section):
    """Where the `[[limits]]` keep their counts (docs/limits.md)."""

    store: Literal["memory", "redis"] = "memory"  # memory: this process; redis: shared by replicas
    redis_url: str = "redis://127.0.0.1:6379/0"
    on_error: Literal["open", "closed"] = "open"  # Redis unreachable: admit every call, or refuse it

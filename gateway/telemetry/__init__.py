"""Traces and metrics of the gateway's calls: what the engine reports, and where it goes.

The engine reports each meta-tool call and each invocation to a `Telemetry` (`observe`), whose
`Observation` it tells the outcome. This module needs nothing beyond the standard library and the
core's `context`: the base `Telemetry` records nothing, so a gateway without the `otel` extra
imports no OpenTelemetry and pays nothing. `otel` records spans and metrics through the
OpenTelemetry API (`OpenTelemetry`), `prometheus` keeps the same metrics for a scrape, and `setup`
builds them from the `[telemetry]` settings with OTLP exporters. Only those three modules import
`opentelemetry` or `prometheus_client`, and nothing imports them but `setup` and hosts that choose to.

May import: the core's `context` and `errors`; nothing of the engine, the runtime or another room.
"""

from __future__ import annotations

from typing import Literal

from ..context import ToolContext

CallKind = Literal["meta", "invoke"]
"""meta: a model's call of discover_tools, get_tool_schema or invoke_tool; invoke: a catalog tool."""

UNKNOWN_TOOL = "(unknown)"
"""The tool of a call that named no known tool, in metrics: a name from outside never becomes a label."""


class Observation:
    """One call while it runs. The engine sets `outcome` (and `error_code`) as it learns them.

    For an invocation the outcome is the audit log's (`executed`, `failed`, `denied`, ...); for a
    meta-tool call it is the result's status (`ok`, `error`, `confirmation_required`).
    """

    __slots__ = ("error_code", "outcome")

    def __init__(self) -> None:
        self.outcome = ""
        self.error_code: str | None = None

    def __enter__(self) -> Observation:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, *rest: object) -> None:
        return None


class Telemetry:
    """Where the engine reports its calls. This one records nothing and needs no package."""

    def observe(self, kind: CallKind, tool: str, context: ToolContext) -> Observation:
        """A context manager around one call of `tool` for `context`'s principal."""
        return Observation()

    def metrics_text(self, accept: str = "") -> tuple[bytes, str] | None:
        """The metrics for a Prometheus scrape (in the format `accept` asks for) and their content
        type; None: not kept here."""
        return None

    def close(self) -> None:
        """Flush and stop exporters (a no-op here)."""


__all__ = ["UNKNOWN_TOOL", "CallKind", "Observation", "Telemetry"]

"""Spans and metrics of the gateway's calls through the OpenTelemetry API (the `otel` extra).

Only the API is used here, so a host that has configured OpenTelemetry gets the gateway's spans
and metrics in its own pipeline (`OpenTelemetry()` takes the global providers), and `setup`
hands in providers of its own with OTLP exporters. A span carries the tool, the outcome, the
duration, the call id and the principal, never a parameter value.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import metrics, trace
from opentelemetry.metrics import CallbackOptions
from opentelemetry.metrics import Observation as Reading
from opentelemetry.trace import SpanKind, Status, StatusCode

from ..context import ToolContext
from . import UNKNOWN_TOOL, CallKind, Observation, Telemetry
from .prometheus import PrometheusMetrics

log = logging.getLogger("gateway")

SCOPE = "metatool_gateway"
DURATION_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
"""Seconds; a discover_tools call takes about a millisecond, a Google API call up to the timeout."""

# Outcomes that make a span an error: the call did not do what was asked (a pending confirmation,
# a refusal by policy or a human, or a model's mistake it can fix is not an error of the gateway).
_FAILED = frozenset({"failed", "error"})


class OpenTelemetry(Telemetry):
    """A span and metrics for every call, and optionally the same metrics for Prometheus.

    Args:
        tracer_provider: where spans go (None: the global provider, a no-op unless the host set one).
        meter_provider: where metrics go (None: the global provider).
        pending: how many destructive calls wait for a decision now (None: no such gauge).
        prometheus: the metrics kept for a scrape of `/metrics` too (None: not kept).
        shutdown_on_close: `close` shuts the given providers down, flushing what they hold
            (for providers made for this gateway, never a host's own).
    """

    def __init__(
        self,
        *,
        tracer_provider: trace.TracerProvider | None = None,
        meter_provider: metrics.MeterProvider | None = None,
        pending: Callable[[], int] | None = None,
        prometheus: PrometheusMetrics | None = None,
        shutdown_on_close: bool = False,
    ) -> None:
        self._owned = [p for p in (tracer_provider, meter_provider) if p is not None and shutdown_on_close]
        self.tracer = trace.get_tracer(SCOPE, tracer_provider=tracer_provider)
        meter = metrics.get_meter(SCOPE, meter_provider=meter_provider)
        self.calls = meter.create_counter(
            "gateway.calls", unit="{call}", description="Calls by kind (meta, invoke), tool and outcome"
        )
        self.duration = meter.create_histogram(
            "gateway.call.duration",
            unit="s",
            description="How long calls took, by kind, tool and outcome",
            explicit_bucket_boundaries_advisory=DURATION_BUCKETS,
        )
        self.prometheus = prometheus
        self._pending = pending
        if pending is not None:
            meter.create_observable_gauge(
                "gateway.pending_approvals",
                callbacks=[self._read_pending],
                unit="{call}",
                description="Destructive calls waiting for a human's decision",
            )

    def observe(self, kind: CallKind, tool: str, context: ToolContext) -> Observation:
        return _Observed(self, kind, tool, context)

    def metrics_text(self, accept: str = "") -> tuple[bytes, str] | None:
        return None if self.prometheus is None else self.prometheus.text(accept)

    def close(self) -> None:
        for provider in self._owned:
            shutdown = getattr(provider, "shutdown", None)  # the SDK's providers have it, the API's not
            if shutdown is not None:
                shutdown()

    def _read_pending(self, options: CallbackOptions) -> Iterable[Reading]:
        if self._pending is None:
            return []
        count = pending_count(self._pending)
        return [] if count is None else [Reading(count)]

    def finished(self, kind: CallKind, tool: str, outcome: str, seconds: float) -> None:
        label = UNKNOWN_TOOL if outcome == "unknown" else tool
        attributes = {"gateway.call.kind": kind, "gen_ai.tool.name": label, "gateway.outcome": outcome}
        self.calls.add(1, attributes)
        self.duration.record(seconds, attributes)
        if self.prometheus is not None:
            self.prometheus.record(kind, label, outcome, seconds)


def pending_count(read: Callable[[], int]) -> int | None:
    """`read()`, or None (with a warning) when the confirmation store cannot answer now."""
    try:
        return read()
    except Exception as exc:  # a store that is down must not break an export or a scrape
        log.warning("pending approvals not counted: %s", type(exc).__name__)
        return None


class _Observed(Observation):
    """A span that is the current one while the call runs; metrics recorded when it ends."""

    __slots__ = ("_kind", "_owner", "_span", "_start", "_token", "_tool")

    def __init__(self, owner: OpenTelemetry, kind: CallKind, tool: str, context: ToolContext) -> None:
        super().__init__()
        self._owner = owner
        self._kind: CallKind = kind
        self._tool = tool
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": tool,
            "gen_ai.tool.call.id": context.call_id,
            "gateway.call.kind": kind,
            "gateway.principal.id": context.principal.id,
        }
        if context.principal.agent:
            attributes["gateway.agent"] = context.principal.agent
        self._span = owner.tracer.start_span(
            f"execute_tool {tool}", kind=SpanKind.INTERNAL, attributes=attributes
        )
        self._start = 0.0
        self._token: object = None

    def __enter__(self) -> Observation:
        self._token = otel_context.attach(trace.set_span_in_context(self._span))
        self._start = time.perf_counter()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, *rest: object) -> None:
        seconds = time.perf_counter() - self._start
        otel_context.detach(self._token)  # type: ignore[arg-type]
        # An exception (a cancelled call) leaves no outcome line in the audit log: interrupted there too.
        outcome = "interrupted" if exc_type is not None else self.outcome or "unknown"
        span = self._span
        if outcome == "unknown":  # a name from outside stays an attribute, out of the span's name
            span.update_name("execute_tool")
        span.set_attribute("gateway.outcome", outcome)
        span.set_attribute("gateway.duration_ms", round(seconds * 1000, 3))
        if self.error_code:
            span.set_attribute("error.type", self.error_code)
        if exc_type is not None:
            span.set_status(Status(StatusCode.ERROR, exc_type.__name__))
        elif outcome in _FAILED:
            span.set_status(Status(StatusCode.ERROR, self.error_code or outcome))
        span.end()
        self._owner.finished(self._kind, self._tool, outcome, seconds)

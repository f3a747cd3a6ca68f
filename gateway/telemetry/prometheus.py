"""The gateway's metrics for a Prometheus scrape, kept with the official client (the `otel` extra).

A registry of its own, so two gateways in one process (tests, a host) never share counters, and
nothing of the client's default process metrics leaks into the page unless asked for. A worker of
`gateway serve --workers` runs in the client's multiprocess mode (`PROMETHEUS_MULTIPROC_DIR`, set by
its parent): its counts go to files there, and a scrape of any worker reads every worker's.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.exposition import choose_encoder
from prometheus_client.registry import Collector

from ..context import ToolContext
from . import UNKNOWN_TOOL, CallKind, Observation, Telemetry


class PrometheusMetrics:
    """Calls by kind, tool and outcome; their durations; destructive calls waiting for a decision.

    Args:
        pending: how many destructive calls wait now (None: no such gauge). Read at each scrape;
            a store that cannot answer leaves the gauge out of that scrape.
        buckets: the duration histogram's upper bounds, in seconds.
    """

    def __init__(
        self, *, pending: Callable[[], int | None] | None = None, buckets: tuple[float, ...]
    ) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        labels = ("kind", "tool", "outcome")
        self.calls = Counter(
            "gateway_calls", "Calls by kind (meta, invoke), tool and outcome", labels, registry=self.registry
        )
        self.duration = Histogram(
            "gateway_call_duration_seconds",
            "How long calls took, by kind, tool and outcome",
            labels,
            buckets=buckets,
            registry=self.registry,
        )
        self._pending = _Pending(pending) if pending is not None else None
        if self._pending is not None:
            self.registry.register(self._pending)
        # The two series of each (kind, tool, outcome), as `labels` finds them (under its lock, each
        # time); as many as the metrics themselves keep (unknown tools share one name).
        self._series: dict[tuple[str, str, str], tuple[Any, Any]] = {}

    def record(self, kind: str, tool: str, outcome: str, seconds: float) -> None:
        key = (kind, tool, outcome)
        series = self._series.get(key)
        if series is None:
            series = self._series[key] = (self.calls.labels(*key), self.duration.labels(*key))
        series[0].inc()
        series[1].observe(seconds)

    def text(self, accept: str = "") -> tuple[bytes, str]:
        """The exposition in the format the scraper's Accept header asks for, and its content type.

        Prometheus' text format 0.0.4 unless the header names a newer one or OpenMetrics.
        """
        encode, content_type = choose_encoder(accept)
        return encode(self._scraped()), content_type

    def _scraped(self) -> CollectorRegistry:
        """This process's registry, or with workers one that reads every worker's files."""
        shared = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
        if not shared:
            return self.registry
        from prometheus_client.multiprocess import MultiProcessCollector

        registry = CollectorRegistry()
        MultiProcessCollector(registry, path=shared)  # type: ignore[no-untyped-call]
        if self._pending is not None:
            registry.register(self._pending)
        return registry


class PrometheusTelemetry(Telemetry):
    """Metrics for a scrape of `/metrics` and nothing else: what `gateway serve` over HTTP keeps when
    no trace or metric pipeline is configured (no OTLP endpoint, no host's providers). A call costs
    two clock reads and the two metric updates: no span, no attribute dictionary, no context."""

    def __init__(self, metrics: PrometheusMetrics) -> None:
        self.prometheus = metrics

    def observe(self, kind: CallKind, tool: str, context: ToolContext) -> Observation:
        return _Timed(self.prometheus, kind, tool)

    def metrics_text(self, accept: str = "") -> tuple[bytes, str] | None:
        return self.prometheus.text(accept)


class _Timed(Observation):
    """One call's duration and outcome, recorded when it ends."""

    __slots__ = ("_kind", "_metrics", "_start", "_tool")

    def __init__(self, metrics: PrometheusMetrics, kind: CallKind, tool: str) -> None:
        self.outcome = ""
        self.error_code = None
        self._metrics, self._kind, self._tool = metrics, kind, tool
        self._start = 0.0

    def __enter__(self) -> Observation:
        self._start = time.perf_counter()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, *rest: object) -> None:
        # The outcomes and labels of `OpenTelemetry`'s metrics, so a scrape reads the same either way.
        outcome = "interrupted" if exc_type is not None else self.outcome or "unknown"
        tool = UNKNOWN_TOOL if outcome == "unknown" else self._tool
        self._metrics.record(self._kind, tool, outcome, time.perf_counter() - self._start)


class _Pending(Collector):
    """The pending approvals, counted at each scrape; left out of a scrape the store cannot answer."""

    def __init__(self, read: Callable[[], int | None]) -> None:
        self._read = read

    def describe(self) -> Iterator[Metric]:
        yield GaugeMetricFamily(
            "gateway_pending_approvals", "Destructive calls waiting for a human's decision"
        )

    def collect(self) -> Iterator[Metric]:
        count = self._read()
        if count is not None:
            yield GaugeMetricFamily(
                "gateway_pending_approvals", "Destructive calls waiting for a human's decision", value=count
            )

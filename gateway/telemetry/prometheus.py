"""The gateway's metrics for a Prometheus scrape, kept with the official client (the `otel` extra).

A registry of its own, so two gateways in one process (tests, a host) never share counters, and
nothing of the client's default process metrics leaks into the page unless asked for.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.exposition import choose_encoder
from prometheus_client.registry import Collector


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
        if pending is not None:
            self.registry.register(_Pending(pending))

    def record(self, kind: str, tool: str, outcome: str, seconds: float) -> None:
        self.calls.labels(kind, tool, outcome).inc()
        self.duration.labels(kind, tool, outcome).observe(seconds)

    def text(self, accept: str = "") -> tuple[bytes, str]:
        """The exposition in the format the scraper's Accept header asks for, and its content type.

        Prometheus' text format 0.0.4 unless the header names a newer one or OpenMetrics.
        """
        encode, content_type = choose_encoder(accept)
        return encode(self.registry), content_type


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

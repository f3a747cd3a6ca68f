"""Telemetry from the `[telemetry]` settings: OTLP exporters when an endpoint is set, Prometheus on request.

Without the `otel` extra this imports nothing of OpenTelemetry and answers the no-op `Telemetry`,
unless an OTLP endpoint is configured: then it says what to install instead of dropping the data.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..errors import UserError
from ..settings.loading import TelemetrySettings
from . import Telemetry

INSTALL = "pip install 'metatool-gateway[otel]'"


def open_telemetry(config: TelemetrySettings, *, pending: Callable[[], int], prometheus: bool) -> Telemetry:
    """The telemetry a gateway process reports to.

    Args:
        config: the `[telemetry]` section.
        pending: how many destructive calls wait for a decision now (the confirmation store).
        prometheus: keep metrics for a scrape of `/metrics` (the HTTP server); without the
            `otel` extra there is nothing to scrape, and `/metrics` says what to install.

    Raises:
        UserError: an OTLP endpoint is configured but OpenTelemetry is not installed.
    """
    if config.otlp_endpoint is None and not prometheus:
        return Telemetry()
    try:
        from .otel import DURATION_BUCKETS, OpenTelemetry, pending_count
        from .prometheus import PrometheusMetrics, PrometheusTelemetry
    except ImportError as exc:
        if config.otlp_endpoint is None:
            return Telemetry()
        raise UserError(
            f"telemetry.otlp_endpoint is set, but {exc.name or 'OpenTelemetry'} is not installed: {INSTALL}"
        ) from None
    providers = _otlp_providers(config) if config.otlp_endpoint is not None else {}
    scrape = PrometheusMetrics(pending=lambda: pending_count(pending), buckets=DURATION_BUCKETS)
    if not providers and not host_records():
        return PrometheusTelemetry(scrape)  # spans and OTel metrics would go nowhere: none are made
    return OpenTelemetry(
        pending=pending, prometheus=scrape if prometheus else None, shutdown_on_close=True, **providers
    )


def host_records() -> bool:
    """Whether this process has OpenTelemetry providers of its own (set by a host, or by
    `opentelemetry-instrument`): the gateway's spans and metrics then join them. Before any is set
    the API's globals are proxies that record nothing."""
    from opentelemetry import metrics

    tracing = spans_recorded()
    # The API exports no name for its proxy meter provider: it is told by its class's name.
    meter = type(metrics.get_meter_provider())
    return tracing or not (
        issubclass(meter, metrics.NoOpMeterProvider) or meter.__name__ == "_ProxyMeterProvider"
    )


def spans_recorded() -> bool:
    """Whether a tracer provider that records is set in this process (a host's, or the one
    `opentelemetry-instrument` sets): the MCP SDK's own middleware then makes a span a request."""
    from opentelemetry import trace

    provider = trace.get_tracer_provider()
    return not isinstance(provider, trace.ProxyTracerProvider | trace.NoOpTracerProvider)


def _otlp_providers(config: TelemetrySettings) -> dict[str, Any]:
    """SDK providers exporting to the configured OTLP/HTTP endpoint (spans in batches, metrics periodically)."""
    try:
        from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
        from opentelemetry.sdk.resources import SERVICE_NAME, Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError as exc:
        raise UserError(
            f"telemetry.otlp_endpoint is set, but {exc.name or 'the OTLP exporter'} is not installed: {INSTALL}"
        ) from None
    base = str(config.otlp_endpoint).rstrip("/")
    resource = Resource.create({SERVICE_NAME: config.service_name})
    tracer_provider = TracerProvider(resource=resource)
    tracer_provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=f"{base}/v1/traces")))
    # Every 60 s unless OTEL_METRIC_EXPORT_INTERVAL says otherwise (milliseconds), and once at close.
    reader = PeriodicExportingMetricReader(OTLPMetricExporter(endpoint=f"{base}/v1/metrics"))
    meter_provider = MeterProvider(resource=resource, metric_readers=[reader])
    return {"tracer_provider": tracer_provider, "meter_provider": meter_provider}

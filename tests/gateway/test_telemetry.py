"""Traces and metrics: the SDK's in-memory exporter and reader see every call, never a parameter value."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from gateway import Catalog, ConfirmationGate, Gateway, Principal, ToolContext, run_sync
from gateway.errors import ConfigError
from gateway.settings.loading import TelemetrySettings, load_settings
from gateway.telemetry import Telemetry
from gateway.telemetry.otel import DURATION_BUCKETS, OpenTelemetry
from gateway.telemetry.prometheus import PrometheusMetrics
from gateway.telemetry.setup import open_telemetry

from .sample_tools import ALL_TOOLS

ROOT = Path(__file__).resolve().parents[2]
SECRET_VALUE = "the-user-s-private-note-7f3a"


class Observed:
    def __init__(self, *, pending: bool = True) -> None:
        self.spans = InMemorySpanExporter()
        tracer_provider = TracerProvider()
        tracer_provider.add_span_processor(SimpleSpanProcessor(self.spans))
        self.reader = InMemoryMetricReader()
        self.gate = ConfirmationGate()
        read = (lambda: len(self.gate.pending())) if pending else None
        self.prometheus = PrometheusMetrics(pending=read, buckets=DURATION_BUCKETS)
        self.telemetry = OpenTelemetry(
            tracer_provider=tracer_provider,
            meter_provider=MeterProvider(metric_readers=[self.reader]),
            pending=read,
            prometheus=self.prometheus,
        )
        self.gw = Gateway(Catalog(ALL_TOOLS), gate=self.gate, telemetry=self.telemetry)

    def call(self, tool: str, arguments: dict[str, Any], principal: str = "alice") -> Any:
        ctx = ToolContext(principal=Principal(principal, agent="planner"))
        return run_sync(self.gw.call(tool, arguments, ctx))

    def finished(self) -> list[ReadableSpan]:
        return list(self.spans.get_finished_spans())

    def points(self, name: str) -> dict[tuple[Any, ...], Any]:
        data = self.reader.get_metrics_data()
        assert data is not None
        out: dict[tuple[Any, ...], Any] = {}
        for resource in data.resource_metrics:
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    if metric.name == name:
                        for point in metric.data.data_points:
                            assert point.attributes is not None
                            out[tuple(sorted(point.attributes.items()))] = point
        return out


@pytest.fixture
def seen() -> Observed:
    return Observed()


def test_an_invocation_is_a_span_inside_its_meta_tool_call_with_tool_outcome_and_principal(
    seen: Observed,
) -> None:
    result = seen.call("invoke_tool", {"tool_name": "notes_create", "parameters": {"title": SECRET_VALUE}})
    assert result.status == "ok"
    inner, outer = seen.finished()
    assert (inner.name, outer.name) == ("execute_tool notes_create", "execute_tool invoke_tool")
    assert inner.parent is not None and inner.parent.span_id == outer.context.span_id
    assert inner.attributes is not None and outer.attributes is not None
    assert {k: inner.attributes[k] for k in ("gen_ai.tool.name", "gateway.call.kind", "gateway.outcome")} == {
        "gen_ai.tool.name": "notes_create",
        "gateway.call.kind": "invoke",
        "gateway.outcome": "executed",
    }
    assert (
        inner.attributes["gateway.principal.id"] == "alice" and inner.attributes["gateway.agent"] == "planner"
    )
    assert inner.attributes["gen_ai.tool.call.id"] == outer.attributes["gen_ai.tool.call.id"]
    assert outer.attributes["gateway.outcome"] == "ok"
    assert float(inner.attributes["gateway.duration_ms"]) >= 0  # type: ignore[arg-type]
    assert inner.end_time is not None and inner.start_time is not None and inner.end_time >= inner.start_time


def test_no_parameter_value_reaches_a_span_or_a_metric(seen: Observed) -> None:
    seen.call("invoke_tool", {"tool_name": "notes_create", "parameters": {"title": SECRET_VALUE}})
    seen.call("invoke_tool", {"tool_name": "notes_create", "parameters": {"title": [SECRET_VALUE]}})
    seen.call("discover_tools", {"query": SECRET_VALUE})
    exported = json.dumps([json.loads(span.to_json()) for span in seen.finished()])
    data = seen.reader.get_metrics_data()
    assert data is not None
    assert SECRET_VALUE not in exported and SECRET_VALUE not in data.to_json()
    assert SECRET_VALUE not in seen.telemetry.metrics_text()[0].decode()  # type: ignore[index]


def test_a_name_from_outside_never_becomes_a_span_name_or_a_metric_label(seen: Observed) -> None:
    seen.call("invoke_tool", {"tool_name": "no_such_tool_4711", "parameters": {}})
    seen.call("no_such_meta_4711", {})
    invocation, meta_call, unknown_meta = seen.finished()
    assert [s.name for s in (invocation, meta_call, unknown_meta)] == [
        "execute_tool",
        "execute_tool invoke_tool",
        "execute_tool",
    ]
    assert invocation.attributes is not None and invocation.attributes["gateway.outcome"] == "unknown"
    assert invocation.attributes["gen_ai.tool.name"] == "no_such_tool_4711"  # an attribute, for the trace
    labels = {dict(key)["gen_ai.tool.name"] for key in seen.points("gateway.calls")}
    assert labels == {"(unknown)", "invoke_tool"}
    assert "4711" not in seen.telemetry.metrics_text()[0].decode()  # type: ignore[index]


def test_calls_are_counted_and_timed_by_kind_tool_and_outcome(seen: Observed) -> None:
    seen.call("discover_tools", {"query": "note"})
    seen.call("invoke_tool", {"tool_name": "notes_create", "parameters": {"title": "a"}})
    seen.call("invoke_tool", {"tool_name": "notes_create", "parameters": {"title": "b"}})
    seen.call("invoke_tool", {"tool_name": "files_boom", "parameters": {"path": "/x"}})
    counts = {
        (dict(k)["gateway.call.kind"], dict(k)["gen_ai.tool.name"], dict(k)["gateway.outcome"]): p.value
        for k, p in seen.points("gateway.calls").items()
    }
    assert counts == {
        ("meta", "discover_tools", "ok"): 1,
        ("meta", "invoke_tool", "ok"): 2,
        ("meta", "invoke_tool", "error"): 1,
        ("invoke", "notes_create", "executed"): 2,
        ("invoke", "files_boom", "failed"): 1,
    }
    durations = seen.points("gateway.call.duration")
    created = next(p for k, p in durations.items() if ("gen_ai.tool.name", "notes_create") in k)
    assert created.count == 2 and list(created.explicit_bounds) == list(DURATION_BUCKETS)
    failed = next(s for s in seen.finished() if s.name == "execute_tool files_boom")
    assert failed.status.status_code is StatusCode.ERROR and failed.attributes is not None
    assert failed.attributes["error.type"] == "internal"


def test_pending_approvals_are_a_gauge_read_from_the_confirmation_store(seen: Observed) -> None:
    first = seen.call("invoke_tool", {"tool_name": "notes_delete", "parameters": {"note_id": "n1"}})
    seen.call("invoke_tool", {"tool_name": "notes_delete", "parameters": {"note_id": "n2"}})
    assert [p.value for p in seen.points("gateway.pending_approvals").values()] == [2]
    assert "gateway_pending_approvals 2.0" in seen.telemetry.metrics_text()[0].decode()  # type: ignore[index]
    seen.gw.deny(first.pending.pending_id)
    assert [p.value for p in seen.points("gateway.pending_approvals").values()] == [1]
    pending = next(s for s in seen.finished() if s.name == "execute_tool notes_delete")
    assert pending.attributes is not None and pending.attributes["gateway.outcome"] == "pending_confirmation"
    assert pending.status.status_code is StatusCode.UNSET  # waiting for a human is not an error


def test_a_store_that_cannot_answer_leaves_the_gauge_out_and_the_rest_in(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def broken() -> int:
        raise OSError("disk gone")

    reader = InMemoryMetricReader()
    prometheus = PrometheusMetrics(pending=lambda: None, buckets=DURATION_BUCKETS)
    telemetry = OpenTelemetry(
        meter_provider=MeterProvider(metric_readers=[reader]), pending=broken, prometheus=prometheus
    )
    run_sync(Gateway(Catalog(ALL_TOOLS), telemetry=telemetry).call("discover_tools", {}))
    text = telemetry.metrics_text()[0].decode()  # type: ignore[index]
    assert "gateway_pending_approvals" not in text.replace("# HELP gateway_pending_approvals", "")
    assert 'gateway_calls_total{kind="meta",outcome="ok",tool="discover_tools"} 1.0' in text
    assert reader.get_metrics_data() is not None and "pending approvals not counted: OSError" in caplog.text


def test_the_prometheus_text_has_counters_and_a_histogram_in_seconds(seen: Observed) -> None:
    seen.call("invoke_tool", {"tool_name": "notes_create", "parameters": {"title": "a"}})
    body, content_type = seen.telemetry.metrics_text()  # type: ignore[misc]
    text = body.decode()
    assert content_type.startswith("text/plain; version=0.0.4")
    assert 'gateway_calls_total{kind="invoke",outcome="executed",tool="notes_create"} 1.0' in text
    assert (
        'gateway_call_duration_seconds_bucket{kind="invoke",le="60.0",outcome="executed",tool="notes_create"} 1.0'
        in text
    )
    assert "gateway_pending_approvals 0.0" in text
    openmetrics, kind = seen.telemetry.metrics_text("application/openmetrics-text; version=1.0.0")  # type: ignore[misc]
    assert kind.startswith("application/openmetrics-text") and openmetrics.endswith(b"# EOF\n")


def test_without_telemetry_a_gateway_records_nothing_and_imports_no_opentelemetry(tmp_path: Path) -> None:
    assert type(Gateway(Catalog(ALL_TOOLS)).telemetry) is Telemetry
    script = (
        "import sys, gateway, gateway.runtime, gateway.cli\n"
        "from gateway.settings.loading import load_settings\n"
        "from gateway.runtime import open_gateway\n"
        "s = load_settings(overrides={'data_dir': sys.argv[1], 'catalogs': ['tests.gateway.sample_tools:provide']}, environ={})\n"
        "with open_gateway(s) as gw:\n"
        "    assert gw.telemetry.metrics_text() is None\n"
        "print(sorted(m for m in sys.modules if m.startswith(('opentelemetry', 'prometheus_client'))))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


# A Python without the `otel` extra: its packages cannot be imported.
WITHOUT_OTEL = """
import sys
class Missing:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("opentelemetry", "prometheus_client"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None
sys.meta_path.insert(0, Missing())
from gateway.settings.loading import TelemetrySettings
from gateway.errors import UserError
from gateway.telemetry.setup import open_telemetry
telemetry = open_telemetry(TelemetrySettings(), pending=lambda: 0, prometheus=True)
print(type(telemetry).__name__, telemetry.metrics_text())
try:
    open_telemetry(TelemetrySettings(otlp_endpoint="http://127.0.0.1:4318"), pending=lambda: 0, prometheus=False)
except UserError as exc:
    print(exc)
"""


def test_without_the_otel_extra_metrics_are_off_and_an_otlp_endpoint_says_what_to_install() -> None:
    out = subprocess.run(
        [sys.executable, "-c", WITHOUT_OTEL], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "Telemetry None",
        "telemetry.otlp_endpoint is set, but opentelemetry is not installed: pip install 'metatool-gateway[otel]'",
    ]


def test_open_telemetry_is_a_no_op_unless_asked_and_the_otlp_endpoint_is_checked() -> None:
    assert type(open_telemetry(TelemetrySettings(), pending=lambda: 0, prometheus=False)) is Telemetry
    scraped = open_telemetry(TelemetrySettings(), pending=lambda: 3, prometheus=True)
    assert b"gateway_pending_approvals 3.0" in scraped.metrics_text()[0]  # type: ignore[index]
    with pytest.raises(ConfigError, match=r"telemetry\.otlp_endpoint"):
        load_settings(environ={"GATEWAY_OTLP_ENDPOINT": "collector:4318"}, config_path=Path("/dev/null"))
    settings = load_settings(
        environ={"GATEWAY_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, config_path=Path("/dev/null")
    )
    assert settings.telemetry.otlp_endpoint == "http://127.0.0.1:4318"


def test_a_call_past_a_rate_limit_is_counted_as_limited_and_its_span_says_rate_limited(
    seen: Observed,
) -> None:
    from gateway.limits import Limit, Limiter

    seen.gw.limits = Limiter([Limit("one-search", quota=1, tools=("notes_search",))])
    for _ in range(2):
        seen.call("invoke_tool", {"tool_name": "notes_search", "parameters": {"title": "a"}})
    counts = {dict(k)["gateway.outcome"]: p.value for k, p in seen.points("gateway.calls").items()}
    assert counts["executed"] == 1 and counts["limited"] == 1
    limited = [
        s for s in seen.finished() if s.attributes and s.attributes.get("gateway.outcome") == "limited"
    ]
    assert len(limited) == 1 and limited[0].attributes is not None
    assert limited[0].attributes["error.type"] == "rate_limited"


SCRAPE_ONLY = """
import asyncio
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from gateway import Catalog, Gateway
from gateway.settings.loading import TelemetrySettings
from gateway.telemetry.setup import open_telemetry
from tests.gateway.sample_tools import ALL_TOOLS

def serve(telemetry):
    gw = Gateway(Catalog(ALL_TOOLS), telemetry=telemetry)
    for args in ({}, {"query": "search notes"}, {"query": ""}):
        asyncio.run(gw.call("discover_tools", args))
    asyncio.run(gw.call("invoke_tool", {"tool_name": "notes_search", "parameters": {"title": "a"}}))
    asyncio.run(gw.call("invoke_tool", {"tool_name": "no_such_tool", "parameters": {}}))
    text = telemetry.metrics_text()[0].decode().splitlines()
    return type(telemetry).__name__, sorted(l for l in text if l.startswith("gateway_calls_total"))

alone = serve(open_telemetry(TelemetrySettings(), pending=lambda: 0, prometheus=True))
trace.set_tracer_provider(TracerProvider())  # a host (or opentelemetry-instrument) records spans
hosted = serve(open_telemetry(TelemetrySettings(), pending=lambda: 0, prometheus=True))
print(alone[0], hosted[0])
print(alone[1] == hosted[1], len(alone[1]))
"""


def test_with_nothing_recording_spans_only_the_scrape_is_kept_and_it_reads_the_same() -> None:
    out = subprocess.run(
        [sys.executable, "-c", SCRAPE_ONLY], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["PrometheusTelemetry OpenTelemetry", "True 5"]

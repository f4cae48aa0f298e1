"""Telemetry: every run and every span it records (pipeline stage, model call, tool call,
check) also becomes an OpenTelemetry span (OTLP over HTTP; off unless
`telemetry.otlp_endpoint` is set — Langfuse, Jaeger, Tempo, Honeycomb … read OTLP) and
Prometheus metrics (runs, latency, tokens, refusals, fabricated ids caught, errors), served
at `/metrics` by `footnote serve`.

It hooks the run store: `ObservedRunStore` forwards every call to the real store and
observes `start`, `add_span` and `finish`, so all pipelines are covered without touching
them. OTel spans are written after the fact with the recorded start times and durations;
a run's spans are children of the run's span, and an ask started by a chat turn
(`<run>.ask1`) is a child of the turn.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from footnote.config import TelemetrySettings
from footnote.store.base import RunStore
from footnote.store.records import Span

REFUSALS = frozenset({"no_evidence", "weak_evidence", "refused"})
FAILURES = frozenset({"failed", "error"})
_NS = 1_000_000_000


# Short string values that name things (never document or model text): exported as they are.
_NAME_KEYS = frozenset(
    {"run_id", "kind", "role", "mode", "status", "verdict", "evidence_id", "tool", "purpose",
     "route", "model", "name", "stage", "intent", "error_code", "stop_reason", "lang", "type"}
)  # fmt: skip


def _attributes(data: dict[str, Any], *, text: bool) -> dict[str, Any]:
    """Span data as OTel attributes: numbers and names kept; other strings cut at 1000
    characters when `text` is on, else replaced by their length (`<key>.chars`)."""
    out: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(value, bool | int | float):
            out[f"footnote.{key}"] = value
        elif value is None:
            continue
        elif key in _NAME_KEYS and isinstance(value, str) and len(value) <= 200:
            out[f"footnote.{key}"] = value
        elif text:
            out[f"footnote.{key}"] = (value if isinstance(value, str) else str(value))[:1000]
        else:
            out[f"footnote.{key}.chars"] = len(value if isinstance(value, str) else str(value))
    return out


@dataclass
class Metrics:
    """The Prometheus metrics of one process (their own registry, served at /metrics)."""

    registry: Any
    runs: Any = None
    run_seconds: Any = None
    model_calls: Any = None
    tokens: Any = None
    model_seconds: Any = None
    tool_calls: Any = None
    checks: Any = None
    refusals: Any = None
    fabricated: Any = None
    errors: Any = None

    @classmethod
    def create(cls) -> Metrics:
        """Fresh metrics in a registry of their own."""
        from prometheus_client import CollectorRegistry, Counter, Histogram

        reg = CollectorRegistry()
        m = cls(reg)
        m.runs = Counter("footnote_runs", "Finished runs.", ["kind", "status"], registry=reg)
        m.run_seconds = Histogram(
            "footnote_run_seconds", "Run latency.", ["kind"], registry=reg,
            buckets=(0.1, 0.5, 1, 2, 5, 10, 20, 40, 80, 160, 320),
        )  # fmt: skip
        m.model_calls = Counter(
            "footnote_model_calls", "Model calls.", ["role", "purpose"], registry=reg
        )
        m.tokens = Counter(
            "footnote_model_tokens", "Model tokens.", ["role", "direction"], registry=reg
        )
        m.model_seconds = Histogram(
            "footnote_model_seconds", "Model call latency.", ["role"], registry=reg
        )
        m.tool_calls = Counter("footnote_tool_calls", "Agent tool calls.", ["tool"], registry=reg)
        m.checks = Counter(
            "footnote_citation_checks", "Citations checked.", ["verdict"], registry=reg
        )
        m.refusals = Counter(
            "footnote_refusals", "Answers that refused (no or weak evidence, refused).",
            ["kind", "status"], registry=reg,
        )  # fmt: skip
        m.fabricated = Counter(
            "footnote_fabricated_ids", "Cited ids that were not in the evidence (caught).",
            registry=reg,
        )  # fmt: skip
        m.errors = Counter("footnote_errors", "Failed runs and error spans.", ["where"],
                           registry=reg)  # fmt: skip
        return m

    def span(self, span: Span) -> None:
        """Count what one recorded span says."""
        data = span.data
        if span.kind == "model":
            role = str(data.get("role", span.name))
            self.model_calls.labels(role, span.name).inc()
            self.tokens.labels(role, "in").inc(int(data.get("tokens_in") or 0))
            self.tokens.labels(role, "out").inc(int(data.get("tokens_out") or 0))
            self.model_seconds.labels(role).observe(span.duration_s)
        elif span.kind == "tool":
            self.tool_calls.labels(span.name).inc()
        elif span.kind == "check":
            if data.get("fabricated"):
                self.fabricated.inc()
            self.checks.labels("fabricated" if data.get("fabricated") else
                               str(data.get("verdict", "unknown"))).inc()  # fmt: skip
        if span.kind == "error" or data.get("error"):
            self.errors.labels(f"{span.kind}:{span.name}").inc()

    def finished(self, kind: str, status: str, seconds: float) -> None:
        """Count a finished run."""
        self.runs.labels(kind, status).inc()
        self.run_seconds.labels(kind).observe(seconds)
        if status in REFUSALS:
            self.refusals.labels(kind, status).inc()
        if status in FAILURES:
            self.errors.labels(f"run:{kind}").inc()


@dataclass
class _Live:
    kind: str
    started_ns: int
    span: Any = None


@dataclass
class Telemetry:
    """The metrics and the OTel tracer of a workspace (either may be off)."""

    metrics: Metrics | None = None
    provider: Any = None
    tracer: Any = None
    export_text: bool = False
    """Whether span text leaves the process (`telemetry.export_text`)."""
    live: dict[str, _Live] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def build(cls, settings: TelemetrySettings, exporter: Any = None) -> Telemetry:
        """Metrics when enabled (and prometheus_client is installed); an OTLP tracer when an
        endpoint is set (or `exporter` is given, e.g. an in-memory one)."""
        metrics = None
        if settings.metrics:
            try:
                metrics = Metrics.create()
            except ImportError:
                metrics = None
        provider = tracer = None
        if settings.otlp_endpoint or exporter is not None:
            from opentelemetry.sdk.resources import Resource
            from opentelemetry.sdk.trace import TracerProvider
            from opentelemetry.sdk.trace.export import BatchSpanProcessor

            if exporter is None:
                from opentelemetry.exporter.otlp.proto.http.trace_exporter import (
                    OTLPSpanExporter,
                )

                exporter = OTLPSpanExporter(endpoint=settings.otlp_endpoint)
            resource = Resource.create({"service.name": settings.service_name})
            provider = TracerProvider(resource=resource)
            provider.add_span_processor(BatchSpanProcessor(exporter))
            tracer = provider.get_tracer("footnote")
        return cls(metrics, provider, tracer, settings.export_text)

    def _parent_context(self, run_id: str) -> Any:
        from opentelemetry import trace

        parent = self.live.get(run_id.rsplit(".", 1)[0]) if "." in run_id else None
        return trace.set_span_in_context(parent.span) if parent and parent.span else None

    def run_started(self, run_id: str, kind: str, started_ns: int, attrs: dict[str, Any]) -> None:
        """Open the run's span."""
        with self.lock:
            live = _Live(kind, started_ns)
            if self.tracer is not None:
                live.span = self.tracer.start_span(
                    f"footnote.{kind}", context=self._parent_context(run_id),
                    start_time=started_ns, attributes=_attributes({"run_id": run_id, **attrs}, text=self.export_text),
                )  # fmt: skip
            self.live[run_id] = live

    def span_added(self, span: Span) -> None:
        """Count a recorded span and write it as a child of its run's span."""
        if self.metrics is not None:
            self.metrics.span(span)
        with self.lock:
            live = self.live.get(span.run_id)
        if self.tracer is None or live is None or live.span is None:
            return
        from opentelemetry import trace

        start = int(span.started_at * _NS)
        otel = self.tracer.start_span(
            f"{span.kind} {span.name}", context=trace.set_span_in_context(live.span),
            start_time=start, attributes=_attributes({"kind": span.kind, **span.data}, text=self.export_text),
        )  # fmt: skip
        if span.data.get("error") or span.kind == "error":
            otel.set_status(trace.Status(trace.StatusCode.ERROR, str(span.data.get("error", ""))))
        otel.end(end_time=start + int(span.duration_s * _NS))

    def run_finished(self, run_id: str, status: str, ended_ns: int) -> None:
        """Close the run's span and count the run."""
        with self.lock:
            live = self.live.pop(run_id, None)
        if live is None:
            return
        if self.metrics is not None:
            self.metrics.finished(live.kind, status, (ended_ns - live.started_ns) / _NS)
        if live.span is not None:
            from opentelemetry import trace

            live.span.set_attribute("footnote.status", status)
            if status in FAILURES:
                live.span.set_status(trace.Status(trace.StatusCode.ERROR, status))
            live.span.end(end_time=ended_ns)

    def flush(self) -> None:
        """Export the spans still buffered (at close)."""
        if self.provider is not None:
            self.provider.force_flush()

    def shutdown(self) -> None:
        """Flush and stop the exporter."""
        if self.provider is not None:
            self.provider.shutdown()


class ObservedRunStore:
    """A RunStore that reports runs and spans to `Telemetry`, then forwards every call."""

    def __init__(self, inner: RunStore, telemetry: Telemetry) -> None:
        self.inner, self.telemetry = inner, telemetry

    def start(
        self,
        run_id: str,
        kind: str,
        input: dict[str, Any],
        *,
        user_id: str = "local",
        session_id: str | None = None,
    ) -> None:
        """Record the run, open its span."""
        import time

        self.inner.start(run_id, kind, input, user_id=user_id, session_id=session_id)
        attrs = {"kind": kind, "user_id": user_id, "session_id": session_id}
        self.telemetry.run_started(run_id, kind, time.time_ns(), attrs)

    def add_span(self, span: Span) -> None:
        """Store the span and observe it."""
        self.inner.add_span(span)
        self.telemetry.span_added(span)

    def finish(self, run_id: str, status: str, output: dict[str, Any] | None) -> None:
        """Record the outcome; the answer's status (answered, no_evidence …) when there is one."""
        import time

        self.inner.finish(run_id, status, output)
        outcome = str(output.get("status", status)) if output and status == "completed" else status
        self.telemetry.run_finished(run_id, outcome, time.time_ns())

    def get_run(self, run_id: str) -> dict[str, Any] | None:
        """Forwarded."""
        return self.inner.get_run(run_id)

    def spans(self, run_id: str) -> list[Span]:
        """Forwarded."""
        return self.inner.spans(run_id)

    def run_owner(self, run_id: str) -> tuple[str, str | None] | None:
        """Forwarded."""
        return self.inner.run_owner(run_id)

    def link_runs(self, parent_id: str, child_id: str) -> None:
        """Forwarded."""
        self.inner.link_runs(parent_id, child_id)

    def run_family(self, run_id: str) -> list[str]:
        """Forwarded."""
        return self.inner.run_family(run_id)

    def session_runs(self, user_id: str, session_id: str) -> list[str]:
        """Forwarded."""
        return self.inner.session_runs(user_id, session_id)

    def fail_orphaned_runs(
        self, kinds: tuple[str, ...], *, alive: Callable[[str], bool] | None = None
    ) -> list[str]:
        """Forwarded."""
        return self.inner.fail_orphaned_runs(kinds, alive=alive)

"""The exporters against the real libraries (docs/observability.md, "Exporters"): a
scripted run scraped from prometheus_client's exposition text, and read back from
OpenTelemetry's in-memory metric reader and span exporter; the hooks' timings; the
idempotency middleware's counts; ``retrycore.alerts``.
"""

from __future__ import annotations

import asyncio
import json
import runpy
from pathlib import Path
from typing import Any, Dict, Iterator, List, Tuple

import httpx
import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

import retrycore
from retrycore import _native
from retrycore.metrics import OpenTelemetryExporter, PrometheusExporter, mark_resend, samples
from retrycore.middleware import IdempotencyMiddleware, IdempotencyWSGI
from test_middleware import AsgiApp, WsgiApp, asgi, wsgi

ROOT = Path(__file__).resolve().parents[2]
Labels = Tuple[Tuple[str, str], ...]


def scrape(registry: CollectorRegistry) -> Dict[Tuple[str, Labels], float]:
    """The exposition text, parsed: (sample name, sorted labels) -> value."""
    out: Dict[Tuple[str, Labels], float] = {}
    for fam in text_string_to_metric_families(generate_latest(registry).decode()):
        for s in fam.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def flaky(failures: int, exc: BaseException = ConnectionRefusedError("refused")) -> Any:
    calls = []

    def fn() -> str:
        calls.append(1)
        if len(calls) <= failures:
            raise exc
        return "ok"

    return fn


def scripted(policy: retrycore.RetryPolicy) -> None:
    """A success after two retries, a first-try success, an exhausted run, a failure nothing retries."""
    assert policy.call(flaky(2)) == "ok"
    assert policy.call(flaky(0)) == "ok"
    with pytest.raises(retrycore.RetryError):
        policy.call(flaky(9))
    with pytest.raises(ValueError):
        policy.call(flaky(9, ValueError("bad input")))


def payments(**kw: Any) -> retrycore.RetryPolicy:
    return retrycore.RetryPolicy(name="payments", max_attempts=3, **kw).testing(3)


def test_prometheus_default_names_after_a_scripted_run() -> None:
    reg = CollectorRegistry()
    policy = payments().with_metrics(PrometheusExporter(reg))
    scripted(policy)
    got = scrape(reg)
    op = (("operation", "payments"),)

    def attempts(n: int) -> float:
        return got[("retry_attempts_total", (("attempt", str(n)), *op))]

    assert (attempts(1), attempts(2), attempts(3)) == (4.0, 2.0, 2.0)
    assert got[("retry_success_after_retry_total", op)] == 1.0
    assert got[("retry_exhausted_total", (*op, ("reason", "attempts_exhausted")))] == 1.0
    assert got[("retry_exhausted_total", (*op, ("reason", "not_retryable")))] == 1.0
    assert got[("operation_duration_seconds_count", (*op, ("retried", "true")))] == 2.0
    assert got[("operation_duration_seconds_count", (*op, ("retried", "false")))] == 2.0
    assert ("operation_duration_seconds_bucket", (("le", "60.0"), *op, ("retried", "true"))) in got
    # The exporter and the core's counters agree.
    c = policy.counters()
    assert c["retry_attempts_total"] == attempts(1) + attempts(2) + attempts(3) == 8
    assert c["retry_success_after_retry_total"] == 1


def test_attempt_labels_stop_at_max_attempts() -> None:
    # A policy never makes more than max_attempts attempts; an event of another host may
    # report more (a changed policy): they share the max_attempts label.
    reg = CollectorRegistry()
    exporter = PrometheusExporter(reg)
    exporter.record({"event": "retry", "operation": "poll", "attempt": 7, "max_attempts": 2},
                    {"event": "retry", "operation": "poll", "attempt": 2, "max_attempts": 2})
    got = scrape(reg)
    assert got[("retry_attempts_total", (("attempt", "2"), ("operation", "poll")))] == 2.0
    assert [k for k in got if k[0] == "retry_attempts_total"] == [
        ("retry_attempts_total", (("attempt", "2"), ("operation", "poll")))]


def test_breaker_state_transitions_and_budget_refusals() -> None:
    reg = CollectorRegistry()
    breaker = retrycore.CircuitBreaker(name="db", kind="consecutive", failure_threshold=2, wait_duration_in_open_state=60.0)
    budget = retrycore.Budget.token_bucket(name="shared", capacity=1, retry_cost=5)
    seen: List[Any] = []
    policy = payments(breaker=breaker, on_state_change=seen.append).with_metrics(PrometheusExporter(reg))
    got = scrape(reg)
    assert got[("circuit_breaker_state", (("breaker", "db"), ("state", "closed")))] == 1.0
    with pytest.raises(retrycore.RetryError):
        policy.call(flaky(9))  # two failures open the breaker; the third attempt is refused
    got = scrape(reg)
    assert got[("circuit_breaker_state", (("breaker", "db"), ("state", "open")))] == 1.0
    assert got[("circuit_breaker_state", (("breaker", "db"), ("state", "closed")))] == 0.0
    assert got[("circuit_breaker_transitions_total", (("breaker", "db"), ("from", "closed"), ("to", "open")))] == 1.0
    assert got[("retry_exhausted_total", (("operation", "payments"), ("reason", "breaker_open")))] == 1.0
    # Attempts 1 and 2 ran; the refused third is not an attempt.
    assert got[("retry_attempts_total", (("attempt", "2"), ("operation", "payments")))] == 1.0
    assert ("retry_attempts_total", (("attempt", "3"), ("operation", "payments"))) not in got
    assert [t.to_state for t in seen] == ["open"]  # the user's hook still runs

    reg2 = CollectorRegistry()
    spent = payments(budget=budget, idempotent=True).with_metrics(PrometheusExporter(reg2))
    with pytest.raises(retrycore.BudgetExhaustedError):
        spent.call(flaky(9, ConnectionResetError("reset")))  # a retry that costs: refused
    assert scrape(reg2)[("retry_budget_refusals_total", (("budget", "shared"), ("reason", "budget_exhausted")))] == 1.0


def test_a_refused_first_attempt_is_counted() -> None:
    reg, reg2 = CollectorRegistry(), CollectorRegistry()
    breaker = retrycore.CircuitBreaker(name="db", kind="consecutive", failure_threshold=2, wait_duration_in_open_state=60.0)
    policy = payments(breaker=breaker).with_metrics(PrometheusExporter(reg), PrometheusExporter(reg2, names="resilience4j"))
    with pytest.raises(retrycore.RetryError):
        policy.call(flaky(9))  # opens the breaker
    calls: List[int] = []
    with pytest.raises(retrycore.CircuitOpenError):
        policy.call(lambda: calls.append(1))  # refused before anything ran
    with pytest.raises(retrycore.CircuitOpenError):
        asyncio.run(retrycore.retry(policy)(asyncio.sleep)(0))
    assert calls == []
    got = scrape(reg)
    assert got[("retry_rejected_total", (("operation", "payments"), ("reason", "breaker_open")))] == 2.0
    assert got[("retry_exhausted_total", (("operation", "payments"), ("reason", "breaker_open")))] == 1.0
    assert got[("retry_attempts_total", (("attempt", "1"), ("operation", "payments")))] == 1.0
    assert got[("operation_duration_seconds_count", (("operation", "payments"), ("retried", "false")))] == 2.0
    got = scrape(reg2)
    assert got[("resilience4j_retry_calls", (("kind", "failed_without_retry"), ("name", "payments")))] == 2.0
    assert got[("resilience4j_circuitbreaker_not_permitted_calls_total", (("kind", "not_permitted"), ("name", "db")))] == 3.0


def test_resilience4j_names() -> None:
    reg = CollectorRegistry()
    breaker = retrycore.CircuitBreaker(name="db", kind="consecutive", failure_threshold=50)
    scripted(payments(breaker=breaker).with_metrics(PrometheusExporter(reg, names="resilience4j")))
    got = scrape(reg)
    kinds = {k: got[("resilience4j_retry_calls", (("kind", k), ("name", "payments")))]
             for k in ("successful_without_retry", "successful_with_retry", "failed_with_retry", "failed_without_retry")}
    assert kinds == {"successful_without_retry": 1.0, "successful_with_retry": 1.0, "failed_with_retry": 1.0,
                     "failed_without_retry": 1.0}
    assert got[("resilience4j_circuitbreaker_state", (("name", "db"), ("state", "closed")))] == 1.0
    assert got[("resilience4j_circuitbreaker_failure_rate", (("name", "db"),))] == -1.0
    # 8 attempts went through the breaker: 2 succeeded, 6 failed.
    assert got[("resilience4j_circuitbreaker_calls_seconds_count", (("kind", "successful"), ("name", "db")))] == 2.0
    assert got[("resilience4j_circuitbreaker_calls_seconds_count", (("kind", "failed"), ("name", "db")))] == 6.0
    assert not any(k[0].startswith("retry_attempts") for k in got)


def test_two_exporters_share_one_registry() -> None:
    reg = CollectorRegistry()
    a, b = PrometheusExporter(reg), PrometheusExporter(reg, names="polly")
    policy = payments().with_metrics(a).with_metrics(b)
    policy.call(flaky(1))
    got = scrape(reg)
    assert got[("retry_attempts_total", (("attempt", "2"), ("operation", "payments")))] == 1.0
    on_retry = (("event_name", "OnRetry"), ("event_severity", "Warning"), ("pipeline_name", "payments"),
                ("strategy_name", "Retry"))
    assert got[("resilience_polly_strategy_events_total", on_retry)] == 1.0


def otel_points(reader: InMemoryMetricReader) -> Dict[str, List[Any]]:
    out: Dict[str, List[Any]] = {}
    data = reader.get_metrics_data()
    for rm in data.resource_metrics:
        for sm in rm.scope_metrics:
            for m in sm.metrics:
                out.setdefault(m.name, []).extend(m.data.data_points)
    return out


def test_opentelemetry_polly_names_in_an_in_memory_reader() -> None:
    reader = InMemoryMetricReader()
    provider = MeterProvider(metric_readers=[reader])
    policy = payments().with_metrics(OpenTelemetryExporter(meter_provider=provider, names="polly"))
    scripted(policy)
    points = otel_points(reader)
    attempts = points["resilience.polly.strategy.attempt.duration"]
    by = {(p.attributes["attempt.number"], p.attributes["attempt.handled"]): p.count for p in attempts}
    # Attempts counted from 0: 0 ran four times (handled: 3 failures, not: 1 success and 1 not retryable).
    assert by == {("0", "true"): 2, ("0", "false"): 2, ("1", "true"): 2, ("2", "false"): 1, ("2", "true"): 1}
    assert all(p.sum >= 0 and list(p.explicit_bounds)[:2] == [5.0, 10.0] for p in attempts)
    retries = [p for p in points["resilience.polly.strategy.events"] if p.attributes["event.name"] == "OnRetry"]
    assert sum(p.value for p in retries) == 4
    assert sum(p.count for p in points["resilience.polly.pipeline.duration"]) == 4


def test_opentelemetry_default_names_and_gauges() -> None:
    reader = InMemoryMetricReader()
    provider = MeterProvider(metric_readers=[reader])
    breaker = retrycore.CircuitBreaker(name="db", kind="consecutive", failure_threshold=50)
    policy = payments(breaker=breaker).with_metrics(OpenTelemetryExporter(meter_provider=provider))
    scripted(policy)
    points = otel_points(reader)
    attempts = {p.attributes["attempt"]: p.value for p in points["retry_attempts_total"]}
    assert attempts == {"1": 4, "2": 2, "3": 2}
    states = {p.attributes["state"]: p.value for p in points["circuit_breaker_state"]}
    assert states["closed"] == 1 and states["open"] == 0
    durations = {p.attributes["retried"]: p.count for p in points["operation_duration_seconds"]}
    assert durations == {"true": 2, "false": 2}


@pytest.fixture
def spans() -> Iterator[Tuple[Any, InMemorySpanExporter]]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield provider.get_tracer("test"), exporter


def test_resent_requests_carry_the_resend_count(spans: Tuple[Any, InMemorySpanExporter]) -> None:
    tracer, exporter = spans
    with tracer.start_as_current_span("first") as span:
        assert mark_resend(1) is False
    with tracer.start_as_current_span("third") as span:
        assert mark_resend(3) is True
    assert mark_resend(2) is False  # no recording span
    got = {s.name: dict(s.attributes or {}) for s in exporter.get_finished_spans()}
    assert got == {"first": {}, "third": {"http.request.resend_count": 2}}
    assert mark_resend(2, span) is False  # ended: not recording

    # The httpx integration marks the span current at each resent attempt.
    from retrycore.integrations.httpx import RetryTransport

    statuses = iter([503, 503, 200])
    counts: List[Any] = []

    def handler(request: httpx.Request) -> httpx.Response:
        counts.append(trace_attr(request))
        return httpx.Response(next(statuses))

    from opentelemetry import trace

    def trace_attr(_: httpx.Request) -> Any:
        return dict(trace.get_current_span().attributes or {}).get("http.request.resend_count")

    client = httpx.Client(transport=RetryTransport(payments(), transport=httpx.MockTransport(handler)))
    with tracer.start_as_current_span("GET /price"):
        assert client.get("http://test/price").status_code == 200
    assert counts == [None, 1, 2]


def test_hooks_carry_the_durations_the_core_measured() -> None:
    times = iter([10.0, 10.5, 11.0, 11.25, 12.0, 12.125])  # gate, fail, gate, fail, gate, succeed
    events: List[Tuple[str, Any]] = []
    policy = retrycore.RetryPolicy(max_attempts=3).testing(3)
    runner = _native.Runner(
        policy, clock=lambda: next(times), sleep=lambda d: None,
        on_retry=lambda e: events.append(("retry", e)), on_success=lambda e: events.append(("success", e)),
    )
    assert runner.call(flaky(2), ()) == "ok"
    got = [(k, e.attempt, e.elapsed, e.attempt_duration) for k, e in events]
    assert got == [("retry", 1, 0.5, 0.5), ("retry", 2, 1.25, 0.25), ("success", 3, 2.125, 0.125)]

    # A first-try success with the default clock (no session) fires on_success too.
    ok: List[Any] = []
    assert _native.Runner(policy, on_success=ok.append).call(flaky(0), ()) == "ok"
    assert len(ok) == 1 and ok[0].attempt == 1 and ok[0].elapsed == ok[0].attempt_duration >= 0


def test_async_calls_are_recorded() -> None:
    reg = CollectorRegistry()
    policy = payments().with_metrics(PrometheusExporter(reg))
    n = []

    @retrycore.retry(policy)
    async def fetch() -> str:
        n.append(1)
        if len(n) < 2:
            raise ConnectionRefusedError("refused")
        return "ok"

    assert asyncio.run(fetch()) == "ok"
    got = scrape(reg)
    assert got[("retry_success_after_retry_total", (("operation", "payments"),))] == 1.0


def test_the_idempotency_middleware_counts_each_outcome(tmp_path: Path) -> None:
    reg = CollectorRegistry()
    exporter = PrometheusExporter(reg)
    mw = IdempotencyMiddleware(AsgiApp(), path=str(tmp_path / "a.db"), metrics=exporter, operation="orders")
    assert asyncio.run(asgi(mw))[0] == 201
    assert asyncio.run(asgi(mw))[0] == 201  # replayed
    assert asyncio.run(asgi(mw, body=b'{"amount": 6}'))[0] == 422
    w = IdempotencyWSGI(WsgiApp(), path=str(tmp_path / "w.db"), metrics=[exporter], operation="orders")
    assert wsgi(w)[0] == 201
    got = scrape(reg)
    count = {o: got.get(("idempotency_requests_total", (("operation", "orders"), ("outcome", o))))
             for o in ("executed", "replayed", "mismatch")}
    assert count == {"executed": 2.0, "replayed": 1.0, "mismatch": 1.0}
    with pytest.raises(retrycore.ConfigTypeError) as e:
        IdempotencyMiddleware(AsgiApp(), path=str(tmp_path / "x.db"), metrics="prometheus")
    assert (e.value.code, e.value.field) == ("invalid_type", "metrics")


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(retrycore.ConfigError) as e:
        PrometheusExporter(CollectorRegistry(), names="zipkin")
    assert (e.value.code, e.value.field) == ("invalid_value", "names")
    with pytest.raises(retrycore.ConfigTypeError) as t:
        payments().with_metrics(object())
    assert (t.value.code, t.value.field) == ("invalid_type", "exporters[0]")
    with pytest.raises(retrycore.ConfigError) as e:
        samples({"events": [{"event": "retry", "operation": "p", "attempt": 0, "max_attempts": 3}]})
    assert (e.value.code, e.value.field) == ("out_of_range", "events[0].attempt")


def test_alerts_over_two_snapshots() -> None:
    page = (ROOT / "docs" / "observability.md").read_text(encoding="utf-8")
    doc = json.loads(page.split("### Checking two snapshots")[1].split("```json\n")[1].split("```")[0])
    e = retrycore.alerts(doc["before"], doc["after"], 300.0)
    assert e["alerts"] == 3 and e["interval"] == "5m"
    assert [(c["rule"], c["level"], c["status"]) for c in e["checks"]] == [
        ("breaker_open", "critical", "firing"), ("exhausted_rate", "error", "firing"),
        ("retry_rate", "warn", "firing"), ("duplicate_rate", "warn", "ok")]
    quiet = retrycore.alerts(doc["before"], doc["after"], "5m", thresholds={"retry_rate": {"above": 0.5}})
    assert quiet["alerts"] == 2
    with pytest.raises(retrycore.ConfigError) as err:
        retrycore.alerts({}, {}, 0)
    assert err.value.field == "interval"


@pytest.mark.parametrize("name", ["prometheus.py", "exporters.py"])
def test_the_doc_snippets_run_and_are_the_docs_text(name: str) -> None:
    path = ROOT / "examples" / "metrics" / name
    runpy.run_path(str(path), run_name="__main__")
    text = path.read_text(encoding="utf-8")
    if name == "exporters.py":
        assert f"```python\n{text}```" in (ROOT / "docs" / "observability.md").read_text(encoding="utf-8")
        return
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("Metrics in two lines")[1].split("```python\n")[1].split("```")[0]
    assert len(block.splitlines()) == 2 and block in text

"""Metrics exporters for Prometheus (``prometheus_client``) and OpenTelemetry
(``opentelemetry-api``), thin over the core (docs/observability.md, "Exporters").

    policy = RetryPolicy(name="payments").with_metrics(PrometheusExporter())

A policy with exporters reports what its calls do — each retry, each end (a success or a
give-up, with the attempts made and the durations), each breaker transition — as events;
the core turns every event into the samples of the exporter's name map
(``_native.metric_samples``: the names, labels, bounded attempt labels and units are the
core's, ``host_tables()["metrics"]``), and an exporter only records them with its library.
The idempotency middleware reports each keyed request the same way (``metrics=``).

Neither library is imported until an exporter is made: ``pip install prometheus-client``
or ``opentelemetry-api`` (with an SDK to export anything).
"""

from __future__ import annotations

import threading
import weakref
from typing import Any, Dict, Iterable, List, Mapping, MutableMapping, Optional, Sequence, Tuple

from .. import _native

__all__ = [
    "NAME_MAPS", "RESEND_COUNT", "Exporter", "OpenTelemetryExporter", "PrometheusExporter", "instruments",
    "mark_resend", "samples",
]

_TABLES: Mapping[str, Any] = _native.host_tables()["metrics"]
_MAPS: Mapping[str, List[Dict[str, Any]]] = _TABLES["maps"]

#: The name maps the core has (``default``, ``resilience4j``, ``polly``).
NAME_MAPS: Tuple[str, ...] = tuple(_MAPS)

#: OpenTelemetry's attribute for a resent HTTP request: the number of times it was sent
#: before (HTTP semantic conventions), set on the span of attempts 2 and later.
RESEND_COUNT: str = _TABLES["resend_count"]


def _map(names: Any) -> List[Dict[str, Any]]:
    if not isinstance(names, str):
        raise _native.error("invalid_type", "names", f"must be a name map, got {type(names).__name__}")
    if names not in _MAPS:
        raise _native.error("invalid_value", "names", f"is not one of {', '.join(NAME_MAPS)}: {names!r}")
    return _MAPS[names]


def samples(document: Mapping[str, Any]) -> List[Dict[str, Any]]:
    """The samples of ``{"names": map, "events": [...]}`` (``names`` optional: the default
    map): each event's, in order, as ``{"name", "op", "labels", "value"}`` — ``op`` is
    ``add``, ``set`` or ``observe`` (docs/observability.md, "Exporters")."""
    return list(_native.metric_samples(document))


def instruments(names: str = "default") -> List[Dict[str, Any]]:
    """The instruments an exporter of the name map ``names`` registers, as the core lists
    them: ``name``, ``prometheus`` (the exposition name), ``prometheus_labels``, ``kind``,
    ``labels``, ``unit``, ``help`` and ``buckets``."""
    return [dict(i) for i in _map(names)]


class Exporter:
    """What every exporter shares: its name map, and ``record`` (events in, the core's
    samples out to ``_apply``). Subclass it to send the samples anywhere else."""

    def __init__(self, names: str = "default") -> None:
        self.names = names
        self._instruments = {i["name"]: i for i in _map(names)}

    def record(self, *events: Mapping[str, Any]) -> None:
        """Records events (``{"event": "retry" | "end" | "transition" | "breaker_state" |
        "idempotency", ...}``, docs/observability.md): the core makes their samples."""
        if not events:
            return
        for s in samples({"names": self.names, "events": list(events)}):
            inst = self._instruments[s["name"]]
            self._apply(inst, s["op"], s["labels"], s["value"])

    def _apply(self, instrument: Mapping[str, Any], op: str, labels: Mapping[str, str], value: float) -> None:
        raise NotImplementedError


# One set of prometheus_client metrics per registry: exporters on the same registry share
# them (two maps may both list retry_budget_refusals_total), as registering twice fails.
_PROM: "weakref.WeakKeyDictionary[Any, Dict[str, Any]]" = weakref.WeakKeyDictionary()
_PROM_LOCK = threading.Lock()


class PrometheusExporter(Exporter):
    """Records into ``prometheus_client`` metrics on ``registry`` (default: its global
    ``REGISTRY``), named by the name map ``names``; scrape them as usual
    (``generate_latest()``, ``start_http_server``)."""

    def __init__(self, registry: Any = None, names: str = "default") -> None:
        super().__init__(names)
        import prometheus_client as prom

        self.registry = registry if registry is not None else prom.REGISTRY
        with _PROM_LOCK:
            made = _PROM.setdefault(self.registry, {})
            self._metrics: Dict[str, Any] = {}
            for inst in self._instruments.values():
                key = inst["prometheus"]
                if key not in made:
                    made[key] = _prometheus_metric(prom, inst, self.registry)
                self._metrics[inst["name"]] = made[key]

    def _apply(self, instrument: Mapping[str, Any], op: str, labels: Mapping[str, str], value: float) -> None:
        m = self._metrics[instrument["name"]].labels(*[labels[k] for k in instrument["labels"]])
        if op == "add":
            m.inc(value)
        elif op == "set":
            m.set(value)
        else:
            m.observe(value)


def _prometheus_metric(prom: Any, inst: Mapping[str, Any], registry: Any) -> Any:
    name, doc, labels = inst["prometheus"], inst["help"], inst["prometheus_labels"]
    if inst["kind"] == "counter":
        return prom.Counter(name, doc, labels, registry=registry)
    if inst["kind"] == "gauge":
        return prom.Gauge(name, doc, labels, registry=registry)
    return prom.Histogram(name, doc, labels, registry=registry, buckets=inst["buckets"])


class OpenTelemetryExporter(Exporter):
    """Records into OpenTelemetry instruments of ``meter`` (default: the meter
    ``retrycore`` of ``meter_provider``, else of the global provider), named by the name
    map ``names``: counters, gauges and histograms (with the core's bucket bounds as
    advice), durations in the map's unit (seconds; Polly's milliseconds)."""

    def __init__(self, meter: Any = None, names: str = "default", *, meter_provider: Any = None) -> None:
        super().__init__(names)
        from opentelemetry import metrics as otel

        from .. import __version__

        self.meter = meter if meter is not None else otel.get_meter("retrycore", __version__, meter_provider)
        self._made: Dict[str, Any] = {}
        # A resilience4j-style gauge of a running count: its totals per label set.
        self._totals: Dict[Tuple[str, Tuple[Tuple[str, str], ...]], float] = {}
        self._lock = threading.Lock()

    def _instrument(self, inst: Mapping[str, Any]) -> Any:
        made = self._made.get(inst["name"])
        if made is None:
            name, unit, doc = inst["name"], inst["unit"], inst["help"]
            if inst["kind"] == "counter":
                made = self.meter.create_counter(name, unit=unit, description=doc)
            elif inst["kind"] == "gauge":
                made = self.meter.create_gauge(name, unit=unit, description=doc)
            else:
                made = self.meter.create_histogram(
                    name, unit=unit, description=doc, explicit_bucket_boundaries_advisory=inst["buckets"]
                )
            self._made[inst["name"]] = made
        return made

    def _apply(self, instrument: Mapping[str, Any], op: str, labels: Mapping[str, str], value: float) -> None:
        with self._lock:
            made = self._instrument(instrument)
            attrs = dict(labels)
            if op == "observe":
                made.record(value, attrs)
            elif instrument["kind"] == "counter":
                made.add(value, attrs)
            elif op == "set":
                made.set(value, attrs)
            else:
                key = (instrument["name"], tuple(sorted(attrs.items())))
                total = self._totals[key] = self._totals.get(key, 0.0) + value
                made.set(total, attrs)


class _PolicyHooks:
    """A policy's exporters, as the hooks of its runners (``RetryPolicy.with_metrics``):
    each hook hands the event's facts over; the core decides what they count as."""

    __slots__ = ("exporters", "operation", "breaker")

    def __init__(self, exporters: Sequence[Exporter], operation: str, breaker: Optional[str]) -> None:
        self.exporters = tuple(exporters)
        self.operation = operation
        self.breaker = breaker

    @classmethod
    def attach(cls, policy: Any, exporters: Iterable[Any], operation: Optional[str]) -> "_PolicyHooks":
        given = list(exporters)
        for i, x in enumerate(given):
            if not isinstance(x, Exporter):
                raise _native.error("invalid_type", f"exporters[{i}]", f"must be an Exporter, got {type(x).__name__}")
        if not given:
            raise _native.error("missing_field", "exporters", "give at least one exporter")
        if operation is not None and not isinstance(operation, str):
            raise _native.error("invalid_type", "operation", f"must be a str, got {type(operation).__name__}")
        old = policy._metrics
        op = operation or (old.operation if old is not None else None) or policy.name or "default"
        b = policy.breaker
        name = None if b is None else (b.name or op)
        if b is not None:
            # The breaker's state now, for the new exporters (the gauges start from it).
            state = {"event": "breaker_state", "breaker": name, "state": b.state,
                     "failure_rate": b.state_metrics().get("failure_rate")}
            for x in given:
                x.record(state)
        return cls([*(old.exporters if old is not None else ()), *given], op, name)

    def record(self, event: Dict[str, Any]) -> None:
        for x in self.exporters:
            x.record(event)

    def compose(self, hooks: MutableMapping[str, Any]) -> Dict[str, Any]:
        """The Runner's hooks: each of ``hooks`` after this policy's exporters have seen the event."""
        user_retry, user_give_up, user_state = hooks["on_retry"], hooks["on_give_up"], hooks["on_state_change"]
        op, breaker = self.operation, self.breaker

        def then(user: Any, arg: Any, event: Dict[str, Any]) -> object:
            # The user's hook runs even when an exporter raised (the runner warns of it).
            try:
                self.record(event)
            finally:
                if user is not None:
                    user(arg)
            return None

        def on_retry(ev: Any) -> object:
            return then(user_retry, ev, {
                "event": "retry", "operation": op, "attempt": ev.attempt, "max_attempts": ev.max_attempts,
                "attempt_duration": ev.attempt_duration, "breaker": breaker,
            })

        def on_give_up(ev: Any) -> object:
            # attempt_duration is None when a gate refused the next attempt: the last one
            # already ended in a retry.
            return then(user_give_up, ev, {
                "event": "end", "operation": op, "attempts": ev.attempt, "max_attempts": ev.max_attempts,
                "outcome": ev.reason, "duration": ev.elapsed, "attempt_duration": ev.attempt_duration,
                "refused": ev.attempt_duration is None, "budget": ev.budget, "breaker": breaker,
            })

        def on_success(ev: Any) -> object:
            return then(None, ev, {
                "event": "end", "operation": op, "attempts": ev.attempt, "max_attempts": ev.max_attempts,
                "outcome": "success", "duration": ev.elapsed, "attempt_duration": ev.attempt_duration,
                "breaker": breaker,
            })

        def on_refused(ev: Any) -> object:
            # The first attempt was refused before anything ran (attempts 0).
            return then(None, ev, {
                "event": "end", "operation": op, "attempts": 0, "max_attempts": ev.max_attempts,
                "outcome": ev.reason, "duration": ev.elapsed or 0.0, "budget": ev.budget, "breaker": breaker,
            })

        def on_state_change(t: Any) -> object:
            return then(user_state, t, {"event": "transition", "breaker": breaker, "from": t.from_state, "to": t.to_state})

        return {"on_retry": on_retry, "on_give_up": on_give_up, "on_state_change": on_state_change,
                "on_success": on_success, "on_refused": on_refused}


def _exporters(metrics: Any, field: str = "metrics") -> Tuple[Exporter, ...]:
    """An exporter or a sequence of them (None: none)."""
    if metrics is None:
        return ()
    xs = (metrics,) if isinstance(metrics, Exporter) else tuple(metrics) if isinstance(metrics, (list, tuple)) else None
    if xs is None or not all(isinstance(x, Exporter) for x in xs):
        raise _native.error("invalid_type", field, "must be an Exporter or a list of them")
    return xs


def record_idempotency(exporters: Sequence[Exporter], operation: str, decision: str) -> None:
    """Counts a keyed request answered by ``decision`` (``decide``'s: the core maps it to
    its outcome label)."""
    event = {"event": "idempotency", "operation": operation, "decision": decision}
    for x in exporters:
        x.record(event)


_TRACE: Any = None


def mark_resend(attempt: int, span: Any = None) -> bool:
    """Sets ``http.request.resend_count`` (``attempt - 1``) on ``span`` (default: the
    current OpenTelemetry span) for attempt 2 and later; True when it did. Does nothing
    without ``opentelemetry-api`` or on a span that is not recording."""
    global _TRACE
    if attempt < 2:
        return False
    if span is None:
        if _TRACE is None:
            try:
                from opentelemetry import trace
            except ImportError:
                _TRACE = False
            else:
                _TRACE = trace
        if _TRACE is False:
            return False
        span = _TRACE.get_current_span()
    if not span.is_recording():
        return False
    span.set_attribute(RESEND_COUNT, attempt - 1)
    return True

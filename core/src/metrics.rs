//! The metric model every exporter and every alert rule uses
//! (docs/observability.md, "Metrics").
//!
//! One table: the default names and labels, their kinds and help texts.
//! Exporters (Prometheus, OpenTelemetry) register what this table lists;
//! the alert rules written for Prometheus ([`crate::alerts`]) query the same
//! names, so a renamed metric cannot leave an alert querying nothing.

use crate::breaker::State;
use crate::doc::{join, type_name, Obj};
use crate::error::{Error, ErrorCode, Result};
use crate::json::Value;
use crate::session::{GiveUpReason, RejectReason};

/// What a metric is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MetricKind {
    /// A monotonic count.
    Counter,
    /// A value that goes up and down (a breaker's state).
    Gauge,
    /// A distribution (durations, in seconds).
    Histogram,
}

impl MetricKind {
    /// Returns the stable code (`"counter"`, `"gauge"`, `"histogram"`).
    pub const fn code(self) -> &'static str {
        match self {
            MetricKind::Counter => "counter",
            MetricKind::Gauge => "gauge",
            MetricKind::Histogram => "histogram",
        }
    }
}

/// One metric of the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Metric {
    /// The default name (Prometheus conventions: `_total` on counters, base units).
    pub name: &'static str,
    /// Counter, gauge or histogram.
    pub kind: MetricKind,
    /// The label names, in order.
    pub labels: &'static [&'static str],
    /// One line saying what is counted.
    pub help: &'static str,
}

/// Attempts made, by attempt number (1 is the first try).
pub const ATTEMPTS: Metric = Metric {
    name: "retry_attempts_total",
    kind: MetricKind::Counter,
    labels: &["operation", "attempt"],
    help: "Attempts made, by attempt number (1 is the first try; numbers above max_attempts share its label).",
};

/// Operations that gave up, by reason.
pub const EXHAUSTED: Metric = Metric {
    name: "retry_exhausted_total",
    kind: MetricKind::Counter,
    labels: &["operation", "reason"],
    help: "Operations that ended without a success, by give-up reason.",
};

/// Operations that succeeded after at least one retry.
pub const SUCCESS_AFTER_RETRY: Metric = Metric {
    name: "retry_success_after_retry_total",
    kind: MetricKind::Counter,
    labels: &["operation"],
    help: "Operations that succeeded after at least one retry (near 0 while retries happen: the retries are wasted).",
};

/// How long operations took, retries and waits included.
pub const DURATION: Metric = Metric {
    name: "operation_duration_seconds",
    kind: MetricKind::Histogram,
    labels: &["operation", "retried"],
    help: "How long operations took, retries and waits included, in seconds.",
};

/// A breaker's state: 1 for the state it is in, 0 for the others.
pub const BREAKER_STATE: Metric = Metric {
    name: "circuit_breaker_state",
    kind: MetricKind::Gauge,
    labels: &["breaker", "state"],
    help: "1 for the state the circuit breaker is in, 0 for every other state.",
};

/// A breaker's transitions.
pub const BREAKER_TRANSITIONS: Metric = Metric {
    name: "circuit_breaker_transitions_total",
    kind: MetricKind::Counter,
    labels: &["breaker", "from", "to"],
    help: "Circuit breaker state transitions.",
};

/// Retries a budget refused.
pub const BUDGET_REFUSALS: Metric = Metric {
    name: "retry_budget_refusals_total",
    kind: MetricKind::Counter,
    labels: &["budget", "reason"],
    help: "Retries a retry budget refused, by budget and reason.",
};

/// Operations refused before their first attempt, by reason.
pub const REJECTED: Metric = Metric {
    name: "retry_rejected_total",
    kind: MetricKind::Counter,
    labels: &["operation", "reason"],
    help: "Operations refused before their first attempt (an open breaker, a budget, a limiter), by reason.",
};

/// Keyed requests a server answered, by outcome.
pub const IDEMPOTENCY_REQUESTS: Metric = Metric {
    name: "idempotency_requests_total",
    kind: MetricKind::Counter,
    labels: &["operation", "outcome"],
    help: "Requests with an idempotency key, by outcome (executed, replayed, in_progress, mismatch).",
};

/// Every metric of the model, in the order docs/observability.md lists them.
pub const ALL: [Metric; 9] = [
    ATTEMPTS,
    EXHAUSTED,
    REJECTED,
    SUCCESS_AFTER_RETRY,
    DURATION,
    BREAKER_STATE,
    BREAKER_TRANSITIONS,
    BUDGET_REFUSALS,
    IDEMPOTENCY_REQUESTS,
];

/// The outcomes of a keyed request ([`IDEMPOTENCY_REQUESTS`]'s `outcome` label).
pub const IDEMPOTENCY_OUTCOMES: [&str; 4] = ["executed", "replayed", "in_progress", "mismatch"];

/// The outcome each idempotency decision (`decide`'s `decision`) counts as:
/// an idempotency middleware reports the decision it acted on.
pub const IDEMPOTENCY_DECISIONS: [(&str, &str); 4] =
    [("execute", "executed"), ("replay", "replayed"), ("in_progress", "in_progress"), ("mismatch", "mismatch")];

/// The outcomes that answer a duplicate (the duplicate-rate alert's numerator).
pub const DUPLICATE_OUTCOMES: [&str; 2] = ["replayed", "in_progress"];

// ---------------------------------------------------------------------------
// Name maps and samples: what an exporter records, decided here once.
// ---------------------------------------------------------------------------

/// The metric names an exporter writes: retrycore's own, or those of a
/// library whose dashboards a user already has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NameMap {
    /// [`ALL`]: the field guides' names (`retry_attempts_total`, …).
    Default,
    /// resilience4j-micrometer's meters (`resilience4j.retry.calls{kind}`,
    /// `resilience4j.circuitbreaker.state`, `.calls`, `.not.permitted.calls`,
    /// `.failure.rate`), as `resilience4j-micrometer`'s
    /// `AbstractRetryMetrics.java` and `AbstractCircuitBreakerMetrics.java`
    /// register them (github.com/resilience4j/resilience4j).
    Resilience4j,
    /// Polly v8's telemetry (`resilience.polly.strategy.events`,
    /// `resilience.polly.strategy.attempt.duration` with `attempt.number`
    /// counted from 0, `resilience.polly.pipeline.duration`, in
    /// milliseconds), as Polly's `docs/advanced/telemetry.md` lists them
    /// (github.com/App-vNext/Polly).
    Polly,
}

impl NameMap {
    /// Every map, in the order docs/observability.md lists them.
    pub const ALL: [NameMap; 3] = [NameMap::Default, NameMap::Resilience4j, NameMap::Polly];

    /// Returns the stable code (`"default"`, `"resilience4j"`, `"polly"`).
    pub const fn code(self) -> &'static str {
        match self {
            NameMap::Default => "default",
            NameMap::Resilience4j => "resilience4j",
            NameMap::Polly => "polly",
        }
    }

    /// Returns the map of a code.
    pub fn from_code(code: &str) -> Option<NameMap> {
        NameMap::ALL.into_iter().find(|m| m.code() == code)
    }

    /// Returns the instruments an exporter registers for this map.
    pub fn instruments(self) -> &'static [Instrument] {
        match self {
            NameMap::Default => &DEFAULT_INSTRUMENTS,
            NameMap::Resilience4j => &R4J_INSTRUMENTS,
            NameMap::Polly => &POLLY_INSTRUMENTS,
        }
    }
}

/// Histogram bounds for durations in seconds: Prometheus' client defaults
/// (5 ms to 10 s) with 30 s and 60 s added, since retries and their waits
/// make operations long.
pub const SECONDS_BUCKETS: [f64; 13] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0];

/// [`SECONDS_BUCKETS`] in milliseconds (Polly's unit).
pub const MILLISECONDS_BUCKETS: [f64; 13] =
    [5.0, 10.0, 25.0, 50.0, 100.0, 250.0, 500.0, 1000.0, 2500.0, 5000.0, 10000.0, 30000.0, 60000.0];

/// One instrument of a name map, as exporters register it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Instrument {
    /// The name OpenTelemetry (and the map's own library) gives it.
    pub name: &'static str,
    /// The name in Prometheus' exposition format (what a dashboard queries):
    /// dots become underscores, counters end in `_total`, and a unit suffix
    /// is added as resilience4j's Prometheus registry and OpenTelemetry's
    /// Prometheus exporter add it.
    pub prometheus: &'static str,
    /// Counter, gauge or histogram.
    pub kind: MetricKind,
    /// The label (attribute) names, in order.
    pub labels: &'static [&'static str],
    /// The unit (UCUM: `s`, `ms`; empty for counts).
    pub unit: &'static str,
    /// One line saying what is recorded.
    pub help: &'static str,
    /// A histogram's bucket bounds, in its unit (empty for the others).
    pub buckets: &'static [f64],
}

impl Instrument {
    /// Returns the label names in Prometheus' form (dots become underscores).
    pub fn prometheus_labels(&self) -> Vec<String> {
        self.labels.iter().map(|l| l.replace('.', "_")).collect()
    }

    /// Writes the instrument as JSON (what `host_tables()["metrics"]` lists).
    pub fn to_json_value(&self) -> crate::json::Value {
        json!({
            "name": self.name,
            "prometheus": self.prometheus,
            "prometheus_labels": self.prometheus_labels(),
            "kind": self.kind.code(),
            "labels": self.labels,
            "unit": self.unit,
            "help": self.help,
            "buckets": self.buckets,
        })
    }
}

const fn of_metric(m: Metric, unit: &'static str, buckets: &'static [f64]) -> Instrument {
    Instrument { name: m.name, prometheus: m.name, kind: m.kind, labels: m.labels, unit, help: m.help, buckets }
}

const DEFAULT_INSTRUMENTS: [Instrument; 9] = [
    of_metric(ATTEMPTS, "", &[]),
    of_metric(EXHAUSTED, "", &[]),
    of_metric(REJECTED, "", &[]),
    of_metric(SUCCESS_AFTER_RETRY, "", &[]),
    of_metric(DURATION, "s", &SECONDS_BUCKETS),
    of_metric(BREAKER_STATE, "", &[]),
    of_metric(BREAKER_TRANSITIONS, "", &[]),
    of_metric(BUDGET_REFUSALS, "", &[]),
    of_metric(IDEMPOTENCY_REQUESTS, "", &[]),
];

/// `resilience4j.retry.calls`, a gauge of cumulative calls by `kind`.
const R4J_RETRY_CALLS: Instrument = Instrument {
    name: "resilience4j.retry.calls",
    prometheus: "resilience4j_retry_calls",
    kind: MetricKind::Gauge,
    labels: &["name", "kind"],
    unit: "",
    help: "The number of calls by kind (successful_without_retry, successful_with_retry, failed_without_retry, failed_with_retry).",
    buckets: &[],
};

const R4J_BREAKER_STATE: Instrument = Instrument {
    name: "resilience4j.circuitbreaker.state",
    prometheus: "resilience4j_circuitbreaker_state",
    kind: MetricKind::Gauge,
    labels: &["name", "state"],
    unit: "",
    help: "The states of the circuit breaker (1 for the state it is in, 0 for the others).",
    buckets: &[],
};

const R4J_BREAKER_CALLS: Instrument = Instrument {
    name: "resilience4j.circuitbreaker.calls",
    prometheus: "resilience4j_circuitbreaker_calls_seconds",
    kind: MetricKind::Histogram,
    labels: &["name", "kind"],
    unit: "s",
    help: "Calls through the circuit breaker by kind (successful, failed), with their durations.",
    buckets: &SECONDS_BUCKETS,
};

const R4J_NOT_PERMITTED: Instrument = Instrument {
    name: "resilience4j.circuitbreaker.not.permitted.calls",
    prometheus: "resilience4j_circuitbreaker_not_permitted_calls_total",
    kind: MetricKind::Counter,
    labels: &["name", "kind"],
    unit: "",
    help: "Total number of not permitted calls.",
    buckets: &[],
};

const R4J_FAILURE_RATE: Instrument = Instrument {
    name: "resilience4j.circuitbreaker.failure.rate",
    prometheus: "resilience4j_circuitbreaker_failure_rate",
    kind: MetricKind::Gauge,
    labels: &["name"],
    unit: "",
    help: "The failure rate of the circuit breaker, in percent (-1 until enough calls were recorded).",
    buckets: &[],
};

const R4J_INSTRUMENTS: [Instrument; 7] = [
    R4J_RETRY_CALLS,
    R4J_BREAKER_STATE,
    R4J_BREAKER_CALLS,
    R4J_NOT_PERMITTED,
    R4J_FAILURE_RATE,
    // No resilience4j counterpart: retrycore's own names.
    of_metric(BUDGET_REFUSALS, "", &[]),
    of_metric(IDEMPOTENCY_REQUESTS, "", &[]),
];

const POLLY_EVENTS: Instrument = Instrument {
    name: "resilience.polly.strategy.events",
    prometheus: "resilience_polly_strategy_events_total",
    kind: MetricKind::Counter,
    labels: &["event.name", "event.severity", "pipeline.name", "strategy.name"],
    unit: "",
    help: "Emitted upon the occurrence of a resilience event (OnRetry, OnCircuitOpened, OnCircuitClosed, OnCircuitHalfOpened, OnRateLimiterRejected).",
    buckets: &[],
};

const POLLY_ATTEMPT_DURATION: Instrument = Instrument {
    name: "resilience.polly.strategy.attempt.duration",
    prometheus: "resilience_polly_strategy_attempt_duration_milliseconds",
    kind: MetricKind::Histogram,
    labels: &["event.name", "event.severity", "pipeline.name", "strategy.name", "attempt.number", "attempt.handled"],
    unit: "ms",
    help: "Tracks the duration of execution attempts (attempt.number counts from 0; attempt.handled: the outcome was a failure the retry handled).",
    buckets: &MILLISECONDS_BUCKETS,
};

const POLLY_PIPELINE_DURATION: Instrument = Instrument {
    name: "resilience.polly.pipeline.duration",
    prometheus: "resilience_polly_pipeline_duration_milliseconds",
    kind: MetricKind::Histogram,
    labels: &["pipeline.name"],
    unit: "ms",
    help: "Measures the duration of resilience pipelines (an operation, its retries and waits included).",
    buckets: &MILLISECONDS_BUCKETS,
};

const POLLY_INSTRUMENTS: [Instrument; 5] = [
    POLLY_EVENTS,
    POLLY_ATTEMPT_DURATION,
    POLLY_PIPELINE_DURATION,
    // No Polly counterpart: retrycore's own names.
    of_metric(BUDGET_REFUSALS, "", &[]),
    of_metric(IDEMPOTENCY_REQUESTS, "", &[]),
];

/// Polly's default name of a retry strategy (`RetryStrategyOptions.Name`).
const POLLY_RETRY: &str = "Retry";
/// Polly's default name of a circuit breaker strategy.
const POLLY_BREAKER: &str = "CircuitBreaker";
/// Polly's default name of a rate limiter strategy.
const POLLY_LIMITER: &str = "RateLimiter";

/// How the outcome of an operation ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The operation succeeded.
    Success,
    /// It gave up, with this reason code (a give-up or a reject reason).
    GaveUp(&'static str),
}

/// What happened, as an exporter learns it from the hooks, breakers and
/// the idempotency middleware. Durations are in seconds.
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    /// Attempt `attempt` failed and is retried (`on_retry`).
    Retry {
        /// The policy's name.
        operation: String,
        /// The number of the attempt that failed (1 is the first).
        attempt: u32,
        /// The policy's `max_attempts` (attempt labels above it share its label).
        max_attempts: u32,
        /// How long the attempt took, when the host timed it.
        attempt_duration: Option<f64>,
        /// The breaker the attempt went through, if any.
        breaker: Option<String>,
    },
    /// The operation ended (`on_success`, `on_give_up`).
    End {
        /// The policy's name.
        operation: String,
        /// The attempts made: 0 when the first attempt was refused before
        /// anything ran (the outcome is then a reject reason).
        attempts: u32,
        /// The policy's `max_attempts`.
        max_attempts: u32,
        /// Success, or the give-up reason.
        outcome: Outcome,
        /// How long the operation took, retries and waits included.
        duration: f64,
        /// How long the last attempt took, when the host timed it.
        attempt_duration: Option<f64>,
        /// The end came at a gate that refused attempt `attempts + 1`: the
        /// last attempt already ended in a retry.
        refused: bool,
        /// The budget that refused, if one did.
        budget: Option<String>,
        /// The breaker the attempts went through, if any.
        breaker: Option<String>,
    },
    /// A breaker changed state.
    Transition {
        /// The breaker's name.
        breaker: String,
        /// The state before.
        from: State,
        /// The state after.
        to: State,
    },
    /// A breaker's state and failure rate as read now (when an exporter
    /// attaches it, or at a scrape).
    BreakerState {
        /// The breaker's name.
        breaker: String,
        /// Its state.
        state: State,
        /// Its failure rate in percent as the breaker's `state_metrics`
        /// reports it (-1 below its minimum number of calls); `None`: not read.
        failure_rate: Option<f64>,
    },
    /// A keyed request was answered (the idempotency middleware).
    Idempotency {
        /// The endpoint's name.
        operation: String,
        /// One of [`IDEMPOTENCY_OUTCOMES`].
        outcome: &'static str,
    },
}

/// What an exporter does with one sample.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// Add the value (counters, and resilience4j's cumulative gauges).
    Add,
    /// Set the gauge to the value.
    Set,
    /// Record the value in the histogram.
    Observe,
}

impl Op {
    /// Returns the stable code (`"add"`, `"set"`, `"observe"`).
    pub const fn code(self) -> &'static str {
        match self {
            Op::Add => "add",
            Op::Set => "set",
            Op::Observe => "observe",
        }
    }
}

/// One thing for an exporter to record.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    /// The instrument (one of the map's).
    pub instrument: &'static Instrument,
    /// Add, set or observe.
    pub op: Op,
    /// The label values, in the instrument's label order.
    pub labels: Vec<String>,
    /// The value, in the instrument's unit.
    pub value: f64,
}

impl Sample {
    /// Writes the sample as JSON: `{"name", "op", "labels": {name: value}, "value"}`.
    pub fn to_json_value(&self) -> crate::json::Value {
        let labels: crate::json::Map<String, crate::json::Value> =
            self.instrument.labels.iter().zip(&self.labels).map(|(k, v)| ((*k).to_owned(), v.clone().into())).collect();
        json!({"name": self.instrument.name, "op": self.op.code(), "labels": labels, "value": self.value})
    }
}

/// The attempt label: attempt numbers above `max_attempts` share its label.
fn attempt_label(attempt: u32, max_attempts: u32) -> u32 {
    attempt.min(max_attempts.max(1))
}

fn bool_label(b: bool) -> String {
    (if b { "true" } else { "false" }).to_owned()
}

/// Reasons whose failure the retry handled (it would have retried it):
/// Polly's `attempt.handled`.
fn handled(reason: &str) -> bool {
    !matches!(reason, "not_retryable" | "server_declined" | "cancelled")
}

struct Out {
    map: &'static [Instrument],
    samples: Vec<Sample>,
}

impl Out {
    fn push(&mut self, name: &str, op: Op, labels: Vec<String>, value: f64) {
        let Some(instrument) = self.map.iter().find(|i| i.name == name) else {
            unreachable!("{name} is not an instrument of the map")
        };
        debug_assert_eq!(instrument.labels.len(), labels.len(), "{name}");
        self.samples.push(Sample { instrument, op, labels, value });
    }
}

fn state_samples(out: &mut Out, map: NameMap, breaker: &str, state: State) {
    let name = match map {
        NameMap::Default => BREAKER_STATE.name,
        NameMap::Resilience4j => R4J_BREAKER_STATE.name,
        NameMap::Polly => return,
    };
    for s in State::ALL {
        out.push(name, Op::Set, vec![breaker.to_owned(), s.code().to_owned()], if s == state { 1.0 } else { 0.0 });
    }
}

/// Returns the samples `event` makes under `map`.
pub fn samples(map: NameMap, event: &Event) -> Vec<Sample> {
    let mut out = Out { map: map.instruments(), samples: Vec::new() };
    match (map, event) {
        (NameMap::Default, Event::Retry { operation, attempt, max_attempts, .. }) => {
            let a = attempt_label(*attempt, *max_attempts).to_string();
            out.push(ATTEMPTS.name, Op::Add, vec![operation.clone(), a], 1.0);
        }
        (NameMap::Resilience4j, Event::Retry { attempt_duration, breaker, .. }) => {
            if let (Some(b), Some(d)) = (breaker, attempt_duration) {
                out.push(R4J_BREAKER_CALLS.name, Op::Observe, vec![b.clone(), "failed".into()], *d);
            }
        }
        (NameMap::Polly, Event::Retry { operation, attempt, max_attempts, attempt_duration, .. }) => {
            if let Some(d) = attempt_duration {
                let n = (attempt_label(*attempt, *max_attempts) - 1).to_string();
                let labels = vec![
                    "ExecutionAttempt".into(),
                    "Warning".into(),
                    operation.clone(),
                    POLLY_RETRY.into(),
                    n,
                    bool_label(true),
                ];
                out.push(POLLY_ATTEMPT_DURATION.name, Op::Observe, labels, d * 1000.0);
            }
            let labels = vec!["OnRetry".into(), "Warning".into(), operation.clone(), POLLY_RETRY.into()];
            out.push(POLLY_EVENTS.name, Op::Add, labels, 1.0);
        }
        (
            _,
            Event::End {
                operation,
                attempts,
                max_attempts,
                outcome,
                duration,
                attempt_duration,
                refused,
                budget,
                breaker,
            },
        ) => {
            // A refused end follows a retry that was decided (the gate refused the attempt after it).
            let retried = *attempts > 1 || (*refused && *attempts > 0);
            let last = attempt_label(*attempts, *max_attempts);
            // Nothing ran: the first attempt was refused.
            let none = *attempts == 0;
            match map {
                NameMap::Default if none => {
                    if let Outcome::GaveUp(r) = outcome {
                        out.push(REJECTED.name, Op::Add, vec![operation.clone(), (*r).to_owned()], 1.0);
                    }
                    out.push(DURATION.name, Op::Observe, vec![operation.clone(), bool_label(false)], *duration);
                }
                NameMap::Default => {
                    if !refused {
                        out.push(ATTEMPTS.name, Op::Add, vec![operation.clone(), last.to_string()], 1.0);
                    }
                    match outcome {
                        Outcome::Success if retried => {
                            out.push(SUCCESS_AFTER_RETRY.name, Op::Add, vec![operation.clone()], 1.0);
                        }
                        Outcome::Success => {}
                        Outcome::GaveUp(r) => {
                            out.push(EXHAUSTED.name, Op::Add, vec![operation.clone(), (*r).to_owned()], 1.0);
                        }
                    }
                    out.push(DURATION.name, Op::Observe, vec![operation.clone(), bool_label(retried)], *duration);
                }
                NameMap::Resilience4j => {
                    let kind = match (outcome, retried) {
                        (Outcome::Success, false) => "successful_without_retry",
                        (Outcome::Success, true) => "successful_with_retry",
                        (Outcome::GaveUp(_), false) => "failed_without_retry",
                        (Outcome::GaveUp(_), true) => "failed_with_retry",
                    };
                    out.push(R4J_RETRY_CALLS.name, Op::Add, vec![operation.clone(), kind.into()], 1.0);
                    if let Some(b) = breaker {
                        if let (false, false, Some(d)) = (none, refused, attempt_duration) {
                            let kind = if *outcome == Outcome::Success { "successful" } else { "failed" };
                            out.push(R4J_BREAKER_CALLS.name, Op::Observe, vec![b.clone(), kind.into()], *d);
                        }
                        if *outcome == Outcome::GaveUp("breaker_open") {
                            out.push(R4J_NOT_PERMITTED.name, Op::Add, vec![b.clone(), "not_permitted".into()], 1.0);
                        }
                    }
                }
                NameMap::Polly => {
                    if let Outcome::GaveUp("concurrency_limited" | "limiter_rejected") = outcome {
                        let labels = vec![
                            "OnRateLimiterRejected".into(),
                            "Error".into(),
                            operation.clone(),
                            POLLY_LIMITER.into(),
                        ];
                        out.push(POLLY_EVENTS.name, Op::Add, labels, 1.0);
                    }
                    if let (false, false, Some(d)) = (none, refused, attempt_duration) {
                        let h = matches!(outcome, Outcome::GaveUp(r) if handled(r));
                        let labels = vec![
                            "ExecutionAttempt".into(),
                            (if h { "Warning" } else { "Information" }).into(),
                            operation.clone(),
                            POLLY_RETRY.into(),
                            (last - 1).to_string(),
                            bool_label(h),
                        ];
                        out.push(POLLY_ATTEMPT_DURATION.name, Op::Observe, labels, d * 1000.0);
                    }
                    out.push(POLLY_PIPELINE_DURATION.name, Op::Observe, vec![operation.clone()], duration * 1000.0);
                }
            }
            let by_budget =
                matches!(outcome, Outcome::GaveUp("budget_exhausted" | "throttled" | "concurrency_limited"));
            if let (Outcome::GaveUp(r), true, Some(b)) = (outcome, by_budget, budget) {
                out.push(BUDGET_REFUSALS.name, Op::Add, vec![b.clone(), (*r).to_owned()], 1.0);
            }
        }
        (NameMap::Default, Event::Transition { breaker, from, to }) => {
            let labels = vec![breaker.clone(), from.code().to_owned(), to.code().to_owned()];
            out.push(BREAKER_TRANSITIONS.name, Op::Add, labels, 1.0);
            state_samples(&mut out, map, breaker, *to);
        }
        (NameMap::Resilience4j, Event::Transition { breaker, to, .. }) => state_samples(&mut out, map, breaker, *to),
        (NameMap::Polly, Event::Transition { breaker, to, .. }) => {
            let (event, severity) = match to {
                State::Open | State::ForcedOpen => ("OnCircuitOpened", "Error"),
                State::HalfOpen => ("OnCircuitHalfOpened", "Warning"),
                State::Closed => ("OnCircuitClosed", "Information"),
                // Polly has no disabled or metrics-only state, so no event for them.
                State::Disabled | State::MetricsOnly => return out.samples,
            };
            let labels = vec![event.into(), severity.into(), breaker.clone(), POLLY_BREAKER.into()];
            out.push(POLLY_EVENTS.name, Op::Add, labels, 1.0);
        }
        (_, Event::BreakerState { breaker, state, failure_rate }) => {
            state_samples(&mut out, map, breaker, *state);
            if let (NameMap::Resilience4j, Some(rate)) = (map, failure_rate) {
                out.push(R4J_FAILURE_RATE.name, Op::Set, vec![breaker.clone()], *rate);
            }
        }
        (_, Event::Idempotency { operation, outcome }) => {
            out.push(IDEMPOTENCY_REQUESTS.name, Op::Add, vec![operation.clone(), (*outcome).to_owned()], 1.0);
        }
    }
    out.samples
}

/// The outcome codes an `end` event accepts besides `success`: every
/// give-up reason and every reject reason (a refused attempt's).
fn outcome_code(s: &str) -> Option<&'static str> {
    GiveUpReason::ALL.iter().map(|r| r.code()).chain(RejectReason::ALL.iter().map(|r| r.code())).find(|c| *c == s)
}

fn duration_field(o: &mut Obj<'_>, key: &'static str) -> Result<Option<f64>> {
    match o.f64(key, &[])? {
        Some(d) if !(d.is_finite() && d >= 0.0) => {
            Err(Error::new(ErrorCode::OutOfRange, o.field(key), format!("must be a duration in seconds ≥ 0, got {d}")))
        }
        d => Ok(d),
    }
}

fn name_field(o: &mut Obj<'_>, key: &'static str) -> Result<String> {
    match o.str(key, &[])? {
        Some((s, _)) => Ok(s.to_owned()),
        None => Err(Error::new(ErrorCode::MissingField, o.field(key), "is required")),
    }
}

fn state_field(o: &mut Obj<'_>, key: &'static str) -> Result<State> {
    let field = o.field(key);
    let s = name_field(o, key)?;
    State::from_code(&s)
        .ok_or_else(|| Error::new(ErrorCode::InvalidValue, field, format!("is not a breaker state: {s:?}")))
}

impl Event {
    /// Reads an event: `{"event": "retry" | "end" | "transition" |
    /// "breaker_state" | "idempotency", …}` (docs/observability.md,
    /// "Exporters": the fields of each).
    ///
    /// # Errors
    /// `missing_field`, `unknown_key`, `invalid_type`, `invalid_value`,
    /// `out_of_range`, naming the field.
    pub fn read(v: &Value, path: &str) -> Result<Event> {
        let mut o = Obj::new(v, path)?;
        let kind = name_field(&mut o, "event")?;
        let count = |o: &mut Obj<'_>, key: &'static str, min: u64| -> Result<u32> {
            match o.uint(key, &[], min, u64::from(u32::MAX))? {
                Some(n) => Ok(n as u32),
                None => Err(Error::new(ErrorCode::MissingField, o.field(key), "is required")),
            }
        };
        let opt_name = |o: &mut Obj<'_>, key: &'static str| -> Result<Option<String>> {
            Ok(o.str(key, &[])?.map(|(s, _)| s.to_owned()))
        };
        let e = match kind.as_str() {
            "retry" => Event::Retry {
                operation: name_field(&mut o, "operation")?,
                attempt: count(&mut o, "attempt", 1)?,
                max_attempts: count(&mut o, "max_attempts", 0)?,
                attempt_duration: duration_field(&mut o, "attempt_duration")?,
                breaker: opt_name(&mut o, "breaker")?,
            },
            "end" => {
                let operation = name_field(&mut o, "operation")?;
                let attempts_field = o.field("attempts");
                let attempts = count(&mut o, "attempts", 0)?;
                let max_attempts = count(&mut o, "max_attempts", 0)?;
                let field = o.field("outcome");
                let code = name_field(&mut o, "outcome")?;
                let outcome = match code.as_str() {
                    "success" => Outcome::Success,
                    c => Outcome::GaveUp(outcome_code(c).ok_or_else(|| {
                        Error::new(ErrorCode::InvalidValue, field, format!("is not success or a give-up reason: {c:?}"))
                    })?),
                };
                if attempts == 0 && !RejectReason::ALL.iter().any(|r| outcome == Outcome::GaveUp(r.code())) {
                    return Err(Error::new(
                        ErrorCode::OutOfRange,
                        attempts_field,
                        "0 is only for an operation refused before its first attempt (the outcome a reject reason)",
                    ));
                }
                let Some(duration) = duration_field(&mut o, "duration")? else {
                    return Err(Error::new(ErrorCode::MissingField, o.field("duration"), "is required"));
                };
                Event::End {
                    operation,
                    attempts,
                    max_attempts,
                    outcome,
                    duration,
                    attempt_duration: duration_field(&mut o, "attempt_duration")?,
                    refused: o.bool("refused", &[])?.unwrap_or(false),
                    budget: opt_name(&mut o, "budget")?,
                    breaker: opt_name(&mut o, "breaker")?,
                }
            }
            "transition" => Event::Transition {
                breaker: name_field(&mut o, "breaker")?,
                from: state_field(&mut o, "from")?,
                to: state_field(&mut o, "to")?,
            },
            "breaker_state" => {
                let breaker = name_field(&mut o, "breaker")?;
                let state = state_field(&mut o, "state")?;
                let failure_rate = match o.take("failure_rate", &[])? {
                    None | Some((Value::Null, _)) => None,
                    Some((r, field)) => {
                        let r = crate::doc::number(r, &field)?;
                        if !((0.0..=100.0).contains(&r) || r == -1.0) {
                            return Err(Error::new(
                                ErrorCode::OutOfRange,
                                field,
                                format!("must be a percentage in [0, 100], or -1 below the minimum number of calls, got {r}"),
                            ));
                        }
                        Some(r)
                    }
                };
                Event::BreakerState { breaker, state, failure_rate }
            }
            "idempotency" => {
                let operation = name_field(&mut o, "operation")?;
                // The outcome, or the decision a middleware acted on.
                let outcome = match (o.str("outcome", &[])?, o.str("decision", &[])?) {
                    (Some((s, field)), None) => {
                        IDEMPOTENCY_OUTCOMES.iter().copied().find(|x| *x == s).ok_or_else(|| {
                            Error::new(
                                ErrorCode::InvalidValue,
                                field,
                                format!("is not one of {IDEMPOTENCY_OUTCOMES:?}: {s:?}"),
                            )
                        })?
                    }
                    (None, Some((s, field))) => {
                        IDEMPOTENCY_DECISIONS.iter().find(|(d, _)| *d == s).map(|(_, o)| *o).ok_or_else(|| {
                            Error::new(
                                ErrorCode::InvalidValue,
                                field,
                                format!("is not a decision that answers a keyed request: {s:?}"),
                            )
                        })?
                    }
                    (Some(_), Some((_, field))) => {
                        return Err(Error::new(
                            ErrorCode::InvalidCombination,
                            field,
                            "give outcome or decision, not both",
                        ))
                    }
                    (None, None) => return Err(Error::new(ErrorCode::MissingField, o.field("outcome"), "is required")),
                };
                Event::Idempotency { operation, outcome }
            }
            other => {
                return Err(Error::new(
                    ErrorCode::InvalidValue,
                    join(path, "event"),
                    format!("is not retry, end, transition, breaker_state or idempotency: {other:?}"),
                ))
            }
        };
        o.finish()?;
        Ok(e)
    }
}

/// Reads `{"names": "default", "events": [...]}` and returns the samples
/// of every event, in order, as a JSON array of `{"name", "op", "labels",
/// "value"}` (what hosts and the vectors call: docs/observability.md,
/// "Exporters"). `names` may be omitted (the default map).
///
/// # Errors
/// As [`Event::read`], and `invalid_value` for an unknown map.
pub fn samples_value(v: &Value) -> Result<Value> {
    let mut o = Obj::new(v, "")?;
    let map = match o.str("names", &[])? {
        None => NameMap::Default,
        Some((s, field)) => NameMap::from_code(s).ok_or_else(|| {
            Error::new(ErrorCode::InvalidValue, field, format!("is not default, resilience4j or polly: {s:?}"))
        })?,
    };
    let Some((events, field)) = o.take("events", &[])? else {
        return Err(Error::new(ErrorCode::MissingField, "events", "is required"));
    };
    let Value::Array(events) = events else {
        return Err(Error::new(ErrorCode::InvalidType, field, format!("must be an array, got {}", type_name(events))));
    };
    o.finish()?;
    let mut out = Vec::new();
    for (i, e) in events.iter().enumerate() {
        let e = Event::read(e, &format!("events[{i}]"))?;
        out.extend(samples(map, &e).iter().map(Sample::to_json_value));
    }
    Ok(Value::Array(out))
}

/// [`samples_value`] over a document's text.
///
/// # Errors
/// `invalid_json`, and as [`samples_value`].
pub fn samples_document(text: &str) -> Result<Value> {
    samples_value(&crate::parse_document(text)?)
}

/// OpenTelemetry's attribute for a resent HTTP request (HTTP semantic
/// conventions): the times it was sent before, set on the span of attempt 2
/// and later by the hosts' integrations.
pub const RESEND_COUNT: &str = "http.request.resend_count";

/// Every name map's instruments as JSON (`host_tables()["metrics"]`):
/// `{"maps": {"default": [...], …}, "idempotency_outcomes": [...],
/// "idempotency_decisions": {"execute": "executed", …}, "resend_count": "http.request.resend_count"}`.
pub fn tables() -> Value {
    let maps: crate::json::Map<String, Value> = NameMap::ALL
        .iter()
        .map(|m| (m.code().to_owned(), m.instruments().iter().map(Instrument::to_json_value).collect()))
        .collect();
    let decisions: crate::json::Map<String, Value> =
        IDEMPOTENCY_DECISIONS.iter().map(|(d, o)| ((*d).to_owned(), Value::from(*o))).collect();
    json!({"maps": maps, "idempotency_outcomes": IDEMPOTENCY_OUTCOMES, "idempotency_decisions": decisions,
        "resend_count": RESEND_COUNT})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_prometheus_conventions() {
        for m in ALL {
            assert!(m.name.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'), "{}", m.name);
            match m.kind {
                MetricKind::Counter => assert!(m.name.ends_with("_total"), "{}", m.name),
                MetricKind::Histogram => assert!(m.name.ends_with("_seconds"), "{}", m.name),
                MetricKind::Gauge => assert!(!m.name.ends_with("_total"), "{}", m.name),
            }
            assert!(!m.labels.is_empty() && m.help.ends_with('.'));
        }
        let mut names: Vec<_> = ALL.iter().map(|m| m.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), ALL.len());
    }

    fn ev(json: crate::json::Value) -> Event {
        Event::read(&json, "").unwrap()
    }

    fn names(map: NameMap, e: &Event) -> Vec<String> {
        samples(map, e)
            .iter()
            .map(|s| format!("{} {} {:?} {}", s.instrument.name, s.op.code(), s.labels, s.value))
            .collect()
    }

    #[test]
    fn every_map_lists_what_its_samples_use() {
        for map in NameMap::ALL {
            let mut seen = std::collections::BTreeSet::new();
            let events = [
                ev(
                    json!({"event": "retry", "operation": "p", "attempt": 1, "max_attempts": 3, "attempt_duration": 0.1, "breaker": "b"}),
                ),
                ev(
                    json!({"event": "end", "operation": "p", "attempts": 2, "max_attempts": 3, "outcome": "success", "duration": 0.5, "attempt_duration": 0.1, "breaker": "b"}),
                ),
                ev(
                    json!({"event": "end", "operation": "p", "attempts": 3, "max_attempts": 3, "outcome": "budget_exhausted", "duration": 0.5, "budget": "q", "breaker": "b"}),
                ),
                ev(
                    json!({"event": "end", "operation": "p", "attempts": 1, "max_attempts": 3, "outcome": "breaker_open", "duration": 0.5, "refused": true, "breaker": "b"}),
                ),
                ev(
                    json!({"event": "end", "operation": "p", "attempts": 0, "max_attempts": 3, "outcome": "limiter_rejected", "duration": 0.0}),
                ),
                ev(json!({"event": "transition", "breaker": "b", "from": "closed", "to": "open"})),
                ev(json!({"event": "breaker_state", "breaker": "b", "state": "closed", "failure_rate": 25.0})),
                ev(json!({"event": "idempotency", "operation": "orders", "outcome": "replayed"})),
            ];
            for e in &events {
                for s in samples(map, e) {
                    assert_eq!(s.labels.len(), s.instrument.labels.len());
                    seen.insert(s.instrument.name);
                }
            }
            let listed: std::collections::BTreeSet<_> = map.instruments().iter().map(|i| i.name).collect();
            assert_eq!(seen, listed, "{}", map.code());
            for i in map.instruments() {
                assert_eq!(i.kind == MetricKind::Histogram, !i.buckets.is_empty(), "{}", i.name);
                assert!(i.buckets.windows(2).all(|w| w[0] < w[1]));
                match i.kind {
                    MetricKind::Counter => assert!(i.prometheus.ends_with("_total"), "{}", i.prometheus),
                    _ => assert!(!i.prometheus.ends_with("_total"), "{}", i.prometheus),
                }
            }
        }
    }

    #[test]
    fn attempt_labels_are_capped_at_max_attempts() {
        let e = ev(json!({"event": "retry", "operation": "p", "attempt": 40, "max_attempts": 5}));
        assert_eq!(names(NameMap::Default, &e), ["retry_attempts_total add [\"p\", \"5\"] 1"]);
        let e = ev(
            json!({"event": "retry", "operation": "p", "attempt": 40, "max_attempts": 5, "attempt_duration": 0.002}),
        );
        assert!(names(NameMap::Polly, &e)[0].contains("\"4\", \"true\"] 2"), "{:?}", names(NameMap::Polly, &e));
    }

    #[test]
    fn events_are_read_strictly() {
        let bad = [
            (json!({"event": "retry", "operation": "p", "attempt": 0, "max_attempts": 3}), "attempt"),
            (
                json!({"event": "end", "operation": "p", "attempts": 1, "max_attempts": 3, "outcome": "nope", "duration": 1}),
                "outcome",
            ),
            (
                json!({"event": "end", "operation": "p", "attempts": 1, "max_attempts": 3, "outcome": "success"}),
                "duration",
            ),
            (
                json!({"event": "end", "operation": "p", "attempts": 1, "max_attempts": 3, "outcome": "success", "duration": -1}),
                "duration",
            ),
            (
                json!({"event": "end", "operation": "p", "attempts": 0, "max_attempts": 3, "outcome": "attempts_exhausted", "duration": 0}),
                "attempts",
            ),
            (json!({"event": "idempotency", "operation": "o", "outcome": "dup"}), "outcome"),
            (json!({"event": "transition", "breaker": "b", "from": "closed", "to": "ajar"}), "to"),
            (json!({"event": "retry", "operation": "p", "attempt": 1, "max_attempts": 3, "extra": 1}), "extra"),
            (json!({"event": "tick"}), "event"),
        ];
        for (v, field) in bad {
            let e = Event::read(&v, "").unwrap_err();
            assert_eq!(e.field(), field, "{v}");
        }
        let e = samples_document(r#"{"names": "zipkin", "events": []}"#).unwrap_err();
        assert_eq!(e.field(), "names");
    }

    #[test]
    fn duplicate_outcomes_are_outcomes() {
        assert!(DUPLICATE_OUTCOMES.iter().all(|o| IDEMPOTENCY_OUTCOMES.contains(o)));
    }
}

//! The metric model every exporter and every alert rule uses
//! (docs/observability.md, "Metrics").
//!
//! One table: the default names and labels, their kinds and help texts.
//! Exporters (Prometheus, OpenTelemetry) register what this table lists;
//! the alert rules written for Prometheus ([`crate::alerts`]) query the same
//! names, so a renamed metric cannot leave an alert querying nothing.

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

/// Keyed requests a server answered, by outcome.
pub const IDEMPOTENCY_REQUESTS: Metric = Metric {
    name: "idempotency_requests_total",
    kind: MetricKind::Counter,
    labels: &["operation", "outcome"],
    help: "Requests with an idempotency key, by outcome (executed, replayed, in_progress, mismatch).",
};

/// Every metric of the model, in the order docs/observability.md lists them.
pub const ALL: [Metric; 8] = [
    ATTEMPTS,
    EXHAUSTED,
    SUCCESS_AFTER_RETRY,
    DURATION,
    BREAKER_STATE,
    BREAKER_TRANSITIONS,
    BUDGET_REFUSALS,
    IDEMPOTENCY_REQUESTS,
];

/// The outcomes of a keyed request ([`IDEMPOTENCY_REQUESTS`]'s `outcome` label).
pub const IDEMPOTENCY_OUTCOMES: [&str; 4] = ["executed", "replayed", "in_progress", "mismatch"];

/// The outcomes that answer a duplicate (the duplicate-rate alert's numerator).
pub const DUPLICATE_OUTCOMES: [&str; 2] = ["replayed", "in_progress"];

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

    #[test]
    fn duplicate_outcomes_are_outcomes() {
        assert!(DUPLICATE_OUTCOMES.iter().all(|o| IDEMPOTENCY_OUTCOMES.contains(o)));
    }
}

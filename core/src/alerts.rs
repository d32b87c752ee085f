//! Alerts over two counter snapshots (docs/observability.md, "Alerts").
//!
//! Four rules, each with a level:
//!
//! | rule | value | fires above | level |
//! | --- | --- | --- | --- |
//! | `retry_rate` | retries ÷ first attempts | 10 % | warn |
//! | `exhausted_rate` | give-ups of a retry limit ÷ first attempts | 1 % | error |
//! | `breaker_open` | a breaker in state `open` | — | critical |
//! | `duplicate_rate` | (replays + in-progress answers) ÷ keyed requests | 5 % | warn |
//!
//! A ratio is computed over the interval between the two snapshots (the
//! increase of each counter; a counter that went down restarted, so its
//! increase is its new value, as Prometheus' `increase()` counts it) and
//! only over a minimum volume: over fewer than 100 operations one failure
//! moves a ratio by more than the 1 % an alert is about.
//!
//! [`prometheus_rules`] writes the same rules as Prometheus alerting rules
//! over the metric model's names ([`crate::metrics`]), and
//! [`grafana_dashboard`] a dashboard that plots them.

use crate::breaker::State;
use crate::doc::{type_name, uint, Obj};
use crate::duration::format_duration;
use crate::error::{Error, ErrorCode, Result};
use crate::json::{Map, Value};
use crate::metrics;
use crate::session::GiveUpReason;
use std::fmt::Write as _;

/// How urgent an alert is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// Look at it today.
    Warn,
    /// Something is failing for users.
    Error,
    /// Calls are being refused now.
    Critical,
}

impl Level {
    /// Returns the stable code (`"warn"`, `"error"`, `"critical"`).
    pub const fn code(self) -> &'static str {
        match self {
            Level::Warn => "warn",
            Level::Error => "error",
            Level::Critical => "critical",
        }
    }

    /// Returns the `severity` label Prometheus alerting rules conventionally carry.
    pub const fn severity(self) -> &'static str {
        match self {
            Level::Warn => "warning",
            Level::Error => "error",
            Level::Critical => "critical",
        }
    }
}

/// One alert rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Rule {
    /// Retries ÷ first attempts.
    RetryRate,
    /// Give-ups of a retry limit ÷ first attempts.
    ExhaustedRate,
    /// A breaker is open.
    BreakerOpen,
    /// (Replays + in-progress answers) ÷ keyed requests.
    DuplicateRate,
}

impl Rule {
    /// Every rule, in the order docs/observability.md lists them.
    pub const ALL: [Rule; 4] = [Rule::RetryRate, Rule::ExhaustedRate, Rule::BreakerOpen, Rule::DuplicateRate];

    /// Returns the stable code (`"retry_rate"`, …).
    pub const fn code(self) -> &'static str {
        match self {
            Rule::RetryRate => "retry_rate",
            Rule::ExhaustedRate => "exhausted_rate",
            Rule::BreakerOpen => "breaker_open",
            Rule::DuplicateRate => "duplicate_rate",
        }
    }

    /// Returns the rule's level.
    pub const fn level(self) -> Level {
        match self {
            Rule::RetryRate | Rule::DuplicateRate => Level::Warn,
            Rule::ExhaustedRate => Level::Error,
            Rule::BreakerOpen => Level::Critical,
        }
    }

    /// Returns the alert's name in Prometheus rules (`RetryRateHigh`, …).
    pub const fn alert_name(self) -> &'static str {
        match self {
            Rule::RetryRate => "RetryRateHigh",
            Rule::ExhaustedRate => "RetriesExhausted",
            Rule::BreakerOpen => "CircuitBreakerOpen",
            Rule::DuplicateRate => "DuplicateRequestsHigh",
        }
    }

    /// Returns what the rule's value counts, for messages.
    const fn what(self) -> &'static str {
        match self {
            Rule::RetryRate => "retry rate (retries ÷ first attempts)",
            Rule::ExhaustedRate => "exhausted rate (give-ups ÷ first attempts)",
            Rule::BreakerOpen => "circuit breaker",
            Rule::DuplicateRate => "duplicate rate (replays and in-progress answers ÷ keyed requests)",
        }
    }
}

/// The give-up reasons the exhausted rate counts: a retry limit ran out
/// (attempts, budget, deadline, the server's wait, the adaptive throttle).
/// Not counted: cancellations, failures nothing would retry, a server's
/// "do not retry", and an open breaker (its own, critical rule).
pub const EXHAUSTION_REASONS: [GiveUpReason; 5] = [
    GiveUpReason::AttemptsExhausted,
    GiveUpReason::BudgetExhausted,
    GiveUpReason::DeadlineExceeded,
    GiveUpReason::RetryAfterTooLong,
    GiveUpReason::Throttled,
];

/// The threshold and minimum volume of a ratio rule.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Threshold {
    /// The rule fires when its ratio is strictly above this (in [0, 1]).
    pub above: f64,
    /// The rule is not evaluated over fewer events than this in the interval.
    pub min_volume: u64,
}

/// The thresholds of the three ratio rules.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AlertConfig {
    /// `retry_rate`: 10 % over at least 100 first attempts.
    pub retry_rate: Threshold,
    /// `exhausted_rate`: 1 % over at least 100 first attempts.
    pub exhausted_rate: Threshold,
    /// `duplicate_rate`: 5 % over at least 100 keyed requests.
    pub duplicate_rate: Threshold,
}

impl Default for AlertConfig {
    fn default() -> Self {
        AlertConfig {
            retry_rate: Threshold { above: 0.10, min_volume: 100 },
            exhausted_rate: Threshold { above: 0.01, min_volume: 100 },
            duplicate_rate: Threshold { above: 0.05, min_volume: 100 },
        }
    }
}

impl AlertConfig {
    /// Returns the threshold of a ratio rule (`None` for `breaker_open`).
    pub fn threshold(&self, rule: Rule) -> Option<Threshold> {
        match rule {
            Rule::RetryRate => Some(self.retry_rate),
            Rule::ExhaustedRate => Some(self.exhausted_rate),
            Rule::DuplicateRate => Some(self.duplicate_rate),
            Rule::BreakerOpen => None,
        }
    }

    /// Reads `{"retry_rate": {"above": 0.2, "min_volume": 50}, …}` over the defaults.
    ///
    /// # Errors
    /// `unknown_key`, `invalid_type`, `out_of_range` (a ratio outside [0, 1]), naming the field.
    pub fn read(v: &Value, path: &str) -> Result<AlertConfig> {
        let mut cfg = AlertConfig::default();
        let mut o = Obj::new(v, path)?;
        for rule in [Rule::RetryRate, Rule::ExhaustedRate, Rule::DuplicateRate] {
            let Some((t, field)) = o.take(rule.code(), &[])? else { continue };
            let slot = match rule {
                Rule::RetryRate => &mut cfg.retry_rate,
                Rule::ExhaustedRate => &mut cfg.exhausted_rate,
                _ => &mut cfg.duplicate_rate,
            };
            let mut r = Obj::new(t, &field)?;
            if let Some(above) = r.f64("above", &[])? {
                if !(0.0..=1.0).contains(&above) {
                    return Err(Error::new(
                        ErrorCode::OutOfRange,
                        r.field("above"),
                        format!("must be a ratio in [0, 1], got {above}"),
                    ));
                }
                slot.above = above;
            }
            if let Some(n) = r.uint("min_volume", &[], 0, u64::MAX)? {
                slot.min_volume = n;
            }
            r.finish()?;
        }
        o.finish()?;
        Ok(cfg)
    }
}

/// What one policy counted (the fields of its counters the rules read).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PolicyCounts {
    /// `retry_attempts_total`.
    pub attempts: u64,
    /// The sum of `retries_by_number`.
    pub retries: u64,
    /// `retry_exhausted_total` over [`EXHAUSTION_REASONS`].
    pub exhausted: u64,
}

/// What one idempotent endpoint answered, by outcome
/// ([`metrics::IDEMPOTENCY_OUTCOMES`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IdempotencyCounts {
    /// Requests whose handler ran.
    pub executed: u64,
    /// Requests answered with a stored response.
    pub replayed: u64,
    /// Requests answered "in progress" (409).
    pub in_progress: u64,
    /// Requests whose key came with another payload (422).
    pub mismatch: u64,
}

impl IdempotencyCounts {
    fn keyed(&self) -> u64 {
        self.executed.saturating_add(self.replayed).saturating_add(self.in_progress).saturating_add(self.mismatch)
    }
}

/// The counters of a service at one moment.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Snapshot {
    /// Counters per policy name.
    pub policies: Map<String, PolicyCounts>,
    /// State per breaker name.
    pub breakers: Map<String, State>,
    /// Answers per idempotent endpoint.
    pub idempotency: Map<String, IdempotencyCounts>,
}

/// What a check found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// The rule fires.
    Firing,
    /// Below the threshold.
    Ok,
    /// Fewer events than the rule's minimum volume.
    LowVolume,
}

impl Status {
    /// Returns the stable code (`"firing"`, `"ok"`, `"low_volume"`).
    pub const fn code(self) -> &'static str {
        match self {
            Status::Firing => "firing",
            Status::Ok => "ok",
            Status::LowVolume => "low_volume",
        }
    }
}

/// One rule checked for one subject (a policy, a breaker or an endpoint).
#[derive(Clone, Debug, PartialEq)]
pub struct Check {
    /// The rule.
    pub rule: Rule,
    /// The policy, breaker or endpoint name.
    pub subject: String,
    /// Firing, ok or below the minimum volume.
    pub status: Status,
    /// The ratio (1 or 0 for `breaker_open`).
    pub value: f64,
    /// The ratio's numerator over the interval.
    pub count: u64,
    /// The ratio's denominator over the interval (1 for `breaker_open`).
    pub volume: u64,
    /// The threshold (0 for `breaker_open`).
    pub above: f64,
    /// One line for people.
    pub message: String,
}

/// Every check of one evaluation, firing ones first.
#[derive(Clone, Debug, PartialEq)]
pub struct Evaluation {
    /// The interval between the snapshots, in ns.
    pub interval: u64,
    /// Every check: firing ones first (most urgent first), then by rule and subject.
    pub checks: Vec<Check>,
}

impl Evaluation {
    /// Returns the checks that fire.
    pub fn alerts(&self) -> impl Iterator<Item = &Check> {
        self.checks.iter().filter(|c| c.status == Status::Firing)
    }

    /// Writes the evaluation as JSON (`{"interval": "5m", "alerts": n, "checks": […]}`).
    pub fn to_json_value(&self) -> Value {
        let checks: Vec<Value> = self
            .checks
            .iter()
            .map(|c| {
                json!({
                    "rule": c.rule.code(),
                    "level": c.rule.level().code(),
                    "subject": c.subject,
                    "status": c.status.code(),
                    "value": c.value,
                    "count": c.count,
                    "volume": c.volume,
                    "above": c.above,
                    "message": c.message,
                })
            })
            .collect();
        json!({"interval": format_duration(self.interval), "alerts": self.alerts().count(), "checks": checks})
    }
}

/// A counter's increase between two readings (a counter that went down restarted).
fn increase(before: u64, after: u64) -> u64 {
    if after >= before {
        after - before
    } else {
        after
    }
}

fn percent(x: f64) -> String {
    let p = x * 100.0;
    if p == p.trunc() {
        format!("{p:.0}%")
    } else {
        format!("{p:.1}%")
    }
}

fn ratio_check(rule: Rule, subject: &str, count: u64, volume: u64, t: Threshold, interval: u64) -> Check {
    let value = if volume == 0 { 0.0 } else { count as f64 / volume as f64 };
    let status = if volume < t.min_volume.max(1) {
        Status::LowVolume
    } else if value > t.above {
        Status::Firing
    } else {
        Status::Ok
    };
    let over = format_duration(interval);
    let message = match status {
        Status::LowVolume => format!(
            "{subject}: {} not checked: {volume} events in {over}, fewer than the minimum of {}",
            rule.what(),
            t.min_volume.max(1)
        ),
        _ => format!(
            "{subject}: {} {} over {over} ({count} of {volume}) is {} {}",
            rule.what(),
            percent(value),
            if status == Status::Firing { "above" } else { "within" },
            percent(t.above)
        ),
    };
    Check { rule, subject: subject.to_owned(), status, value, count, volume, above: t.above, message }
}

/// Checks every rule over what changed between `before` and `after`,
/// `interval` ns apart.
///
/// A policy or endpoint absent from `before` counts from zero; one absent
/// from `after` is not checked. Breakers are checked in `after`'s state.
pub fn evaluate(before: &Snapshot, after: &Snapshot, interval: u64, cfg: &AlertConfig) -> Evaluation {
    let mut checks = Vec::new();
    for (name, a) in &after.policies {
        let b = before.policies.get(name).copied().unwrap_or_default();
        let retries = increase(b.retries, a.retries);
        let first = increase(b.attempts, a.attempts).saturating_sub(retries);
        let exhausted = increase(b.exhausted, a.exhausted);
        checks.push(ratio_check(Rule::RetryRate, name, retries, first, cfg.retry_rate, interval));
        checks.push(ratio_check(Rule::ExhaustedRate, name, exhausted, first, cfg.exhausted_rate, interval));
    }
    for (name, state) in &after.breakers {
        let open = *state == State::Open;
        checks.push(Check {
            rule: Rule::BreakerOpen,
            subject: name.clone(),
            status: if open { Status::Firing } else { Status::Ok },
            value: if open { 1.0 } else { 0.0 },
            count: u64::from(open),
            volume: 1,
            above: 0.0,
            message: format!("{name}: circuit breaker is {}", state.code()),
        });
    }
    for (name, a) in &after.idempotency {
        let b = before.idempotency.get(name).copied().unwrap_or_default();
        let d = IdempotencyCounts {
            executed: increase(b.executed, a.executed),
            replayed: increase(b.replayed, a.replayed),
            in_progress: increase(b.in_progress, a.in_progress),
            mismatch: increase(b.mismatch, a.mismatch),
        };
        let dup = d.replayed.saturating_add(d.in_progress);
        checks.push(ratio_check(Rule::DuplicateRate, name, dup, d.keyed(), cfg.duplicate_rate, interval));
    }
    checks.sort_by(|x, y| {
        let firing = |c: &Check| c.status == Status::Firing;
        firing(y)
            .cmp(&firing(x))
            .then(y.rule.level().cmp(&x.rule.level()))
            .then(x.rule.cmp(&y.rule))
            .then(x.subject.cmp(&y.subject))
    });
    Evaluation { interval, checks }
}

/// Reads a policy's counters as hosts return them (`policy.counters()`;
/// docs/sessions.md, "Counters and hooks").
fn read_policy(v: &Value, path: &str) -> Result<PolicyCounts> {
    let mut o = Obj::new(v, path)?;
    let mut c = PolicyCounts::default();
    if let Some(n) = o.uint("retry_attempts_total", &[], 0, u64::MAX)? {
        c.attempts = n;
    }
    if let Some((v, f)) = o.take("retries_by_number", &[])? {
        let Value::Array(items) = v else {
            return Err(Error::new(
                ErrorCode::InvalidType,
                f,
                format!("must be an array of counts, got {}", type_name(v)),
            ));
        };
        for (i, x) in items.iter().enumerate() {
            c.retries = c.retries.saturating_add(uint(x, &format!("{f}[{i}]"), 0, u64::MAX)?);
        }
    }
    if let Some((v, f)) = o.take("retry_exhausted_total", &[])? {
        let mut r = Obj::new(v, &f)?;
        for reason in GiveUpReason::ALL {
            if let Some(n) = r.uint(reason.code(), &[], 0, u64::MAX)? {
                if EXHAUSTION_REASONS.contains(&reason) {
                    c.exhausted = c.exhausted.saturating_add(n);
                }
            }
        }
        r.finish()?;
    }
    // The other counters are the ones hosts return too; the rules do not read them.
    for key in [
        "operations_total",
        "success_first_try_total",
        "retry_success_after_retry_total",
        "rejected_total",
        "budget_refusals_total",
        "operation_duration_seconds",
    ] {
        o.take(key, &[])?;
    }
    o.finish()?;
    Ok(c)
}

fn read_idempotency(v: &Value, path: &str) -> Result<IdempotencyCounts> {
    let mut o = Obj::new(v, path)?;
    let mut c = IdempotencyCounts::default();
    for (key, slot) in metrics::IDEMPOTENCY_OUTCOMES.into_iter().zip([
        &mut c.executed,
        &mut c.replayed,
        &mut c.in_progress,
        &mut c.mismatch,
    ]) {
        if let Some(n) = o.uint(key, &[], 0, u64::MAX)? {
            *slot = n;
        }
    }
    o.finish()?;
    Ok(c)
}

fn read_map<T>(o: &mut Obj<'_>, key: &'static str, read: impl Fn(&Value, &str) -> Result<T>) -> Result<Map<String, T>> {
    let mut out = Map::new();
    if let Some((v, f)) = o.take(key, &[])? {
        let Value::Object(map) = v else {
            return Err(Error::new(
                ErrorCode::InvalidType,
                f,
                format!("must be an object of names, got {}", type_name(v)),
            ));
        };
        for (name, x) in map {
            out.insert(name.clone(), read(x, &crate::doc::join(&f, name))?);
        }
    }
    Ok(out)
}

/// Reads a snapshot: `{"policies": {name: counters}, "breakers": {name:
/// state}, "idempotency": {name: {"executed": n, "replayed": n,
/// "in_progress": n, "mismatch": n}}}`, every part optional.
///
/// # Errors
/// `invalid_type`, `unknown_key`, `out_of_range`, `invalid_value` (an
/// unknown breaker state), naming the field.
pub fn read_snapshot(v: &Value, path: &str) -> Result<Snapshot> {
    let mut o = Obj::new(v, path)?;
    let policies = read_map(&mut o, "policies", read_policy)?;
    let breakers = read_map(&mut o, "breakers", |v, f| {
        let Value::String(s) = v else {
            return Err(Error::new(
                ErrorCode::InvalidType,
                f.to_owned(),
                format!("must be a state string, got {}", type_name(v)),
            ));
        };
        State::from_code(s).ok_or_else(|| {
            let known: Vec<_> = State::ALL.iter().map(|s| s.code()).collect();
            Error::new(
                ErrorCode::InvalidValue,
                f.to_owned(),
                format!("unknown breaker state {s:?}; one of {}", known.join(", ")),
            )
        })
    })?;
    let idempotency = read_map(&mut o, "idempotency", read_idempotency)?;
    o.finish()?;
    Ok(Snapshot { policies, breakers, idempotency })
}

/// Reads an alerts document and evaluates it: `{"interval": "5m",
/// "before": snapshot, "after": snapshot, "thresholds": {…}}`
/// (docs/observability.md, "Alerts"). Thresholds given apart (`given`: a
/// command-line file) replace the defaults; the document and `given` may
/// not both carry them.
///
/// # Errors
/// `invalid_json`, `missing_field`, `invalid_duration` (also a zero
/// interval), `invalid_combination` (thresholds in both places), and every
/// error of [`read_snapshot`] and [`AlertConfig::read`].
pub fn evaluate_document(text: &str, given: Option<&AlertConfig>) -> Result<Evaluation> {
    evaluate_value(&crate::doc::parse_json(text)?, given)
}

/// [`evaluate_document`] over a document already parsed (hosts hand theirs over as a value).
///
/// # Errors
/// As [`evaluate_document`], but `invalid_json`.
pub fn evaluate_value(v: &Value, given: Option<&AlertConfig>) -> Result<Evaluation> {
    let mut o = Obj::new(v, "")?;
    let missing = |o: &Obj<'_>, key: &str| Error::new(ErrorCode::MissingField, o.field(key), "is required");
    let interval = o.duration("interval", &[])?.ok_or_else(|| missing(&o, "interval"))?;
    if interval == 0 {
        return Err(Error::new(ErrorCode::InvalidDuration, o.field("interval"), "must be longer than 0s"));
    }
    let (b, bf) = o.take("before", &[])?.ok_or_else(|| missing(&o, "before"))?;
    let before = read_snapshot(b, &bf)?;
    let (a, af) = o.take("after", &[])?.ok_or_else(|| missing(&o, "after"))?;
    let after = read_snapshot(a, &af)?;
    let cfg = match (o.take("thresholds", &[])?, given) {
        (Some((_, f)), Some(_)) => {
            return Err(Error::new(
                ErrorCode::InvalidCombination,
                f,
                "thresholds are given apart as well; give them in one place",
            ))
        }
        (Some((t, f)), None) => AlertConfig::read(t, &f)?,
        (None, given) => given.copied().unwrap_or_default(),
    };
    o.finish()?;
    Ok(evaluate(&before, &after, interval, &cfg))
}

/// A range for PromQL (`5m`, `90s`, `1500ms`): whole milliseconds.
///
/// # Errors
/// `invalid_duration` for zero or a fraction of a millisecond.
pub fn prometheus_range(interval: u64, field: &str) -> Result<String> {
    if interval == 0 || interval % 1_000_000 != 0 {
        return Err(Error::new(
            ErrorCode::InvalidDuration,
            field.to_owned(),
            format!("a Prometheus range is whole milliseconds above 0, got {}", format_duration(interval)),
        ));
    }
    Ok(if interval % 1_000_000_000 == 0 { format_duration(interval) } else { format!("{}ms", interval / 1_000_000) })
}

/// The PromQL of a rule's value (before its threshold), grouped by its subject label.
pub fn promql(rule: Rule, range: &str) -> String {
    let inc = |metric: &str, sel: &str, by: &str| format!("sum by ({by}) (increase({metric}{sel}[{range}]))");
    let first = inc(metrics::ATTEMPTS.name, "{attempt=\"1\"}", "operation");
    match rule {
        Rule::RetryRate => format!("{} / {first}", inc(metrics::ATTEMPTS.name, "{attempt!=\"1\"}", "operation")),
        Rule::ExhaustedRate => {
            let reasons: Vec<_> = EXHAUSTION_REASONS.iter().map(|r| r.code()).collect();
            let sel = format!("{{reason=~\"{}\"}}", reasons.join("|"));
            format!("{} / {first}", inc(metrics::EXHAUSTED.name, &sel, "operation"))
        }
        Rule::BreakerOpen => format!("max by (breaker) ({}{{state=\"open\"}})", metrics::BREAKER_STATE.name),
        Rule::DuplicateRate => {
            let sel = format!("{{outcome=~\"{}\"}}", metrics::DUPLICATE_OUTCOMES.join("|"));
            format!(
                "{} / {}",
                inc(metrics::IDEMPOTENCY_REQUESTS.name, &sel, "operation"),
                inc(metrics::IDEMPOTENCY_REQUESTS.name, "", "operation")
            )
        }
    }
}

/// The PromQL of a rule's volume (its ratio's denominator).
fn volume_promql(rule: Rule, range: &str) -> Option<String> {
    match rule {
        Rule::RetryRate | Rule::ExhaustedRate => {
            Some(format!("sum by (operation) (increase({}{{attempt=\"1\"}}[{range}]))", metrics::ATTEMPTS.name))
        }
        Rule::DuplicateRate => {
            Some(format!("sum by (operation) (increase({}[{range}]))", metrics::IDEMPOTENCY_REQUESTS.name))
        }
        Rule::BreakerOpen => None,
    }
}

/// Writes the four rules as a Prometheus alerting-rules file (YAML) over
/// the default metric names, each ratio over `interval`.
///
/// # Errors
/// `invalid_duration` when `interval` is not whole milliseconds above 0.
pub fn prometheus_rules(interval: u64, cfg: &AlertConfig) -> Result<String> {
    let range = prometheus_range(interval, "interval")?;
    let mut y = String::new();
    y.push_str("# Alerting rules for retrycore's default metric names (docs/observability.md, \"Alerts\").\n");
    y.push_str("groups:\n  - name: retrycore\n    rules:\n");
    for rule in Rule::ALL {
        let value = promql(rule, &range);
        let (expr, summary) = match (cfg.threshold(rule), volume_promql(rule, &range)) {
            (Some(t), Some(volume)) => (
                format!("({value}) > {} and ({volume}) >= {}", t.above, t.min_volume.max(1)),
                format!("{} of {{{{ $labels.operation }}}} above {} over {range}", rule.what(), percent(t.above)),
            ),
            _ => (format!("{value} == 1"), "circuit breaker {{ $labels.breaker }} is open".to_owned()),
        };
        let _ = write!(
            y,
            "      - alert: {}\n        expr: {}\n        labels:\n          severity: {}\n          rule: {}\n        annotations:\n          summary: {}\n",
            rule.alert_name(),
            yaml_string(&expr),
            rule.level().severity(),
            rule.code(),
            yaml_string(&summary),
        );
    }
    Ok(y)
}

/// A YAML double-quoted scalar.
fn yaml_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for ch in s.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Writes a Grafana dashboard (JSON model) plotting each rule's value with
/// its threshold, plus attempts, successes after a retry and durations,
/// over a Prometheus data source chosen on import.
///
/// # Errors
/// `invalid_duration` when `interval` is not whole milliseconds above 0.
pub fn grafana_dashboard(interval: u64, cfg: &AlertConfig) -> Result<Value> {
    let range = prometheus_range(interval, "interval")?;
    let ds = json!({"type": "prometheus", "uid": "${DS_PROMETHEUS}"});
    let mut panels = Vec::new();
    let mut add = |title: String, expr: String, legend: &str, unit: &str, threshold: Option<f64>| {
        let i = panels.len();
        let mut steps = vec![json!({"color": "green", "value": null})];
        if let Some(t) = threshold {
            steps.push(json!({"color": "red", "value": t}));
        }
        panels.push(json!({
            "id": i + 1,
            "type": "timeseries",
            "title": title,
            "datasource": ds,
            "gridPos": {"h": 8, "w": 12, "x": (i % 2) * 12, "y": (i / 2) * 8},
            "fieldConfig": {
                "defaults": {
                    "unit": unit,
                    "thresholds": {"mode": "absolute", "steps": steps},
                    "custom": {"thresholdsStyle": {"mode": if threshold.is_some() { "line" } else { "off" }}},
                },
                "overrides": [],
            },
            "options": {"legend": {"displayMode": "list", "placement": "bottom"}},
            "targets": [{"refId": "A", "datasource": ds, "expr": expr, "legendFormat": legend}],
        }));
    };
    for rule in Rule::ALL {
        let legend = if rule == Rule::BreakerOpen { "{{breaker}}" } else { "{{operation}}" };
        let unit = if rule == Rule::BreakerOpen { "none" } else { "percentunit" };
        let t = cfg.threshold(rule).map(|t| t.above);
        add(format!("{} ({})", rule.what(), rule.level().code()), promql(rule, &range), legend, unit, t);
    }
    add(
        "Attempts per second, by attempt number".to_owned(),
        format!("sum by (operation, attempt) (rate({}[{range}]))", metrics::ATTEMPTS.name),
        "{{operation}} attempt {{attempt}}",
        "reqps",
        None,
    );
    add(
        "Successes after a retry per second (near 0 while retrying: the retries are wasted)".to_owned(),
        format!("sum by (operation) (rate({}[{range}]))", metrics::SUCCESS_AFTER_RETRY.name),
        "{{operation}}",
        "reqps",
        None,
    );
    add(
        "Operation duration, p99".to_owned(),
        format!(
            "histogram_quantile(0.99, sum by (operation, retried, le) (rate({}_bucket[{range}])))",
            metrics::DURATION.name
        ),
        "{{operation}} retried={{retried}}",
        "s",
        None,
    );
    add(
        "Budget refusals per second".to_owned(),
        format!("sum by (budget, reason) (rate({}[{range}]))", metrics::BUDGET_REFUSALS.name),
        "{{budget}} {{reason}}",
        "reqps",
        None,
    );
    let mut inputs = Map::new();
    inputs.insert("name".into(), "DS_PROMETHEUS".into());
    inputs.insert("label".into(), "Prometheus".into());
    inputs.insert("type".into(), "datasource".into());
    inputs.insert("pluginId".into(), "prometheus".into());
    Ok(json!({
        "__inputs": [Value::Object(inputs)],
        "title": "retrycore: retries, breakers and idempotency",
        "uid": "retrycore",
        "tags": ["retrycore"],
        "schemaVersion": 39,
        "version": 1,
        "editable": true,
        "time": {"from": "now-6h", "to": "now"},
        "refresh": "1m",
        "panels": panels,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snap(attempts: u64, retries: u64, exhausted: u64) -> Snapshot {
        let mut s = Snapshot::default();
        s.policies.insert("payments".into(), PolicyCounts { attempts, retries, exhausted });
        s
    }

    const MIN: u64 = 60_000_000_000;

    #[test]
    fn retry_rate_fires_strictly_above_its_threshold() {
        // 1000 first attempts and 100 retries: exactly 10 %, not above.
        let e = evaluate(&snap(0, 0, 0), &snap(1100, 100, 0), 5 * MIN, &AlertConfig::default());
        let c = e.checks.iter().find(|c| c.rule == Rule::RetryRate).unwrap();
        assert_eq!((c.status, c.count, c.volume), (Status::Ok, 100, 1000));
        let e = evaluate(&snap(0, 0, 0), &snap(1101, 101, 0), 5 * MIN, &AlertConfig::default());
        let c = e.alerts().next().unwrap();
        assert_eq!((c.rule, c.status), (Rule::RetryRate, Status::Firing));
        assert_eq!(
            c.message,
            "payments: retry rate (retries ÷ first attempts) 10.1% over 5m (101 of 1000) is above 10%"
        );
    }

    #[test]
    fn below_the_minimum_volume_nothing_fires() {
        let e = evaluate(&snap(0, 0, 0), &snap(99, 50, 40), MIN, &AlertConfig::default());
        assert_eq!(e.alerts().count(), 0);
        assert!(e.checks.iter().all(|c| c.status == Status::LowVolume));
    }

    #[test]
    fn exhausted_rate_is_an_error_and_sorts_first() {
        let e = evaluate(&snap(100, 0, 0), &snap(1400, 300, 20), MIN, &AlertConfig::default());
        let fired: Vec<_> = e.alerts().map(|c| (c.rule, c.count, c.volume)).collect();
        assert_eq!(fired, [(Rule::ExhaustedRate, 20, 1000), (Rule::RetryRate, 300, 1000)]);
    }

    #[test]
    fn a_restarted_counter_counts_from_zero() {
        assert_eq!(increase(500, 20), 20);
        assert_eq!(increase(20, 500), 480);
    }

    #[test]
    fn breakers_fire_only_when_open() {
        let mut after = Snapshot::default();
        for (name, s) in [("a", State::Open), ("b", State::HalfOpen), ("c", State::ForcedOpen), ("d", State::Closed)] {
            after.breakers.insert(name.into(), s);
        }
        let e = evaluate(&Snapshot::default(), &after, MIN, &AlertConfig::default());
        let fired: Vec<_> = e.alerts().map(|c| (c.subject.as_str(), c.rule.level())).collect();
        assert_eq!(fired, [("a", Level::Critical)]);
    }

    #[test]
    fn duplicate_rate_counts_replays_and_in_progress_answers() {
        let mut after = Snapshot::default();
        after
            .idempotency
            .insert("orders".into(), IdempotencyCounts { executed: 90, replayed: 4, in_progress: 2, mismatch: 4 });
        let e = evaluate(&Snapshot::default(), &after, MIN, &AlertConfig::default());
        let c = &e.checks[0];
        assert_eq!((c.rule, c.status, c.count, c.volume), (Rule::DuplicateRate, Status::Firing, 6, 100));
    }

    #[test]
    fn a_document_reads_host_counters_verbatim() {
        let counters = crate::counters::CountersSnapshot {
            attempts: 1300,
            operations: 1000,
            retries: [250, 50, 0, 0, 0, 0, 0, 0, 0, 0],
            ..Default::default()
        };
        let mut exhausted = counters.clone();
        exhausted.exhausted[GiveUpReason::AttemptsExhausted as usize] = 15;
        exhausted.exhausted[GiveUpReason::NotRetryable as usize] = 900;
        let doc = json!({
            "interval": "5m",
            "before": {"policies": {"p": crate::counters::CountersSnapshot::default().to_json_value()}},
            "after": {"policies": {"p": exhausted.to_json_value()}, "breakers": {"p": "closed"}},
            "thresholds": {"retry_rate": {"above": 0.5}},
        });
        let e = evaluate_document(&doc.to_string(), None).unwrap();
        let fired: Vec<_> = e.alerts().map(|c| (c.rule, c.count, c.volume)).collect();
        // Not-retryable give-ups are not exhaustion; 30 % retries are under the raised threshold.
        assert_eq!(fired, [(Rule::ExhaustedRate, 15, 1000)]);
        assert_eq!(e.checks.len(), 3);
        let cfg = AlertConfig::default();
        let e = evaluate_document(&doc.to_string(), Some(&cfg)).unwrap_err();
        assert_eq!((e.code(), e.field()), ("invalid_combination", "thresholds"));
    }

    #[test]
    fn bad_documents_name_the_field() {
        let cases = [
            (r#"{"before": {}, "after": {}}"#, "missing_field", "interval"),
            (r#"{"interval": "0s", "before": {}, "after": {}}"#, "invalid_duration", "interval"),
            (r#"{"interval": "1m", "after": {}}"#, "missing_field", "before"),
            (
                r#"{"interval": "1m", "before": {}, "after": {"breakers": {"x": "ajar"}}}"#,
                "invalid_value",
                "after.breakers.x",
            ),
            (
                r#"{"interval": "1m", "before": {}, "after": {"policies": {"p": {"retries_by_number": [1, -1]}}}}"#,
                "out_of_range",
                "after.policies.p.retries_by_number[1]",
            ),
            (
                r#"{"interval": "1m", "before": {}, "after": {}, "thresholds": {"retry_rate": {"above": 10}}}"#,
                "out_of_range",
                "thresholds.retry_rate.above",
            ),
            (r#"{"interval": "1m", "before": {}, "after": {}, "thresold": {}}"#, "unknown_key", "thresold"),
            (
                r#"{"interval": "1m", "before": {}, "after": {"idempotency": {"o": {"replays": 1}}}}"#,
                "unknown_key",
                "after.idempotency.o.replays",
            ),
        ];
        for (text, code, field) in cases {
            let e = evaluate_document(text, None).unwrap_err();
            assert_eq!((e.code(), e.field()), (code, field), "{text}");
        }
    }

    #[test]
    fn prometheus_rules_query_the_model_names() {
        let y = prometheus_rules(5 * MIN, &AlertConfig::default()).unwrap();
        for rule in Rule::ALL {
            assert!(y.contains(&format!("- alert: {}", rule.alert_name())), "{y}");
        }
        assert!(y.contains(r#"sum by (operation) (increase(retry_attempts_total{attempt!=\"1\"}[5m]))"#), "{y}");
        assert!(y.contains(
            r#"reason=~\"attempts_exhausted|budget_exhausted|deadline_exceeded|retry_after_too_long|throttled\""#
        ));
        assert!(y.contains("severity: critical"));
        assert_eq!(prometheus_range(1_500_000_000, "i").unwrap(), "1500ms");
        assert_eq!(prometheus_range(90_000_000_000, "i").unwrap(), "90s");
        assert_eq!(prometheus_range(1, "i").unwrap_err().code(), "invalid_duration");
    }

    #[test]
    fn the_dashboard_plots_every_rule() {
        let d = grafana_dashboard(5 * MIN, &AlertConfig::default()).unwrap();
        let panels = d["panels"].as_array().unwrap();
        for rule in Rule::ALL {
            let expr = promql(rule, "5m");
            assert!(panels.iter().any(|p| p["targets"][0]["expr"] == expr.as_str()), "{}", rule.code());
        }
        let ids: Vec<_> = panels.iter().map(|p| p["id"].as_u64().unwrap()).collect();
        assert_eq!(ids, (1..=panels.len() as u64).collect::<Vec<_>>());
    }
}

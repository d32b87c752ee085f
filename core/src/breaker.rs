//! Circuit breakers: stop calling a downstream that is failing.
//!
//! resilience4j's model (docs/breakers-and-budgets.md, "Circuit breakers"): states
//! `closed`, `open`, `half_open`, plus `disabled`, `forced_open` and
//! `metrics_only`; a `count_based` window (the last N calls) or a
//! `time_based` one (the last N seconds, in per-second buckets); a failure
//! rate and a slow-call rate that open the breaker when either reaches its
//! threshold; a wait in the open state (optionally growing with each
//! re-open); a few trial calls in half-open that decide closed or open
//! again; and a maximum half-open wait so that trials that never report
//! cannot leave it stuck (resilience4j #903/#935). A `consecutive` breaker
//! opens after N consecutive failures and half-opens with one probe
//! (cockatiel, Polly's classic breaker).
//!
//! Time is an argument (`now`, monotonic nanoseconds); a `now` earlier than
//! one already seen counts as equal to it. Every transition is returned as
//! a [`Transition`] (from, to, reason, now). Work per call is O(1) (a time
//! window's eviction is amortised) and memory is bounded by the window.

use crate::backoff;
use crate::classify::{self, Category, Failure, Matcher, Verdict};
use crate::doc::{self, Obj};
use crate::duration::format_duration;
use crate::json::{ToJson, Value};
use crate::{Error, ErrorCode, Result};
#[cfg(test)]
#[cfg(test)]
use serde::Deserialize;

const NS_PER_S: u64 = 1_000_000_000;

/// The state of a breaker.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(any(test, feature = "serde"), derive(serde::Serialize))]
#[cfg_attr(test, derive(Deserialize))]
#[cfg_attr(any(test, feature = "serde"), serde(rename_all = "snake_case"))]
pub enum State {
    /// Calls flow; outcomes are recorded.
    Closed,
    /// Calls are refused until the wait ends.
    Open,
    /// A few trial calls decide closed or open.
    HalfOpen,
    /// Calls flow; nothing is recorded.
    Disabled,
    /// Calls are refused until a manual transition.
    ForcedOpen,
    /// Calls flow; outcomes are recorded; the breaker never opens.
    MetricsOnly,
}

impl ToJson for State {
    fn to_value(&self) -> Value {
        self.code().to_value()
    }
}

impl State {
    /// Every state, in the order the docs list them.
    pub const ALL: [State; 6] =
        [State::Closed, State::Open, State::HalfOpen, State::Disabled, State::ForcedOpen, State::MetricsOnly];

    /// Returns the stable code (`"half_open"`, …).
    pub const fn code(self) -> &'static str {
        match self {
            State::Closed => "closed",
            State::Open => "open",
            State::HalfOpen => "half_open",
            State::Disabled => "disabled",
            State::ForcedOpen => "forced_open",
            State::MetricsOnly => "metrics_only",
        }
    }

    /// Parses a code.
    pub fn from_code(s: &str) -> Option<State> {
        State::ALL.into_iter().find(|x| x.code() == s)
    }
}

/// Why a transition happened.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum TransitionReason {
    /// The failure rate reached its threshold.
    FailureRate,
    /// The slow-call rate reached its threshold.
    SlowCallRate,
    /// N consecutive failures (consecutive breaker).
    ConsecutiveFailures,
    /// The open wait ended and a trial call arrived.
    WaitElapsed,
    /// The trial calls passed.
    TrialsPassed,
    /// The trial calls failed.
    TrialsFailed,
    /// The half-open evaluation did not finish within its maximum wait.
    HalfOpenTimeout,
    /// A manual transition.
    Manual,
}

impl TransitionReason {
    /// Returns the stable code (`"failure_rate"`, …).
    pub const fn code(self) -> &'static str {
        match self {
            TransitionReason::FailureRate => "failure_rate",
            TransitionReason::SlowCallRate => "slow_call_rate",
            TransitionReason::ConsecutiveFailures => "consecutive_failures",
            TransitionReason::WaitElapsed => "wait_elapsed",
            TransitionReason::TrialsPassed => "trials_passed",
            TransitionReason::TrialsFailed => "trials_failed",
            TransitionReason::HalfOpenTimeout => "half_open_timeout",
            TransitionReason::Manual => "manual",
        }
    }
}

/// A state change: from, to, why and when.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Transition {
    /// The state before.
    pub from: State,
    /// The state after.
    pub to: State,
    /// Why.
    pub reason: TransitionReason,
    /// When (the `now` of the call that caused it), in nanoseconds.
    pub at: u64,
}

/// The window kind of a breaker.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum BreakerKind {
    /// The last `sliding_window_size` calls.
    CountBased,
    /// The last `sliding_window_size` seconds, in one-second buckets.
    TimeBased,
    /// N consecutive failures.
    Consecutive,
    /// Polly v8's advanced breaker: failure ratio over a sampling duration
    /// in 10 rolling windows, judged on failures once the minimum throughput
    /// is reached; one probe in half-open, admitted at (not after) the break's end.
    Sampling,
}

impl BreakerKind {
    /// Returns the document name.
    pub const fn name(self) -> &'static str {
        match self {
            BreakerKind::CountBased => "count_based",
            BreakerKind::TimeBased => "time_based",
            BreakerKind::Consecutive => "consecutive",
            BreakerKind::Sampling => "sampling",
        }
    }
}

/// How a breaker counts an outcome.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Counted {
    /// A success.
    Success,
    /// A failure.
    Failure,
    /// Not recorded at all.
    Ignored,
}

impl Counted {
    /// Returns the stable code.
    pub const fn code(self) -> &'static str {
        match self {
            Counted::Success => "success",
            Counted::Failure => "failure",
            Counted::Ignored => "ignored",
        }
    }
}

/// A user rule deciding how an outcome counts (first match wins).
#[derive(Clone, Debug, PartialEq)]
pub struct CountRule {
    /// What the rule matches.
    pub when: Matcher,
    /// How a matching outcome counts.
    pub count: Counted,
}

/// The settings of a breaker. Durations are nanoseconds; rates are percent.
#[derive(Clone, Debug, PartialEq)]
pub struct BreakerConfig {
    /// A name for metrics and errors.
    pub name: Option<String>,
    /// The window kind.
    pub kind: BreakerKind,
    /// Percent of failures that opens the breaker, in (0, 100]; default 50.
    pub failure_rate_threshold: f64,
    /// Percent of slow calls that opens the breaker, in (0, 100]; default 100.
    pub slow_call_rate_threshold: f64,
    /// A call longer than this is slow; default 60 s.
    pub slow_call_duration_threshold: u64,
    /// Calls needed before rates are judged; default 100.
    pub minimum_number_of_calls: u32,
    /// Calls (count_based) or seconds (time_based) in the window; default 100.
    pub sliding_window_size: u32,
    /// The wait in the open state; default 60 s.
    pub wait_duration_in_open_state: u64,
    /// Growth of the wait with each re-open since the last close (1 = fixed).
    pub wait_multiplier: f64,
    /// Cap of the growing wait; default: the wait itself times 2^10 capped at 1 h, or `wait` when fixed.
    pub max_wait_duration_in_open_state: u64,
    /// Trial calls in half-open; default 10 (1 for consecutive).
    pub permitted_number_of_calls_in_half_open_state: u32,
    /// Longest half-open evaluation before returning to open; default 60 s; 0 = forever.
    pub max_wait_duration_in_half_open_state: u64,
    /// Consecutive failures that open a `consecutive` breaker; default 5.
    pub failure_threshold: u32,
    /// User rules for how outcomes count, before the defaults.
    pub count_rules: Vec<CountRule>,
    /// `sampling` breakers: the failure ratio in (0, 1] that opens (Polly's `FailureRatio`, 0.1).
    pub failure_ratio: f64,
    /// `sampling` breakers: the sampling duration (Polly's `SamplingDuration`, 30 s).
    pub sampling_duration: u64,
    /// The state a new breaker starts in (closed, disabled, forced_open or metrics_only).
    pub initial_state: State,
}

impl Default for BreakerConfig {
    fn default() -> Self {
        BreakerConfig {
            name: None,
            kind: BreakerKind::CountBased,
            failure_rate_threshold: 50.0,
            slow_call_rate_threshold: 100.0,
            slow_call_duration_threshold: 60 * NS_PER_S,
            minimum_number_of_calls: 100,
            sliding_window_size: 100,
            wait_duration_in_open_state: 60 * NS_PER_S,
            wait_multiplier: 1.0,
            max_wait_duration_in_open_state: 60 * NS_PER_S,
            permitted_number_of_calls_in_half_open_state: 10,
            max_wait_duration_in_half_open_state: 60 * NS_PER_S,
            failure_threshold: 5,
            count_rules: Vec::new(),
            failure_ratio: 0.1,
            sampling_duration: 30 * NS_PER_S,
            initial_state: State::Closed,
        }
    }
}

/// Largest count-based window (calls) and time-based window (seconds).
pub const MAX_WINDOW: u32 = 100_000;

impl BreakerConfig {
    /// Checks the settings.
    ///
    /// # Errors
    /// `out_of_range` for thresholds outside (0, 100], a window or minimum of
    /// 0 or past [`MAX_WINDOW`], permitted calls of 0, a wait multiplier
    /// below 1; `invalid_combination` when the growing wait's cap is below
    /// the wait; `invalid_value` for an initial state of open or half_open.
    pub fn validate(&self) -> Result<()> {
        for (field, v) in [
            ("failure_rate_threshold", self.failure_rate_threshold),
            ("slow_call_rate_threshold", self.slow_call_rate_threshold),
        ] {
            if !(v > 0.0 && v <= 100.0) {
                return Err(Error::new(ErrorCode::OutOfRange, field, format!("must be in (0, 100], got {v}")));
            }
        }
        for (field, v) in [
            ("minimum_number_of_calls", self.minimum_number_of_calls),
            ("sliding_window_size", self.sliding_window_size),
        ] {
            if v == 0 || v > MAX_WINDOW {
                return Err(Error::new(ErrorCode::OutOfRange, field, format!("must be in [1, {MAX_WINDOW}], got {v}")));
            }
        }
        if self.permitted_number_of_calls_in_half_open_state == 0 {
            return Err(Error::new(
                ErrorCode::OutOfRange,
                "permitted_number_of_calls_in_half_open_state",
                "must be at least 1",
            ));
        }
        if self.failure_threshold == 0 {
            return Err(Error::new(ErrorCode::OutOfRange, "failure_threshold", "must be at least 1"));
        }
        if self.kind == BreakerKind::Sampling {
            if !(self.failure_ratio > 0.0 && self.failure_ratio <= 1.0) {
                return Err(Error::new(
                    ErrorCode::OutOfRange,
                    "failure_ratio",
                    format!("must be in (0, 1], got {}", self.failure_ratio),
                ));
            }
            if self.minimum_number_of_calls < 2 {
                return Err(Error::new(
                    ErrorCode::OutOfRange,
                    "minimum_throughput",
                    "must be at least 2 (Polly's minimum)",
                ));
            }
            if self.sampling_duration == 0 {
                return Err(Error::new(ErrorCode::OutOfRange, "sampling_duration", "must be positive"));
            }
        }
        if !(self.wait_multiplier.is_finite() && self.wait_multiplier >= 1.0) {
            return Err(Error::new(
                ErrorCode::OutOfRange,
                "wait_multiplier",
                format!("must be a finite number ≥ 1, got {}", self.wait_multiplier),
            ));
        }
        if self.max_wait_duration_in_open_state < self.wait_duration_in_open_state {
            return Err(Error::new(
                ErrorCode::InvalidCombination,
                "max_wait_duration_in_open_state",
                "must not be below wait_duration_in_open_state",
            ));
        }
        if matches!(self.initial_state, State::Open | State::HalfOpen) {
            return Err(Error::new(
                ErrorCode::InvalidValue,
                "initial_state",
                "a breaker starts closed, disabled, forced_open or metrics_only",
            ));
        }
        Ok(())
    }

    /// Returns true when a counting rule matches messages: only then does a
    /// host send an error's message with the outcome it records
    /// (as [`Classifier::needs_message`](crate::classify::Classifier::needs_message) for a policy).
    pub fn needs_message(&self) -> bool {
        self.count_rules.iter().any(|r| !r.when.message.is_empty())
    }

    /// Decides how an outcome counts: user rules first, then the defaults —
    /// everything but a client error (invalid request, auth, not found,
    /// conflict), `cancelled` and an open-breaker rejection is a failure.
    pub fn count(&self, failure: &Failure<'_>, verdict: &Verdict) -> Counted {
        for r in &self.count_rules {
            if r.when.matches(failure, &mut || verdict.category) {
                return r.count;
            }
        }
        Self::default_count(verdict.category)
    }

    /// The default counting of a category.
    pub fn default_count(c: Category) -> Counted {
        match c {
            Category::Cancelled | Category::OpenBreaker => Counted::Ignored,
            c if c.is_client_error() => Counted::Success,
            _ => Counted::Failure,
        }
    }

    /// The wait after the k-th open since the last close (k ≥ 1).
    fn wait_for(&self, k: u32) -> u64 {
        if self.wait_multiplier == 1.0 || k <= 1 {
            return self.wait_duration_in_open_state;
        }
        let b = backoff::BackoffBuilder {
            kind: Some(backoff::BackoffKind::Exponential),
            initial: Some(self.wait_duration_in_open_state),
            max_delay: Some(self.max_wait_duration_in_open_state),
            multiplier: Some(self.wait_multiplier),
            jitter: Some(backoff::Jitter::None),
            ..Default::default()
        };
        match b.build() {
            Ok(b) => b.delay_unchecked(k, 0.0, 0),
            Err(_) => self.wait_duration_in_open_state,
        }
    }

    /// Reads a breaker object of a policy document.
    ///
    /// Keys: `kind` (`count_based` | `time_based` | `consecutive`), the
    /// resilience4j names (`failure_rate_threshold`, …, with common
    /// aliases such as `permitted_calls_in_half_open`), `wait_multiplier`,
    /// `max_wait_duration_in_open_state`, `failure_threshold`, `name`,
    /// `initial_state` and `count` (rules: matchers + `"count": "success" |
    /// "failure" | "ignored"`).
    pub fn from_json_value(v: &Value, path: &str) -> Result<BreakerConfig> {
        Self::from_value_in(v, path, None)
    }

    /// Reads typed options (a breaker object whose durations may be bare
    /// numbers of `unit_ns` nanoseconds: 1e6 for JavaScript milliseconds,
    /// 1e9 for Python seconds). The keys, rules and errors are the
    /// document's; only the spelling of durations differs, and a `null` is
    /// refused with `invalid_type` (see `doc::refuse_null`).
    pub fn from_typed_value(v: &Value, unit_ns: f64) -> Result<BreakerConfig> {
        crate::doc::refuse_null(v, "")?;
        Self::from_value_in(v, "", Some(unit_ns))
    }

    pub(crate) fn from_value_in(v: &Value, path: &str, unit: Option<f64>) -> Result<BreakerConfig> {
        Self::from_obj(Obj::typed(v, path, unit)?, path)
    }

    /// Reads a host's keyword options (`typed`) laid over a breaker
    /// configuration given as a document (`document`, or null): bare
    /// numbers are durations in host units of `unit_ns` nanoseconds only
    /// among the keyword options; in the document they are refused with
    /// `invalid_duration`, as in any document. A `null` among the keyword
    /// options is `invalid_type`; in the document it means "not given".
    pub fn from_typed_over(document: &Value, typed: &Value, unit_ns: f64) -> Result<BreakerConfig> {
        let (v, keys) = crate::doc::typed_over(document, typed)?;
        Self::from_obj(Obj::typed_only(&v, "", unit_ns, &keys)?, "")
    }

    fn from_obj(mut o: Obj<'_>, path: &str) -> Result<BreakerConfig> {
        let mut c = BreakerConfig::default();
        if let Some((s, f)) = o.str("kind", &["sliding_window_type", "type"])? {
            c.kind = match s.to_ascii_lowercase().as_str() {
                "count_based" => BreakerKind::CountBased,
                "time_based" => BreakerKind::TimeBased,
                "consecutive" => BreakerKind::Consecutive,
                "sampling" => BreakerKind::Sampling,
                _ => {
                    return Err(Error::new(
                        ErrorCode::InvalidValue,
                        f,
                        format!("must be count_based, time_based, consecutive or sampling, got {s:?}"),
                    ))
                }
            };
        }
        if matches!(c.kind, BreakerKind::Consecutive | BreakerKind::Sampling) {
            c.permitted_number_of_calls_in_half_open_state = 1;
        }
        if c.kind == BreakerKind::Sampling {
            // Polly v8's defaults: BreakDuration 5 s.
            c.wait_duration_in_open_state = 5 * NS_PER_S;
            if let Some(x) = o.f64("failure_ratio", &[])? {
                c.failure_ratio = x;
            }
            if let Some(x) = o.uint("minimum_throughput", &[], 0, u64::from(MAX_WINDOW))? {
                c.minimum_number_of_calls = x as u32;
            }
            if let Some(x) = o.duration("sampling_duration", &[])? {
                c.sampling_duration = x;
            }
        }
        if let Some((s, _)) = o.str("name", &[])? {
            c.name = Some(s.to_owned());
        }
        if let Some(x) = o.f64("failure_rate_threshold", &[])? {
            c.failure_rate_threshold = x;
        }
        if let Some(x) = o.f64("slow_call_rate_threshold", &[])? {
            c.slow_call_rate_threshold = x;
        }
        if let Some(x) = o.duration("slow_call_duration_threshold", &[])? {
            c.slow_call_duration_threshold = x;
        }
        if let Some(x) = o.uint("minimum_number_of_calls", &[], 1, u64::from(MAX_WINDOW))? {
            c.minimum_number_of_calls = x as u32;
        }
        if let Some(x) = o.uint("sliding_window_size", &[], 1, u64::from(MAX_WINDOW))? {
            c.sliding_window_size = x as u32;
        }
        let mut wait_given = false;
        if let Some(x) = o.duration("wait_duration_in_open_state", &["wait_duration", "break_duration"])? {
            c.wait_duration_in_open_state = x;
            wait_given = true;
        }
        if let Some(x) = o.f64("wait_multiplier", &[])? {
            c.wait_multiplier = x;
        }
        match o.duration("max_wait_duration_in_open_state", &["max_wait"])? {
            Some(x) => c.max_wait_duration_in_open_state = x,
            None if c.wait_multiplier > 1.0 => {
                c.max_wait_duration_in_open_state = c
                    .wait_duration_in_open_state
                    .saturating_mul(1024)
                    .min(3600 * NS_PER_S)
                    .max(c.wait_duration_in_open_state)
            }
            None => c.max_wait_duration_in_open_state = c.wait_duration_in_open_state,
        }
        let _ = wait_given;
        if let Some(x) = o.uint(
            "permitted_number_of_calls_in_half_open_state",
            &["permitted_calls_in_half_open", "permitted_calls_in_half_open_state"],
            1,
            u64::from(MAX_WINDOW),
        )? {
            c.permitted_number_of_calls_in_half_open_state = x as u32;
        }
        if let Some(x) = o.duration("max_wait_duration_in_half_open_state", &[])? {
            c.max_wait_duration_in_half_open_state = x;
        }
        if let Some(x) = o.uint("failure_threshold", &["consecutive_failures"], 1, u64::from(u32::MAX))? {
            c.failure_threshold = x as u32;
        }
        if let Some((s, f)) = o.str("initial_state", &[])? {
            c.initial_state = State::from_code(s)
                .ok_or_else(|| Error::new(ErrorCode::InvalidValue, f, format!("is not a breaker state: {s:?}")))?;
        }
        if let Some((v, f)) = o.take("count", &["record"])? {
            let items = v.as_array().ok_or_else(|| {
                Error::new(
                    ErrorCode::InvalidType,
                    f.clone(),
                    format!("must be a list of rules, got {}", doc::type_name(v)),
                )
            })?;
            for (i, item) in items.iter().enumerate() {
                let p = format!("{f}[{i}]");
                let mut ro = Obj::new(item, &p)?;
                let when = classify::parse_matcher(&mut ro)?;
                let count = match ro.str("count", &[])? {
                    Some(("success", _)) => Counted::Success,
                    Some(("failure", _)) => Counted::Failure,
                    Some(("ignored", _)) | Some(("ignore", _)) => Counted::Ignored,
                    Some((s, f)) => {
                        return Err(Error::new(
                            ErrorCode::InvalidValue,
                            f,
                            format!("must be success, failure or ignored, got {s:?}"),
                        ))
                    }
                    None => {
                        return Err(Error::new(ErrorCode::MissingField, ro.field("count"), "every rule sets count"))
                    }
                };
                ro.finish()?;
                c.count_rules.push(CountRule { when, count });
            }
        }
        o.finish()?;
        c.validate().map_err(|e| e.within(path))?;
        Ok(c)
    }

    /// Writes the settings as a document object (every key, defaults included).
    pub fn to_json_value(&self) -> Value {
        let mut m = crate::json::Map::new();
        m.insert("kind".into(), self.kind.name().into());
        if let Some(n) = &self.name {
            m.insert("name".into(), n.as_str().into());
        }
        m.insert("failure_rate_threshold".into(), self.failure_rate_threshold.into());
        m.insert("slow_call_rate_threshold".into(), self.slow_call_rate_threshold.into());
        m.insert("slow_call_duration_threshold".into(), format_duration(self.slow_call_duration_threshold).into());
        m.insert("minimum_number_of_calls".into(), self.minimum_number_of_calls.into());
        m.insert("sliding_window_size".into(), self.sliding_window_size.into());
        m.insert("wait_duration_in_open_state".into(), format_duration(self.wait_duration_in_open_state).into());
        m.insert("wait_multiplier".into(), self.wait_multiplier.into());
        m.insert(
            "max_wait_duration_in_open_state".into(),
            format_duration(self.max_wait_duration_in_open_state).into(),
        );
        m.insert(
            "permitted_number_of_calls_in_half_open_state".into(),
            self.permitted_number_of_calls_in_half_open_state.into(),
        );
        m.insert(
            "max_wait_duration_in_half_open_state".into(),
            format_duration(self.max_wait_duration_in_half_open_state).into(),
        );
        m.insert("failure_threshold".into(), self.failure_threshold.into());
        if self.kind == BreakerKind::Sampling {
            m.remove("minimum_number_of_calls");
            m.insert("failure_ratio".into(), self.failure_ratio.into());
            m.insert("minimum_throughput".into(), self.minimum_number_of_calls.into());
            m.insert("sampling_duration".into(), format_duration(self.sampling_duration).into());
        }
        m.insert("initial_state".into(), self.initial_state.code().into());
        if !self.count_rules.is_empty() {
            let rules = self
                .count_rules
                .iter()
                .map(|r| {
                    let mut o = crate::json::Map::new();
                    classify::matcher_to_json(&r.when, &mut o);
                    o.insert("count".into(), r.count.code().into());
                    Value::Object(o)
                })
                .collect();
            m.insert("count".into(), Value::Array(rules));
        }
        Value::Object(m)
    }

    /// A short digest of the settings that shape the state (for snapshots).
    fn digest(&self) -> String {
        let mut v = self.to_json_value();
        if let Some(o) = v.as_object_mut() {
            o.remove("name");
            o.remove("initial_state");
        }
        let mut hex = crate::sha256::sha256_hex(v.to_string().as_bytes());
        hex.truncate(16);
        hex
    }
}

/// One recorded call: failure and slow bits.
const FAIL: u8 = 1;
const SLOW: u8 = 2;

/// The aggregate of a window: calls, failures, slow calls.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
#[cfg_attr(any(test, feature = "serde"), derive(serde::Serialize))]
#[cfg_attr(test, derive(Deserialize))]
pub struct WindowTotals {
    /// Recorded calls.
    pub calls: u32,
    /// Failed calls.
    pub failures: u32,
    /// Slow calls.
    pub slow: u32,
    /// Slow calls that failed (absent from version-1 snapshots: 0).
    #[cfg_attr(any(test, feature = "serde"), serde(default))]
    pub slow_failures: u32,
}

impl WindowTotals {
    fn add(&mut self, bits: u8) {
        self.calls += 1;
        self.failures += u32::from(bits & FAIL != 0);
        self.slow += u32::from(bits & SLOW != 0);
        self.slow_failures += u32::from(bits == FAIL | SLOW);
    }
    fn sub(&mut self, bits: u8) {
        self.calls -= 1;
        self.failures -= u32::from(bits & FAIL != 0);
        self.slow -= u32::from(bits & SLOW != 0);
        self.slow_failures -= u32::from(bits == FAIL | SLOW);
    }

    /// Returns the failure rate in percent (0 with no calls).
    pub fn failure_rate(&self) -> f64 {
        if self.calls == 0 {
            0.0
        } else {
            f64::from(self.failures) * 100.0 / f64::from(self.calls)
        }
    }

    /// Returns the slow-call rate in percent (0 with no calls).
    pub fn slow_rate(&self) -> f64 {
        if self.calls == 0 {
            0.0
        } else {
            f64::from(self.slow) * 100.0 / f64::from(self.calls)
        }
    }
}

json_struct!(WindowTotals { calls, failures, slow, slow_failures });

/// A per-second bucket of a time window.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
#[cfg_attr(any(test, feature = "serde"), derive(serde::Serialize))]
#[cfg_attr(test, derive(Deserialize))]
struct Bucket {
    /// The second (now / 1 s) this bucket counts.
    second: u64,
    calls: u32,
    failures: u32,
    slow: u32,
    slow_failures: u32,
}

/// The sliding window.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Window {
    /// Ring of the last N calls' bits.
    Count { ring: Vec<u8>, next: usize, len: usize, totals: WindowTotals },
    /// Ring of N one-second buckets. `totals` always sums the buckets of the
    /// seconds in `(head − N, head]`, `head` being the latest second the
    /// window was advanced to (`u64::MAX`: never), so a call costs O(1)
    /// whatever N is (amortized over the seconds that pass).
    Time { buckets: Vec<Bucket>, totals: WindowTotals, head: u64 },
    /// Consecutive failures.
    Consecutive { failures: u32 },
    /// Polly's health metrics.
    Sampling(Sampling),
}

/// Polly v8's `RollingHealthMetrics` (sampling ≥ 200 ms: 10 windows, each
/// started by the first event after the current one is a window old) or
/// `SingleHealthMetrics` (shorter sampling: one window reset when it ends).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Sampling {
    sampling: u64,
    window: u64,
    single: bool,
    /// (started at, successes, failures), oldest first; at most 11.
    windows: std::collections::VecDeque<(u64, u32, u32)>,
    successes: u32,
    failures: u32,
    started: Option<u64>,
}

impl Sampling {
    fn new(sampling: u64) -> Sampling {
        // HealthMetrics.Create: NumberOfWindows 10; below 20 ms × 10 a single window.
        let single = sampling < 200_000_000;
        // TimeSpan.FromTicks(samplingDuration.Ticks / 10): whole 100 ns ticks.
        let window = (sampling / 100 / 10) * 100;
        Sampling {
            sampling,
            window: window.max(1),
            single,
            windows: std::collections::VecDeque::with_capacity(11),
            successes: 0,
            failures: 0,
            started: None,
        }
    }

    /// Brings the windows up to `now` and returns the current one (rolling).
    fn update(&mut self, now: u64) {
        if self.single {
            let start = *self.started.get_or_insert(now);
            if now.saturating_sub(start) >= self.sampling {
                self.started = Some(now);
                self.successes = 0;
                self.failures = 0;
            }
            return;
        }
        let need_new = match self.windows.back() {
            None => true,
            Some(w) => now.saturating_sub(w.0) >= self.window,
        };
        if need_new {
            self.windows.push_back((now, 0, 0));
        }
        while let Some(w) = self.windows.front() {
            if now.saturating_sub(w.0) >= self.sampling {
                self.successes -= w.1;
                self.failures -= w.2;
                self.windows.pop_front();
            } else {
                break;
            }
        }
    }

    fn record(&mut self, now: u64, failure: bool) {
        self.update(now);
        if failure {
            self.failures += 1;
        } else {
            self.successes += 1;
        }
        if let Some(w) = self.windows.back_mut() {
            if failure {
                w.2 += 1;
            } else {
                w.1 += 1;
            }
        }
    }

    fn totals(&self) -> WindowTotals {
        WindowTotals { calls: self.successes + self.failures, failures: self.failures, ..Default::default() }
    }

    /// The totals a read at `now` sees, without moving the windows (Polly
    /// moves them only when it records: a read must not shift them).
    fn totals_at(&self, now: u64) -> WindowTotals {
        if self.single {
            return match self.started {
                Some(s) if now.saturating_sub(s) >= self.sampling => WindowTotals::default(),
                _ => self.totals(),
            };
        }
        let (mut s, mut f) = (0u32, 0u32);
        for w in self.windows.iter().filter(|w| now.saturating_sub(w.0) < self.sampling) {
            s += w.1;
            f += w.2;
        }
        WindowTotals { calls: s + f, failures: f, ..Default::default() }
    }
}

impl Window {
    fn new(c: &BreakerConfig) -> Window {
        match c.kind {
            BreakerKind::CountBased => Window::Count {
                ring: vec![0; c.sliding_window_size as usize],
                next: 0,
                len: 0,
                totals: WindowTotals::default(),
            },
            BreakerKind::TimeBased => Window::Time {
                buckets: vec![Bucket { second: u64::MAX, ..Default::default() }; c.sliding_window_size as usize],
                totals: WindowTotals::default(),
                head: u64::MAX,
            },
            BreakerKind::Consecutive => Window::Consecutive { failures: 0 },
            BreakerKind::Sampling => Window::Sampling(Sampling::new(c.sampling_duration)),
        }
    }

    /// Drops time buckets older than the window at `now` from the totals.
    ///
    /// Only the buckets of the seconds that passed since the last advance
    /// can leave the window, so this visits at most that many (never more
    /// than N, and nothing when the window moved by N or more: then every
    /// bucket has left and the totals are zero). A bucket that left stays
    /// in the ring until its slot is reused; it no longer counts.
    fn advance(&mut self, now: u64) {
        if let Window::Time { buckets, totals, head } = self {
            let sec = now / NS_PER_S;
            let n = buckets.len() as u64;
            if *head == u64::MAX || sec.saturating_sub(*head) >= n {
                *totals = WindowTotals::default();
            } else {
                for s in *head + 1..=sec {
                    let Some(left) = s.checked_sub(n) else { continue };
                    let b = &buckets[(s % n) as usize];
                    if b.second == left {
                        totals.calls -= b.calls;
                        totals.failures -= b.failures;
                        totals.slow -= b.slow;
                        totals.slow_failures -= b.slow_failures;
                    }
                }
            }
            if *head == u64::MAX || sec > *head {
                *head = sec;
            }
        }
    }

    fn record(&mut self, now: u64, bits: u8) {
        match self {
            Window::Count { ring, next, len, totals } => {
                if *len == ring.len() {
                    totals.sub(ring[*next]);
                } else {
                    *len += 1;
                }
                ring[*next] = bits;
                totals.add(bits);
                *next = (*next + 1) % ring.len();
            }
            Window::Time { buckets, totals, .. } => {
                let sec = now / NS_PER_S;
                let n = buckets.len() as u64;
                let i = (sec % n) as usize;
                let b = &mut buckets[i];
                if b.second != sec {
                    // `advance(now)` ran first: a bucket of another second
                    // in this slot has left the window and the totals.
                    *b = Bucket { second: sec, ..Default::default() };
                }
                b.calls += 1;
                b.failures += u32::from(bits & FAIL != 0);
                b.slow += u32::from(bits & SLOW != 0);
                b.slow_failures += u32::from(bits == FAIL | SLOW);
                totals.add(bits);
            }
            Window::Consecutive { failures } => {
                if bits & FAIL != 0 {
                    *failures = failures.saturating_add(1);
                } else {
                    *failures = 0;
                }
            }
            Window::Sampling(m) => m.record(now, bits & FAIL != 0),
        }
    }

    fn totals(&self) -> WindowTotals {
        match self {
            Window::Count { totals, .. } | Window::Time { totals, .. } => *totals,
            Window::Consecutive { failures } => {
                WindowTotals { calls: *failures, failures: *failures, ..Default::default() }
            }
            Window::Sampling(m) => m.totals(),
        }
    }

    fn clear(&mut self, c: &BreakerConfig) {
        *self = Window::new(c);
    }

    /// A count window of `n` calls (resilience4j's half-open metrics).
    fn count(n: u32) -> Window {
        Window::Count { ring: vec![0; n.max(1) as usize], next: 0, len: 0, totals: WindowTotals::default() }
    }

    /// Empties a count window in place (no allocation).
    fn empty_count(&mut self) {
        if let Window::Count { next, len, totals, .. } = self {
            *next = 0;
            *len = 0;
            *totals = WindowTotals::default();
        }
    }

    /// A count window's calls, oldest first.
    fn calls(&self) -> Option<Vec<u8>> {
        match self {
            Window::Count { ring, next, len, .. } => {
                let n = ring.len();
                let start = (*next + n - *len) % n;
                Some((0..*len).map(|i| ring[(start + i) % n]).collect())
            }
            _ => None,
        }
    }
}

/// A permission to make one call, carrying the breaker's state epoch.
///
/// Report it with [`CircuitBreaker::on_result`] or give it back with
/// [`CircuitBreaker::release`]; an outcome on a permit from an older epoch
/// (admitted before a transition, or voided) is ignored.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Permit {
    epoch: u64,
    trial: bool,
    started: u64,
}

impl Permit {
    /// Returns true for a half-open trial call.
    pub fn is_trial(&self) -> bool {
        self.trial
    }

    /// Returns the `now` at which the permit was taken.
    pub fn started(&self) -> u64 {
        self.started
    }

    /// Returns the breaker's state epoch the permit was taken in.
    ///
    /// With [`from_parts`](Self::from_parts), lets a binding hand a permit
    /// across a language boundary as plain numbers.
    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    /// Rebuilds a permit from its parts ([`epoch`](Self::epoch),
    /// [`is_trial`](Self::is_trial), [`started`](Self::started)).
    ///
    /// A permit from an older epoch is ignored by the breaker, as always; a
    /// forged one can only misreport an outcome, never break an invariant.
    pub fn from_parts(epoch: u64, trial: bool, started: u64) -> Permit {
        Permit { epoch, trial, started }
    }
}

/// The answer of [`CircuitBreaker::try_acquire`].
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Acquire {
    /// The call may go.
    Permitted(Permit),
    /// The call is refused.
    Rejected {
        /// The state that refused.
        state: State,
        /// Nanoseconds until a trial call will be admitted (`u64::MAX`: not by waiting).
        retry_after: u64,
    },
}

/// Which metrics an open breaker keeps: those of the state it left
/// (resilience4j's `new OpenState(attempts + 1, currentState.getMetrics())`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
#[cfg_attr(any(test, feature = "serde"), derive(serde::Serialize))]
#[cfg_attr(test, derive(Deserialize))]
#[cfg_attr(any(test, feature = "serde"), serde(rename_all = "snake_case"))]
pub enum OpenMetrics {
    /// The sliding window that opened it (from closed).
    #[default]
    Window,
    /// The half-open trial calls (from half_open).
    Trials,
    /// Nothing (from disabled or forced_open, whose metrics are empty).
    Empty,
}

impl ToJson for OpenMetrics {
    fn to_value(&self) -> Value {
        match self {
            OpenMetrics::Window => "window",
            OpenMetrics::Trials => "trials",
            OpenMetrics::Empty => "empty",
        }
        .to_value()
    }
}

/// A breaker's metrics in its current state (resilience4j's
/// `CircuitBreaker.Metrics`). They reset on every transition except into
/// open, which keeps the metrics of the state it left.
#[derive(Copy, Clone, Debug, PartialEq)]
#[cfg_attr(any(test, feature = "serde"), derive(serde::Serialize))]
pub struct Metrics {
    /// Percent of failed calls; −1 below the minimum number of calls.
    pub failure_rate: f64,
    /// Percent of slow calls; −1 below the minimum number of calls.
    pub slow_call_rate: f64,
    /// Calls in the window.
    pub buffered_calls: u32,
    /// Failed calls in the window.
    pub failed_calls: u32,
    /// Successful calls in the window.
    pub successful_calls: u32,
    /// Slow calls in the window.
    pub slow_calls: u32,
    /// Slow calls that succeeded.
    pub slow_successful_calls: u32,
    /// Slow calls that failed.
    pub slow_failed_calls: u32,
    /// Calls refused in this state (kept into open, like the other metrics).
    pub not_permitted_calls: u64,
}

impl Metrics {
    fn of(t: WindowTotals, min: Option<u32>, not_permitted: u64) -> Metrics {
        let judged = min.is_some_and(|m| t.calls > 0 && t.calls >= m);
        Metrics {
            failure_rate: if judged { t.failure_rate() } else { -1.0 },
            slow_call_rate: if judged { t.slow_rate() } else { -1.0 },
            buffered_calls: t.calls,
            failed_calls: t.failures,
            successful_calls: t.calls - t.failures,
            slow_calls: t.slow,
            slow_successful_calls: t.slow - t.slow_failures,
            slow_failed_calls: t.slow_failures,
            not_permitted_calls: not_permitted,
        }
    }
}

json_struct!(Metrics {
    failure_rate,
    slow_call_rate,
    buffered_calls,
    failed_calls,
    successful_calls,
    slow_calls,
    slow_successful_calls,
    slow_failed_calls,
    not_permitted_calls,
});

/// What a break-duration generator sees when a breaker opens (Polly v8's
/// `BreakDurationGeneratorArguments`).
#[derive(Copy, Clone, Debug, PartialEq)]
#[cfg_attr(any(test, feature = "serde"), derive(serde::Serialize))]
pub struct BreakArguments {
    /// The failure ratio in [0, 1] of the metrics the open state keeps.
    pub failure_rate: f64,
    /// The failed calls in those metrics.
    pub failure_count: u32,
    /// Consecutive open → half_open transitions since the last close.
    pub half_open_attempts: u32,
}

json_struct!(BreakArguments { failure_rate, failure_count, half_open_attempts });

/// Returns true when resilience4j's `StateTransition` table has `from → to`.
///
/// Every pair is there, a state to itself included, except closed →
/// half_open, metrics_only → open and metrics_only → half_open.
pub const fn transition_allowed(from: State, to: State) -> bool {
    !matches!(
        (from, to),
        (State::Closed, State::HalfOpen) | (State::MetricsOnly, State::Open) | (State::MetricsOnly, State::HalfOpen)
    )
}

/// A circuit breaker: plain data with pure transitions.
///
/// Share it among sessions behind a lock ([`SharedBreaker`]).
#[derive(Clone, Debug, PartialEq)]
pub struct CircuitBreaker {
    config: BreakerConfig,
    state: State,
    epoch: u64,
    window: Window,
    /// When the current state was entered.
    since: u64,
    /// The wait of the current open period.
    open_wait: u64,
    /// Opens since the last close (k of the growing wait).
    opens: u32,
    /// Half-open: trials admitted and still counting toward the limit.
    trials_admitted: u32,
    /// Half-open: trial outcomes, a count window of the permitted calls
    /// (resilience4j's `CircuitBreakerMetrics.forHalfOpen`).
    trials: Window,
    last_now: u64,
    rejections: u64,
    transitions: u64,
    /// Calls refused in the current state (kept into open).
    not_permitted: u64,
    /// open → half_open transitions since the last close (Polly's `HalfOpenAttempts`).
    half_open_attempts: u32,
    /// Open: which metrics it kept.
    open_metrics: OpenMetrics,
    /// Open: the wait was given by hand or by the host (not the configured one).
    open_wait_given: bool,
}

/// A breaker shared by reference among sessions (`Send + Sync`).
pub type SharedBreaker = std::sync::Arc<std::sync::Mutex<CircuitBreaker>>;

impl CircuitBreaker {
    /// Creates a breaker in its configured initial state.
    ///
    /// # Errors
    /// As [`BreakerConfig::validate`].
    pub fn new(config: BreakerConfig) -> Result<Self> {
        config.validate()?;
        let window = Window::new(&config);
        Ok(CircuitBreaker {
            state: config.initial_state,
            epoch: 0,
            window,
            since: 0,
            open_wait: config.wait_duration_in_open_state,
            opens: 0,
            trials_admitted: 0,
            trials: Window::count(config.permitted_number_of_calls_in_half_open_state),
            last_now: 0,
            rejections: 0,
            transitions: 0,
            not_permitted: 0,
            half_open_attempts: 0,
            open_metrics: OpenMetrics::Window,
            open_wait_given: false,
            config,
        })
    }

    /// Wraps the breaker for sharing.
    pub fn shared(self) -> SharedBreaker {
        std::sync::Arc::new(std::sync::Mutex::new(self))
    }

    /// Returns the settings.
    pub fn config(&self) -> &BreakerConfig {
        &self.config
    }

    /// Returns the current state (an open breaker whose wait has ended stays
    /// open until a call arrives).
    pub fn state(&self) -> State {
        self.state
    }

    /// Returns the totals of the current state's metrics: the window in
    /// closed and metrics_only, the trials so far in half_open, and in open
    /// those of the state it left (see [`Metrics`]); a `sampling` breaker's
    /// health window in every state.
    pub fn totals(&self) -> WindowTotals {
        match self.metrics_source() {
            OpenMetrics::Window => self.window.totals(),
            OpenMetrics::Trials => self.trials.totals(),
            OpenMetrics::Empty => WindowTotals::default(),
        }
    }

    /// Which metrics the current state shows.
    fn metrics_source(&self) -> OpenMetrics {
        if self.config.kind == BreakerKind::Sampling {
            return OpenMetrics::Window;
        }
        match self.state {
            State::Closed | State::MetricsOnly | State::Disabled | State::ForcedOpen => OpenMetrics::Window,
            State::HalfOpen => OpenMetrics::Trials,
            State::Open => self.open_metrics,
        }
    }

    /// The minimum number of calls before the rates of the current metrics
    /// are judged (`None`: they are never rates, as for `consecutive`).
    fn metrics_minimum(&self) -> Option<u32> {
        let c = &self.config;
        let half_open = c.minimum_number_of_calls.min(c.permitted_number_of_calls_in_half_open_state);
        match (c.kind, self.metrics_source()) {
            (BreakerKind::Consecutive, OpenMetrics::Window) => None,
            (BreakerKind::Sampling, _) => Some(c.minimum_number_of_calls),
            (_, OpenMetrics::Trials) => Some(half_open),
            (BreakerKind::CountBased, _) => Some(c.minimum_number_of_calls.min(c.sliding_window_size)),
            _ => Some(c.minimum_number_of_calls),
        }
    }

    /// Returns the current state's metrics read at `now` (resilience4j's
    /// `getMetrics()`): a time window first drops the seconds that left it
    /// by `now`, whether or not anything was recorded since.
    pub fn metrics(&mut self, now: u64) -> Metrics {
        let now = self.clock(now);
        let totals = match (&self.window, self.metrics_source()) {
            (Window::Sampling(m), _) => m.totals_at(now),
            (_, OpenMetrics::Window) => {
                self.window.advance(now);
                self.window.totals()
            }
            _ => self.totals(),
        };
        Metrics::of(totals, self.metrics_minimum(), self.not_permitted)
    }

    /// Returns what a break-duration generator would see now (Polly v8's
    /// `BreakDurationGeneratorArguments`): a host that computes break
    /// durations itself calls it after a transition to open and passes its
    /// answer to [`set_break_duration`](Self::set_break_duration).
    pub fn break_arguments(&mut self, now: u64) -> BreakArguments {
        let m = self.metrics(now);
        let rate = if m.buffered_calls == 0 { 0.0 } else { f64::from(m.failed_calls) / f64::from(m.buffered_calls) };
        BreakArguments {
            failure_rate: rate,
            failure_count: m.failed_calls,
            half_open_attempts: self.half_open_attempts,
        }
    }

    /// Returns the open → half_open transitions since the last close
    /// (Polly v8's `HalfOpenAttempts`).
    pub fn half_open_attempts(&self) -> u32 {
        self.half_open_attempts
    }

    /// Replaces the wait of the current open period, counted from when it
    /// opened, with a duration the host computed (Polly v8's
    /// `BreakDurationGenerator`, which a pure core cannot call).
    ///
    /// # Errors
    /// `invalid_state` when the breaker is not open.
    pub fn set_break_duration(&mut self, duration: u64) -> Result<()> {
        if self.state != State::Open {
            return Err(Error::new(
                ErrorCode::InvalidState,
                "state",
                format!("a break duration applies to an open breaker, not {}", self.state.code()),
            ));
        }
        self.open_wait = duration;
        self.open_wait_given = true;
        Ok(())
    }

    /// Returns the bytes the breaker occupies: the struct, its window and its settings' heap.
    pub fn memory_size(&self) -> usize {
        let window = match &self.window {
            Window::Count { ring, .. } => ring.capacity(),
            Window::Time { buckets, .. } => buckets.capacity() * std::mem::size_of::<Bucket>(),
            Window::Consecutive { .. } => 0,
            Window::Sampling(m) => m.windows.capacity() * std::mem::size_of::<(u64, u32, u32)>(),
        };
        let trials = match &self.trials {
            Window::Count { ring, .. } => ring.capacity(),
            _ => 0,
        };
        let rules = self.config.count_rules.capacity() * std::mem::size_of::<CountRule>();
        std::mem::size_of::<Self>() + window + trials + rules + self.config.name.as_ref().map_or(0, String::capacity)
    }

    /// Returns how many calls were refused since the breaker was created
    /// (a running total; the per-state count is [`Metrics::not_permitted_calls`]).
    pub fn rejections(&self) -> u64 {
        self.rejections
    }

    /// Returns how many transitions happened.
    pub fn transitions(&self) -> u64 {
        self.transitions
    }

    fn clock(&mut self, now: u64) -> u64 {
        if now > self.last_now {
            self.last_now = now;
        }
        self.last_now
    }

    fn go(&mut self, to: State, reason: TransitionReason, now: u64) -> Transition {
        self.enter(to, reason, now, None)
    }

    /// Enters `to` (a new state object, as resilience4j builds one for every
    /// transition, to the same state included). Metrics reset, except into
    /// open, which keeps those of the state it left. `wait` is a wait given
    /// for the open period (resilience4j's `transitionToOpenStateFor`, which
    /// does not count as a re-open); `None` takes the configured one.
    fn enter(&mut self, to: State, reason: TransitionReason, now: u64, wait: Option<u64>) -> Transition {
        let from = self.state;
        let sampling = self.config.kind == BreakerKind::Sampling;
        self.state = to;
        self.epoch += 1;
        self.since = now;
        self.transitions += 1;
        self.trials_admitted = 0;
        if to == State::Open {
            self.open_metrics = match from {
                State::Closed | State::MetricsOnly => OpenMetrics::Window,
                State::HalfOpen => OpenMetrics::Trials,
                State::Open => self.open_metrics,
                State::Disabled | State::ForcedOpen => OpenMetrics::Empty,
            };
            match self.open_metrics {
                OpenMetrics::Window => self.trials.empty_count(),
                OpenMetrics::Trials if !sampling => self.window.clear(&self.config),
                OpenMetrics::Trials => {}
                OpenMetrics::Empty => {
                    self.trials.empty_count();
                    self.window.clear(&self.config);
                }
            }
            match wait {
                Some(w) => {
                    self.open_wait = w;
                    self.open_wait_given = true;
                }
                None => {
                    self.opens = self.opens.saturating_add(1);
                    // Polly keys its generator on half-open attempts; resilience4j on opens.
                    let k = if sampling { self.half_open_attempts.saturating_add(1) } else { self.opens };
                    self.open_wait = self.config.wait_for(k);
                    self.open_wait_given = false;
                }
            }
        } else {
            self.not_permitted = 0;
            self.trials.empty_count();
            // Polly's health metrics survive half-open; only a close resets them.
            if !(sampling && to == State::HalfOpen) {
                self.window.clear(&self.config);
            }
            match to {
                State::Closed | State::Disabled | State::MetricsOnly => {
                    self.opens = 0;
                    self.half_open_attempts = 0;
                }
                State::ForcedOpen => self.opens = self.opens.saturating_add(1),
                _ => self.half_open_attempts = self.half_open_attempts.saturating_add(1),
            }
        }
        Transition { from, to, reason, at: now }
    }

    /// Half-open past its maximum wait returns to open.
    fn expire_half_open(&mut self, now: u64) -> Option<Transition> {
        let max = self.config.max_wait_duration_in_half_open_state;
        if self.state == State::HalfOpen && max > 0 && now.saturating_sub(self.since) >= max {
            return Some(self.go(State::Open, TransitionReason::HalfOpenTimeout, now));
        }
        None
    }

    /// Returns the epoch of the permit every call is admitted with, at any
    /// `now`, changing nothing but the breaker's clock (closed, disabled and
    /// metrics_only admit so: see [`try_acquire`](Self::try_acquire)), or
    /// `None` when a call must ask. It holds until the next call that
    /// changes the breaker; a host may then admit calls without asking, as
    /// long as it brings the clock up to date (a `try_acquire` at the latest
    /// `now` it skipped) before anything else reaches the breaker.
    pub fn free_admission(&self) -> Option<u64> {
        matches!(self.state, State::Closed | State::Disabled | State::MetricsOnly).then_some(self.epoch)
    }

    /// Returns true when a success reported now with the permit of
    /// [`free_admission`](Self::free_admission), taking at most
    /// [`free_success_limit`](Self::free_success_limit) nanoseconds, changes
    /// nothing but the breaker's clock: disabled; a `consecutive` window with
    /// no failure; a full `count_based` window of fast successes. A host may
    /// then skip reporting it, on the terms of `free_admission`.
    pub fn free_success(&self) -> bool {
        if self.free_admission().is_none() {
            return false;
        }
        if self.state == State::Disabled {
            return true;
        }
        let quiet = match &self.window {
            Window::Consecutive { failures } => *failures == 0,
            // A full ring of zeros stays one (the slot a success overwrites is a zero).
            Window::Count { ring, len, totals, .. } => *len == ring.len() && totals.failures == 0 && totals.slow == 0,
            // Time buckets and Polly's health metrics count every success.
            Window::Time { .. } | Window::Sampling(_) => false,
        };
        quiet && (self.state != State::Closed || self.judge_window(0).is_none())
    }

    /// The longest success (ns) [`free_success`](Self::free_success) speaks
    /// for: the slow-call threshold, except for a `consecutive` breaker,
    /// whose window does not count slow calls.
    pub fn free_success_limit(&self) -> u64 {
        if self.config.kind == BreakerKind::Consecutive {
            u64::MAX
        } else {
            self.config.slow_call_duration_threshold
        }
    }

    /// Asks to make one call at `now`.
    ///
    /// Moves open → half_open on the first call strictly after the open wait
    /// ends; half-open admits at most the permitted trial calls. Returns the
    /// answer and the transition it caused, if any.
    pub fn try_acquire(&mut self, now: u64) -> (Acquire, Option<Transition>) {
        let now = self.clock(now);
        let mut t = self.expire_half_open(now);
        let permit = |s: &Self, trial| Acquire::Permitted(Permit { epoch: s.epoch, trial, started: now });
        match self.state {
            State::Closed | State::Disabled | State::MetricsOnly => (permit(self, false), t),
            State::ForcedOpen => {
                self.rejections += 1;
                self.not_permitted += 1;
                (Acquire::Rejected { state: State::ForcedOpen, retry_after: u64::MAX }, t)
            }
            State::Open => {
                let until = self.since.saturating_add(self.open_wait);
                // Polly admits the probe at the break's end; resilience4j strictly after it.
                let at_end = u64::from(self.config.kind != BreakerKind::Sampling);
                if now >= until.saturating_add(at_end) {
                    let tr = self.go(State::HalfOpen, TransitionReason::WaitElapsed, now);
                    t = Some(t.map_or(tr, |first| Transition { from: first.from, ..tr }));
                    self.trials_admitted = 1;
                    (permit(self, true), t)
                } else {
                    self.rejections += 1;
                    self.not_permitted += 1;
                    (Acquire::Rejected { state: State::Open, retry_after: until - now + at_end }, t)
                }
            }
            State::HalfOpen => {
                if self.trials_admitted < self.config.permitted_number_of_calls_in_half_open_state {
                    self.trials_admitted += 1;
                    (permit(self, true), t)
                } else {
                    self.rejections += 1;
                    self.not_permitted += 1;
                    let max = self.config.max_wait_duration_in_half_open_state;
                    let retry_after =
                        if max == 0 { u64::MAX } else { self.since.saturating_add(max).saturating_sub(now).max(1) };
                    (Acquire::Rejected { state: State::HalfOpen, retry_after }, t)
                }
            }
        }
    }

    /// Gives a permit back without an outcome (cancellation, drop): a
    /// half-open trial slot returns to the pool.
    pub fn release(&mut self, permit: Permit, now: u64) -> Option<Transition> {
        let now = self.clock(now);
        let t = self.expire_half_open(now);
        if permit.epoch == self.epoch && permit.trial && self.state == State::HalfOpen {
            self.trials_admitted = self.trials_admitted.saturating_sub(1);
        }
        t
    }

    /// Records the outcome of a permitted call that took `duration` nanoseconds.
    ///
    /// An outcome on a permit from an older epoch is ignored; `Ignored`
    /// outcomes release the permit.
    pub fn on_result(&mut self, permit: Permit, now: u64, counted: Counted, duration: u64) -> Option<Transition> {
        let now = self.clock(now);
        if let Some(t) = self.expire_half_open(now) {
            return Some(t);
        }
        if permit.epoch != self.epoch {
            return None;
        }
        if counted == Counted::Ignored {
            return self.release(permit, now);
        }
        match self.state {
            State::Closed | State::MetricsOnly => self.record_bits(now, self.bits(counted, duration)),
            State::HalfOpen if permit.trial => self.record_bits(now, self.bits(counted, duration)),
            _ => None,
        }
    }

    /// Records an outcome without a permit (resilience4j's `onError` /
    /// `onSuccess` called without `tryAcquirePermission`, for callers that
    /// gate elsewhere): it counts in the current state's metrics — the
    /// window in closed and metrics_only, a trial in half_open (which may
    /// decide it), the kept metrics in open (no transition) — and nothing in
    /// disabled or forced_open. Having no permit, it cannot be voided by a
    /// transition. A half-open evaluation past its maximum wait first
    /// returns to open, as on every call.
    pub fn record(&mut self, now: u64, counted: Counted, duration: u64) -> Option<Transition> {
        let now = self.clock(now);
        let expired = self.expire_half_open(now);
        if counted == Counted::Ignored {
            return expired;
        }
        let bits = self.bits(counted, duration);
        let t = match self.state {
            State::Closed | State::MetricsOnly | State::HalfOpen => self.record_bits(now, bits),
            State::Open => {
                match self.metrics_source() {
                    OpenMetrics::Window => {
                        self.window.advance(now);
                        self.window.record(now, bits);
                    }
                    OpenMetrics::Trials => self.trials.record(now, bits),
                    OpenMetrics::Empty => {}
                }
                None
            }
            State::Disabled | State::ForcedOpen => None,
        };
        expired.or(t)
    }

    /// The window bits of an outcome.
    fn bits(&self, counted: Counted, duration: u64) -> u8 {
        let mut bits = if counted == Counted::Failure { FAIL } else { 0 };
        if duration > self.config.slow_call_duration_threshold && self.config.kind != BreakerKind::Sampling {
            bits |= SLOW;
        }
        bits
    }

    /// Records a counted outcome in closed, metrics_only or half_open and
    /// judges it.
    fn record_bits(&mut self, now: u64, bits: u8) -> Option<Transition> {
        match self.state {
            State::Closed | State::MetricsOnly => {
                self.window.advance(now);
                self.window.record(now, bits);
                if self.state == State::Closed {
                    if let Some(reason) = self.judge_window(bits) {
                        return Some(self.go(State::Open, reason, now));
                    }
                }
                None
            }
            State::HalfOpen => {
                self.trials.record(now, bits);
                if self.config.kind == BreakerKind::Consecutive {
                    return Some(if bits & FAIL != 0 {
                        self.go(State::Open, TransitionReason::TrialsFailed, now)
                    } else {
                        self.go(State::Closed, TransitionReason::TrialsPassed, now)
                    });
                }
                // resilience4j's half-open metrics: a count window of the
                // permitted calls, judged at min(minimum, permitted) calls.
                let c = &self.config;
                let judge_at = c.permitted_number_of_calls_in_half_open_state.min(c.minimum_number_of_calls);
                let t = self.trials.totals();
                if t.calls >= judge_at {
                    let failed =
                        t.failure_rate() >= c.failure_rate_threshold || t.slow_rate() >= c.slow_call_rate_threshold;
                    return Some(if failed {
                        self.go(State::Open, TransitionReason::TrialsFailed, now)
                    } else {
                        self.go(State::Closed, TransitionReason::TrialsPassed, now)
                    });
                }
                None
            }
            _ => None,
        }
    }

    /// Returns the reason to open, if the window says so.
    fn judge_window(&self, bits: u8) -> Option<TransitionReason> {
        let t = self.window.totals();
        match self.config.kind {
            BreakerKind::Sampling => {
                // AdvancedCircuitBehavior: judged on failures only.
                let throughput = t.calls;
                let rate = f64::from(t.failures) / f64::from(throughput.max(1));
                (bits & FAIL != 0
                    && throughput >= self.config.minimum_number_of_calls
                    && rate >= self.config.failure_ratio)
                    .then_some(TransitionReason::FailureRate)
            }
            BreakerKind::Consecutive => {
                (t.failures >= self.config.failure_threshold).then_some(TransitionReason::ConsecutiveFailures)
            }
            kind => {
                let min = if kind == BreakerKind::CountBased {
                    self.config.minimum_number_of_calls.min(self.config.sliding_window_size)
                } else {
                    self.config.minimum_number_of_calls
                };
                if t.calls < min {
                    None
                } else if t.failure_rate() >= self.config.failure_rate_threshold {
                    Some(TransitionReason::FailureRate)
                } else if t.slow_rate() >= self.config.slow_call_rate_threshold {
                    Some(TransitionReason::SlowCallRate)
                } else {
                    None
                }
            }
        }
    }

    /// Returns true when a call at `at` would be refused: open with its wait
    /// not over by then, forced open, or half-open with no free trial permit.
    /// (Used by sessions: never retry into an open breaker.)
    pub fn refuses_at(&self, at: u64) -> bool {
        match self.state {
            State::Open if self.config.kind == BreakerKind::Sampling => at < self.since.saturating_add(self.open_wait),
            State::Open => at <= self.since.saturating_add(self.open_wait),
            State::ForcedOpen => true,
            State::HalfOpen => {
                let max = self.config.max_wait_duration_in_half_open_state;
                let expired = max > 0 && at.saturating_sub(self.since) >= max;
                if expired {
                    // It will be open again, with a full wait from the expiry.
                    true
                } else {
                    self.trials_admitted >= self.config.permitted_number_of_calls_in_half_open_state
                }
            }
            _ => false,
        }
    }

    /// Returns nanoseconds until a call at `now` could be admitted (0 if it could now).
    pub fn remaining_open(&self, now: u64) -> u64 {
        match self.state {
            State::Open => {
                let at_end = u64::from(self.config.kind != BreakerKind::Sampling);
                self.since.saturating_add(self.open_wait).saturating_add(at_end).saturating_sub(now)
            }
            State::ForcedOpen => u64::MAX,
            _ => 0,
        }
    }

    /// Moves to `to` by hand (resilience4j's `transitionTo…State`).
    ///
    /// Follows resilience4j's `StateTransition` table
    /// ([`transition_allowed`]): a transition to the current state is legal
    /// and starts that state afresh (new metrics, a new open wait counted as
    /// a re-open, void permits).
    ///
    /// # Errors
    /// `invalid_transition` for a pair the table lacks (closed → half_open,
    /// metrics_only → open or half_open).
    pub fn transition_to(&mut self, to: State, now: u64) -> Result<Transition> {
        let now = self.clock(now);
        self.check_transition(to)?;
        Ok(self.go(to, TransitionReason::Manual, now))
    }

    fn check_transition(&self, to: State) -> Result<()> {
        if transition_allowed(self.state, to) {
            return Ok(());
        }
        Err(Error::new(
            ErrorCode::InvalidTransition,
            "state",
            format!("no transition from {} to {} (resilience4j's StateTransition table)", self.state.code(), to.code()),
        ))
    }

    /// Opens the breaker for `duration` by hand (resilience4j 2.x's
    /// `transitionToOpenStateFor`): the wait is the one given, and it does
    /// not count as a re-open for the growing wait.
    ///
    /// # Errors
    /// `invalid_transition` from metrics_only (the table has no metrics_only → open).
    pub fn transition_to_open_for(&mut self, duration: u64, now: u64) -> Result<Transition> {
        let now = self.clock(now);
        self.check_transition(State::Open)?;
        Ok(self.enter(State::Open, TransitionReason::Manual, now, Some(duration)))
    }

    /// Opens the breaker until the instant `until` of the caller's monotonic
    /// clock (resilience4j 2.x's `transitionToOpenStateUntil`); an instant
    /// already past leaves a wait of 0.
    ///
    /// # Errors
    /// As [`transition_to_open_for`](Self::transition_to_open_for).
    pub fn transition_to_open_until(&mut self, until: u64, now: u64) -> Result<Transition> {
        let at = self.clock(now);
        self.transition_to_open_for(until.saturating_sub(at), now)
    }

    /// Returns to closed with an empty window (resilience4j's `reset`).
    pub fn reset(&mut self, now: u64) -> Option<Transition> {
        let now = self.clock(now);
        if self.state == State::Closed {
            self.window.clear(&self.config);
            self.opens = 0;
            self.half_open_attempts = 0;
            self.not_permitted = 0;
            self.epoch += 1;
            return None;
        }
        Some(self.go(State::Closed, TransitionReason::Manual, now))
    }

    /// Captures the full state for storage or sharing, with durations
    /// relative to `now` and the wall clock `wall_now_ms` it was taken at.
    pub fn snapshot(&self, now: u64, wall_now_ms: u64) -> BreakerSnapshot {
        let now = now.max(self.last_now);
        let (ring, totals_time) = match &self.window {
            Window::Count { ring, next, len, .. } => {
                // Oldest first.
                let n = ring.len();
                let start = (*next + n - *len) % n;
                (Some((0..*len).map(|i| ring[(start + i) % n]).collect()), None)
            }
            Window::Time { buckets, .. } => {
                let sec = now / NS_PER_S;
                let mut bs: Vec<SnapshotBucket> = buckets
                    .iter()
                    .filter(|b| b.second != u64::MAX && b.second <= sec && b.second + buckets.len() as u64 > sec)
                    .map(|b| SnapshotBucket {
                        age_s: sec - b.second,
                        calls: b.calls,
                        failures: b.failures,
                        slow: b.slow,
                        slow_failures: b.slow_failures,
                    })
                    .collect();
                bs.sort_by_key(|b| std::cmp::Reverse(b.age_s));
                (None, Some(bs))
            }
            Window::Consecutive { .. } | Window::Sampling(_) => (None, None),
        };
        let sampling = match &self.window {
            Window::Sampling(m) => Some(SamplingSnapshot {
                started_age_ns: m.started.map(|t| now.saturating_sub(t)),
                windows: m
                    .windows
                    .iter()
                    .map(|w| SamplingWindow { age_ns: now.saturating_sub(w.0), successes: w.1, failures: w.2 })
                    .collect(),
                successes: m.successes,
                failures: m.failures,
            }),
            _ => None,
        };
        BreakerSnapshot {
            version: SNAPSHOT_VERSION,
            config_digest: self.config.digest(),
            taken_at_ms: wall_now_ms,
            state: self.state,
            elapsed_in_state_ns: now.saturating_sub(self.since),
            open_wait_ns: self.open_wait,
            opens: self.opens,
            trials_admitted: self.trials_admitted,
            trials: self.trials.totals(),
            trial_calls: self.trials.calls(),
            consecutive_failures: match self.window {
                Window::Consecutive { failures } => failures,
                _ => 0,
            },
            calls: ring,
            buckets: totals_time,
            sampling,
            not_permitted: self.not_permitted,
            half_open_attempts: self.half_open_attempts,
            open_metrics: self.open_metrics,
            open_wait_given: self.open_wait_given,
        }
    }

    /// Rebuilds a breaker from a snapshot taken (possibly in another process)
    /// with the same settings, resolving its durations against `now` less the
    /// wall time the snapshot spent stored (`wall_now_ms − taken_at_ms`,
    /// floored at 0).
    ///
    /// Outstanding permits of the snapshotting process do not carry over:
    /// half-open trials admitted there count as taken.
    ///
    /// A version-1 snapshot (before per-state metrics) restores with no
    /// not-permitted calls, no half-open attempts, no slow failures, and an
    /// open breaker keeping its window.
    ///
    /// # Errors
    /// `invalid_snapshot` for an unknown version or inconsistent contents;
    /// `snapshot_mismatch` when it was taken with other settings.
    pub fn restore(config: BreakerConfig, snap: &BreakerSnapshot, now: u64, wall_now_ms: u64) -> Result<Self> {
        let bad = |field: String, why: &str| Error::new(ErrorCode::InvalidSnapshot, field, why.to_owned());
        if !(1..=SNAPSHOT_VERSION).contains(&snap.version) {
            return Err(Error::new(
                ErrorCode::InvalidSnapshot,
                "snapshot.version",
                format!("unknown snapshot version {}", snap.version),
            ));
        }
        let mut b = CircuitBreaker::new(config)?;
        if snap.config_digest != b.config.digest() {
            return Err(Error::new(
                ErrorCode::SnapshotMismatch,
                "snapshot.config_digest",
                "the snapshot was taken from a breaker with other settings",
            ));
        }
        let stored_ns = wall_now_ms.saturating_sub(snap.taken_at_ms).saturating_mul(1_000_000);
        let elapsed = snap.elapsed_in_state_ns.saturating_add(stored_ns);
        b.last_now = now;
        b.state = snap.state;
        b.since = now.saturating_sub(elapsed);
        b.opens = snap.opens;
        let max_wait = b.config.max_wait_duration_in_open_state.max(b.config.wait_duration_in_open_state);
        if snap.open_wait_ns > max_wait && !snap.open_wait_given {
            return Err(bad("snapshot.open_wait_ns".into(), "open wait beyond the configured maximum"));
        }
        b.open_wait = snap.open_wait_ns;
        b.open_wait_given = snap.open_wait_given;
        b.not_permitted = snap.not_permitted;
        b.half_open_attempts = snap.half_open_attempts;
        b.open_metrics = snap.open_metrics;
        let permitted = b.config.permitted_number_of_calls_in_half_open_state;
        if snap.trials_admitted > permitted {
            return Err(bad("snapshot.trials_admitted".into(), "more trial calls than the settings permit"));
        }
        // Permitless outcomes count as trials too, so only an unfinished
        // half-open evaluation bounds them: it decides at min(minimum, permitted).
        let judge_at = match b.config.kind {
            BreakerKind::Consecutive => 1,
            _ => permitted.min(b.config.minimum_number_of_calls),
        };
        if let Some(calls) = &snap.trial_calls {
            if calls.len() > permitted as usize {
                return Err(bad("snapshot.trial_calls".into(), "more trial calls than the half-open window holds"));
            }
            if let Some(i) = calls.iter().position(|c| *c & !(FAIL | SLOW) != 0) {
                return Err(bad(format!("snapshot.trial_calls[{i}]"), "not an outcome (0 to 3)"));
            }
        } else if snap.trials.calls > permitted {
            return Err(bad("snapshot.trials.calls".into(), "more trial outcomes than the half-open window holds"));
        }
        if snap.state == State::HalfOpen && snap.trials.calls >= judge_at {
            return Err(bad("snapshot.trials.calls".into(), "more trial outcomes than an unfinished evaluation holds"));
        }
        if snap.trials.failures > snap.trials.calls {
            return Err(bad("snapshot.trials.failures".into(), "more failures than calls"));
        }
        if snap.trials.slow > snap.trials.calls {
            return Err(bad("snapshot.trials.slow".into(), "more slow calls than calls"));
        }
        if snap.trials.slow_failures > snap.trials.slow.min(snap.trials.failures) {
            return Err(bad("snapshot.trials.slow_failures".into(), "more slow failures than slow calls or failures"));
        }
        b.trials_admitted = snap.trials_admitted;
        // Version 1 has the trial counts only; their order does not matter
        // until the window is full, which an unfinished evaluation never is.
        let t = snap.trials;
        let calls = match &snap.trial_calls {
            Some(c) => c.clone(),
            None => {
                // Checked above: calls ≤ permitted, failures and slow ≤ calls,
                // slow_failures ≤ both; the fast successes must not be negative.
                let Some(fast_ok) = t.calls.checked_sub(t.failures + t.slow - t.slow_failures) else {
                    return Err(bad("snapshot.trials.calls".into(), "fewer calls than failures and slow calls"));
                };
                let mut v = vec![FAIL | SLOW; t.slow_failures as usize];
                v.extend(std::iter::repeat_n(FAIL, (t.failures - t.slow_failures) as usize));
                v.extend(std::iter::repeat_n(SLOW, (t.slow - t.slow_failures) as usize));
                v.extend(std::iter::repeat_n(0, fast_ok as usize));
                v
            }
        };
        for bits in calls {
            b.trials.record(now, bits);
        }
        if b.trials.totals() != t {
            return Err(bad("snapshot.trials".into(), "the trial counts do not match the trial calls"));
        }
        if now < elapsed && snap.state == State::Open {
            // The clock origin is too recent to place `since`; keep the remaining wait exact.
            b.since = 0;
            b.open_wait = snap.open_wait_ns.saturating_sub(elapsed.saturating_sub(now));
        }
        match (&mut b.window, &snap.calls, &snap.buckets) {
            (Window::Count { ring, next, len, totals }, Some(calls), None) => {
                if calls.len() > ring.len() {
                    return Err(bad("snapshot.calls".into(), "more calls than the window holds"));
                }
                if let Some(i) = calls.iter().position(|c| *c & !(FAIL | SLOW) != 0) {
                    return Err(bad(format!("snapshot.calls[{i}]"), "not an outcome (0 to 3)"));
                }
                for (i, c) in calls.iter().enumerate() {
                    ring[i] = *c;
                    totals.add(*c);
                }
                *len = calls.len();
                *next = calls.len() % ring.len();
            }
            (Window::Time { buckets, totals, head }, None, Some(bs)) => {
                let n = buckets.len() as u64;
                let stored_s = stored_ns / NS_PER_S;
                let sec = now / NS_PER_S;
                let (mut calls, mut failures, mut slow) = (0u32, 0u32, 0u32);
                for (j, sb) in bs.iter().enumerate() {
                    if sb.failures > sb.calls {
                        return Err(bad(format!("snapshot.buckets[{j}].failures"), "more failures than calls"));
                    }
                    if sb.slow > sb.calls {
                        return Err(bad(format!("snapshot.buckets[{j}].slow"), "more slow calls than calls"));
                    }
                    if sb.slow_failures > sb.slow.min(sb.failures) {
                        return Err(bad(
                            format!("snapshot.buckets[{j}].slow_failures"),
                            "more slow failures than slow calls or failures",
                        ));
                    }
                    // The window's totals are u32s: a snapshot whose sums wrap cannot have been taken.
                    let sum = |a: u32, b: u32, what: &str| {
                        a.checked_add(b)
                            .ok_or_else(|| bad(format!("snapshot.buckets[{j}].{what}"), "the window's total overflows"))
                    };
                    calls = sum(calls, sb.calls, "calls")?;
                    failures = sum(failures, sb.failures, "failures")?;
                    slow = sum(slow, sb.slow, "slow")?;
                    let age = sb.age_s.saturating_add(stored_s);
                    if age >= n || age > sec {
                        continue;
                    }
                    let second = sec - age;
                    let i = (second % n) as usize;
                    if buckets[i].second == second {
                        return Err(bad(format!("snapshot.buckets[{j}].age_s"), "two buckets for one second"));
                    }
                    buckets[i] = Bucket {
                        second,
                        calls: sb.calls,
                        failures: sb.failures,
                        slow: sb.slow,
                        slow_failures: sb.slow_failures,
                    };
                    totals.calls += sb.calls;
                    totals.failures += sb.failures;
                    totals.slow += sb.slow;
                    totals.slow_failures += sb.slow_failures;
                }
                *head = sec;
            }
            (Window::Consecutive { failures }, None, None) => *failures = snap.consecutive_failures,
            (Window::Sampling(m), None, None) => {
                let Some(ss) = &snap.sampling else {
                    return Err(bad("snapshot.sampling".into(), "sampling metrics missing"));
                };
                if ss.windows.len() > 11 {
                    return Err(bad("snapshot.sampling.windows".into(), "too many sampling windows"));
                }
                if ss.successes.checked_add(ss.failures).is_none() {
                    return Err(bad("snapshot.sampling.failures".into(), "the totals overflow"));
                }
                let (mut succ, mut fail) = (0u32, 0u32);
                let mut last_age = u64::MAX;
                for (j, w) in ss.windows.iter().enumerate() {
                    if w.age_ns > last_age {
                        return Err(bad(
                            format!("snapshot.sampling.windows[{j}].age_ns"),
                            "sampling windows out of order",
                        ));
                    }
                    last_age = w.age_ns;
                    let total = succ.checked_add(w.successes).zip(fail.checked_add(w.failures));
                    if total.is_none_or(|(a, b)| a.checked_add(b).is_none()) {
                        return Err(bad(format!("snapshot.sampling.windows[{j}]"), "the totals overflow"));
                    }
                    let age = w.age_ns.saturating_add(stored_ns);
                    if age >= m.sampling || age > now {
                        continue;
                    }
                    m.windows.push_back((now - age, w.successes, w.failures));
                    succ = succ.saturating_add(w.successes);
                    fail = fail.saturating_add(w.failures);
                }
                if m.single {
                    m.successes = ss.successes;
                    m.failures = ss.failures;
                    m.started = ss.started_age_ns.map(|a| now.saturating_sub(a.saturating_add(stored_ns)));
                } else {
                    m.successes = succ;
                    m.failures = fail;
                }
            }
            _ => return Err(bad("snapshot".into(), "window kind does not match the settings")),
        }
        // A version-1 half-open breaker kept its closed window; the state shows the trials.
        if b.metrics_source() != OpenMetrics::Window {
            b.window.clear(&b.config);
        }
        Ok(b)
    }
}

/// One bucket of a time window in a snapshot, by age in whole seconds.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(any(test, feature = "serde"), derive(serde::Serialize))]
#[cfg_attr(test, derive(Deserialize))]
#[cfg_attr(any(test, feature = "serde"), serde(deny_unknown_fields))]
pub struct SnapshotBucket {
    /// Seconds before the snapshot.
    pub age_s: u64,
    /// Calls in that second.
    pub calls: u32,
    /// Failures in that second.
    pub failures: u32,
    /// Slow calls in that second.
    pub slow: u32,
    /// Slow failures in that second (absent from version 1: 0).
    #[cfg_attr(any(test, feature = "serde"), serde(default))]
    pub slow_failures: u32,
}

json_struct!(SnapshotBucket { age_s, calls, failures, slow, slow_failures });

/// The version of the snapshots [`CircuitBreaker::snapshot`] writes; older
/// versions still restore.
pub const SNAPSHOT_VERSION: u32 = 2;

/// A breaker's full state, with remaining durations instead of instants.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(any(test, feature = "serde"), derive(serde::Serialize))]
#[cfg_attr(test, derive(Deserialize))]
#[cfg_attr(any(test, feature = "serde"), serde(deny_unknown_fields))]
pub struct BreakerSnapshot {
    /// Format version (2; 1 still restores).
    pub version: u32,
    /// A digest of the settings it was taken with.
    pub config_digest: String,
    /// Wall-clock Unix epoch milliseconds at which it was taken.
    pub taken_at_ms: u64,
    /// The state.
    pub state: State,
    /// Nanoseconds spent in the state when taken.
    pub elapsed_in_state_ns: u64,
    /// The wait of the current open period.
    pub open_wait_ns: u64,
    /// Opens since the last close.
    pub opens: u32,
    /// Half-open trials admitted.
    pub trials_admitted: u32,
    /// Half-open trial outcomes (their totals).
    pub trials: WindowTotals,
    /// The half-open window's calls, oldest first (version 2; bit 1 failure, bit 2 slow).
    #[cfg_attr(any(test, feature = "serde"), serde(default))]
    pub trial_calls: Option<Vec<u8>>,
    /// Consecutive failures (consecutive breakers).
    pub consecutive_failures: u32,
    /// Count window: the recorded calls, oldest first (bit 1 failure, bit 2 slow).
    pub calls: Option<Vec<u8>>,
    /// Time window: the buckets, oldest first.
    pub buckets: Option<Vec<SnapshotBucket>>,
    /// Sampling (Polly) metrics.
    #[cfg_attr(any(test, feature = "serde"), serde(default))]
    pub sampling: Option<SamplingSnapshot>,
    /// Calls refused in the state (version 2).
    #[cfg_attr(any(test, feature = "serde"), serde(default))]
    pub not_permitted: u64,
    /// open → half_open transitions since the last close (version 2).
    #[cfg_attr(any(test, feature = "serde"), serde(default))]
    pub half_open_attempts: u32,
    /// Open: which metrics it kept (version 2; version 1: the window).
    #[cfg_attr(any(test, feature = "serde"), serde(default))]
    pub open_metrics: OpenMetrics,
    /// Open: the wait was given by hand or by the host (version 2).
    #[cfg_attr(any(test, feature = "serde"), serde(default))]
    pub open_wait_given: bool,
}

// Every key present, `null` when absent.
json_struct!(BreakerSnapshot {
    version,
    config_digest,
    taken_at_ms,
    state,
    elapsed_in_state_ns,
    open_wait_ns,
    opens,
    trials_admitted,
    trials,
    trial_calls,
    consecutive_failures,
    calls,
    buckets,
    sampling,
    not_permitted,
    half_open_attempts,
    open_metrics,
    open_wait_given,
});

/// One Polly health window in a snapshot.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(any(test, feature = "serde"), derive(serde::Serialize))]
#[cfg_attr(test, derive(Deserialize))]
#[cfg_attr(any(test, feature = "serde"), serde(deny_unknown_fields))]
pub struct SamplingWindow {
    /// Nanoseconds since the window started.
    pub age_ns: u64,
    /// Successes in it.
    pub successes: u32,
    /// Failures in it.
    pub failures: u32,
}

json_struct!(SamplingWindow { age_ns, successes, failures });

/// Polly health metrics in a snapshot.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(any(test, feature = "serde"), derive(serde::Serialize))]
#[cfg_attr(test, derive(Deserialize))]
#[cfg_attr(any(test, feature = "serde"), serde(deny_unknown_fields))]
pub struct SamplingSnapshot {
    /// Single-window metrics: nanoseconds since the window started.
    pub started_age_ns: Option<u64>,
    /// Rolling windows, oldest first.
    pub windows: Vec<SamplingWindow>,
    /// Total successes.
    pub successes: u32,
    /// Total failures.
    pub failures: u32,
}

json_struct!(SamplingSnapshot { started_age_ns, windows, successes, failures });

impl BreakerSnapshot {
    /// Serialises the snapshot as JSON.
    pub fn to_json(&self) -> String {
        self.to_json_text()
    }

    /// Parses a snapshot from JSON.
    ///
    /// # Errors
    /// `invalid_snapshot` for anything that is not a snapshot.
    pub fn from_json(text: &str) -> Result<Self> {
        crate::limits::check_bytes(text.len(), crate::limits::MAX_SNAPSHOT_BYTES, "snapshot")?;
        let bad =
            |why: &str| Error::new(ErrorCode::InvalidSnapshot, "snapshot", format!("not a breaker snapshot: {why}"));
        let v = crate::doc::parse_any_size(text).map_err(|e| bad(e.reason()))?;
        snapshot::read(&v).map_err(|k| bad(&format!("`{k}` is missing, unknown or of the wrong type")))
    }
}

/// The snapshot's reader: what serde's derive read before (the types derive
/// `Deserialize` in tests, which hold the two together), but for a struct
/// written as an array of its fields, which serde also took. An error names
/// the member at fault.
mod snapshot {
    use super::{BreakerSnapshot, OpenMetrics, SamplingSnapshot, SamplingWindow, SnapshotBucket, State, WindowTotals};
    use crate::json::{Map, Value};

    type Read<T> = std::result::Result<T, String>;

    /// An object's members, none but `known` when `deny` (serde's `deny_unknown_fields`).
    fn object<'v>(v: &'v Value, known: &[&str], deny: bool) -> Read<&'v Map<String, Value>> {
        let m = v.as_object().ok_or_else(|| "(an object)".to_owned())?;
        match m.keys().find(|k| deny && !known.contains(&k.as_str())) {
            Some(k) => Err(k.clone()),
            None => Ok(m),
        }
    }

    fn req<'v>(m: &'v Map<String, Value>, k: &str) -> Read<&'v Value> {
        m.get(k).ok_or_else(|| k.to_owned())
    }

    /// A member read by `f`: required, or absent / `null` read as `None` (an `Option`).
    fn get<T>(m: &Map<String, Value>, k: &str, f: impl Fn(&Value) -> Option<T>) -> Read<T> {
        f(req(m, k)?).ok_or_else(|| k.to_owned())
    }
    fn opt<T>(m: &Map<String, Value>, k: &str, f: impl Fn(&Value) -> Option<T>) -> Read<Option<T>> {
        match m.get(k) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => f(v).map(Some).ok_or_else(|| k.to_owned()),
        }
    }
    /// A member with a default when absent (serde's `#[serde(default)]`: a `null` is an error).
    fn or_default<T: Default>(m: &Map<String, Value>, k: &str, f: impl Fn(&Value) -> Option<T>) -> Read<T> {
        m.get(k).map_or(Ok(T::default()), |v| f(v).ok_or_else(|| k.to_owned()))
    }

    fn u32_of(v: &Value) -> Option<u32> {
        v.as_u64().and_then(|x| u32::try_from(x).ok())
    }
    fn bits(v: &Value) -> Option<Vec<u8>> {
        v.as_array()?.iter().map(|x| x.as_u64().and_then(|x| u8::try_from(x).ok())).collect()
    }
    fn list<T>(v: &Value, f: impl Fn(&Value) -> Read<T>) -> Option<Vec<T>> {
        v.as_array()?.iter().map(|x| f(x).ok()).collect()
    }

    fn totals(v: &Value) -> Read<WindowTotals> {
        let m = object(v, &[], false)?;
        Ok(WindowTotals {
            calls: get(m, "calls", u32_of)?,
            failures: get(m, "failures", u32_of)?,
            slow: get(m, "slow", u32_of)?,
            slow_failures: or_default(m, "slow_failures", u32_of)?,
        })
    }

    fn bucket(v: &Value) -> Read<SnapshotBucket> {
        let m = object(v, &["age_s", "calls", "failures", "slow", "slow_failures"], true)?;
        Ok(SnapshotBucket {
            age_s: get(m, "age_s", Value::as_u64)?,
            calls: get(m, "calls", u32_of)?,
            failures: get(m, "failures", u32_of)?,
            slow: get(m, "slow", u32_of)?,
            slow_failures: or_default(m, "slow_failures", u32_of)?,
        })
    }

    fn sampling(v: &Value) -> Read<SamplingSnapshot> {
        let m = object(v, &["started_age_ns", "windows", "successes", "failures"], true)?;
        let window = |v: &Value| -> Read<SamplingWindow> {
            let m = object(v, &["age_ns", "successes", "failures"], true)?;
            Ok(SamplingWindow {
                age_ns: get(m, "age_ns", Value::as_u64)?,
                successes: get(m, "successes", u32_of)?,
                failures: get(m, "failures", u32_of)?,
            })
        };
        Ok(SamplingSnapshot {
            started_age_ns: opt(m, "started_age_ns", Value::as_u64)?,
            windows: get(m, "windows", |v| list(v, window))?,
            successes: get(m, "successes", u32_of)?,
            failures: get(m, "failures", u32_of)?,
        })
    }

    pub(super) fn read(v: &Value) -> Read<BreakerSnapshot> {
        const KNOWN: &[&str] = &[
            "version",
            "config_digest",
            "taken_at_ms",
            "state",
            "elapsed_in_state_ns",
            "open_wait_ns",
            "opens",
            "trials_admitted",
            "trials",
            "trial_calls",
            "consecutive_failures",
            "calls",
            "buckets",
            "sampling",
            "not_permitted",
            "half_open_attempts",
            "open_metrics",
            "open_wait_given",
        ];
        let m = object(v, KNOWN, true)?;
        let open_metrics = |v: &Value| match v.as_str()? {
            "window" => Some(OpenMetrics::Window),
            "trials" => Some(OpenMetrics::Trials),
            "empty" => Some(OpenMetrics::Empty),
            _ => None,
        };
        Ok(BreakerSnapshot {
            version: get(m, "version", u32_of)?,
            config_digest: get(m, "config_digest", |v| v.as_str().map(str::to_owned))?,
            taken_at_ms: get(m, "taken_at_ms", Value::as_u64)?,
            state: get(m, "state", |v| v.as_str().and_then(State::from_code))?,
            elapsed_in_state_ns: get(m, "elapsed_in_state_ns", Value::as_u64)?,
            open_wait_ns: get(m, "open_wait_ns", Value::as_u64)?,
            opens: get(m, "opens", u32_of)?,
            trials_admitted: get(m, "trials_admitted", u32_of)?,
            trials: totals(req(m, "trials")?).map_err(|k| format!("trials.{k}"))?,
            trial_calls: opt(m, "trial_calls", bits)?,
            consecutive_failures: get(m, "consecutive_failures", u32_of)?,
            calls: opt(m, "calls", bits)?,
            buckets: opt(m, "buckets", |v| list(v, bucket))?,
            sampling: match m.get("sampling") {
                None | Some(Value::Null) => None,
                Some(v) => Some(sampling(v).map_err(|k| format!("sampling.{k}"))?),
            },
            not_permitted: or_default(m, "not_permitted", Value::as_u64)?,
            half_open_attempts: or_default(m, "half_open_attempts", u32_of)?,
            open_metrics: or_default(m, "open_metrics", open_metrics)?,
            open_wait_given: or_default(m, "open_wait_given", Value::as_bool)?,
        })
    }
}

impl BreakerConfig {
    /// Describes the breaker in one line, for `explain`.
    pub fn describe(&self) -> String {
        let c = self;
        match c.kind {
            BreakerKind::Consecutive => format!(
                "opens after {} consecutive failures; stays open {}; then one probe call",
                c.failure_threshold,
                format_duration(c.wait_duration_in_open_state)
            ),
            BreakerKind::Sampling => format!(
                "opens on a failure when ≥ {} of at least {} calls in the last {} failed (Polly); stays open {}; then one probe call",
                c.failure_ratio,
                c.minimum_number_of_calls,
                format_duration(c.sampling_duration),
                format_duration(c.wait_duration_in_open_state)
            ),
            kind => format!(
                "opens when ≥ {}% of the last {} {} fail or ≥ {}% are slower than {} (judged after {} calls); stays open {}{}; then {} trial calls decide",
                c.failure_rate_threshold,
                c.sliding_window_size,
                if kind == BreakerKind::CountBased { "calls" } else { "seconds of calls" },
                c.slow_call_rate_threshold,
                format_duration(c.slow_call_duration_threshold),
                if kind == BreakerKind::CountBased { c.minimum_number_of_calls.min(c.sliding_window_size) } else { c.minimum_number_of_calls },
                format_duration(c.wait_duration_in_open_state),
                if c.wait_multiplier > 1.0 {
                    format!(" (×{} per re-open, up to {})", c.wait_multiplier, format_duration(c.max_wait_duration_in_open_state))
                } else {
                    String::new()
                },
                c.permitted_number_of_calls_in_half_open_state
            ),
        }
    }
}

impl CircuitBreaker {
    /// Describes the breaker in one line (its settings), for `explain`.
    pub fn describe(&self) -> String {
        self.config.describe()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = NS_PER_S;

    fn small() -> BreakerConfig {
        BreakerConfig {
            minimum_number_of_calls: 4,
            sliding_window_size: 4,
            wait_duration_in_open_state: 10 * S,
            max_wait_duration_in_open_state: 10 * S,
            permitted_number_of_calls_in_half_open_state: 2,
            ..Default::default()
        }
    }

    fn call(b: &mut CircuitBreaker, now: u64, c: Counted) -> Option<Transition> {
        match b.try_acquire(now).0 {
            Acquire::Permitted(p) => b.on_result(p, now, c, 0),
            Acquire::Rejected { .. } => panic!("rejected at {now}"),
        }
    }

    #[test]
    fn typed_over_reads_bare_numbers_only_in_the_keyword_options() {
        let c =
            BreakerConfig::from_typed_over(&json!({"name": "b"}), &json!({"wait_duration_in_open_state": 2.5}), 1e9)
                .unwrap();
        assert_eq!(c.wait_duration_in_open_state, 2_500_000_000);
        let e =
            BreakerConfig::from_typed_over(&json!({"wait_duration_in_open_state": 10}), &json!({}), 1e9).unwrap_err();
        assert_eq!((e.code(), e.field()), ("invalid_duration", "wait_duration_in_open_state"));
        // An alias counts as the key it stands for.
        let e =
            BreakerConfig::from_typed_over(&json!({"wait_duration": 10}), &json!({"minimum_number_of_calls": 5}), 1e9)
                .unwrap_err();
        assert_eq!((e.code(), e.field()), ("invalid_duration", "wait_duration"));
        let c = BreakerConfig::from_typed_over(&Value::Null, &json!({"wait_duration": 2}), 1e9).unwrap();
        assert_eq!(c.wait_duration_in_open_state, 2 * S);
        let c =
            BreakerConfig::from_typed_over(&json!({"wait_duration_in_open_state": "3s"}), &Value::Null, 1e9).unwrap();
        assert_eq!(c.wait_duration_in_open_state, 3 * S);
        // The keyword wins over the document's key.
        let c = BreakerConfig::from_typed_over(
            &json!({"wait_duration_in_open_state": 10}),
            &json!({"wait_duration_in_open_state": 1}),
            1e9,
        )
        .unwrap();
        assert_eq!(c.wait_duration_in_open_state, S);
    }

    #[test]
    fn needs_message_only_with_a_message_counting_rule() {
        let cfg = |v: crate::json::Value| BreakerConfig::from_json_value(&v, "").unwrap();
        assert!(!BreakerConfig::default().needs_message());
        assert!(!cfg(json!({"count": [{"name": "ValueError", "count": "ignored"}]})).needs_message());
        assert!(cfg(json!({"count": [{"message": "quota", "count": "ignored"}]})).needs_message());
    }

    #[test]
    fn opens_at_threshold_and_half_opens_strictly_after_wait() {
        let mut b = CircuitBreaker::new(small()).unwrap();
        assert!(call(&mut b, 0, Counted::Failure).is_none());
        assert!(call(&mut b, 1, Counted::Success).is_none());
        assert!(call(&mut b, 2, Counted::Success).is_none());
        let t = call(&mut b, 3, Counted::Failure).unwrap();
        assert_eq!((t.from, t.to, t.reason), (State::Closed, State::Open, TransitionReason::FailureRate));
        let (a, _) = b.try_acquire(3 + 10 * S);
        assert_eq!(a, Acquire::Rejected { state: State::Open, retry_after: 1 });
        let (a, t) = b.try_acquire(3 + 10 * S + 1);
        assert!(matches!(a, Acquire::Permitted(p) if p.is_trial()));
        assert_eq!(t.unwrap().to, State::HalfOpen);
    }

    #[test]
    fn half_open_admits_only_permitted_and_stale_permits_are_ignored() {
        let mut b = CircuitBreaker::new(small()).unwrap();
        let old = match b.try_acquire(0).0 {
            Acquire::Permitted(p) => p,
            _ => unreachable!(),
        };
        b.transition_to(State::Open, 0).unwrap();
        assert!(b.on_result(old, 1, Counted::Failure, 0).is_none());
        let (a1, _) = b.try_acquire(11 * S);
        let (a2, _) = b.try_acquire(11 * S);
        let (a3, _) = b.try_acquire(11 * S);
        assert!(matches!(a1, Acquire::Permitted(_)));
        assert!(matches!(a2, Acquire::Permitted(_)));
        assert!(matches!(a3, Acquire::Rejected { state: State::HalfOpen, .. }));
        if let Acquire::Permitted(p) = a2 {
            b.release(p, 11 * S);
        }
        assert!(matches!(b.try_acquire(11 * S).0, Acquire::Permitted(_)));
    }

    #[test]
    fn half_open_times_out() {
        let mut b = CircuitBreaker::new(small()).unwrap();
        assert_eq!(b.transition_to(State::HalfOpen, 0).unwrap_err().code(), "invalid_transition");
        b.transition_to(State::Open, 0).unwrap();
        b.transition_to(State::HalfOpen, 0).unwrap();
        let (a, _) = b.try_acquire(1);
        let p = match a {
            Acquire::Permitted(p) => p,
            _ => unreachable!(),
        };
        let t = b.on_result(p, 60 * S, Counted::Success, 0).unwrap();
        assert_eq!(t.reason, TransitionReason::HalfOpenTimeout);
        assert_eq!(b.state(), State::Open);
    }

    /// Restores `snap` after `edit`, returning the error's code and field.
    fn refused(
        cfg: &BreakerConfig,
        mut snap: BreakerSnapshot,
        edit: impl FnOnce(&mut BreakerSnapshot),
    ) -> (String, String) {
        edit(&mut snap);
        let e = CircuitBreaker::restore(cfg.clone(), &snap, 0, 0).unwrap_err();
        (e.code().to_owned(), e.field().to_owned())
    }

    #[test]
    fn restore_refuses_counts_that_cannot_happen() {
        let is = |f: &str| ("invalid_snapshot".to_owned(), f.to_owned());
        let count = small();
        let snap = CircuitBreaker::new(count.clone()).unwrap().snapshot(0, 0);
        assert_eq!(refused(&count, snap.clone(), |s| s.calls = Some(vec![0; 5])), is("snapshot.calls"));
        assert_eq!(refused(&count, snap.clone(), |s| s.calls = Some(vec![0, 4])), is("snapshot.calls[1]"));
        assert_eq!(refused(&count, snap.clone(), |s| s.trials_admitted = 3), is("snapshot.trials_admitted"));
        assert_eq!(
            refused(&count, snap.clone(), |s| {
                s.state = State::HalfOpen;
                s.trials_admitted = 1;
                s.trials = WindowTotals { calls: 2, ..Default::default() };
            }),
            is("snapshot.trials.calls")
        );
        assert_eq!(
            refused(&count, snap.clone(), |s| {
                s.trials_admitted = 2;
                s.trials = WindowTotals { calls: 1, failures: 2, ..Default::default() };
            }),
            is("snapshot.trials.failures")
        );
        assert_eq!(
            refused(&count, snap.clone(), |s| {
                s.trials_admitted = 2;
                s.trials = WindowTotals { calls: 1, slow: 2, ..Default::default() };
            }),
            is("snapshot.trials.slow")
        );
        let time = BreakerConfig { kind: BreakerKind::TimeBased, sliding_window_size: 10, ..small() };
        let snap = CircuitBreaker::new(time.clone()).unwrap().snapshot(0, 0);
        let bucket = |age_s, calls, failures, slow| SnapshotBucket { age_s, calls, failures, slow, slow_failures: 0 };
        assert_eq!(
            refused(&time, snap.clone(), |s| s.buckets = Some(vec![bucket(0, 1, 2, 0)])),
            is("snapshot.buckets[0].failures")
        );
        assert_eq!(
            refused(&time, snap.clone(), |s| s.buckets = Some(vec![bucket(0, 1, 0, 2)])),
            is("snapshot.buckets[0].slow")
        );
        assert_eq!(
            refused(&time, snap.clone(), |s| s.buckets = Some(vec![bucket(1, u32::MAX, 0, 0), bucket(0, 1, 0, 0)])),
            is("snapshot.buckets[1].calls")
        );
        // Wrapping sums are refused even in buckets too old to be kept.
        assert_eq!(
            refused(&time, snap.clone(), |s| s.buckets =
                Some(vec![bucket(99, u32::MAX, u32::MAX, 0), bucket(0, 1, 1, 0)])),
            is("snapshot.buckets[1].calls")
        );
        let ok = CircuitBreaker::restore(time.clone(), &snap, 0, 0);
        assert!(ok.is_ok());
    }

    /// What serde's derive reads `text` as (the reader before the hand-written one).
    fn derived(text: &str) -> std::result::Result<BreakerSnapshot, String> {
        serde_json::from_str(text).map_err(|e| e.to_string())
    }

    /// The hand-written reader and the derive agree, but where the derive
    /// took a struct written as an array, or a key twice (both refused now).
    fn same_as_derive(text: &str) {
        let ours = BreakerSnapshot::from_json(text);
        match (ours, derived(text)) {
            (Ok(a), Ok(b)) => assert_eq!(a, b, "{text}"),
            (Err(e), Err(_)) => assert_eq!(e.code(), "invalid_snapshot"),
            (Err(e), Ok(_)) if e.reason().contains("duplicate key") || e.reason().contains("nesting deeper") => {}
            (Err(e), Ok(_)) => {
                // Only a struct written as an array of its fields may differ.
                let v: crate::json::Value = serde_json::from_str::<serde_json::Value>(text).unwrap().into();
                let arrays =
                    |x: Option<&Value>| x.and_then(Value::as_array).is_some_and(|xs| xs.iter().any(Value::is_array));
                let as_array = v["trials"].is_array()
                    || v["sampling"].is_array()
                    || arrays(v.get("buckets"))
                    || arrays(v["sampling"].get("windows"));
                assert!(as_array, "{text}: refused ({e}) but the derive reads it");
            }
            (Ok(a), Err(e)) => panic!("{text}: read as {a:?} but the derive refuses it ({e})"),
        }
    }

    #[test]
    fn the_snapshot_reader_is_the_derives_on_the_fuzz_corpus() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../fuzz/corpus/snapshot_restore");
        let mut n = 0;
        for e in std::fs::read_dir(dir).unwrap() {
            if let Ok(text) = std::fs::read_to_string(e.unwrap().path()) {
                same_as_derive(&text);
                n += 1;
            }
        }
        assert!(n > 1000, "{n} inputs");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(3000))]
        /// Snapshots of breakers of every kind, a member removed, added or
        /// given a value of another type, read as the derive read them.
        #[test]
        fn the_snapshot_reader_is_the_derives(
            kind in 0usize..4,
            fails in 0u64..8,
            edits in proptest::collection::vec((0usize..26, 0usize..12, 0usize..3), 0..4),
        ) {
            let c = [
                small(),
                BreakerConfig { kind: BreakerKind::TimeBased, sliding_window_size: 3, minimum_number_of_calls: 2, ..small() },
                BreakerConfig { kind: BreakerKind::Consecutive, ..small() },
                BreakerConfig { kind: BreakerKind::Sampling, ..small() },
            ][kind].clone();
            let Ok(mut b) = CircuitBreaker::new(c) else { return Ok(()) };
            for i in 0..fails {
                if let Acquire::Permitted(p) = b.try_acquire(i * S / 2).0 {
                    b.on_result(p, i * S / 2, if i % 3 == 0 { Counted::Success } else { Counted::Failure }, 0);
                }
            }
            // Written as serde's derive wrote them: the snapshot, the metrics, the break arguments.
            let snap = b.snapshot(fails * S, 1_000);
            let mut v = snap.to_value();
            proptest::prop_assert_eq!(&v, &crate::json::Value::from(serde_json::to_value(&snap).unwrap()));
            proptest::prop_assert_eq!(snap.to_json(), serde_json::to_string(&snap).unwrap());
            let m = b.metrics(fails * S);
            proptest::prop_assert_eq!(m.to_value(), crate::json::Value::from(serde_json::to_value(m).unwrap()));
            let a = b.break_arguments(fails * S);
            proptest::prop_assert_eq!(a.to_value(), crate::json::Value::from(serde_json::to_value(a).unwrap()));
            let keys = ["version", "config_digest", "taken_at_ms", "state", "elapsed_in_state_ns", "open_wait_ns",
                "opens", "trials_admitted", "trials", "trial_calls", "consecutive_failures", "calls", "buckets",
                "sampling", "not_permitted", "half_open_attempts", "open_metrics", "open_wait_given", "extra",
                "trials.calls", "trials.slow_failures", "trials.extra", "sampling.windows", "sampling.started_age_ns",
                "sampling.extra", "sampling.successes"];
            let values = [json!(null), json!(1), json!(-1), json!(1.5),
                json!("open"), json!("trials"), json!([]), json!({}),
                json!([1, 2]), json!([256]), json!(u64::MAX), json!(true)];
            for (k, x, op) in edits {
                let (obj, key) = match keys[k].split_once('.') {
                    Some((outer, inner)) => (v.get_mut(outer).and_then(|r| r.as_object_mut()), inner),
                    None => (v.as_object_mut(), keys[k]),
                };
                if let Some(obj) = obj {
                    if op == 0 { obj.remove(key); } else { obj.insert(key.to_owned(), values[x].clone()); }
                }
            }
            same_as_derive(&v.to_string());
        }
    }

    #[test]
    fn states_are_written_as_the_derive_wrote_them() {
        for st in State::ALL {
            assert_eq!(st.to_value(), crate::json::Value::from(serde_json::to_value(st).unwrap()));
        }
        for m in [OpenMetrics::Window, OpenMetrics::Trials, OpenMetrics::Empty] {
            assert_eq!(m.to_value(), crate::json::Value::from(serde_json::to_value(m).unwrap()));
        }
    }

    #[test]
    fn snapshot_restores_with_stored_time() {
        let mut b = CircuitBreaker::new(small()).unwrap();
        for i in 0..4 {
            call(&mut b, i, Counted::Failure);
        }
        assert_eq!(b.state(), State::Open);
        let snap = b.snapshot(4 * S, 1_000_000);
        let json = snap.to_json();
        let back = BreakerSnapshot::from_json(&json).unwrap();
        // A snapshot's limit is max_snapshot_bytes, not the documents' 1 MiB.
        assert_eq!(BreakerSnapshot::from_json(&format!("{json}{}", " ".repeat(2 << 20))).unwrap(), back);
        // Restored 3 s later (wall) in a process whose clock reads 500 s.
        let mut r = CircuitBreaker::restore(small(), &back, 500 * S, 1_003_000).unwrap();
        // Opened at ~3 ns; wait 10 s; 4 s elapsed + 3 s stored → 3 s left.
        assert!(matches!(r.try_acquire(500 * S + 2 * S).0, Acquire::Rejected { .. }));
        assert!(matches!(r.try_acquire(500 * S + 4 * S).0, Acquire::Permitted(_)));
        let other = BreakerConfig { sliding_window_size: 5, ..small() };
        assert_eq!(CircuitBreaker::restore(other, &back, 0, 0).unwrap_err().code(), "snapshot_mismatch");
    }

    #[test]
    fn time_window_forgets_old_seconds() {
        let c = BreakerConfig {
            kind: BreakerKind::TimeBased,
            sliding_window_size: 2,
            minimum_number_of_calls: 3,
            ..small()
        };
        let mut b = CircuitBreaker::new(c).unwrap();
        call(&mut b, 0, Counted::Failure);
        call(&mut b, S, Counted::Failure);
        // The failure at 0 s left the window at 2 s.
        assert!(call(&mut b, 2 * S, Counted::Failure).is_none());
        assert_eq!(b.totals().calls, 2);
        assert!(call(&mut b, 2 * S + 1, Counted::Failure).is_some());
    }

    #[test]
    fn memory_stays_small() {
        let count = CircuitBreaker::new(BreakerConfig::default()).unwrap();
        assert!(count.memory_size() <= 1024, "{}", count.memory_size());
        let time = CircuitBreaker::new(BreakerConfig {
            kind: BreakerKind::TimeBased,
            sliding_window_size: 60,
            ..BreakerConfig::default()
        })
        .unwrap();
        assert!(time.memory_size() <= 2048, "{}", time.memory_size());
    }

    /// What `free_admission` and `free_success` promise: the call they let a
    /// host skip changes nothing but the clock.
    #[test]
    fn free_admissions_and_successes_change_nothing_but_the_clock() {
        let kinds = [
            BreakerConfig { kind: BreakerKind::Consecutive, failure_threshold: 3, ..small() },
            BreakerConfig { slow_call_duration_threshold: 5 * S, ..small() },
            BreakerConfig { kind: BreakerKind::TimeBased, ..small() },
            BreakerConfig { kind: BreakerKind::Sampling, failure_ratio: 0.5, ..small() },
            BreakerConfig { initial_state: State::MetricsOnly, ..small() },
            BreakerConfig { initial_state: State::Disabled, ..small() },
        ];
        for c in kinds {
            let mut b = CircuitBreaker::new(c).unwrap();
            let mut now = 0;
            let mut freed = 0;
            // One slow success (the fourth) and one failure: neither opens `small()`.
            let mut script = vec![Counted::Success; 6];
            script.push(Counted::Failure);
            script.extend(vec![Counted::Success; 8]);
            for (i, c) in script.into_iter().enumerate() {
                now += S / 3;
                let mut clocked = b.clone();
                let epoch = b.free_admission();
                let Acquire::Permitted(p) = b.try_acquire(now).0 else { panic!("refused") };
                clocked.clock(now);
                if let Some(e) = epoch {
                    assert_eq!((p.epoch(), p.is_trial()), (e, false));
                    assert_eq!(b, clocked, "admission {i}");
                }
                let free = b.free_success();
                // A success longer than the limit (when there is one) is slow.
                let d = if i == 3 { b.free_success_limit().saturating_add(1).min(6 * S) } else { S / 10 };
                let before = b.clone();
                b.on_result(p, now, c, d);
                if free && c == Counted::Success && d <= b.free_success_limit() {
                    freed += 1;
                    let mut clocked = before;
                    clocked.clock(now);
                    let (x, y) = (b.snapshot(now, 0), clocked.snapshot(now, 0));
                    assert_eq!(x, y, "success {i} of {:?}", b.config().kind);
                    assert_eq!(
                        (b.state(), b.epoch, b.rejections, b.transitions),
                        (clocked.state, clocked.epoch, clocked.rejections, clocked.transitions)
                    );
                    assert_eq!(b.metrics(now), clocked.metrics(now));
                }
            }
            // Time buckets and Polly's health metrics count every success.
            let kind = b.config().kind;
            let quiet = matches!(kind, BreakerKind::Consecutive | BreakerKind::CountBased);
            assert_eq!(freed > 0, quiet, "{kind:?} in {:?}: {freed}", b.state());
        }
        // An open or half-open breaker, or a forced open one, admits nothing freely.
        let mut b = CircuitBreaker::new(small()).unwrap();
        b.transition_to(State::Open, 0).unwrap();
        assert_eq!((b.free_admission(), b.free_success()), (None, false));
        b.transition_to(State::ForcedOpen, 0).unwrap();
        assert_eq!((b.free_admission(), b.free_success()), (None, false));
    }

    #[test]
    fn consecutive_breaker() {
        let c = BreakerConfig { kind: BreakerKind::Consecutive, failure_threshold: 3, ..small() };
        let mut b = CircuitBreaker::new(c).unwrap();
        call(&mut b, 0, Counted::Failure);
        call(&mut b, 1, Counted::Failure);
        call(&mut b, 2, Counted::Success);
        call(&mut b, 3, Counted::Failure);
        call(&mut b, 4, Counted::Failure);
        let t = call(&mut b, 5, Counted::Failure).unwrap();
        assert_eq!(t.reason, TransitionReason::ConsecutiveFailures);
    }
}

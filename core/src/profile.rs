//! Compatibility profiles: another library's retry arithmetic, exactly.
//!
//! Teams migrate from a library whose behaviour they know. A policy naming
//! a `profile` reproduces that anchor's backoff, jitter, rounding, budget
//! and breaker arithmetic — given the same random draws — with its
//! defaults, and may add its anchor's error codes to the tables. A profile
//! never weakens the allow-list or the idempotency gating: attempts,
//! classification and gating stay retrycore's. `docs/profiles.md` lists
//! each formula, its source, and each deviation from the anchor.

use crate::json::Value;
use crate::{Error, ErrorCode, Result};

/// An anchor whose arithmetic a policy reproduces.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Profile {
    /// botocore standard mode ("2.0"): `r·min(1s·2^(n−1), 20s)`, 3 attempts, the 500/5/10/+1 quota.
    AwsStandard,
    /// The opt-in 2026 AWS retry behaviour (smithy-typescript `SMITHY_NEW_RETRIES_2026`):
    /// bases 50 ms / 1000 ms (throttling), costs 14 / 5, whole milliseconds, Retry-After clamp
    /// `max(t, min(ra, t + 5s))`.
    Aws2026,
    /// gRFC A6 as revised in 2024 (grpc-go): `min(initial·mult^k, max)·(0.8 + 0.4r)`, k retries
    /// since the last pushback; the pushback alone; `max_attempts` capped at 5.
    Grpc,
    /// Polly v8 `RetryHelper`: 0-based attempt, ±25 % jitter (constant, linear) or
    /// DecorrelatedJitterV2 (exponential), `MaxDelay` after jitter, 100 ns ticks.
    Polly,
    /// resilience4j `IntervalFunction`: exponential with truncation to whole ms at each step,
    /// randomization with the `+1` and `max(1, ·)`, the cap after jitter.
    Resilience4j,
    /// Finagle's `RetryBudget` (ttl 10 s, 10/s, 20 %) with its integer scaling.
    Finagle,
    /// tenacity: `wait_exponential_jitter` (additive jitter), `wait_random_exponential` (full),
    /// `wait_exponential` (none), in float seconds, cap after jitter.
    Tenacity,
    /// stamina: tenacity's `wait_exponential_jitter` with stamina's defaults
    /// (0.1 s, ×2, +1 s jitter, 5 s cap, 10 attempts, 45 s).
    Stamina,
    /// Envoy: fully jittered `floor(r·(2^n − 1)·base)` ms, base 25 ms, max 250 ms; budget 20 %, min 3.
    Envoy,
}

impl Profile {
    /// Returns true when the anchor has its own delay formula (aws-standard
    /// and finagle use retrycore's, with the anchor's defaults).
    pub const fn has_own_formula(self) -> bool {
        !matches!(self, Profile::AwsStandard | Profile::Finagle)
    }

    /// Returns true for anchors that apply their cap after the jitter and
    /// accept a cap below the first delay (Polly, resilience4j, tenacity, stamina).
    pub const fn caps_after_jitter(self) -> bool {
        matches!(self, Profile::Polly | Profile::Resilience4j | Profile::Tenacity | Profile::Stamina)
    }

    /// Checks that the jitter selects one of the anchor's variants.
    pub(crate) fn check_jitter(self, kind: crate::backoff::BackoffKind, jitter: crate::backoff::Jitter) -> Result<()> {
        use crate::backoff::{BackoffKind, Jitter};
        let ok = match self {
            Profile::AwsStandard | Profile::Finagle => true,
            Profile::Aws2026 | Profile::Envoy => jitter == Jitter::Full && kind == BackoffKind::Exponential,
            Profile::Grpc => matches!(jitter, Jitter::Symmetric(_) | Jitter::None) && kind == BackoffKind::Exponential,
            Profile::Polly => kind != BackoffKind::Decorrelated,
            Profile::Resilience4j => {
                matches!(jitter, Jitter::Symmetric(_) | Jitter::None) && kind == BackoffKind::Exponential
            }
            Profile::Tenacity | Profile::Stamina => {
                matches!(jitter, Jitter::Additive(_) | Jitter::Full | Jitter::None) && kind == BackoffKind::Exponential
            }
        };
        if ok {
            return Ok(());
        }
        let want = match self {
            Profile::Aws2026 | Profile::Envoy => "exponential backoff with full jitter",
            Profile::Grpc => "exponential backoff with jitter symmetric(0.2) (A6's U(0.8, 1.2)) or none",
            Profile::Polly => "constant, linear or exponential backoff (jitter none = UseJitter false, any other = true)",
            Profile::Resilience4j => "exponential backoff with jitter none or symmetric(randomization factor)",
            _ => "exponential backoff with additive (wait_exponential_jitter), full (wait_random_exponential) or no jitter",
        };
        Err(Error::new(
            ErrorCode::InvalidCombination,
            "profile",
            format!(
                "the {} profile reproduces {want}; got {} backoff with {} jitter",
                self.name(),
                kind.name(),
                jitter.name()
            ),
        ))
    }

    /// Every profile.
    pub const ALL: [Profile; 9] = [
        Profile::AwsStandard,
        Profile::Aws2026,
        Profile::Grpc,
        Profile::Polly,
        Profile::Resilience4j,
        Profile::Finagle,
        Profile::Tenacity,
        Profile::Stamina,
        Profile::Envoy,
    ];

    /// Returns the document name (`"aws-standard"`, …).
    pub const fn name(self) -> &'static str {
        match self {
            Profile::AwsStandard => "aws-standard",
            Profile::Aws2026 => "aws-2026",
            Profile::Grpc => "grpc",
            Profile::Polly => "polly",
            Profile::Resilience4j => "resilience4j",
            Profile::Finagle => "finagle",
            Profile::Tenacity => "tenacity",
            Profile::Stamina => "stamina",
            Profile::Envoy => "envoy",
        }
    }

    /// Parses a name (`aws-standard-2026` is accepted for `aws-2026`).
    pub fn from_name(s: &str) -> Option<Profile> {
        if s == "aws-standard-2026" {
            return Some(Profile::Aws2026);
        }
        Profile::ALL.iter().copied().find(|p| p.name() == s)
    }

    /// Reads a profile name, naming `field` in the error.
    pub(crate) fn parse(s: &str, field: &str) -> Result<Profile> {
        Profile::from_name(s).ok_or_else(|| {
            let names: Vec<&str> = Profile::ALL.iter().map(|p| p.name()).collect();
            Error::new(
                ErrorCode::InvalidValue,
                field.to_owned(),
                format!("is not a profile: {s:?} (known: {})", names.join(", ")),
            )
        })
    }

    /// The document settings the profile supplies where the document gives none.
    pub fn defaults(self) -> Value {
        // Text, read by the document parser: a json! literal of each would be
        // ~1 KB of code apiece in the wasm module (docs/js.md, "Size").
        crate::doc::parse_json(self.defaults_text())
            .expect("a profile's defaults are JSON (every_profile_has_valid_defaults)")
    }

    fn defaults_text(self) -> &'static str {
        match self {
            Profile::AwsStandard => {
                r#"{
                "max_attempts": 3, "backoff": "exponential", "initial": "1s", "multiplier": 2,
                "max_delay": "20s", "jitter": "full",
                "budget": {"kind": "token_bucket", "capacity": 500, "retry_cost": 5, "timeout_cost": 10, "throttling_cost": 5, "success_increment": 1}
            }"#
            }
            Profile::Aws2026 => {
                r#"{
                "max_attempts": 3, "backoff": "exponential", "initial": "50ms", "multiplier": 2,
                "max_delay": "20s", "jitter": "full",
                "budget": {"kind": "token_bucket", "capacity": 500, "retry_cost": 14, "timeout_cost": 14, "throttling_cost": 5, "success_increment": 1}
            }"#
            }
            Profile::Grpc => {
                r#"{
                "max_attempts": 5, "backoff": "exponential", "initial": "100ms", "multiplier": 2,
                "max_delay": "20s", "jitter": {"kind": "symmetric", "factor": 0.2}
            }"#
            }
            Profile::Polly => {
                r#"{
                "max_attempts": 4, "backoff": "constant", "initial": "2s", "jitter": "none",
                "max_delay": "18446744073709551615ns"
            }"#
            }
            Profile::Resilience4j => {
                r#"{
                "max_attempts": 3, "backoff": "exponential", "initial": "500ms", "multiplier": 1.5,
                "max_delay": "18446744073709551615ns", "jitter": {"kind": "symmetric", "factor": 0.5}
            }"#
            }
            Profile::Finagle => {
                r#"{
                "budget": {"kind": "finagle", "ttl": "10s", "min_retries_per_second": 10, "percent_can_retry": 0.2}
            }"#
            }
            Profile::Tenacity => {
                r#"{
                "backoff": "exponential", "initial": "1s", "multiplier": 2,
                "max_delay": "18446744073709551615ns", "jitter": {"kind": "additive", "amount": "1s"}
            }"#
            }
            Profile::Stamina => {
                r#"{
                "max_attempts": 10, "deadline": "45s", "backoff": "exponential", "initial": "100ms", "multiplier": 2,
                "max_delay": "5s", "jitter": {"kind": "additive", "amount": "1s"}
            }"#
            }
            Profile::Envoy => {
                r#"{
                "max_attempts": 2, "backoff": "exponential", "initial": "25ms", "max_delay": "250ms", "jitter": "full",
                "budget": {"kind": "concurrency", "ratio": 0.2, "min_concurrency": 3}
            }"#
            }
        }
    }

    /// The most attempts the anchor allows (gRPC caps `maxAttempts` at 5).
    pub(crate) fn max_attempts_cap(self) -> Option<u32> {
        matches!(self, Profile::Grpc).then_some(5)
    }

    /// The anchor's own source, for docs and explain.
    pub const fn source(self) -> &'static str {
        match self {
            Profile::AwsStandard => "boto/botocore botocore/retries/standard.py (ExponentialBackoff, RetryQuotaChecker), quota.py",
            Profile::Aws2026 => "smithy-lang/smithy-typescript packages/util-retry (retries-2026-config.ts, DefaultRetryBackoffStrategy.ts, StandardRetryStrategy.ts)",
            Profile::Grpc => "grpc/proposal A6-client-retries.md (2024 revision, PR #452); grpc-go stream.go (*csAttempt).shouldRetry",
            Profile::Polly => "App-vNext/Polly src/Polly.Core/Retry/RetryHelper.cs; CircuitBreaker/Health/RollingHealthMetrics.cs",
            Profile::Resilience4j => "resilience4j-core core/IntervalFunction.java (ofExponentialRandomBackoff, randomize)",
            Profile::Finagle => "twitter/finagle finagle-core service/RetryBudget.scala; twitter/util TokenBucket.scala, WindowedAdder.scala",
            Profile::Tenacity => "jd/tenacity tenacity/wait.py (wait_exponential_jitter, wait_random_exponential, wait_exponential)",
            Profile::Stamina => "hynek/stamina src/stamina/_core.py (retry → tenacity wait_exponential_jitter)",
            Profile::Envoy => "envoyproxy/envoy docs and source/common/common/backoff_strategy.cc (JitteredBackOffStrategy), resource_manager_impl.h",
        }
    }
}

/// AWS error codes the `aws-standard` and `aws-2026` profiles add to the
/// name tables (botocore `retries/standard.py`: `_THROTTLED_ERROR_CODES`,
/// `_TRANSIENT_ERROR_CODES`; smithy-typescript `service-error-classification`).
/// Bindings pass an AWS error code (botocore `ClientError.response["Error"]["Code"]`,
/// the JS SDK's `err.name`) as a name in the cause chain.
pub const AWS_CODES: &[(&str, crate::classify::Category)] = {
    use crate::classify::Category::{Overloaded, Timeout};
    &[
        ("BandwidthLimitExceeded", Overloaded),
        ("EC2ThrottledException", Overloaded),
        ("LimitExceededException", Overloaded),
        ("PriorRequestNotComplete", Overloaded),
        ("ProvisionedThroughputExceededException", Overloaded),
        ("RequestLimitExceeded", Overloaded),
        ("RequestThrottled", Overloaded),
        ("RequestThrottledException", Overloaded),
        ("RequestTimeout", Timeout),
        ("RequestTimeoutException", Timeout),
        ("SlowDown", Overloaded),
        ("ThrottledException", Overloaded),
        ("Throttling", Overloaded),
        ("ThrottlingException", Overloaded),
        ("TooManyRequestsException", Overloaded),
        ("TransactionInProgressException", Overloaded),
    ]
};

/// Looks an AWS error code up in [`AWS_CODES`].
pub fn aws_code(name: &str) -> Option<crate::classify::Category> {
    AWS_CODES.binary_search_by(|(k, _)| (*k).cmp(name)).ok().map(|i| AWS_CODES[i].1)
}

/// Document keys and their aliases, to decide whether a document already
/// gives a key a profile would default.
const ALIASES: &[(&str, &[&str])] = &[
    ("max_attempts", &["attempts"]),
    ("deadline", &["total_timeout"]),
    ("backoff", &["backoff_kind"]),
    ("initial", &["initial_interval", "initial_delay", "base_delay"]),
    ("max_delay", &["max_interval", "max_backoff"]),
    ("multiplier", &["backoff_multiplier"]),
    ("budget", &["retry_budget", "budgets"]),
    ("breaker", &["circuit_breaker"]),
];

/// Merges a profile's defaults under a document object (keys the document
/// gives, under any alias, win).
pub(crate) fn merge_defaults(
    doc: &crate::json::Map<String, Value>,
    profile: Profile,
) -> crate::json::Map<String, Value> {
    let mut out = doc.clone();
    if let Value::Object(defaults) = profile.defaults() {
        for (k, v) in defaults {
            let aliases = ALIASES.iter().find(|(name, _)| *name == k).map_or(&[][..], |(_, a)| a);
            let given = doc.contains_key(&k) || aliases.iter().any(|a| doc.contains_key(*a));
            if !given {
                out.insert(k, v);
            }
        }
    }
    out
}

/// The state a profile's delay carries from one retry to the next within a session.
#[derive(Copy, Clone, Debug, Default, PartialEq)]
pub struct DelayState {
    /// The previous backoff delay (decorrelated), in ns; 0 = none yet.
    pub prev_ns: u64,
    /// Polly's DecorrelatedJitterV2 `prev` (the previous formula value).
    pub polly_prev: f64,
    /// Retries since the last gRPC pushback (grpc-go `numRetriesSincePushback`).
    pub since_pushback: u32,
}

/// The most steps resilience4j's per-step truncation is iterated; past it
/// the interval is taken as saturated (a guard against billions of steps).
pub const R4J_MAX_STEPS: u32 = 1_000_000;

/// Rounds half to even to u64, saturating.
fn rne(x: f64) -> u64 {
    if x.is_nan() || x <= 0.0 {
        0
    } else {
        x.round_ties_even() as u64
    }
}

/// Truncates toward zero to u64, saturating (Java/C#/Go casts of non-negative values).
fn trunc(x: f64) -> u64 {
    if x.is_nan() || x <= 0.0 {
        0
    } else {
        x as u64
    }
}

/// `base · mult^k`, capped at `max`, by the core's saturating repeated squaring.
fn capped_power(base: f64, mult: f64, k: u32, max: f64) -> f64 {
    crate::backoff::exponential_capped(base, mult, k, max)
}

/// The delay of retry `n` (≥ 1) under `profile`, with draw `r` in [0, 1].
///
/// `initial`, `max`, `increment` are nanoseconds; `multiplier` the growth;
/// `jitter` the policy's jitter (which selects among the anchor's variants);
/// `throttled` is true after an `overloaded` failure (aws-2026's throttling base).
#[allow(clippy::too_many_arguments)]
pub(crate) fn delay(
    profile: Profile,
    kind: crate::backoff::BackoffKind,
    jitter: crate::backoff::Jitter,
    initial: u64,
    max: u64,
    multiplier: f64,
    min_delay: u64,
    n: u32,
    r: f64,
    throttled: bool,
    state: &mut DelayState,
) -> u64 {
    use crate::backoff::Jitter;
    let d = match profile {
        // These anchors' backoff is retrycore's own arithmetic (their profiles set defaults).
        Profile::AwsStandard | Profile::Finagle => return 0,
        Profile::Aws2026 => {
            // smithy: t = floor(r · min(base · 2^i, 20000)) ms, i = n − 1.
            let base_ms = if throttled { 1000.0 } else { initial as f64 / 1e6 };
            let max_ms = max as f64 / 1e6;
            let t = r * capped_power(base_ms, 2.0, n - 1, max_ms);
            trunc(t.floor()).saturating_mul(1_000_000)
        }
        Profile::Grpc => {
            // grpc-go: cur = min(initial · mult^k, max) · (0.8 + 0.4r), truncated to ns.
            let cur = capped_power(initial as f64, multiplier, state.since_pushback, max as f64);
            state.since_pushback = state.since_pushback.saturating_add(1);
            let f = match jitter {
                Jitter::Symmetric(f) => f,
                _ => 0.0,
            };
            trunc(cur * ((1.0 - f) + 2.0 * f * r))
        }
        Profile::Polly => polly_delay(kind, jitter, initial, max, n - 1, r, state),
        Profile::Resilience4j => r4j_delay(jitter, initial, max, multiplier, n, r),
        Profile::Tenacity | Profile::Stamina => tenacity_delay(jitter, initial, max, multiplier, min_delay, n, r),
        Profile::Envoy => {
            // Envoy (documented formula): interval (2^k − 1)·base, k = n while the interval
            // stays ≤ max, frozen after the first that passes it; floor(r · interval), capped.
            let base_ms = initial / 1_000_000;
            let max_ms = max / 1_000_000;
            let mut k = 1u32;
            let mut m = base_ms;
            while k < n {
                if m > max_ms || k >= 63 {
                    break;
                }
                k += 1;
                m = ((1u64 << k) - 1).saturating_mul(base_ms);
            }
            let pick = trunc((r * m as f64).floor()).min(m.saturating_sub(1)).min(max_ms);
            pick.saturating_mul(1_000_000)
        }
    };
    // gRPC's jitter may exceed max by 20 % and Aws2026/Polly cap their own way:
    // only the floor is applied here.
    d.max(min_delay)
}

const TICK_NS: u64 = 100;

/// Polly v8 `RetryHelper.GetRetryDelay`, in 100 ns ticks. `a` is Polly's 0-based attempt.
fn polly_delay(
    kind: crate::backoff::BackoffKind,
    jitter: crate::backoff::Jitter,
    initial: u64,
    max: u64,
    a: u32,
    r: f64,
    state: &mut DelayState,
) -> u64 {
    use crate::backoff::{BackoffKind, Jitter};
    const MAX_TICKS: f64 = i64::MAX as f64 - 1000.0;
    let base_ticks = initial / TICK_NS;
    if base_ticks == 0 {
        return 0;
    }
    let use_jitter = jitter != Jitter::None;
    // TimeSpan.FromMilliseconds(ms): ticks = (long)(ms · 10000).
    let from_ms = |ms: f64| -> Option<u64> {
        let t = ms * 10000.0;
        (t.is_finite() && t < i64::MAX as f64).then(|| trunc(t))
    };
    // ApplyJitter: offset = (ms · 0.5) / 2; random = (ms · 0.5 · r) − offset; ms + random.
    let apply_jitter = |ticks: u64| -> Option<u64> {
        let ms = ticks as f64 / 10000.0;
        let offset = (ms * 0.5) / 2.0;
        let random_delay = (ms * 0.5 * r) - offset;
        from_ms(ms + random_delay)
    };
    let ticks: Option<u64> = match (kind, use_jitter) {
        (BackoffKind::Constant, false) | (BackoffKind::Decorrelated, false) => Some(base_ticks),
        (BackoffKind::Constant, true) | (BackoffKind::Decorrelated, true) => apply_jitter(base_ticks),
        (BackoffKind::Linear, false) => {
            // TimeSpan * double: Math.Round(ticks · factor), half to even.
            let t = base_ticks as f64 * (f64::from(a) + 1.0);
            (t < MAX_TICKS).then(|| rne(t))
        }
        (BackoffKind::Linear, true) => {
            let ms = (f64::from(a) + 1.0) * (base_ticks as f64 / 10000.0);
            from_ms(ms).and_then(apply_jitter)
        }
        (BackoffKind::Exponential, false) => {
            let t = base_ticks as f64 * libm::pow(2.0, f64::from(a));
            (t.is_finite() && t < MAX_TICKS).then(|| rne(t))
        }
        (BackoffKind::Exponential, true) => {
            // DecorrelatedJitterBackoffV2 (Polly.Contrib.WaitAndRetry): pFactor 4, RP scaling 1/1.4.
            const P_FACTOR: f64 = 4.0;
            const RP_SCALING: f64 = 1.0 / 1.4;
            let t = f64::from(a) + r;
            let next = libm::pow(2.0, t) * libm::tanh(libm::sqrt(P_FACTOR * t));
            if next.is_infinite() {
                state.polly_prev = next;
                None
            } else {
                let intrinsic = next - state.polly_prev;
                state.polly_prev = next;
                let v = (intrinsic * RP_SCALING * base_ticks as f64).min(MAX_TICKS);
                Some(trunc(v))
            }
        }
    };
    match ticks {
        // MaxDelay applies after jitter; overflow gives MaxDelay (or TimeSpan.MaxValue).
        Some(t) => t.saturating_mul(TICK_NS).min(max),
        None => max,
    }
}

/// resilience4j `IntervalFunction.ofExponential(Random)Backoff`, whole milliseconds.
fn r4j_delay(jitter: crate::backoff::Jitter, initial: u64, max: u64, multiplier: f64, n: u32, r: f64) -> u64 {
    use crate::backoff::Jitter;
    let max_ms = max / 1_000_000;
    // I(1) = initial; I(k+1) = (long)(I(k) · multiplier): truncation at each step.
    let mut interval = initial / 1_000_000;
    let steps = (n - 1).min(R4J_MAX_STEPS);
    for _ in 0..steps {
        let next = trunc(interval as f64 * multiplier).min(i64::MAX as u64);
        if next == interval || interval >= max_ms {
            break;
        }
        interval = next;
    }
    if n - 1 > R4J_MAX_STEPS {
        interval = max_ms;
    }
    let value = match jitter {
        Jitter::Symmetric(f) if f > 0.0 => {
            // randomize: delta = f·I; min = I − delta; max = I + delta;
            // min + r·(max − min + 1), then (long), then at least 1.
            let current = interval as f64;
            let delta = f * current;
            let lo = current - delta;
            let hi = current + delta;
            trunc(lo + r * (hi - lo + 1.0)).max(1)
        }
        _ => interval,
    };
    // The cap applies after the randomization.
    value.min(max_ms).saturating_mul(1_000_000)
}

/// tenacity's waits in float seconds (CPython's order), then to nanoseconds.
fn tenacity_delay(
    jitter: crate::backoff::Jitter,
    initial: u64,
    max: u64,
    multiplier: f64,
    min_delay: u64,
    n: u32,
    r: f64,
) -> u64 {
    use crate::backoff::Jitter;
    let initial_s = initial as f64 / 1e9;
    let max_s = max as f64 / 1e9;
    let min_s = min_delay as f64 / 1e9;
    let floor = 0.0f64.max(min_s);
    let power = libm::pow(multiplier, f64::from(n - 1));
    // tenacity's `max(max(0, min), min(result, max))`; an OverflowError gives max.
    let clamp = |result: f64| if result.is_finite() { floor.max(result.min(max_s)) } else { floor.max(max_s) };
    let seconds = match jitter {
        // wait_exponential_jitter: initial · exp_base^(n−1) + uniform(0, jitter), capped after.
        Jitter::Additive(j) => clamp(initial_s * power + (j as f64 / 1e9) * r),
        // wait_random_exponential: uniform(min, wait_exponential(...)).
        Jitter::Full => min_s + (clamp(initial_s * power) - min_s) * r,
        _ => clamp(initial_s * power),
    };
    rne(seconds * 1e9)
}

/// Combines the backoff delay `t` with a server delay `ra` the profile's way
/// (`None`: retrycore's max(server, backoff)).
pub(crate) fn combine_server_delay(profile: Option<Profile>, t: u64, ra: u64) -> u64 {
    match profile {
        // aws-2026: max(t, min(ra, t + 5 s)), not re-capped.
        Some(Profile::Aws2026) => t.max(ra.min(t.saturating_add(5_000_000_000))),
        // grpc: the pushback alone.
        Some(Profile::Grpc) => ra,
        _ => t.max(ra),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aws_codes_are_sorted_for_binary_search() {
        assert!(AWS_CODES.windows(2).all(|w| w[0].0 < w[1].0));
        assert_eq!(aws_code("Throttling"), Some(crate::classify::Category::Overloaded));
        assert_eq!(aws_code("Nope"), None);
    }

    #[test]
    fn every_profile_has_valid_defaults() {
        for p in Profile::ALL {
            let doc = json!({"version": 1, "profile": p.name()});
            let c = crate::policy::PolicyConfig::from_json_value(&doc).unwrap_or_else(|e| panic!("{}: {e}", p.name()));
            assert_eq!(c.profile, Some(p));
            let back = crate::policy::PolicyConfig::from_json(&c.to_json()).unwrap();
            assert_eq!(back, c, "{}", p.name());
            assert_eq!(Profile::from_name(p.name()), Some(p));
        }
        assert_eq!(Profile::from_name("aws-standard-2026"), Some(Profile::Aws2026));
    }
}

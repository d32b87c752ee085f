//! Limiter settings: kinds, keys, defaults and the profiles that pick an
//! anchor's defaults (docs/limiters.md lists every key).

use crate::doc::Obj;
use crate::json::Value;
use crate::{Error, ErrorCode, Result};

/// The largest limit, queue or window count a document may ask for: memory
/// stays bounded and every count fits a JavaScript number.
pub const MAX_COUNT: u64 = 1_000_000;

/// How a limiter that cannot serve a call now may make it wait.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Wait {
    /// Calls (or permits) that may wait at once; one more is rejected with
    /// `queue_full` (.NET's `QueueLimit`; 0: nobody waits).
    pub queue_limit: u64,
    /// The longest wait; a longer one is rejected with `wait_too_long`
    /// (resilience4j's `maxWaitDuration` / `timeoutDuration`); `None`: no
    /// bound but the caller's deadline (.NET).
    pub max_wait: Option<u64>,
}

/// Netflix's `AIMDLimit` settings.
#[derive(Clone, Debug, PartialEq)]
pub struct AimdParams {
    /// The limit at the start (20).
    pub initial_limit: u32,
    /// The limit never goes below (20).
    pub min_limit: u32,
    /// The limit never goes above (200).
    pub max_limit: u32,
    /// What a drop multiplies the limit by, in [0.5, 1) (0.9).
    pub backoff_ratio: f64,
    /// A latency above it counts as a drop (5 s).
    pub timeout: u64,
}

/// Netflix's `Gradient2Limit` settings.
#[derive(Clone, Debug, PartialEq)]
pub struct Gradient2Params {
    /// The limit at the start (20).
    pub initial_limit: u32,
    /// The limit never goes below (20).
    pub min_limit: u32,
    /// The limit never goes above (`maxConcurrency`, 200).
    pub max_limit: u32,
    /// How far a new estimate moves the limit, in (0, 1] (0.2).
    pub smoothing: f64,
    /// The growth allowed while latency stays low (`queueSize`, 4).
    pub queue_size: u32,
    /// Samples in the long-term latency average (600; the first 10 are a plain mean).
    pub long_window: u32,
    /// How much slower than the long-term average a sample may be before
    /// the limit shrinks (≥ 1, 1.5).
    pub rtt_tolerance: f64,
}

/// AWS's adaptive client rate limiter settings (botocore's constants are
/// fixed: smoothing 0.8, β 0.7, scale 0.4, minimum rate 0.5/s).
#[derive(Clone, Debug, PartialEq)]
pub struct AwsParams {
    /// Tokens a retry takes (botocore 1; smithy-rs 5).
    pub retry_cost: u64,
    /// Tokens a retry after a timeout takes (botocore 1; smithy-rs 10).
    pub timeout_retry_cost: u64,
    /// The longest wait for a token (`None`: the caller's deadline).
    pub max_wait: Option<u64>,
}

/// The arithmetic of a limiter.
#[derive(Clone, Debug, PartialEq)]
pub enum LimiterKind {
    /// A semaphore with a bounded wait (resilience4j `Bulkhead`, .NET `ConcurrencyLimiter`).
    Bulkhead {
        /// Calls in flight at most (25).
        max_concurrent: u64,
        /// Who may wait for a slot, and how long (resilience4j: nobody, 0 s).
        wait: Wait,
    },
    /// .NET `TokenBucketRateLimiter`: `tokens_per_period` added every `period`, up to `token_limit`.
    TokenBucket {
        /// Tokens when full (and at the start).
        token_limit: u64,
        /// Tokens added at each period's end.
        tokens_per_period: u64,
        /// The replenishment period in nanoseconds.
        period: u64,
        /// The queue.
        wait: Wait,
    },
    /// .NET `FixedWindowRateLimiter`, resilience4j `RateLimiter`: `permit_limit` per `window`.
    FixedWindow {
        /// Permits per window.
        permit_limit: u64,
        /// The window in nanoseconds.
        window: u64,
        /// The queue.
        wait: Wait,
    },
    /// .NET `SlidingWindowRateLimiter`: `permit_limit` per `window`, which slides by `window / segments`.
    SlidingWindow {
        /// Permits per window.
        permit_limit: u64,
        /// The window in nanoseconds.
        window: u64,
        /// Segments per window.
        segments: u64,
        /// The queue.
        wait: Wait,
    },
    /// Netflix's additive-increase, multiplicative-decrease concurrency limit.
    Aimd(AimdParams),
    /// Netflix's latency-gradient concurrency limit.
    Gradient2(Gradient2Params),
    /// AWS's adaptive client rate limiter (CUBIC and a token bucket).
    AwsAdaptive(AwsParams),
}

impl LimiterKind {
    /// Every kind's code, in the order the docs list them.
    pub const CODES: &'static [&'static str] =
        &["bulkhead", "token_bucket", "fixed_window", "sliding_window", "aimd", "gradient2", "aws_adaptive"];

    /// Returns the kind's code (`"token_bucket"`, …).
    pub fn code(&self) -> &'static str {
        match self {
            LimiterKind::Bulkhead { .. } => "bulkhead",
            LimiterKind::TokenBucket { .. } => "token_bucket",
            LimiterKind::FixedWindow { .. } => "fixed_window",
            LimiterKind::SlidingWindow { .. } => "sliding_window",
            LimiterKind::Aimd(_) => "aimd",
            LimiterKind::Gradient2(_) => "gradient2",
            LimiterKind::AwsAdaptive(_) => "aws_adaptive",
        }
    }
}

/// A limiter's settings: a name and its arithmetic.
#[derive(Clone, Debug, PartialEq)]
pub struct LimiterConfig {
    /// The name rejections and metrics carry (default: the kind).
    pub name: String,
    /// The arithmetic.
    pub kind: LimiterKind,
}

/// Every profile a limiter document may name.
pub const PROFILES: &[&str] = &["resilience4j", "dotnet", "aws-adaptive"];

impl LimiterConfig {
    /// Reads a limiter object: `kind` (or a `profile` that implies it) plus
    /// the kind's keys; durations are strings with a unit.
    ///
    /// # Errors
    /// `missing_field` for a kind or a required limit left out,
    /// `invalid_value` for an unknown kind or profile or a profile that
    /// has no such kind, `out_of_range` for a limit of 0 or a ratio outside
    /// its range, `invalid_combination` for a minimum above a maximum or a
    /// window shorter than its segments, `unknown_key` for any other key;
    /// each names its field under `path`.
    pub fn from_json_value(v: &Value, path: &str) -> Result<LimiterConfig> {
        Self::from_obj(Obj::new(v, path)?)
    }

    /// Reads typed options: as [`from_json_value`](Self::from_json_value),
    /// with bare numbers in duration fields read as host units of
    /// `unit_ns` nanoseconds.
    pub fn from_typed_value(v: &Value, unit_ns: f64) -> Result<LimiterConfig> {
        crate::doc::refuse_null(v, "")?;
        Self::from_obj(Obj::typed(v, "", Some(unit_ns))?)
    }

    /// Reads a limiter object at `path` of a policy document (`unit`: bare
    /// numbers in duration fields are host units of that many nanoseconds;
    /// `None`: a document, durations are strings). A string is a profile's
    /// name: `"aws-adaptive"` reads as `{"profile": "aws-adaptive"}`.
    pub(crate) fn from_value_in(v: &Value, path: &str, unit: Option<f64>) -> Result<LimiterConfig> {
        let named;
        let v = match v {
            Value::String(p) => {
                named = json!({ "profile": p });
                &named
            }
            v => v,
        };
        Self::from_obj(Obj::typed(v, path, unit)?)
    }

    fn from_obj(mut o: Obj<'_>) -> Result<LimiterConfig> {
        let profile = match o.str("profile", &[])? {
            None => None,
            Some((p, f)) if PROFILES.contains(&p) => Some((p, f)),
            Some((p, f)) => {
                return Err(Error::new(
                    ErrorCode::InvalidValue,
                    f,
                    format!("unknown limiter profile {p:?}; known: {}", PROFILES.join(", ")),
                ))
            }
        };
        let kind = match o.str("kind", &["type"])? {
            Some((k, f)) => (k, f),
            None if profile.as_ref().is_some_and(|(p, _)| *p == "aws-adaptive") => ("aws_adaptive", o.field("kind")),
            None => return Err(Error::new(ErrorCode::MissingField, o.field("kind"), "a limiter names its kind")),
        };
        let p = profile.as_ref().map(|(p, _)| *p);
        let allowed: &[&str] = match p {
            None => LimiterKind::CODES,
            Some("resilience4j") => &["bulkhead", "fixed_window"],
            Some("dotnet") => &["bulkhead", "token_bucket", "fixed_window", "sliding_window"],
            _ => &["aws_adaptive"],
        };
        if !LimiterKind::CODES.contains(&kind.0) {
            return Err(Error::new(
                ErrorCode::InvalidValue,
                kind.1,
                format!("unknown limiter kind {:?}; known: {}", kind.0, LimiterKind::CODES.join(", ")),
            ));
        }
        if !allowed.contains(&kind.0) {
            return Err(Error::new(
                ErrorCode::InvalidValue,
                profile.as_ref().map(|(_, f)| f.clone()).unwrap_or_default(),
                format!("profile {:?} has no {} limiter", p.unwrap_or_default(), kind.0),
            ));
        }
        let r4j = p == Some("resilience4j");
        let dotnet = p == Some("dotnet");
        let name = o.str("name", &[])?.map(|(s, _)| s.to_owned());
        let kind = match kind.0 {
            "bulkhead" => {
                let max_concurrent = if dotnet {
                    need(&mut o, "max_concurrent", &["max_concurrent_calls", "permit_limit"], 1)?
                } else {
                    count(&mut o, "max_concurrent", &["max_concurrent_calls", "permit_limit"], 1)?.unwrap_or(25)
                };
                let queue_limit = if dotnet {
                    need(&mut o, "queue_limit", &[], 0)?
                } else {
                    count(&mut o, "queue_limit", &[], 0)?.unwrap_or(MAX_COUNT)
                };
                let max_wait = o.duration("max_wait", &["max_wait_duration"])?;
                let max_wait = if dotnet { max_wait } else { Some(max_wait.unwrap_or(0)) };
                LimiterKind::Bulkhead { max_concurrent, wait: Wait { queue_limit, max_wait } }
            }
            "token_bucket" => LimiterKind::TokenBucket {
                token_limit: need(&mut o, "token_limit", &[], 1)?,
                tokens_per_period: need(&mut o, "tokens_per_period", &[], 1)?,
                period: need_duration(&mut o, "period", &["replenishment_period"])?,
                wait: queue(&mut o, 0, None)?,
            },
            "fixed_window" if r4j => LimiterKind::FixedWindow {
                permit_limit: count(&mut o, "permit_limit", &["limit_for_period"], 1)?.unwrap_or(50),
                window: positive(&mut o, "window", &["limit_refresh_period"])?.unwrap_or(500),
                wait: queue(&mut o, MAX_COUNT, Some(5_000_000_000))?,
            },
            "fixed_window" => LimiterKind::FixedWindow {
                permit_limit: need(&mut o, "permit_limit", &["limit_for_period"], 1)?,
                window: need_duration(&mut o, "window", &["limit_refresh_period"])?,
                wait: queue(&mut o, 0, None)?,
            },
            "sliding_window" => {
                let permit_limit = need(&mut o, "permit_limit", &[], 1)?;
                let window = need_duration(&mut o, "window", &[])?;
                let segments = need(&mut o, "segments", &["segments_per_window"], 1)?;
                if window < segments {
                    return Err(Error::new(
                        ErrorCode::InvalidCombination,
                        o.field("segments"),
                        "a window must be at least one nanosecond per segment",
                    ));
                }
                LimiterKind::SlidingWindow { permit_limit, window, segments, wait: queue(&mut o, 0, None)? }
            }
            "aimd" => {
                let (initial_limit, min_limit, max_limit) = limits(&mut o, "max_limit", &[])?;
                let backoff_ratio = o.f64("backoff_ratio", &[])?.unwrap_or(0.9);
                if !(0.5..1.0).contains(&backoff_ratio) {
                    return Err(Error::new(ErrorCode::OutOfRange, o.field("backoff_ratio"), "must be in [0.5, 1)"));
                }
                let timeout = positive(&mut o, "timeout", &[])?.unwrap_or(5_000_000_000);
                LimiterKind::Aimd(AimdParams { initial_limit, min_limit, max_limit, backoff_ratio, timeout })
            }
            "gradient2" => {
                let (initial_limit, min_limit, max_limit) = limits(&mut o, "max_limit", &["max_concurrency"])?;
                let smoothing = o.f64("smoothing", &[])?.unwrap_or(0.2);
                if !(smoothing > 0.0 && smoothing <= 1.0) {
                    return Err(Error::new(ErrorCode::OutOfRange, o.field("smoothing"), "must be in (0, 1]"));
                }
                let rtt_tolerance = o.f64("rtt_tolerance", &[])?.unwrap_or(1.5);
                if rtt_tolerance < 1.0 {
                    return Err(Error::new(ErrorCode::OutOfRange, o.field("rtt_tolerance"), "must be at least 1"));
                }
                let queue_size = count(&mut o, "queue_size", &[], 0)?.unwrap_or(4) as u32;
                let long_window = count(&mut o, "long_window", &[], 1)?.unwrap_or(600) as u32;
                LimiterKind::Gradient2(Gradient2Params {
                    initial_limit,
                    min_limit,
                    max_limit,
                    smoothing,
                    queue_size,
                    long_window,
                    rtt_tolerance,
                })
            }
            _ => {
                let retry_cost = count(&mut o, "retry_cost", &[], 1)?.unwrap_or(1);
                let timeout_retry_cost = count(&mut o, "timeout_retry_cost", &[], 1)?.unwrap_or(1);
                let max_wait = o.duration("max_wait", &[])?;
                LimiterKind::AwsAdaptive(AwsParams { retry_cost, timeout_retry_cost, max_wait })
            }
        };
        o.finish()?;
        Ok(LimiterConfig { name: name.unwrap_or_else(|| kind.code().to_owned()), kind })
    }
}

/// Reads an optional count in `[min, MAX_COUNT]`.
fn count(o: &mut Obj<'_>, key: &'static str, aliases: &[&'static str], min: u64) -> Result<Option<u64>> {
    o.uint(key, aliases, min, MAX_COUNT)
}

/// Reads a required count in `[min, MAX_COUNT]`.
fn need(o: &mut Obj<'_>, key: &'static str, aliases: &[&'static str], min: u64) -> Result<u64> {
    count(o, key, aliases, min)?
        .ok_or_else(|| Error::new(ErrorCode::MissingField, o.field(key), "is required for this kind"))
}

/// Reads an optional duration that must not be zero.
fn positive(o: &mut Obj<'_>, key: &'static str, aliases: &[&'static str]) -> Result<Option<u64>> {
    match o.duration(key, aliases)? {
        Some(0) => Err(Error::new(ErrorCode::OutOfRange, o.field(key), "must be longer than 0")),
        d => Ok(d),
    }
}

/// Reads a required duration that must not be zero.
fn need_duration(o: &mut Obj<'_>, key: &'static str, aliases: &[&'static str]) -> Result<u64> {
    positive(o, key, aliases)?
        .ok_or_else(|| Error::new(ErrorCode::MissingField, o.field(key), "is required for this kind"))
}

/// Reads `queue_limit` and `max_wait` with the kind's defaults.
fn queue(o: &mut Obj<'_>, queue_limit: u64, max_wait: Option<u64>) -> Result<Wait> {
    let queue_limit = count(o, "queue_limit", &[], 0)?.unwrap_or(queue_limit);
    let max_wait = o.duration("max_wait", &["timeout_duration"])?.or(max_wait);
    Ok(Wait { queue_limit, max_wait })
}

/// Reads Netflix's `initial_limit`, `min_limit` and the maximum (20, 20, 200).
fn limits(o: &mut Obj<'_>, max_key: &'static str, aliases: &[&'static str]) -> Result<(u32, u32, u32)> {
    let initial = count(o, "initial_limit", &[], 1)?.unwrap_or(20) as u32;
    let min = count(o, "min_limit", &[], 1)?.unwrap_or(20) as u32;
    let max = count(o, max_key, aliases, 1)?.unwrap_or(200) as u32;
    if min > max {
        return Err(Error::new(ErrorCode::InvalidCombination, o.field("min_limit"), "must not exceed the maximum"));
    }
    Ok((initial, min, max))
}

impl LimiterConfig {
    /// Writes the settings as a limiter object that reads back to equal
    /// settings ([`from_json_value`](Self::from_json_value)): the kind and
    /// every limit spelled out, durations as strings with a unit. A
    /// bulkhead whose wait has no bound of its own is written under the
    /// `dotnet` profile (the only form that reads back without one).
    pub fn to_json_value(&self) -> Value {
        use crate::duration::format_duration as d;
        let mut m = crate::json::Map::new();
        m.insert("kind".into(), self.kind.code().into());
        m.insert("name".into(), self.name.as_str().into());
        let wait = |m: &mut crate::json::Map<String, Value>, w: &Wait| {
            m.insert("queue_limit".into(), w.queue_limit.into());
            if let Some(x) = w.max_wait {
                m.insert("max_wait".into(), d(x).into());
            }
        };
        match &self.kind {
            LimiterKind::Bulkhead { max_concurrent, wait: w } => {
                if w.max_wait.is_none() {
                    m.insert("profile".into(), "dotnet".into());
                }
                m.insert("max_concurrent".into(), (*max_concurrent).into());
                wait(&mut m, w);
            }
            LimiterKind::TokenBucket { token_limit, tokens_per_period, period, wait: w } => {
                m.insert("token_limit".into(), (*token_limit).into());
                m.insert("tokens_per_period".into(), (*tokens_per_period).into());
                m.insert("period".into(), d(*period).into());
                wait(&mut m, w);
            }
            LimiterKind::FixedWindow { permit_limit, window, wait: w } => {
                m.insert("permit_limit".into(), (*permit_limit).into());
                m.insert("window".into(), d(*window).into());
                wait(&mut m, w);
            }
            LimiterKind::SlidingWindow { permit_limit, window, segments, wait: w } => {
                m.insert("permit_limit".into(), (*permit_limit).into());
                m.insert("window".into(), d(*window).into());
                m.insert("segments".into(), (*segments).into());
                wait(&mut m, w);
            }
            LimiterKind::Aimd(p) => {
                m.insert("initial_limit".into(), p.initial_limit.into());
                m.insert("min_limit".into(), p.min_limit.into());
                m.insert("max_limit".into(), p.max_limit.into());
                m.insert("backoff_ratio".into(), p.backoff_ratio.into());
                m.insert("timeout".into(), d(p.timeout).into());
            }
            LimiterKind::Gradient2(p) => {
                m.insert("initial_limit".into(), p.initial_limit.into());
                m.insert("min_limit".into(), p.min_limit.into());
                m.insert("max_limit".into(), p.max_limit.into());
                m.insert("smoothing".into(), p.smoothing.into());
                m.insert("queue_size".into(), p.queue_size.into());
                m.insert("long_window".into(), p.long_window.into());
                m.insert("rtt_tolerance".into(), p.rtt_tolerance.into());
            }
            LimiterKind::AwsAdaptive(p) => {
                m.insert("retry_cost".into(), p.retry_cost.into());
                m.insert("timeout_retry_cost".into(), p.timeout_retry_cost.into());
                if let Some(x) = p.max_wait {
                    m.insert("max_wait".into(), d(x).into());
                }
            }
        }
        Value::Object(m)
    }
}

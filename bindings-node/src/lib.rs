//! The native half of the `retrycore` npm package (napi-rs).
//!
//! This crate only translates: JavaScript numbers in milliseconds become the
//! core's nanoseconds (round half to even, `duration::from_millis_f64`),
//! JSON text becomes the core's documents, and the core's errors become
//! JavaScript `Error` objects built by the JS layer's error factory (so the
//! native and the JS layer throw the same classes). Every decision is the
//! core's.
//!
//! The surface here is low level and private to the package: `lib/` wraps it
//! into the public API (`RetryPolicy`, `CircuitBreaker`, …), which the wasm
//! package reuses over its own low-level surface. Hot paths (delay, status
//! classification, breaker acquire/record, budget withdraw, session steps)
//! take and return numbers; sessions live in a per-policy slab and are named
//! by numeric ids, breaker permits are numbers.
//!
//! Every export is `#[napi(catch_unwind)]`: a panic becomes a JavaScript
//! error, never an abort of the process.

// napi-rs registers exports only outside `cfg(test)`: in the test build they look unused.
#![cfg_attr(test, allow(dead_code))]

mod breaker;
mod budget;
mod errors;
mod idem;
mod policy;

use napi::{Env, Result};
use napi_derive::napi;
use retrycore::classify::Category;
use retrycore::duration;
use retrycore::rng::{Rng, Xoshiro256pp};
use serde_json::{json, Value};
use std::cell::RefCell;

pub(crate) use errors::{core_err, raise, Domain};

/// Converts milliseconds from JavaScript to nanoseconds, naming `field` in errors.
pub(crate) fn ns(env: &Env, ms: f64, field: &str) -> Result<u64> {
    duration::from_millis_f64(ms, field).map_err(|e| core_err(env, &e, Domain::Config))
}

thread_local! {
    /// `performance.now()` of this thread's JS environment at an `Instant`
    /// (each worker thread has its own time origin).
    static CLOCK: std::cell::Cell<Option<(std::time::Instant, f64)>> = const { std::cell::Cell::new(None) };
}

/// Anchors the monotonic clock to the JS environment's `performance.now()`.
#[napi(catch_unwind)]
pub fn calibrate(performance_now: f64) {
    CLOCK.with(|c| c.set(Some((std::time::Instant::now(), performance_now))));
}

/// Converts a monotonic `now` in milliseconds; exactly -1 means "now" on the
/// clock of `performance.now()` (the JS layer passes it when the caller gave
/// no time; callers' negative times are refused before they get here).
pub(crate) fn now_ns(env: &Env, now: f64, field: &str) -> Result<u64> {
    if now == -1.0 {
        let ms = CLOCK.with(|c| match c.get() {
            Some((at, origin)) => origin + at.elapsed().as_secs_f64() * 1e3,
            None => 0.0,
        });
        return ns(env, ms, field);
    }
    ns(env, now, field)
}

/// Converts nanoseconds to JavaScript milliseconds (one IEEE division).
#[inline]
pub(crate) fn ms(ns: u64) -> f64 {
    duration::to_millis_f64(ns)
}

/// Converts a wall-clock time in Unix epoch milliseconds.
pub(crate) fn wall_ms(env: &Env, v: f64, field: &str) -> Result<u64> {
    if v.is_finite() && v >= 0.0 && v.fract() == 0.0 && v <= 9_007_199_254_740_991.0 {
        Ok(v as u64)
    } else {
        Err(raise(
            env,
            "range",
            "out_of_range",
            field,
            &format!("{field}: must be a non-negative integer of milliseconds, got {v}"),
        ))
    }
}

/// Reads a `u64` given as a decimal string (JavaScript passes seeds and
/// other 64-bit integers as strings or BigInt converted to strings).
pub(crate) fn u64_arg(env: &Env, s: &str, field: &str) -> Result<u64> {
    s.trim().parse::<u64>().map_err(|_| {
        raise(env, "range", "out_of_range", field, &format!("{field}: must be an integer in [0, 2^64), got {s:?}"))
    })
}

thread_local! {
    /// OS entropy, drawn 4 KiB at a time: minting a key must not cost a system call.
    static ENTROPY: RefCell<(Vec<u8>, usize)> = const { RefCell::new((Vec::new(), 0)) };
}

/// Fills `out` with bytes from the operating system's generator (buffered).
pub(crate) fn entropy(env: &Env, out: &mut [u8]) -> Result<()> {
    ENTROPY.with(|cell| {
        let mut cell = cell.borrow_mut();
        let (buf, pos) = &mut *cell;
        if buf.len() < *pos + out.len() || buf.is_empty() {
            buf.resize(4096, 0);
            getrandom::fill(buf).map_err(|e| {
                raise(env, "state", "invalid_state", "entropy", &format!("the operating system gave no entropy: {e}"))
            })?;
            *pos = 0;
        }
        out.copy_from_slice(&buf[*pos..*pos + out.len()]);
        // Never hand the same bytes out twice.
        buf[*pos..*pos + out.len()].fill(0);
        *pos += out.len();
        Ok(())
    })
}

pub(crate) fn entropy_u64(env: &Env) -> Result<u64> {
    let mut b = [0u8; 8];
    entropy(env, &mut b)?;
    Ok(u64::from_le_bytes(b))
}

/// Returns the tables the JS layer needs: category, reason and error codes,
/// the JSON nesting limit, lint codes.
#[napi(catch_unwind)]
pub fn info() -> Value {
    json!({
        "version": env!("CARGO_PKG_VERSION"),
        "maxJsonDepth": retrycore::idempotency::MAX_DEPTH,
        "categories": Category::ALL.iter().map(|c| c.code()).collect::<Vec<_>>(),
        "retryRules": ["always", "if_idempotent", "never"],
        "giveUpReasons": retrycore::session::GiveUpReason::ALL.iter().map(|r| r.code()).collect::<Vec<_>>(),
        "errorCodes": retrycore::ErrorCode::ALL.iter().map(|c| c.code()).collect::<Vec<_>>(),
        "lintCodes": retrycore::lint::CODES.iter().map(|(c, s, d)| json!({"code": c, "severity": s.code(), "description": d})).collect::<Vec<_>>(),
        "states": ["closed", "open", "half_open", "disabled", "forced_open", "metrics_only"],
    })
}

/// Parses a duration string (`"250ms"`) to milliseconds.
#[napi(catch_unwind)]
pub fn parse_duration(env: Env, text: String) -> Result<f64> {
    duration::parse_duration(&text, "duration").map(ms).map_err(|e| core_err(&env, &e, Domain::Config))
}

/// Writes milliseconds as the shortest exact duration string.
#[napi(catch_unwind)]
pub fn format_duration(env: Env, value_ms: f64) -> Result<String> {
    Ok(duration::format_duration(ns(&env, value_ms, "duration")?))
}

/// Reads server delay headers (flat `[name, value, name, value, …]`).
#[napi(catch_unwind)]
pub fn server_advice(env: Env, headers: Vec<String>, wall_now_ms: Option<f64>) -> Result<Value> {
    let wall = wall_now_ms.map(|w| wall_ms(&env, w, "wallNowMs")).transpose()?;
    let a = retrycore::retry_after::read_headers(headers.chunks_exact(2).map(|p| (p[0].as_str(), p[1].as_str())), wall);
    Ok(json!({
        "delay": a.delay_ns().map(ms),
        "source": a.delay.map(|(_, s)| s.name()),
        "declined": a.declined_by_pushback,
        "shouldRetry": a.should_retry,
        "retryExhausted": a.retry_exhausted,
    }))
}

/// Parses an HTTP-date to Unix seconds (`null` when it is not one).
#[napi(catch_unwind)]
pub fn parse_http_date(env: Env, value: String, wall_now_ms: f64) -> Result<Option<f64>> {
    let wall = wall_ms(&env, wall_now_ms, "wallNowMs")?;
    Ok(retrycore::retry_after::parse_http_date(&value, wall).map(|s| s as f64))
}

/// Lints a policy document (JSON text) against an optional service description.
#[napi(catch_unwind)]
pub fn lint(env: Env, policy: String, service: Option<String>) -> Result<Value> {
    let p = retrycore::policy::PolicyConfig::from_json(&policy).map_err(|e| core_err(&env, &e, Domain::Config))?;
    let s = match service {
        None => None,
        Some(t) => Some(retrycore::lint::Service::from_json(&t).map_err(|e| core_err(&env, &e, Domain::Config))?),
    };
    let findings = retrycore::lint::lint(&p, s.as_ref());
    Ok(Value::Array(
        findings
            .iter()
            .map(|f| json!({"code": f.code, "severity": f.severity.code(), "field": f.field, "message": f.message}))
            .collect(),
    ))
}

/// The seeded generator of every runtime: xoshiro256++ seeded by SplitMix64.
#[napi]
pub struct NativeRng {
    g: Xoshiro256pp,
}

#[napi]
impl NativeRng {
    /// Seeds a generator from a decimal u64.
    #[napi(constructor, catch_unwind)]
    pub fn new(env: Env, seed: String) -> Result<Self> {
        Ok(NativeRng { g: Xoshiro256pp::seed_from_u64(u64_arg(&env, &seed, "seed")?) })
    }

    /// Returns the next u64 as a decimal string.
    #[napi(catch_unwind)]
    pub fn next_u64(&mut self) -> String {
        self.g.next_u64().to_string()
    }

    /// Returns the next draw in [0, 1).
    #[napi(catch_unwind)]
    pub fn next_f64(&mut self) -> f64 {
        self.g.next_f64()
    }
}

mod floor;

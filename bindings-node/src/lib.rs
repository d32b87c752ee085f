//! The native half of the `retrycore` npm package (napi-rs).
//!
//! This crate only translates, and most of the translating is shared with
//! the wasm binding in `retrycore-js` (`bindings-js/`): JavaScript numbers in
//! milliseconds become the core's nanoseconds, JSON text becomes the core's
//! documents, and the core's errors become JavaScript `Error` objects built by
//! the JS layer's error factory (so the native and the JS layer throw the same
//! classes). What is left here is what napi-rs does: reading arguments, the
//! `#[napi]` exports, raising errors (`errors`), and the clock and entropy
//! of a Node thread (`Node`). Every decision is the core's.
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
use retrycore::rng::{Rng, Xoshiro256pp};
use retrycore_js as js;
use serde_json::Value;
use std::cell::RefCell;

pub(crate) use errors::OrThrow;

/// The Node host: `performance.now()` anchored by [`calibrate`], the
/// operating system's entropy.
pub(crate) struct Node;

impl js::Host for Node {
    fn clock_ms() -> f64 {
        CLOCK.with(|c| match c.get() {
            Some((at, origin)) => origin + at.elapsed().as_secs_f64() * 1e3,
            None => 0.0,
        })
    }

    fn entropy(out: &mut [u8]) -> js::Result<()> {
        entropy(out)
    }
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

thread_local! {
    /// OS entropy, drawn 4 KiB at a time: minting a key must not cost a system call.
    static ENTROPY: RefCell<js::host::EntropyPool> = const { RefCell::new(js::host::EntropyPool::new()) };
}

/// Fills `out` with bytes from the operating system's generator (buffered).
fn entropy(out: &mut [u8]) -> js::Result<()> {
    ENTROPY.with(|p| p.borrow_mut().take(out, "the operating system", getrandom::fill))
}

/// Returns the tables the JS layer needs: category, reason and error codes,
/// the JSON nesting limit, lint codes.
#[napi(catch_unwind)]
pub fn info() -> Value {
    js::info()
}

/// Parses a duration string (`"250ms"`) to milliseconds.
#[napi(catch_unwind)]
pub fn parse_duration(env: Env, text: String) -> Result<f64> {
    js::parse_duration(&text).or_throw(&env)
}

/// Writes milliseconds as the shortest exact duration string.
#[napi(catch_unwind)]
pub fn format_duration(env: Env, value_ms: f64) -> Result<String> {
    js::format_duration(value_ms).or_throw(&env)
}

/// Reads server delay headers (flat `[name, value, name, value, …]`).
#[napi(catch_unwind)]
pub fn server_advice(env: Env, headers: Vec<String>, wall_now_ms: Option<f64>) -> Result<Value> {
    js::server_advice(&headers, wall_now_ms).or_throw(&env)
}

/// Parses an HTTP-date to Unix seconds (`null` when it is not one).
#[napi(catch_unwind)]
pub fn parse_http_date(env: Env, value: String, wall_now_ms: f64) -> Result<Option<f64>> {
    js::parse_http_date(&value, wall_now_ms).or_throw(&env)
}

/// Lints a policy document (JSON text) against an optional service description.
#[napi(catch_unwind)]
pub fn lint(env: Env, policy: String, service: Option<String>) -> Result<Value> {
    js::lint(&policy, service.as_deref()).or_throw(&env)
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
        Ok(NativeRng { g: js::seeded_rng(&seed).or_throw(&env)? })
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

#[cfg(feature = "bench")]
mod floor;

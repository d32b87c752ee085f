//! The native half of the `retrycore` npm package (napi-rs).
//!
//! This crate only translates, and most of the translating is shared with
//! the wasm binding in `retrycore-js` (`bindings-js/`): JavaScript numbers in
//! milliseconds become the core's nanoseconds, JSON text becomes the core's
//! documents, and the core's errors become JavaScript `Error` objects built by
//! the JS layer's error factory (so the native and the JS layer throw the same
//! classes). The exports are declared once for both JS bindings, in
//! `bindings-js/src/surface.rs`, and expanded here by `build.rs` into
//! `#[napi]` items. What is left here is what napi-rs does: raising errors
//! (`errors`), and the clock and entropy of a Node thread (`Node`). Every
//! decision is the core's.
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

mod errors;

use napi::{Env, Result};
use napi_derive::napi;
use retrycore_js as js;
use serde_json::Value;
use std::cell::RefCell;

pub(crate) use errors::OrThrow;

// The exports: every function and class of the surface declared in
// `bindings-js/src/surface.rs`, expanded by `build.rs`.
include!(concat!(env!("OUT_DIR"), "/surface.rs"));

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

// The benchmarks' no-op floor: only `make bench` builds it (feature `bench`).
#[cfg(feature = "bench")]
#[path = "../bench/floor.rs"]
mod floor;

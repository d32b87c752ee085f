//! The native half of the `retrycore` npm package (napi-rs).
//!
//! It only translates; what both JS bindings share is in `retrycore-js`
//! (`bindings-js/`, which documents the surface), and the exports declared in
//! `bindings-js/src/surface.rs` are expanded here by `build.rs` into `#[napi]`
//! items. What is left is napi-rs's part: raising errors (`errors`), and the
//! clock and entropy of a Node thread (`Node`). `lib/` wraps the surface into
//! the public API. Every export is `#[napi(catch_unwind)]`: a panic becomes a
//! JavaScript error, never an abort of the process.

// napi-rs registers exports only outside `cfg(test)`: in the test build they look unused.
#![cfg_attr(test, allow(dead_code))]

mod bound;
mod errors;

use napi::{Env, Result};
use napi_derive::napi;
// napi-rs hands serde_json's value to JavaScript: the core's converts at the
// boundary (`OrThrow`, feature `serde` of retrycore).
use retrycore_js as js;
use serde_json::Value;

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

    /// The operating system's entropy, drawn 4 KiB at a time.
    fn entropy(out: &mut [u8]) -> js::Result<()> {
        js::host::pooled_entropy(out, "the operating system", getrandom::fill)
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

// The benchmarks' no-op floor: only `make bench` builds it (feature `bench`).
#[cfg(feature = "bench")]
#[path = "../bench/floor.rs"]
mod floor;

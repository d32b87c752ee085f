//! One retry-policy engine for every runtime.
//!
//! Retries that nobody designed take systems down: three layers retrying four
//! times each turn one click into 64 calls, retries without jitter hit a
//! recovering server in lock-step, and a POST retried after a timeout charges
//! a card twice. `retrycore` decides, as pure functions of their inputs:
//!
//! - how long to wait before each retry ([`backoff`]: constant, linear,
//!   exponential and decorrelated kinds with full, equal, proportional,
//!   additive or symmetric jitter, computed bit for bit the same on every
//!   target);
//! - whether a failure may be retried at all ([`classify`]: HTTP status, gRPC
//!   code and exception names, an allow-list gated by idempotency);
//! - what the server asked for ([`retry_after`]: `Retry-After`,
//!   `retry-after-ms`, `grpc-retry-pushback-ms`);
//! - whether a retry is affordable ([`budget`]) and whether the downstream is
//!   healthy enough to call ([`breaker`]);
//! - what one logical operation does next ([`session`]);
//! - what a server does with a repeated request ([`idempotency`]);
//! - how many calls may reach a downstream at once, and how fast
//!   ([`limiters`]).
//!
//! The crate reads no clock, sleeps never, does no I/O and keeps no global
//! state: time comes in as arguments and randomness from a seeded generator
//! ([`rng`]) or an explicit number `r` in [0, 1].
#![forbid(unsafe_code)]
#![deny(missing_docs)]

#[macro_use]
pub mod json;
pub mod alerts;
pub mod backoff;
pub mod breaker;
mod breaker_outcome;
pub mod budget;
mod budget_pay;
mod civil;
pub mod classify;
pub mod compensation;
pub mod counters;
pub mod dead_letter_replay;
mod doc;
pub mod duration;
mod error;
mod float;
pub mod idempotency;
pub mod limiters;
pub mod limits;
pub mod lint;
pub mod metrics;
pub mod policy;
pub mod profile;
pub mod retry_after;
pub mod retry_log;
pub mod rng;
pub mod session;
mod sha256;
pub mod surface;
pub mod tables;

pub use error::{Error, ErrorClass, ErrorCode, ErrorDomain, ErrorFamily, Result};

/// Parses a document's JSON text the one way every reader does: at most
/// [`limits::MAX_DOCUMENT_BYTES`], a key given twice in one object refused,
/// any syntax error `invalid_json` (docs/limits.md). Hosts that hand typed
/// options or breaker and budget objects over as text parse them with it.
pub fn parse_document(text: &str) -> Result<crate::json::Value> {
    doc::parse_json(text)
}

/// Parses JSON text as [`parse_document`] does but without its size limit:
/// for what a host hands over to be stored rather than settings (a record's
/// outcome, whose response body is the application's).
///
/// # Errors
/// `invalid_json`, as [`parse_document`].
pub fn parse_stored(text: &str) -> Result<crate::json::Value> {
    doc::parse_any_size(text)
}

/// The README's Rust examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;

/// The Rust examples of docs/*.md (collected by `build.rs`), compiled and
/// run as doc tests.
#[cfg(doctest)]
#[doc = include_str!(concat!(env!("OUT_DIR"), "/doc_snippets.md"))]
pub struct DocsDoctests;

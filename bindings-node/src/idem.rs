//! Idempotency keys, the `Idempotency-Key` header, canonical JSON,
//! fingerprints, records and dead letters (docs/idempotency.md).
//!
//! Records, responses and dead letters are documents: JSON with snake_case
//! keys, the same in every runtime. Decisions are API results (camelCase).

use crate::{Node, OrThrow};
use napi::{Env, Result};
use napi_derive::napi;
use retrycore_js::idem::{self, RecordArgs};
use serde_json::Value;

/// Checks a key: true, or an `IdempotencyError` saying which character at which position is wrong.
#[napi(catch_unwind)]
pub fn validate_key(env: Env, key: String, max: f64) -> Result<bool> {
    idem::validate_key(&key, max).or_throw(&env)
}

/// Joins business id, operation and version into a key.
#[napi(catch_unwind)]
pub fn derive_key(env: Env, parts: Vec<String>) -> Result<String> {
    idem::derive_key(&parts).or_throw(&env)
}

/// Scopes a key to a tenant.
#[napi(catch_unwind)]
pub fn scoped_key(env: Env, tenant: String, key: String) -> Result<String> {
    idem::scoped_key(&tenant, &key).or_throw(&env)
}

/// Maps a key to one a store's index can hold.
#[napi(catch_unwind)]
pub fn storage_key(env: Env, key: String, max: f64) -> Result<String> {
    idem::storage_key(&key, max).or_throw(&env)
}

/// Mints a UUIDv4 key from OS entropy, or from 32 hex digits of entropy (tests).
#[napi(catch_unwind)]
pub fn mint_key(env: Env, entropy_hex: Option<String>) -> Result<String> {
    idem::mint_key::<Node>(entropy_hex.as_deref()).or_throw(&env)
}

/// Writes the `Idempotency-Key` header value (an RFC 8941 sf-string).
#[napi(catch_unwind)]
pub fn format_header(env: Env, key: String) -> Result<String> {
    idem::format_header(&key).or_throw(&env)
}

/// Reads an `Idempotency-Key` header value; `token` also accepts Stripe's bare token.
#[napi(catch_unwind)]
pub fn parse_header(env: Env, value: String, token: bool) -> Result<String> {
    idem::parse_header(&value, token).or_throw(&env)
}

/// Canonicalises JSON text (RFC 8785).
#[napi(catch_unwind)]
pub fn canonicalize(env: Env, text: String) -> Result<String> {
    idem::canonicalize(&text).or_throw(&env)
}

/// Writes a number as canonical JSON does (ECMAScript `Number::toString`).
#[napi(catch_unwind)]
pub fn canonical_number(env: Env, x: f64) -> Result<String> {
    idem::canonical_number(x).or_throw(&env)
}

/// Fingerprints a request: `method` + `path`, or `operation` (`path` absent);
/// the body is JSON text. `canonical` returns the canonical JSON instead of its hash.
#[napi(catch_unwind)]
pub fn fingerprint(
    env: Env,
    method_or_operation: String,
    path: Option<String>,
    body: String,
    selected: Option<Vec<String>>,
    canonical: bool,
) -> Result<String> {
    idem::fingerprint(&method_or_operation, path.as_deref(), &body, selected, canonical).or_throw(&env)
}

/// Decides what an incoming request gets (`record` is the stored record's JSON or null).
#[napi(catch_unwind)]
#[allow(clippy::too_many_arguments)]
pub fn decide_record(
    env: Env,
    record: Option<String>,
    key: Option<String>,
    fingerprint: String,
    now_ms: f64,
    lease_ms: Option<f64>,
    retention_ms: Option<f64>,
    stripe: Option<bool>,
    failure_handling: Option<String>,
    release_categories: Option<Vec<String>>,
) -> Result<Value> {
    let settings = RecordArgs { lease_ms, retention_ms, stripe, failure_handling, release_categories };
    idem::decide_record(record.as_deref(), key.as_deref(), &fingerprint, now_ms, settings).or_throw(&env)
}

/// Completes a claimed record with an outcome; returns the record's JSON.
#[napi(catch_unwind)]
#[allow(clippy::too_many_arguments)]
pub fn complete_record(
    env: Env,
    record: String,
    fence: f64,
    outcome: String,
    now_ms: f64,
    lease_ms: Option<f64>,
    retention_ms: Option<f64>,
    stripe: Option<bool>,
    failure_handling: Option<String>,
    release_categories: Option<Vec<String>>,
) -> Result<String> {
    let settings = RecordArgs { lease_ms, retention_ms, stripe, failure_handling, release_categories };
    idem::complete_record(&record, fence, &outcome, now_ms, settings).or_throw(&env)
}

/// Renews the holder's lease; returns the record's JSON.
#[napi(catch_unwind)]
#[allow(clippy::too_many_arguments)]
pub fn renew_lease(
    env: Env,
    record: String,
    fence: f64,
    now_ms: f64,
    lease_ms: Option<f64>,
    retention_ms: Option<f64>,
    stripe: Option<bool>,
    failure_handling: Option<String>,
    release_categories: Option<Vec<String>>,
) -> Result<String> {
    let settings = RecordArgs { lease_ms, retention_ms, stripe, failure_handling, release_categories };
    idem::renew_lease(&record, fence, now_ms, settings).or_throw(&env)
}

/// Validates a dead letter, applies `ops` in order, and returns its JSON.
#[napi(catch_unwind)]
pub fn dead_letter(env: Env, letter: String, ops: Vec<String>) -> Result<String> {
    idem::dead_letter(&letter, &ops).or_throw(&env)
}

/// Writes Unix milliseconds as RFC 3339 (`YYYY-MM-DDTHH:MM:SS.mmmZ`).
#[napi(catch_unwind)]
pub fn format_rfc3339(env: Env, unix_ms: f64) -> Result<String> {
    idem::format_rfc3339(unix_ms).or_throw(&env)
}

/// Reads RFC 3339 text as Unix milliseconds (rounded down).
#[napi(catch_unwind)]
pub fn parse_rfc3339(env: Env, text: String) -> Result<f64> {
    idem::parse_rfc3339(&text).or_throw(&env)
}

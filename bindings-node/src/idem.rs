//! Idempotency keys, the `Idempotency-Key` header, canonical JSON,
//! fingerprints, records and dead letters (SPEC §8).
//!
//! Records, responses and dead letters are documents: JSON with snake_case
//! keys, the same in every runtime. Decisions are API results (camelCase).

use crate::{core_err, entropy, raise, Domain};
use napi::{Env, Result};
use napi_derive::napi;
use retrycore::idempotency as idem;
use serde_json::{Map, Value};
use std::time::Duration;

fn ie(env: &Env) -> impl Fn(retrycore::Error) -> napi::Error + '_ {
    move |e| core_err(env, &e, Domain::Idempotency)
}

fn ce(env: &Env) -> impl Fn(retrycore::Error) -> napi::Error + '_ {
    move |e| core_err(env, &e, Domain::Config)
}

fn max_len(env: &Env, v: f64) -> Result<usize> {
    if v.fract() == 0.0 && (0.0..=1e9).contains(&v) {
        Ok(v as usize)
    } else {
        Err(raise(env, "range", "out_of_range", "maxLen", &format!("maxLen: must be a non-negative integer, got {v}")))
    }
}

/// Checks a key: true, or an `IdempotencyError` saying which character at which position is wrong.
#[napi(catch_unwind)]
pub fn validate_key(env: Env, key: String, max: f64) -> Result<bool> {
    idem::validate_key(&key, max_len(&env, max)?).map(|()| true).map_err(ie(&env))
}

/// Joins business id, operation and version into a key.
#[napi(catch_unwind)]
pub fn derive_key(env: Env, parts: Vec<String>) -> Result<String> {
    let p: Vec<&str> = parts.iter().map(String::as_str).collect();
    idem::derive_key(&p).map_err(ie(&env))
}

/// Scopes a key to a tenant.
#[napi(catch_unwind)]
pub fn scoped_key(env: Env, tenant: String, key: String) -> Result<String> {
    idem::scoped_key(&tenant, &key).map_err(ie(&env))
}

/// Maps a key to one a store's index can hold.
#[napi(catch_unwind)]
pub fn storage_key(env: Env, key: String, max: f64) -> Result<String> {
    idem::storage_key(&key, max_len(&env, max)?).map_err(ie(&env))
}

/// Mints a UUIDv4 key from OS entropy, or from 32 hex digits of entropy (tests).
#[napi(catch_unwind)]
pub fn mint_key(env: Env, entropy_hex: Option<String>) -> Result<String> {
    let mut b = [0u8; 16];
    match entropy_hex {
        None => entropy(&env, &mut b)?,
        Some(h) => {
            if h.len() != 32 || !h.bytes().all(|c| c.is_ascii_hexdigit()) {
                return Err(raise(&env, "range", "invalid_value", "entropy", "entropy: must be 32 hex digits"));
            }
            for (i, x) in b.iter_mut().enumerate() {
                *x = u8::from_str_radix(&h[2 * i..2 * i + 2], 16).unwrap_or(0);
            }
        }
    }
    Ok(idem::mint_key(b))
}

/// Writes the `Idempotency-Key` header value (an RFC 8941 sf-string).
#[napi(catch_unwind)]
pub fn format_header(env: Env, key: String) -> Result<String> {
    idem::format_header(&key).map_err(ie(&env))
}

/// Reads an `Idempotency-Key` header value; `token` also accepts Stripe's bare token.
#[napi(catch_unwind)]
pub fn parse_header(env: Env, value: String, token: bool) -> Result<String> {
    let form = if token { idem::HeaderForm::SfStringOrToken } else { idem::HeaderForm::SfString };
    idem::parse_header(&value, form).map_err(ie(&env))
}

/// Canonicalises JSON text (RFC 8785).
#[napi(catch_unwind)]
pub fn canonicalize(env: Env, text: String) -> Result<String> {
    idem::canonicalize_json(&text).map_err(ce(&env))
}

/// Writes a number as canonical JSON does (ECMAScript `Number::toString`).
#[napi(catch_unwind)]
pub fn canonical_number(env: Env, x: f64) -> Result<String> {
    idem::format_number(x).map_err(ce(&env))
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
    let body = idem::parse_json(&body).map_err(ce(&env))?;
    let sel: Option<Vec<&str>> = selected.as_ref().map(|s| s.iter().map(String::as_str).collect());
    let sel = sel.as_deref();
    let r = match (path, canonical) {
        (Some(p), false) => idem::fingerprint_http(&method_or_operation, &p, &body, sel),
        (Some(p), true) => idem::fingerprint_http_canonical(&method_or_operation, &p, &body, sel),
        (None, false) => idem::fingerprint_operation(&method_or_operation, &body, sel),
        (None, true) => idem::fingerprint_operation_canonical(&method_or_operation, &body, sel),
    };
    r.map_err(ce(&env))
}

/// Builds a record configuration.
#[allow(clippy::too_many_arguments)]
fn record_config(
    env: &Env,
    lease_ms: Option<f64>,
    retention_ms: Option<f64>,
    stripe: Option<bool>,
    failure_handling: Option<String>,
    release_categories: Option<Vec<String>>,
) -> Result<idem::RecordConfig> {
    let d = idem::RecordConfig::default();
    let dur = |v: Option<f64>, default: u64, field: &str| -> Result<Duration> {
        match v {
            None => Ok(Duration::from_millis(default)),
            Some(x) => retrycore::duration::from_millis_f64(x, field).map(Duration::from_nanos).map_err(ce(env)),
        }
    };
    let mut c = idem::RecordConfig::new(
        dur(lease_ms, d.lease_ms(), "leaseMs")?,
        dur(retention_ms, d.retention_ms(), "retentionMs")?,
    )
    .map_err(ce(env))?;
    if let Some(s) = stripe {
        c = c.with_stripe(s);
    }
    if let Some(h) = failure_handling {
        c = c.with_failure_handling(match h.as_str() {
            "by_category" => idem::FailureHandling::ByCategory,
            "replay" => idem::FailureHandling::Replay,
            "execute" => idem::FailureHandling::Execute,
            _ => {
                return Err(raise(
                    env,
                    "range",
                    "invalid_value",
                    "failureHandling",
                    "failureHandling: must be by_category, replay or execute",
                ))
            }
        });
    }
    if let Some(list) = release_categories {
        c = c.with_release_categories(list);
    }
    Ok(c)
}

fn camel(k: &str) -> String {
    let mut out = String::with_capacity(k.len());
    let mut up = false;
    for ch in k.chars() {
        if ch == '_' {
            up = true;
        } else if up {
            out.extend(ch.to_uppercase());
            up = false;
        } else {
            out.push(ch);
        }
    }
    out
}

/// Renames the top-level keys (and those of `http`) to camelCase, leaving
/// documents inside (`response`, `record`) as they are.
fn camel_top(v: Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut out = Map::new();
            for (k, v) in m {
                let v = if k == "http" {
                    match v {
                        Value::Object(h) => Value::Object(h.into_iter().map(|(k, v)| (camel(&k), v)).collect()),
                        other => other,
                    }
                } else {
                    v
                };
                out.insert(camel(&k), v);
            }
            Value::Object(out)
        }
        other => other,
    }
}

fn http_json(a: Option<idem::HttpAnswer>) -> Value {
    match a {
        None => Value::Null,
        Some(a) => {
            serde_json::json!({"status": a.status, "error_type": a.error_type, "retry_after_s": a.retry_after_s})
        }
    }
}

fn record_of(env: &Env, text: &str) -> Result<idem::IdempotencyRecord> {
    idem::IdempotencyRecord::from_json(text).map_err(ce(env))
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
    let cfg = record_config(&env, lease_ms, retention_ms, stripe, failure_handling, release_categories)?;
    let Some(key) = key else {
        let v = serde_json::json!({"decision": "missing_key", "http": http_json(Some(idem::missing_key_answer(&cfg)))});
        return Ok(camel_top(v));
    };
    let now = crate::wall_ms(&env, now_ms, "now")?;
    let rec = record.map(|t| record_of(&env, &t)).transpose()?;
    let d = idem::decide(rec.as_ref(), &key, &fingerprint, now, &cfg).map_err(ie(&env))?;
    let mut v = serde_json::to_value(&d).map_err(|e| raise(&env, "state", "invalid_state", "", &e.to_string()))?;
    v["http"] = http_json(d.http(&cfg));
    if let idem::RecordDecision::Execute(claim) = &d {
        v["record"] = serde_json::to_value(claim.to_record(&key, &fingerprint)).unwrap_or(Value::Null);
    }
    Ok(camel_top(v))
}

fn outcome_of(env: &Env, text: &str) -> Result<idem::Outcome> {
    let o: Value =
        serde_json::from_str(text).map_err(|e| raise(env, "type", "invalid_json", "outcome", &e.to_string()))?;
    let response =
        match o.get("response") {
            None | Some(Value::Null) => None,
            Some(r) => Some(serde_json::from_value::<idem::StoredResponse>(r.clone()).map_err(|e| {
                raise(env, "type", "invalid_type", "outcome.response", &format!("outcome.response: {e}"))
            })?),
        };
    match o.get("state").and_then(Value::as_str) {
        Some("succeeded") => Ok(idem::Outcome::Succeeded { response }),
        Some("failed") => Ok(idem::Outcome::Failed {
            category: o.get("category").and_then(Value::as_str).unwrap_or_default().to_owned(),
            response,
        }),
        _ => Err(raise(env, "range", "invalid_value", "outcome.state", "outcome.state: must be succeeded or failed")),
    }
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
    let cfg = record_config(&env, lease_ms, retention_ms, stripe, failure_handling, release_categories)?;
    let rec = record_of(&env, &record)?;
    let fence = crate::wall_ms(&env, fence, "fence")?;
    let now = crate::wall_ms(&env, now_ms, "now")?;
    let o = outcome_of(&env, &outcome)?;
    idem::complete(&rec, fence, o, now, &cfg).map(|r| r.to_json()).map_err(ie(&env))
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
    let cfg = record_config(&env, lease_ms, retention_ms, stripe, failure_handling, release_categories)?;
    let rec = record_of(&env, &record)?;
    let fence = crate::wall_ms(&env, fence, "fence")?;
    let now = crate::wall_ms(&env, now_ms, "now")?;
    idem::renew_lease(&rec, fence, now, &cfg).map(|r| r.to_json()).map_err(ie(&env))
}

/// Validates a dead letter, applies `ops` in order, and returns its JSON.
#[napi(catch_unwind)]
pub fn dead_letter(env: Env, letter: String, ops: Vec<String>) -> Result<String> {
    let mut l = idem::DeadLetter::from_json(&letter).map_err(ie(&env))?;
    for op in &ops {
        match op.as_str() {
            "mark_replayable" => l.mark_replayable(),
            "mark_replayed" => l.mark_replayed(),
            "discard" => l.discard(),
            other => {
                return Err(raise(&env, "range", "invalid_value", "op", &format!("op: unknown operation {other:?}")))
            }
        }
        .map_err(ie(&env))?;
    }
    Ok(l.to_json())
}

/// Writes Unix milliseconds as RFC 3339 (`YYYY-MM-DDTHH:MM:SS.mmmZ`).
#[napi(catch_unwind)]
pub fn format_rfc3339(env: Env, unix_ms: f64) -> Result<String> {
    let ms = crate::wall_ms(&env, unix_ms, "unixMs")?;
    idem::format_rfc3339_ms(ms).map_err(ce(&env))
}

/// Reads RFC 3339 text as Unix milliseconds (rounded down).
#[napi(catch_unwind)]
pub fn parse_rfc3339(env: Env, text: String) -> Result<f64> {
    idem::parse_rfc3339_ms(&text).map(|v| v as f64).map_err(ce(&env))
}

//! Idempotency keys, the `Idempotency-Key` header, canonical JSON,
//! fingerprints, records and dead letters (SPEC §8).
//!
//! Records, responses and dead letters are documents: JSON with snake_case
//! keys, the same in every runtime. Decisions are API results (camelCase).

use crate::errors::{core_err, raise, Domain, JsErr, R};
use crate::{entropy, js, strings, wall_ms};
use retrycore::idempotency as idem;
use serde_json::{Map, Value};
use std::time::Duration;
use wasm_bindgen::prelude::*;

fn ie(e: retrycore::Error) -> JsErr {
    core_err(&e, Domain::Idempotency)
}

fn ce(e: retrycore::Error) -> JsErr {
    core_err(&e, Domain::Config)
}

fn max_len(v: f64) -> R<usize> {
    if v.fract() == 0.0 && (0.0..=1e9).contains(&v) {
        Ok(v as usize)
    } else {
        Err(raise("range", "out_of_range", "maxLen", &format!("maxLen: must be a non-negative integer, got {v}")))
    }
}

/// Checks a key: true, or an `IdempotencyError` saying which character at which position is wrong.
#[wasm_bindgen(js_name = validateKey)]
pub fn validate_key(key: &str, max: f64) -> Result<bool, JsErr> {
    idem::validate_key(key, max_len(max)?).map(|()| true).map_err(ie)
}

/// Joins business id, operation and version into a key.
#[wasm_bindgen(js_name = deriveKey)]
pub fn derive_key(#[wasm_bindgen(unchecked_param_type = "Array<string>")] parts: JsValue) -> Result<String, JsErr> {
    let parts = strings(&parts, "parts")?.unwrap_or_default();
    let p: Vec<&str> = parts.iter().map(String::as_str).collect();
    idem::derive_key(&p).map_err(ie)
}

/// Scopes a key to a tenant.
#[wasm_bindgen(js_name = scopedKey)]
pub fn scoped_key(tenant: &str, key: &str) -> Result<String, JsErr> {
    idem::scoped_key(tenant, key).map_err(ie)
}

/// Maps a key to one a store's index can hold.
#[wasm_bindgen(js_name = storageKey)]
pub fn storage_key(key: &str, max: f64) -> Result<String, JsErr> {
    idem::storage_key(key, max_len(max)?).map_err(ie)
}

/// Mints a UUIDv4 key from OS entropy, or from 32 hex digits of entropy (tests).
#[wasm_bindgen(js_name = mintKey)]
pub fn mint_key(#[wasm_bindgen(js_name = entropyHex)] entropy_hex: Option<String>) -> Result<String, JsErr> {
    let mut b = [0u8; 16];
    match entropy_hex {
        None => entropy(&mut b)?,
        Some(h) => {
            let digits: Option<Vec<u8>> = h.bytes().map(|c| (c as char).to_digit(16).map(|d| d as u8)).collect();
            match digits {
                Some(d) if d.len() == 32 => {
                    for (x, pair) in b.iter_mut().zip(d.chunks_exact(2)) {
                        if let [hi, lo] = pair {
                            *x = hi << 4 | lo;
                        }
                    }
                }
                _ => return Err(raise("range", "invalid_value", "entropy", "entropy: must be 32 hex digits")),
            }
        }
    }
    Ok(idem::mint_key(b))
}

/// Writes the `Idempotency-Key` header value (an RFC 8941 sf-string).
#[wasm_bindgen(js_name = formatHeader)]
pub fn format_header(key: &str) -> Result<String, JsErr> {
    idem::format_header(key).map_err(ie)
}

/// Reads an `Idempotency-Key` header value; `token` also accepts Stripe's bare token.
#[wasm_bindgen(js_name = parseHeader)]
pub fn parse_header(value: &str, token: bool) -> Result<String, JsErr> {
    let form = if token { idem::HeaderForm::SfStringOrToken } else { idem::HeaderForm::SfString };
    idem::parse_header(value, form).map_err(ie)
}

/// Canonicalises JSON text (RFC 8785).
#[wasm_bindgen]
pub fn canonicalize(text: &str) -> Result<String, JsErr> {
    idem::canonicalize_json(text).map_err(ce)
}

/// Writes a number as canonical JSON does (ECMAScript `Number::toString`).
#[wasm_bindgen(js_name = canonicalNumber)]
pub fn canonical_number(x: f64) -> Result<String, JsErr> {
    idem::format_number(x).map_err(ce)
}

/// Fingerprints a request: `method` + `path`, or `operation` (`path` absent);
/// the body is JSON text. `canonical` returns the canonical JSON instead of its hash.
#[wasm_bindgen]
pub fn fingerprint(
    #[wasm_bindgen(js_name = methodOrOperation)] method_or_operation: &str,
    #[wasm_bindgen(unchecked_param_type = "string | undefined | null")] path: Option<String>,
    body: &str,
    #[wasm_bindgen(unchecked_param_type = "Array<string> | undefined | null")] selected: JsValue,
    canonical: bool,
) -> Result<String, JsErr> {
    let body = idem::parse_json(body).map_err(ce)?;
    let selected = strings(&selected, "selected")?;
    let sel: Option<Vec<&str>> = selected.as_ref().map(|s| s.iter().map(String::as_str).collect());
    let sel = sel.as_deref();
    let r = match (path, canonical) {
        (Some(p), false) => idem::fingerprint_http(method_or_operation, &p, &body, sel),
        (Some(p), true) => idem::fingerprint_http_canonical(method_or_operation, &p, &body, sel),
        (None, false) => idem::fingerprint_operation(method_or_operation, &body, sel),
        (None, true) => idem::fingerprint_operation_canonical(method_or_operation, &body, sel),
    };
    r.map_err(ce)
}

/// Builds a record configuration.
fn record_config(
    lease_ms: Option<f64>,
    retention_ms: Option<f64>,
    stripe: Option<bool>,
    failure_handling: Option<String>,
    release_categories: &JsValue,
) -> R<idem::RecordConfig> {
    let d = idem::RecordConfig::default();
    let dur = |v: Option<f64>, default: u64, field: &str| -> R<Duration> {
        match v {
            None => Ok(Duration::from_millis(default)),
            Some(x) => retrycore::duration::from_millis_f64(x, field).map(Duration::from_nanos).map_err(ce),
        }
    };
    let mut c = idem::RecordConfig::new(
        dur(lease_ms, d.lease_ms(), "leaseMs")?,
        dur(retention_ms, d.retention_ms(), "retentionMs")?,
    )
    .map_err(ce)?;
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
                    "range",
                    "invalid_value",
                    "failureHandling",
                    "failureHandling: must be by_category, replay or execute",
                ))
            }
        });
    }
    if let Some(list) = strings(release_categories, "releaseCategories")? {
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

fn record_of(text: &str) -> R<idem::IdempotencyRecord> {
    idem::IdempotencyRecord::from_json(text).map_err(ce)
}

/// Decides what an incoming request gets (`record` is the stored record's JSON or null).
#[wasm_bindgen(js_name = decideRecord, unchecked_return_type = "any")]
#[allow(clippy::too_many_arguments)]
pub fn decide_record(
    #[wasm_bindgen(unchecked_param_type = "string | undefined | null")] record: Option<String>,
    #[wasm_bindgen(unchecked_param_type = "string | undefined | null")] key: Option<String>,
    fingerprint: &str,
    #[wasm_bindgen(js_name = nowMs)] now_ms: f64,
    #[wasm_bindgen(js_name = leaseMs, unchecked_optional_param_type = "number | undefined | null")] lease_ms: Option<
        f64,
    >,
    #[wasm_bindgen(js_name = retentionMs, unchecked_optional_param_type = "number | undefined | null")]
    retention_ms: Option<f64>,
    #[wasm_bindgen(unchecked_optional_param_type = "boolean | undefined | null")] stripe: Option<bool>,
    #[wasm_bindgen(js_name = failureHandling, unchecked_optional_param_type = "string | undefined | null")]
    failure_handling: Option<String>,
    #[wasm_bindgen(js_name = releaseCategories, unchecked_optional_param_type = "Array<string> | undefined | null")]
    release_categories: JsValue,
) -> Result<JsValue, JsErr> {
    let cfg = record_config(lease_ms, retention_ms, stripe, failure_handling, &release_categories)?;
    let Some(key) = key else {
        let v = serde_json::json!({"decision": "missing_key", "http": http_json(Some(idem::missing_key_answer(&cfg)))});
        return Ok(js(&camel_top(v)));
    };
    let now = wall_ms(now_ms, "now")?;
    let rec = record.map(|t| record_of(&t)).transpose()?;
    let d = idem::decide(rec.as_ref(), &key, fingerprint, now, &cfg).map_err(ie)?;
    let mut v = serde_json::to_value(&d).map_err(|e| raise("state", "invalid_state", "", &e.to_string()))?;
    if let Some(m) = v.as_object_mut() {
        m.insert("http".to_owned(), http_json(d.http(&cfg)));
        if let idem::RecordDecision::Execute(claim) = &d {
            m.insert(
                "record".to_owned(),
                serde_json::to_value(claim.to_record(&key, fingerprint)).unwrap_or(Value::Null),
            );
        }
    }
    Ok(js(&camel_top(v)))
}

fn outcome_of(text: &str) -> R<idem::Outcome> {
    let o: Value = serde_json::from_str(text).map_err(|e| raise("type", "invalid_json", "outcome", &e.to_string()))?;
    let response = match o.get("response") {
        None | Some(Value::Null) => None,
        Some(r) => Some(
            serde_json::from_value::<idem::StoredResponse>(r.clone())
                .map_err(|e| raise("type", "invalid_type", "outcome.response", &format!("outcome.response: {e}")))?,
        ),
    };
    match o.get("state").and_then(Value::as_str) {
        Some("succeeded") => Ok(idem::Outcome::Succeeded { response }),
        Some("failed") => Ok(idem::Outcome::Failed {
            category: o.get("category").and_then(Value::as_str).unwrap_or_default().to_owned(),
            response,
        }),
        _ => Err(raise("range", "invalid_value", "outcome.state", "outcome.state: must be succeeded or failed")),
    }
}

/// Completes a claimed record with an outcome; returns the record's JSON.
#[wasm_bindgen(js_name = completeRecord)]
#[allow(clippy::too_many_arguments)]
pub fn complete_record(
    record: &str,
    fence: f64,
    outcome: &str,
    #[wasm_bindgen(js_name = nowMs)] now_ms: f64,
    #[wasm_bindgen(js_name = leaseMs, unchecked_optional_param_type = "number | undefined | null")] lease_ms: Option<
        f64,
    >,
    #[wasm_bindgen(js_name = retentionMs, unchecked_optional_param_type = "number | undefined | null")]
    retention_ms: Option<f64>,
    #[wasm_bindgen(unchecked_optional_param_type = "boolean | undefined | null")] stripe: Option<bool>,
    #[wasm_bindgen(js_name = failureHandling, unchecked_optional_param_type = "string | undefined | null")]
    failure_handling: Option<String>,
    #[wasm_bindgen(js_name = releaseCategories, unchecked_optional_param_type = "Array<string> | undefined | null")]
    release_categories: JsValue,
) -> Result<String, JsErr> {
    let cfg = record_config(lease_ms, retention_ms, stripe, failure_handling, &release_categories)?;
    let rec = record_of(record)?;
    let fence = wall_ms(fence, "fence")?;
    let now = wall_ms(now_ms, "now")?;
    let o = outcome_of(outcome)?;
    idem::complete(&rec, fence, o, now, &cfg).map(|r| r.to_json()).map_err(ie)
}

/// Renews the holder's lease; returns the record's JSON.
#[wasm_bindgen(js_name = renewLease)]
#[allow(clippy::too_many_arguments)]
pub fn renew_lease(
    record: &str,
    fence: f64,
    #[wasm_bindgen(js_name = nowMs)] now_ms: f64,
    #[wasm_bindgen(js_name = leaseMs, unchecked_optional_param_type = "number | undefined | null")] lease_ms: Option<
        f64,
    >,
    #[wasm_bindgen(js_name = retentionMs, unchecked_optional_param_type = "number | undefined | null")]
    retention_ms: Option<f64>,
    #[wasm_bindgen(unchecked_optional_param_type = "boolean | undefined | null")] stripe: Option<bool>,
    #[wasm_bindgen(js_name = failureHandling, unchecked_optional_param_type = "string | undefined | null")]
    failure_handling: Option<String>,
    #[wasm_bindgen(js_name = releaseCategories, unchecked_optional_param_type = "Array<string> | undefined | null")]
    release_categories: JsValue,
) -> Result<String, JsErr> {
    let cfg = record_config(lease_ms, retention_ms, stripe, failure_handling, &release_categories)?;
    let rec = record_of(record)?;
    let fence = wall_ms(fence, "fence")?;
    let now = wall_ms(now_ms, "now")?;
    idem::renew_lease(&rec, fence, now, &cfg).map(|r| r.to_json()).map_err(ie)
}

/// Validates a dead letter, applies `ops` in order, and returns its JSON.
#[wasm_bindgen(js_name = deadLetter)]
pub fn dead_letter(
    letter: &str,
    #[wasm_bindgen(unchecked_param_type = "Array<string>")] ops: JsValue,
) -> Result<String, JsErr> {
    let ops = strings(&ops, "ops")?.unwrap_or_default();
    let mut l = idem::DeadLetter::from_json(letter).map_err(ie)?;
    for op in &ops {
        match op.as_str() {
            "mark_replayable" => l.mark_replayable(),
            "mark_replayed" => l.mark_replayed(),
            "discard" => l.discard(),
            other => {
                let shown: String = other.chars().take(64).collect();
                return Err(raise("range", "invalid_value", "op", &format!("op: unknown operation {shown:?}")));
            }
        }
        .map_err(ie)?;
    }
    Ok(l.to_json())
}

/// Writes Unix milliseconds as RFC 3339 (`YYYY-MM-DDTHH:MM:SS.mmmZ`).
#[wasm_bindgen(js_name = formatRfc3339)]
pub fn format_rfc3339(#[wasm_bindgen(js_name = unixMs)] unix_ms: f64) -> Result<String, JsErr> {
    let ms = wall_ms(unix_ms, "unixMs")?;
    idem::format_rfc3339_ms(ms).map_err(ce)
}

/// Reads RFC 3339 text as Unix milliseconds (rounded down).
#[wasm_bindgen(js_name = parseRfc3339)]
pub fn parse_rfc3339(text: &str) -> Result<f64, JsErr> {
    idem::parse_rfc3339_ms(text).map(|v| v as f64).map_err(ce)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mint_key_reads_hex_without_panicking() {
        assert!(mint_key(Some("00112233445566778899aabbccddeeff".into())).is_ok());
        for bad in ["", "0", "zz112233445566778899aabbccddeeff", "é0112233445566778899aabbccddeef", &"0".repeat(33)] {
            assert_eq!(mint_key(Some(bad.into())).map_err(|e| e.code()), Err("invalid_value"));
        }
    }

    #[test]
    fn camel_case_keys() {
        assert_eq!(camel("retry_after_s"), "retryAfterS");
        assert_eq!(camel("_x__y_"), "XY");
    }
}

//! Idempotency keys, the `Idempotency-Key` header, canonical JSON,
//! fingerprints, records and dead letters (docs/idempotency.md).
//!
//! Records, responses and dead letters are documents: JSON with snake_case
//! keys, the same in every runtime. Decisions are API results (camelCase).

use crate::error::{Error, Result};
use crate::failure::StrList;
use crate::host::{quote, wall_ms, whole_ms, Host};
use retrycore::idempotency as idem;
use retrycore::ErrorCode;
use serde_json::{Map, Value};
use std::time::Duration;

/// A maximum key length: any whole number (the core's count rule, as in Python); the core bounds it from below.
fn max_len(v: f64) -> Result<usize> {
    Ok(usize::try_from(crate::host::count(v, u64::MAX, "maxLen")?).unwrap_or(usize::MAX))
}

/// Checks a key: true, or an `IdempotencyError` saying which character at which position is wrong.
pub fn validate_key(key: &str, max: f64) -> Result<bool> {
    idem::validate_key(key, max_len(max)?).map(|()| true).map_err(Error::of_idempotency)
}

/// Joins business id, operation and version into a key.
pub fn derive_key(parts: &[String]) -> Result<String> {
    let p: Vec<&str> = parts.iter().map(String::as_str).collect();
    idem::derive_key(&p).map_err(Error::of_idempotency)
}

/// Scopes a key to a tenant.
pub fn scoped_key(tenant: &str, key: &str) -> Result<String> {
    idem::scoped_key(tenant, key).map_err(Error::of_idempotency)
}

/// Maps a key to one a store's index can hold.
pub fn storage_key(key: &str, max: f64) -> Result<String> {
    idem::storage_key(key, max_len(max)?).map_err(Error::of_idempotency)
}

/// Mints a UUIDv4 key from the host's entropy, or from 32 hex digits of entropy (tests).
pub fn mint_key<H: Host>(entropy_hex: Option<&str>) -> Result<String> {
    let mut b = [0u8; 16];
    match entropy_hex {
        None => H::entropy(&mut b)?,
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
                _ => {
                    return Err(Error::idempotency(
                        ErrorCode::InvalidValue,
                        "entropy",
                        "entropy: must be 32 hex digits",
                    ))
                }
            }
        }
    }
    Ok(idem::mint_key(b))
}

/// Writes the `Idempotency-Key` header value (an RFC 8941 sf-string).
pub fn format_header(key: &str) -> Result<String> {
    idem::format_header(key).map_err(Error::of_idempotency)
}

/// Reads an `Idempotency-Key` header value; `token` also accepts Stripe's bare token.
pub fn parse_header(value: &str, token: bool) -> Result<String> {
    let form = if token { idem::HeaderForm::SfStringOrToken } else { idem::HeaderForm::SfString };
    idem::parse_header(value, form).map_err(Error::of_idempotency)
}

/// Canonicalises JSON text (RFC 8785).
pub fn canonicalize(text: &str) -> Result<String> {
    idem::canonicalize_json(text).map_err(Error::of_idempotency)
}

/// Writes a number as canonical JSON does (ECMAScript `Number::toString`).
pub fn canonical_number(x: f64) -> Result<String> {
    idem::format_number(x).map_err(Error::of_idempotency)
}

/// Fingerprints a request: `method` + `path`, or `operation`, as the caller
/// gave them (which go together is the core's `FingerprintOf::read`, as in
/// Python); the body is JSON text. `canonical` returns the canonical JSON
/// instead of its hash.
pub fn fingerprint<L: StrList>(
    method: Option<&str>,
    path: Option<&str>,
    operation: Option<&str>,
    body: &str,
    selected: L,
    canonical: bool,
) -> Result<String> {
    let of = idem::FingerprintOf::read(method, path, operation).map_err(Error::of_idempotency)?;
    let body = idem::parse_json(body).map_err(Error::of_idempotency)?;
    let selected = selected.read("selected")?;
    let sel: Option<Vec<&str>> = selected.as_ref().map(|s| s.iter().map(String::as_str).collect());
    of.fingerprint(&body, sel.as_deref(), canonical).map_err(Error::of_idempotency)
}

/// The record settings every record call takes, as the surface passes them.
pub struct RecordArgs<L> {
    /// How long a claim holds (ms; default the core's).
    pub lease_ms: Option<f64>,
    /// How long a completed record is kept (ms; default the core's).
    pub retention_ms: Option<f64>,
    /// Stripe's conventions.
    pub stripe: Option<bool>,
    /// `by_category`, `replay` or `execute`.
    pub failure_handling: Option<String>,
    /// The failure categories that release a claim.
    pub release_categories: L,
}

impl<L: StrList> RecordArgs<L> {
    /// Checks the settings and builds the record configuration.
    pub fn config(self) -> Result<idem::RecordConfig> {
        let d = idem::RecordConfig::default();
        let dur = |v: Option<f64>, default: u64, field: &str| -> Result<Duration> {
            match v {
                None => Ok(Duration::from_millis(default)),
                Some(x) => retrycore::duration::from_millis_f64(x, field)
                    .map(Duration::from_nanos)
                    .map_err(Error::of_idempotency),
            }
        };
        let mut c = idem::RecordConfig::new(
            dur(self.lease_ms, d.lease_ms(), "leaseMs")?,
            dur(self.retention_ms, d.retention_ms(), "retentionMs")?,
        )
        .map_err(Error::of_idempotency)?;
        if let Some(s) = self.stripe {
            c = c.with_stripe(s);
        }
        if let Some(h) = self.failure_handling {
            c = c.with_failure_handling(
                idem::FailureHandling::parse(&h, "failureHandling").map_err(Error::of_idempotency)?,
            );
        }
        if let Some(list) = self.release_categories.read("releaseCategories")? {
            c = c.with_release_categories(list);
        }
        Ok(c)
    }
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

fn record_of(text: &str) -> Result<idem::IdempotencyRecord> {
    idem::IdempotencyRecord::from_json(text).map_err(Error::of_idempotency)
}

/// Decides what an incoming request gets (`record` is the stored record's JSON or null).
pub fn decide_record<L: StrList>(
    record: Option<&str>,
    key: Option<&str>,
    fingerprint: &str,
    now_ms: f64,
    settings: RecordArgs<L>,
) -> Result<Value> {
    let cfg = settings.config()?;
    let Some(key) = key else {
        let v = serde_json::json!({"decision": "missing_key", "http": http_json(Some(idem::missing_key_answer(&cfg)))});
        return Ok(camel_top(v));
    };
    let now = wall_ms(now_ms, "now")?;
    let rec = record.map(record_of).transpose()?;
    let d = idem::decide(rec.as_ref(), key, fingerprint, now, &cfg).map_err(Error::of_idempotency)?;
    let mut v = serde_json::to_value(&d).map_err(|e| Error::idempotency(ErrorCode::InvalidState, "", e.to_string()))?;
    if let Some(m) = v.as_object_mut() {
        m.insert("http".to_owned(), http_json(d.http(&cfg)));
        if let idem::RecordDecision::Execute(claim) = &d {
            m.insert(
                "record".to_owned(),
                serde_json::to_value(claim.to_record(key, fingerprint)).unwrap_or(Value::Null),
            );
        }
    }
    Ok(camel_top(v))
}

fn outcome_of(text: &str) -> Result<idem::Outcome> {
    let mut o: Value =
        serde_json::from_str(text).map_err(|e| Error::idempotency(ErrorCode::InvalidJson, "outcome", e.to_string()))?;
    // Moved out, not cloned: the body may be large and `o` needs it no more.
    let response = match o.get_mut("response").map(Value::take) {
        None | Some(Value::Null) => None,
        Some(r) => Some(serde_json::from_value::<idem::StoredResponse>(r).map_err(|e| {
            Error::idempotency(ErrorCode::InvalidType, "outcome.response", format!("outcome.response: {e}"))
        })?),
    };
    let state = match o.get("state") {
        None => None,
        Some(Value::String(x)) => Some(x.as_str()),
        Some(_) => {
            return Err(Error::idempotency(ErrorCode::InvalidType, "outcome.state", "outcome.state: must be a string"))
        }
    };
    let category = o.get("category").and_then(Value::as_str).map(str::to_owned);
    idem::Outcome::read(state, category, response, "outcome").map_err(Error::of_idempotency)
}

/// Completes a claimed record with an outcome; returns the record's JSON.
pub fn complete_record<L: StrList>(
    record: &str,
    fence: f64,
    outcome: &str,
    now_ms: f64,
    settings: RecordArgs<L>,
) -> Result<String> {
    let cfg = settings.config()?;
    let rec = record_of(record)?;
    let fence = whole_ms(fence, "fence")?;
    let now = wall_ms(now_ms, "now")?;
    let o = outcome_of(outcome)?;
    idem::complete(&rec, fence, o, now, &cfg).map(|r| r.to_json()).map_err(Error::of_idempotency)
}

/// Renews the holder's lease; returns the record's JSON.
pub fn renew_lease<L: StrList>(record: &str, fence: f64, now_ms: f64, settings: RecordArgs<L>) -> Result<String> {
    let cfg = settings.config()?;
    let rec = record_of(record)?;
    let fence = whole_ms(fence, "fence")?;
    let now = wall_ms(now_ms, "now")?;
    idem::renew_lease(&rec, fence, now, &cfg).map(|r| r.to_json()).map_err(Error::of_idempotency)
}

/// Validates a dead letter, applies `ops` in order, and returns its JSON.
pub fn dead_letter(letter: &str, ops: &[String]) -> Result<String> {
    let mut l = idem::DeadLetter::from_json(letter).map_err(Error::of_idempotency)?;
    for op in ops {
        match op.as_str() {
            "mark_replayable" => l.mark_replayable(),
            "mark_replayed" => l.mark_replayed(),
            "discard" => l.discard(),
            other => {
                return Err(Error::idempotency(
                    ErrorCode::InvalidValue,
                    "op",
                    format!("op: unknown operation {:?}", quote(other)),
                ))
            }
        }
        .map_err(Error::of_idempotency)?;
    }
    Ok(l.to_json())
}

/// Writes Unix milliseconds as RFC 3339 (`YYYY-MM-DDTHH:MM:SS.mmmZ`).
pub fn format_rfc3339(unix_ms: f64) -> Result<String> {
    let ms = whole_ms(unix_ms, "unixMs")?;
    idem::format_rfc3339_ms(ms).map_err(Error::of_idempotency)
}

/// Reads RFC 3339 text as Unix milliseconds (rounded down).
pub fn parse_rfc3339(text: &str) -> Result<f64> {
    idem::parse_rfc3339_ms(text).map(|v| v as f64).map_err(Error::of_idempotency)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::Strict;

    #[test]
    fn mint_key_reads_hex_without_panicking() {
        assert!(mint_key::<Strict>(Some("00112233445566778899aabbccddeeff")).is_ok());
        assert!(mint_key::<Strict>(None).is_ok());
        for bad in ["", "0", "zz112233445566778899aabbccddeeff", "é0112233445566778899aabbccddeef", &"0".repeat(33)] {
            assert_eq!(mint_key::<Strict>(Some(bad)).map_err(|e| e.code), Err("invalid_value"));
        }
    }

    #[test]
    fn camel_case_keys() {
        assert_eq!(camel("retry_after_s"), "retryAfterS");
        assert_eq!(camel("_x__y_"), "XY");
    }

    #[test]
    fn records_decide_in_camel_case() {
        let settings = || RecordArgs {
            lease_ms: None,
            retention_ms: None,
            stripe: None,
            failure_handling: None,
            release_categories: None::<Vec<String>>,
        };
        let missing = decide_record(None, None, "fp", 0.0, settings()).unwrap();
        assert_eq!(missing["decision"], "missing_key");
        assert!(missing["http"].get("retryAfterS").is_some());
        let fresh = decide_record(None, Some("k"), "fp", 1000.0, settings()).unwrap();
        assert!(fresh["record"].is_object());
        let mut bad = settings();
        bad.failure_handling = Some("x".into());
        assert_eq!(bad.config().unwrap_err().field, "failureHandling");
        assert_eq!(dead_letter("{}", &["discard".into()]).unwrap_err().class, crate::Class::Type);
        assert_eq!(dead_letter("{", &[]).unwrap_err().code, "invalid_json");
    }
}

//! Idempotency keys, the `Idempotency-Key` header, canonical JSON,
//! fingerprints, records and dead letters (docs/idempotency.md).
//!
//! Records, responses and dead letters are documents: JSON with snake_case
//! keys, the same in every runtime. Decisions are API results (camelCase).

use crate::camel_json;
use crate::error::{Error, Result};
use crate::failure::StrList;
use crate::host::{draw, quote, wall_ms, whole_ms, Host};
use retrycore::duration::from_millis_f64;
use retrycore::idempotency as idem;
use retrycore::ErrorCode;
use retrycore::{json, json::ToJson, json::Value};
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
    let b = match entropy_hex {
        None => draw::<H, 16>()?,
        Some(h) if h.len() == 32 && h.bytes().all(|c| c.is_ascii_hexdigit()) => {
            let mut b = [0u8; 16];
            for (x, i) in b.iter_mut().zip((0..).step_by(2)) {
                *x = h.get(i..i + 2).and_then(|p| u8::from_str_radix(p, 16).ok()).unwrap_or(0);
            }
            b
        }
        Some(_) => return Err(Error::idempotency(ErrorCode::InvalidValue, "entropy", "must be 32 hex digits")),
    };
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
    let body = idem::JsonText::parse(body).map_err(Error::of_idempotency)?;
    let selected = selected.read("selected")?;
    let sel: Option<Vec<&str>> = selected.as_ref().map(|s| s.iter().map(String::as_str).collect());
    of.fingerprint_text(&body, sel.as_deref(), canonical).map_err(Error::of_idempotency)
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
        let dur = |v: Option<f64>, default: u64, field: &str| match v {
            None => Ok(Duration::from_millis(default)),
            Some(x) => from_millis_f64(x, field).map(Duration::from_nanos).map_err(Error::of_idempotency),
        };
        let lease = dur(self.lease_ms, d.lease_ms(), "leaseMs")?;
        let c = idem::RecordConfig::new(lease, dur(self.retention_ms, d.retention_ms(), "retentionMs")?)
            .map_err(Error::of_idempotency)?;
        let handling = self.failure_handling.map(|h| idem::FailureHandling::parse(&h, "failureHandling"));
        let handling = handling.transpose().map_err(Error::of_idempotency)?.unwrap_or(d.failure_handling());
        let c = c.with_stripe(self.stripe.unwrap_or(d.stripe())).with_failure_handling(handling);
        Ok(match self.release_categories.read("releaseCategories")? {
            Some(list) => c.with_release_categories(list),
            None => c,
        })
    }
}

fn http_json(a: Option<idem::HttpAnswer>) -> Value {
    a.map_or(
        Value::Null,
        |a| json!({"status": a.status, "errorType": a.error_type, "title": a.title, "retryAfterS": a.retry_after_s}),
    )
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
        return Ok(json!({"decision": "missing_key", "http": http_json(Some(idem::missing_key_answer(&cfg)))}));
    };
    let now = wall_ms(now_ms, "now")?;
    let rec = record.map(record_of).transpose()?;
    let d = idem::decide(rec.as_ref(), key, fingerprint, now, &cfg).map_err(Error::of_idempotency)?;
    let mut v = d.to_value();
    if let Some(m) = v.as_object_mut() {
        m.insert("http".to_owned(), http_json(d.http(&cfg)));
        if let idem::RecordDecision::Execute(claim) = &d {
            m.insert("record".into(), claim.to_record(key, fingerprint).to_value());
        }
    }
    Ok(camel_json(v))
}

fn outcome_of(text: &str) -> Result<idem::Outcome> {
    let mut o: Value =
        retrycore::parse_stored(text).map_err(|e| Error::idempotency(ErrorCode::InvalidJson, "outcome", e.reason()))?;
    // Moved out, not cloned: the body may be large and `o` needs it no more.
    let response = match o.get_mut("response").map(Value::take) {
        None | Some(Value::Null) => None,
        Some(r) => Some(
            idem::StoredResponse::from_value(r, "outcome.response")
                .map_err(|e| Error::idempotency(ErrorCode::InvalidType, "outcome.response", e.reason()))?,
        ),
    };
    let state = match o.get("state") {
        None => None,
        Some(Value::String(x)) => Some(x.as_str()),
        Some(_) => return Err(Error::idempotency(ErrorCode::InvalidType, "outcome.state", "must be a string")),
    };
    let category = o.get("category").and_then(Value::as_str).map(str::to_owned);
    idem::Outcome::read(state, category, response, "outcome").map_err(Error::of_idempotency)
}

/// Reads what a holder's call takes: the settings, the record, its fence and the wall-clock now.
type Held = (idem::RecordConfig, idem::IdempotencyRecord, u64, u64);

fn held<L: StrList>(record: &str, fence: f64, now_ms: f64, settings: RecordArgs<L>) -> Result<Held> {
    Ok((settings.config()?, record_of(record)?, whole_ms(fence, "fence")?, wall_ms(now_ms, "now")?))
}

/// Completes a claimed record with an outcome; returns the record's JSON.
pub fn complete_record<L: StrList>(
    record: &str,
    fence: f64,
    outcome: &str,
    now_ms: f64,
    settings: RecordArgs<L>,
) -> Result<String> {
    let (cfg, rec, fence, now) = held(record, fence, now_ms, settings)?;
    idem::complete(&rec, fence, outcome_of(outcome)?, now, &cfg).map(|r| r.to_json()).map_err(Error::of_idempotency)
}

/// Renews the holder's lease; returns the record's JSON.
pub fn renew_lease<L: StrList>(record: &str, fence: f64, now_ms: f64, settings: RecordArgs<L>) -> Result<String> {
    let (cfg, rec, fence, now) = held(record, fence, now_ms, settings)?;
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
                    format_args!("unknown operation {:?}", quote(other)),
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

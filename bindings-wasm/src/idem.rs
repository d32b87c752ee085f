//! Idempotency keys, the `Idempotency-Key` header, canonical JSON,
//! fingerprints, records and dead letters (docs/idempotency.md).
//!
//! Records, responses and dead letters are documents: JSON with snake_case
//! keys, the same in every runtime. Decisions are API results (camelCase).

use crate::errors::JsErr;
use crate::{js, strings, Strings, Wasm};
use retrycore_js::idem::{self, RecordArgs};
use wasm_bindgen::prelude::*;

/// Checks a key: true, or an `IdempotencyError` saying which character at which position is wrong.
#[wasm_bindgen(js_name = validateKey)]
pub fn validate_key(key: &str, max: f64) -> Result<bool, JsErr> {
    Ok(idem::validate_key(key, max)?)
}

/// Joins business id, operation and version into a key.
#[wasm_bindgen(js_name = deriveKey)]
pub fn derive_key(#[wasm_bindgen(unchecked_param_type = "Array<string>")] parts: JsValue) -> Result<String, JsErr> {
    let parts = strings(&parts, "parts")?.unwrap_or_default();
    Ok(idem::derive_key(&parts)?)
}

/// Scopes a key to a tenant.
#[wasm_bindgen(js_name = scopedKey)]
pub fn scoped_key(tenant: &str, key: &str) -> Result<String, JsErr> {
    Ok(idem::scoped_key(tenant, key)?)
}

/// Maps a key to one a store's index can hold.
#[wasm_bindgen(js_name = storageKey)]
pub fn storage_key(key: &str, max: f64) -> Result<String, JsErr> {
    Ok(idem::storage_key(key, max)?)
}

/// Mints a UUIDv4 key from OS entropy, or from 32 hex digits of entropy (tests).
#[wasm_bindgen(js_name = mintKey)]
pub fn mint_key(#[wasm_bindgen(js_name = entropyHex)] entropy_hex: Option<String>) -> Result<String, JsErr> {
    Ok(idem::mint_key::<Wasm>(entropy_hex.as_deref())?)
}

/// Writes the `Idempotency-Key` header value (an RFC 8941 sf-string).
#[wasm_bindgen(js_name = formatHeader)]
pub fn format_header(key: &str) -> Result<String, JsErr> {
    Ok(idem::format_header(key)?)
}

/// Reads an `Idempotency-Key` header value; `token` also accepts Stripe's bare token.
#[wasm_bindgen(js_name = parseHeader)]
pub fn parse_header(value: &str, token: bool) -> Result<String, JsErr> {
    Ok(idem::parse_header(value, token)?)
}

/// Canonicalises JSON text (RFC 8785).
#[wasm_bindgen]
pub fn canonicalize(text: &str) -> Result<String, JsErr> {
    Ok(idem::canonicalize(text)?)
}

/// Writes a number as canonical JSON does (ECMAScript `Number::toString`).
#[wasm_bindgen(js_name = canonicalNumber)]
pub fn canonical_number(x: f64) -> Result<String, JsErr> {
    Ok(idem::canonical_number(x)?)
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
    Ok(idem::fingerprint(method_or_operation, path.as_deref(), body, Strings(&selected), canonical)?)
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
    let release_categories = Strings(&release_categories);
    let settings = RecordArgs { lease_ms, retention_ms, stripe, failure_handling, release_categories };
    Ok(js(&idem::decide_record(record.as_deref(), key.as_deref(), fingerprint, now_ms, settings)?))
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
    let release_categories = Strings(&release_categories);
    let settings = RecordArgs { lease_ms, retention_ms, stripe, failure_handling, release_categories };
    Ok(idem::complete_record(record, fence, outcome, now_ms, settings)?)
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
    let release_categories = Strings(&release_categories);
    let settings = RecordArgs { lease_ms, retention_ms, stripe, failure_handling, release_categories };
    Ok(idem::renew_lease(record, fence, now_ms, settings)?)
}

/// Validates a dead letter, applies `ops` in order, and returns its JSON.
#[wasm_bindgen(js_name = deadLetter)]
pub fn dead_letter(
    letter: &str,
    #[wasm_bindgen(unchecked_param_type = "Array<string>")] ops: JsValue,
) -> Result<String, JsErr> {
    let ops = strings(&ops, "ops")?.unwrap_or_default();
    Ok(idem::dead_letter(letter, &ops)?)
}

/// Writes Unix milliseconds as RFC 3339 (`YYYY-MM-DDTHH:MM:SS.mmmZ`).
#[wasm_bindgen(js_name = formatRfc3339)]
pub fn format_rfc3339(#[wasm_bindgen(js_name = unixMs)] unix_ms: f64) -> Result<String, JsErr> {
    Ok(idem::format_rfc3339(unix_ms)?)
}

/// Reads RFC 3339 text as Unix milliseconds (rounded down).
#[wasm_bindgen(js_name = parseRfc3339)]
pub fn parse_rfc3339(text: &str) -> Result<f64, JsErr> {
    Ok(idem::parse_rfc3339(text)?)
}

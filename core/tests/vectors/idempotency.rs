//! Runners for the idempotency kinds (keys, headers, fingerprints, records, dead letters).
//!
//! The schema of each kind is in `tests/vectors/idempotency/README.md`.
use crate::common::{as_u64, check_error, eq, Case};
use retrycore::idempotency::{self as idem, JsonValue};
use retrycore::{json, json::Value};
use std::time::Duration;

pub fn run(kind: &str, case: &Case) -> Option<Result<(), String>> {
    let r = match kind {
        "key_validate" => key_validate(case),
        "key_derive" => key_derive(case),
        "key_scoped" => key_scoped(case),
        "storage_key" => storage_key(case),
        "key_mint" => key_mint(case),
        "header_parse" => header_parse(case),
        "header_format" => header_format(case),
        "jcs" => jcs(case),
        "jcs_number" => jcs_number(case),
        "fingerprint" => fingerprint(case),
        "record_decide" => record_decide(case),
        "record_complete" => record_complete(case),
        "record_renew" => record_renew(case),
        "dead_letter" => dead_letter(case),
        "rfc3339" => rfc3339(case),
        _ => return None,
    };
    Some(r)
}

fn need<'a>(case: &'a Case, key: &str) -> Result<&'a Value, String> {
    case.get(key).ok_or_else(|| format!("case has no {key:?}"))
}

fn need_str<'a>(case: &'a Case, key: &str) -> Result<&'a str, String> {
    case.str(key).ok_or_else(|| format!("case has no string {key:?}"))
}

fn need_u64(case: &Case, key: &str) -> Result<u64, String> {
    case.u64(key).ok_or_else(|| format!("case has no integer {key:?}"))
}

/// Checks an outcome: an expected error code (and `error_field` when the
/// case gives one), or `expect` compared by `check`.
fn outcome<T: std::fmt::Debug>(
    case: &Case,
    got: retrycore::Result<T>,
    check: impl FnOnce(T, &Value) -> Result<(), String>,
) -> Result<(), String> {
    if let (Some(want), Err(e)) = (case.str("error_field"), &got) {
        eq("error field", e.field(), want)?;
    }
    match check_error(case, got)? {
        None => Ok(()),
        Some(v) => check(v, case.expect()),
    }
}

fn expect_str(got: String, want: &Value) -> Result<(), String> {
    eq("result", Some(got.as_str()), want.as_str())
}

fn key_validate(case: &Case) -> Result<(), String> {
    let max = case.u64("max_len").unwrap_or(idem::DEFAULT_MAX_KEY_LEN as u64) as usize;
    let got = idem::validate_key(need_str(case, "key")?, max);
    outcome(case, got, |(), want| eq("valid", Some(true), want.as_bool()))
}

fn key_derive(case: &Case) -> Result<(), String> {
    let parts: Vec<&str> = need(case, "parts")?
        .as_array()
        .ok_or("parts is not an array")?
        .iter()
        .map(|p| p.as_str().ok_or("a part is not a string"))
        .collect::<Result<_, _>>()?;
    outcome(case, idem::derive_key(&parts), expect_str)
}

fn key_scoped(case: &Case) -> Result<(), String> {
    let got = idem::scoped_key(need_str(case, "tenant")?, need_str(case, "key")?);
    outcome(case, got, expect_str)
}

fn storage_key(case: &Case) -> Result<(), String> {
    let got = idem::storage_key(need_str(case, "key")?, need_u64(case, "max_len")? as usize);
    outcome(case, got, expect_str)
}

fn key_mint(case: &Case) -> Result<(), String> {
    let hex = need_str(case, "entropy_hex")?;
    if hex.len() != 32 {
        return Err("entropy_hex must have 32 hex digits".into());
    }
    let mut entropy = [0u8; 16];
    for (i, b) in entropy.iter_mut().enumerate() {
        *b = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).map_err(|e| e.to_string())?;
    }
    eq("key", Some(idem::mint_key(entropy).as_str()), case.expect().as_str())
}

fn header_parse(case: &Case) -> Result<(), String> {
    let form = match case.str("form").unwrap_or("sf_string") {
        "sf_string" => idem::HeaderForm::SfString,
        "sf_string_or_token" => idem::HeaderForm::SfStringOrToken,
        other => return Err(format!("unknown form {other:?}")),
    };
    outcome(case, idem::parse_header(need_str(case, "value")?, form), expect_str)
}

fn header_format(case: &Case) -> Result<(), String> {
    outcome(case, idem::format_header(need_str(case, "key")?), expect_str)
}

/// Canonicalises `text` (through `parse_json`) or `value` (both as a
/// `serde_json::Value` and as a host-built `JsonValue`, which must agree).
fn canonical_of(case: &Case, text_key: &str, value_key: &str) -> Result<retrycore::Result<String>, String> {
    if let Some(text) = case.str(text_key) {
        return Ok(idem::canonicalize_json(text));
    }
    let value = case.v.get(value_key).ok_or_else(|| format!("case has neither {text_key:?} nor {value_key:?}"))?;
    let from_serde = idem::canonicalize(value);
    let from_host = JsonValue::try_from(value).and_then(|v| idem::canonicalize_value(&v));
    if from_serde != from_host {
        return Err(format!("serde_json and JsonValue paths disagree: {from_serde:?} vs {from_host:?}"));
    }
    Ok(from_serde)
}

fn jcs(case: &Case) -> Result<(), String> {
    outcome(case, canonical_of(case, "text", "value")?, expect_str)
}

fn jcs_number(case: &Case) -> Result<(), String> {
    let bits = u64::from_str_radix(need_str(case, "bits")?, 16).map_err(|e| e.to_string())?;
    let x = f64::from_bits(bits);
    let got = idem::canonicalize_value(&JsonValue::Number(x));
    eq("format_number agrees", got.as_ref().ok().cloned(), idem::format_number(x).ok())?;
    outcome(case, got, expect_str)
}

fn body_of(case: &Case) -> Result<retrycore::Result<JsonValue>, String> {
    if let Some(text) = case.str("body_text") {
        return Ok(idem::parse_json(text));
    }
    Ok(JsonValue::try_from(case.v.get("body").unwrap_or(&Value::Null)))
}

fn fingerprint(case: &Case) -> Result<(), String> {
    let selected: Option<Vec<&str>> = match case.get("selected") {
        None => None,
        Some(v) => Some(
            v.as_array()
                .ok_or("selected is not an array")?
                .iter()
                .map(|p| p.as_str().ok_or("a pointer is not a string"))
                .collect::<Result<_, _>>()?,
        ),
    };
    let sel = selected.as_deref();
    let body = match body_of(case)? {
        Ok(b) => b,
        Err(e) => return outcome(case, Err::<String, _>(e), expect_str),
    };
    // The options a case gives, read as every host reads them.
    let of = match idem::FingerprintOf::read(case.str("method"), case.str("path"), case.str("operation")) {
        Ok(of) => of,
        Err(e) => return outcome(case, Err::<String, _>(e), expect_str),
    };
    let (canonical, hex) = (of.fingerprint(&body, sel, true), of.fingerprint(&body, sel, false));
    if let (Some(want), Ok(got)) = (case.str("canonical"), &canonical) {
        eq("canonical", got.as_str(), want)?;
    }
    // The serde_json path must agree whenever the body is given as a value.
    if case.str("body_text").is_none() {
        let raw = case.v.get("body").unwrap_or(&Value::Null);
        let other = of.fingerprint(raw, sel, false);
        if other.as_ref().map_err(|e| e.code()) != hex.as_ref().map_err(|e| e.code()) {
            return Err(format!("serde_json and JsonValue paths disagree: {other:?} vs {hex:?}"));
        }
    }
    outcome(case, hex, expect_str)
}

pub fn config_of(case: &Case) -> Result<idem::RecordConfig, String> {
    let c = case.get("config").cloned().unwrap_or(json!({}));
    let obj = c.as_object().ok_or("config is not an object")?;
    let mut cfg = idem::RecordConfig::default();
    let ms = |k: &str, d: u64| obj.get(k).and_then(as_u64).unwrap_or(d);
    cfg = idem::RecordConfig::new(
        Duration::from_millis(ms("lease_ms", cfg.lease_ms())),
        Duration::from_millis(ms("retention_ms", cfg.retention_ms())),
    )
    .map_err(|e| e.to_string())?;
    for k in obj.keys() {
        if !["lease_ms", "retention_ms", "stripe", "failure_handling", "release_categories"].contains(&k.as_str()) {
            return Err(format!("unknown config key {k:?}"));
        }
    }
    if let Some(s) = obj.get("stripe") {
        cfg = cfg.with_stripe(s.as_bool().ok_or("stripe is not a boolean")?);
    }
    if let Some(h) = obj.get("failure_handling") {
        cfg = cfg.with_failure_handling(match h.as_str() {
            Some("by_category") => idem::FailureHandling::ByCategory,
            Some("replay") => idem::FailureHandling::Replay,
            Some("execute") => idem::FailureHandling::Execute,
            _ => return Err(format!("unknown failure_handling {h}")),
        });
    }
    if let Some(list) = obj.get("release_categories") {
        let cats: Vec<String> = list
            .as_array()
            .ok_or("release_categories is not an array")?
            .iter()
            .map(|c| c.as_str().map(str::to_owned).ok_or("a category is not a string"))
            .collect::<Result<_, _>>()?;
        cfg = cfg.with_release_categories(cats);
    }
    Ok(cfg)
}

pub fn record_of(v: &Value) -> Result<idem::IdempotencyRecord, String> {
    idem::IdempotencyRecord::from_json(&v.to_string()).map_err(|e| format!("bad record in case: {e}"))
}

fn http_json(a: Option<idem::HttpAnswer>) -> Value {
    match a {
        None => Value::Null,
        Some(a) => {
            json!({"status": a.status, "error_type": a.error_type, "title": a.title, "retry_after_s": a.retry_after_s})
        }
    }
}

fn record_decide(case: &Case) -> Result<(), String> {
    let cfg = config_of(case)?;
    let Some(key) = case.str("key") else {
        // A request without a key where one is required.
        let got = json!({"decision": "missing_key", "http": http_json(Some(idem::missing_key_answer(&cfg)))});
        return eq("decision", &got, case.expect());
    };
    let (fingerprint, now) = (need_str(case, "fingerprint")?, need_u64(case, "now")?);
    // A stored record that does not read is the case's error (decide never sees it).
    let record = case.get("record").map(|v| idem::IdempotencyRecord::from_json(&v.to_string())).transpose();
    let got = match &record {
        Ok(r) => idem::decide(r.as_ref(), key, fingerprint, now, &cfg),
        Err(e) => Err(e.clone()),
    };
    outcome(case, got, |d, want| {
        let mut v = retrycore::json::ToJson::to_value(&d);
        v["http"] = http_json(d.http(&cfg));
        eq("decision", &v, want)
    })
}

fn response_of(v: Option<&Value>) -> Result<Option<idem::StoredResponse>, String> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(r) => {
            idem::StoredResponse::from_value(r.clone(), "response").map(Some).map_err(|e| format!("bad response: {e}"))
        }
    }
}

fn record_complete(case: &Case) -> Result<(), String> {
    let cfg = config_of(case)?;
    let record = record_of(need(case, "record")?)?;
    let o = need(case, "outcome")?;
    let response = response_of(o.get("response"))?;
    let outcome_ = match o.get("state").and_then(Value::as_str) {
        Some("succeeded") => idem::Outcome::Succeeded { response },
        Some("failed") => idem::Outcome::Failed {
            category: o.get("category").and_then(Value::as_str).unwrap_or_default().to_owned(),
            response,
        },
        other => return Err(format!("unknown outcome state {other:?}")),
    };
    let got = idem::complete(&record, need_u64(case, "fence")?, outcome_, need_u64(case, "now")?, &cfg);
    outcome(case, got, |r, want| eq("record", &retrycore::json::ToJson::to_value(&r), want))
}

fn record_renew(case: &Case) -> Result<(), String> {
    let cfg = config_of(case)?;
    let record = record_of(need(case, "record")?)?;
    let got = idem::renew_lease(&record, need_u64(case, "fence")?, need_u64(case, "now")?, &cfg);
    outcome(case, got, |r, want| eq("record", &retrycore::json::ToJson::to_value(&r), want))
}

fn dead_letter(case: &Case) -> Result<(), String> {
    let text = need(case, "letter")?.to_string();
    let ops: Vec<String> = case
        .get("ops")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(|o| o.as_str().map(str::to_owned)).collect())
        .unwrap_or_default();
    if let Some(op) = ops.iter().find(|o| !["mark_replayable", "mark_replayed", "discard"].contains(&o.as_str())) {
        return Err(format!("unknown op {op:?}"));
    }
    let got = idem::DeadLetter::from_json(&text).and_then(|mut l| {
        for op in &ops {
            match op.as_str() {
                "mark_replayable" => l.mark_replayable()?,
                "mark_replayed" => l.mark_replayed()?,
                _ => l.discard()?,
            }
        }
        Ok(l)
    });
    outcome(case, got, |l, want| {
        let v = l.to_value();
        eq("letter", &v, want)?;
        let again = idem::DeadLetter::from_json(&l.to_json()).map_err(|e| format!("output does not read back: {e}"))?;
        eq("read back", again, l)
    })
}

fn rfc3339(case: &Case) -> Result<(), String> {
    if let Some(ms) = case.get("unix_ms") {
        let ms = as_u64(ms).ok_or("unix_ms is not an integer")?;
        return outcome(case, idem::format_rfc3339_ms(ms), expect_str);
    }
    outcome(case, idem::parse_rfc3339_ms(need_str(case, "text")?), |ms, want| eq("unix_ms", Some(ms), want.as_i64()))
}

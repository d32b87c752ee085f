//! The low-level half of the `retrycore-wasm` npm package (wasm-bindgen).
//!
//! This crate only translates, exactly like the Node binding
//! (`bindings-node/src`), whose low-level surface (`bindings-node/native.d.ts`)
//! it implements name for name, so that the one TypeScript layer
//! (`bindings-node/lib/retrycore.ts`) runs on either: JavaScript numbers in
//! milliseconds become the core's nanoseconds (round half to even,
//! `duration::from_millis_f64`), JSON text becomes the core's documents, and
//! the core's errors become JavaScript `Error` objects built by the JS
//! layer's error factory. Every decision is the core's.
//!
//! Hot paths (delay, status classification, breaker acquire/record, budget
//! withdraw, session steps) take and return numbers; sessions live in a
//! per-policy slab and are named by generation-tagged numeric ids, breaker
//! permits are numbers (`epoch * 2 + trial`, -1 refused), and a `now` of
//! exactly -1 means "read `performance.now()`".
//!
//! **No panics.** A Rust panic in WebAssembly traps and can leave the
//! instance inconsistent, so nothing here may panic on any input: checked
//! conversions, no `unwrap` on input paths, arrays read through catching
//! imports, and errors leave by return value (see [`errors`]), never by
//! unwinding. `tests/wasm/backend-hostile.test.mjs` drives every export with
//! hostile values and checks that the instance still answers.

mod breaker;
mod budget;
mod errors;
mod floor;
mod idem;
mod policy;

use errors::{core_err, raise, Domain, R};
use retrycore::classify::Category;
use retrycore::duration;
use retrycore::rng::{Rng, Xoshiro256pp};
use serde_json::{json, Value};
use std::cell::RefCell;
use wasm_bindgen::prelude::*;

pub use errors::{set_error_factory, take_error, JsErr};

#[wasm_bindgen]
extern "C" {
    /// `performance.now()` of this JS environment (every target has it).
    #[wasm_bindgen(catch, js_namespace = performance, js_name = now)]
    fn performance_now() -> Result<f64, JsValue>;
    #[wasm_bindgen(catch, js_namespace = Array, js_name = isArray)]
    fn js_is_array(v: &JsValue) -> Result<bool, JsValue>;
}

/// Converts milliseconds from JavaScript to nanoseconds, naming `field` in errors.
pub(crate) fn ns(ms: f64, field: &str) -> R<u64> {
    duration::from_millis_f64(ms, field).map_err(|e| core_err(&e, Domain::Config))
}

/// Converts a monotonic `now` in milliseconds; exactly -1 means "now" on the
/// clock of `performance.now()` (the JS layer passes it when the caller gave
/// no time; callers' negative times are refused before they get here).
pub(crate) fn now_ns(now: f64, field: &str) -> R<u64> {
    if now == -1.0 {
        let ms = performance_now().ok().filter(|m| m.is_finite() && *m >= 0.0).unwrap_or(0.0);
        return ns(ms, field);
    }
    ns(now, field)
}

/// Converts nanoseconds to JavaScript milliseconds (one IEEE division).
#[inline(always)]
pub(crate) fn ms(ns: u64) -> f64 {
    duration::to_millis_f64(ns)
}

/// Converts a wall-clock time in Unix epoch milliseconds.
pub(crate) fn wall_ms(v: f64, field: &str) -> R<u64> {
    if v.is_finite() && v >= 0.0 && v.fract() == 0.0 && v <= 9_007_199_254_740_991.0 {
        Ok(v as u64)
    } else {
        Err(raise(
            "range",
            "out_of_range",
            field,
            &format!("{field}: must be a non-negative integer of milliseconds, got {v}"),
        ))
    }
}

/// Reads a `u64` given as a decimal string (JavaScript passes seeds and
/// other 64-bit integers as strings or BigInt converted to strings).
pub(crate) fn u64_arg(s: &str, field: &str) -> R<u64> {
    s.trim().parse::<u64>().map_err(|_| {
        let shown: String = s.chars().take(64).collect();
        raise("range", "out_of_range", field, &format!("{field}: must be an integer in [0, 2^64), got {shown:?}"))
    })
}

/// Converts a JSON value to a JavaScript value (objects and arrays are
/// built by `JSON.parse`, the cheapest way across the boundary).
pub(crate) fn js(v: &Value) -> JsValue {
    match v {
        Value::Null => JsValue::NULL,
        Value::Bool(b) => JsValue::from_bool(*b),
        Value::Number(n) => JsValue::from_f64(n.as_f64().unwrap_or(f64::NAN)),
        Value::String(s) => JsValue::from_str(s),
        _ => js_sys::JSON::parse(&v.to_string()).unwrap_or(JsValue::NULL),
    }
}

/// The longest array any argument may be (names, headers, parts, draws).
const MAX_ARRAY: u32 = 65_536;

/// Reads an array argument element by element through catching imports (a
/// getter or a revoked proxy throws into a `Result`, never through Rust).
fn array_items<T>(
    v: &JsValue,
    field: &str,
    what: &str,
    mut item: impl FnMut(JsValue) -> Option<T>,
) -> R<Option<Vec<T>>> {
    if v.is_undefined() || v.is_null() {
        return Ok(None);
    }
    let bad = || raise("type", "invalid_type", field, &format!("{field}: must be an array of {what}"));
    if !js_is_array(v).unwrap_or(false) {
        return Err(bad());
    }
    let len = js_sys::Reflect::get(v, &JsValue::from_str("length")).map_err(|_| bad())?.as_f64().unwrap_or(-1.0);
    if !(len >= 0.0 && len.fract() == 0.0) {
        return Err(bad());
    }
    if len > f64::from(MAX_ARRAY) {
        return Err(raise("range", "too_large", field, &format!("{field}: at most {MAX_ARRAY} items")));
    }
    let n = len as u32;
    let mut out = Vec::with_capacity(n as usize);
    for i in 0..n {
        let x = js_sys::Reflect::get_u32(v, i).map_err(|_| bad())?;
        match item(x) {
            Some(t) => out.push(t),
            None => {
                return Err(raise("type", "invalid_type", field, &format!("{field}[{i}]: must be {what}")));
            }
        }
    }
    Ok(Some(out))
}

/// A `[name, value]` pair of a flat header list (`chunks_exact(2)` gives only pairs).
pub(crate) fn pair(p: &[String]) -> Option<(&str, &str)> {
    match p {
        [n, v] => Some((n.as_str(), v.as_str())),
        _ => None,
    }
}

/// Reads `Array<string> | undefined | null`.
pub(crate) fn strings(v: &JsValue, field: &str) -> R<Option<Vec<String>>> {
    array_items(v, field, "strings", |x| x.as_string())
}

/// Reads `Array<number> | undefined | null`.
pub(crate) fn numbers(v: &JsValue, field: &str) -> R<Option<Vec<f64>>> {
    array_items(v, field, "numbers", |x| x.as_f64())
}

thread_local! {
    /// OS entropy, drawn 4 KiB at a time: minting a key must not cost a call into JS.
    static ENTROPY: RefCell<(Vec<u8>, usize)> = const { RefCell::new((Vec::new(), 0)) };
}

/// Fills `out` (at most 4 KiB) with bytes from the host's generator
/// (`crypto.getRandomValues`), buffered.
pub(crate) fn entropy(out: &mut [u8]) -> R<()> {
    ENTROPY.with(|cell| {
        let mut cell = cell.borrow_mut();
        let (buf, pos) = &mut *cell;
        let end = pos.checked_add(out.len()).filter(|e| *e <= buf.len());
        let end = match end {
            Some(e) => e,
            None => {
                buf.resize(4096, 0);
                if let Err(e) = getrandom::fill(buf) {
                    // Nothing half-filled may be handed out later.
                    buf.clear();
                    *pos = 0;
                    return Err(raise(
                        "state",
                        "invalid_state",
                        "entropy",
                        &format!("the host gave no entropy (crypto.getRandomValues): {e}"),
                    ));
                }
                *pos = 0;
                if out.len() > buf.len() {
                    return Err(raise("range", "out_of_range", "entropy", "entropy: too many bytes asked"));
                }
                out.len()
            }
        };
        if let Some(src) = buf.get_mut(*pos..end) {
            out.copy_from_slice(src);
            // Never hand the same bytes out twice.
            src.fill(0);
        }
        *pos = end;
        Ok(())
    })
}

pub(crate) fn entropy_u64() -> R<u64> {
    let mut b = [0u8; 8];
    entropy(&mut b)?;
    Ok(u64::from_le_bytes(b))
}

/// Anchors the monotonic clock to the JS environment's `performance.now()`.
/// The wasm build reads `performance.now()` itself: nothing to anchor.
#[wasm_bindgen]
pub fn calibrate(#[wasm_bindgen(js_name = performanceNow)] _performance_now: f64) {}

/// Returns the tables the JS layer needs: category, reason and error codes,
/// the JSON nesting limit, lint codes.
#[wasm_bindgen(unchecked_return_type = "any")]
pub fn info() -> JsValue {
    js(&json!({
        "version": env!("CARGO_PKG_VERSION"),
        "maxJsonDepth": retrycore::idempotency::MAX_DEPTH,
        "categories": Category::ALL.iter().map(|c| c.code()).collect::<Vec<_>>(),
        "retryRules": ["always", "if_idempotent", "never"],
        "giveUpReasons": retrycore::session::GiveUpReason::ALL.iter().map(|r| r.code()).collect::<Vec<_>>(),
        "errorCodes": retrycore::ErrorCode::ALL.iter().map(|c| c.code()).collect::<Vec<_>>(),
        "lintCodes": retrycore::lint::CODES.iter().map(|(c, s, d)| json!({"code": c, "severity": s.code(), "description": d})).collect::<Vec<_>>(),
        "states": ["closed", "open", "half_open", "disabled", "forced_open", "metrics_only"],
    }))
}

/// Parses a duration string (`"250ms"`) to milliseconds.
#[wasm_bindgen(js_name = parseDuration)]
pub fn parse_duration(text: &str) -> Result<f64, JsErr> {
    duration::parse_duration(text, "duration").map(ms).map_err(|e| core_err(&e, Domain::Config))
}

/// Writes milliseconds as the shortest exact duration string.
#[wasm_bindgen(js_name = formatDuration)]
pub fn format_duration(#[wasm_bindgen(js_name = valueMs)] value_ms: f64) -> Result<String, JsErr> {
    Ok(duration::format_duration(ns(value_ms, "duration")?))
}

/// Reads server delay headers (flat `[name, value, name, value, …]`).
#[wasm_bindgen(js_name = serverAdvice, unchecked_return_type = "any")]
pub fn server_advice(
    #[wasm_bindgen(unchecked_param_type = "Array<string>")] headers: JsValue,
    #[wasm_bindgen(js_name = wallNowMs)] wall_now_ms: Option<f64>,
) -> Result<JsValue, JsErr> {
    let headers = strings(&headers, "headers")?.unwrap_or_default();
    let wall = wall_now_ms.map(|w| wall_ms(w, "wallNowMs")).transpose()?;
    let a = retrycore::retry_after::read_headers(headers.chunks_exact(2).filter_map(pair), wall);
    Ok(js(&json!({
        "delay": a.delay_ns().map(ms),
        "source": a.delay.map(|(_, s)| s.name()),
        "declined": a.declined_by_pushback,
        "shouldRetry": a.should_retry,
        "retryExhausted": a.retry_exhausted,
    })))
}

/// Parses an HTTP-date to Unix seconds (`null` when it is not one).
#[wasm_bindgen(js_name = parseHttpDate, unchecked_return_type = "number | null")]
pub fn parse_http_date(value: &str, #[wasm_bindgen(js_name = wallNowMs)] wall_now_ms: f64) -> Result<JsValue, JsErr> {
    let wall = wall_ms(wall_now_ms, "wallNowMs")?;
    Ok(retrycore::retry_after::parse_http_date(value, wall).map_or(JsValue::NULL, |s| JsValue::from_f64(s as f64)))
}

/// Lints a policy document (JSON text) against an optional service description.
#[wasm_bindgen(unchecked_return_type = "any")]
pub fn lint(policy: &str, service: Option<String>) -> Result<JsValue, JsErr> {
    let p = retrycore::policy::PolicyConfig::from_json(policy).map_err(|e| core_err(&e, Domain::Config))?;
    let s = match service {
        None => None,
        Some(t) => Some(retrycore::lint::Service::from_json(&t).map_err(|e| core_err(&e, Domain::Config))?),
    };
    let findings = retrycore::lint::lint(&p, s.as_ref());
    Ok(js(&Value::Array(
        findings
            .iter()
            .map(|f| json!({"code": f.code, "severity": f.severity.code(), "field": f.field, "message": f.message}))
            .collect(),
    )))
}

/// The seeded generator of every runtime: xoshiro256++ seeded by SplitMix64.
#[wasm_bindgen]
pub struct NativeRng {
    g: Xoshiro256pp,
}

#[wasm_bindgen]
impl NativeRng {
    /// Seeds a generator from a decimal u64.
    #[wasm_bindgen(constructor)]
    pub fn new(seed: &str) -> Result<NativeRng, JsErr> {
        Ok(NativeRng { g: Xoshiro256pp::seed_from_u64(u64_arg(seed, "seed")?) })
    }

    /// Returns the next u64 as a decimal string.
    #[wasm_bindgen(js_name = nextU64)]
    pub fn next_u64(&mut self) -> String {
        self.g.next_u64().to_string()
    }

    /// Returns the next draw in [0, 1).
    #[wasm_bindgen(js_name = nextF64)]
    pub fn next_f64(&mut self) -> f64 {
        self.g.next_f64()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wall_clock_and_seeds_are_checked() {
        assert_eq!(wall_ms(5.0, "w"), Ok(5));
        for bad in [f64::NAN, -1.0, 0.5, f64::INFINITY, 9_007_199_254_740_992.0] {
            assert_eq!(wall_ms(bad, "w").map_err(|e| e.code()), Err("out_of_range"));
        }
        assert_eq!(u64_arg(" 18446744073709551615 ", "seed"), Ok(u64::MAX));
        assert!(u64_arg("18446744073709551616", "seed").is_err());
        assert!(u64_arg(&"9".repeat(10_000_000), "seed").is_err());
    }

    #[test]
    fn durations_round_and_refuse() {
        assert_eq!(ns(1.5, "d"), Ok(1_500_000));
        assert!(ns(f64::NAN, "d").is_err());
        assert!(ns(-1.0, "d").is_err());
        assert_eq!(ms(1_500_000), 1.5);
    }

    #[test]
    fn entropy_never_repeats_bytes() {
        let mut a = [0u8; 16];
        let mut b = [0u8; 16];
        entropy(&mut a).unwrap();
        entropy(&mut b).unwrap();
        assert_ne!(a, b);
        let mut big = [0u8; 5000];
        assert!(entropy(&mut big).is_err());
        for _ in 0..1000 {
            entropy(&mut a).unwrap();
        }
    }
}

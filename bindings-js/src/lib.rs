//! The framework-independent half of retrycore's two JavaScript bindings.
//!
//! The Node (napi-rs) and wasm (wasm-bindgen) bindings implement one
//! low-level surface, declared once in [`surface`] and expanded by each FFI
//! crate's build script into its exports. Everything that surface does apart
//! from touching host values lives here, once: millisecond numbers and
//! decimal `u64`s ([`host`]), the error mapping ([`Error`]), typed options
//! ([`options`]), failures ([`failure`]) and the name lists they intern
//! ([`names`]), packed verdicts ([`verdict`]),
//! breakers with numeric permits ([`Breaker`]), budgets ([`Budget`]),
//! policies with their session slab ([`Policy`]), idempotency ([`idem`]) and
//! the JSON every call returns. The FFI crates keep reading host values,
//! raising errors, the clock and the entropy ([`Host`], resolved at compile
//! time).
//!
//! Nothing here panics on any input (a panic in WebAssembly traps and can
//! leave the instance inconsistent): checked conversions, no indexing or
//! `unwrap` on input paths, errors by return value.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod breaker;
mod budget;
mod error;
pub mod failure;
pub mod host;
pub mod idem;
mod limiter;
pub mod names;
pub mod options;
mod policy;
mod saga;
pub mod surface;
pub mod verdict;

pub use breaker::Breaker;
pub use budget::Budget;
pub use error::{Class, Error, Result};
pub use failure::{FailureArgs, ReadFailure, StrList};
pub use host::Host;
pub use limiter::Limiter;
pub use policy::Policy;
pub use saga::{CompensationRun, DeadLetterReplay};
#[doc(hidden)]
pub use {breaker::permit_number, breaker::read_permit, policy::id_parts};

use breaker::transition_json;
use host::{ms, ns, u64_arg, wall_ms};

use retrycore::rng::{Rng as _, Xoshiro256pp};
use retrycore::{duration, ErrorClass, ErrorCode, ErrorDomain};
use retrycore::{json, json::Value};

/// Returns what the JS layer reads at load — not from the backend: the
/// surface test writes it into `bindings-node/lib/generated.ts` (`INFO`),
/// so that neither the wasm module nor the addon builds it at run time: the core's
/// [`host_tables`](retrycore::tables::host_tables) (`tables`: kinds,
/// categories and their packing width, codes, limits, the fetch failure
/// rule, the key length, defaults; plus `js_classes`, the JavaScript class
/// of each of the core's error classes, and `js_error_classes`, each code's
/// JavaScript class, the same in every domain), the packed verdict's rule
/// order, the lint codes and the breaker states.
pub fn info() -> Value {
    let mut t = retrycore::tables::host_tables();
    let names = |pairs: &mut dyn Iterator<Item = (&str, Class)>| -> Value {
        pairs.map(|(k, c)| (k.to_owned(), Value::from(c.name()))).collect::<retrycore::json::Map<_, _>>().into()
    };
    t["js_classes"] = names(&mut ErrorClass::ALL.iter().map(|c| (c.code(), Class::of(*c))));
    let class = |c: &ErrorCode| Class::of(c.class(ErrorDomain::Config));
    t["js_error_classes"] = names(&mut ErrorCode::ALL.iter().map(|c| (c.code(), class(c))));
    json!({
        "version": env!("CARGO_PKG_VERSION"),
        "tables": t,
        "retryRules": verdict::RULES.map(|r| r.code()),
        "lintCodes": retrycore::lint::CODES.iter().map(|(c, s, d)| json!({"code": c, "severity": s.code(), "description": d})).collect::<Vec<_>>(),
        "states": retrycore::breaker::State::ALL.map(|s| s.code()),
    })
}

/// Writes a snake_case key in camelCase (ASCII, as every key of the core is:
/// no Unicode case tables in the wasm module).
#[doc(hidden)]
pub fn camel(k: &str) -> String {
    let mut out = String::with_capacity(k.len());
    let mut up = false;
    for ch in k.chars() {
        if ch == '_' {
            up = true;
        } else if up {
            out.push(ch.to_ascii_uppercase());
            up = false;
        } else {
            out.push(ch);
        }
    }
    out
}

/// Renames the top-level keys of a core value to camelCase (JS naming),
/// leaving documents inside (`response`, `record`) as they are.
pub(crate) fn camel_json(v: Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(m.into_iter().map(|(k, v)| (camel(&k), v)).collect()),
        other => other,
    }
}

/// Parses a duration string (`"250ms"`) to milliseconds.
pub fn parse_duration(text: &str) -> Result<f64> {
    duration::parse_duration(text, "duration").map(ms).map_err(Error::of_config)
}

/// Writes milliseconds as the shortest exact duration string.
pub fn format_duration(value_ms: f64) -> Result<String> {
    Ok(duration::format_duration(ns(value_ms, "duration")?))
}

/// Reads server delay headers (flat `[name, value, name, value, …]`; a
/// trailing odd name is ignored).
pub fn server_advice(headers: &[String], wall_now_ms: Option<f64>) -> Result<Value> {
    let wall = wall_now_ms.map(|w| wall_ms(w, "wallNowMs")).transpose()?;
    let a = retrycore::retry_after::read_headers(headers.chunks_exact(2).filter_map(failure::pair), wall);
    Ok(json!({
        "delay": a.delay_ns().map(ms),
        "source": a.delay.map(|(_, s)| s.name()),
        "declined": a.declined_by_pushback,
        "shouldRetry": a.should_retry,
        "retryExhausted": a.retry_exhausted,
    }))
}

/// Parses an HTTP-date to Unix seconds (`None` when it is not one).
pub fn parse_http_date(value: &str, wall_now_ms: f64) -> Result<Option<f64>> {
    let wall = wall_ms(wall_now_ms, "wallNowMs")?;
    Ok(retrycore::retry_after::parse_http_date(value, wall).map(|s| s as f64))
}

/// Lints a policy document (JSON text) against an optional service description.
pub fn lint(policy: &str, service: Option<&str>) -> Result<Value> {
    let p = retrycore::policy::PolicyConfig::from_json(policy).map_err(Error::of_config)?;
    let s = service.map(retrycore::lint::Service::from_json).transpose().map_err(Error::of_config)?;
    let findings = retrycore::lint::lint(&p, s.as_ref());
    Ok(Value::Array(
        findings
            .iter()
            .map(|f| json!({"code": f.code, "severity": f.severity.code(), "field": f.field, "message": f.message}))
            .collect(),
    ))
}

/// Checks the alert rules (`retrycore::alerts`) over two counter snapshots
/// (JSON text: `{policies, breakers, idempotency}`) taken `interval_ms`
/// apart, with optional thresholds (JSON text) over the defaults: every
/// check, firing ones first, as the CLI's `--json` and Python write them.
pub fn alerts(before: &str, after: &str, interval_ms: f64, thresholds: Option<&str>) -> Result<Value> {
    use retrycore::alerts::{evaluate, read_snapshot, AlertConfig};
    let interval = ns(interval_ms, "intervalMs")?;
    if interval == 0 {
        return Err(Error::config(ErrorCode::InvalidDuration, "intervalMs", "must be longer than 0ms"));
    }
    let doc = |text: &str| retrycore::parse_document(text).map_err(Error::of_config);
    let b = read_snapshot(&doc(before)?, "before").map_err(Error::of_config)?;
    let a = read_snapshot(&doc(after)?, "after").map_err(Error::of_config)?;
    let cfg = match thresholds {
        Some(t) => AlertConfig::read(&doc(t)?, "thresholds").map_err(Error::of_config)?,
        None => AlertConfig::default(),
    };
    Ok(evaluate(&b, &a, interval, &cfg).to_json_value())
}

/// Returns the structured retry log's record of a retry or give-up event
/// (JSON text; `retrycore::retry_log::record_of`): `{level, message, fields}`.
pub fn retry_log(event: &str) -> Result<Value> {
    retrycore::retry_log::record_json(event).map_err(Error::of_config)
}

/// The samples of metric events (`{"names", "events"}` as JSON text), as
/// `retrycore::metrics::samples_document` makes them.
pub fn metric_samples(document: &str) -> Result<Value> {
    retrycore::metrics::samples_document(document).map_err(Error::of_config)
}

/// Seeds the generator of every runtime (xoshiro256++ seeded by SplitMix64)
/// from a decimal u64.
pub fn seeded_rng(seed: &str) -> Result<Xoshiro256pp> {
    Ok(Xoshiro256pp::seed_from_u64(u64_arg(seed, "seed")?))
}

/// The seeded generator of every runtime (`NativeRng`).
pub struct Rng(Xoshiro256pp);

impl Rng {
    /// Seeds a generator from a decimal u64.
    pub fn new(seed: &str) -> Result<Rng> {
        seeded_rng(seed).map(Rng)
    }

    /// Returns the next u64 as a decimal string (JS numbers hold 53 bits).
    pub fn next_u64(&mut self) -> String {
        self.0.next_u64().to_string()
    }

    /// Returns the next draw in [0, 1).
    pub fn next_f64(&mut self) -> f64 {
        self.0.next_f64()
    }
}

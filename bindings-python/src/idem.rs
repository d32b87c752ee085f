//! Idempotency keys, the `Idempotency-Key` header, canonical JSON,
//! fingerprints, records and dead letters (docs/idempotency.md).

use crate::conv::{self, err_in, to_host_json, to_json, to_str, CoreResult, Mode, Obj};
use pyo3::exceptions::PyBaseException;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyTuple};
use retrycore::idempotency::{self as idem, JsonValue};
use retrycore::{json, json::Value};
use retrycore::{ErrorCode, ErrorDomain};
use std::sync::Mutex;
use std::time::Duration;

const I: ErrorDomain = ErrorDomain::Idempotency;

/// A `str` argument of an idempotency function, its errors raised in the idempotency domain.
fn s(o: &Obj, field: &str) -> PyResult<String> {
    to_str(o, field).map_err(|e| conv::as_idempotency(o.py(), e))
}

#[doc = stub_doc!("derive_key")]
#[pyfunction]
#[pyo3(signature = (*parts))]
pub fn derive_key(py: Python<'_>, parts: &Bound<'_, PyTuple>) -> PyResult<String> {
    let owned: Vec<String> =
        parts.iter().enumerate().map(|(i, p)| s(&p, &format!("parts[{i}]"))).collect::<PyResult<_>>()?;
    let refs: Vec<&str> = owned.iter().map(String::as_str).collect();
    idem::derive_key(&refs).py_in(py, I)
}

enum Body {
    Value(Value),
    Text(String),
}

fn fp(
    py: Python<'_>,
    body: Body,
    method: Option<String>,
    path: Option<String>,
    operation: Option<String>,
    selected: Option<&Obj>,
    canonical: bool,
) -> PyResult<String> {
    let selected: Option<Vec<String>> = conv::opt(selected, |l| {
        let items =
            conv::list_arg(l, "selected", "a list of JSON pointers").map_err(|e| conv::as_idempotency(py, e))?;
        items.iter().map(|p| s(p, "selected")).collect()
    })?;
    // Which options go together is the core's rule (`FingerprintOf::read`), as in JS.
    let of = idem::FingerprintOf::read(method.as_deref(), path.as_deref(), operation.as_deref()).py_in(py, I)?;
    let r = py.allow_threads(|| {
        let body = match body {
            Body::Value(v) => JsonValue::try_from(&v)?,
            Body::Text(t) => idem::parse_json(&t)?,
        };
        let sel: Option<Vec<&str>> = selected.as_ref().map(|v| v.iter().map(String::as_str).collect());
        of.fingerprint(&body, sel.as_deref(), canonical)
    });
    r.py_in(py, I)
}

// ---------------------------------------------------------------- records

#[doc = stub_doc!("RecordConfig")]
#[pyclass(frozen, name = "RecordConfig", module = "retrycore._native")]
pub struct RecordConfig {
    pub c: idem::RecordConfig,
}

fn record_of(o: &Obj) -> PyResult<idem::IdempotencyRecord> {
    let v = to_json(o, Mode::Document)?;
    idem::IdempotencyRecord::from_json(&v.to_string()).py_in(o.py(), I)
}

fn to_value<T: retrycore::json::ToJson>(v: &T) -> Value {
    v.to_value()
}

fn http_json(a: Option<idem::HttpAnswer>) -> Value {
    a.map_or(
        Value::Null,
        |a| json!({"status": a.status, "error_type": a.error_type, "title": a.title, "retry_after_s": a.retry_after_s}),
    )
}

fn config_or_default(c: Option<&Bound<'_, RecordConfig>>) -> idem::RecordConfig {
    c.map_or_else(idem::RecordConfig::default, |c| c.get().c.clone())
}

fn response_of(py: Python<'_>, o: Option<Obj<'_>>) -> PyResult<Option<idem::StoredResponse>> {
    conv::opt(o.as_ref(), |r| {
        idem::StoredResponse::from_value(to_json(r, Mode::Document)?, "response")
            .map_err(|e| err_in(py, I, ErrorCode::InvalidType, "response", e.reason()))
    })
}

// ---------------------------------------------------------------- dead letters

#[doc = stub_doc!("DeadLetter")]
#[pyclass(frozen, name = "DeadLetter", module = "retrycore._native")]
pub struct PyDeadLetter {
    l: Mutex<idem::DeadLetter>,
}

impl PyDeadLetter {
    /// Runs `f` on the letter (see [`crate::locks::with`]).
    fn with<R: Send>(&self, py: Python<'_>, f: impl FnOnce(&mut idem::DeadLetter) -> R + Send) -> R {
        crate::locks::with(py, &self.l, f)
    }
}

fn class_name(e: &Obj) -> String {
    let t = e.get_type();
    let text = |a| t.getattr(a).ok().and_then(|m| m.extract::<String>().ok());
    let (m, q) = (text("__module__"), text("__qualname__").unwrap_or_else(|| "Exception".into()));
    match m {
        Some(m) if m != "builtins" => format!("{m}.{q}"),
        _ => q,
    }
}

// The functions and methods this module declares in `src/surface.rs`, expanded by `build.rs`.
include!(concat!(env!("OUT_DIR"), "/idem.rs"));

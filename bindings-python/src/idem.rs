//! Idempotency keys, the `Idempotency-Key` header, canonical JSON,
//! fingerprints, records and dead letters (docs/idempotency.md).

use crate::conv::{self, err_in, to_host_json, to_json, to_str, CoreResult, Family, Mode, Obj};
use pyo3::exceptions::PyBaseException;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple};
use retrycore::idempotency::{self as idem, JsonValue};
use retrycore::ErrorCode;
use serde_json::{json, Value};
use std::sync::Mutex;
use std::time::Duration;

const I: Family = Family::Idempotency;

fn s(o: &Obj, field: &str) -> PyResult<String> {
    to_str(o, field).map_err(|_| {
        let code = if o.is_instance_of::<PyString>() { ErrorCode::InvalidString } else { ErrorCode::InvalidType };
        err_in(o.py(), I, code, field, "must be a str")
    })
}

fn u(o: &Obj, field: &str) -> PyResult<u64> {
    conv::to_count(o, field, u64::MAX)
}

/// Joins key parts with `:` (business id, operation, version).
#[pyfunction]
#[pyo3(signature = (*parts))]
pub fn derive_key(py: Python<'_>, parts: &Bound<'_, PyTuple>) -> PyResult<String> {
    let owned: Vec<String> =
        parts.iter().enumerate().map(|(i, p)| s(&p, &format!("parts[{i}]"))).collect::<PyResult<_>>()?;
    let refs: Vec<&str> = owned.iter().map(String::as_str).collect();
    idem::derive_key(&refs).py_in(py, I)
}

/// Checks a key: 1–`max_len` visible ASCII characters, not starting with `sha256:`.
#[pyfunction]
#[pyo3(signature = (key, max_len=None))]
pub fn validate_key(py: Python<'_>, key: &Obj, max_len: Option<&Obj>) -> PyResult<()> {
    let max = conv::opt_count(max_len, "max_len", u64::MAX)?
        .map_or(idem::DEFAULT_MAX_KEY_LEN, |m| usize::try_from(m).unwrap_or(usize::MAX));
    idem::validate_key(&s(key, "key")?, max).py_in(py, I)
}

/// `len(tenant) ":" tenant ":" key`.
#[pyfunction]
pub fn scoped_key(py: Python<'_>, tenant: &Obj, key: &Obj) -> PyResult<String> {
    idem::scoped_key(&s(tenant, "tenant")?, &s(key, "key")?).py_in(py, I)
}

/// The key itself when short enough, else `sha256:` + hex.
#[pyfunction]
pub fn storage_key(py: Python<'_>, key: &Obj, max_len: &Obj) -> PyResult<String> {
    let max = usize::try_from(u(max_len, "max_len")?).unwrap_or(usize::MAX);
    idem::storage_key(&s(key, "key")?, max).py_in(py, I)
}

/// A random UUIDv4 key from 16 bytes (default: from the OS).
#[pyfunction]
#[pyo3(signature = (entropy=None))]
pub fn mint_key(py: Python<'_>, entropy: Option<&Obj>) -> PyResult<String> {
    let bytes: [u8; 16] = match entropy.filter(|e| !e.is_none()) {
        None => crate::entropy::bytes::<16>()
            .ok_or_else(|| err_in(py, I, ErrorCode::InvalidState, "entropy", "the operating system gave no entropy"))?,
        Some(e) => {
            let b = e
                .downcast::<PyBytes>()
                .map_err(|_| err_in(py, I, ErrorCode::InvalidType, "entropy", "must be 16 bytes"))?;
            b.as_bytes()
                .try_into()
                .map_err(|_| err_in(py, I, ErrorCode::InvalidValue, "entropy", "must be exactly 16 bytes"))?
        }
    };
    Ok(idem::mint_key(bytes))
}

/// The `Idempotency-Key` header value for a key (an RFC 8941 sf-string).
#[pyfunction]
pub fn format_header(py: Python<'_>, key: &Obj) -> PyResult<String> {
    idem::format_header(&s(key, "key")?).py_in(py, I)
}

/// Reads an `Idempotency-Key` header value; `allow_token=True` also takes Stripe's bare token.
#[pyfunction]
#[pyo3(signature = (value, allow_token=None))]
pub fn parse_header(py: Python<'_>, value: &Obj, allow_token: Option<&Obj>) -> PyResult<String> {
    let form = if conv::bool_or(allow_token, "allow_token", false)? {
        idem::HeaderForm::SfStringOrToken
    } else {
        idem::HeaderForm::SfString
    };
    idem::parse_header(&s(value, "value")?, form).py_in(py, I)
}

/// The RFC 8785 canonical JSON of a Python value.
#[pyfunction]
pub fn canonicalize(py: Python<'_>, value: &Obj) -> PyResult<String> {
    let v = to_host_json(value)?;
    idem::canonicalize_value(&v).py_in(py, I)
}

/// The RFC 8785 canonical form of JSON text.
#[pyfunction]
pub fn canonicalize_json(py: Python<'_>, text: &Obj) -> PyResult<String> {
    let t = s(text, "text")?;
    py.allow_threads(|| idem::canonicalize_json(&t)).py_in(py, I)
}

/// A float as RFC 8785 (ECMAScript) writes it.
#[pyfunction]
pub fn format_number(py: Python<'_>, x: &Obj) -> PyResult<String> {
    idem::format_number(conv::to_f64(x, "value")?).py_in(py, I)
}

enum Body {
    Value(JsonValue),
    Text(String),
}

fn fp(
    py: Python<'_>,
    body: Body,
    method: Option<&Obj>,
    path: Option<&Obj>,
    operation: Option<&Obj>,
    selected: Option<&Obj>,
    canonical: bool,
) -> PyResult<String> {
    let method = conv::opt_str(method, "method")?;
    let path = conv::opt_str(path, "path")?;
    let operation = conv::opt_str(operation, "operation")?;
    let selected: Option<Vec<String>> = conv::opt(selected, |l| {
        if !(l.is_instance_of::<PyList>() || l.is_instance_of::<PyTuple>()) {
            return Err(err_in(py, I, ErrorCode::InvalidType, "selected", "must be a list of JSON pointers"));
        }
        let items = conv::items(l, "selected").map_err(|e| conv::as_idempotency(py, e))?;
        items.iter().map(|p| s(p, "selected")).collect()
    })?;
    let r = py.allow_threads(|| {
        let body = match body {
            Body::Value(v) => v,
            Body::Text(t) => idem::parse_json(&t)?,
        };
        let sel: Option<Vec<&str>> = selected.as_ref().map(|v| v.iter().map(String::as_str).collect());
        let sel = sel.as_deref();
        match (&operation, &method, &path, canonical) {
            (Some(op), None, None, false) => idem::fingerprint_operation(op, &body, sel),
            (Some(op), None, None, true) => idem::fingerprint_operation_canonical(op, &body, sel),
            (None, Some(m), Some(p), false) => idem::fingerprint_http(m, p, &body, sel),
            (None, Some(m), Some(p), true) => idem::fingerprint_http_canonical(m, p, &body, sel),
            _ => Err(retrycore::Error::new(ErrorCode::InvalidValue, "operation", "give method and path, or operation")),
        }
    });
    r.py_in(py, I)
}

/// The fingerprint of a request: lowercase hex SHA-256 of the canonical JSON
/// of `{"method", "path", "body"}` or `{"operation", "body"}`.
#[pyfunction]
#[pyo3(signature = (body=None, *, method=None, path=None, operation=None, selected=None, canonical=None))]
#[allow(clippy::too_many_arguments)]
pub fn fingerprint(
    py: Python<'_>,
    body: Option<&Obj>,
    method: Option<&Obj>,
    path: Option<&Obj>,
    operation: Option<&Obj>,
    selected: Option<&Obj>,
    canonical: Option<&Obj>,
) -> PyResult<String> {
    let canonical = conv::bool_or(canonical, "canonical", false)?;
    let v = match body {
        Some(b) => to_host_json(b)?,
        None => JsonValue::Null,
    };
    fp(py, Body::Value(v), method, path, operation, selected, canonical)
}

/// `fingerprint` of a body given as JSON text (duplicate keys and inexact numbers are errors).
#[pyfunction]
#[pyo3(signature = (text, *, method=None, path=None, operation=None, selected=None, canonical=None))]
#[allow(clippy::too_many_arguments)]
pub fn fingerprint_json(
    py: Python<'_>,
    text: &Obj,
    method: Option<&Obj>,
    path: Option<&Obj>,
    operation: Option<&Obj>,
    selected: Option<&Obj>,
    canonical: Option<&Obj>,
) -> PyResult<String> {
    let canonical = conv::bool_or(canonical, "canonical", false)?;
    fp(py, Body::Text(s(text, "text")?), method, path, operation, selected, canonical)
}

// ---------------------------------------------------------------- records

/// How records are kept: lease, retention and failure handling.
#[pyclass(frozen, name = "RecordConfig", module = "retrycore._native")]
pub struct RecordConfig {
    pub c: idem::RecordConfig,
}

#[pymethods]
impl RecordConfig {
    #[new]
    #[pyo3(signature = (*, lease=None, retention=None, stripe=None, failure_handling=None, release_categories=None))]
    fn new(
        py: Python<'_>,
        lease: Option<&Obj>,
        retention: Option<&Obj>,
        stripe: Option<&Obj>,
        failure_handling: Option<&Obj>,
        release_categories: Option<&Obj>,
    ) -> PyResult<RecordConfig> {
        let stripe = conv::bool_or(stripe, "stripe", false)?;
        let release_categories = conv::opt(release_categories, |c| {
            let items = conv::list_arg(c, "release_categories", "a list of str")?;
            items.iter().map(|x| conv::to_str(x, "release_categories")).collect::<PyResult<Vec<String>>>()
        })?;
        let d = idem::RecordConfig::default();
        let lease = conv::opt_secs(lease, "lease")?.map_or(Duration::from_millis(d.lease_ms()), Duration::from_nanos);
        let retention = conv::opt_secs(retention, "retention")?
            .map_or(Duration::from_millis(d.retention_ms()), Duration::from_nanos);
        let mut c = idem::RecordConfig::new(lease, retention).py_in(py, I)?.with_stripe(stripe);
        if let Some(h) = conv::opt_str(failure_handling, "failure_handling")? {
            c = c.with_failure_handling(idem::FailureHandling::parse(&h, "failure_handling").py_in(py, I)?);
        }
        if let Some(cats) = release_categories {
            c = c.with_release_categories(cats);
        }
        Ok(RecordConfig { c })
    }

    #[getter]
    fn lease(&self) -> f64 {
        self.c.lease_ms() as f64 / 1e3
    }

    #[getter]
    fn retention(&self) -> f64 {
        self.c.retention_ms() as f64 / 1e3
    }
}

fn record_of(py: Python<'_>, o: &Obj) -> PyResult<idem::IdempotencyRecord> {
    let v = to_json(o, Mode::Document)?;
    idem::IdempotencyRecord::from_json(&v.to_string()).py_in(py, I)
}

fn to_py<'py, T: serde::Serialize>(py: Python<'py>, v: &T) -> PyResult<Obj<'py>> {
    conv::from_json(py, &serde_json::to_value(v).unwrap_or(Value::Null))
}

fn http_json(a: Option<idem::HttpAnswer>) -> Value {
    match a {
        None => Value::Null,
        Some(a) => {
            json!({"status": a.status, "error_type": a.error_type, "title": a.title, "retry_after_s": a.retry_after_s})
        }
    }
}

fn config_or_default(c: Option<&Obj>) -> PyResult<idem::RecordConfig> {
    Ok(conv::opt_class_arg::<RecordConfig>(c, "config", "a RecordConfig")?
        .map_or_else(idem::RecordConfig::default, |c| c.get().c.clone()))
}

/// Decides what an incoming request gets from its stored record (a dict, or None).
/// A `key` of None is a request without the required key (400).
#[pyfunction]
#[pyo3(signature = (record, key, fingerprint, wall_now_ms=None, config=None))]
pub fn decide<'py>(
    py: Python<'py>,
    record: Option<&Obj<'py>>,
    key: Option<&Obj<'py>>,
    fingerprint: &Obj<'py>,
    wall_now_ms: Option<&Obj<'py>>,
    config: Option<&Obj<'py>>,
) -> PyResult<Obj<'py>> {
    let cfg = config_or_default(config)?;
    let Some(key) = key.filter(|k| !k.is_none()) else {
        return conv::from_json(
            py,
            &json!({"decision": "missing_key", "http": http_json(Some(idem::missing_key_answer(&cfg)))}),
        );
    };
    let key = s(key, "key")?;
    let fpr = s(fingerprint, "fingerprint")?;
    let rec = conv::opt(record, |r| record_of(py, r))?;
    let now = conv::wall_or_clock(wall_now_ms)?;
    let d = idem::decide(rec.as_ref(), &key, &fpr, now, &cfg).py_in(py, I)?;
    let mut v = serde_json::to_value(&d).unwrap_or(Value::Null);
    v["http"] = http_json(d.http(&cfg));
    if let idem::RecordDecision::Execute(c) = &d {
        v["record"] = serde_json::to_value(c.to_record(&key, &fpr)).unwrap_or(Value::Null);
    }
    conv::from_json(py, &v)
}

fn response_of(py: Python<'_>, o: Option<Obj<'_>>) -> PyResult<Option<idem::StoredResponse>> {
    conv::opt(o.as_ref(), |r| {
        serde_json::from_value(to_json(r, Mode::Document)?)
            .map_err(|e| err_in(py, I, ErrorCode::InvalidType, "response", e.to_string()))
    })
}

/// Completes a record for the holder of `fence`: `outcome` is
/// `{"state": "succeeded" | "failed", "category": ..., "response": ...}`.
#[pyfunction]
#[pyo3(signature = (record, fence, outcome, wall_now_ms=None, config=None))]
pub fn complete<'py>(
    py: Python<'py>,
    record: &Obj<'py>,
    fence: &Obj<'py>,
    outcome: &Obj<'py>,
    wall_now_ms: Option<&Obj<'py>>,
    config: Option<&Obj<'py>>,
) -> PyResult<Obj<'py>> {
    let cfg = config_or_default(config)?;
    let rec = record_of(py, record)?;
    let o =
        outcome.downcast::<PyDict>().map_err(|_| err_in(py, I, ErrorCode::InvalidType, "outcome", "must be a dict"))?;
    let response = response_of(py, o.get_item("response")?)?;
    let state = o.get_item("state")?.map(|x| s(&x, "outcome.state")).transpose()?;
    let category = match o.get_item("category")? {
        Some(c) if !c.is_none() => Some(s(&c, "outcome.category")?),
        _ => None,
    };
    let out = idem::Outcome::read(state.as_deref(), category, response, "outcome").py_in(py, I)?;
    let now = conv::wall_or_clock(wall_now_ms)?;
    let r = idem::complete(&rec, u(fence, "fence")?, out, now, &cfg).py_in(py, I)?;
    to_py(py, &r)
}

/// Renews the lease of a processing record (a heartbeat).
#[pyfunction]
#[pyo3(signature = (record, fence, wall_now_ms=None, config=None))]
pub fn renew_lease<'py>(
    py: Python<'py>,
    record: &Obj<'py>,
    fence: &Obj<'py>,
    wall_now_ms: Option<&Obj<'py>>,
    config: Option<&Obj<'py>>,
) -> PyResult<Obj<'py>> {
    let cfg = config_or_default(config)?;
    let rec = record_of(py, record)?;
    let now = conv::wall_or_clock(wall_now_ms)?;
    let r = idem::renew_lease(&rec, u(fence, "fence")?, now, &cfg).py_in(py, I)?;
    to_py(py, &r)
}

// ---------------------------------------------------------------- dead letters

/// The envelope of a message whose retries ran out.
#[pyclass(frozen, name = "DeadLetter", module = "retrycore._native")]
pub struct PyDeadLetter {
    l: Mutex<idem::DeadLetter>,
}

impl PyDeadLetter {
    fn new_letter(l: idem::DeadLetter) -> PyDeadLetter {
        PyDeadLetter { l: Mutex::new(l) }
    }

    /// Runs `f` on the letter (see [`crate::locks::with`]).
    fn with<R: Send>(&self, py: Python<'_>, f: impl FnOnce(&mut idem::DeadLetter) -> R + Send) -> R {
        crate::locks::with(py, &self.l, f)
    }
}

fn class_name(e: &Obj) -> String {
    let t = e.get_type();
    let m = t.getattr("__module__").ok().and_then(|m| m.extract::<String>().ok());
    let q =
        t.getattr("__qualname__").ok().and_then(|m| m.extract::<String>().ok()).unwrap_or_else(|| "Exception".into());
    match m {
        Some(m) if m != "builtins" => format!("{m}.{q}"),
        _ => q,
    }
}

#[pymethods]
impl PyDeadLetter {
    #[new]
    #[pyo3(signature = (msg_id, message, *, reason, attempts, error=None, error_class=None, error_message=None,
        first_failure_ms=None, last_failure_ms=None, first_failure_at=None, last_failure_at=None, trace_id=None,
        topic=None, partition=None, offset=None, target_idempotent=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        msg_id: &Obj,
        message: &Obj,
        reason: &Obj,
        attempts: &Obj,
        error: Option<&Obj>,
        error_class: Option<&Obj>,
        error_message: Option<&Obj>,
        first_failure_ms: Option<&Obj>,
        last_failure_ms: Option<&Obj>,
        first_failure_at: Option<&Obj>,
        last_failure_at: Option<&Obj>,
        trace_id: Option<&Obj>,
        topic: Option<&Obj>,
        partition: Option<&Obj>,
        offset: Option<&Obj>,
        target_idempotent: Option<&Obj>,
    ) -> PyResult<PyDeadLetter> {
        let target_idempotent = conv::bool_or(target_idempotent, "target_idempotent", false)?;
        let mut b = idem::DeadLetter::builder(s(msg_id, "msg_id")?, to_json(message, Mode::Document)?)
            .reason(s(reason, "reason")?)
            .attempts(conv::to_u32(attempts, "attempts")?)
            .target_idempotent(target_idempotent);
        let (mut class, mut text) =
            (conv::opt_str(error_class, "error_class")?, conv::opt_str(error_message, "error_message")?);
        if let Some(e) = error.filter(|e| !e.is_none()) {
            if !e.is_instance_of::<PyBaseException>() {
                return Err(err_in(py, I, ErrorCode::InvalidType, "error", "must be an exception"));
            }
            class = class.or_else(|| Some(class_name(e)));
            text = text.or_else(|| e.str().ok().map(|x| x.to_string()));
        }
        if let Some(c) = class {
            b = b.error(c, text.unwrap_or_default());
        }
        if let Some(t) = conv::opt_str(first_failure_at, "first_failure_at")? {
            b = b.first_failure_at(t);
        }
        if let Some(t) = conv::opt_str(last_failure_at, "last_failure_at")? {
            b = b.last_failure_at(t);
        }
        if let Some(ms) = conv::opt_count(first_failure_ms, "first_failure_ms", u64::MAX)? {
            b = b.first_failure_ms(ms);
        }
        if let Some(ms) = conv::opt_count(last_failure_ms, "last_failure_ms", u64::MAX)? {
            b = b.last_failure_ms(ms);
        }
        if let Some(t) = conv::opt_str(trace_id, "trace_id")? {
            b = b.trace_id(t);
        }
        if let Some(t) = conv::opt_str(topic, "topic")? {
            let p = conv::opt_count(partition, "partition", u64::from(u32::MAX))?.map(|p| p as u32);
            let o = conv::opt_count(offset, "offset", u64::MAX)?;
            b = b.source(t, p, o);
        }
        Ok(PyDeadLetter::new_letter(b.build().py_in(py, I)?))
    }

    /// Reads a letter from a dict (validated).
    #[staticmethod]
    fn from_dict(py: Python<'_>, d: &Obj) -> PyResult<PyDeadLetter> {
        let v = to_json(d, Mode::Document)?;
        Ok(PyDeadLetter::new_letter(idem::DeadLetter::from_value(&v).py_in(py, I)?))
    }

    /// Reads a letter from JSON text (validated).
    #[staticmethod]
    fn from_json(py: Python<'_>, text: &Obj) -> PyResult<PyDeadLetter> {
        Ok(PyDeadLetter::new_letter(idem::DeadLetter::from_json(&s(text, "text")?).py_in(py, I)?))
    }

    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Obj<'py>> {
        let v = self.with(py, |l| l.to_value());
        conv::from_json(py, &v)
    }

    fn to_json(&self, py: Python<'_>) -> String {
        self.with(py, |l| l.to_json())
    }

    /// Marks the letter for replay (its target must be idempotent).
    fn mark_replayable(&self, py: Python<'_>) -> PyResult<()> {
        // A refusal becomes an exception after the lock is released.
        self.with(py, |l| l.mark_replayable()).py_in(py, I)
    }

    fn mark_replayed(&self, py: Python<'_>) -> PyResult<()> {
        self.with(py, |l| l.mark_replayed()).py_in(py, I)
    }

    fn discard(&self, py: Python<'_>) -> PyResult<()> {
        self.with(py, |l| l.discard()).py_in(py, I)
    }

    #[getter]
    fn msg_id(&self, py: Python<'_>) -> String {
        self.with(py, |l| l.msg_id.clone())
    }

    #[getter]
    fn status(&self, py: Python<'_>) -> &'static str {
        self.with(py, |l| l.status.as_str())
    }

    #[getter]
    fn replayable(&self, py: Python<'_>) -> bool {
        self.with(py, |l| l.replayable)
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        self.with(py, |l| format!("DeadLetter(msg_id={:?}, status={:?})", l.msg_id, l.status.as_str()))
    }
}

/// Unix milliseconds as RFC 3339 UTC (`YYYY-MM-DDTHH:MM:SS.mmmZ`).
#[pyfunction]
pub fn format_rfc3339_ms(py: Python<'_>, unix_ms: &Obj) -> PyResult<String> {
    idem::format_rfc3339_ms(u(unix_ms, "unix_ms")?).py_in(py, I)
}

/// RFC 3339 text as Unix milliseconds (rounded down).
#[pyfunction]
pub fn parse_rfc3339_ms(py: Python<'_>, text: &Obj) -> PyResult<i64> {
    idem::parse_rfc3339_ms(&s(text, "text")?).py_in(py, I)
}

//! Conversions between Python values and the core's types: JSON trees,
//! float seconds, integers, and errors.
//!
//! Every conversion refuses bad input with a `retrycore` exception carrying a
//! stable `.code` (never a bare pyo3 `TypeError`, never a panic), and every
//! recursive walk stops at a depth limit, so a cyclic or 100 000-deep
//! container costs neither stack nor time.

use pyo3::prelude::*;
use pyo3::sync::GILOnceCell;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use retrycore::idempotency::{JsonValue, MAX_DEPTH};
use retrycore::{Error, ErrorCode};
use serde_json::{Map, Value};
use std::time::Instant;

/// The exception family a core error is raised in (the class within it follows the code).
#[derive(Copy, Clone)]
pub enum Family {
    Config,
    Idempotency,
}

impl Family {
    fn name(self) -> &'static str {
        match self {
            Family::Config => "config",
            Family::Idempotency => "idempotency",
        }
    }
}

static ERRORS: GILOnceCell<Py<PyModule>> = GILOnceCell::new();

/// Returns the pure-Python module that defines the exception classes.
pub fn errors_module(py: Python<'_>) -> PyResult<&Bound<'_, PyModule>> {
    ERRORS.get_or_try_init(py, || Ok::<_, PyErr>(py.import("retrycore._errors")?.unbind())).map(|m| m.bind(py))
}

/// Converts a core error into the matching Python exception.
pub fn core_err(py: Python<'_>, e: &Error, family: Family) -> PyErr {
    let build = || -> PyResult<PyErr> {
        let m = errors_module(py)?;
        let exc = m.getattr("_from_core")?.call1((
            e.code(),
            e.field(),
            e.to_string(),
            family.name(),
            e.kind().is_type_error(),
            e.kind().is_config(),
        ))?;
        Ok(PyErr::from_value(exc))
    };
    build().unwrap_or_else(|err| err)
}

/// A `Result` of the core as a `PyResult`, raising in the config family.
pub trait CoreResult<T> {
    fn py(self, py: Python<'_>) -> PyResult<T>;
    fn py_in(self, py: Python<'_>, family: Family) -> PyResult<T>;
}

impl<T> CoreResult<T> for retrycore::Result<T> {
    fn py(self, py: Python<'_>) -> PyResult<T> {
        self.map_err(|e| core_err(py, &e, Family::Config))
    }
    fn py_in(self, py: Python<'_>, family: Family) -> PyResult<T> {
        self.map_err(|e| core_err(py, &e, family))
    }
}

/// Raises a binding-side error with a core code.
pub fn err(py: Python<'_>, code: ErrorCode, field: &str, why: impl Into<String>) -> PyErr {
    core_err(py, &Error::new(code, field.to_owned(), why.into()), Family::Config)
}

pub fn err_in(py: Python<'_>, family: Family, code: ErrorCode, field: &str, why: impl Into<String>) -> PyErr {
    core_err(py, &Error::new(code, field.to_owned(), why.into()), family)
}

pub fn type_name(o: &Bound<'_, PyAny>) -> String {
    o.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "object".into())
}

fn wrong_type(o: &Bound<'_, PyAny>, field: &str, want: &str) -> PyErr {
    err(o.py(), ErrorCode::InvalidType, field, format!("must be {want}, got {}", type_name(o)))
}

// ---------------------------------------------------------------- scalars

/// Reads a `str`; a lone surrogate is `invalid_string`.
pub fn to_str(o: &Bound<'_, PyAny>, field: &str) -> PyResult<String> {
    let s = o.downcast::<PyString>().map_err(|_| wrong_type(o, field, "a str"))?;
    s.to_cow()
        .map(|c| c.into_owned())
        .map_err(|_| err(o.py(), ErrorCode::InvalidString, field, "contains a lone surrogate, which has no UTF-8 form"))
}

pub fn opt_str(o: Option<&Bound<'_, PyAny>>, field: &str) -> PyResult<Option<String>> {
    match o {
        None => Ok(None),
        Some(x) if x.is_none() => Ok(None),
        Some(x) => to_str(x, field).map(Some),
    }
}

pub fn to_bool(o: &Bound<'_, PyAny>, field: &str) -> PyResult<bool> {
    o.downcast::<PyBool>().map(|b| b.is_true()).map_err(|_| wrong_type(o, field, "a bool"))
}

pub fn opt_bool(o: Option<&Bound<'_, PyAny>>, field: &str) -> PyResult<Option<bool>> {
    match o {
        None => Ok(None),
        Some(x) if x.is_none() => Ok(None),
        Some(x) => to_bool(x, field).map(Some),
    }
}

/// Reads an `int` (not a bool) in `[lo, hi]`.
pub fn to_uint(o: &Bound<'_, PyAny>, field: &str, lo: u64, hi: u64) -> PyResult<u64> {
    if o.is_instance_of::<PyBool>() || !o.is_instance_of::<PyInt>() {
        return Err(wrong_type(o, field, "an int"));
    }
    match o.extract::<u64>() {
        Ok(v) if (lo..=hi).contains(&v) => Ok(v),
        _ => Err(err(o.py(), ErrorCode::OutOfRange, field, format!("must be an integer in [{lo}, {hi}]"))),
    }
}

pub fn opt_uint(o: Option<&Bound<'_, PyAny>>, field: &str, lo: u64, hi: u64) -> PyResult<Option<u64>> {
    match o {
        None => Ok(None),
        Some(x) if x.is_none() => Ok(None),
        Some(x) => to_uint(x, field, lo, hi).map(Some),
    }
}

/// Reads a real number (`float` or `int`, not a bool).
pub fn to_f64(o: &Bound<'_, PyAny>, field: &str) -> PyResult<f64> {
    if let Ok(f) = o.downcast::<PyFloat>() {
        return Ok(f.value());
    }
    if o.is_instance_of::<PyInt>() && !o.is_instance_of::<PyBool>() {
        return o.extract::<f64>().map_err(|_| err(o.py(), ErrorCode::OutOfRange, field, "is too large for a float"));
    }
    Err(wrong_type(o, field, "a float"))
}

/// Reads float seconds (or an int) as nanoseconds, rounding half to even
/// (`retrycore::duration::from_secs_f64`): NaN, infinities and negatives are
/// `out_of_range`.
pub fn secs(o: &Bound<'_, PyAny>, field: &str) -> PyResult<u64> {
    let py = o.py();
    if let Ok(f) = o.downcast::<PyFloat>() {
        return retrycore::duration::from_secs_f64(f.value(), field).py(py);
    }
    if o.is_instance_of::<PyInt>() && !o.is_instance_of::<PyBool>() {
        if let Ok(v) = o.extract::<u64>() {
            return Ok(v.saturating_mul(1_000_000_000));
        }
        if o.extract::<i64>().is_ok() {
            return Err(err(py, ErrorCode::OutOfRange, field, "must not be negative"));
        }
        // Beyond 64 bits: saturates like any huge duration, unless negative.
        let negative = o.lt(0i64).unwrap_or(false);
        if negative {
            return Err(err(py, ErrorCode::OutOfRange, field, "must not be negative"));
        }
        return Ok(u64::MAX);
    }
    Err(wrong_type(o, field, "float seconds"))
}

pub fn opt_secs(o: Option<&Bound<'_, PyAny>>, field: &str) -> PyResult<Option<u64>> {
    match o {
        None => Ok(None),
        Some(x) if x.is_none() => Ok(None),
        Some(x) => secs(x, field).map(Some),
    }
}

/// Nanoseconds as float seconds (`ns / 1e9`, one IEEE division).
#[inline]
pub fn to_secs(ns: u64) -> f64 {
    retrycore::duration::to_secs_f64(ns)
}

// ---------------------------------------------------------------- clocks

struct Origin {
    at: Instant,
    ns: u64,
}

static ORIGIN: std::sync::OnceLock<Origin> = std::sync::OnceLock::new();

/// Anchors the monotonic clock on `time.monotonic_ns()` so that a `now`
/// the caller reads from `time.monotonic()` and one the binding fills in
/// agree.
pub fn init_clock(py: Python<'_>) -> PyResult<()> {
    let ns: u64 = py.import("time")?.getattr("monotonic_ns")?.call0()?.extract()?;
    let _ = ORIGIN.set(Origin { at: Instant::now(), ns });
    Ok(())
}

/// The monotonic clock in nanoseconds, on the `time.monotonic()` scale.
#[inline]
pub fn mono_ns() -> u64 {
    let o = ORIGIN.get_or_init(|| Origin { at: Instant::now(), ns: 0 });
    o.ns.saturating_add(u64::try_from(o.at.elapsed().as_nanos()).unwrap_or(u64::MAX))
}

/// `now` given as float seconds, or the monotonic clock.
pub fn now_or_clock(now: Option<&Bound<'_, PyAny>>) -> PyResult<u64> {
    match now {
        Some(x) if !x.is_none() => secs(x, "now"),
        _ => Ok(mono_ns()),
    }
}

/// The wall clock in Unix epoch milliseconds.
pub fn wall_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

pub fn wall_or_clock(py: Python<'_>, w: Option<&Bound<'_, PyAny>>) -> PyResult<u64> {
    let _ = py;
    match w {
        Some(x) if !x.is_none() => to_uint(x, "wall_now_ms", 0, u64::MAX),
        _ => Ok(wall_ms()),
    }
}

// ---------------------------------------------------------------- JSON trees

/// Document keys whose values are durations: as float seconds in keyword
/// arguments, they become `"<n>ns"` strings (generated from
/// `schema/policy.schema.json`; a test keeps them in step).
pub const DURATION_KEYS: &[&str] = &[
    "amount",
    "attempt_timeout",
    "base_delay",
    "break_duration",
    "deadline",
    "increment",
    "initial",
    "initial_delay",
    "initial_interval",
    "max_backoff",
    "max_delay",
    "max_interval",
    "max_retry_after",
    "max_wait",
    "max_wait_duration_in_half_open_state",
    "max_wait_duration_in_open_state",
    "min_delay",
    "per_attempt_timeout",
    "slow_call_duration_threshold",
    "total_timeout",
    "ttl",
    "wait_duration",
    "wait_duration_in_open_state",
    "window",
];

/// How a Python tree becomes a document.
#[derive(Copy, Clone, PartialEq, Eq)]
pub enum Mode {
    /// As-is: the same JSON as every runtime.
    Document,
    /// Keyword arguments: float seconds in duration keys, an int `seed`.
    Kwargs,
}

fn depth_err(py: Python<'_>, field: &str) -> PyErr {
    err(py, ErrorCode::TooDeep, field, format!("nesting deeper than {MAX_DEPTH} levels (or a cycle)"))
}

fn number_value(o: &Bound<'_, PyAny>, field: &str) -> PyResult<Value> {
    let py = o.py();
    if let Ok(f) = o.downcast::<PyFloat>() {
        let v = f.value();
        return serde_json::Number::from_f64(v)
            .map(Value::Number)
            .ok_or_else(|| err(py, ErrorCode::OutOfRange, field, format!("must be a finite number, got {v}")));
    }
    if let Ok(v) = o.extract::<u64>() {
        return Ok(Value::from(v));
    }
    if let Ok(v) = o.extract::<i64>() {
        return Ok(Value::from(v));
    }
    Err(err(py, ErrorCode::OutOfRange, field, "integer beyond 64 bits"))
}

/// Converts a Python tree (dict with str keys, list/tuple, str, int, float,
/// bool, None) to JSON, depth-limited.
pub fn to_json(o: &Bound<'_, PyAny>, mode: Mode) -> PyResult<Value> {
    to_json_at(o, mode, "", 0)
}

fn join(field: &str, key: &str) -> String {
    if field.is_empty() {
        key.to_owned()
    } else {
        format!("{field}.{key}")
    }
}

fn to_json_at(o: &Bound<'_, PyAny>, mode: Mode, field: &str, depth: usize) -> PyResult<Value> {
    let py = o.py();
    if o.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(b) = o.downcast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if o.is_instance_of::<PyInt>() || o.is_instance_of::<PyFloat>() {
        return number_value(o, field);
    }
    if o.is_instance_of::<PyString>() {
        return Ok(Value::String(to_str(o, field)?));
    }
    if depth >= MAX_DEPTH {
        return Err(depth_err(py, field));
    }
    if let Ok(d) = o.downcast::<PyDict>() {
        let mut m = Map::new();
        for (k, v) in d.iter() {
            let key = match k.downcast::<PyString>() {
                Ok(_) => to_str(&k, field)?,
                Err(_) => {
                    return Err(err(
                        py,
                        ErrorCode::InvalidType,
                        field,
                        format!("object keys must be str, got {}", type_name(&k)),
                    ))
                }
            };
            let f = join(field, &key);
            let value = if mode == Mode::Kwargs && is_number(&v) && DURATION_KEYS.contains(&key.as_str()) {
                Value::String(format!("{}ns", secs(&v, &f)?))
            } else if mode == Mode::Kwargs
                && key == "seed"
                && v.is_instance_of::<PyInt>()
                && !v.is_instance_of::<PyBool>()
            {
                Value::String(to_uint(&v, &f, 0, u64::MAX)?.to_string())
            } else {
                to_json_at(&v, mode, &f, depth + 1)?
            };
            m.insert(key, value);
        }
        return Ok(Value::Object(m));
    }
    if o.is_instance_of::<PyList>() || o.is_instance_of::<PyTuple>() {
        let mut out = Vec::new();
        for (i, x) in o.try_iter()?.enumerate() {
            out.push(to_json_at(&x?, mode, &format!("{field}[{i}]"), depth + 1)?);
        }
        return Ok(Value::Array(out));
    }
    Err(wrong_type(o, field, "a JSON value (dict, list, str, int, float, bool or None)"))
}

fn is_number(o: &Bound<'_, PyAny>) -> bool {
    (o.is_instance_of::<PyInt>() && !o.is_instance_of::<PyBool>()) || o.is_instance_of::<PyFloat>()
}

/// Converts JSON to Python (dicts, lists, str, int, float, bool, None).
pub fn from_json<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Number(n) => {
            if let Some(u) = n.as_u64() {
                u.into_pyobject(py)?.into_any()
            } else if let Some(i) = n.as_i64() {
                i.into_pyobject(py)?.into_any()
            } else {
                n.as_f64().unwrap_or(f64::NAN).into_pyobject(py)?.into_any()
            }
        }
        Value::String(s) => PyString::new(py, s).into_any(),
        Value::Array(a) => {
            let l = PyList::empty(py);
            for x in a {
                l.append(from_json(py, x)?)?;
            }
            l.into_any()
        }
        Value::Object(m) => {
            let d = PyDict::new(py);
            for (k, x) in m {
                d.set_item(k, from_json(py, x)?)?;
            }
            d.into_any()
        }
    })
}

/// Converts a Python tree to the core's host JSON tree for fingerprints and
/// canonical JSON: numbers become doubles (an int a double cannot hold
/// exactly is `invalid_number`), object keys must be `str`
/// (`invalid_type`), nesting stops at the core's limit (`too_deep`).
pub fn to_host_json(o: &Bound<'_, PyAny>) -> PyResult<JsonValue> {
    host_at(o, 0)
}

fn ierr(py: Python<'_>, code: ErrorCode, why: impl Into<String>) -> PyErr {
    err_in(py, Family::Idempotency, code, "value", why)
}

fn host_at(o: &Bound<'_, PyAny>, depth: usize) -> PyResult<JsonValue> {
    let py = o.py();
    if o.is_none() {
        return Ok(JsonValue::Null);
    }
    if let Ok(b) = o.downcast::<PyBool>() {
        return Ok(JsonValue::Bool(b.is_true()));
    }
    if let Ok(f) = o.downcast::<PyFloat>() {
        return Ok(JsonValue::Number(f.value()));
    }
    if o.is_instance_of::<PyInt>() {
        if let Ok(v) = o.extract::<i64>() {
            if v.unsigned_abs() <= 1 << 53 {
                return Ok(JsonValue::Number(v as f64));
            }
        }
        // Exact iff float(i) == i (Python compares int and float exactly).
        let f =
            o.extract::<f64>().map_err(|_| ierr(py, ErrorCode::InvalidNumber, "integer beyond the double range"))?;
        if o.eq(f).unwrap_or(false) {
            return Ok(JsonValue::Number(f));
        }
        return Err(ierr(py, ErrorCode::InvalidNumber, "integer that a double cannot hold exactly"));
    }
    if let Ok(s) = o.downcast::<PyString>() {
        return s
            .to_cow()
            .map(|s| JsonValue::String(s.into_owned()))
            .map_err(|_| ierr(py, ErrorCode::InvalidString, "string with a lone surrogate"));
    }
    if depth >= MAX_DEPTH {
        return Err(ierr(py, ErrorCode::TooDeep, format!("nesting deeper than {MAX_DEPTH} levels (or a cycle)")));
    }
    if let Ok(d) = o.downcast::<PyDict>() {
        let mut members = Vec::with_capacity(d.len());
        for (k, v) in d.iter() {
            let key = match k.downcast::<PyString>() {
                Ok(s) => s
                    .to_cow()
                    .map_err(|_| ierr(py, ErrorCode::InvalidString, "key with a lone surrogate"))?
                    .into_owned(),
                Err(_) => {
                    return Err(ierr(
                        py,
                        ErrorCode::InvalidType,
                        format!("object keys must be str, got {}", type_name(&k)),
                    ))
                }
            };
            members.push((key, host_at(&v, depth + 1)?));
        }
        return Ok(JsonValue::Object(members));
    }
    if o.is_instance_of::<PyList>() || o.is_instance_of::<PyTuple>() {
        let mut out = Vec::new();
        for x in o.try_iter()? {
            out.push(host_at(&x?, depth + 1)?);
        }
        return Ok(JsonValue::Array(out));
    }
    Err(ierr(
        py,
        ErrorCode::InvalidType,
        format!("{} is not JSON (dict, list, tuple, str, int, float, bool or None)", type_name(o)),
    ))
}

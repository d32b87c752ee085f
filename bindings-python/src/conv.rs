//! Conversions between Python values and the core's types: JSON trees,
//! float seconds, integers, and errors.
//!
//! Every conversion refuses bad input with a `retrycore` exception carrying a
//! stable `.code` (never a bare pyo3 `TypeError`, never a panic), and every
//! recursive walk stops at a depth limit, so a cyclic or 100 000-deep
//! container costs neither stack nor time.

use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::sync::GILOnceCell;
use pyo3::type_object::PyTypeCheck;
use pyo3::types::{IntoPyDict, PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple, PyType};
use retrycore::json::{Map, Value};
use retrycore::limits;
use retrycore::{Error, ErrorCode, ErrorDomain};
use std::borrow::Cow;
use std::time::Instant;

/// Any Python object: the arguments' type (every reader below checks it itself).
pub type Obj<'py> = Bound<'py, PyAny>;

static ERRORS: GILOnceCell<Py<PyModule>> = GILOnceCell::new();

/// Returns the pure-Python module that defines the exception classes.
pub fn errors_module(py: Python<'_>) -> PyResult<&Bound<'_, PyModule>> {
    ERRORS.get_or_try_init(py, || Ok::<_, PyErr>(py.import("retrycore._errors")?.unbind())).map(|m| m.bind(py))
}

/// Converts a core error raised in `domain` (the config domain, or the
/// idempotency functions) into the Python exception of the class the core
/// names for it (`ErrorCode::class`).
pub fn core_err(py: Python<'_>, e: &Error, domain: ErrorDomain) -> PyErr {
    let args = (e.code(), e.field(), e.to_string(), e.kind().class(domain).code());
    match errors_module(py).and_then(|m| m.getattr("_from_core")?.call1(args)) {
        Ok(exc) => PyErr::from_value(exc),
        Err(err) => err,
    }
}

/// A `Result` of the core as a `PyResult`, raising in the config domain.
pub trait CoreResult<T> {
    fn py(self, py: Python<'_>) -> PyResult<T>;
    fn py_in(self, py: Python<'_>, domain: ErrorDomain) -> PyResult<T>;
}

impl<T> CoreResult<T> for retrycore::Result<T> {
    fn py(self, py: Python<'_>) -> PyResult<T> {
        self.py_in(py, ErrorDomain::Config)
    }
    fn py_in(self, py: Python<'_>, domain: ErrorDomain) -> PyResult<T> {
        self.map_err(|e| core_err(py, &e, domain))
    }
}

/// Raises a binding-side error with a core code.
pub fn err(py: Python<'_>, code: ErrorCode, field: &str, why: impl Into<String>) -> PyErr {
    err_in(py, ErrorDomain::Config, code, field, why)
}

pub fn err_in(py: Python<'_>, domain: ErrorDomain, code: ErrorCode, field: &str, why: impl Into<String>) -> PyErr {
    core_err(py, &Error::new(code, field.to_owned(), why.into()), domain)
}

pub fn type_name(o: &Obj) -> String {
    o.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "object".into())
}

pub fn wrong_type(o: &Obj, field: &str, want: &str) -> PyErr {
    err(o.py(), ErrorCode::InvalidType, field, format!("must be {want}, got {}", type_name(o)))
}

// ---------------------------------------------------------------- host code

/// Turns an exception raised by the caller's own object while it was being
/// converted (a throwing `__iter__`, `__index__`, getter…) into a retrycore
/// error naming `field`, with the original as `__cause__`. A retrycore error
/// passes unchanged, and so does a `BaseException` that is not an
/// `Exception` (`KeyboardInterrupt`, `SystemExit`).
pub fn user_err(py: Python<'_>, e: PyErr, field: &str) -> PyErr {
    let v = e.value(py);
    if !v.is_instance_of::<PyException>() {
        return e;
    }
    // Looked up here, not cached: this runs only on the way to raising.
    let base = errors_module(py).and_then(|m| m.getattr("RetrycoreError"));
    if base.is_ok_and(|t| v.is_instance(&t).unwrap_or(false)) {
        return e;
    }
    let name = v.get_type().name().map(|n| n.to_string()).unwrap_or_default();
    let text = v.str().map(|t| t.to_string()).unwrap_or_default();
    let ours = err(py, ErrorCode::InvalidType, field, retrycore::surface::unreadable(&name, &text));
    ours.set_cause(py, Some(e));
    ours
}

/// Iterates a list or tuple (or a subclass, through its `__iter__`), keeping
/// at most [`limits::MAX_ITEMS`] elements: a longer or endless one is
/// `too_large` before anything is converted, so converting an element (which
/// may run the caller's code) cannot change what is walked.
pub fn items<'py>(o: &Obj<'py>, field: &str) -> PyResult<Vec<Obj<'py>>> {
    let py = o.py();
    if o.is_exact_instance_of::<PyList>() || o.is_exact_instance_of::<PyTuple>() {
        limits::check_items(o.len()? as u64, field).py(py)?;
    }
    let mut out = Vec::new();
    for x in o.try_iter().map_err(|e| user_err(py, e, field))? {
        if out.len() == limits::MAX_ITEMS {
            limits::check_items(limits::MAX_ITEMS as u64 + 1, field).py(py)?;
        }
        out.push(x.map_err(|e| user_err(py, e, field))?);
    }
    Ok(out)
}

/// Reads a list or tuple of anything (see [`items`]); anything else is `invalid_type`.
pub fn list_arg<'py>(o: &Obj<'py>, field: &str, want: &str) -> PyResult<Vec<Obj<'py>>> {
    if !(o.is_instance_of::<PyList>() || o.is_instance_of::<PyTuple>()) {
        return Err(wrong_type(o, field, want));
    }
    items(o, field)
}

/// Reads an optional argument with `read`: left out and None are both None.
pub fn opt<'a, 'py, T>(o: Option<&'a Obj<'py>>, read: impl FnOnce(&'a Obj<'py>) -> PyResult<T>) -> PyResult<Option<T>> {
    o.filter(|x| !x.is_none()).map(read).transpose()
}

/// Reads an argument of a native class; anything else is `invalid_type`.
pub fn class_arg<'a, 'py, T: PyTypeCheck>(o: &'a Obj<'py>, field: &str, want: &str) -> PyResult<&'a Bound<'py, T>> {
    o.downcast::<T>().map_err(|_| wrong_type(o, field, want))
}

pub fn opt_class_arg<'a, 'py, T: PyTypeCheck>(
    o: Option<&'a Obj<'py>>,
    field: &str,
    want: &str,
) -> PyResult<Option<&'a Bound<'py, T>>> {
    opt(o, |x| class_arg(x, field, want))
}

// ---------------------------------------------------------------- scalars

/// Reads a `str`; a lone surrogate is `invalid_string`.
pub fn to_str(o: &Obj, field: &str) -> PyResult<String> {
    let s = o.downcast::<PyString>().map_err(|_| wrong_type(o, field, "a str"))?;
    s.to_cow()
        .map(|c| c.into_owned())
        .map_err(|_| err(o.py(), ErrorCode::InvalidString, field, "contains a lone surrogate, which has no UTF-8 form"))
}

pub fn opt_str(o: Option<&Obj>, field: &str) -> PyResult<Option<String>> {
    opt(o, |x| to_str(x, field))
}

/// Reads a `bool` (not an int).
pub fn to_bool(o: &Obj, field: &str) -> PyResult<bool> {
    o.downcast::<PyBool>().map(|b| b.is_true()).map_err(|_| wrong_type(o, field, "a bool"))
}

pub fn opt_bool(o: Option<&Obj>, field: &str) -> PyResult<Option<bool>> {
    opt(o, |x| to_bool(x, field))
}

static INT_INDEX: GILOnceCell<Py<PyAny>> = GILOnceCell::new();

/// The exact `int` value of an `int` or a subclass, read without calling
/// any method the subclass overrides (`int.__index__` copies the digits).
fn exact_int<'py>(o: &Obj<'py>) -> PyResult<Obj<'py>> {
    if o.is_exact_instance_of::<PyInt>() {
        return Ok(o.clone());
    }
    let py = o.py();
    let index = INT_INDEX
        .get_or_try_init(py, || -> PyResult<Py<PyAny>> { Ok(py.get_type::<PyInt>().getattr("__index__")?.unbind()) })?;
    index.bind(py).call1((o,))
}

pub fn is_int(o: &Obj) -> bool {
    o.is_instance_of::<PyInt>() && !o.is_instance_of::<PyBool>()
}

/// A number argument: a `float`, or an `int` (never a bool) read by its
/// value — exactly when it fits 128 bits, else as the nearest double
/// (±infinity past the double range).
#[derive(Copy, Clone)]
enum Num {
    Float(f64),
    Int(i128),
    Huge(f64),
}

impl Num {
    /// The nearest double (`i128 as f64` rounds half to even, like Python's `float(int)`).
    fn f64(self) -> f64 {
        match self {
            Num::Float(v) | Num::Huge(v) => v,
            Num::Int(v) => v as f64,
        }
    }
}

/// Reads a `float` or an `int`; anything else is `invalid_type` ("must be `want`").
fn num(o: &Obj, field: &str, want: &str) -> PyResult<Num> {
    if let Ok(f) = o.downcast::<PyFloat>() {
        return Ok(Num::Float(f.value()));
    }
    if !is_int(o) {
        return Err(wrong_type(o, field, want));
    }
    let i = exact_int(o)?;
    if let Ok(v) = i.extract::<i128>() {
        return Ok(Num::Int(v));
    }
    let inf = |negative: bool| if negative { f64::NEG_INFINITY } else { f64::INFINITY };
    Ok(Num::Huge(i.extract::<f64>().or_else(|_| i.lt(0i64).map(inf))?))
}

/// An `int` as the nearest double (±infinity past the double range).
pub fn int_f64(o: &Obj) -> PyResult<f64> {
    num(o, "", "an int").map(Num::f64)
}

/// Reads a count (an `int`, not a bool) in `0..=max` by the core's rule
/// (`retrycore::limits::count_from_i128`): never a wrap, never a silent 0.
pub fn to_count(o: &Obj, field: &str, max: u64) -> PyResult<u64> {
    let r = match num(o, field, "an int")? {
        Num::Int(v) => limits::count_from_i128(v, max, field),
        Num::Huge(v) => limits::count_from_f64(f64::INFINITY.copysign(v), max, field),
        Num::Float(_) => return Err(wrong_type(o, field, "an int")),
    };
    r.py(o.py())
}

pub fn opt_count(o: Option<&Obj>, field: &str, max: u64) -> PyResult<Option<u64>> {
    opt(o, |x| to_count(x, field, max))
}

/// Reads a real number (`float` or `int`, not a bool).
pub fn to_f64(o: &Obj, field: &str) -> PyResult<f64> {
    match num(o, field, "a float")? {
        Num::Huge(v) if v.is_infinite() => Err(err(o.py(), ErrorCode::OutOfRange, field, "is too large for a float")),
        n => Ok(n.f64()),
    }
}

/// Reads float seconds (or an int) as nanoseconds, rounding half to even.
/// Whole seconds that fit are exact; everything else (NaN, infinities,
/// negatives, amounts past the nanosecond range) follows the core's rule
/// for a host float (`retrycore::duration::from_secs_f64`).
pub fn secs(o: &Obj, field: &str) -> PyResult<u64> {
    let n = num(o, field, "float seconds")?;
    if let Num::Int(v) = n {
        if let Some(ns) = u64::try_from(v).ok().and_then(|v| v.checked_mul(1_000_000_000)) {
            return Ok(ns);
        }
    }
    retrycore::duration::from_secs_f64(n.f64(), field).py(o.py())
}

/// Reads an instant in float seconds on the monotonic clock (or an int) as
/// nanoseconds by the core's rule (`retrycore::limits::time_from_host_f64`):
/// one past the nanosecond range is `invalid_time`.
pub fn instant(o: &Obj, field: &str) -> PyResult<u64> {
    limits::time_from_host_f64(num(o, field, "float seconds")?.f64(), 1e9, field).py(o.py())
}

/// Nanoseconds as float seconds (`ns / 1e9`, one IEEE division).
#[inline]
pub fn to_secs(ns: u64) -> f64 {
    retrycore::duration::to_secs_f64(ns)
}

// ---------------------------------------------------------------- clocks

/// When the clock was anchored, and `time.monotonic_ns()` then.
static ORIGIN: std::sync::OnceLock<(Instant, u64)> = std::sync::OnceLock::new();

/// Anchors the monotonic clock on `time.monotonic_ns()` so that a `now`
/// the caller reads from `time.monotonic()` and one the binding fills in
/// agree.
pub fn init_clock(py: Python<'_>) -> PyResult<()> {
    let ns: u64 = py.import("time")?.getattr("monotonic_ns")?.call0()?.extract()?;
    let _ = ORIGIN.set((Instant::now(), ns));
    Ok(())
}

/// The monotonic clock in nanoseconds, on the `time.monotonic()` scale.
#[inline]
pub fn mono_ns() -> u64 {
    let (at, ns) = ORIGIN.get_or_init(|| (Instant::now(), 0));
    ns.saturating_add(u64::try_from(at.elapsed().as_nanos()).unwrap_or(u64::MAX))
}

/// `now` given as float seconds, or the monotonic clock.
pub fn now_or_clock(now: Option<&Obj>) -> PyResult<u64> {
    Ok(opt(now, |x| instant(x, "now"))?.unwrap_or_else(mono_ns))
}

/// The wall clock in Unix epoch milliseconds.
pub fn wall_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

/// Reads a wall-clock instant in Unix epoch milliseconds (an int, or a
/// float rounded half to even), refused past the nanosecond range like any
/// instant (`retrycore::limits::time_from_host_f64`: `invalid_time`).
pub fn wall_arg(o: &Obj, field: &str) -> PyResult<u64> {
    let n = num(o, field, "Unix epoch milliseconds (an int)")?;
    limits::time_from_host_f64(n.f64(), 1e6, field).py(o.py())?;
    // In range (refused above otherwise): an int is exact.
    Ok(match n {
        Num::Int(v) => v as u64,
        _ => n.f64().round_ties_even() as u64,
    })
}

pub fn wall_or_clock(w: Option<&Obj>) -> PyResult<u64> {
    Ok(opt(w, |x| wall_arg(x, "wall_now_ms"))?.unwrap_or_else(wall_ms))
}

// ---------------------------------------------------------------- JSON trees

/// How a Python tree becomes a document.
#[derive(Copy, Clone, PartialEq, Eq)]
pub enum Mode {
    /// As-is: the same JSON as every runtime.
    Document,
    /// Keyword arguments: numbers stay numbers (the core's typed reader
    /// takes them as float seconds wherever it reads a duration), an int
    /// `seed`, a `timedelta`; `None` becomes null, which the core's typed
    /// readers refuse (leave the key out instead).
    Kwargs,
}

/// Nanoseconds per host unit of a bare-number duration: Python seconds.
pub const UNIT_NS: f64 = 1e9;

impl Mode {
    /// Reads `kwargs` as a mode flag (true: keyword arguments).
    pub fn of(kwargs: Option<&Obj>) -> PyResult<Mode> {
        Ok(if opt_bool(kwargs, "kwargs")?.unwrap_or(false) { Mode::Kwargs } else { Mode::Document })
    }
}

/// A number of a tree. A document keeps 64-bit integers exact (wider ones
/// are `out_of_range`; typed options take them as the equal float). A value
/// to fingerprint (`host`) holds doubles only (RFC 8785): NaN, the
/// infinities and an int a double cannot hold exactly are `invalid_number`.
fn number_value(o: &Obj, field: &str, mode: Mode, host: bool) -> PyResult<Value> {
    let py = o.py();
    let n = num(o, field, "a number")?;
    let f = n.f64();
    if host {
        let exact = match n {
            Num::Float(_) => f.is_finite(),
            // `as` saturates: a value at the edge of the i128 range is not taken.
            Num::Int(v) => f as i128 == v && f.abs() < 1.7e38,
            Num::Huge(_) => f.is_finite() && exact_int(o)?.eq(py.get_type::<PyInt>().call1((f,))?)?,
        };
        if exact {
            return Ok(Value::from(f));
        }
        let why = match n {
            Num::Float(_) => format!("number {f} is not finite"),
            _ => "integer that a double cannot hold exactly".to_owned(),
        };
        return Err(err(py, ErrorCode::InvalidNumber, field, why));
    }
    if let Num::Int(v) = n {
        if let Ok(u) = u64::try_from(v) {
            return Ok(Value::from(u));
        }
        if let Ok(i) = i64::try_from(v) {
            return Ok(Value::from(i));
        }
    }
    if mode == Mode::Document && !matches!(n, Num::Float(_)) {
        return Err(err(py, ErrorCode::OutOfRange, field, "integer beyond 64 bits"));
    }
    retrycore::json::Number::from_f64(f)
        .map(Value::Number)
        .ok_or_else(|| err(py, ErrorCode::OutOfRange, field, format!("must be a finite number, got {f}")))
}

/// The `(key, value)` members of a dict (or subclass), taken in one step
/// (`PyDict_Items` reads the table itself), so a value whose conversion
/// mutates the dict changes nothing being walked; or, unless `host`, of a
/// mapping that is not a dict (`collections.abc.Mapping`): its `items()`,
/// walked like a list (at most [`limits::MAX_ITEMS`], a raising `items()`
/// or iterator `invalid_type`). None for anything else.
fn members<'py>(o: &Obj<'py>, field: &str, host: bool) -> PyResult<Option<Vec<(Obj<'py>, Obj<'py>)>>> {
    let py = o.py();
    let pairs = match o.downcast::<PyDict>() {
        Ok(d) => d.items().iter().collect(),
        Err(_) if host || o.downcast::<pyo3::types::PyMapping>().is_err() => return Ok(None),
        Err(_) => items(&o.call_method0("items").map_err(|e| user_err(py, e, field))?, field)?,
    };
    let pair = |p: Obj<'py>| {
        let t = p.downcast_into::<PyTuple>().ok().filter(|t| t.len() == 2);
        let t = t.ok_or_else(|| err(py, ErrorCode::InvalidType, field, "mapping items must be (key, value) pairs"))?;
        Ok((t.get_item(0)?, t.get_item(1)?))
    };
    pairs.into_iter().map(pair).collect::<PyResult<_>>().map(Some)
}

/// `datetime.timedelta`, and its base class's division by one microsecond.
static TIMEDELTA: GILOnceCell<(Py<PyType>, Py<PyAny>, Py<PyAny>)> = GILOnceCell::new();

/// A `datetime.timedelta` (or subclass) as whole microseconds, read with the
/// base class's own division (never a method the subclass overrides).
fn timedelta_us(o: &Obj) -> PyResult<Option<i128>> {
    let py = o.py();
    let (ty, floordiv, unit) = TIMEDELTA.get_or_try_init(py, || -> PyResult<_> {
        let ty = py.import("datetime")?.getattr("timedelta")?.downcast_into::<PyType>()?;
        let unit = ty.call((), Some(&[("microseconds", 1)].into_py_dict(py)?))?.unbind();
        Ok((ty.clone().unbind(), ty.getattr("__floordiv__")?.unbind(), unit))
    })?;
    if !o.is_instance(ty.bind(py)).unwrap_or(false) {
        return Ok(None);
    }
    // At most 999 999 999 days: always within i128.
    floordiv.bind(py).call1((o, unit.bind(py)))?.extract().map(Some)
}

/// Converts a Python tree (dict with str keys, list/tuple, str, int, float,
/// bool, None) to JSON: depth-limited, every list bounded by
/// [`limits::MAX_ITEMS`], every dict read as a snapshot of its members.
pub fn to_json(o: &Obj, mode: Mode) -> PyResult<Value> {
    to_json_at(o, mode, false, "", 0, &mut Vec::new())
}

/// Converts `base` (a dict, or None) with `overrides` (keyword arguments) laid over it.
pub fn to_json_over(base: Option<&Obj>, overrides: Option<&Bound<'_, PyDict>>, mode: Mode) -> PyResult<Value> {
    let mut doc = match base.filter(|b| !b.is_none()) {
        None => Map::new(),
        Some(b) => match to_json(b, mode)? {
            Value::Object(m) => m,
            _ => return Err(wrong_type(b, "config", "a dict")),
        },
    };
    if let Some(o) = overrides {
        if let Value::Object(m) = to_json(o.as_any(), mode)? {
            doc.extend(m);
        }
    }
    Ok(Value::Object(doc))
}

/// Converts a Python tree for fingerprints and canonical JSON, as the core's
/// `JsonInput` takes it: numbers are doubles (see [`number_value`]), only a
/// dict is an object (keys `str`), nesting stops at the core's limit
/// (`too_deep`); every error is raised in the idempotency domain naming `value`.
pub fn to_host_json(o: &Obj) -> PyResult<Value> {
    to_json_at(o, Mode::Document, true, "value", 0, &mut Vec::new()).map_err(|e| as_idempotency(o.py(), e))
}

/// The walk: `host` as in [`to_host_json`], where every error names `value`.
/// `ancestors`: the containers being converted around `o` (a value that
/// contains itself is not JSON: `invalid_type`, docs/idempotency.md).
fn to_json_at(
    o: &Obj,
    mode: Mode,
    host: bool,
    field: &str,
    depth: usize,
    ancestors: &mut Vec<usize>,
) -> PyResult<Value> {
    let py = o.py();
    if o.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(b) = o.downcast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if o.is_instance_of::<PyInt>() || o.is_instance_of::<PyFloat>() {
        return number_value(o, field, mode, host);
    }
    if o.is_instance_of::<PyString>() {
        return Ok(Value::String(to_str(o, field)?));
    }
    if mode == Mode::Kwargs {
        if let Some(us) = timedelta_us(o)? {
            return Ok(Value::String(format!("{us}us")));
        }
    }
    limits::check_depth(depth, field).py(py)?;
    let id = o.as_ptr() as usize;
    if ancestors.contains(&id) {
        return Err(err(py, ErrorCode::InvalidType, field, "a cyclic structure is not JSON"));
    }
    ancestors.push(id);
    let r = container_json(o, mode, host, field, depth, ancestors);
    ancestors.pop();
    r
}

fn container_json(
    o: &Obj,
    mode: Mode,
    host: bool,
    field: &str,
    depth: usize,
    ancestors: &mut Vec<usize>,
) -> PyResult<Value> {
    let py = o.py();
    if o.is_instance_of::<PyList>() || o.is_instance_of::<PyTuple>() {
        let xs = items(o, field)?.into_iter().enumerate();
        let at = |i| if host { field.into() } else { Cow::from(format!("{field}[{i}]")) };
        return xs
            .map(|(i, x)| to_json_at(&x, mode, host, &at(i), depth + 1, ancestors))
            .collect::<PyResult<_>>()
            .map(Value::Array);
    }
    let Some(ms) = members(o, field, host)? else {
        return Err(wrong_type(o, field, "a JSON value (dict, list, tuple, str, int, float, bool or None)"));
    };
    // Collected, then sorted once (`collect`): inserting key by key into the
    // sorted map would shift its members at every key of a large dict.
    let mut m = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (k, v) in ms {
        if !k.is_instance_of::<PyString>() {
            let why = format!("object keys must be str, got {}", type_name(&k));
            return Err(err(py, ErrorCode::InvalidType, field, why));
        }
        let key = to_str(&k, field)?;
        // Two str subclasses with one value: the core refuses a repeated key.
        if host && !seen.insert(key.clone()) {
            return Err(err(py, ErrorCode::InvalidValue, field, format!("duplicate key {key:?}")));
        }
        let f = match (host, field) {
            (true, _) => Cow::from(field),
            (false, "") => Cow::from(key.clone()),
            _ => Cow::from(format!("{field}.{key}")),
        };
        // None is JSON null; typed options refuse it in the core's typed reader.
        let value = if mode == Mode::Kwargs && key == "seed" && is_int(&v) {
            Value::String(to_count(&v, &f, u64::MAX)?.to_string())
        } else {
            to_json_at(&v, mode, host, &f, depth + 1, ancestors)?
        };
        m.push((key, value));
    }
    Ok(Value::Object(m.into_iter().collect()))
}

/// Converts JSON to Python (dicts, lists, str, int, float, bool, None).
pub fn from_json<'py>(py: Python<'py>, v: &Value) -> PyResult<Obj<'py>> {
    Ok(match v {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Number(n) => match (n.as_u64(), n.as_i64()) {
            (Some(u), _) => u.into_pyobject(py)?.into_any(),
            (_, Some(i)) => i.into_pyobject(py)?.into_any(),
            _ => n.as_f64().unwrap_or(f64::NAN).into_pyobject(py)?.into_any(),
        },
        Value::String(s) => PyString::new(py, s).into_any(),
        Value::Array(a) => {
            PyList::new(py, a.iter().map(|x| from_json(py, x)).collect::<PyResult<Vec<_>>>()?)?.into_any()
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

/// Re-raises an error of a shared reader as raised in the idempotency domain
/// (the class the core's `ErrorCode::class` gives it there; the message keeps
/// one `field: ` prefix).
pub fn as_idempotency(py: Python<'_>, e: PyErr) -> PyErr {
    let v = e.value(py);
    let text = |name: &str| v.getattr(name).and_then(|c| c.extract::<String>()).ok();
    let (Some(code), Some(field)) = (text("code"), text("field")) else { return e };
    let Some(code) = ErrorCode::ALL.iter().find(|c| c.code() == code) else { return e };
    let msg = v.str().map(|s| s.to_string()).unwrap_or_default();
    let out =
        err_in(py, ErrorDomain::Idempotency, *code, &field, msg.strip_prefix(&format!("{field}: ")).unwrap_or(&msg));
    if let Some(cause) = v.getattr("__cause__").ok().filter(|c| !c.is_none()) {
        out.set_cause(py, Some(PyErr::from_value(cause)));
    }
    out
}

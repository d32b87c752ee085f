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
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple, PyType};
use retrycore::idempotency::JsonValue;
use retrycore::limits::{self, MAX_DEPTH};
use retrycore::{Error, ErrorCode, ErrorDomain};
use serde_json::{Map, Value};
use std::time::Instant;

/// Any Python object: the arguments' type (every reader below checks it itself).
pub type Obj<'py> = Bound<'py, PyAny>;

/// Where a core error is raised: with its code, the core's
/// `ErrorCode::class` decides the exception class (a config-family code is a
/// `ConfigError`, or an `IdempotencyError` in the idempotency functions).
#[derive(Copy, Clone)]
pub enum Family {
    Config,
    Idempotency,
}

impl Family {
    const fn domain(self) -> ErrorDomain {
        match self {
            Family::Config => ErrorDomain::Config,
            Family::Idempotency => ErrorDomain::Idempotency,
        }
    }
}

static ERRORS: GILOnceCell<Py<PyModule>> = GILOnceCell::new();

/// Returns the pure-Python module that defines the exception classes.
pub fn errors_module(py: Python<'_>) -> PyResult<&Bound<'_, PyModule>> {
    ERRORS.get_or_try_init(py, || Ok::<_, PyErr>(py.import("retrycore._errors")?.unbind())).map(|m| m.bind(py))
}

/// Converts a core error into the Python exception of the class the core names.
pub fn core_err(py: Python<'_>, e: &Error, family: Family) -> PyErr {
    let build = || -> PyResult<PyErr> {
        let m = errors_module(py)?;
        let exc = m.getattr("_from_core")?.call1((
            e.code(),
            e.field(),
            e.to_string(),
            e.kind().class(family.domain()).code(),
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
pub fn class_arg<'a, 'py, T: pyo3::type_object::PyTypeCheck>(
    o: &'a Obj<'py>,
    field: &str,
    want: &str,
) -> PyResult<&'a Bound<'py, T>> {
    o.downcast::<T>().map_err(|_| wrong_type(o, field, want))
}

pub fn opt_class_arg<'a, 'py, T: pyo3::type_object::PyTypeCheck>(
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

pub fn to_bool(o: &Obj, field: &str) -> PyResult<bool> {
    o.downcast::<PyBool>().map(|b| b.is_true()).map_err(|_| wrong_type(o, field, "a bool"))
}

pub fn opt_bool(o: Option<&Obj>, field: &str) -> PyResult<Option<bool>> {
    opt(o, |x| to_bool(x, field))
}

/// A bool argument with a default (None is the default).
pub fn bool_or(o: Option<&Obj>, field: &str, default: bool) -> PyResult<bool> {
    Ok(opt_bool(o, field)?.unwrap_or(default))
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

/// An `int` as an i128, or its sign when it is wider.
enum Int {
    Fits(i128),
    Huge { negative: bool },
}

fn int_value(o: &Obj) -> PyResult<Int> {
    let i = exact_int(o)?;
    if let Ok(v) = i.extract::<i128>() {
        return Ok(Int::Fits(v));
    }
    Ok(Int::Huge { negative: i.lt(0i64)? })
}

/// An `int` as the nearest double (±infinity past the double range).
pub fn int_f64(o: &Obj) -> PyResult<f64> {
    let i = exact_int(o)?;
    match i.extract::<f64>() {
        Ok(v) => Ok(v),
        Err(_) => Ok(if i.lt(0i64)? { f64::NEG_INFINITY } else { f64::INFINITY }),
    }
}

/// Reads a count (an `int`, not a bool) in `0..=max` by the core's rule
/// (`retrycore::limits::count_from_i128`): never a wrap, never a silent 0.
pub fn to_count(o: &Obj, field: &str, max: u64) -> PyResult<u64> {
    if !is_int(o) {
        return Err(wrong_type(o, field, "an int"));
    }
    let py = o.py();
    match int_value(o)? {
        Int::Fits(v) => limits::count_from_i128(v, max, field).py(py),
        Int::Huge { negative } => {
            limits::count_from_f64(if negative { f64::NEG_INFINITY } else { f64::INFINITY }, max, field).py(py)
        }
    }
}

pub fn opt_count(o: Option<&Obj>, field: &str, max: u64) -> PyResult<Option<u64>> {
    opt(o, |x| to_count(x, field, max))
}

/// Reads a count in `0..=u32::MAX` (see [`to_count`]).
pub fn to_u32(o: &Obj, field: &str) -> PyResult<u32> {
    Ok(to_count(o, field, u64::from(u32::MAX))? as u32)
}

/// Reads a real number (`float` or `int`, not a bool).
pub fn to_f64(o: &Obj, field: &str) -> PyResult<f64> {
    if let Ok(f) = o.downcast::<PyFloat>() {
        return Ok(f.value());
    }
    if is_int(o) {
        let v = int_f64(o)?;
        if v.is_infinite() {
            return Err(err(o.py(), ErrorCode::OutOfRange, field, "is too large for a float"));
        }
        return Ok(v);
    }
    Err(wrong_type(o, field, "a float"))
}

/// Reads float seconds (or an int) as nanoseconds, rounding half to even.
/// Whole seconds that fit are exact; everything else (NaN, infinities,
/// negatives, amounts past the nanosecond range) follows the core's rule
/// for a host float (`retrycore::duration::from_secs_f64`).
pub fn secs(o: &Obj, field: &str) -> PyResult<u64> {
    let py = o.py();
    if let Ok(f) = o.downcast::<PyFloat>() {
        return retrycore::duration::from_secs_f64(f.value(), field).py(py);
    }
    if is_int(o) {
        if let Int::Fits(v) = int_value(o)? {
            if let Some(ns) = u64::try_from(v).ok().and_then(|v| v.checked_mul(1_000_000_000)) {
                return Ok(ns);
            }
        }
        return retrycore::duration::from_secs_f64(int_f64(o)?, field).py(py);
    }
    Err(wrong_type(o, field, "float seconds"))
}

pub fn opt_secs(o: Option<&Obj>, field: &str) -> PyResult<Option<u64>> {
    opt(o, |x| secs(x, field))
}

/// Reads an instant in float seconds on the monotonic clock (or an int) as
/// nanoseconds by the core's rule (`retrycore::limits::time_from_host_f64`):
/// one past the nanosecond range is `invalid_time`.
pub fn instant(o: &Obj, field: &str) -> PyResult<u64> {
    let v = if let Ok(f) = o.downcast::<PyFloat>() {
        f.value()
    } else if is_int(o) {
        int_f64(o)?
    } else {
        return Err(wrong_type(o, field, "float seconds"));
    };
    limits::time_from_host_f64(v, 1e9, field).py(o.py())
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
pub fn now_or_clock(now: Option<&Obj>) -> PyResult<u64> {
    match now {
        Some(x) if !x.is_none() => instant(x, "now"),
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

/// Reads a wall-clock instant in Unix epoch milliseconds (an int, or a
/// float rounded half to even), refused past the nanosecond range like any
/// instant (`retrycore::limits::time_from_host_f64`: `invalid_time`).
pub fn wall_arg(o: &Obj, field: &str) -> PyResult<u64> {
    let py = o.py();
    if is_int(o) {
        if let Int::Fits(v) = int_value(o)? {
            if let Ok(ms) = u64::try_from(v) {
                limits::time_from_host_f64(ms as f64, 1e6, field).py(py)?;
                return Ok(ms);
            }
        }
        limits::time_from_host_f64(int_f64(o)?, 1e6, field).py(py)?;
        // Negative or past 2^64 ns: refused above.
        return Err(err(py, ErrorCode::InvalidTime, field, "is not a time"));
    }
    if let Ok(f) = o.downcast::<PyFloat>() {
        let v = f.value();
        limits::time_from_host_f64(v, 1e6, field).py(py)?;
        return Ok(v.round_ties_even() as u64);
    }
    Err(wrong_type(o, field, "Unix epoch milliseconds (an int)"))
}

pub fn opt_wall(o: Option<&Obj>, field: &str) -> PyResult<Option<u64>> {
    opt(o, |x| wall_arg(x, field))
}

pub fn wall_or_clock(w: Option<&Obj>) -> PyResult<u64> {
    Ok(opt_wall(w, "wall_now_ms")?.unwrap_or_else(wall_ms))
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
        Ok(if bool_or(kwargs, "kwargs", false)? { Mode::Kwargs } else { Mode::Document })
    }
}

fn depth_err(py: Python<'_>, field: &str, depth: usize) -> PyErr {
    match limits::check_depth(depth, field) {
        Err(e) => core_err(py, &e, Family::Config),
        Ok(()) => err(py, ErrorCode::TooDeep, field, "nesting too deep"),
    }
}

fn number_value(o: &Obj, field: &str, mode: Mode) -> PyResult<Value> {
    let py = o.py();
    let finite = |v: f64| {
        serde_json::Number::from_f64(v)
            .map(Value::Number)
            .ok_or_else(|| err(py, ErrorCode::OutOfRange, field, format!("must be a finite number, got {v}")))
    };
    if let Ok(f) = o.downcast::<PyFloat>() {
        return finite(f.value());
    }
    if let Int::Fits(v) = int_value(o)? {
        if let Ok(u) = u64::try_from(v) {
            return Ok(Value::from(u));
        }
        if let Ok(i) = i64::try_from(v) {
            return Ok(Value::from(i));
        }
    }
    if mode == Mode::Kwargs {
        // Typed options: an int past 64 bits is the equal float (a duration saturates like it).
        return finite(int_f64(o)?);
    }
    Err(err(py, ErrorCode::OutOfRange, field, "integer beyond 64 bits"))
}

/// The members of a dict (or a subclass) as a list taken in one step
/// (`PyDict_Items` reads the table itself), so a value whose conversion
/// mutates the dict changes nothing being walked.
/// The `(key, value)` members of a mapping.
type Members<'py> = Vec<(Obj<'py>, Obj<'py>)>;

fn members<'py>(d: &Bound<'py, PyDict>, field: &str) -> PyResult<Members<'py>> {
    let py = d.py();
    let list = d.items();
    let mut out = Vec::with_capacity(list.len());
    for pair in list.iter() {
        let t = pair
            .downcast_into::<PyTuple>()
            .map_err(|_| err(py, ErrorCode::InvalidType, field, "dict items must be pairs"))?;
        out.push((t.get_item(0)?, t.get_item(1)?));
    }
    Ok(out)
}

/// The members of a mapping that is not a dict (`collections.abc.Mapping`):
/// its `items()`, walked like a list (at most [`limits::MAX_ITEMS`], a
/// raising `items()` or iterator `invalid_type`), each a `(key, value)` tuple.
fn mapping_members<'py>(o: &Obj<'py>, field: &str) -> PyResult<Option<Members<'py>>> {
    if o.downcast::<pyo3::types::PyMapping>().is_err() {
        return Ok(None);
    }
    let py = o.py();
    let list = o.call_method0("items").map_err(|e| user_err(py, e, field))?;
    let mut out = Vec::new();
    for pair in items(&list, field)? {
        let t = pair
            .downcast_into::<PyTuple>()
            .ok()
            .filter(|t| t.len() == 2)
            .ok_or_else(|| err(py, ErrorCode::InvalidType, field, "mapping items must be (key, value) pairs"))?;
        out.push((t.get_item(0)?, t.get_item(1)?));
    }
    Ok(Some(out))
}

struct Timedelta {
    ty: Py<PyType>,
    floordiv: Py<PyAny>,
    unit: Py<PyAny>,
}

static TIMEDELTA: GILOnceCell<Timedelta> = GILOnceCell::new();

/// A `datetime.timedelta` (or subclass) as whole microseconds, read with the
/// base class's own division (never a method the subclass overrides).
fn timedelta_us<'py>(o: &Obj<'py>) -> PyResult<Option<Obj<'py>>> {
    let py = o.py();
    let td = TIMEDELTA.get_or_try_init(py, || -> PyResult<Timedelta> {
        let ty = py.import("datetime")?.getattr("timedelta")?.downcast_into::<PyType>()?;
        let floordiv = ty.getattr("__floordiv__")?.unbind();
        let kw = PyDict::new(py);
        kw.set_item("microseconds", 1)?;
        let unit = ty.call((), Some(&kw))?.unbind();
        Ok(Timedelta { ty: ty.unbind(), floordiv, unit })
    })?;
    if !o.is_instance(td.ty.bind(py)).unwrap_or(false) {
        return Ok(None);
    }
    td.floordiv.bind(py).call1((o, td.unit.bind(py))).map(Some)
}

/// Converts a Python tree (dict with str keys, list/tuple, str, int, float,
/// bool, None) to JSON: depth-limited, every list bounded by
/// [`limits::MAX_ITEMS`], every dict read as a snapshot of its members.
pub fn to_json(o: &Obj, mode: Mode) -> PyResult<Value> {
    to_json_at(o, mode, "", 0, &mut Vec::new())
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

fn join(field: &str, key: &str) -> String {
    if field.is_empty() {
        key.to_owned()
    } else {
        format!("{field}.{key}")
    }
}

/// `ancestors`: the containers being converted around `o` (a value that
/// contains itself is not JSON: `invalid_type`, docs/idempotency.md).
fn to_json_at(o: &Obj, mode: Mode, field: &str, depth: usize, ancestors: &mut Vec<usize>) -> PyResult<Value> {
    let py = o.py();
    if o.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(b) = o.downcast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if o.is_instance_of::<PyInt>() || o.is_instance_of::<PyFloat>() {
        return number_value(o, field, mode);
    }
    if o.is_instance_of::<PyString>() {
        return Ok(Value::String(to_str(o, field)?));
    }
    if mode == Mode::Kwargs {
        if let Some(us) = timedelta_us(o)? {
            return Ok(Value::String(match int_value(&us)? {
                Int::Fits(v) => format!("{v}us"),
                Int::Huge { negative } => (if negative { "-inf" } else { "inf" }).to_owned(),
            }));
        }
    }
    if depth >= MAX_DEPTH {
        return Err(depth_err(py, field, depth));
    }
    let id = o.as_ptr() as usize;
    if ancestors.contains(&id) {
        return Err(err(py, ErrorCode::InvalidType, field, "a cyclic structure is not JSON"));
    }
    ancestors.push(id);
    let r = container_json(o, mode, field, depth, ancestors);
    ancestors.pop();
    r
}

fn container_json(o: &Obj, mode: Mode, field: &str, depth: usize, ancestors: &mut Vec<usize>) -> PyResult<Value> {
    let py = o.py();
    let ms = match o.downcast::<PyDict>() {
        Ok(d) => Some(members(d, field)?),
        Err(_) if o.is_instance_of::<PyList>() || o.is_instance_of::<PyTuple>() => None,
        Err(_) => mapping_members(o, field)?,
    };
    if let Some(ms) = ms {
        let mut m = Map::new();
        for (k, v) in ms {
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
            // None is JSON null; typed options refuse it in the core's typed reader.
            let value = if mode == Mode::Kwargs && key == "seed" && is_int(&v) {
                Value::String(to_count(&v, &f, u64::MAX)?.to_string())
            } else {
                to_json_at(&v, mode, &f, depth + 1, ancestors)?
            };
            m.insert(key, value);
        }
        return Ok(Value::Object(m));
    }
    if o.is_instance_of::<PyList>() || o.is_instance_of::<PyTuple>() {
        let xs = items(o, field)?;
        let mut out = Vec::with_capacity(xs.len());
        for (i, x) in xs.iter().enumerate() {
            out.push(to_json_at(x, mode, &format!("{field}[{i}]"), depth + 1, ancestors)?);
        }
        return Ok(Value::Array(out));
    }
    Err(wrong_type(o, field, "a JSON value (dict, list, str, int, float, bool or None)"))
}

/// Converts JSON to Python (dicts, lists, str, int, float, bool, None).
pub fn from_json<'py>(py: Python<'py>, v: &Value) -> PyResult<Obj<'py>> {
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
/// A value that contains itself is `invalid_type` (it has no JSON at all;
/// docs/idempotency.md, "Which options"), as in JS.
pub fn to_host_json(o: &Obj) -> PyResult<JsonValue> {
    host_at(o, 0, &mut Vec::new())
}

fn ierr(py: Python<'_>, code: ErrorCode, why: impl Into<String>) -> PyErr {
    err_in(py, Family::Idempotency, code, "value", why)
}

fn host_at(o: &Obj, depth: usize, ancestors: &mut Vec<usize>) -> PyResult<JsonValue> {
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
        // Exact iff the double holds the integer: |v| ≤ 2^53, or a wider
        // value whose double converts back to the same integer.
        if let Int::Fits(v) = int_value(o)? {
            // `as` rounds to nearest, ties to even, like Python's float(int).
            let f = v as f64;
            if f as i128 == v && f.abs() < 1.7e38 {
                return Ok(JsonValue::Number(f));
            }
            return Err(ierr(py, ErrorCode::InvalidNumber, "integer that a double cannot hold exactly"));
        }
        let f = int_f64(o)?;
        if f.is_infinite() {
            return Err(ierr(py, ErrorCode::InvalidNumber, "integer beyond the double range"));
        }
        if exact_int(o)?.eq(exact_float_int(py, f)?)? {
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
        return Err(ierr(py, ErrorCode::TooDeep, format!("nesting deeper than {MAX_DEPTH} levels")));
    }
    let id = o.as_ptr() as usize;
    if ancestors.contains(&id) {
        return Err(ierr(py, ErrorCode::InvalidType, "a cyclic structure is not JSON"));
    }
    ancestors.push(id);
    let r = host_container(o, depth, ancestors);
    ancestors.pop();
    r
}

fn host_container(o: &Obj, depth: usize, ancestors: &mut Vec<usize>) -> PyResult<JsonValue> {
    let py = o.py();
    if let Ok(d) = o.downcast::<PyDict>() {
        let ms = members(d, "value").map_err(|e| user_err(py, e, "value"))?;
        let mut out = Vec::with_capacity(ms.len());
        for (k, v) in ms {
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
            out.push((key, host_at(&v, depth + 1, ancestors)?));
        }
        return Ok(JsonValue::Object(out));
    }
    if o.is_instance_of::<PyList>() || o.is_instance_of::<PyTuple>() {
        let xs = items(o, "value").map_err(|e| as_idempotency(py, e))?;
        let mut out = Vec::with_capacity(xs.len());
        for x in &xs {
            out.push(host_at(x, depth + 1, ancestors)?);
        }
        return Ok(JsonValue::Array(out));
    }
    Err(ierr(
        py,
        ErrorCode::InvalidType,
        format!("{} is not JSON (dict, list, tuple, str, int, float, bool or None)", type_name(o)),
    ))
}

/// The exact `int` a finite integral double stands for (`int(f)` of a plain float).
fn exact_float_int(py: Python<'_>, f: f64) -> PyResult<Obj<'_>> {
    py.get_type::<PyInt>().call1((f,))
}

/// Re-raises an error of a shared reader as raised in the idempotency domain
/// (the class the core's `ErrorCode::class` gives it there; the message keeps
/// one `field: ` prefix).
pub fn as_idempotency(py: Python<'_>, e: PyErr) -> PyErr {
    let v = e.value(py);
    match (
        v.getattr("code").and_then(|c| c.extract::<String>()),
        v.getattr("field").and_then(|c| c.extract::<String>()),
    ) {
        (Ok(code), Ok(field)) => match ErrorCode::ALL.iter().find(|c| c.code() == code) {
            Some(c) => {
                let msg = v.str().map(|s| s.to_string()).unwrap_or_default();
                let reason = msg.strip_prefix(&format!("{field}: ")).unwrap_or(&msg).to_owned();
                let out = err_in(py, Family::Idempotency, *c, &field, reason);
                if let Ok(Some(cause)) = v.getattr("__cause__").map(|c| (!c.is_none()).then_some(c)) {
                    out.set_cause(py, Some(PyErr::from_value(cause)));
                }
                out
            }
            None => e,
        },
        _ => e,
    }
}

//! What the host saw of one failed attempt, read from an exception, a dict
//! or keyword arguments, and the classification verdict.

use crate::conv::{self, err, opt_bool, opt_str, to_secs, to_str};
use crate::see::{self, Name};
use pyo3::exceptions::PyBaseException;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};
use retrycore::classify::{Classifier, Failure, GrpcCode, Verdict};
use retrycore::limits;
use retrycore::ErrorCode;

/// A failure owning its strings.
#[derive(Default, Debug)]
pub struct OwnedFailure {
    pub status: Option<u16>,
    pub grpc_code: Option<GrpcCode>,
    pub names: Vec<Name>,
    pub method: Option<String>,
    pub idempotent: Option<bool>,
    pub key_sent: bool,
    pub headers: Vec<(String, String)>,
    pub elapsed: Option<u64>,
    pub wall_now_ms: Option<u64>,
}

impl OwnedFailure {
    pub fn with<R>(&self, f: impl FnOnce(&Failure<'_>) -> R) -> R {
        let names: Vec<&str> = self.names.iter().map(|n| &**n).collect();
        let headers: Vec<(&str, &str)> = self.headers.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
        let wall =
            if self.wall_now_ms.is_none() && !headers.is_empty() { Some(conv::wall_ms()) } else { self.wall_now_ms };
        let failure = Failure {
            status: self.status,
            grpc_code: self.grpc_code,
            error_names: &names,
            method: self.method.as_deref(),
            idempotent: self.idempotent,
            idempotency_key_sent: self.key_sent,
            headers: &headers,
            elapsed: self.elapsed.map(std::time::Duration::from_nanos),
            wall_now_ms: wall,
            ..Failure::default()
        };
        f(&failure)
    }

    /// Reads an exception (the cause chain and duck-typed HTTP shapes).
    pub fn from_exception(e: &Bound<'_, PyAny>) -> PyResult<OwnedFailure> {
        let mut f = OwnedFailure::default();
        see::see(e, &mut f)?;
        Ok(f)
    }
}

/// The keyword fields of a failure.
#[derive(Default)]
pub struct Fields<'a, 'py> {
    pub status: Option<&'a Bound<'py, PyAny>>,
    pub grpc_code: Option<&'a Bound<'py, PyAny>>,
    pub error_names: Option<&'a Bound<'py, PyAny>>,
    pub method: Option<&'a Bound<'py, PyAny>>,
    pub idempotent: Option<&'a Bound<'py, PyAny>>,
    pub idempotency_key_sent: Option<&'a Bound<'py, PyAny>>,
    pub headers: Option<&'a Bound<'py, PyAny>>,
    pub elapsed: Option<&'a Bound<'py, PyAny>>,
    pub wall_now_ms: Option<&'a Bound<'py, PyAny>>,
}

fn some<'a, 'py>(o: Option<&'a Bound<'py, PyAny>>) -> Option<&'a Bound<'py, PyAny>> {
    o.filter(|x| !x.is_none())
}

fn grpc_value(v: &Bound<'_, PyAny>) -> PyResult<GrpcCode> {
    let py = v.py();
    if v.is_instance_of::<PyString>() {
        let s = to_str(v, "grpc_code")?;
        return GrpcCode::parse(&s)
            .ok_or_else(|| err(py, ErrorCode::InvalidValue, "grpc_code", format!("is not a grpc status code: {s:?}")));
    }
    let n = conv::to_count(v, "grpc_code", 16)?;
    GrpcCode::new(n as u8).ok_or_else(|| err(py, ErrorCode::OutOfRange, "grpc_code", "must be in [0, 16]"))
}

impl OwnedFailure {
    /// Builds a failure from an exception or a dict (`failure`), then applies keyword fields over it.
    pub fn read(failure: Option<&Bound<'_, PyAny>>, k: &Fields<'_, '_>) -> PyResult<OwnedFailure> {
        let mut f = match failure.filter(|x| !x.is_none()) {
            None => OwnedFailure::default(),
            Some(x) if x.is_instance_of::<PyBaseException>() => OwnedFailure::from_exception(x)?,
            Some(x) => match x.downcast::<PyDict>() {
                Ok(d) => {
                    for key in d.keys() {
                        let key = to_str(&key, "failure")?;
                        if ![
                            "status",
                            "grpc_code",
                            "error_names",
                            "method",
                            "idempotent",
                            "idempotency_key_sent",
                            "headers",
                            "elapsed",
                            "wall_now_ms",
                        ]
                        .contains(&key.as_str())
                        {
                            return Err(err(x.py(), ErrorCode::UnknownKey, &key, "is not a failure field"));
                        }
                    }
                    let g = |n: &str| d.get_item(n).ok().flatten();
                    let (a, b, c, dd, e, ff, gg, h, i) = (
                        g("status"),
                        g("grpc_code"),
                        g("error_names"),
                        g("method"),
                        g("idempotent"),
                        g("idempotency_key_sent"),
                        g("headers"),
                        g("elapsed"),
                        g("wall_now_ms"),
                    );
                    let fields = Fields {
                        status: a.as_ref(),
                        grpc_code: b.as_ref(),
                        error_names: c.as_ref(),
                        method: dd.as_ref(),
                        idempotent: e.as_ref(),
                        idempotency_key_sent: ff.as_ref(),
                        headers: gg.as_ref(),
                        elapsed: h.as_ref(),
                        wall_now_ms: i.as_ref(),
                    };
                    return OwnedFailure::read(None, &fields).and_then(|mut f| {
                        f.apply(k)?;
                        Ok(f)
                    });
                }
                Err(_) => {
                    return Err(err(
                        x.py(),
                        ErrorCode::InvalidType,
                        "failure",
                        format!("must be an exception or a dict, got {}", conv::type_name(x)),
                    ))
                }
            },
        };
        f.apply(k)?;
        Ok(f)
    }

    fn apply(&mut self, k: &Fields<'_, '_>) -> PyResult<()> {
        if let Some(s) = some(k.status) {
            self.status = Some(conv::to_count(s, "status", 999)? as u16);
        }
        if let Some(g) = some(k.grpc_code) {
            self.grpc_code = Some(grpc_value(g)?);
        }
        if let Some(n) = some(k.error_names) {
            if !(n.is_instance_of::<PyList>() || n.is_instance_of::<PyTuple>()) {
                return Err(err(n.py(), ErrorCode::InvalidType, "error_names", "must be a list of str"));
            }
            // At most MAX_ITEMS walked, the first MAX_ERROR_NAMES kept (like a cause chain's).
            let mut names: Vec<Name> = Vec::new();
            for x in conv::items(n, "error_names")?.iter().take(limits::MAX_ERROR_NAMES) {
                let name = to_str(x, "error_names")?;
                if name.len() <= limits::MAX_NAME_BYTES {
                    names.push(name.into());
                }
            }
            // Given names come first: they describe the outermost error.
            names.append(&mut self.names);
            self.names = names;
        }
        if let Some(m) = opt_str(k.method, "method")? {
            self.method = Some(m);
        }
        if let Some(i) = opt_bool(k.idempotent, "idempotent")? {
            self.idempotent = Some(i);
        }
        if let Some(s) = opt_bool(k.idempotency_key_sent, "idempotency_key_sent")? {
            self.key_sent = s;
        }
        if let Some(h) = some(k.headers) {
            if h.is_instance_of::<PyString>() {
                return Err(err(h.py(), ErrorCode::InvalidType, "headers", "must be a mapping or a list of pairs"));
            }
            let py = h.py();
            let items = match h.downcast::<PyDict>() {
                Ok(d) => d.items().into_any(),
                Err(_) => match h.getattr("items") {
                    Ok(f) => f.call0().map_err(|e| conv::user_err(py, e, "headers"))?,
                    Err(_) => h.clone(),
                },
            };
            // At most MAX_ITEMS walked, the first MAX_HEADERS kept (like a response's).
            let mut out = Vec::new();
            for pair in conv::items(&items, "headers")?.iter().take(limits::MAX_HEADERS) {
                let t = if pair.is_instance_of::<PyTuple>() || pair.is_instance_of::<PyList>() {
                    conv::items(pair, "headers")?
                } else {
                    Vec::new()
                };
                if t.len() != 2 {
                    return Err(err(py, ErrorCode::InvalidType, "headers", "must hold (name, value) pairs"));
                }
                let (k, v) = (to_str(&t[0], "headers")?, to_str(&t[1], "headers")?);
                // A longer name or value is ignored like a malformed one (retrycore::limits).
                if k.len() <= limits::MAX_NAME_BYTES && v.len() <= limits::MAX_HEADER_VALUE_BYTES {
                    out.push((k, v));
                }
            }
            self.headers = out;
        }
        if let Some(e) = conv::opt_secs(k.elapsed, "elapsed")? {
            self.elapsed = Some(e);
        }
        if let Some(w) = conv::opt_wall(k.wall_now_ms, "wall_now_ms")? {
            self.wall_now_ms = Some(w);
        }
        Ok(())
    }
}

/// The outcome of classifying one failure.
#[pyclass(frozen, name = "Verdict", module = "retrycore._native")]
pub struct Verdict_ {
    /// The category code (`"connection_lost"`, …).
    #[pyo3(get)]
    pub category: &'static str,
    /// `"always"`, `"if_idempotent"` or `"never"`.
    #[pyo3(get)]
    pub retry: &'static str,
    /// Repeating the request is safe (method or declaration).
    #[pyo3(get)]
    pub safe: bool,
    /// The rule allows a retry given `safe`, and the server did not decline.
    #[pyo3(get)]
    pub retryable: bool,
    /// The server declined a retry.
    #[pyo3(get)]
    pub server_declined: bool,
    /// The server's delay in seconds, if any.
    #[pyo3(get)]
    pub server_delay: Option<f64>,
    /// The header the delay came from.
    #[pyo3(get)]
    pub server_delay_source: Option<&'static str>,
    /// The HTTP status seen, if any.
    #[pyo3(get)]
    pub status: Option<u16>,
    /// The classified names, turned into Python strings only when asked for.
    names: Vec<Name>,
}

#[pymethods]
impl Verdict_ {
    /// The error names that were classified (the flattened cause chain).
    #[getter]
    fn error_names(&self) -> Vec<&str> {
        self.names.iter().map(|n| &**n).collect()
    }

    /// The chain holds a refused connection.
    #[getter]
    fn refused(&self) -> bool {
        let names: Vec<&str> = self.names.iter().map(|n| &**n).collect();
        retrycore::classify::is_refused(&names)
    }

    fn __repr__(&self) -> String {
        format!(
            "Verdict(category={:?}, retry={:?}, safe={}, retryable={}, server_delay={:?})",
            self.category,
            self.retry,
            if self.safe { "True" } else { "False" },
            if self.retryable { "True" } else { "False" },
            self.server_delay
        )
    }
}

pub fn verdict(f: OwnedFailure, v: &Verdict) -> Verdict_ {
    Verdict_ {
        category: v.category.code(),
        retry: v.retry.code(),
        safe: v.safe,
        retryable: v.retryable,
        server_declined: v.server_declined,
        server_delay: v.advice.delay_ns().map(to_secs),
        server_delay_source: v.advice.delay.map(|(_, s)| s.name()),
        status: f.status,
        names: f.names,
    }
}

/// Classifies an exception or a failure.
#[pyfunction]
#[pyo3(signature = (failure=None, *, policy=None, status=None, grpc_code=None, error_names=None, method=None,
    idempotent=None, idempotency_key_sent=None, headers=None, elapsed=None, wall_now_ms=None))]
#[allow(clippy::too_many_arguments)]
pub fn classify<'py>(
    py: Python<'py>,
    failure: Option<&Bound<'py, PyAny>>,
    policy: Option<&Bound<'py, PyAny>>,
    status: Option<&Bound<'py, PyAny>>,
    grpc_code: Option<&Bound<'py, PyAny>>,
    error_names: Option<&Bound<'py, PyAny>>,
    method: Option<&Bound<'py, PyAny>>,
    idempotent: Option<&Bound<'py, PyAny>>,
    idempotency_key_sent: Option<&Bound<'py, PyAny>>,
    headers: Option<&Bound<'py, PyAny>>,
    elapsed: Option<&Bound<'py, PyAny>>,
    wall_now_ms: Option<&Bound<'py, PyAny>>,
) -> PyResult<Verdict_> {
    let fields = Fields {
        status,
        grpc_code,
        error_names,
        method,
        idempotent,
        idempotency_key_sent,
        headers,
        elapsed,
        wall_now_ms,
    };
    let _ = py;
    let f = OwnedFailure::read(failure, &fields)?;
    let v = match policy.filter(|p| !p.is_none()) {
        None => f.with(|x| Classifier::default().classify(x)),
        Some(p) => {
            let p = crate::policy::native_policy(p)?;
            f.with(|x| p.get().inner.config().classifier.classify(x))
        }
    };
    Ok(verdict(f, &v))
}

/// Returns the flattened cause chain of names of an exception (what classification reads).
#[pyfunction]
pub fn error_names<'py>(e: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
    if !e.is_instance_of::<PyBaseException>() {
        return Err(err(e.py(), ErrorCode::InvalidType, "exception", "must be an exception"));
    }
    PyList::new(e.py(), OwnedFailure::from_exception(e)?.names.iter().map(|n| &**n))
}

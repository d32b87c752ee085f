//! What the host saw of one failed attempt, read from an exception, a dict
//! or keyword arguments, and the classification verdict.

use crate::conv::{self, err, opt_bool, opt_str, to_secs, to_str, CoreResult, Obj};
use crate::see::{self, Name};
use pyo3::exceptions::PyBaseException;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};
use retrycore::classify::{Classifier, Failure, GrpcCode, HostVerdict, RetryableTrait, Verdict};
use retrycore::limits;
use retrycore::ErrorCode;

/// A failure owning its strings.
#[derive(Default, Debug)]
pub struct OwnedFailure {
    pub status: Option<u16>,
    pub grpc_code: Option<GrpcCode>,
    pub names: Vec<Name>,
    pub method: Option<String>,
    /// `method` was read from the error or the response, not given: a
    /// session's own method wins over it ([`OwnedFailure::with_session`]).
    pub method_seen: bool,
    pub idempotent: Option<bool>,
    pub key_sent: bool,
    pub headers: Vec<(String, String)>,
    pub elapsed: Option<u64>,
    pub wall_now_ms: Option<u64>,
    /// The error's message, clipped by `retrycore::limits::clip_message`.
    pub message: Option<String>,
    pub retryable: Option<RetryableTrait>,
    pub should_retry: Option<bool>,
    /// The caller's predicate's verdict (`retry_if_exception`, `retry_if_result`, `verdict=`).
    pub host: Option<HostVerdict>,
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
            message: self.message.as_deref(),
            retryable: self.retryable,
            should_retry: self.should_retry,
            host: self.host,
        };
        f(&failure)
    }

    /// [`with`](Self::with) for a session's `on_failure`: a method read from the error
    /// or the response yields to the session's (`declared`: `RetrySession::method`).
    pub fn with_session<R>(&self, declared: bool, f: impl FnOnce(&Failure<'_>) -> R) -> R {
        self.with(|x| if self.method_seen && declared { f(&Failure { method: None, ..*x }) } else { f(x) })
    }

    /// Reads an exception (the cause chain and duck-typed HTTP shapes);
    /// its message (`str(e)`) only when `message` is true: when the
    /// classifier has a message rule ([`Classifier::needs_message`]).
    pub fn from_exception(e: &Obj, message: bool) -> PyResult<OwnedFailure> {
        let mut f = OwnedFailure::default();
        see::see(e, &mut f)?;
        if message {
            f.message = message_of(e);
        }
        Ok(f)
    }
}

/// `str(e)`, clipped to the core's `max_message_bytes`; None when `str`
/// raises or gives a lone surrogate (a failure must always get a verdict).
fn message_of(e: &Obj) -> Option<String> {
    let s = e.str().ok()?;
    let s = s.to_cow().ok()?;
    Some(limits::clip_message(&s).to_owned())
}

fn some<'a, 'py>(o: &'a Option<Obj<'py>>) -> Option<&'a Obj<'py>> {
    o.as_ref().filter(|x| !x.is_none())
}

/// A gRPC code given by name or number: the core's reader decides which are
/// codes (17: invalid_value, as in JS).
fn grpc_value(v: &Obj) -> PyResult<GrpcCode> {
    let text = if v.is_instance_of::<PyString>() {
        to_str(v, "grpc_code")?
    } else {
        conv::to_count(v, "grpc_code", u64::MAX)?.to_string()
    };
    GrpcCode::read(&text, "grpc_code").py(v.py())
}

impl OwnedFailure {
    /// Builds a failure from an exception or a dict (`failure`), then
    /// applies keyword fields over it; an exception's message is read only
    /// when `message` is true (a given `message` field is always kept).
    pub fn read(failure: Option<&Obj>, k: &Fields<'_>, message: bool) -> PyResult<OwnedFailure> {
        let mut f = match failure.filter(|x| !x.is_none()) {
            None => OwnedFailure::default(),
            Some(x) if x.is_instance_of::<PyBaseException>() => OwnedFailure::from_exception(x, message)?,
            Some(x) => match x.downcast::<PyDict>() {
                Ok(d) => OwnedFailure::read(None, &Fields::of_dict(d)?, message)?,
                // A response (requests, httpx, aiohttp) is read like a failure, whatever its status.
                Err(_) => see::response(x)
                    .ok_or_else(|| conv::wrong_type(x, "failure", "an exception, a response or a dict"))?,
            },
        };
        f.apply(k)?;
        Ok(f)
    }

    fn apply(&mut self, k: &Fields<'_>) -> PyResult<()> {
        if let Some(s) = some(&k.status) {
            // An int (the type is the host's); which numbers are statuses is the core's rule.
            if !conv::is_int(s) {
                return Err(conv::wrong_type(s, "status", "an int"));
            }
            self.status = Some(retrycore::classify::check_status(conv::int_f64(s)?, "status").py(s.py())?);
        }
        if let Some(g) = some(&k.grpc_code) {
            self.grpc_code = Some(grpc_value(g)?);
        }
        if let Some(n) = some(&k.error_names) {
            // At most MAX_ITEMS walked, the first MAX_ERROR_NAMES kept (like a cause chain's).
            let mut names = Vec::new();
            for x in conv::list_arg(n, "error_names", "a list of str")?.iter().take(limits::MAX_ERROR_NAMES) {
                let name = to_str(x, "error_names")?;
                names.extend((name.len() <= limits::MAX_NAME_BYTES).then(|| Name::from(name)));
            }
            // Given names come first: they describe the outermost error.
            self.names.splice(0..0, names);
        }
        if let Some(m) = opt_str(k.method.as_ref(), "method")? {
            self.method = Some(m);
            self.method_seen = false;
        }
        self.idempotent = opt_bool(k.idempotent.as_ref(), "idempotent")?.or(self.idempotent);
        self.key_sent = opt_bool(k.idempotency_key_sent.as_ref(), "idempotency_key_sent")?.unwrap_or(self.key_sent);
        if let Some(h) = some(&k.headers) {
            self.headers = headers_arg(h)?;
        }
        self.elapsed = conv::opt(k.elapsed.as_ref(), |x| conv::secs(x, "elapsed"))?.or(self.elapsed);
        self.wall_now_ms =
            conv::opt(k.wall_now_ms.as_ref(), |x| conv::wall_arg(x, "wall_now_ms"))?.or(self.wall_now_ms);
        let message = opt_str(k.message.as_ref(), "message")?;
        self.message = message.map(|m| limits::clip_message(&m).to_owned()).or(self.message.take());
        if let Some(r) = some(&k.retryable) {
            // `True`, or `{"throttling": bool}`: read by the core, as every host reads it.
            let v = conv::to_json(r, conv::Mode::Document)?;
            self.retryable = RetryableTrait::from_json(&v, "retryable").py(r.py())?;
        }
        self.should_retry = opt_bool(k.should_retry.as_ref(), "should_retry")?.or(self.should_retry);
        if let Some(v) = some(&k.verdict) {
            // A bool or a str, read by the core (`HostVerdict::from_json`), as every host reads it.
            self.host = HostVerdict::from_json(&conv::to_json(v, conv::Mode::Document)?, "verdict").py(v.py())?;
        }
        Ok(())
    }
}

/// Reads a host predicate's answer as the core reads every host's
/// (`HostVerdict::from_json`): None (no opinion), a bool, or a str — a
/// retry rule, a category or `category:rule`. Any other truthy value is
/// `True` and any other falsy value no opinion (tenacity's predicates
/// answer whatever `bool()` reads).
pub fn host_verdict(v: &Obj, field: &str) -> PyResult<Option<HostVerdict>> {
    let py = v.py();
    let json = if v.is_instance_of::<PyString>() || v.is_none() || v.is_instance_of::<pyo3::types::PyBool>() {
        conv::to_json(v, conv::Mode::Document)?
    } else if v.is_truthy().map_err(|e| conv::user_err(py, e, field))? {
        retrycore::json::Value::Bool(true)
    } else {
        retrycore::json::Value::Null
    };
    HostVerdict::from_json(&json, field).py(py)
}

/// Reads the `headers` field: a mapping or a list of `(name, value)` pairs of
/// `str`. At most MAX_ITEMS are walked and the first MAX_HEADERS kept (like a
/// response's); a longer name or value is ignored like a malformed one.
fn headers_arg(h: &Obj) -> PyResult<Vec<(String, String)>> {
    let py = h.py();
    if h.is_instance_of::<PyString>() {
        return Err(err(py, ErrorCode::InvalidType, "headers", "must be a mapping or a list of pairs"));
    }
    let items = match h.downcast::<PyDict>() {
        Ok(d) => d.items().into_any(),
        Err(_) => match h.getattr("items") {
            Ok(f) => f.call0().map_err(|e| conv::user_err(py, e, "headers"))?,
            Err(_) => h.clone(),
        },
    };
    let mut out = Vec::new();
    for pair in conv::items(&items, "headers")?.iter().take(limits::MAX_HEADERS) {
        let seq = pair.is_instance_of::<PyTuple>() || pair.is_instance_of::<PyList>();
        let t = if seq { conv::items(pair, "headers")? } else { Vec::new() };
        if t.len() != 2 {
            return Err(err(py, ErrorCode::InvalidType, "headers", "must hold (name, value) pairs"));
        }
        let (k, v) = (to_str(&t[0], "headers")?, to_str(&t[1], "headers")?);
        if k.len() <= limits::MAX_NAME_BYTES && v.len() <= limits::MAX_HEADER_VALUE_BYTES {
            out.push((k, v));
        }
    }
    Ok(out)
}

pub fn verdict_of(f: OwnedFailure, v: &Verdict) -> Verdict_ {
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

// The functions and methods this module declares in `src/surface.rs`, expanded by `build.rs`.
include!(concat!(env!("OUT_DIR"), "/failure.rs"));

//! Seeing what a Python exception is (docs/classification-rules.md): the flattened cause chain of
//! names, and an HTTP status, headers and gRPC code taken by duck typing from
//! the shapes common libraries raise — without importing any of them.
//!
//! Per exception, outermost first: its `errno` name (a real positive errno
//! of an `OSError`), a botocore error code, then its class MRO as
//! `module.qualname`, most specific first (`object` skipped); then its
//! `__cause__`, else its `__context__` unless suppressed, else the first
//! exception among its `args` (httpcore re-raises `from None` with the
//! original error as `args[0]`; urllib3's `ProtocolError` holds it in
//! `args[1]`). The method and the response shapes are read at the paths of
//! the core's `PYTHON_READS`. retrycore's own
//! `RetryError` (one whose `exhausted` is true) and `CircuitOpenError` appear
//! as the markers `retrycore:retry_exhausted` and `retrycore:breaker_open`. The tables that
//! read the names live in the core.

use crate::conv::{errors_module, Obj};
use crate::failure::OwnedFailure;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::GILOnceCell;
use pyo3::types::{PyBool, PyDict, PyInt, PyString, PyTuple, PyType};
use retrycore::classify::{GrpcCode, PYTHON_READS};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::{Arc, Mutex};

use retrycore::limits::{MAX_CHAIN, MAX_ERROR_NAMES as MAX_NAMES, MAX_HEADERS, MAX_HEADER_VALUE_BYTES, MAX_NAME_BYTES};
/// Types (and errno values) remembered at most (a cache is cleared when full).
const MAX_TYPES: usize = 4096;

/// One name of a cause chain, shared with the per-class cache (no copy per failure).
pub type Name = Arc<str>;

/// What a class contributes, computed once per class.
#[derive(Default)]
struct TypeInfo {
    names: Vec<Name>,
    /// Where in `names` a `RetryError` subclass has its marker: an instance
    /// shows it only when its `exhausted` is true (the core's `Ending` marked it).
    retry_marker: Option<usize>,
    oserror: bool,
    /// Class-level attributes (properties, methods, descriptors) worth reading: bit `1 << A`.
    class_attrs: u16,
}

/// Declares the attributes read by duck typing: `A::Name` indexes their names in [`ATTRS`].
macro_rules! attrs {
    ($($v:ident = $name:literal),*) => {
        #[derive(Copy, Clone)]
        #[allow(dead_code)] // Request and RequestInfo are read by index (`Exc::get_at`)
        enum A { $($v),* }
        const ATTRS: &[&str] = &[$($name),*];
    };
}

attrs! {
    Response = "response", Status = "status", Code = "code", Headers = "headers", Trailing = "trailing_metadata",
    StatusCode = "status_code", ShouldRetry = "should_retry", RetrySafe = "is_retry_safe",
    Throttling = "is_throttling_error", Request = "request", RequestInfo = "request_info"
}

/// [`ATTRS`] as interned Python strings.
static ATTR_NAMES: GILOnceCell<Vec<Py<PyString>>> = GILOnceCell::new();

/// Hashes the keys of the caches (type addresses, errno values): one multiply.
#[derive(Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        bytes.iter().for_each(|&b| self.write_u64(self.0.rotate_left(8) ^ u64::from(b)));
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (n ^ (n >> 29)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }
}

type Map<K, V> = HashMap<K, V, BuildHasherDefault<KeyHasher>>;

/// The per-process caches: class facts by type address (the type is kept
/// alive, so the address is never reused while cached), and errno names.
#[derive(Default)]
struct Caches {
    types: Map<usize, (Py<PyType>, Arc<TypeInfo>)>,
    /// `errno.errorcode[n]` by `n` (read once per value).
    errnos: Map<i64, Option<Name>>,
}

static CACHES: GILOnceCell<Mutex<Caches>> = GILOnceCell::new();

fn caches(py: Python<'_>) -> std::sync::MutexGuard<'_, Caches> {
    CACHES.get_or_init(py, || Mutex::new(Caches::default())).lock().unwrap_or_else(|p| p.into_inner())
}

struct Known {
    oserror: Py<PyType>,
    ssl_error: Option<Py<PyType>>,
    errorcode: Py<PyDict>,
    retry_error: Py<PyType>,
    open_error: Py<PyType>,
    object: Py<PyType>,
}

static KNOWN: GILOnceCell<Known> = GILOnceCell::new();

fn known(py: Python<'_>) -> PyResult<&Known> {
    KNOWN.get_or_try_init(py, || {
        let errors = errors_module(py)?;
        let ty = |o: Obj<'_>| -> PyResult<Py<PyType>> { Ok(o.downcast_into::<PyType>()?.unbind()) };
        Ok(Known {
            oserror: ty(py.import("builtins")?.getattr("OSError")?)?,
            ssl_error: py.import("ssl").and_then(|m| m.getattr("SSLError")).ok().and_then(|t| ty(t).ok()),
            errorcode: py.import("errno")?.getattr("errorcode")?.downcast_into::<PyDict>()?.unbind(),
            retry_error: ty(errors.getattr("RetryError")?)?,
            open_error: ty(errors.getattr("CircuitOpenError")?)?,
            object: ty(py.import("builtins")?.getattr("object")?)?,
        })
    })
}

fn type_info(py: Python<'_>, t: &Bound<'_, PyType>) -> PyResult<Arc<TypeInfo>> {
    let id = t.as_ptr() as usize;
    if let Some((_, info)) = caches(py).types.get(&id) {
        return Ok(info.clone());
    }
    // Computed without the lock held: reading class attributes runs Python code.
    let k = known(py)?;
    let mut names: Vec<Name> = Vec::new();
    let mut retry_marker = None;
    let mro = t.getattr(intern!(py, "__mro__"))?;
    let mro = mro.downcast::<PyTuple>()?;
    for cls in mro.iter() {
        if cls.is(k.object.bind(py)) {
            continue;
        }
        if cls.is(k.retry_error.bind(py)) {
            retry_marker = Some(names.len());
            names.push(retrycore::classify::RETRY_EXHAUSTED_NAME.into());
            continue;
        }
        if cls.is(k.open_error.bind(py)) {
            names.push(retrycore::classify::BREAKER_OPEN_NAME.into());
            continue;
        }
        let text = |a| cls.getattr(a).ok().and_then(|m| m.extract::<String>().ok());
        match (text(intern!(py, "__module__")), text(intern!(py, "__qualname__"))) {
            (Some(m), Some(q)) => names.push(format!("{m}.{q}").into()),
            (None, Some(q)) => names.push(q.into()),
            _ => {}
        }
    }
    let oserror = t.is_subclass(k.oserror.bind(py)).unwrap_or(false)
        && !k.ssl_error.as_ref().is_some_and(|s| t.is_subclass(s.bind(py)).unwrap_or(false));
    let has = |(i, name): (usize, &&str)| if t.hasattr(*name).unwrap_or(false) { 1 << i } else { 0 };
    let class_attrs = ATTRS.iter().enumerate().map(has).sum();
    let info = Arc::new(TypeInfo { names, retry_marker, oserror, class_attrs });
    // The types a full cache held, and an entry replaced, are dropped after
    // the lock is released: dropping a type can run Python code.
    let mut c = caches(py);
    let old = if c.types.len() >= MAX_TYPES { std::mem::take(&mut c.types) } else { Map::default() };
    let replaced = c.types.insert(id, (t.clone().unbind(), info.clone()));
    drop(c);
    drop((old, replaced));
    Ok(info)
}

/// The name of a real (positive) errno value, from `errno.errorcode`.
fn errno_name(py: Python<'_>, k: &Known, n: i64) -> Option<Name> {
    if let Some(hit) = caches(py).errnos.get(&n) {
        return hit.clone();
    }
    let name = match k.errorcode.bind(py).get_item(n) {
        Ok(Some(v)) => v.downcast::<PyString>().ok().and_then(|s| s.to_cow().ok()).map(|s| Name::from(&*s)),
        _ => None,
    };
    let mut c = caches(py);
    if c.errnos.len() >= MAX_TYPES {
        c.errnos.clear();
    }
    c.errnos.insert(n, name.clone());
    name
}

/// One exception of a chain: its class facts and its own attributes
/// (`__dict__`; None when it has none to offer).
struct Exc<'a, 'py> {
    e: &'a Obj<'py>,
    dict: Option<Bound<'py, PyDict>>,
    info: &'a TypeInfo,
}

impl<'py> Exc<'_, 'py> {
    /// Whether it may have any attribute worth reading.
    fn any(&self) -> bool {
        self.dict.is_some() || self.info.class_attrs != 0
    }

    /// The attribute `a` if the instance or its class has it and it is not None, without raising.
    fn get(&self, a: A) -> Option<Obj<'py>> {
        self.get_at(a as usize)
    }

    /// [`get`](Self::get) of `ATTRS[i]`.
    fn get_at(&self, i: usize) -> Option<Obj<'py>> {
        let py = self.e.py();
        let names = ATTR_NAMES.get_or_init(py, || ATTRS.iter().map(|n| PyString::intern(py, n).unbind()).collect());
        let name = names[i].bind(py);
        if let Some(Ok(Some(v))) = self.dict.as_ref().map(|d| d.get_item(name)) {
            return (!v.is_none()).then_some(v);
        }
        (self.info.class_attrs & (1 << i) != 0).then(|| self.e.getattr(name).ok()).flatten().filter(|v| !v.is_none())
    }

    /// The attribute `a` when it is a real `bool` (a property that raises, or any other type, is not read).
    fn flag(&self, a: A) -> Option<bool> {
        self.get(a).and_then(|v| v.downcast::<PyBool>().ok().map(|b| b.is_true()))
    }

    /// The request's method, at the first of the core's paths the error has
    /// (`e.request.method`, aiohttp's `e.request_info.method`; each path's
    /// first attribute is one of `ATTRS`).
    fn method(&self) -> Option<String> {
        PYTHON_READS.error_method.iter().find_map(|p| {
            let (head, rest) = p.split_once('.').unwrap_or((p, ""));
            text_at(&self.get_at(ATTRS.iter().position(|a| *a == head)?)?, rest)
        })
    }
}

/// The attribute at a dotted `path` of `o` ("" is `o` itself), None when a
/// step is missing, raises or is None.
fn at<'py>(o: &Obj<'py>, path: &str) -> Option<Obj<'py>> {
    let mut steps = path.split('.').filter(|s| !s.is_empty());
    steps.try_fold(o.clone(), |v, step| v.getattr(step).ok().filter(|x| !x.is_none()))
}

/// The `str` at a dotted path of `o`.
fn text_at(o: &Obj, path: &str) -> Option<String> {
    at(o, path)?.downcast::<PyString>().ok()?.to_cow().ok().map(|c| c.into_owned())
}

/// An `int` (not a bool) in the u16 range.
fn u16_of(v: &Obj) -> Option<u16> {
    crate::conv::is_int(v).then(|| v.extract().ok()).flatten()
}

/// An HTTP status found on an attribute: the core's range (100–999, as in
/// JS); any other int is not an HTTP status.
fn status_of(v: &Obj) -> Option<u16> {
    u16_of(v).and_then(|n| retrycore::classify::seen_status(n.into()))
}

fn header_text(v: &Obj) -> Option<String> {
    // Longer than any header kept: not copied at all.
    if v.len().is_ok_and(|n| n > MAX_HEADER_VALUE_BYTES)
        && (v.is_instance_of::<PyString>() || v.is_instance_of::<pyo3::types::PyBytes>())
    {
        return None;
    }
    match v.downcast::<PyString>() {
        Ok(s) => s.to_cow().ok().map(|c| c.into_owned()),
        Err(_) => v.extract::<&[u8]>().ok().map(|b| b.iter().map(|&c| c as char).collect()),
    }
}

/// Reads headers from a mapping (`items()`) or an iterable of pairs.
pub fn read_headers(h: &Obj, out: &mut Vec<(String, String)>) {
    let items = h.getattr("items").and_then(|f| f.call0()).unwrap_or_else(|_| h.clone());
    let Ok(iter) = items.try_iter() else { return };
    for pair in iter.take(MAX_HEADERS) {
        let Ok(pair) = pair else { break };
        let (Ok(k), Ok(v)) = (pair.get_item(0), pair.get_item(1)) else { continue };
        // grpc.aio's `Metadata.items()` pairs each key with the list of its values: the first is read.
        let v = v.downcast::<pyo3::types::PyList>().ok().and_then(|l| l.get_item(0).ok()).unwrap_or(v);
        match (header_text(&k), header_text(&v)) {
            (Some(k), Some(v)) if k.len() <= MAX_NAME_BYTES && v.len() <= MAX_HEADER_VALUE_BYTES => out.push((k, v)),
            _ => {}
        }
    }
}

fn grpc_of(v: &Obj) -> Option<GrpcCode> {
    // An int, or grpc.StatusCode: value = (int, str), name = "UNAVAILABLE".
    let value = || v.getattr("value").ok()?.downcast_into::<PyTuple>().ok()?.get_item(0).ok();
    match u16_of(v).or_else(|| value().and_then(|x| u16_of(&x))) {
        Some(n) => u8::try_from(n).ok().and_then(GrpcCode::new),
        None => v.getattr("name").ok()?.extract::<String>().ok().and_then(|n| GrpcCode::parse(&n)),
    }
}

/// What a response says, read at the first of the core's response shapes
/// (`PYTHON_READS.responses`) that `v` has: its status, headers and method;
/// None when `v` is no response.
pub fn response(v: &Obj) -> Option<OwnedFailure> {
    let (shape, status) = PYTHON_READS.responses.iter().find_map(|r| {
        let guarded = r.guard.is_empty() || at(v, r.guard).is_some();
        guarded.then(|| Some((r, status_of(&at(v, r.status)?)?))).flatten()
    })?;
    let mut f = OwnedFailure { status: Some(status), ..Default::default() };
    if let Some(h) = at(v, shape.headers) {
        read_headers(&h, &mut f.headers);
    }
    f.method = text_at(v, shape.method).filter(|_| !shape.method.is_empty());
    f.method_seen = f.method.is_some();
    Some(f)
}

/// The failure a returned value stands for: a response ([`response`])
/// whose status is not 2xx; None for anything else.
pub fn response_failure(v: &Obj) -> Option<OwnedFailure> {
    use pyo3::types::{PyBytes, PyFloat, PyList};
    macro_rules! exact {
        ($($t:ty),*) => { $(v.is_exact_instance_of::<$t>())||* };
    }
    // Plain values are not responses: no attribute lookup for them.
    if v.is_none() || exact!(PyString, PyInt, PyFloat, PyBool, PyDict, PyList, PyTuple, PyBytes) {
        return None;
    }
    response(v).filter(|f| !f.status.is_some_and(|s| (200..300).contains(&s)))
}

/// The error's own retry flags, from the first error in the chain that
/// has them: Stripe's `should_retry` (stripe-python `APIConnectionError`)
/// and smithy-python's `is_retry_safe` / `is_throttling_error`
/// (`CallError`, read as Smithy's `@retryable` trait and its `throttling`).
fn read_retry_flags(x: &Exc<'_, '_>, f: &mut OwnedFailure) {
    if f.should_retry.is_none() {
        f.should_retry = x.flag(A::ShouldRetry);
    }
    if f.retryable.is_none() && x.flag(A::RetrySafe) == Some(true) {
        let throttling = x.flag(A::Throttling).unwrap_or(false);
        f.retryable = Some(retrycore::classify::RetryableTrait { throttling });
    }
}

/// `e.response`: botocore's dict (its `Error.Code` is a name, its
/// `ResponseMetadata` the status and headers) or a response object
/// (requests, httpx: `status_code` or `status`, and `headers`). True when
/// it gave the status.
fn read_response(resp: &Obj, have_http: bool, f: &mut OwnedFailure) -> bool {
    let py = resp.py();
    let Ok(d) = resp.downcast::<PyDict>() else {
        let status = [intern!(py, "status_code"), intern!(py, "status")];
        let Some(s) = (!have_http).then(|| status.iter().find_map(|a| status_of(&resp.getattr(a).ok()?))).flatten()
        else {
            return false;
        };
        f.status = Some(s);
        if let Ok(h) = resp.getattr(intern!(py, "headers")) {
            read_headers(&h, &mut f.headers);
        }
        return true;
    };
    if let Ok(Some(err)) = d.get_item(intern!(py, "Error")) {
        let code = err.get_item(intern!(py, "Code")).ok().and_then(|c| c.extract::<String>().ok());
        f.names.extend(code.filter(|c| !c.is_empty()).map(Name::from));
    }
    let Some(meta) = (!have_http).then(|| d.get_item(intern!(py, "ResponseMetadata")).ok().flatten()).flatten() else {
        return false;
    };
    let status = meta.get_item(intern!(py, "HTTPStatusCode")).ok().and_then(|s| status_of(&s));
    f.status = status.or(f.status);
    if let Ok(h) = meta.get_item(intern!(py, "HTTPHeaders")) {
        read_headers(&h, &mut f.headers);
    }
    status.is_some()
}

/// The exception's own HTTP shape: `status` or `status_code` (aiohttp and
/// others), urllib's `code` (100–599) with `headers` (or `hdrs`) beside it,
/// else gRPC's `code()` and `trailing_metadata()`. True when it gave a status
/// or a gRPC code.
fn read_http(x: &Exc<'_, '_>, f: &mut OwnedFailure) -> bool {
    let status =
        x.get(A::Status).and_then(|s| status_of(&s)).or_else(|| x.get(A::StatusCode).and_then(|s| status_of(&s)));
    // `code` only when no status was found: aiohttp's `ClientResponseError.code`
    // is a deprecated property that warns when read.
    let code = || if status.is_none() { x.get(A::Code) } else { None };
    let hdrs = || x.dict.as_ref().and_then(|d| d.get_item(intern!(x.e.py(), "hdrs")).ok().flatten());
    let headers = x.get(A::Headers).or_else(|| hdrs().filter(|h| !h.is_none()));
    let status = status.or_else(|| {
        code().filter(|_| headers.is_some()).and_then(|c| status_of(&c)).filter(|s| (100..=599).contains(s))
    });
    if let Some(s) = status {
        f.status = Some(s);
        if let Some(h) = &headers {
            read_headers(h, &mut f.headers);
        }
        return true;
    }
    let Some(g) = code().filter(|c| c.is_callable()).and_then(|c| c.call0().ok()).and_then(|v| grpc_of(&v)) else {
        return false;
    };
    f.grpc_code = Some(g);
    if let Some(md) = x.get(A::Trailing).and_then(|tm| tm.call0().ok()).filter(|md| !md.is_none()) {
        read_headers(&md, &mut f.headers);
    }
    true
}

/// Fills `f` from an exception and its causes.
pub fn see(e: &Obj, f: &mut OwnedFailure) -> PyResult<()> {
    let py = e.py();
    let k = known(py)?;
    let mut seen = [0usize; MAX_CHAIN];
    let mut cur = Some(e.clone());
    let mut have_http = f.status.is_some() || f.grpc_code.is_some();
    for n_seen in 0..MAX_CHAIN {
        let Some(ex) = cur.take() else { break };
        let id = ex.as_ptr() as usize;
        if seen[..n_seen].contains(&id) {
            break;
        }
        seen[n_seen] = id;
        // A class whose attributes cannot be read contributes no names.
        let info = type_info(py, &ex.get_type()).unwrap_or_default();
        let dict = ex.getattr(intern!(py, "__dict__")).ok().and_then(|d| d.downcast_into::<PyDict>().ok());
        let x = Exc { e: &ex, dict: dict.filter(|d| !d.is_empty()), info: &info };
        // The code: a real errno name.
        if info.oserror {
            let errno = ex.getattr(intern!(py, "errno")).ok().and_then(|v| v.extract::<i64>().ok());
            f.names.extend(errno.filter(|&n| n > 0).and_then(|n| errno_name(py, k, n)));
        }
        // HTTP status, headers, gRPC code: the outermost error that has them.
        if let Some(resp) = x.get(A::Response) {
            have_http |= read_response(&resp, have_http, f);
        }
        if x.any() {
            have_http = have_http || read_http(&x, f);
            read_retry_flags(&x, f);
            if f.method.is_none() {
                f.method = x.method();
                f.method_seen = f.method.is_some();
            }
        }
        let room = MAX_NAMES.saturating_sub(f.names.len());
        // A RetryError not marked exhausted is transparent: its cause decides (as in JS).
        let unmarked = info
            .retry_marker
            .filter(|_| !ex.getattr(intern!(py, "exhausted")).and_then(|v| v.is_truthy()).unwrap_or(true));
        let kept = info.names.iter().enumerate().filter(|(i, _)| Some(*i) != unmarked).map(|(_, n)| n);
        f.names.extend(kept.take(room).cloned());
        // The cause, else the context unless suppressed.
        let suppressed =
            || ex.getattr(intern!(py, "__suppress_context__")).and_then(|s| s.is_truthy()).unwrap_or(false);
        let context =
            || (!suppressed()).then(|| ex.getattr(intern!(py, "__context__")).ok().filter(|c| !c.is_none())).flatten();
        // Else the exception a wrapper keeps among its args (httpcore, urllib3).
        let args = || ex.getattr(intern!(py, "args")).ok()?.downcast_into::<PyTuple>().ok();
        let arg = || args()?.iter().find(|a| a.is_instance_of::<pyo3::exceptions::PyBaseException>());
        cur = ex.getattr(intern!(py, "__cause__")).ok().filter(|c| !c.is_none()).or_else(context).or_else(arg);
    }
    f.names.truncate(MAX_NAMES);
    Ok(())
}

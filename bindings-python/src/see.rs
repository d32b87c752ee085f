//! Seeing what a Python exception is (docs/classification-rules.md): the flattened cause chain of
//! names, and an HTTP status, headers and gRPC code taken by duck typing from
//! the shapes common libraries raise — without importing any of them.
//!
//! Per exception, outermost first: its `errno` name (a real positive errno
//! of an `OSError`), a botocore error code, then its class MRO as
//! `module.qualname`, most specific first (`object` skipped); then its
//! `__cause__`, else its `__context__` unless suppressed. retrycore's own
//! `RetryError` (one whose `exhausted` is true) and `CircuitOpenError` appear
//! as the markers `retrycore:retry_exhausted` and `retrycore:breaker_open`. The tables that
//! read the names live in the core.

use crate::conv::{errors_module, Obj};
use crate::failure::OwnedFailure;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::GILOnceCell;
use pyo3::types::{PyBool, PyDict, PyInt, PyString, PyTuple, PyType};
use retrycore::classify::GrpcCode;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::{Arc, Mutex};

use retrycore::limits::{MAX_CHAIN, MAX_ERROR_NAMES as MAX_NAMES, MAX_HEADERS, MAX_HEADER_VALUE_BYTES, MAX_NAME_BYTES};
/// Types (and errno values) remembered at most (a cache is cleared when full).
const MAX_TYPES: usize = 4096;

/// One name of a cause chain, shared with the per-class cache (no copy per failure).
pub type Name = Arc<str>;

/// What a class contributes, computed once per class.
struct TypeInfo {
    names: Vec<Name>,
    /// Where in `names` a `RetryError` subclass has its marker: an instance
    /// shows it only when its `exhausted` is true (the core's `Ending` marked it).
    retry_marker: Option<usize>,
    oserror: bool,
    /// Class-level attributes (properties, methods, descriptors) worth reading.
    class_attrs: u16,
}

const A_RESPONSE: u16 = 1;
const A_STATUS: u16 = 2;
const A_CODE: u16 = 4;
const A_HEADERS: u16 = 8;
const A_TRAILING: u16 = 16;
const A_STATUS_CODE: u16 = 32;
const A_SHOULD_RETRY: u16 = 64;
const A_RETRY_SAFE: u16 = 128;
const A_THROTTLING: u16 = 256;
const ATTRS: [(&str, u16); 9] = [
    ("response", A_RESPONSE),
    ("status", A_STATUS),
    ("code", A_CODE),
    ("headers", A_HEADERS),
    ("trailing_metadata", A_TRAILING),
    ("status_code", A_STATUS_CODE),
    ("should_retry", A_SHOULD_RETRY),
    ("is_retry_safe", A_RETRY_SAFE),
    ("is_throttling_error", A_THROTTLING),
];

/// Hashes the keys of the caches (type addresses, errno values): one multiply.
#[derive(Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (n ^ (n >> 29)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }
    fn write_i64(&mut self, n: i64) {
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
        let module = cls.getattr(intern!(py, "__module__")).ok().and_then(|m| m.extract::<String>().ok());
        let qual = cls.getattr(intern!(py, "__qualname__")).ok().and_then(|m| m.extract::<String>().ok());
        match (module, qual) {
            (Some(m), Some(q)) => names.push(format!("{m}.{q}").into()),
            (None, Some(q)) => names.push(q.into()),
            _ => {}
        }
    }
    let oserror = t.is_subclass(k.oserror.bind(py)).unwrap_or(false)
        && !k.ssl_error.as_ref().is_some_and(|s| t.is_subclass(s.bind(py)).unwrap_or(false));
    let mut class_attrs = 0;
    for (name, bit) in ATTRS {
        if t.hasattr(name).unwrap_or(false) {
            class_attrs |= bit;
        }
    }
    let info = Arc::new(TypeInfo { names, retry_marker, oserror, class_attrs });
    let entry = (t.clone().unbind(), info.clone());
    // The types a full cache held, and an entry replaced, are dropped after
    // the lock is released: dropping a type can run Python code.
    let (old, replaced) = {
        let mut c = caches(py);
        let old = if c.types.len() >= MAX_TYPES { std::mem::take(&mut c.types) } else { Map::default() };
        let replaced = c.types.insert(id, entry);
        (old, replaced)
    };
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

/// Reads an attribute if the instance or its class has it, without raising.
fn attr<'py>(
    e: &Obj<'py>,
    dict: Option<&Bound<'py, PyDict>>,
    info: &TypeInfo,
    name: &Bound<'py, PyString>,
    bit: u16,
) -> Option<Obj<'py>> {
    if let Some(d) = dict {
        if let Ok(Some(v)) = d.get_item(name) {
            return (!v.is_none()).then_some(v);
        }
    }
    if info.class_attrs & bit != 0 {
        return e.getattr(name).ok().filter(|v| !v.is_none());
    }
    None
}

fn u16_of(v: &Obj) -> Option<u16> {
    if v.is_instance_of::<PyBool>() || !v.is_instance_of::<PyInt>() {
        return None;
    }
    v.extract::<u16>().ok()
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
    if let Ok(s) = v.downcast::<PyString>() {
        return s.to_cow().ok().map(|c| c.into_owned());
    }
    if let Ok(b) = v.extract::<&[u8]>() {
        return Some(b.iter().map(|&c| c as char).collect());
    }
    None
}

/// Reads headers from a mapping (`items()`) or an iterable of pairs.
pub fn read_headers(h: &Obj, out: &mut Vec<(String, String)>) {
    let items = match h.getattr("items").and_then(|f| f.call0()) {
        Ok(it) => it,
        Err(_) => h.clone(),
    };
    let Ok(iter) = items.try_iter() else { return };
    for pair in iter.take(MAX_HEADERS) {
        let Ok(pair) = pair else { break };
        let (Ok(k), Ok(v)) = (pair.get_item(0), pair.get_item(1)) else { continue };
        match (header_text(&k), header_text(&v)) {
            (Some(k), Some(v)) if k.len() <= MAX_NAME_BYTES && v.len() <= MAX_HEADER_VALUE_BYTES => out.push((k, v)),
            _ => {}
        }
    }
}

fn grpc_of(v: &Obj) -> Option<GrpcCode> {
    if let Some(n) = u16_of(v) {
        return u8::try_from(n).ok().and_then(GrpcCode::new);
    }
    // grpc.StatusCode: value = (int, str), name = "UNAVAILABLE".
    if let Ok(val) = v.getattr("value") {
        if let Ok(t) = val.downcast::<PyTuple>() {
            if let Some(n) = t.get_item(0).ok().and_then(|x| u16_of(&x)) {
                return u8::try_from(n).ok().and_then(GrpcCode::new);
            }
        }
    }
    v.getattr("name").ok().and_then(|n| n.extract::<String>().ok()).and_then(|n| GrpcCode::parse(&n))
}

/// The failure a returned value stands for: a response (an object with an
/// int `status_code`, as requests and httpx return) whose status is not
/// 2xx, with its headers; None for anything else.
pub fn response_failure(v: &Obj) -> Option<OwnedFailure> {
    use pyo3::types::{PyBytes, PyFloat, PyList};
    // Plain values are not responses: no attribute lookup for them.
    if v.is_none()
        || v.is_exact_instance_of::<PyString>()
        || v.is_exact_instance_of::<PyInt>()
        || v.is_exact_instance_of::<PyFloat>()
        || v.is_exact_instance_of::<PyBool>()
        || v.is_exact_instance_of::<PyDict>()
        || v.is_exact_instance_of::<PyList>()
        || v.is_exact_instance_of::<PyTuple>()
        || v.is_exact_instance_of::<PyBytes>()
    {
        return None;
    }
    let py = v.py();
    let status = v.getattr(intern!(py, "status_code")).ok().and_then(|s| status_of(&s))?;
    if (200..300).contains(&status) {
        return None;
    }
    let mut f = OwnedFailure { status: Some(status), ..Default::default() };
    if let Some(h) = v.getattr(intern!(py, "headers")).ok().filter(|h| !h.is_none()) {
        read_headers(&h, &mut f.headers);
    }
    Some(f)
}

/// An attribute's value when it is a real `bool` (a property that raises,
/// or any other type, is not read).
fn flag<'py>(
    e: &Obj<'py>,
    dict: Option<&Bound<'py, PyDict>>,
    info: &TypeInfo,
    name: &Bound<'py, PyString>,
    bit: u16,
) -> Option<bool> {
    attr(e, dict, info, name, bit).and_then(|v| v.downcast::<PyBool>().ok().map(|b| b.is_true()))
}

/// The error's own retry flags, from the first error in the chain that
/// has them: Stripe's `should_retry` (stripe-python `APIConnectionError`)
/// and smithy-python's `is_retry_safe` / `is_throttling_error`
/// (`CallError`, read as Smithy's `@retryable` trait and its `throttling`).
fn read_retry_flags<'py>(e: &Obj<'py>, dict: Option<&Bound<'py, PyDict>>, info: &TypeInfo, f: &mut OwnedFailure) {
    let py = e.py();
    if f.should_retry.is_none() {
        f.should_retry = flag(e, dict, info, intern!(py, "should_retry"), A_SHOULD_RETRY);
    }
    if f.retryable.is_none() && flag(e, dict, info, intern!(py, "is_retry_safe"), A_RETRY_SAFE) == Some(true) {
        let throttling = flag(e, dict, info, intern!(py, "is_throttling_error"), A_THROTTLING).unwrap_or(false);
        f.retryable = Some(retrycore::classify::RetryableTrait { throttling });
    }
}

/// Fills `f` from an exception and its causes.
pub fn see(e: &Obj, f: &mut OwnedFailure) -> PyResult<()> {
    let py = e.py();
    let k = known(py)?;
    let mut seen = [0usize; MAX_CHAIN];
    let mut n_seen = 0;
    let mut cur = Some(e.clone());
    let mut have_http = f.status.is_some() || f.grpc_code.is_some();
    while let Some(ex) = cur.take() {
        let id = ex.as_ptr() as usize;
        if n_seen >= MAX_CHAIN || seen[..n_seen].contains(&id) {
            break;
        }
        seen[n_seen] = id;
        n_seen += 1;
        // A class whose attributes cannot be read contributes no names.
        let info = type_info(py, &ex.get_type()).unwrap_or_else(|_| {
            Arc::new(TypeInfo { names: Vec::new(), retry_marker: None, oserror: false, class_attrs: 0 })
        });
        // The instance's own attributes (an empty dict has none to offer).
        let dict = ex
            .getattr(intern!(py, "__dict__"))
            .ok()
            .and_then(|d| d.downcast_into::<PyDict>().ok())
            .filter(|d| !d.is_empty());
        let dict = dict.as_ref();
        // The code: a real errno name.
        if info.oserror {
            let errno = ex.getattr(intern!(py, "errno")).ok().and_then(|v| v.extract::<i64>().ok());
            if let Some(name) = errno.filter(|&n| n > 0).and_then(|n| errno_name(py, k, n)) {
                f.names.push(name);
            }
        }
        // HTTP status, headers, gRPC code: the outermost error that has them.
        if let Some(resp) = attr(&ex, dict, &info, intern!(py, "response"), A_RESPONSE) {
            if let Ok(d) = resp.downcast::<PyDict>() {
                // botocore ClientError: a dict.
                if let Ok(Some(err)) = d.get_item(intern!(py, "Error")) {
                    let code = err.get_item(intern!(py, "Code")).ok().and_then(|c| c.extract::<String>().ok());
                    if let Some(code) = code.filter(|c| !c.is_empty()) {
                        f.names.push(code.into());
                    }
                }
                if !have_http {
                    if let Ok(Some(meta)) = d.get_item(intern!(py, "ResponseMetadata")) {
                        if let Some(s) = meta.get_item(intern!(py, "HTTPStatusCode")).ok().and_then(|s| status_of(&s)) {
                            f.status = Some(s);
                            have_http = true;
                        }
                        if let Ok(h) = meta.get_item(intern!(py, "HTTPHeaders")) {
                            read_headers(&h, &mut f.headers);
                        }
                    }
                }
            } else if !have_http {
                let status = resp
                    .getattr(intern!(py, "status_code"))
                    .ok()
                    .and_then(|s| status_of(&s))
                    .or_else(|| resp.getattr(intern!(py, "status")).ok().and_then(|s| status_of(&s)));
                if let Some(s) = status {
                    f.status = Some(s);
                    have_http = true;
                    if let Ok(h) = resp.getattr(intern!(py, "headers")) {
                        read_headers(&h, &mut f.headers);
                    }
                }
            }
        }
        if !have_http && (dict.is_some() || info.class_attrs != 0) {
            let status =
                attr(&ex, dict, &info, intern!(py, "status"), A_STATUS).and_then(|s| status_of(&s)).or_else(|| {
                    attr(&ex, dict, &info, intern!(py, "status_code"), A_STATUS_CODE).and_then(|s| status_of(&s))
                });
            let code = attr(&ex, dict, &info, intern!(py, "code"), A_CODE);
            let headers = attr(&ex, dict, &info, intern!(py, "headers"), A_HEADERS)
                .or_else(|| dict.and_then(|d| d.get_item(intern!(py, "hdrs")).ok().flatten()).filter(|h| !h.is_none()));
            // urllib.error.HTTPError: `.code` with headers beside it.
            let status = status.or_else(|| {
                code.as_ref().filter(|_| headers.is_some()).and_then(status_of).filter(|s| (100..=599).contains(s))
            });
            if let Some(s) = status {
                f.status = Some(s);
                have_http = true;
                if let Some(h) = &headers {
                    read_headers(h, &mut f.headers);
                }
            } else if let Some(c) = code.filter(|c| c.is_callable()) {
                // gRPC: `e.code()` and `e.trailing_metadata()`.
                if let Some(g) = c.call0().ok().and_then(|v| grpc_of(&v)) {
                    f.grpc_code = Some(g);
                    have_http = true;
                    let tm = attr(&ex, dict, &info, intern!(py, "trailing_metadata"), A_TRAILING);
                    if let Some(md) = tm.and_then(|tm| tm.call0().ok()).filter(|md| !md.is_none()) {
                        read_headers(&md, &mut f.headers);
                    }
                }
            }
        }
        if dict.is_some() || info.class_attrs != 0 {
            read_retry_flags(&ex, dict, &info, f);
        }
        let room = MAX_NAMES.saturating_sub(f.names.len());
        // A RetryError not marked exhausted is transparent: its cause decides (as in JS).
        let unmarked = info
            .retry_marker
            .filter(|_| !ex.getattr(intern!(py, "exhausted")).and_then(|v| v.is_truthy()).unwrap_or(true));
        let kept = info.names.iter().enumerate().filter(|(i, _)| Some(*i) != unmarked).map(|(_, n)| n);
        f.names.extend(kept.take(room).cloned());
        // The cause, else the context unless suppressed.
        let cause = ex.getattr(intern!(py, "__cause__")).ok().filter(|c| !c.is_none());
        cur = match cause {
            Some(c) => Some(c),
            None => {
                let suppressed =
                    ex.getattr(intern!(py, "__suppress_context__")).and_then(|s| s.is_truthy()).unwrap_or(false);
                if suppressed {
                    None
                } else {
                    ex.getattr(intern!(py, "__context__")).ok().filter(|c| !c.is_none())
                }
            }
        };
    }
    f.names.truncate(MAX_NAMES);
    Ok(())
}

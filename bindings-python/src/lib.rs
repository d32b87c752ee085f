//! `retrycore._native`: the Python binding of retrycore.
//!
//! It translates and never re-decides: Python values become the core's
//! types (float seconds become nanoseconds, rounding half to even), core
//! errors become exceptions with the core's `.code`, and the retry loop owns
//! only what the core leaves to the host — the clock, the sleep, calling the
//! function and seeing its exception. The pure-Python package `retrycore`
//! wraps this module with decorators, async support and typing.
#![forbid(unsafe_code)]

/// The docstring `python/retrycore/_native.pyi` gives the Python item
/// `$name` (`"Class"`, `"Class.member"`, `"function"`), which `build.rs`
/// writes to `$OUT_DIR/doc/`: `#[doc = stub_doc!("DeadLetter")]`.
macro_rules! stub_doc {
    ($name:literal) => {
        include_str!(concat!(env!("OUT_DIR"), "/doc/", $name, ".txt"))
    };
}

mod breaker;
mod conv;
mod entropy;
mod failure;
mod idem;
mod limiter;
mod locks;
mod misc;
mod policy;
mod saga;
mod see;
// `src/surface.rs` holds the declarations `build.rs` expands; the modules include the expansion.

use crate::conv::Obj;
use pyo3::prelude::*;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    conv::init_clock(m.py())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(idem::derive_key, m)?)?;
    m.add_function(wrap_pyfunction!(policy::run, m)?)?;
    m.add_function(wrap_pyfunction!(policy::mark, m)?)?;
    m.add_function(wrap_pyfunction!(policy::current, m)?)?;
    m.add_function(wrap_pyfunction!(noop, m)?)?;
    m.add_function(wrap_pyfunction!(noop_obj, m)?)?;
    m.add("_Fallback", m.py().get_type::<policy::Fallback>())?;
    add_declared(m)
}

// `add_declared`: the functions and classes declared in `src/surface.rs`, expanded by `build.rs`.
include!(concat!(env!("OUT_DIR"), "/exports.rs"));

#[doc = stub_doc!("noop")]
#[pyfunction]
#[pyo3(signature = (a=None, b=None))]
fn noop(a: Option<&Obj>, b: Option<&Obj>) {
    let _ = (a, b);
}

#[doc = stub_doc!("noop_obj")]
#[pyfunction]
fn noop_obj(a: Obj<'_>) -> Obj<'_> {
    a
}

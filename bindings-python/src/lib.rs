//! `retrycore._native`: the Python binding of retrycore.
//!
//! It translates and never re-decides: Python values become the core's
//! types (float seconds become nanoseconds, rounding half to even), core
//! errors become exceptions with the core's `.code`, and the retry loop owns
//! only what the core leaves to the host — the clock, the sleep, calling the
//! function and seeing its exception. The pure-Python package `retrycore`
//! wraps this module with decorators, async support and typing.
#![forbid(unsafe_code)]

#[macro_use]
mod macros;

mod breaker;
mod conv;
mod entropy;
mod failure;
mod idem;
mod locks;
mod misc;
mod policy;
mod see;

use crate::conv::Obj;
use pyo3::prelude::*;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    conv::init_clock(m.py())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<policy::Policy>()?;
    m.add_class::<policy::Session>()?;
    m.add_class::<policy::Runner>()?;
    m.add_class::<policy::Proceed>()?;
    m.add_class::<policy::Reject>()?;
    m.add_class::<policy::Retry>()?;
    m.add_class::<policy::GiveUp>()?;
    m.add_class::<policy::RetryEvent>()?;
    m.add_class::<policy::ScheduleRow>()?;
    m.add_class::<breaker::Breaker>()?;
    m.add_class::<breaker::PyPermit>()?;
    m.add_class::<breaker::Acquired>()?;
    m.add_class::<breaker::PyTransition>()?;
    m.add_class::<breaker::PyBudget>()?;
    m.add_class::<breaker::PyRefusal>()?;
    m.add_class::<failure::Verdict_>()?;
    m.add_class::<misc::ServerAdvice>()?;
    m.add_class::<misc::Finding>()?;
    m.add_class::<misc::Random>()?;
    m.add_class::<idem::RecordConfig>()?;
    m.add_class::<idem::PyDeadLetter>()?;
    m.add_function(wrap_pyfunction!(failure::classify, m)?)?;
    m.add_function(wrap_pyfunction!(failure::error_names, m)?)?;
    m.add_function(wrap_pyfunction!(misc::parse_duration, m)?)?;
    m.add_function(wrap_pyfunction!(misc::format_duration, m)?)?;
    m.add_function(wrap_pyfunction!(misc::server_advice, m)?)?;
    m.add_function(wrap_pyfunction!(misc::parse_http_date, m)?)?;
    m.add_function(wrap_pyfunction!(misc::lint, m)?)?;
    m.add_function(wrap_pyfunction!(misc::host_tables, m)?)?;
    m.add_function(wrap_pyfunction!(idem::derive_key, m)?)?;
    m.add_function(wrap_pyfunction!(idem::validate_key, m)?)?;
    m.add_function(wrap_pyfunction!(idem::scoped_key, m)?)?;
    m.add_function(wrap_pyfunction!(idem::storage_key, m)?)?;
    m.add_function(wrap_pyfunction!(idem::mint_key, m)?)?;
    m.add_function(wrap_pyfunction!(idem::format_header, m)?)?;
    m.add_function(wrap_pyfunction!(idem::parse_header, m)?)?;
    m.add_function(wrap_pyfunction!(idem::canonicalize, m)?)?;
    m.add_function(wrap_pyfunction!(idem::canonicalize_json, m)?)?;
    m.add_function(wrap_pyfunction!(idem::format_number, m)?)?;
    m.add_function(wrap_pyfunction!(idem::fingerprint, m)?)?;
    m.add_function(wrap_pyfunction!(idem::fingerprint_json, m)?)?;
    m.add_function(wrap_pyfunction!(idem::decide, m)?)?;
    m.add_function(wrap_pyfunction!(idem::complete, m)?)?;
    m.add_function(wrap_pyfunction!(idem::renew_lease, m)?)?;
    m.add_function(wrap_pyfunction!(idem::format_rfc3339_ms, m)?)?;
    m.add_function(wrap_pyfunction!(idem::parse_rfc3339_ms, m)?)?;
    m.add_function(wrap_pyfunction!(noop, m)?)?;
    m.add_function(wrap_pyfunction!(noop_obj, m)?)?;
    Ok(())
}

/// Does nothing (the benchmarks' floor for a call with one int and one float).
#[pyfunction]
#[pyo3(signature = (a=None, b=None))]
fn noop(a: Option<&Obj>, b: Option<&Obj>) {
    let _ = (a, b);
}

/// Returns its argument (the benchmarks' floor for a call with one object).
#[pyfunction]
fn noop_obj(a: Obj<'_>) -> Obj<'_> {
    a
}

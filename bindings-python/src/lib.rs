//! `retrycore._native`: the Python binding of retrycore.
//!
//! It translates and never re-decides: Python values become the core's
//! types (float seconds become nanoseconds, rounding half to even), core
//! errors become exceptions with the core's `.code`, and the retry loop owns
//! only what the core leaves to the host — the clock, the sleep, calling the
//! function and seeing its exception. The pure-Python package `retrycore`
//! wraps this module with decorators, async support and typing.
#![forbid(unsafe_code)]

mod breaker;
mod conv;
mod entropy;
mod failure;
mod idem;
mod locks;
mod misc;
mod policy;
mod see;
// `src/surface.rs` holds the declarations `build.rs` expands; the modules include the expansion.

use crate::conv::Obj;
use pyo3::prelude::*;

#[pymodule]
mod _native {
    use pyo3::prelude::*;

    #[pymodule_export]
    use crate::breaker::{Acquired, Breaker, PyBudget, PyPermit, PyRefusal, PyTransition};
    #[pymodule_export]
    use crate::failure::{classify, error_names, Verdict_};
    #[pymodule_export]
    use crate::idem::{
        canonicalize, canonicalize_json, complete, decide, derive_key, fingerprint, fingerprint_json, format_header,
        format_number, format_rfc3339_ms, mint_key, parse_header, parse_rfc3339_ms, renew_lease, scoped_key,
        storage_key, validate_key, PyDeadLetter, RecordConfig,
    };
    #[pymodule_export]
    use crate::misc::{
        format_duration, host_tables, lint, parse_duration, parse_http_date, server_advice, Finding, Random,
        ServerAdvice,
    };
    #[pymodule_export]
    use crate::policy::{error, GiveUp, Policy, Proceed, Reject, Retry, RetryEvent, Runner, ScheduleRow, Session};
    #[pymodule_export]
    use crate::{noop, noop_obj};

    #[pymodule_init]
    fn init(m: &Bound<'_, PyModule>) -> PyResult<()> {
        crate::conv::init_clock(m.py())?;
        m.add("__version__", env!("CARGO_PKG_VERSION"))
    }
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

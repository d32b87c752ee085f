//! Durations, server delays, lint, the generator and the tables' vocabulary.

use crate::conv::{self, to_json, to_secs, to_str, CoreResult, Mode, Obj};
use crate::failure::{Fields, OwnedFailure};
use pyo3::prelude::*;
use retrycore::lint::Service;
use retrycore::rng::{Rng, Xoshiro256pp};

/// Parses a duration string (`"250ms"`, `"1.5s"`) into float seconds.
#[pyfunction]
pub fn parse_duration(py: Python<'_>, text: &Obj) -> PyResult<f64> {
    retrycore::duration::parse_duration(&to_str(text, "duration")?, "duration").map(to_secs).py(py)
}

/// Writes float seconds as the shortest exact duration string.
#[pyfunction]
pub fn format_duration(seconds: &Obj) -> PyResult<String> {
    Ok(retrycore::duration::format_duration(conv::secs(seconds, "seconds")?))
}

/// Reads `Retry-After`, `retry-after-ms`, `grpc-retry-pushback-ms` and the retry hints
/// (an HTTP-date needs `wall_now_ms`, Unix epoch milliseconds; without it the date is ignored).
#[pyfunction]
#[pyo3(signature = (headers, wall_now_ms=None))]
pub fn server_advice(headers: &Obj, wall_now_ms: Option<&Obj>) -> PyResult<ServerAdvice> {
    let f = OwnedFailure::read(
        None,
        &Fields { headers: Some(headers.clone()), wall_now_ms: wall_now_ms.cloned(), ..Default::default() },
        false,
    )?;
    // Pure, like the core: without `wall_now_ms` an HTTP-date is ignored.
    let a =
        retrycore::retry_after::read_headers(f.headers.iter().map(|(a, b)| (a.as_str(), b.as_str())), f.wall_now_ms);
    Ok(ServerAdvice {
        delay: a.delay_ns().map(to_secs),
        source: a.delay.map(|(_, s)| s.name()),
        declined: a.declined_by_pushback,
        should_retry: a.should_retry,
        retry_exhausted: a.retry_exhausted,
    })
}

/// An HTTP-date as Unix seconds, or None when it is not one.
#[pyfunction]
pub fn parse_http_date(value: &Obj, wall_now_ms: &Obj) -> PyResult<Option<i64>> {
    let v = to_str(value, "value")?;
    let now = conv::wall_arg(wall_now_ms, "wall_now_ms")?;
    Ok(retrycore::retry_after::parse_http_date(&v, now))
}

/// Lints a policy, optionally with its service description (a dict).
#[pyfunction]
#[pyo3(signature = (policy, service=None))]
pub fn lint(py: Python<'_>, policy: &Obj, service: Option<&Obj>) -> PyResult<Vec<Finding>> {
    let p = crate::policy::native_policy(policy)?;
    let service = conv::opt(service, |s| Service::from_json_value(&to_json(s, Mode::Document)?).py(py))?;
    Ok(retrycore::lint::lint(p.get().inner.config(), service.as_ref())
        .into_iter()
        .map(|f| Finding { code: f.code, severity: f.severity.code(), field: f.field, message: f.message })
        .collect())
}

/// The pinned generator (xoshiro256++ seeded by SplitMix64).
#[pyclass(frozen, name = "Random", module = "retrycore._native")]
pub struct Random {
    g: std::sync::Mutex<Xoshiro256pp>,
}

#[pymethods]
impl Random {
    #[new]
    fn new(seed: &Obj) -> PyResult<Random> {
        Ok(Random { g: std::sync::Mutex::new(Xoshiro256pp::seed_from_u64(conv::to_count(seed, "seed", u64::MAX)?)) })
    }

    /// The next 64-bit output.
    fn next_u64(&self, py: Python<'_>) -> u64 {
        crate::locks::with(py, &self.g, |g| g.next_u64())
    }

    /// The next draw in [0, 1): `(x >> 11) · 2⁻⁵³`.
    fn random(&self, py: Python<'_>) -> f64 {
        crate::locks::with(py, &self.g, |g| g.next_f64())
    }
}

/// Every list and table the core shows hosts (kinds, categories, reasons,
/// error codes with their families, profiles, limits, defaults), as a dict.
#[pyfunction]
pub fn host_tables(py: Python<'_>) -> PyResult<Obj<'_>> {
    conv::from_json(py, &retrycore::tables::host_tables())
}

// The classes this module declares in `src/surface.rs`, expanded by `build.rs`.
include!(concat!(env!("OUT_DIR"), "/misc.rs"));

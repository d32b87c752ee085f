//! Limiters (declared in `src/surface.rs`): the core's `Limiter` under a
//! lock; decisions come back as the core's JSON in seconds.

use crate::conv::{self, CoreResult, Obj};
use pyo3::prelude::*;
use retrycore::limiters::{AttemptKind, Completion, LimiterConfig, Signal};
use std::sync::Mutex;

/// Python's unit: seconds.
const SECS: f64 = 1e9;

impl Limiter {
    /// Runs `f` on the limiter (see [`crate::locks::with`]).
    fn with<R: Send>(&self, py: Python<'_>, f: impl FnOnce(&mut retrycore::limiters::Limiter) -> R + Send) -> R {
        crate::locks::with(py, &self.l, f)
    }
}

// The class this module declares in `src/surface.rs`, expanded by `build.rs`.
include!(concat!(env!("OUT_DIR"), "/limiter.rs"));

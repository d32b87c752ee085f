//! Compensation runs and dead-letter replays (declared in `src/surface.rs`):
//! the core plans and decides; Python runs the callables and reports back
//! (`retrycore/saga.py`). Values cross as the core's JSON.

use crate::conv::{self, CoreResult, Obj};
use pyo3::prelude::*;
use retrycore::compensation::{CompensationPlan, Outcome, Planned};
use retrycore::dead_letter_replay::Replay;
use retrycore::idempotency::DeadLetter;
use retrycore::json::Value;
use std::sync::Mutex;

impl CompensationRun {
    /// Runs `f` on the run (see [`crate::locks::with`]).
    fn with<R: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut retrycore::compensation::CompensationRun) -> R + Send,
    ) -> R {
        crate::locks::with(py, &self.r, f)
    }
}

impl DeadLetterReplay {
    /// Runs `f` on the replay (see [`crate::locks::with`]).
    fn with<R: Send>(&self, py: Python<'_>, f: impl FnOnce(&mut Replay) -> R + Send) -> R {
        crate::locks::with(py, &self.r, f)
    }
}

// The classes this module declares in `src/surface.rs`, expanded by `build.rs`.
include!(concat!(env!("OUT_DIR"), "/saga.rs"));

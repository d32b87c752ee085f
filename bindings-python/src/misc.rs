//! Durations, server delays, lint, the generator and the tables' vocabulary
//! (declared in `src/surface.rs`).

use crate::conv::{self, to_secs, to_str, CoreResult, Obj};
use crate::failure::{Fields, OwnedFailure};
use pyo3::prelude::*;
use retrycore::lint::Service;
use retrycore::rng::{Rng, Xoshiro256pp};

#[doc = stub_doc!("Random")]
#[pyclass(frozen, name = "Random", module = "retrycore._native")]
pub struct Random {
    g: std::sync::Mutex<Xoshiro256pp>,
}

// The classes and functions this module declares in `src/surface.rs`, expanded by `build.rs`.
include!(concat!(env!("OUT_DIR"), "/misc.rs"));

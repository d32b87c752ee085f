//! Runs the tests of the surface generator (`codegen/surface.rs`), a
//! build-time tool of the FFI crates rather than a module of this crate.

#[path = "../codegen/surface.rs"]
#[allow(dead_code)]
mod surface;

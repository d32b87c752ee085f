//! Sets the linker flags a Node-API addon needs on each platform, and
//! expands the surface declared in `bindings-js/src/surface.rs` (with the
//! generator of `bindings-js/codegen/surface.rs`) into the
//! `#[napi]` exports (`$OUT_DIR/surface.rs`, included by `src/lib.rs`).

#[path = "../bindings-js/src/surface.rs"]
mod declarations;
#[path = "../bindings-js/codegen/surface.rs"]
#[allow(dead_code)]
mod surface;

fn main() {
    napi_build::setup();
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=../bindings-js/src/surface.rs");
    println!("cargo:rerun-if-changed=../bindings-js/codegen/surface.rs");
    let code = surface::generate(declarations::DECLARATIONS, surface::Target::Napi)
        .unwrap_or_else(|e| panic!("bindings-js/src/surface.rs: {e}"));
    let out = std::path::Path::new(&std::env::var("OUT_DIR").expect("OUT_DIR")).join("surface.rs");
    std::fs::write(&out, code).unwrap_or_else(|e| panic!("{}: {e}", out.display()));
}

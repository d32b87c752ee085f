//! Expands the surface declared in `bindings-js/src/surface.rs` (with the
//! generator of `bindings-js/codegen/surface.rs`) into the
//! `#[wasm_bindgen]` exports (`$OUT_DIR/surface.rs`, included by `src/lib.rs`).

#[path = "../bindings-js/src/surface.rs"]
mod declarations;
#[path = "../bindings-js/codegen/surface.rs"]
#[allow(dead_code)]
mod surface;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=../bindings-js/src/surface.rs");
    println!("cargo:rerun-if-changed=../bindings-js/codegen/surface.rs");
    // Feature `lite`: the decisions-only subset (`LITE`), for `make size-lite`.
    let lite = std::env::var_os("CARGO_FEATURE_LITE").map(|_| declarations::LITE);
    let code = surface::generate_subset(declarations::DECLARATIONS, surface::Target::Wasm, lite)
        .unwrap_or_else(|e| panic!("bindings-js/src/surface.rs: {e}"));
    let out = std::path::Path::new(&std::env::var("OUT_DIR").expect("OUT_DIR")).join("surface.rs");
    std::fs::write(&out, code).unwrap_or_else(|e| panic!("{}: {e}", out.display()));
}

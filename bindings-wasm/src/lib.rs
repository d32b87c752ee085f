//! The low-level half of the `retrycore-wasm` npm package (wasm-bindgen).
//!
//! It implements the Node binding's low-level surface name for name, so that
//! the one TypeScript layer (`bindings-node/lib/retrycore.ts`) runs on either;
//! what both share is in `retrycore-js` (`bindings-js/`), and the exports
//! declared in `bindings-js/src/surface.rs` are expanded here by `build.rs`
//! into `#[wasm_bindgen]` items. What is left is wasm-bindgen's part: reading
//! arguments from JavaScript values (`strings`, `numbers`, `Strings`, `js`),
//! raising errors (`errors`), and the clock and entropy of a JS environment
//! (`Wasm`).
//!
//! **No panics.** A Rust panic in WebAssembly traps and can leave the
//! instance inconsistent, so nothing here (nor in `retrycore-js`) may panic
//! on any input: checked conversions, no `unwrap` on input paths, arrays read
//! through catching imports, and errors leave by return value (see
//! [`errors`]), never by unwinding. `tests/wasm/backend-hostile.test.mjs`
//! drives every export with hostile values and checks that the instance
//! still answers.

mod errors;
// The benchmarks' no-op floor: only `make bench` builds it (feature `bench`).
#[cfg(feature = "bench")]
#[path = "../bench/floor.rs"]
mod floor;

use retrycore::json::Value;
use retrycore::ErrorCode;
use retrycore_js as rjs;
use wasm_bindgen::prelude::*;

pub(crate) use errors::hot;
pub use errors::{set_error_factory, take_error, JsErr};

// The exports: every function and class of the surface declared in
// `bindings-js/src/surface.rs`, expanded by `build.rs`.
include!(concat!(env!("OUT_DIR"), "/surface.rs"));

#[wasm_bindgen]
extern "C" {
    /// `performance.now()` of this JS environment (every target has it).
    #[wasm_bindgen(catch, js_namespace = performance, js_name = now)]
    fn performance_now() -> Result<f64, JsValue>;
    #[wasm_bindgen(catch, js_namespace = Array, js_name = isArray)]
    fn js_is_array(v: &JsValue) -> Result<bool, JsValue>;
}

/// The wasm host: `performance.now()`, `crypto.getRandomValues`.
pub struct Wasm;

impl rjs::Host for Wasm {
    fn clock_ms() -> f64 {
        performance_now().ok().filter(|m| m.is_finite() && *m >= 0.0).unwrap_or(0.0)
    }

    /// `crypto.getRandomValues`, drawn 4 KiB at a time.
    fn entropy(out: &mut [u8]) -> rjs::Result<()> {
        rjs::host::pooled_entropy(out, "the host (crypto.getRandomValues)", getrandom::fill)
    }
}

/// Converts a JSON value to a JavaScript value (objects and arrays are
/// built by `JSON.parse`, the cheapest way across the boundary).
pub(crate) fn js(v: &Value) -> JsValue {
    match v {
        Value::Null => JsValue::NULL,
        Value::Bool(b) => JsValue::from_bool(*b),
        Value::Number(n) => JsValue::from_f64(n.as_f64().unwrap_or(f64::NAN)),
        Value::String(s) => JsValue::from_str(s),
        _ => js_sys::JSON::parse(&v.to_string()).unwrap_or(JsValue::NULL),
    }
}

thread_local! {
    /// The key `length`, made once: a string made from Rust is decoded into a new JS string on
    /// every call (the failure path reads one array, the error's names, per failure).
    static LENGTH: JsValue = JsValue::from_str("length");
}

/// Reads an array argument element by element through catching imports (a
/// getter or a revoked proxy throws into a `Result`, never through Rust).
/// Its `length` is checked against the core's `limits::MAX_ITEMS` before the
/// first element is read: a sparse array of length 2^32 − 1 is refused
/// (`too_large`), not walked.
fn array_items<T>(
    v: &JsValue,
    field: &str,
    what: &str,
    mut item: impl FnMut(JsValue) -> Option<T>,
) -> rjs::Result<Option<Vec<T>>> {
    if v.is_undefined() || v.is_null() {
        return Ok(None);
    }
    let bad = || rjs::Error::config(ErrorCode::InvalidType, field, format_args!("must be an array of {what}"));
    if !js_is_array(v).unwrap_or(false) {
        return Err(bad());
    }
    let len = LENGTH.with(|k| js_sys::Reflect::get(v, k)).map_err(|_| bad())?.as_f64();
    let len = len.filter(|l| *l >= 0.0 && l.fract() == 0.0).ok_or_else(bad)?;
    // `len` is a whole number (past 2^64 it saturates, and is refused).
    retrycore::limits::check_items(len as u64, field).map_err(rjs::Error::of_config)?;
    let n = len as u32;
    let mut out = Vec::with_capacity(n as usize);
    for i in 0..n {
        let x = js_sys::Reflect::get_u32(v, i).map_err(|_| bad())?;
        let bad_item = || rjs::Error::config(ErrorCode::InvalidType, field, format_args!("item {i}: must be {what}"));
        out.push(item(x).ok_or_else(bad_item)?);
    }
    Ok(Some(out))
}

/// Reads `Array<string> | undefined | null`.
pub(crate) fn strings(v: &JsValue, field: &str) -> rjs::Result<Option<Vec<String>>> {
    array_items(v, field, "strings", |x| x.as_string())
}

/// Reads `Array<number> | undefined | null`.
pub(crate) fn numbers(v: &JsValue, field: &str) -> rjs::Result<Option<Vec<f64>>> {
    array_items(v, field, "numbers", |x| x.as_f64())
}

/// An `Array<string> | undefined | null` argument, read when `retrycore-js`
/// gets to it (so errors come in the order of the arguments).
pub(crate) struct Strings<'a>(pub &'a JsValue);

impl rjs::StrList for Strings<'_> {
    fn read(self, field: &str) -> rjs::Result<Option<Vec<String>>> {
        strings(self.0, field)
    }
}

/// Anchors the monotonic clock to the JS environment's `performance.now()`.
/// The wasm build reads `performance.now()` itself: nothing to anchor.
#[wasm_bindgen]
pub fn calibrate(#[wasm_bindgen(js_name = performanceNow)] _performance_now: f64) {}

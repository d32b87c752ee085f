//! Errors: a `retrycore_js::Error` (class and code decided there) thrown as
//! the object the JS layer's error factory (`setErrorFactory`) builds.
//!
//! Two ways out, both without unwinding through WebAssembly (which would skip
//! destructors and leave the instance inconsistent):
//! - `Result<T, JsErr>`: wasm-bindgen's glue throws the error after the call
//!   returned. It costs a multi-value array per call (~20 ns in Node 20).
//! - the hot paths return a number and `NaN` on failure, after stashing the
//!   error ([`hot`]); the package's `backend.js` then throws `takeError()`.

use retrycore::ErrorCode;
use retrycore_js::{Class, Error};
use std::cell::RefCell;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

thread_local! {
    static FACTORY: RefCell<Option<js_sys::Function>> = const { RefCell::new(None) };
    /// The error of the last hot-path call that answered `NaN`.
    static PENDING: RefCell<Option<Error>> = const { RefCell::new(None) };
}

/// An error on its way to JavaScript (wasm-bindgen throws it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsErr(Error);

impl From<Error> for JsErr {
    #[inline]
    fn from(e: Error) -> JsErr {
        JsErr(e)
    }
}

impl From<JsErr> for JsValue {
    fn from(e: JsErr) -> JsValue {
        build(&e.0)
    }
}

/// Builds the JavaScript error object with the registered factory, or,
/// without one (or if it threw), a plain `TypeError` / `RangeError` /
/// `Error` carrying `.code` and `.field`: always an `Error`, never a string.
fn build(e: &Error) -> JsValue {
    // Clone out of the cell first: the factory is JS and may re-enter.
    let factory = FACTORY.with(|c| c.borrow().clone());
    if let Some(f) = factory {
        let args: js_sys::Array = e.factory_args().into_iter().map(JsValue::from_str).collect();
        if let Ok(v) = js_sys::Reflect::apply(&f, &JsValue::UNDEFINED, &args) {
            return v;
        }
    }
    let v: JsValue = match e.class {
        Class::Type => js_sys::TypeError::new(&e.message).into(),
        Class::Range => js_sys::RangeError::new(&e.message).into(),
        _ => js_sys::Error::new(&e.message).into(),
    };
    let _ = js_sys::Reflect::set(&v, &JsValue::from_str("code"), &JsValue::from_str(e.code));
    let _ = js_sys::Reflect::set(&v, &JsValue::from_str("field"), &JsValue::from_str(&e.field));
    v
}

/// A hot path's value as the number it answers: `true` 1, `false` 0, `()` 0.
pub(crate) trait Num {
    /// Returns the number.
    fn num(self) -> f64;
}

macro_rules! num {
    ($($t:ty: $v:pat => $e:expr),*) => {$(impl Num for $t { #[inline(always)] fn num(self) -> f64 { let $v = self; $e } })*};
}

num!(f64: v => v, u32: v => f64::from(v), bool: v => f64::from(v), (): () => 0.0);

/// The hot-path protocol: the value of `f` as a number, or `NaN` with the
/// error stashed for `takeError()` (no hot path answers `NaN` otherwise).
#[inline(always)]
pub(crate) fn hot<T: Num>(f: impl FnOnce() -> retrycore_js::Result<T>) -> f64 {
    match f() {
        Ok(v) => v.num(),
        Err(e) => stash(e),
    }
}

#[cold]
#[inline(never)]
fn stash(e: Error) -> f64 {
    PENDING.with(|p| *p.borrow_mut() = Some(e));
    f64::NAN
}

/// Registers the function that builds error objects.
#[wasm_bindgen(js_name = setErrorFactory)]
pub fn set_error_factory(#[wasm_bindgen(unchecked_param_type = "(...args: any[]) => any")] factory: JsValue) {
    let f = if factory.is_function() { Some(factory.unchecked_into::<js_sys::Function>()) } else { None };
    FACTORY.with(|c| *c.borrow_mut() = f);
}

/// Returns the error of the last call that answered `NaN` (the hot paths'
/// protocol; `backend.js` throws it). Not part of the public API.
#[wasm_bindgen(js_name = takeError, unchecked_return_type = "Error")]
pub fn take_error() -> JsValue {
    let e = PENDING.with(|p| p.borrow_mut().take());
    build(&e.unwrap_or_else(|| Error::config(ErrorCode::InvalidState, "", "no error is pending")))
}

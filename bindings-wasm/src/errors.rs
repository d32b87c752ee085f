//! Errors: the core's codes become JavaScript `Error` objects.
//!
//! The JS layer registers one factory function at load
//! (`setErrorFactory(kind, code, field, message)`), so the errors this crate
//! throws are the very classes the JS layer throws (`TypeError`,
//! `RangeError`, `IdempotencyError`, `RetrycoreError`), each with `.code`
//! equal to the core's code and `.field`. Which class is decided here, from
//! the core ([`ErrorCode::is_type_error`], [`ErrorCode::is_config`]) — the
//! same mapping as the Node binding's `errors.rs`.
//!
//! Two ways out, both without unwinding through WebAssembly (which would skip
//! destructors and leave the instance inconsistent):
//! - `Result<T, JsErr>`: wasm-bindgen's glue throws the error after the call
//!   returned. It costs a multi-value array per call (~20 ns in Node 20).
//! - the hot paths return a number and `NaN` on failure, after stashing the
//!   error ([`nan`]); the package's `backend.js` then throws `takeError()`.

use retrycore::ErrorCode;
use std::cell::RefCell;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

/// A result whose error becomes a JavaScript error object.
pub(crate) type R<T> = Result<T, JsErr>;

thread_local! {
    static FACTORY: RefCell<Option<js_sys::Function>> = const { RefCell::new(None) };
    /// The error of the last hot-path call that answered `NaN`.
    static PENDING: RefCell<Option<JsErr>> = const { RefCell::new(None) };
}

/// Where an error comes from, which decides its class for the codes that
/// mean different things in different places (`invalid_state`).
#[derive(Copy, Clone, PartialEq, Eq)]
pub(crate) enum Domain {
    /// Options, documents and arguments.
    Config,
    /// Keys, headers, records, dead letters.
    Idempotency,
    /// Sessions, breakers, budgets.
    State,
}

/// An error on its way to JavaScript: the factory's four arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsErr {
    kind: &'static str,
    code: &'static str,
    field: String,
    message: String,
}

impl JsErr {
    /// The error's code (tests).
    #[cfg(test)]
    pub(crate) fn code(&self) -> &'static str {
        self.code
    }

    /// Builds the JavaScript error object with the registered factory, or,
    /// without one (or if it threw), a plain `TypeError` / `RangeError` /
    /// `Error` carrying `.code` and `.field`: always an `Error`, never a string.
    fn build(&self) -> JsValue {
        // Clone out of the cell first: the factory is JS and may re-enter.
        let factory = FACTORY.with(|c| c.borrow().clone());
        if let Some(f) = factory {
            let args = js_sys::Array::of4(
                &JsValue::from_str(self.kind),
                &JsValue::from_str(self.code),
                &JsValue::from_str(&self.field),
                &JsValue::from_str(&self.message),
            );
            if let Ok(v) = js_sys::Reflect::apply(&f, &JsValue::UNDEFINED, &args) {
                return v;
            }
        }
        let e: JsValue = match self.kind {
            "type" => js_sys::TypeError::new(&self.message).into(),
            "range" => js_sys::RangeError::new(&self.message).into(),
            _ => js_sys::Error::new(&self.message).into(),
        };
        let _ = js_sys::Reflect::set(&e, &JsValue::from_str("code"), &JsValue::from_str(self.code));
        let _ = js_sys::Reflect::set(&e, &JsValue::from_str("field"), &JsValue::from_str(&self.field));
        e
    }
}

impl From<JsErr> for JsValue {
    fn from(e: JsErr) -> JsValue {
        e.build()
    }
}

/// An error of `kind` (`type`, `range`, `idempotency`, `state`).
pub(crate) fn raise(kind: &'static str, code: &'static str, field: &str, message: &str) -> JsErr {
    JsErr { kind, code, field: field.to_owned(), message: message.to_owned() }
}

/// Maps a core error to its JavaScript class.
pub(crate) fn core_err(e: &retrycore::Error, domain: Domain) -> JsErr {
    let k = e.kind();
    let kind = if k.is_type_error() {
        "type"
    } else if k.is_config()
        || matches!(
            k,
            ErrorCode::InvalidNumber
                | ErrorCode::InvalidString
                | ErrorCode::TooDeep
                | ErrorCode::InvalidPointer
                | ErrorCode::TooLarge
        )
    {
        "range"
    } else if matches!(
        k,
        ErrorCode::InvalidKey
            | ErrorCode::InvalidHeader
            | ErrorCode::StaleFence
            | ErrorCode::FenceFromFuture
            | ErrorCode::InvalidDeadLetter
    ) || domain == Domain::Idempotency
    {
        "idempotency"
    } else {
        "state"
    };
    JsErr { kind, code: e.code(), field: e.field().to_owned(), message: e.to_string() }
}

/// The hot-path protocol: the value, or `NaN` with the error stashed for
/// `takeError()` (no hot path answers `NaN` otherwise).
#[inline(always)]
pub(crate) fn nan(r: R<f64>) -> f64 {
    match r {
        Ok(v) => v,
        Err(e) => stash(e),
    }
}

#[cold]
#[inline(never)]
fn stash(e: JsErr) -> f64 {
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
    e.unwrap_or_else(|| raise("state", "invalid_state", "", "no error is pending")).build()
}

//! Errors: a `retrycore_js::Error` (class and code decided there) thrown as
//! the object the JS layer's error factory (`setErrorFactory`) builds.

use napi::{Env, Error, JsFunction, JsRangeError, JsUnknown, Ref, Result, Status};
use napi_derive::napi;
use std::cell::RefCell;
use std::mem::ManuallyDrop;

thread_local! {
    // One per thread: each worker thread has its own Node environment.
    // ManuallyDrop: the reference lives as long as the environment.
    static FACTORY: RefCell<Option<ManuallyDrop<Ref<()>>>> = const { RefCell::new(None) };
}

/// Registers the function that builds error objects.
#[napi(catch_unwind)]
pub fn set_error_factory(env: Env, factory: JsFunction) -> Result<()> {
    let r = env.create_reference(factory)?;
    FACTORY.with(|c| {
        if let Some(mut old) = c.borrow_mut().replace(ManuallyDrop::new(r)) {
            let _ = old.unref(env);
        }
    });
    Ok(())
}

/// Builds the error object of `e`'s class (`type`, `range`, `idempotency`,
/// `state`) with the factory and returns it as a napi error that throws that
/// very object.
#[cold]
#[inline(never)]
pub(crate) fn throw(env: &Env, e: retrycore_js::Error) -> Error {
    let made: Result<JsUnknown> = FACTORY.with(|c| {
        let b = c.borrow();
        let r = b.as_ref().ok_or_else(|| Error::new(Status::GenericFailure, "no error factory"))?;
        let f: JsFunction = env.get_reference_value(r)?;
        let args = e.factory_args().map(|s| env.create_string(s));
        let [kind, code, field, message] = args;
        f.call(None, &[kind?, code?, field?, message?])
    });
    match made {
        Ok(v) => Error::from(v),
        // Without the JS layer (or if the factory threw): still an Error
        // object with `.code`, never a string.
        Err(_) => Error::from(JsRangeError::from(Error::new(e.code, e.message.clone())).into_unknown(*env)),
    }
}

/// Turns a `retrycore-js` result into a napi-rs one that throws the error object.
pub(crate) trait OrThrow<T> {
    /// Returns the value, or the error as the object to throw.
    fn or_throw(self, env: &Env) -> Result<T>;
}

/// A JSON result crosses as serde_json's value, which napi-rs converts.
impl OrThrow<serde_json::Value> for retrycore_js::Result<retrycore::json::Value> {
    fn or_throw(self, env: &Env) -> Result<serde_json::Value> {
        match self {
            Ok(v) => Ok(v.into()),
            Err(e) => Err(throw(env, e)),
        }
    }
}

impl<T> OrThrow<T> for retrycore_js::Result<T> {
    #[inline(always)]
    fn or_throw(self, env: &Env) -> Result<T> {
        match self {
            Ok(v) => Ok(v),
            Err(e) => Err(throw(env, e)),
        }
    }
}

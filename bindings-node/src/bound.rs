//! Hot methods as functions bound to their native object (issue 17).
//!
//! A Node-API *method* call reads its object with `napi_unwrap` of `this`,
//! about half of the ~56 ns a raw method call costs (BENCHMARKS.md, "Node
//! binding"); a *function* created with the object as its callback data
//! reads it with the arguments (`napi_get_cb_info`), at the cost of a plain
//! function. The function holds a strong reference to its object, so the
//! data stays valid as long as the function can be called; the finalizer of
//! the function's own wrap releases it. Each class's `bound()` (generated
//! from `bindings-js/src/surface.rs` for its hot methods of numbers and
//! flags) answers them as one object; `lib/retrycore.ts` keeps it in a
//! private field and calls its functions instead of the methods: the same
//! results and errors.
#![allow(unsafe_code)]

use napi::bindgen_prelude::{FromNapiValue, Reference};
use napi::{sys, Env, Error, JsError, JsFunction, JsObject, Result, Status};
use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;

type Callback = unsafe extern "C" fn(sys::napi_env, sys::napi_callback_info) -> sys::napi_value;

/// The object `bound()` answers: each `(name, callback)` as a function bound to `me`.
pub(crate) fn object<T: 'static>(env: Env, me: Reference<T>, list: &[(&str, Callback)]) -> Result<JsObject> {
    let mut o = env.create_object()?;
    for &(name, cb) in list {
        o.set_named_property(name, bind(env, name, me.clone(env)?, cb)?)?;
    }
    Ok(o)
}

/// Creates the function `name` that calls `cb` with `me` as its data.
fn bind<T: 'static>(env: Env, name: &str, me: Reference<T>, cb: Callback) -> Result<JsFunction> {
    let data = Box::into_raw(Box::new(me));
    let mut f = ptr::null_mut();
    // SAFETY: env is this call's; `data` is a live box, released exactly once:
    // here when the function could not be made and wrapped, else by `release`
    // when the function is collected. A function made but not wrapped is
    // dropped unreachable with this call's scope, never called.
    unsafe {
        let made =
            sys::napi_create_function(env.raw(), name.as_ptr().cast(), name.len(), Some(cb), data.cast(), &mut f);
        if made != sys::Status::napi_ok
            || sys::napi_wrap(env.raw(), f, data.cast(), Some(release::<T>), ptr::null_mut(), ptr::null_mut())
                != sys::Status::napi_ok
        {
            drop(Box::from_raw(data));
            return Err(Error::new(Status::GenericFailure, format!("could not bind {name}")));
        }
        JsFunction::from_napi_value(env.raw(), f)
    }
}

/// The finalizer of a bound function: drops its reference to the object.
unsafe extern "C" fn release<T: 'static>(_env: sys::napi_env, data: *mut c_void, _hint: *mut c_void) {
    // SAFETY: `data` is the box `bind` wrapped this function with, finalized once.
    drop(unsafe { Box::from_raw(data.cast::<Reference<T>>()) });
}

/// Runs `body` with a bound function's object and its first `N` arguments
/// (missing ones `undefined`); an error, or a panic, is thrown as a napi-rs
/// method throws it.
///
/// # Safety
/// `env` and `info` are Node's for a call of a function `bind` made with a `Reference<T>`.
pub(crate) unsafe fn call<T: 'static, const N: usize>(
    env: sys::napi_env,
    info: sys::napi_callback_info,
    body: impl FnOnce(&mut T, [sys::napi_value; N]) -> Result<sys::napi_value>,
) -> sys::napi_value {
    let mut argc = N;
    let mut argv = [ptr::null_mut(); N];
    let mut data: *mut c_void = ptr::null_mut();
    // SAFETY: argv has room for argc values.
    let read = unsafe { sys::napi_get_cb_info(env, info, &mut argc, argv.as_mut_ptr(), ptr::null_mut(), &mut data) };
    let result = if read != sys::Status::napi_ok || data.is_null() {
        Err(Error::new(Status::InvalidArg, "a bound function without its object".to_owned()))
    } else {
        // SAFETY: `data` is the function's `Reference<T>`, alive while the function is;
        // the object is borrowed for this call alone, as a napi-rs method borrows it.
        let me: &mut T = unsafe { &mut *data.cast::<Reference<T>>() };
        catch_unwind(AssertUnwindSafe(|| body(me, argv)))
            .map_err(|e| {
                let message = match (e.downcast_ref::<String>(), e.downcast_ref::<&str>()) {
                    (Some(s), _) => s.clone(),
                    (_, Some(s)) => (*s).to_owned(),
                    _ => "panic from Rust code".to_owned(),
                };
                Error::new(Status::GenericFailure, message)
            })
            .and_then(|r| r)
    };
    result.unwrap_or_else(|e| {
        // SAFETY: env is this call's.
        unsafe { JsError::from(e).throw_into(env) };
        ptr::null_mut()
    })
}

//! Raw Node-API no-op functions with the signatures of the hot paths: the
//! floor that `bench/` measures each decision against. They convert their
//! arguments and return a value exactly as a hand-written C addon would, and
//! decide nothing. Not part of the public API.
#![allow(unsafe_code)]

use napi::bindgen_prelude::{FromNapiValue, Object};
use napi::{sys, Env, Result};
use napi_derive::napi;
use std::ffi::c_void;
use std::ptr;

unsafe fn args<const N: usize>(env: sys::napi_env, info: sys::napi_callback_info, this: bool) -> [sys::napi_value; N] {
    let mut argc = N;
    let mut argv = [ptr::null_mut(); N];
    let mut recv = ptr::null_mut();
    // SAFETY: env and info come from Node for this call; argv has room for argc values.
    unsafe {
        sys::napi_get_cb_info(env, info, &mut argc, argv.as_mut_ptr(), &mut recv, ptr::null_mut());
        if this {
            let mut p: *mut c_void = ptr::null_mut();
            sys::napi_unwrap(env, recv, &mut p);
        }
    }
    argv
}

unsafe fn num(env: sys::napi_env, v: sys::napi_value) -> f64 {
    let mut x = 0f64;
    // SAFETY: v is a live handle of this call.
    unsafe { sys::napi_get_value_double(env, v, &mut x) };
    x
}

unsafe fn opt_num(env: sys::napi_env, v: sys::napi_value) -> f64 {
    let mut t = 0;
    // SAFETY: v is a live handle of this call.
    unsafe {
        sys::napi_typeof(env, v, &mut t);
        if t == sys::ValueType::napi_number {
            num(env, v)
        } else {
            0.0
        }
    }
}

unsafe fn ret_num(env: sys::napi_env, x: f64) -> sys::napi_value {
    let mut out = ptr::null_mut();
    // SAFETY: creating a number in this call's scope.
    unsafe { sys::napi_create_double(env, x, &mut out) };
    out
}

/// `policy.delay(retry, r, prev?)`: a method, two numbers and an optional one, a number back.
unsafe extern "C" fn delay(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
    // SAFETY: called by Node with a live env and callback info.
    unsafe {
        let a = args::<3>(env, info, true);
        ret_num(env, num(env, a[0]) + num(env, a[1]) + opt_num(env, a[2]))
    }
}

/// `delay(retry, r)` as a plain function: two numbers, a number back, no `this` to unwrap.
unsafe extern "C" fn delay_plain(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
    // SAFETY: called by Node with a live env and callback info.
    unsafe {
        let a = args::<2>(env, info, false);
        ret_num(env, num(env, a[0]) + num(env, a[1]))
    }
}

/// `delay(retry, r)` as a function bound to its object by the callback's data
/// pointer (read with the arguments, no `this` to unwrap).
unsafe extern "C" fn delay_bound(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
    let mut argc = 2;
    let mut argv = [ptr::null_mut(); 2];
    let mut data: *mut c_void = ptr::null_mut();
    // SAFETY: called by Node with a live env and callback info; `data` is the
    // `&'static f64` `bound` created this function with.
    unsafe {
        sys::napi_get_cb_info(env, info, &mut argc, argv.as_mut_ptr(), ptr::null_mut(), &mut data);
        let base = *(data as *const f64);
        ret_num(env, base + num(env, argv[0]) + num(env, argv[1]))
    }
}

/// Returns a new `delay_bound` function (its data a leaked number: bench only).
unsafe extern "C" fn bound(env: sys::napi_env, _info: sys::napi_callback_info) -> sys::napi_value {
    let data: &'static f64 = Box::leak(Box::new(0.0));
    let mut f = ptr::null_mut();
    // SAFETY: creating a function in this call's scope.
    unsafe {
        sys::napi_create_function(
            env,
            c"delay".as_ptr(),
            5,
            Some(delay_bound),
            (data as *const f64).cast_mut().cast(),
            &mut f,
        )
    };
    f
}

/// `classifyStatus(status, flags)`: a function, two numbers, an integer back.
unsafe extern "C" fn classify(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
    // SAFETY: called by Node with a live env and callback info.
    unsafe {
        let a = args::<2>(env, info, false);
        let mut s = 0u32;
        sys::napi_get_value_uint32(env, a[1], &mut s);
        let mut out = ptr::null_mut();
        sys::napi_create_uint32(env, num(env, a[0]) as u32 + s, &mut out);
        out
    }
}

/// `breaker.tryAcquire(now)`: a method, one number, a number back.
unsafe extern "C" fn acquire(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
    // SAFETY: called by Node with a live env and callback info.
    unsafe {
        let a = args::<1>(env, info, true);
        ret_num(env, num(env, a[0]))
    }
}

/// `breaker.record(permit, outcome, duration, now)`: a method, four numbers, a boolean back.
unsafe extern "C" fn record(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
    // SAFETY: called by Node with a live env and callback info.
    unsafe {
        let a = args::<4>(env, info, true);
        let mut o = 0u32;
        sys::napi_get_value_uint32(env, a[1], &mut o);
        let x = num(env, a[0]) + num(env, a[2]) + num(env, a[3]) + f64::from(o);
        let mut out = ptr::null_mut();
        sys::napi_get_boolean(env, x < 0.0, &mut out);
        out
    }
}

/// `budget.tryWithdraw(now, category)`: a method, a number and an integer, a number back.
unsafe extern "C" fn withdraw(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
    // SAFETY: called by Node with a live env and callback info.
    unsafe {
        let a = args::<2>(env, info, true);
        let mut c = 0u32;
        sys::napi_get_value_uint32(env, a[1], &mut c);
        ret_num(env, num(env, a[0]) + f64::from(c))
    }
}

unsafe fn string(env: sys::napi_env, v: sys::napi_value) -> Vec<u8> {
    let mut len = 0usize;
    // SAFETY: v is a live handle; the buffer has len + 1 bytes.
    unsafe {
        sys::napi_get_value_string_utf8(env, v, ptr::null_mut(), 0, &mut len);
        let mut buf = vec![0u8; len + 1];
        sys::napi_get_value_string_utf8(env, v, buf.as_mut_ptr().cast(), len + 1, &mut len);
        buf.truncate(len);
        buf
    }
}

/// `fingerprint(method, path, body, selected, canonical)`: three strings in, 64 hex digits out.
unsafe extern "C" fn fingerprint(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
    // SAFETY: called by Node with a live env and callback info.
    unsafe {
        let a = args::<5>(env, info, false);
        let n = string(env, a[0]).len() + string(env, a[1]).len() + string(env, a[2]).len();
        let hex = [b'0' + (n % 10) as u8; 64];
        let mut out = ptr::null_mut();
        sys::napi_create_string_utf8(env, hex.as_ptr().cast(), 64, &mut out);
        out
    }
}

/// Returns the floor functions: `{delay, delayPlain, bound, classify, acquire, record, withdraw, fingerprint}`.
#[napi(catch_unwind)]
pub fn floor(env: Env) -> Result<Object> {
    let mut o = env.create_object()?;
    type Cb = unsafe extern "C" fn(sys::napi_env, sys::napi_callback_info) -> sys::napi_value;
    let list: [(&str, Cb); 8] = [
        ("delay", delay),
        ("delayPlain", delay_plain),
        ("bound", bound),
        ("classify", classify),
        ("acquire", acquire),
        ("record", record),
        ("withdraw", withdraw),
        ("fingerprint", fingerprint),
    ];
    for (name, cb) in list {
        let mut f = ptr::null_mut();
        // SAFETY: creating a function from a valid callback in this call's scope.
        let status = unsafe {
            sys::napi_create_function(env.raw(), name.as_ptr().cast(), name.len(), Some(cb), ptr::null_mut(), &mut f)
        };
        if status != sys::Status::napi_ok {
            return Err(napi::Error::from_reason("napi_create_function failed"));
        }
        // SAFETY: f is a live function value.
        let f = unsafe { napi::JsUnknown::from_napi_value(env.raw(), f)? };
        o.set_named_property(name, f)?;
    }
    Ok(o)
}

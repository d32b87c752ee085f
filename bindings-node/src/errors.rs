//! Errors: the core's codes become JavaScript `Error` objects.
//!
//! The JS layer registers one factory function at load
//! (`setErrorFactory(kind, code, field, message)`), so the errors this crate
//! throws are the very classes the JS layer throws (`TypeError`,
//! `RangeError`, `IdempotencyError`, `RetrycoreError`), each with `.code`
//! equal to the core's code and `.field`. Which class is decided here, from
//! the core ([`ErrorCode::is_type_error`], [`ErrorCode::is_config`]).

use napi::{Env, Error, JsFunction, JsRangeError, JsUnknown, Ref, Result, Status};
use napi_derive::napi;
use retrycore::ErrorCode;
use std::cell::RefCell;
use std::mem::ManuallyDrop;

thread_local! {
    // One per thread: each worker thread has its own Node environment.
    // ManuallyDrop: the reference lives as long as the environment.
    static FACTORY: RefCell<Option<ManuallyDrop<Ref<()>>>> = const { RefCell::new(None) };
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

/// Builds an error object of `kind` (`type`, `range`, `idempotency`,
/// `state`) and returns it as a napi error that throws that very object.
pub(crate) fn raise(env: &Env, kind: &str, code: &str, field: &str, message: &str) -> Error {
    let made: Result<JsUnknown> = FACTORY.with(|c| {
        let b = c.borrow();
        let r = b.as_ref().ok_or_else(|| Error::new(Status::GenericFailure, "no error factory"))?;
        let f: JsFunction = env.get_reference_value(r)?;
        let args = [
            env.create_string(kind)?,
            env.create_string(code)?,
            env.create_string(field)?,
            env.create_string(message)?,
        ];
        f.call(None, &args)
    });
    match made {
        Ok(v) => Error::from(v),
        // Without the JS layer (or if the factory threw): still an Error
        // object with `.code`, never a string.
        Err(_) => Error::from(JsRangeError::from(Error::new(code, message.to_owned())).into_unknown(*env)),
    }
}

/// Maps a core error to its JavaScript class.
pub(crate) fn core_err(env: &Env, e: &retrycore::Error, domain: Domain) -> Error {
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
    raise(env, kind, e.code(), e.field(), &e.to_string())
}

//! What the host saw of one failed attempt, as the surface passes it:
//! optional status, gRPC code, cause-chain names, method, flags, flat
//! `[name, value, …]` headers, elapsed and wall-clock milliseconds, and
//! the error's own inputs: its message (sent only when the policy has a
//! message rule), Smithy's `@retryable` trait and a `shouldRetry` verdict.
//! The names cross as strings, or as the id of a list interned before
//! ([`crate::names`]).

use crate::error::{Error, Result};
use crate::host::{ns, wall_ms};
use retrycore::classify::{Failure, FailureBuf, GrpcCode, HostVerdict, RetryableTrait};
use retrycore::ErrorCode;
use std::rc::Rc;

/// A list of strings as a host passes it, read only when its turn comes (so
/// that errors come in the same order in every binding).
///
/// Node hands over lists napi-rs already converted (`Option<Vec<String>>`);
/// the wasm binding implements it for its JavaScript arrays.
pub trait StrList {
    /// Reads the list (`None`: the argument was absent), naming `field` in errors.
    fn read(self, field: &str) -> Result<Option<Vec<String>>>;
}

impl StrList for Option<Vec<String>> {
    #[inline]
    fn read(self, _field: &str) -> Result<Option<Vec<String>>> {
        Ok(self)
    }
}

/// The arguments that describe a failure, as the surface passes them.
#[derive(Default)]
pub struct FailureArgs<L> {
    /// The HTTP status, an integer in [0, 999].
    pub status: Option<f64>,
    /// The gRPC status code, by name or number.
    pub grpc: Option<String>,
    /// The flattened cause chain, outermost first.
    pub names: L,
    /// The id `internNames` gave the chain's list, instead of `names`.
    pub names_id: Option<f64>,
    /// The HTTP method.
    pub method: Option<String>,
    /// The caller declares the request idempotent.
    pub idempotent: Option<bool>,
    /// The caller sent an idempotency key.
    pub key_sent: Option<bool>,
    /// Response headers, flat: `[name, value, name, value, …]`.
    pub headers: L,
    /// How long the attempt took (ms).
    pub elapsed_ms: Option<f64>,
    /// Wall-clock Unix epoch milliseconds, to resolve HTTP-dates.
    pub wall_now_ms: Option<f64>,
    /// The error's message (the host sends it only when the policy's
    /// classifier needs it: `Classifier::needs_message`).
    pub message: Option<String>,
    /// Smithy's `@retryable` trait, its presence and `throttling` flag in
    /// one: `None` no trait, `Some(t)` the trait with `throttling: t`.
    pub retryable_throttling: Option<bool>,
    /// The error's own verdict on a retry (Stripe's `should_retry`).
    pub should_retry: Option<bool>,
    /// The caller's predicate's verdict (`HostVerdict::parse`: a retry
    /// rule, a category or `category:rule`).
    pub verdict: Option<String>,
}

impl<L: StrList> FailureArgs<L> {
    /// Checks and converts the arguments into a failure the core classifies.
    pub fn read(self) -> Result<ReadFailure> {
        let status = self.status.map(status_of).transpose()?;
        let grpc_code = self.grpc.map(|g| GrpcCode::read(&g, "grpcCode")).transpose().map_err(Error::of_config)?;
        let names = self.names.read("names")?;
        let interned = match (self.names_id, &names) {
            (None, _) => None,
            (Some(id), None) => Some(crate::names::interned(id)?),
            (Some(_), Some(_)) => {
                return Err(Error::config(ErrorCode::InvalidValue, "namesId", "is given with names: one or the other"))
            }
        };
        let headers = self.headers.read("headers")?.unwrap_or_default();
        if headers.len() & 1 == 1 {
            return Err(Error::config(ErrorCode::InvalidType, "headers", "must be name/value pairs"));
        }
        let buf = FailureBuf {
            status,
            grpc_code,
            error_names: names.unwrap_or_default(),
            method: self.method,
            idempotent: self.idempotent,
            idempotency_key_sent: self.key_sent.unwrap_or(false),
            headers: pairs(headers),
            elapsed: self.elapsed_ms.map(|e| ns(e, "elapsed")).transpose()?.map(std::time::Duration::from_nanos),
            wall_now_ms: self.wall_now_ms.map(|w| wall_ms(w, "wallNowMs")).transpose()?,
            // Cut to what message rules read (`limits::clip_message`).
            message: self.message.map(|mut m| {
                m.truncate(retrycore::limits::clip_message(&m).len());
                m
            }),
            retryable: self.retryable_throttling.map(|throttling| RetryableTrait { throttling }),
            should_retry: self.should_retry,
            host: self.verdict.map(|v| HostVerdict::parse(&v, "verdict")).transpose().map_err(Error::of_config)?,
        };
        Ok(ReadFailure { buf, interned })
    }
}

/// A failure read from the surface's arguments: its buffer, and its names
/// when they came as an interned list's id (then the buffer has none).
#[derive(Debug)]
pub struct ReadFailure {
    buf: FailureBuf,
    interned: Option<Rc<[String]>>,
}

impl ReadFailure {
    /// The buffer: every field but the names when they were interned.
    pub fn buf(&self) -> &FailureBuf {
        &self.buf
    }

    /// Lends the failure as the core's [`Failure`] (`FailureBuf::with`, the
    /// interned names in place of the buffer's).
    #[inline]
    pub fn with<R>(&self, f: impl FnOnce(&Failure<'_>) -> R) -> R {
        let Some(list) = &self.interned else { return self.buf.with(f) };
        with_names(list, |names| self.buf.with(|g| f(&Failure { error_names: names, ..*g })))
    }
}

/// Lends an interned list as the core's names (on the stack for the common short chains).
#[inline]
pub(crate) fn with_names<R>(list: &[String], f: impl FnOnce(&[&str]) -> R) -> R {
    const N: usize = 16;
    let mut small = [""; N];
    let heap: Vec<&str>;
    let names: &[&str] = if list.len() <= N {
        for (d, s) in small.iter_mut().zip(list.iter()) {
            *d = s.as_str();
        }
        small.get(..list.len()).unwrap_or(&[])
    } else {
        heap = list.iter().map(String::as_str).collect();
        &heap
    };
    f(names)
}

/// Checks an HTTP status: the core's rule (`classify::check_status`, 0–999), as Python's.
#[inline]
pub(crate) fn status_of(s: f64) -> Result<u16> {
    retrycore::classify::check_status(s, "status").map_err(Error::of_config)
}

/// The message of a value that threw while the JS layer read it (the core's
/// `surface::unreadable`, as Python's): its type name and message as JS read them.
pub fn unreadable(type_name: &str, message: &str) -> String {
    retrycore::surface::unreadable(type_name, message)
}

/// A `[name, value]` pair of a flat header list (`chunks_exact(2)` gives only pairs).
#[inline]
pub(crate) fn pair(p: &[String]) -> Option<(&str, &str)> {
    match p {
        [n, v] => Some((n.as_str(), v.as_str())),
        _ => None,
    }
}

/// Pairs a flat `[name, value, …]` list, moving the strings (an odd last
/// name is dropped; callers refuse odd lists first).
fn pairs(flat: Vec<String>) -> Vec<(String, String)> {
    let mut out = Vec::with_capacity(flat.len() / 2);
    let mut it = flat.into_iter();
    while let (Some(n), Some(v)) = (it.next(), it.next()) {
        out.push((n, v));
    }
    out
}

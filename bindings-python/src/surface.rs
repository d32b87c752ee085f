//! The Python surface, declared once ([`DECLARATIONS`]): `build.rs` reads
//! this file and expands each `module` section into `$OUT_DIR/<module>.rs`,
//! which that module of the crate includes at its end. The declaration
//! language is described in `build.rs`. This file is not compiled into the
//! extension module; it is the generator's input.

/// The declared items, by the module they belong to.
pub const DECLARATIONS: &str = r#"
module policy

/// One row of a schedule, in seconds.
class ScheduleRow {
    retry: u32, attempt: u32, low: f64, mid: f64, high: f64, cumulative_low: f64, cumulative_high: f64
}
    repr "ScheduleRow(retry={retry}, attempt={attempt}, low={low}, mid={mid}, high={high}, "
    repr "cumulative_high={cumulative_high})"

class Proceed {
    attempt: u32, max_attempts: u32
    /// Seconds the call may take (None: unbounded).
    timeout: Option<f64>
}
    repr "Proceed(attempt={attempt}, max_attempts={max_attempts}, timeout={timeout:?})"

class Reject {
    reason: &'static str
    /// Seconds until the call could be admitted (None: not by waiting).
    retry_after: Option<f64>
    budget: Option<String>
}
    repr "Reject(reason={reason:?}, retry_after={retry_after:?}, budget={budget:?})"

class Retry {
    retry: u32, attempt: u32, delay: f64, backoff: f64, server_delay: Option<f64>, capped: bool
    category: &'static str
}
    repr "Retry(retry={retry}, attempt={attempt}, delay={delay}, category={category:?})"

class GiveUp {
    reason: &'static str, category: &'static str, exhausted: bool, attempts: u32, budget: Option<String>
    budget_reason: Option<&'static str>
}
    repr "GiveUp(reason={reason:?}, category={category:?}, attempts={attempts})"

/// What a hook receives.
class RetryEvent {
    /// The attempt that failed (or was refused).
    attempt: u32
    /// The retry number about to happen (on_retry), else None.
    retry: Option<u32>
    max_attempts: u32, category: Option<&'static str>
    /// The decided delay in seconds (on_retry).
    delay: Option<f64>
    /// The give-up reason (on_give_up).
    reason: Option<&'static str>
    budget: Option<String>, exception: Option<Py<PyAny>>, key: Py<PyString>
}
    repr "RetryEvent(attempt={attempt}, retry={retry:?}, category={category:?}, delay={delay:?}, reason={reason:?})"

module breaker

/// A breaker state change.
class PyTransition = Transition {
    /// The state before.
    from_state: &'static str
    /// The state after.
    to_state: &'static str
    /// Why (`failure_rate`, `wait_elapsed`, `manual`, …).
    reason: &'static str
    /// When, in seconds on the monotonic clock.
    at: f64
}
    repr "Transition({from_state} -> {to_state}, reason={reason:?}, at={at})"

/// The answer of `try_acquire`.
class Acquired {
    permitted: bool, permit: Option<Py<PyPermit>>, trial: bool, state: &'static str
    /// Seconds until a trial call would be admitted (None: not by waiting).
    retry_after: Option<f64>
    transition: Option<Py<PyTransition>>
}

/// A budget refusal.
class PyRefusal = Refusal { budget: String, reason: &'static str, detail: String }
    repr "Refusal(budget={budget:?}, reason={reason:?})"
    truthy

module misc

/// What response headers say about retrying.
class ServerAdvice {
    /// The delay the server asked for, in seconds.
    delay: Option<f64>
    /// The header it came from.
    source: Option<&'static str>
    /// A negative or malformed gRPC pushback: don't retry.
    declined: bool
    /// `Stripe-Should-Retry` / `x-should-retry`.
    should_retry: Option<bool>
    /// `x-retry-exhausted: 1`.
    retry_exhausted: bool
}

/// One lint finding.
class Finding { code: &'static str, severity: &'static str, field: String, message: String }
    repr "Finding({code:?}, {severity:?}, field={field:?})"
"#;

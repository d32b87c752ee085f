//! What the caller observes at the end of a call, decided once for every host.
//!
//! A session answers each attempt ([`Gate`], [`Decision`]); the host then
//! has to *show* the end of the call: return the value, re-raise the
//! original error, or raise one of retrycore's errors with a code, a
//! reason and numbers. When each host wrote that mapping itself they came
//! out different (a failure nothing retries re-raised in one host and
//! wrapped in another; a budget give-up coded `budget_exhausted` in one and
//! `retry_exhausted` in another). [`Ending`] is that mapping as data: a host
//! only turns it into its idiom (`raise`, `throw`, a rejected promise).
//!
//! The rules (`docs/sessions.md`, "What the caller observes"):
//! - a success returns the value; a returned non-ok response that nothing
//!   retries is a value too, returned as is;
//! - `not_retryable` and `server_declined`: the original error propagates
//!   unchanged and unmarked (what tenacity and cockatiel users expect);
//! - `cancelled`: the host's own cancellation error propagates;
//! - `attempts_exhausted`, `deadline_exceeded`, `retry_after_too_long` and
//!   `breaker_open` after at least one attempt: `RetryError`, code
//!   `retry_exhausted`, with the reason, the calls made and the last error
//!   as its cause;
//! - `budget_exhausted` and `throttled` after at least one attempt:
//!   `BudgetExhaustedError` (a `RetryError`), code `budget_exhausted`;
//! - the first attempt refused: `CircuitOpenError` (code `breaker_open`)
//!   or `BudgetExhaustedError` (code `throttled` or `concurrency_limited`);
//! - every `RetryError` carries the retry-exhausted marker, so an outer
//!   layer never retries it again;
//! - a returned response whose ending is [`Ending::Propagate`] (nothing
//!   retries it) is returned as the value, not raised;
//! - `on_give_up` fires as [`fires_on_give_up`] says.
//!
//! [`after_gate`] ([`after_reject`]) and [`after_decision`] put it together for a step: the
//! `on_retry` event of a retry, or the end of the call ([`Ended`]: the
//! `on_give_up` event, the ending, its error's facts and message), which a
//! host maps without composing anything itself.
//!
//! [`Gate`]: crate::session::Gate
//! [`Decision`]: crate::session::Decision

use crate::breaker::State;
use crate::session::{Decision, Gate, GiveUpReason, RejectReason, RetrySession};
use std::fmt::Write as _;

/// The class of error a host raises at the end of a call.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Raise {
    /// `RetryError`: retrying stopped.
    RetryError,
    /// `BudgetExhaustedError`, a `RetryError` whose budget refused.
    BudgetExhausted,
    /// `CircuitOpenError`: the breaker refused the first attempt.
    CircuitOpen,
    /// `LimiterRejectedError`: the policy's limiter refused the first
    /// attempt (code `limiter_rejected`, the limiter's reason, `retry_after`).
    LimiterRejected,
}

impl Raise {
    /// Returns the stable name (`"retry_error"`, `"budget_exhausted"`, `"circuit_open"`).
    pub const fn code(self) -> &'static str {
        match self {
            Raise::RetryError => "retry_error",
            Raise::BudgetExhausted => "budget_exhausted",
            Raise::CircuitOpen => "circuit_open",
            Raise::LimiterRejected => "limiter_rejected",
        }
    }
}

/// How a call ends, as the caller sees it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Ending {
    /// Return the value (or the response) the last attempt gave.
    Return,
    /// Re-raise the last attempt's error unchanged, unmarked.
    Propagate,
    /// Raise the host's cancellation error (`CancelledError`, `signal.reason`).
    Cancelled,
    /// Raise one of retrycore's errors.
    Raise {
        /// Which class.
        class: Raise,
        /// Its `code`.
        code: &'static str,
        /// Its `reason` (a [`GiveUpReason`] or [`RejectReason`] code).
        reason: &'static str,
        /// It carries the retry-exhausted marker (outer layers never retry it).
        marked: bool,
        /// The last error (or response) is its cause.
        has_cause: bool,
    },
}

impl Ending {
    /// The ending of a call whose session gave up with `reason` after at
    /// least one attempt.
    pub fn of_give_up(reason: GiveUpReason) -> Ending {
        match reason {
            GiveUpReason::NotRetryable | GiveUpReason::ServerDeclined => Ending::Propagate,
            GiveUpReason::Cancelled => Ending::Cancelled,
            GiveUpReason::BudgetExhausted | GiveUpReason::Throttled => Ending::Raise {
                class: Raise::BudgetExhausted,
                code: "budget_exhausted",
                reason: reason.code(),
                marked: true,
                has_cause: true,
            },
            GiveUpReason::AttemptsExhausted
            | GiveUpReason::DeadlineExceeded
            | GiveUpReason::RetryAfterTooLong
            | GiveUpReason::BreakerOpen
            | GiveUpReason::LimiterRejected => Ending::Raise {
                class: Raise::RetryError,
                code: "retry_exhausted",
                reason: reason.code(),
                marked: true,
                has_cause: true,
            },
        }
    }

    /// The ending of a call whose attempt was refused by `before_attempt`,
    /// after `attempts_made` calls (0: the first attempt was refused), the
    /// session having given up with `give_up` (see
    /// [`RetrySession::give_up_reason`](crate::session::RetrySession::give_up_reason)).
    pub fn of_reject(reason: RejectReason, attempts_made: u32, give_up: Option<GiveUpReason>) -> Ending {
        if attempts_made > 0 {
            return Ending::of_give_up(give_up.unwrap_or(match reason {
                RejectReason::BreakerOpen => GiveUpReason::BreakerOpen,
                RejectReason::Throttled => GiveUpReason::Throttled,
                RejectReason::DeadlineExceeded => GiveUpReason::DeadlineExceeded,
                RejectReason::ConcurrencyLimited => GiveUpReason::BudgetExhausted,
                RejectReason::LimiterRejected => GiveUpReason::LimiterRejected,
            }));
        }
        let class = match reason {
            RejectReason::BreakerOpen => Raise::CircuitOpen,
            RejectReason::Throttled | RejectReason::ConcurrencyLimited => Raise::BudgetExhausted,
            RejectReason::DeadlineExceeded => Raise::RetryError,
            RejectReason::LimiterRejected => Raise::LimiterRejected,
        };
        let code = match reason {
            RejectReason::DeadlineExceeded => "retry_exhausted",
            r => r.code(),
        };
        // Local refusals with a retry_after are not RetryErrors: unmarked.
        let marked = !matches!(class, Raise::CircuitOpen | Raise::LimiterRejected);
        Ending::Raise { class, code, reason: reason.code(), marked, has_cause: false }
    }

    /// The ending of a call whose first attempt the policy's limiter
    /// refused with `rejection` (its reason is the ending's).
    pub fn of_limiter_rejection(rejection: &crate::limiters::Rejection) -> Ending {
        Ending::Raise {
            class: Raise::LimiterRejected,
            code: RejectReason::LimiterRejected.code(),
            reason: rejection.reason,
            marked: false,
            has_cause: false,
        }
    }
}

impl Ending {
    /// Returns true when a give-up fallback (tenacity's
    /// `retry_error_callback`, Polly's Fallback; docs/sessions.md, "Give-up
    /// fallbacks") answers the call instead of this ending: every ending
    /// that raises an error — retrycore's, or the last error re-raised —
    /// including a refused first attempt. Never for a value or a response
    /// that goes back as is (`response`: the last outcome is a returned
    /// value, so [`Ending::Propagate`] returns it) nor for a cancellation.
    pub const fn falls_back(self, response: bool) -> bool {
        match self {
            Ending::Raise { .. } => true,
            Ending::Propagate => !response,
            Ending::Return | Ending::Cancelled => false,
        }
    }
}

/// What the message of an ending's error says besides its class, code and
/// reason: the numbers and names the host has at the end of the call, all
/// from the session's gate or decision (and the breaker, for its name and
/// state).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct EndingFacts<'a> {
    /// The calls made (0: the first attempt was refused).
    pub attempts: u32,
    /// The category of the last failure, if one was seen.
    pub category: Option<&'a str>,
    /// The budget that refused, if one did.
    pub budget: Option<&'a str>,
    /// That budget's own reason (`budget_exhausted`, `throttled`, …), if it differs.
    pub budget_reason: Option<&'a str>,
    /// The breaker's name (a refused first attempt), if it has one.
    pub breaker: Option<&'a str>,
    /// The breaker's state when it refused (default `open`).
    pub state: Option<&'a str>,
    /// How long until the breaker lets a call through, in nanoseconds
    /// (`None`: not by waiting, or not known).
    pub retry_after: Option<u64>,
    /// The limiter's name (a refused first attempt), if one refused.
    pub limiter: Option<&'a str>,
}

impl Ending {
    /// Returns the message of the error this ending raises (`None` for an
    /// ending that raises none of retrycore's errors): one text per ending
    /// for every host (docs/sessions.md, "What the caller observes"). The
    /// last error is the raised error's cause, not part of its message.
    ///
    /// - a refused first attempt by a breaker: `circuit breaker "payments"
    ///   is open; retry after 1.5s`;
    /// - any other refused first attempt: `gave up before the first attempt:
    ///   throttled (budget "b": throttled)`;
    /// - after attempts: `gave up after 3 attempts: attempts_exhausted (last
    ///   failure: timeout)`, a budget's give-up adding `(budget "b":
    ///   budget_exhausted)`.
    pub fn message(&self, f: &EndingFacts<'_>) -> Option<String> {
        let Ending::Raise { class, reason, .. } = *self else { return None };
        if class == Raise::LimiterRejected {
            let r = crate::limiters::Rejection {
                limiter: f.limiter.unwrap_or_default().to_owned(),
                reason,
                retry_after: f.retry_after,
            };
            return Some(r.message());
        }
        if class == Raise::CircuitOpen {
            let mut m = String::from("circuit breaker");
            if let Some(name) = f.breaker {
                let _ = write!(m, " {name:?}");
            }
            m.push_str(" is ");
            m.push_str(f.state.unwrap_or("open"));
            if let Some(ns) = f.retry_after {
                m.push_str("; retry after ");
                m.push_str(&crate::duration::format_duration(ns));
            }
            return Some(m);
        }
        let mut m = match f.attempts {
            0 => format!("gave up before the first attempt: {reason}"),
            1 => format!("gave up after 1 attempt: {reason}"),
            n => format!("gave up after {n} attempts: {reason}"),
        };
        if let (Some(c), true) = (f.category, f.attempts > 0) {
            let _ = write!(m, " (last failure: {c})");
        }
        if let Some(b) = f.budget {
            let _ = write!(m, " (budget {b:?}: {})", f.budget_reason.unwrap_or(reason));
        }
        Some(m)
    }
}

/// The longest part of a thrown value's message a host quotes in
/// "could not be read" (see [`unreadable`]), in characters.
pub const UNREADABLE_MESSAGE_CHARS: usize = 200;

/// Returns the message of the `invalid_type` error a host raises when a
/// caller's value raised (or threw) while the host read it — a hostile
/// getter, a revoked proxy, a `__str__` that fails: `could not be read:
/// <type>: <message>`, the message cut to [`UNREADABLE_MESSAGE_CHARS`]
/// characters. The host gives the type name (Python's class name, a JS
/// error's `name`) and the message (`str(e)`, `e.message`) as it could
/// read them, `""` when it could not; the original is the error's cause.
pub fn unreadable(type_name: &str, message: &str) -> String {
    let cut = message.char_indices().nth(UNREADABLE_MESSAGE_CHARS).map_or(message, |(i, _)| &message[..i]);
    match (type_name.is_empty(), cut.is_empty()) {
        (false, false) => format!("could not be read: {type_name}: {cut}"),
        (false, true) => format!("could not be read: {type_name}"),
        (true, false) => format!("could not be read: {cut}"),
        (true, true) => "could not be read".to_owned(),
    }
}

/// Returns true when an `on_give_up` hook fires at the end of a call:
/// after every give-up that followed at least one attempt — a failure
/// nothing retries, a server's decline, a thrown cancellation error, a
/// response returned as is, a later attempt refused — and never for a
/// success, a refused first attempt or the caller's own cancellation (the
/// caller knows).
pub const fn fires_on_give_up(attempts_made: u32, cancelled_by_caller: bool, succeeded: bool) -> bool {
    attempts_made > 0 && !cancelled_by_caller && !succeeded
}

/// The numbers an `on_retry` hook carries, from a `Retry` decision's
/// `retry` n: the call that failed is call n, and call n + 1 comes next.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct RetryNumbers {
    /// The number of the call that failed (1 and 2 for a call that
    /// succeeds on its third try).
    pub attempt: u32,
    /// The retry about to happen (n).
    pub retry: u32,
    /// The number of the coming call (n + 1): `Retry.attempt`, `Proceed.attempt`.
    pub next_attempt: u32,
}

impl RetryNumbers {
    /// Returns the numbers for retry `retry` (≥ 1).
    pub const fn of_retry(retry: u32) -> RetryNumbers {
        RetryNumbers { attempt: retry, retry, next_attempt: retry.saturating_add(1) }
    }
}

/// What an `on_retry` hook carries after a `Retry` decision
/// (docs/sessions.md, "What the caller observes"); a host adds the error
/// and the key.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct RetryEvent {
    /// The number of the call that failed ([`RetryNumbers::attempt`]).
    pub attempt: u32,
    /// The retry about to happen (n).
    pub retry: u32,
    /// The failure's category.
    pub category: &'static str,
    /// The decided delay, in nanoseconds.
    pub delay: u64,
    /// The policy's `max_attempts`.
    pub max_attempts: u32,
}

/// What an `on_give_up` hook carries (see [`Ended::on_give_up`]); a host
/// adds the error and the key.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct GiveUpEvent<'a> {
    /// The calls made.
    pub attempt: u32,
    /// The category of the last failure.
    pub category: Option<&'static str>,
    /// The give-up reason.
    pub reason: &'static str,
    /// The budget that refused, if one did.
    pub budget: Option<&'a str>,
    /// The policy's `max_attempts`.
    pub max_attempts: u32,
}

/// The end of a call as the caller observes it, after a gate that refused
/// or a decision to give up: whether `on_give_up` fires and what it
/// carries, how the call ends, and every fact of the error it raises with
/// that error's message. A host maps it to its idiom; it decides nothing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ended {
    /// How the call ends.
    pub ending: Ending,
    /// The give-up reason `on_give_up` carries: the raised error's reason,
    /// else the reason the session gave up with.
    pub reason: &'static str,
    /// `on_give_up` fires ([`fires_on_give_up`]).
    pub fires_on_give_up: bool,
    /// The policy's `max_attempts`.
    pub max_attempts: u32,
    /// The calls made (0: the first attempt was refused).
    pub attempts: u32,
    /// The category of the last failure, if one was seen.
    pub category: Option<&'static str>,
    /// The budget that refused, if one did.
    pub budget: Option<String>,
    /// That budget's own reason (`budget_exhausted`, `throttled`, …), if it differs.
    pub budget_reason: Option<&'static str>,
    /// How long until the call could be admitted, in nanoseconds (`None`:
    /// not by waiting, or not a refused attempt).
    pub retry_after: Option<u64>,
    /// The breaker's name, when the ending is its refusal of the first attempt.
    pub breaker: Option<String>,
    /// The breaker's state when it refused (idem).
    pub state: Option<&'static str>,
    /// The limiter's name, when the ending is its refusal of the first attempt.
    pub limiter: Option<String>,
    /// The message of the error the ending raises ([`Ending::message`];
    /// `None`: it raises none of retrycore's errors).
    pub message: Option<String>,
}

impl Ended {
    /// Returns the `on_give_up` event, when the hook fires.
    pub fn on_give_up(&self) -> Option<GiveUpEvent<'_>> {
        self.fires_on_give_up.then_some(GiveUpEvent {
            attempt: self.attempts,
            category: self.category,
            reason: self.reason,
            budget: self.budget.as_deref(),
            max_attempts: self.max_attempts,
        })
    }

    /// Returns the facts of the message (see [`Ending::message`]).
    pub fn facts(&self) -> EndingFacts<'_> {
        EndingFacts {
            attempts: self.attempts,
            category: self.category,
            budget: self.budget.as_deref(),
            budget_reason: self.budget_reason,
            breaker: self.breaker.as_deref(),
            state: self.state,
            retry_after: self.retry_after,
            limiter: self.limiter.as_deref(),
        }
    }

    /// Fills in the message, which the facts decide.
    fn with_message(mut self) -> Ended {
        self.message = self.ending.message(&self.facts());
        self
    }
}

/// Returns the end of a call that a breaker used on its own refused
/// (`Acquire::Rejected` with `state` and `retry_after`, `u64::MAX`: not by
/// waiting): a refused first attempt, named by the breaker's `name`. No
/// policy is involved, so `max_attempts` is 0.
pub fn breaker_refusal(name: Option<&str>, state: State, retry_after: u64) -> Ended {
    let ending = Ending::of_reject(RejectReason::BreakerOpen, 0, None);
    let ended = Ended {
        ending,
        reason: RejectReason::BreakerOpen.code(),
        fires_on_give_up: false,
        max_attempts: 0,
        attempts: 0,
        category: None,
        budget: None,
        budget_reason: None,
        retry_after: (retry_after != u64::MAX).then_some(retry_after),
        breaker: name.map(str::to_owned),
        state: Some(state.code()),
        limiter: None,
        message: None,
    };
    ended.with_message()
}

/// Returns the message of [`breaker_refusal`]'s end alone, the same text,
/// without building the rest (a breaker shedding load refuses every call).
pub fn breaker_refusal_message(name: Option<&str>, state: State, retry_after: u64) -> String {
    let facts = EndingFacts {
        breaker: name,
        state: Some(state.code()),
        retry_after: (retry_after != u64::MAX).then_some(retry_after),
        ..EndingFacts::default()
    };
    Ending::of_reject(RejectReason::BreakerOpen, 0, None).message(&facts).unwrap_or_default()
}

/// What the caller observes after a decision (docs/sessions.md, "What the
/// caller observes").
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Observed {
    /// A retry: what `on_retry` carries (nothing is allocated).
    Retry(RetryEvent),
    /// A give-up: the end of the call.
    End(Ended),
}

/// Returns what the caller observes after `gate`, the answer `session`
/// just gave to `before_attempt`: `None` when the attempt proceeds, else
/// the end of the call ([`after_reject`]).
pub fn after_gate(session: &RetrySession, gate: &Gate) -> Option<Ended> {
    match gate {
        Gate::Proceed { .. } => None,
        Gate::Reject { reason, retry_after, budget } => {
            Some(after_reject(session, *reason, *retry_after, budget.as_deref()))
        }
    }
}

/// Returns the end of the call after `session` refused an attempt
/// (`Gate::Reject` with `reason`, `retry_after` and `budget`). For a
/// breaker's refusal of the first attempt it locks the session's breaker
/// to read its name and state (the message names them), as every other
/// breaker read does.
pub fn after_reject(
    session: &RetrySession,
    reason: RejectReason,
    retry_after: Option<std::time::Duration>,
    budget: Option<&str>,
) -> Ended {
    let (attempts, give_up) = (session.attempts(), session.give_up_reason());
    let limiter = match (reason, attempts, session.limiter_rejection()) {
        (RejectReason::LimiterRejected, 0, Some(r)) => Some(r),
        _ => None,
    };
    let ending = match limiter {
        Some(r) => Ending::of_limiter_rejection(r),
        None => Ending::of_reject(reason, attempts, give_up),
    };
    let (breaker, state) = match (ending, session.policy().breaker()) {
        (Ending::Raise { class: Raise::CircuitOpen, .. }, Some(b)) => {
            let b = b.lock().unwrap_or_else(|p| p.into_inner());
            (b.config().name.clone(), Some(b.state().code()))
        }
        _ => (None, None),
    };
    let shown = match ending {
        Ending::Raise { reason, .. } => reason,
        _ => give_up.map_or(reason.code(), GiveUpReason::code),
    };
    let ended = Ended {
        ending,
        reason: shown,
        fires_on_give_up: fires_on_give_up(attempts, false, false),
        max_attempts: session.policy().config().max_attempts,
        attempts,
        category: session.last_category().map(|c| c.code()),
        budget: budget.map(str::to_owned),
        budget_reason: None,
        retry_after: retry_after.map(crate::duration::from_std),
        breaker,
        state,
        limiter: limiter.map(|r| r.limiter.clone()),
        message: None,
    };
    ended.with_message()
}

/// Returns what the caller observes after `decision`, the answer `session`
/// just gave to `on_failure`: the `on_retry` event of a retry, else the end
/// of the call.
pub fn after_decision(session: &RetrySession, decision: &Decision) -> Observed {
    let max_attempts = session.policy().config().max_attempts;
    match decision {
        Decision::Retry { retry, delay, category, .. } => Observed::Retry(RetryEvent {
            attempt: RetryNumbers::of_retry(*retry).attempt,
            retry: *retry,
            category: category.code(),
            delay: crate::duration::from_std(*delay),
            max_attempts,
        }),
        Decision::GiveUp { reason, category, refusal, attempts, .. } => {
            let ending = Ending::of_give_up(*reason);
            let ended = Ended {
                ending,
                reason: match ending {
                    Ending::Raise { reason, .. } => reason,
                    _ => reason.code(),
                },
                fires_on_give_up: fires_on_give_up(*attempts, false, false),
                max_attempts,
                attempts: *attempts,
                category: Some(category.code()),
                budget: refusal.as_ref().map(|r| r.budget.clone()),
                budget_reason: refusal.as_ref().map(|r| r.reason),
                retry_after: None,
                breaker: None,
                state: None,
                limiter: None,
                message: None,
            };
            Observed::End(ended.with_message())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn give_ups() {
        assert_eq!(Ending::of_give_up(GiveUpReason::NotRetryable), Ending::Propagate);
        assert_eq!(Ending::of_give_up(GiveUpReason::ServerDeclined), Ending::Propagate);
        assert_eq!(Ending::of_give_up(GiveUpReason::Cancelled), Ending::Cancelled);
        for r in [GiveUpReason::BudgetExhausted, GiveUpReason::Throttled] {
            assert!(matches!(
                Ending::of_give_up(r),
                Ending::Raise { class: Raise::BudgetExhausted, code: "budget_exhausted", marked: true, .. }
            ));
        }
        for r in [
            GiveUpReason::AttemptsExhausted,
            GiveUpReason::DeadlineExceeded,
            GiveUpReason::RetryAfterTooLong,
            GiveUpReason::BreakerOpen,
        ] {
            let e = Ending::of_give_up(r);
            assert!(matches!(e, Ending::Raise { class: Raise::RetryError, code: "retry_exhausted", marked: true, .. }));
            assert!(matches!(e, Ending::Raise { reason, .. } if reason == r.code()));
        }
        // Every marked ending is exactly a reason that marks its error exhausted.
        for r in GiveUpReason::ALL {
            let marked = matches!(Ending::of_give_up(r), Ending::Raise { marked: true, .. });
            assert_eq!(marked, r.marks_exhausted(), "{r:?}");
        }
    }

    #[test]
    fn rejects() {
        assert!(matches!(
            Ending::of_reject(RejectReason::BreakerOpen, 0, Some(GiveUpReason::BreakerOpen)),
            Ending::Raise { class: Raise::CircuitOpen, code: "breaker_open", marked: false, has_cause: false, .. }
        ));
        assert!(matches!(
            Ending::of_reject(RejectReason::Throttled, 0, None),
            Ending::Raise { class: Raise::BudgetExhausted, code: "throttled", .. }
        ));
        assert!(matches!(
            Ending::of_reject(RejectReason::ConcurrencyLimited, 0, None),
            Ending::Raise { class: Raise::BudgetExhausted, code: "concurrency_limited", .. }
        ));
        assert!(matches!(
            Ending::of_reject(RejectReason::BreakerOpen, 2, Some(GiveUpReason::BreakerOpen)),
            Ending::Raise {
                class: Raise::RetryError,
                code: "retry_exhausted",
                reason: "breaker_open",
                has_cause: true,
                ..
            }
        ));
        assert!(matches!(
            Ending::of_reject(RejectReason::ConcurrencyLimited, 1, Some(GiveUpReason::BudgetExhausted)),
            Ending::Raise { class: Raise::BudgetExhausted, code: "budget_exhausted", reason: "budget_exhausted", .. }
        ));
    }

    #[test]
    fn one_message_per_ending() {
        let f = |attempts| EndingFacts { attempts, category: Some("timeout"), ..Default::default() };
        let m = |e: Ending, f: EndingFacts<'_>| e.message(&f).unwrap();
        assert_eq!(
            m(Ending::of_give_up(GiveUpReason::AttemptsExhausted), f(3)),
            "gave up after 3 attempts: attempts_exhausted (last failure: timeout)"
        );
        assert_eq!(
            m(Ending::of_give_up(GiveUpReason::DeadlineExceeded), f(1)),
            "gave up after 1 attempt: deadline_exceeded (last failure: timeout)"
        );
        let budget = EndingFacts { budget: Some("b"), budget_reason: Some("throttled"), ..f(2) };
        assert_eq!(
            m(Ending::of_give_up(GiveUpReason::BudgetExhausted), budget),
            "gave up after 2 attempts: budget_exhausted (last failure: timeout) (budget \"b\": throttled)"
        );
        assert_eq!(
            m(Ending::of_reject(RejectReason::DeadlineExceeded, 0, None), EndingFacts::default()),
            "gave up before the first attempt: deadline_exceeded"
        );
        let throttled = EndingFacts { budget: Some("b"), ..EndingFacts::default() };
        assert_eq!(
            m(Ending::of_reject(RejectReason::Throttled, 0, None), throttled),
            "gave up before the first attempt: throttled (budget \"b\": throttled)"
        );
        let open =
            EndingFacts { breaker: Some("payments"), retry_after: Some(1_500_000_000), ..EndingFacts::default() };
        assert_eq!(
            m(Ending::of_reject(RejectReason::BreakerOpen, 0, None), open),
            "circuit breaker \"payments\" is open; retry after 1.5s"
        );
        let forced = EndingFacts { state: Some("forced_open"), ..EndingFacts::default() };
        assert_eq!(m(Ending::of_reject(RejectReason::BreakerOpen, 0, None), forced), "circuit breaker is forced_open");
        for e in [Ending::Return, Ending::Propagate, Ending::Cancelled] {
            assert_eq!(e.message(&f(1)), None);
        }
    }

    #[test]
    fn unreadable_values_are_named_and_quoted() {
        assert_eq!(unreadable("ValueError", "boom"), "could not be read: ValueError: boom");
        assert_eq!(unreadable("Error", ""), "could not be read: Error");
        assert_eq!(unreadable("", ""), "could not be read");
        let long = "é".repeat(UNREADABLE_MESSAGE_CHARS + 5);
        let m = unreadable("E", &long);
        assert_eq!(m.chars().filter(|&c| c == 'é').count(), UNREADABLE_MESSAGE_CHARS);
    }

    #[test]
    fn give_up_hook() {
        assert!(fires_on_give_up(1, false, false));
        assert!(!fires_on_give_up(0, false, false), "a refused first attempt");
        assert!(!fires_on_give_up(2, true, false), "the caller cancelled");
        assert!(!fires_on_give_up(3, false, true), "a success");
    }

    #[test]
    fn retry_numbers() {
        let n = RetryNumbers::of_retry(1);
        assert_eq!((n.attempt, n.retry, n.next_attempt), (1, 1, 2));
    }

    mod observed {
        use super::super::*;
        use crate::classify::Failure;
        use crate::policy::{PolicyConfig, RetryPolicy};
        use crate::session::SessionOptions;

        const MS: u64 = 1_000_000;

        fn session(doc: &str) -> RetrySession {
            let p = RetryPolicy::new(PolicyConfig::from_json(doc).unwrap(), Some(1)).unwrap();
            p.session(SessionOptions { key: Some("k-1".into()), seed: Some(7), ..Default::default() }).unwrap()
        }

        fn failure(status: u16) -> Failure<'static> {
            Failure { status: Some(status), method: Some("GET"), ..Default::default() }
        }

        #[test]
        fn a_retry_carries_the_on_retry_event() {
            let mut s = session(r#"{"version": 1, "jitter": "none", "max_attempts": 4}"#);
            let g = s.before_attempt_ns(0).unwrap();
            assert_eq!(after_gate(&s, &g), None, "a proceeding gate shows nothing");
            let d = s.on_failure_ns(MS, &failure(503)).unwrap();
            let want = RetryEvent { attempt: 1, retry: 1, category: "server_error", delay: 100 * MS, max_attempts: 4 };
            assert_eq!(after_decision(&s, &d), Observed::Retry(want));
        }

        #[test]
        fn a_give_up_fires_on_give_up_and_raises_with_its_message() {
            let mut s = session(r#"{"version": 1, "jitter": "none", "max_attempts": 2}"#);
            s.before_attempt_ns(0).unwrap();
            s.on_failure_ns(MS, &failure(503)).unwrap();
            s.before_attempt_ns(200 * MS).unwrap();
            let d = s.on_failure_ns(201 * MS, &failure(503)).unwrap();
            let Observed::End(e) = after_decision(&s, &d) else { panic!("{d:?}") };
            assert_eq!(e.ending, Ending::of_give_up(GiveUpReason::AttemptsExhausted));
            assert_eq!((e.attempts, e.category, e.budget.as_deref()), (2, Some("server_error"), None));
            assert_eq!(
                e.on_give_up(),
                Some(GiveUpEvent {
                    attempt: 2,
                    category: Some("server_error"),
                    reason: "attempts_exhausted",
                    budget: None,
                    max_attempts: 2
                })
            );
            assert_eq!(
                e.message.as_deref(),
                Some("gave up after 2 attempts: attempts_exhausted (last failure: server_error)")
            );
        }

        #[test]
        fn a_failure_nothing_retries_propagates_without_a_message() {
            let mut s = session(r#"{"version": 1}"#);
            s.before_attempt_ns(0).unwrap();
            let d = s.on_failure_ns(MS, &failure(404)).unwrap();
            let Observed::End(e) = after_decision(&s, &d) else { panic!("{d:?}") };
            assert_eq!((e.ending, e.message.as_deref()), (Ending::Propagate, None));
            assert_eq!(e.on_give_up().map(|g| g.reason), Some("not_retryable"));
        }

        #[test]
        fn a_budget_give_up_names_the_budget() {
            let doc = r#"{"version": 1, "jitter": "none",
                "budget": {"kind": "token_bucket", "name": "b", "capacity": 1}}"#;
            let mut s = session(doc);
            s.before_attempt_ns(0).unwrap();
            let d = s.on_failure_ns(MS, &failure(503)).unwrap();
            let Observed::End(e) = after_decision(&s, &d) else { panic!("{d:?}") };
            assert!(matches!(e.ending, Ending::Raise { class: Raise::BudgetExhausted, .. }), "{e:?}");
            assert_eq!(e.budget.as_deref(), Some("b"));
            assert_eq!(e.on_give_up().and_then(|g| g.budget), Some("b"));
            assert_eq!(e.message, e.ending.message(&e.facts()));
            assert!(e.message.as_deref().is_some_and(|m| m.contains("(budget \"b\": ")), "{:?}", e.message);
        }

        #[test]
        fn a_breaker_refusing_the_first_attempt_is_named_with_its_state() {
            let doc = r#"{"version": 1, "breaker": {"kind": "consecutive", "name": "payments"}}"#;
            let mut s = session(doc);
            let shared = s.policy().breaker().unwrap().clone();
            // A consecutive breaker admits a call 1 ns after its wait ends.
            shared.lock().unwrap().transition_to_open_for(1_500 * MS - 1, MS).unwrap();
            let g = s.before_attempt_ns(MS).unwrap();
            let e = after_gate(&s, &g).unwrap();
            assert!(matches!(e.ending, Ending::Raise { class: Raise::CircuitOpen, has_cause: false, .. }));
            assert_eq!((e.breaker.as_deref(), e.state), (Some("payments"), Some("open")));
            assert_eq!((e.attempts, e.category, e.retry_after), (0, None, Some(1_500 * MS)));
            assert_eq!(e.on_give_up(), None, "no on_give_up before the first attempt");
            assert_eq!(e.message.as_deref(), Some("circuit breaker \"payments\" is open; retry after 1.5s"));
            shared.lock().unwrap().transition_to(State::ForcedOpen, 0).unwrap();
            let mut s = s.policy().session(SessionOptions { key: Some("k-2".into()), ..Default::default() }).unwrap();
            let g = s.before_attempt_ns(MS).unwrap();
            let e = after_gate(&s, &g).unwrap();
            assert_eq!(e.state, Some("forced_open"));
            assert_eq!(e.message.as_deref(), Some("circuit breaker \"payments\" is forced_open"));
        }

        #[test]
        fn a_breaker_on_its_own_refuses_as_a_first_attempt() {
            let e = breaker_refusal(Some("payments"), State::Open, 1_500 * MS);
            assert!(matches!(e.ending, Ending::Raise { class: Raise::CircuitOpen, code: "breaker_open", .. }));
            assert_eq!((e.attempts, e.fires_on_give_up, e.retry_after), (0, false, Some(1_500 * MS)));
            assert_eq!(e.message.as_deref(), Some("circuit breaker \"payments\" is open; retry after 1.5s"));
            let e = breaker_refusal(None, State::ForcedOpen, u64::MAX);
            assert_eq!((e.retry_after, e.state), (None, Some("forced_open")));
            assert_eq!(e.message.as_deref(), Some("circuit breaker is forced_open"));
            // The message alone is the same text.
            for (name, state, ra) in [(Some("payments"), State::Open, 1_500 * MS), (None, State::ForcedOpen, u64::MAX)]
            {
                assert_eq!(Some(breaker_refusal_message(name, state, ra)), breaker_refusal(name, state, ra).message);
            }
        }

        #[test]
        fn a_later_attempt_refused_ends_as_a_give_up() {
            let doc = r#"{"version": 1, "jitter": "none", "breaker": {"kind": "consecutive", "name": "payments"}}"#;
            let mut s = session(doc);
            s.before_attempt_ns(0).unwrap();
            let d = s.on_failure_ns(MS, &failure(503)).unwrap();
            assert!(matches!(after_decision(&s, &d), Observed::Retry(_)));
            // The breaker opens while the session waits.
            s.policy().breaker().unwrap().lock().unwrap().transition_to_open_for(1_000 * MS, 2 * MS).unwrap();
            let g = s.before_attempt_ns(200 * MS).unwrap();
            let e = after_gate(&s, &g).unwrap();
            assert!(matches!(e.ending, Ending::Raise { class: Raise::RetryError, reason: "breaker_open", .. }));
            assert_eq!((e.breaker.as_deref(), e.state), (None, None), "only a refused first attempt names the breaker");
            assert_eq!(e.on_give_up().map(|g| (g.attempt, g.category)), Some((1, Some("server_error"))));
            assert_eq!(
                e.message.as_deref(),
                Some("gave up after 1 attempt: breaker_open (last failure: server_error)")
            );
        }
    }

    #[test]
    fn a_fallback_answers_every_ending_that_raises() {
        let raise = Ending::of_give_up(GiveUpReason::AttemptsExhausted);
        assert!(raise.falls_back(false) && raise.falls_back(true));
        let propagate = Ending::of_give_up(GiveUpReason::NotRetryable);
        assert!(propagate.falls_back(false) && !propagate.falls_back(true));
        assert!(!Ending::of_give_up(GiveUpReason::Cancelled).falls_back(false));
        assert!(!Ending::Return.falls_back(true));
        assert!(Ending::of_reject(RejectReason::BreakerOpen, 0, None).falls_back(false));
    }
}

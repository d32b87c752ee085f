//! Limiters: how many calls may run at once, and how fast.
//!
//! Why limiters next to retries? Retries raise the instant concurrency on a
//! downstream that is already struggling: every caller that failed comes
//! back, and the ones still in flight are slower than usual. A breaker
//! stops calling a downstream that is failing; a budget caps the share of
//! retries; a limiter caps what reaches the downstream at all — a
//! semaphore with a wait timeout (bulkhead), a rate (token bucket, fixed or
//! sliding window), a concurrency limit that adapts to the latency or the
//! drops it sees (AIMD, Gradient2), or AWS's adaptive client rate limiter.
//! A queue cap rejects instead of queueing without end, and a
//! [`Registry`] keeps one limiter per downstream so that one slow
//! dependency cannot take every slot (docs/limiters.md).
//!
//! Before an attempt, [`Limiter::acquire`] answers one of:
//! - [`Decision::Proceed`] — go now;
//! - [`Decision::Delay`] — a permit is reserved: sleep `wait`, cancellably,
//!   then go (rate limiters; [`Limiter::cancel`] returns the permit when the
//!   sleep is abandoned);
//! - [`Decision::Queued`] — wait for a slot for at most `max_wait`: the
//!   host wakes the waiter whose ticket [`Limiter::release`] returns, and
//!   calls [`Limiter::cancel`] when the wait runs out or is cancelled
//!   (bulkhead);
//! - [`Decision::Reject`] — a [`Rejection`] with its reason and, when the
//!   limiter knows it, `retry_after`.
//!
//! A call that proceeded reports its end with [`Limiter::release`] (its
//! latency and whether the downstream signalled overload), which frees its
//! slot and feeds the adaptive algorithms.
//!
//! Time is an argument (`now`, monotonic nanoseconds); a `now` earlier than
//! one already seen counts as equal to it. Memory is bounded: a queue by
//! its `queue_limit`, a sliding window by its segments plus its queue.

mod adaptive;
mod aws;
mod bulkhead;
mod config;
mod rate;
mod registry;
mod sliding;

pub use config::{AimdParams, AwsParams, Gradient2Params, LimiterConfig, LimiterKind, Wait};
pub use registry::Registry;

use crate::classify::Category;
use crate::json::Value;
use crate::{Error, ErrorCode, Result};
use std::sync::{Arc, Mutex};

/// A limiter shared by reference: by the sessions of a policy, and by the
/// policies that call one downstream (docs/limiters.md, "In a policy").
pub type SharedLimiter = Arc<Mutex<Limiter>>;

/// The answer to "may this attempt go now?".
#[derive(Clone, Debug, PartialEq)]
pub enum Decision {
    /// Go now.
    Proceed,
    /// A permit is reserved for `now + wait`: sleep `wait` (cancellably),
    /// then go; abandoning the sleep calls [`Limiter::cancel`] with `ticket`.
    Delay {
        /// Nanoseconds to sleep.
        wait: u64,
        /// What [`Limiter::cancel`] takes to return the reserved permit.
        ticket: u64,
    },
    /// Wait for a slot for at most `max_wait`; [`Limiter::release`] returns
    /// `ticket` when the slot is this waiter's.
    Queued {
        /// The waiter's ticket.
        ticket: u64,
        /// Nanoseconds to wait at most before calling [`Limiter::cancel`]
        /// (`None`: no bound; the caller's cancellation ends the wait).
        max_wait: Option<u64>,
    },
    /// Do not call the downstream now.
    Reject(Rejection),
}

/// Why a limiter refused an attempt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rejection {
    /// The limiter's name.
    pub limiter: String,
    /// A stable code: `bulkhead_full`, `queue_full`, `wait_too_long`,
    /// `max_wait_exceeded`, `limit_reached`.
    pub reason: &'static str,
    /// Nanoseconds after which a permit would be free, when the limiter
    /// knows (rate limiters); `None` when it depends on other calls ending.
    pub retry_after: Option<u64>,
}

/// Every rejection reason, in the order the docs list them.
pub const REJECTION_REASONS: &[&str] =
    &["bulkhead_full", "queue_full", "wait_too_long", "max_wait_exceeded", "limit_reached"];

/// What kind of attempt asks: AWS's adaptive limiter charges retries more
/// (smithy-rs `client_rate_limiter.rs`: 1, 5, 10); the others count calls.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum AttemptKind {
    /// The first attempt of an operation.
    Initial,
    /// A retry after any failure but a timeout.
    Retry,
    /// A retry after a timeout.
    RetryAfterTimeout,
}

impl AttemptKind {
    /// Every code, in declaration order.
    pub const CODES: &'static [&'static str] = &["initial", "retry", "retry_after_timeout"];

    /// Reads `initial`, `retry` or `retry_after_timeout`.
    pub fn parse(s: &str) -> Option<AttemptKind> {
        match s {
            "initial" => Some(AttemptKind::Initial),
            "retry" => Some(AttemptKind::Retry),
            "retry_after_timeout" => Some(AttemptKind::RetryAfterTimeout),
            _ => None,
        }
    }

    /// Reads a code a host passed as `field`.
    ///
    /// # Errors
    /// `invalid_value` naming `field` for any other text.
    pub fn from_code(s: &str, field: &str) -> Result<AttemptKind> {
        AttemptKind::parse(s).ok_or_else(|| unknown(field, s, AttemptKind::CODES))
    }
}

fn unknown(field: &str, got: &str, known: &[&str]) -> Error {
    Error::new(ErrorCode::InvalidValue, field.to_owned(), format!("unknown value {got:?}; known: {}", known.join(", ")))
}

/// What the end of a call tells a limiter.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Signal {
    /// The call completed; its latency is a sample.
    Success,
    /// The downstream signalled overload (throttling, a drop, a timeout):
    /// adaptive limits shrink, AWS's limiter switches on and backs off.
    Overloaded,
    /// The call failed for a reason that says nothing about load (Netflix's
    /// `onIgnore`): the slot is freed and no sample taken. AWS's limiter
    /// counts every non-throttling response as a success, as botocore does.
    Ignore,
}

impl Signal {
    /// The signal a failure's category gives: `overloaded`, `timeout` and
    /// `resource_exhausted` are overload; a cancelled call is ignored;
    /// every other failure reached a downstream that answered, so it is
    /// ignored too (a 404 says nothing about load).
    pub fn for_category(category: Category) -> Signal {
        match category {
            Category::Overloaded | Category::Timeout | Category::ResourceExhausted => Signal::Overloaded,
            _ => Signal::Ignore,
        }
    }

    /// Every code, in declaration order.
    pub const CODES: &'static [&'static str] = &["success", "overloaded", "ignore"];

    /// Reads `success`, `overloaded` or `ignore`.
    pub fn parse(s: &str) -> Option<Signal> {
        match s {
            "success" => Some(Signal::Success),
            "overloaded" => Some(Signal::Overloaded),
            "ignore" => Some(Signal::Ignore),
            _ => None,
        }
    }

    /// Reads a code a host passed as `field`.
    ///
    /// # Errors
    /// `invalid_value` naming `field` for any other text.
    pub fn from_code(s: &str, field: &str) -> Result<Signal> {
        Signal::parse(s).ok_or_else(|| unknown(field, s, Signal::CODES))
    }

    /// Reads what a host passed to a release: a failure's `category` (its
    /// signal per [`Signal::for_category`]), else a `signal` code, else
    /// `success`.
    ///
    /// # Errors
    /// `invalid_value` naming `category` or `signal` for an unknown code.
    pub fn read(signal: Option<&str>, category: Option<&str>) -> Result<Signal> {
        match (category, signal) {
            (Some(c), _) => Category::from_code(c).map(Signal::for_category).ok_or_else(|| {
                let known: Vec<&str> = Category::ALL.iter().map(|c| c.code()).collect();
                unknown("category", c, &known)
            }),
            (None, Some(s)) => Signal::from_code(s, "signal"),
            (None, None) => Ok(Signal::Success),
        }
    }
}

/// The end of a call that proceeded.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Completion {
    /// The call's latency in nanoseconds.
    pub rtt: u64,
    /// What the outcome says about the downstream's load.
    pub signal: Signal,
}

/// What [`Limiter::cancel`] did.
#[derive(Clone, Debug, PartialEq)]
pub enum Cancelled {
    /// The ticket was waiting and is gone; the rejection says why the call
    /// does not go (`max_wait_exceeded`).
    Removed(Rejection),
    /// A reserved permit was returned.
    Refunded,
    /// Nothing waited under that ticket (already granted, or unknown): a
    /// bulkhead waiter whose ticket `release` returned holds a slot and
    /// must go or release it.
    NotWaiting,
}

impl Decision {
    /// The decision as the JSON object hosts hand to their callers, every
    /// duration in host units of `unit_ns` nanoseconds (1e9: Python
    /// seconds; 1e6: JavaScript milliseconds): `{"decision": "proceed"}`,
    /// `{"decision": "delay", "wait", "ticket"}`, `{"decision": "queued",
    /// "ticket", "max_wait"}` or `{"decision": "reject", "reason",
    /// "retry_after", "limiter"}` (`null` for an unbounded wait or an
    /// unknown `retry_after`).
    pub fn to_json(&self, unit_ns: f64) -> Value {
        let host = |ns: u64| ns as f64 / unit_ns;
        match self {
            Decision::Proceed => json!({ "decision": "proceed" }),
            Decision::Delay { wait, ticket } => json!({ "decision": "delay", "wait": host(*wait), "ticket": ticket }),
            Decision::Queued { ticket, max_wait } => {
                json!({ "decision": "queued", "ticket": ticket, "max_wait": max_wait.map(host) })
            }
            Decision::Reject(r) => r.to_json(unit_ns),
        }
    }
}

impl Rejection {
    /// The rejection as JSON (see [`Decision::to_json`]).
    pub fn to_json(&self, unit_ns: f64) -> Value {
        json!({
            "decision": "reject",
            "reason": self.reason,
            "retry_after": self.retry_after.map(|ns| ns as f64 / unit_ns),
            "limiter": self.limiter,
        })
    }

    /// The one-line message a host's rejection error carries.
    pub fn message(&self) -> String {
        let after = match self.retry_after {
            Some(ns) => format!("; retry after {}", crate::duration::format_duration(ns)),
            None => String::new(),
        };
        format!("limiter {:?} rejected the call: {}{after}", self.limiter, self.reason)
    }
}

impl Cancelled {
    /// What a cancel did, as JSON: `{"cancelled": "removed" | "refunded" |
    /// "not_waiting"}`, with the rejection's fields when removed.
    pub fn to_json(&self, unit_ns: f64) -> Value {
        match self {
            Cancelled::Removed(r) => {
                let mut v = r.to_json(unit_ns);
                v["cancelled"] = Value::from("removed");
                v
            }
            Cancelled::Refunded => json!({ "cancelled": "refunded" }),
            Cancelled::NotWaiting => json!({ "cancelled": "not_waiting" }),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
enum State {
    Bulkhead(bulkhead::Bulkhead),
    Rate(rate::Bucket),
    Sliding(sliding::Sliding),
    Aimd(adaptive::Aimd),
    Gradient2(adaptive::Gradient2),
    Aws(aws::AwsAdaptive),
}

/// One limiter's state: plain data, every transition a method taking `now`.
#[derive(Clone, Debug, PartialEq)]
pub struct Limiter {
    config: LimiterConfig,
    state: State,
    last_now: u64,
}

impl Limiter {
    /// Creates a limiter at `now` (AWS's adaptive limiter measures its
    /// rate and its CUBIC curve from this instant; the others only start
    /// their windows).
    pub fn new(config: LimiterConfig, now: u64) -> Limiter {
        let state = match &config.kind {
            LimiterKind::Bulkhead { max_concurrent, wait } => {
                State::Bulkhead(bulkhead::Bulkhead::new(*max_concurrent, *wait))
            }
            LimiterKind::TokenBucket { token_limit, tokens_per_period, period, wait } => {
                State::Rate(rate::Bucket::new(*token_limit, *tokens_per_period, *period, *wait, now))
            }
            LimiterKind::FixedWindow { permit_limit, window, wait } => {
                State::Rate(rate::Bucket::new(*permit_limit, *permit_limit, *window, *wait, now))
            }
            LimiterKind::SlidingWindow { permit_limit, window, segments, wait } => {
                State::Sliding(sliding::Sliding::new(*permit_limit, *window / *segments, *segments, *wait))
            }
            LimiterKind::Aimd(p) => State::Aimd(adaptive::Aimd::new(p.clone())),
            LimiterKind::Gradient2(p) => State::Gradient2(adaptive::Gradient2::new(p.clone())),
            LimiterKind::AwsAdaptive(p) => State::Aws(aws::AwsAdaptive::new(p.clone(), now)),
        };
        Limiter { config, state, last_now: now }
    }

    /// Returns the configuration.
    pub fn config(&self) -> &LimiterConfig {
        &self.config
    }

    /// Returns the limiter's name.
    pub fn name(&self) -> &str {
        &self.config.name
    }

    /// Wraps the limiter for sharing ([`SharedLimiter`]).
    pub fn shared(self) -> SharedLimiter {
        Arc::new(Mutex::new(self))
    }

    /// The longest wait the limiter itself allows (`None`: no bound but
    /// the caller's deadline). A `wait_too_long` for a wait within it was
    /// the caller's deadline speaking.
    pub fn max_wait(&self) -> Option<u64> {
        match &self.config.kind {
            LimiterKind::Bulkhead { wait, .. }
            | LimiterKind::TokenBucket { wait, .. }
            | LimiterKind::FixedWindow { wait, .. }
            | LimiterKind::SlidingWindow { wait, .. } => wait.max_wait,
            LimiterKind::AwsAdaptive(p) => p.max_wait,
            LimiterKind::Aimd(_) | LimiterKind::Gradient2(_) => Some(0),
        }
    }

    /// Reports the end of an attempt a retry session made through the
    /// limiter: `failure` is the failed attempt's category (`None`: it
    /// succeeded). A success and a failure that says nothing about load
    /// free the slot; an overload signal shrinks an adaptive limit. AWS's
    /// limiter counts a throttling error (category `overloaded`: 429,
    /// `Throttling`, `SlowDown`, …) as a throttle and every other answer as
    /// a success, as botocore's `ClientRateLimiter` does; a cancelled
    /// attempt got no answer and tells it nothing.
    pub fn attempt_ended(&mut self, now: u64, rtt: u64, failure: Option<Category>) -> Option<u64> {
        let signal = match (&self.state, failure) {
            (_, None) => Signal::Success,
            (State::Aws(_), Some(Category::Cancelled)) => return None,
            (State::Aws(_), Some(Category::Overloaded)) => Signal::Overloaded,
            (State::Aws(_), Some(_)) => Signal::Success,
            (_, Some(c)) => Signal::for_category(c),
        };
        self.release(now, Completion { rtt, signal })
    }

    fn clamp(&mut self, now: u64) -> u64 {
        self.last_now = self.last_now.max(now);
        self.last_now
    }

    fn reject(&self, reason: &'static str, retry_after: Option<u64>) -> Decision {
        Decision::Reject(Rejection { limiter: self.config.name.clone(), reason, retry_after })
    }

    /// Asks whether an attempt of `kind` may go at `now`. `within` is the
    /// time the caller has left (its deadline): a wait longer than that is
    /// refused with `wait_too_long` instead of being reserved.
    pub fn acquire(&mut self, now: u64, kind: AttemptKind, within: Option<u64>) -> Decision {
        let now = self.clamp(now);
        let answer = match &mut self.state {
            State::Bulkhead(b) => b.acquire(within),
            State::Rate(b) => b.acquire(now, within),
            State::Sliding(s) => s.acquire(now, within),
            State::Aimd(a) => a.acquire(),
            State::Gradient2(g) => g.acquire(),
            State::Aws(a) => a.acquire(now, kind, within),
        };
        match answer {
            Answer::Proceed => Decision::Proceed,
            Answer::Delay(wait, ticket) => Decision::Delay { wait, ticket },
            Answer::Queued(ticket, max_wait) => Decision::Queued { ticket, max_wait },
            Answer::Reject(reason, retry_after) => self.reject(reason, retry_after),
        }
    }

    /// Reports the end of a call that proceeded: frees its slot, feeds the
    /// adaptive algorithms, and returns the ticket of the bulkhead waiter
    /// that now holds the freed slot (the host wakes it).
    pub fn release(&mut self, now: u64, completion: Completion) -> Option<u64> {
        let now = self.clamp(now);
        match &mut self.state {
            State::Bulkhead(b) => b.release(),
            State::Rate(_) | State::Sliding(_) => None,
            State::Aimd(a) => {
                a.release(completion);
                None
            }
            State::Gradient2(g) => {
                g.release(completion);
                None
            }
            State::Aws(a) => {
                a.update(now, completion.signal == Signal::Overloaded);
                None
            }
        }
    }

    /// Abandons a [`Decision::Delay`] or [`Decision::Queued`] by its ticket
    /// (the wait was cancelled, or a queued wait ran out).
    pub fn cancel(&mut self, now: u64, ticket: u64) -> Cancelled {
        let now = self.clamp(now);
        let done = match &mut self.state {
            State::Bulkhead(b) => {
                if b.cancel(ticket) {
                    return Cancelled::Removed(Rejection {
                        limiter: self.config.name.clone(),
                        reason: "max_wait_exceeded",
                        retry_after: None,
                    });
                }
                false
            }
            State::Rate(b) => b.refund(now),
            State::Sliding(s) => s.refund(ticket),
            State::Aimd(_) | State::Gradient2(_) => false,
            State::Aws(a) => a.refund(ticket),
        };
        if done {
            Cancelled::Refunded
        } else {
            Cancelled::NotWaiting
        }
    }

    /// Calls in flight (proceeded and not yet released), for the kinds that
    /// count them; rate limiters count permits, not calls, and answer 0.
    pub fn in_flight(&self) -> u64 {
        match &self.state {
            State::Bulkhead(b) => b.in_flight(),
            State::Aimd(a) => a.in_flight(),
            State::Gradient2(g) => g.in_flight(),
            State::Rate(_) | State::Sliding(_) | State::Aws(_) => 0,
        }
    }

    /// True when no call is in flight or waiting: a [`Registry`] may drop it.
    pub fn is_idle(&self, now: u64) -> bool {
        let now = self.last_now.max(now);
        match &self.state {
            State::Bulkhead(b) => b.in_flight() == 0 && b.queued() == 0,
            State::Aimd(a) => a.in_flight() == 0,
            State::Gradient2(g) => g.in_flight() == 0,
            State::Rate(b) => b.reserved(now) == 0,
            State::Sliding(s) => s.reserved(now) == 0,
            State::Aws(a) => !a.enabled(),
        }
    }

    /// The observable state at `now` as a JSON object (the numbers docs
    /// and vectors read: `in_flight`, `queued`, `limit`, `tokens`,
    /// `fill_rate`, …).
    pub fn state(&self, now: u64) -> Value {
        let now = self.last_now.max(now);
        let mut v = match &self.state {
            State::Bulkhead(b) => json!({ "in_flight": b.in_flight(), "queued": b.queued() }),
            State::Rate(b) => b.view(now),
            State::Sliding(s) => s.view(now),
            State::Aimd(a) => json!({ "in_flight": a.in_flight(), "limit": a.limit() }),
            State::Gradient2(g) => {
                json!({ "in_flight": g.in_flight(), "limit": g.limit(), "estimated_limit": g.estimated_limit() })
            }
            State::Aws(a) => a.view(),
        };
        v["kind"] = Value::from(self.config.kind.code());
        v
    }
}

/// A kind's answer before it is named.
#[derive(Copy, Clone, Debug, PartialEq)]
pub(crate) enum Answer {
    Proceed,
    Delay(u64, u64),
    Queued(u64, Option<u64>),
    Reject(&'static str, Option<u64>),
}

/// Decides whether a computed wait of a rate limiter may be reserved:
/// `queue_full` when `queued` permits already wait and the queue holds no
/// more, else `wait_too_long` past the limiter's `max_wait` or the
/// caller's `within`; `None` when it may.
pub(crate) fn refuse_wait(wait: u64, queued: u64, w: Wait, within: Option<u64>) -> Option<Answer> {
    if queued >= w.queue_limit {
        return Some(Answer::Reject("queue_full", Some(wait)));
    }
    if w.max_wait.is_some_and(|m| wait > m) || within.is_some_and(|m| wait > m) {
        return Some(Answer::Reject("wait_too_long", Some(wait)));
    }
    None
}

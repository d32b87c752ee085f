//! A retry session: one logical operation, from its first attempt to its
//! success or give-up.
//!
//! The host drives it: [`RetrySession::before_attempt`] before every call
//! (the first included), then [`on_failure`](RetrySession::on_failure) or
//! [`on_success`](RetrySession::on_success). It answers with decisions and
//! never sleeps: the host waits the returned delay.
//!
//! After a failure the session records it into the breaker and budgets,
//! then checks, in this order, without side effects (but the delay's draw):
//! `cancelled`, `not_retryable`, `server_declined`; `attempts_exhausted`;
//! (the delay is computed here); `breaker_open`; `budget_exhausted`;
//! `retry_after_too_long`; `deadline_exceeded`. Only when all pass does it
//! commit — withdraw from the budgets, hold a concurrency slot, advance the
//! decorrelated `prev` — and return [`Decision::Retry`].

use crate::breaker::{Acquire, Counted, Permit, Transition};
use crate::budget::{FailureFacts, Refusal, SlotLease, SLOT_LEASE_GRACE_NS};
use crate::classify::{Category, Failure, RetryRule, Verdict};
use crate::duration::{from_std, to_std};
use crate::policy::{LongServerDelay, RetryPolicy};
use crate::profile::{DelayState, Profile};
use crate::retry_after::{read_headers, DelaySource};
use crate::rng::{FixedDraws, Rng, Xoshiro256pp};
use crate::{Error, ErrorCode, Result};
use std::time::Duration;

/// Why a session gave up; stable codes.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum GiveUpReason {
    /// The caller cancelled.
    Cancelled,
    /// Classification said never, or if_idempotent on an unsafe request.
    NotRetryable,
    /// The server said not to retry (`x-should-retry: false`, a bad pushback).
    ServerDeclined,
    /// `max_attempts` calls were made.
    AttemptsExhausted,
    /// The breaker is (or will still be) open.
    BreakerOpen,
    /// A budget refused the retry.
    BudgetExhausted,
    /// The server asked for a longer wait than `max_retry_after`.
    RetryAfterTooLong,
    /// The next attempt would not fit in the deadline.
    DeadlineExceeded,
    /// The adaptive throttle refused the next attempt.
    Throttled,
}

impl GiveUpReason {
    /// Every reason, in order.
    pub const ALL: [GiveUpReason; 9] = [
        GiveUpReason::Cancelled,
        GiveUpReason::NotRetryable,
        GiveUpReason::ServerDeclined,
        GiveUpReason::AttemptsExhausted,
        GiveUpReason::BreakerOpen,
        GiveUpReason::BudgetExhausted,
        GiveUpReason::RetryAfterTooLong,
        GiveUpReason::DeadlineExceeded,
        GiveUpReason::Throttled,
    ];

    /// Returns the stable code (`"attempts_exhausted"`, …).
    pub const fn code(self) -> &'static str {
        match self {
            GiveUpReason::Cancelled => "cancelled",
            GiveUpReason::NotRetryable => "not_retryable",
            GiveUpReason::ServerDeclined => "server_declined",
            GiveUpReason::AttemptsExhausted => "attempts_exhausted",
            GiveUpReason::BreakerOpen => "breaker_open",
            GiveUpReason::BudgetExhausted => "budget_exhausted",
            GiveUpReason::RetryAfterTooLong => "retry_after_too_long",
            GiveUpReason::DeadlineExceeded => "deadline_exceeded",
            GiveUpReason::Throttled => "throttled",
        }
    }

    /// Returns true when the surfaced error is marked `retry_exhausted`
    /// (docs/sessions.md, "After a failure"), so outer layers don't retry it again.
    pub const fn marks_exhausted(self) -> bool {
        matches!(
            self,
            GiveUpReason::AttemptsExhausted
                | GiveUpReason::BreakerOpen
                | GiveUpReason::BudgetExhausted
                | GiveUpReason::RetryAfterTooLong
                | GiveUpReason::DeadlineExceeded
                | GiveUpReason::Throttled
        )
    }
}

/// Why an attempt was refused before it was made.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum RejectReason {
    /// The breaker refused the call.
    BreakerOpen,
    /// The adaptive throttle refused the call.
    Throttled,
    /// No time is left before the deadline.
    DeadlineExceeded,
    /// A concurrency budget's retry slot lease ended while the session was
    /// away, and the budget has no free slot for this retry now.
    ConcurrencyLimited,
}

impl RejectReason {
    /// Returns the stable code.
    pub const fn code(self) -> &'static str {
        match self {
            RejectReason::BreakerOpen => "breaker_open",
            RejectReason::Throttled => "throttled",
            RejectReason::DeadlineExceeded => "deadline_exceeded",
            RejectReason::ConcurrencyLimited => "concurrency_limited",
        }
    }
}

/// The answer of [`RetrySession::before_attempt`].
#[derive(Clone, Debug, PartialEq)]
pub enum Gate {
    /// Make the call.
    Proceed {
        /// The number of this call (1 = first).
        attempt: u32,
        /// The policy's `max_attempts` (for headers such as `amz-sdk-request`).
        max_attempts: u32,
        /// How long the call may take: min(`attempt_timeout`, time left to the deadline).
        timeout: Option<Duration>,
    },
    /// Don't make the call. For attempt 1 the host raises the local
    /// rejection error; for a later attempt the session gave up.
    Reject {
        /// Why.
        reason: RejectReason,
        /// How long until the call could be admitted (`None`: not by waiting).
        retry_after: Option<Duration>,
        /// The budget that refused (throttled), if any.
        budget: Option<String>,
    },
}

/// The answer of [`RetrySession::on_failure`].
#[derive(Clone, Debug, PartialEq)]
pub enum Decision {
    /// Wait `delay`, then call again.
    Retry {
        /// The retry number n (1 = the first retry).
        retry: u32,
        /// The number of the coming call (n + 1).
        attempt: u32,
        /// How long to wait.
        delay: Duration,
        /// The backoff part of the delay.
        backoff: Duration,
        /// The server's delay, if present and honoured.
        server_delay: Option<Duration>,
        /// The server delay was longer than `max_retry_after` and was capped.
        capped: bool,
        /// The failure's category.
        category: Category,
    },
    /// Stop.
    GiveUp {
        /// Why.
        reason: GiveUpReason,
        /// The failure's category (its underlying one when marked exhausted).
        category: Category,
        /// The surfaced error is marked `retry_exhausted` for outer layers.
        exhausted: bool,
        /// The budget refusal, for `budget_exhausted` and `throttled`.
        refusal: Option<Refusal>,
        /// Attempts made.
        attempts: u32,
    },
}

impl Decision {
    /// Returns the delay when the decision is to retry.
    pub fn delay(&self) -> Option<Duration> {
        match self {
            Decision::Retry { delay, .. } => Some(*delay),
            Decision::GiveUp { .. } => None,
        }
    }
}

/// Options for a new session.
#[derive(Clone, Debug, Default)]
pub struct SessionOptions {
    /// The idempotency key for every attempt (e.g. from `derive_key`).
    pub key: Option<String>,
    /// 16 random bytes to mint a key from when none is given (a binding
    /// passes OS entropy; never the seeded delay generator).
    pub key_entropy: Option<[u8; 16]>,
    /// The session's own random stream (tests); default: SplitMix64 of the
    /// policy generator's next u64.
    pub seed: Option<u64>,
    /// The caller declares the operation idempotent (overrides the policy's).
    pub idempotent: Option<bool>,
    /// The caller sends the key to a server that deduplicates on it.
    pub idempotency_key_sent: Option<bool>,
    /// The HTTP method, used when a failure does not give one.
    pub method: Option<String>,
    /// Replays these draws instead of a generator (anchors' vectors, tests):
    /// each draw the session takes is the next value, in [0, 1].
    pub draws: Option<Vec<f64>>,
}

/// A session's random stream: its own generator, or replayed draws.
#[derive(Clone, Debug)]
enum Stream {
    Seeded(Xoshiro256pp),
    Fixed(FixedDraws),
}

impl Rng for Stream {
    fn next_u64(&mut self) -> u64 {
        match self {
            Stream::Seeded(g) => g.next_u64(),
            Stream::Fixed(f) => f.next_u64(),
        }
    }
    fn next_f64(&mut self) -> f64 {
        match self {
            Stream::Seeded(g) => g.next_f64(),
            Stream::Fixed(f) => f.next_f64(),
        }
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Phase {
    Ready,
    InFlight,
    Done,
}

/// One logical operation. Drop it (or call [`release`](Self::release)) to
/// give back a permit and concurrency slot it still holds.
#[derive(Debug)]
pub struct RetrySession {
    policy: RetryPolicy,
    /// The key, minted from `key_entropy` on first use when the caller gave none.
    key: std::sync::OnceLock<String>,
    key_entropy: [u8; 16],
    key_minted: bool,
    rng: Stream,
    phase: Phase,
    attempt: u32,
    start: u64,
    attempt_start: u64,
    last_now: u64,
    delay_state: DelayState,
    permit: Option<Permit>,
    retry_cost: Option<u32>,
    /// The retry slots held in concurrency budgets: (budget index, lease).
    slot_leases: Vec<(usize, SlotLease)>,
    last_category: Option<Category>,
    registered: bool,
    last_retry_delay: Option<u64>,
    idempotent: Option<bool>,
    key_sent: bool,
    method: Option<String>,
    transitions: Vec<Transition>,
    final_reason: Option<GiveUpReason>,
}

impl RetrySession {
    pub(crate) fn new(policy: RetryPolicy, opts: SessionOptions) -> Result<RetrySession> {
        let key = std::sync::OnceLock::new();
        let (key_entropy, key_minted) = match (opts.key, opts.key_entropy) {
            (Some(k), _) => {
                crate::idempotency::validate_key(&k, crate::idempotency::DEFAULT_MAX_KEY_LEN)?;
                let _ = key.set(k);
                ([0; 16], false)
            }
            // Formatting waits until someone reads the key.
            (None, Some(e)) => (e, true),
            (None, None) => {
                let _ = key.set(Self::os_key()?);
                ([0; 16], true)
            }
        };
        let seed = match opts.seed {
            Some(s) => s,
            None => policy.next_seed(),
        };
        let c = policy.config();
        let idempotent = opts.idempotent.or(c.idempotent);
        let rng = match opts.draws {
            Some(draws) => {
                if let Some(bad) = draws.iter().find(|r| !(0.0..=1.0).contains(*r)) {
                    return Err(Error::new(
                        ErrorCode::OutOfRange,
                        "draws",
                        format!("every draw must be in [0, 1], got {bad}"),
                    ));
                }
                if draws.is_empty() {
                    return Err(Error::new(ErrorCode::OutOfRange, "draws", "give at least one draw"));
                }
                Stream::Fixed(FixedDraws::new(draws))
            }
            None => Stream::Seeded(Xoshiro256pp::seed_from_u64(seed)),
        };
        Ok(RetrySession {
            key,
            key_entropy,
            key_minted,
            rng,
            phase: Phase::Ready,
            attempt: 0,
            start: 0,
            attempt_start: 0,
            last_now: 0,
            delay_state: DelayState::default(),
            permit: None,
            retry_cost: None,
            slot_leases: Vec::new(),
            last_category: None,
            registered: false,
            last_retry_delay: None,
            idempotent,
            key_sent: opts.idempotency_key_sent.unwrap_or(false),
            method: opts.method,
            transitions: Vec::new(),
            final_reason: None,
            policy,
        })
    }

    #[cfg(feature = "os-rng")]
    fn os_key() -> Result<String> {
        let mut b = [0u8; 16];
        getrandom::fill(&mut b).map_err(|e| {
            Error::new(ErrorCode::InvalidState, "key", format!("the operating system gave no entropy: {e}"))
        })?;
        Ok(crate::idempotency::mint_key(b))
    }

    #[cfg(not(feature = "os-rng"))]
    fn os_key() -> Result<String> {
        Err(Error::new(ErrorCode::MissingField, "key", "no key and no key_entropy to mint one"))
    }

    /// Returns the HTTP method the session was started with, if any: it
    /// wins over a method a host read from the error or the response
    /// ([`crate::classify::Reads`]), never over a failure's own `method`.
    pub fn method(&self) -> Option<&str> {
        self.method.as_deref()
    }

    /// Returns the idempotency key every attempt carries.
    pub fn key(&self) -> &str {
        self.key.get_or_init(|| crate::idempotency::mint_key(self.key_entropy))
    }

    /// Returns true when the session minted the key itself (it then does
    /// not make a request safe to repeat).
    pub fn key_minted(&self) -> bool {
        self.key_minted
    }

    /// Returns the policy.
    pub fn policy(&self) -> &RetryPolicy {
        &self.policy
    }

    /// Returns the attempts made so far.
    pub fn attempts(&self) -> u32 {
        self.attempt
    }

    /// Returns when the first attempt was gated, in nanoseconds on the
    /// caller's clock (0 before it): an operation's duration is `now` minus this.
    pub fn started_ns(&self) -> u64 {
        self.start
    }

    /// Returns when the latest attempt began, in nanoseconds on the
    /// caller's clock (0 before the first): that attempt's duration, once
    /// it ended, is its end minus this (exporters' per-attempt durations).
    pub fn attempt_started_ns(&self) -> u64 {
        self.attempt_start
    }

    /// Returns true once the session succeeded or gave up.
    pub fn is_done(&self) -> bool {
        self.phase == Phase::Done
    }

    /// Returns the give-up reason once the session gave up.
    pub fn give_up_reason(&self) -> Option<GiveUpReason> {
        self.final_reason
    }

    /// Returns the category of the last failed attempt, if any: what a
    /// `RetryError` carries when the session gave up at a refused later
    /// attempt (a `Reject` carries no category of its own).
    pub fn last_category(&self) -> Option<Category> {
        self.last_category
    }

    /// Takes the breaker transitions this session's calls caused since the last call.
    pub fn take_transitions(&mut self) -> Vec<Transition> {
        std::mem::take(&mut self.transitions)
    }

    fn clock(&mut self, now: u64) -> u64 {
        if now > self.last_now {
            self.last_now = now;
        }
        self.last_now
    }

    fn state_error(&self, what: &str) -> Error {
        let phase = match self.phase {
            Phase::Ready => "waiting for before_attempt",
            Phase::InFlight => "waiting for an outcome",
            Phase::Done => "finished",
        };
        Error::new(ErrorCode::InvalidState, "session", format!("{what} is not allowed: the session is {phase}"))
    }

    /// Gates the next attempt at `now` (monotonic time since any origin): takes a
    /// breaker permit and consults the adaptive throttle; for attempt 1 also
    /// deposits into ratio budgets and registers with concurrency budgets.
    ///
    /// # Errors
    /// `invalid_state` when an attempt is in flight or the session is done.
    pub fn before_attempt(&mut self, now: Duration) -> Result<Gate> {
        self.before_attempt_ns(from_std(now))
    }

    /// [`before_attempt`](Self::before_attempt) with `now` in nanoseconds (the bindings' form).
    ///
    /// # Errors
    /// `invalid_state` when an attempt is in flight or the session is done.
    pub fn before_attempt_ns(&mut self, now: u64) -> Result<Gate> {
        self.gate(now, true)
    }

    /// [`before_attempt_ns`](Self::before_attempt_ns); `count`: false for a
    /// first attempt [`RetryPolicy::begin_first`] already counted.
    pub(crate) fn gate(&mut self, now: u64, count: bool) -> Result<Gate> {
        if self.phase != Phase::Ready {
            return Err(self.state_error("before_attempt"));
        }
        let now = self.clock(now);
        let policy = self.policy.clone();
        let inner = &policy.inner;
        let c = &inner.config;
        let first = self.attempt == 0;
        if first {
            self.start = now;
            if count {
                inner.counters.operation();
                for b in &inner.budgets {
                    lock(b).on_operation_start(now);
                }
            }
            self.registered = true;
        }
        let mut timeout = c.attempt_timeout;
        if let Some(d) = c.deadline {
            let left = (self.start.saturating_add(d)).saturating_sub(now);
            if left == 0 && !first {
                return Ok(self.reject(RejectReason::DeadlineExceeded, 0, None, now));
            }
            timeout = Some(timeout.map_or(left, |t| t.min(left)));
        }
        if !first && !self.slot_leases.is_empty() {
            if let Some(refusal) = self.renew_lapsed_slots(now) {
                return Ok(self.reject(RejectReason::ConcurrencyLimited, u64::MAX, Some(refusal.budget), now));
            }
        }
        let mut permit = None;
        if let Some(br) = &inner.breaker {
            let mut br = lock(br);
            let (a, t) = br.try_acquire(now);
            self.transitions.extend(t);
            match a {
                Acquire::Permitted(p) => permit = Some(p),
                Acquire::Rejected { retry_after, .. } => {
                    drop(br);
                    return Ok(self.reject(RejectReason::BreakerOpen, retry_after, None, now));
                }
            }
        }
        for b in &inner.budgets {
            let mut b = lock(b);
            if b.is_adaptive() {
                let r = self.rng.next_f64();
                if let Some(refusal) = b.before_attempt(now, r) {
                    drop(b);
                    if let (Some(p), Some(br)) = (permit, &inner.breaker) {
                        let t = lock(br).release(p, now);
                        self.transitions.extend(t);
                    }
                    return Ok(self.reject(RejectReason::Throttled, u64::MAX, Some(refusal.budget), now));
                }
            }
        }
        self.permit = permit;
        self.attempt += 1;
        self.attempt_start = now;
        self.phase = Phase::InFlight;
        if count {
            inner.counters.attempt();
        }
        Ok(Gate::Proceed { attempt: self.attempt, max_attempts: c.max_attempts, timeout: timeout.map(to_std) })
    }

    fn reject(&mut self, reason: RejectReason, retry_after: u64, budget: Option<String>, now: u64) -> Gate {
        self.policy.inner.counters.rejected();
        let give_up = match reason {
            RejectReason::BreakerOpen => GiveUpReason::BreakerOpen,
            RejectReason::Throttled => GiveUpReason::Throttled,
            RejectReason::DeadlineExceeded => GiveUpReason::DeadlineExceeded,
            RejectReason::ConcurrencyLimited => GiveUpReason::BudgetExhausted,
        };
        self.finish(now, Some(give_up));
        let retry_after = if retry_after == u64::MAX { None } else { Some(to_std(retry_after)) };
        Gate::Reject { reason, retry_after, budget }
    }

    fn finish(&mut self, now: u64, reason: Option<GiveUpReason>) {
        self.phase = Phase::Done;
        self.final_reason = reason;
        let retried = self.attempt > 1 || self.last_retry_delay.is_some();
        let duration = now.saturating_sub(self.start);
        let counters = &self.policy.inner.counters;
        match reason {
            Some(r) => counters.give_up(r, duration, retried),
            None => counters.success(retried, duration),
        }
        self.release_slots(now);
    }

    fn release_slots(&mut self, now: u64) {
        if let Some(p) = self.permit.take() {
            if let Some(br) = &self.policy.inner.breaker {
                let t = lock(br).release(p, now);
                self.transitions.extend(t);
            }
        }
        if self.registered {
            self.registered = false;
            let leases = std::mem::take(&mut self.slot_leases);
            for (i, b) in self.policy.inner.budgets.iter().enumerate() {
                let mut b = lock(b);
                b.on_operation_end(false);
                for (_, l) in leases.iter().filter(|(j, _)| *j == i) {
                    b.end_lease(*l);
                }
            }
        }
    }

    /// Re-tests the concurrency budgets whose slot lease ran out while the
    /// session was away (its wait or its attempt outlived the lease): takes
    /// a new slot where one is free, else returns the refusal.
    fn renew_lapsed_slots(&mut self, now: u64) -> Option<Refusal> {
        let policy = self.policy.clone();
        for (i, b) in policy.inner.budgets.iter().enumerate() {
            if !self.slot_leases.iter().any(|(j, _)| *j == i) {
                continue;
            }
            let mut b = lock(b);
            if self.holds_slot(i, &mut b, now) {
                continue;
            }
            if let Err(refusal) = b.check(now, Category::Unknown, false, false) {
                b.count_refusal();
                return Some(refusal);
            }
            let (_, slot) = b.withdraw(now, Category::Unknown, false, false);
            if slot {
                let until = self.lease_end(now);
                if let Some(l) = b.lease_slot(None, until) {
                    self.slot_leases.push((i, l));
                }
            }
        }
        None
    }

    /// Removes and returns this session's lease in budget `i`.
    fn take_lease(&mut self, i: usize) -> Option<SlotLease> {
        let at = self.slot_leases.iter().position(|(j, _)| *j == i)?;
        Some(self.slot_leases.swap_remove(at).1)
    }

    /// Returns true when this session still holds its retry slot in budget
    /// `i` at `now`; a lease that ran out is forgotten.
    fn holds_slot(&mut self, i: usize, b: &mut crate::budget::Budget, now: u64) -> bool {
        let Some(&(_, l)) = self.slot_leases.iter().find(|(j, _)| *j == i) else { return false };
        if b.lease_live(now, l) {
            return true;
        }
        self.take_lease(i);
        false
    }

    /// When a retry slot taken for an attempt starting at `at` is released
    /// by itself: max(at + attempt_timeout + grace, the deadline).
    fn lease_end(&self, at: u64) -> u64 {
        let c = &self.policy.inner.config;
        let by_attempt = at.saturating_add(c.attempt_timeout.unwrap_or(0)).saturating_add(SLOT_LEASE_GRACE_NS);
        match c.deadline {
            Some(d) => by_attempt.max(self.start.saturating_add(d)),
            None => by_attempt,
        }
    }

    /// Answers a failed attempt at `now`.
    ///
    /// The failure's `method`, `idempotent` and `idempotency_key_sent` fall
    /// back to the session's options when absent.
    ///
    /// # Errors
    /// `invalid_state` when no attempt is in flight.
    pub fn on_failure(&mut self, now: Duration, failure: &Failure<'_>) -> Result<Decision> {
        self.on_failure_ns(from_std(now), failure)
    }

    /// [`on_failure`](Self::on_failure) with `now` in nanoseconds.
    ///
    /// # Errors
    /// `invalid_state` when no attempt is in flight.
    pub fn on_failure_ns(&mut self, now: u64, failure: &Failure<'_>) -> Result<Decision> {
        if self.phase != Phase::InFlight {
            return Err(self.state_error("on_failure"));
        }
        let now = self.clock(now);
        let mut f = *failure;
        if f.method.is_none() {
            f.method = self.method.as_deref();
        }
        if f.idempotent.is_none() {
            f.idempotent = self.idempotent;
        }
        f.idempotency_key_sent |= self.key_sent;
        let policy = self.policy.clone();
        let inner = &policy.inner;
        let c = &inner.config;
        let advice = read_headers(f.headers.iter().copied(), f.wall_now_ms);
        let verdict = c.classifier.classify_with(&f, advice);
        let category = verdict.category;
        // Replayed draws never cycle: a retry that needs a draw past the
        // last one given is refused before anything is recorded.
        let retries = category != Category::Cancelled
            && verdict.retryable
            && !verdict.server_declined
            && self.attempt < c.max_attempts;
        if retries && c.backoff.draws() {
            if let Stream::Fixed(d) = &self.rng {
                if d.exhausted() {
                    return Err(Error::new(
                        ErrorCode::InvalidState,
                        "draws",
                        format!("retry {} needs a draw and the {} given draws are used up", self.attempt, d.taken()),
                    ));
                }
            }
        }
        self.last_category = Some(category);
        let refused = category == Category::Connect && crate::classify::is_refused(f.error_names);
        let elapsed = f.elapsed.map_or_else(|| now.saturating_sub(self.attempt_start), from_std);

        // Record first.
        if let Some(p) = self.permit.take() {
            if let Some(br) = &inner.breaker {
                let mut br = lock(br);
                let counted = br.config().count(&f, &verdict);
                let t = br.on_result(p, now, counted, elapsed);
                self.transitions.extend(t);
            }
        }
        if category != Category::Cancelled {
            let facts = FailureFacts {
                category,
                counts: verdict.retry != RetryRule::Never,
                reached_backend: !matches!(
                    category,
                    Category::Connect | Category::OpenBreaker | Category::ResourceExhausted | Category::Cancelled
                ),
                declined_pushback: verdict.advice.declined_by_pushback,
                refused,
            };
            for b in &inner.budgets {
                lock(b).on_failure(now, facts);
            }
        }

        let give_up = |s: &mut Self, reason: GiveUpReason, refusal: Option<Refusal>| {
            s.finish(now, Some(reason));
            Ok(Decision::GiveUp { reason, category, exhausted: reason.marks_exhausted(), refusal, attempts: s.attempt })
        };
        // 1.
        if category == Category::Cancelled {
            return give_up(self, GiveUpReason::Cancelled, None);
        }
        if !(verdict.retryable || verdict.server_declined && verdict_allows(&verdict)) {
            return give_up(self, GiveUpReason::NotRetryable, None);
        }
        if verdict.server_declined {
            return give_up(self, GiveUpReason::ServerDeclined, None);
        }
        // 2.
        if self.attempt >= c.max_attempts {
            return give_up(self, GiveUpReason::AttemptsExhausted, None);
        }
        let retry = self.attempt;
        let backoff = &c.backoff;
        let r = if backoff.draws() { self.rng.next_f64() } else { 0.0 };
        // The profile state advances on a copy, committed only with a Retry.
        let mut state = self.delay_state;
        let backoff_delay = backoff.delay_with(retry, r, category == Category::Overloaded, &mut state);
        let server = if c.honor_retry_after { verdict.advice.delay } else { None };
        let (mut delay, mut capped, mut too_long) = (backoff_delay, false, false);
        if let Some((s, _source)) = server {
            let s = if s > c.max_retry_after {
                match c.on_long_retry_after {
                    LongServerDelay::Cap => {
                        capped = true;
                        c.max_retry_after
                    }
                    LongServerDelay::GiveUp => {
                        too_long = true;
                        s
                    }
                }
            } else {
                s
            };
            delay = crate::profile::combine_server_delay(c.profile, delay, s);
            if c.profile == Some(Profile::Grpc) {
                // A pushback resets the backoff to initial_backoff (gRFC A6).
                state.since_pushback = 0;
            }
        }
        // 3.
        if let Some(br) = &inner.breaker {
            if lock(br).refuses_at(now.saturating_add(delay)) {
                return give_up(self, GiveUpReason::BreakerOpen, None);
            }
        }
        // 4.
        for (i, b) in inner.budgets.iter().enumerate() {
            let mut b = lock(b);
            let holds = self.holds_slot(i, &mut b, now);
            if let Err(refusal) = b.check(now, category, refused, holds) {
                b.count_refusal();
                drop(b);
                return give_up(self, GiveUpReason::BudgetExhausted, Some(refusal));
            }
        }
        // 5.
        if too_long {
            return give_up(self, GiveUpReason::RetryAfterTooLong, None);
        }
        // 6.
        if let Some(d) = c.deadline {
            let end = self.start.saturating_add(d);
            let at = now.saturating_add(delay);
            let exceeded = match c.attempt_timeout {
                Some(t) => at.saturating_add(t) > end,
                None => at >= end,
            };
            if exceeded {
                return give_up(self, GiveUpReason::DeadlineExceeded, None);
            }
        }
        // Commit.
        let mut cost = None;
        for (i, b) in inner.budgets.iter().enumerate() {
            let mut b = lock(b);
            let holds = self.holds_slot(i, &mut b, now);
            let (c, slot) = b.withdraw(now, category, refused, holds);
            cost = cost.or(c);
            if slot || holds {
                // The slot's lease: past the wait and the coming attempt, or the deadline.
                let until = self.lease_end(now.saturating_add(delay));
                let old = self.take_lease(i);
                if let Some(l) = b.lease_slot(old, until) {
                    self.slot_leases.push((i, l));
                }
            }
        }
        self.retry_cost = cost;
        self.delay_state = state;
        self.last_retry_delay = Some(delay);
        self.phase = Phase::Ready;
        inner.counters.retry(retry);
        Ok(Decision::Retry {
            retry,
            attempt: retry + 1,
            delay: to_std(delay),
            backoff: to_std(backoff_delay),
            server_delay: server.map(|(s, _)| to_std(s)),
            capped,
            category,
        })
    }

    /// Records a successful attempt at `now` that took `elapsed`
    /// nanoseconds (`None`: since `before_attempt`), and finishes the session.
    ///
    /// # Errors
    /// `invalid_state` when no attempt is in flight.
    pub fn on_success(&mut self, now: Duration, elapsed: Option<Duration>) -> Result<()> {
        self.on_success_ns(from_std(now), elapsed.map(from_std))
    }

    /// [`on_success`](Self::on_success) in nanoseconds.
    ///
    /// # Errors
    /// `invalid_state` when no attempt is in flight.
    pub fn on_success_ns(&mut self, now: u64, elapsed: Option<u64>) -> Result<()> {
        if self.phase != Phase::InFlight {
            return Err(self.state_error("on_success"));
        }
        let now = self.clock(now);
        let elapsed = elapsed.unwrap_or_else(|| now.saturating_sub(self.attempt_start));
        let inner = self.policy.inner.clone();
        if let Some(p) = self.permit.take() {
            if let Some(br) = &inner.breaker {
                let t = lock(br).on_result(p, now, Counted::Success, elapsed);
                self.transitions.extend(t);
            }
        }
        let cost = if self.attempt > 1 { self.retry_cost } else { None };
        for b in &inner.budgets {
            lock(b).on_success(now, cost);
        }
        self.finish(now, None);
        Ok(())
    }

    /// Ends the session without an outcome (cancellation before or during
    /// an attempt): the permit returns to the pool, slots are released,
    /// and the operation counts as cancelled. Does nothing when done.
    pub fn cancel(&mut self, now: Duration) {
        self.cancel_ns(from_std(now))
    }

    /// [`cancel`](Self::cancel) in nanoseconds.
    pub fn cancel_ns(&mut self, now: u64) {
        if self.phase != Phase::Done {
            let now = self.clock(now);
            self.finish(now, Some(GiveUpReason::Cancelled));
        }
    }

    /// Gives back what the session holds without counting anything (drop).
    pub fn release(&mut self) {
        let now = self.last_now;
        self.release_slots(now);
        self.phase = Phase::Done;
    }
}

/// With the server declining, "not retryable" still wins when the rule alone says no.
impl RetryPolicy {
    /// Accounts for `n` operations that succeeded on their first attempt
    /// with nothing to gate (no breaker, budget, timeout or deadline), run by
    /// a host without a session object, `duration` ns in all: each took its
    /// session's seed (one u64 of the generator, in the order they started)
    /// and counts as an operation, an attempt and a first-try success, as
    /// [`RetrySession`]s do. A host batches them and settles before anything
    /// else draws from the generator or reads the counters.
    pub fn settle_first_tries(&self, n: u64, duration: u64) {
        match self.inner.rng.lock() {
            Ok(mut g) => g.advance(n),
            Err(p) => p.into_inner().advance(n),
        }
        self.inner.counters.first_try_successes(n, duration);
    }
}

fn verdict_allows(v: &Verdict) -> bool {
    match v.retry {
        RetryRule::Always => true,
        RetryRule::IfIdempotent => v.safe,
        RetryRule::Never => false,
    }
}

impl Drop for RetrySession {
    fn drop(&mut self) {
        if self.permit.is_some() || self.registered {
            self.release();
        }
    }
}

/// Locks a shared object; a poisoned lock (a panic elsewhere) still yields the data.
pub(crate) fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl DelaySource {
    /// Returns true for a gRPC pushback.
    pub fn is_pushback(self) -> bool {
        self == DelaySource::Pushback
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::PolicyConfig;

    const MS: u64 = 1_000_000;

    fn policy(doc: &str) -> RetryPolicy {
        RetryPolicy::new(PolicyConfig::from_json(doc).unwrap(), Some(1)).unwrap()
    }

    fn opts() -> SessionOptions {
        SessionOptions { key: Some("k-1".into()), seed: Some(7), ..Default::default() }
    }

    #[test]
    fn settled_first_tries_draw_and_count_as_sessions_do() {
        let doc = r#"{"version": 1, "jitter": "full", "seed": "42"}"#;
        let (sessions, settled) = (policy(doc), policy(doc));
        let k = || SessionOptions { key: Some("k-1".into()), ..Default::default() };
        for i in 0..3 {
            let mut s = sessions.session(k()).unwrap();
            s.before_attempt_ns(i * 10 * MS).unwrap();
            s.on_success_ns((i * 10 + 4) * MS, None).unwrap();
        }
        settled.settle_first_tries(3, 12 * MS);
        assert_eq!(sessions.counters().snapshot(), settled.counters().snapshot());
        // The next session's stream, hence its delay, is the same.
        let f = Failure { status: Some(503), method: Some("GET"), ..Default::default() };
        let delay = |p: &RetryPolicy| {
            let mut s = p.session(k()).unwrap();
            s.before_attempt_ns(100 * MS).unwrap();
            s.on_failure_ns(110 * MS, &f).unwrap().delay()
        };
        assert_eq!(delay(&sessions), delay(&settled));
        assert!(delay(&sessions).is_some());
    }

    #[test]
    fn retries_then_gives_up() {
        let p = policy(r#"{"version": 1, "jitter": "none"}"#);
        let mut s = p.session(opts()).unwrap();
        let f = Failure { status: Some(503), method: Some("GET"), ..Default::default() };
        assert!(matches!(s.before_attempt_ns(0).unwrap(), Gate::Proceed { attempt: 1, .. }));
        let d = s.on_failure_ns(10 * MS, &f).unwrap();
        assert!(
            matches!(d, Decision::Retry { retry: 1, attempt: 2, delay, .. } if delay == Duration::from_millis(100))
        );
        assert!(matches!(s.before_attempt_ns(110 * MS).unwrap(), Gate::Proceed { attempt: 2, .. }));
        let d = s.on_failure_ns(120 * MS, &f).unwrap();
        assert_eq!(d.delay(), Some(Duration::from_millis(200)));
        s.before_attempt_ns(320 * MS).unwrap();
        let d = s.on_failure_ns(330 * MS, &f).unwrap();
        assert!(matches!(d, Decision::GiveUp { reason: GiveUpReason::AttemptsExhausted, exhausted: true, .. }));
        assert!(s.before_attempt_ns(400 * MS).is_err());
        let c = p.counters().snapshot();
        assert_eq!(c.attempts, 3);
        assert_eq!(c.exhausted_for(GiveUpReason::AttemptsExhausted), 1);
    }

    #[test]
    fn post_timeout_is_not_retried_without_key() {
        let p = policy(r#"{"version": 1}"#);
        let mut s = p.session(opts()).unwrap();
        s.before_attempt_ns(0).unwrap();
        let f = Failure { status: Some(504), method: Some("POST"), ..Default::default() };
        assert!(matches!(s.on_failure_ns(1, &f).unwrap(), Decision::GiveUp { reason: GiveUpReason::NotRetryable, .. }));
        let mut s = p.session(SessionOptions { idempotency_key_sent: Some(true), ..opts() }).unwrap();
        s.before_attempt_ns(0).unwrap();
        assert!(matches!(s.on_failure_ns(1, &f).unwrap(), Decision::Retry { .. }));
    }

    #[test]
    fn deadline_must_fit_next_call() {
        let p = policy(r#"{"version": 1, "jitter": "none", "deadline": "250ms", "attempt_timeout": "100ms"}"#);
        let mut s = p.session(opts()).unwrap();
        assert!(
            matches!(s.before_attempt_ns(0).unwrap(), Gate::Proceed { timeout: Some(t), .. } if t == Duration::from_millis(100))
        );
        let f = Failure { status: Some(503), method: Some("GET"), ..Default::default() };
        // 100 ms wait + 100 ms timeout from 40 ms = 240 ms ≤ 250 ms: retry.
        assert!(matches!(s.on_failure_ns(40 * MS, &f).unwrap(), Decision::Retry { .. }));
        s.before_attempt_ns(140 * MS).unwrap();
        // 200 ms wait from 150 ms: past the deadline.
        assert!(matches!(
            s.on_failure_ns(150 * MS, &f).unwrap(),
            Decision::GiveUp { reason: GiveUpReason::DeadlineExceeded, .. }
        ));
    }

    #[test]
    fn give_up_takes_no_budget() {
        let p = policy(r#"{"version": 1, "max_attempts": 1, "budget": {"kind": "token_bucket"}}"#);
        let mut s = p.session(opts()).unwrap();
        s.before_attempt_ns(0).unwrap();
        let f = Failure { status: Some(503), method: Some("GET"), ..Default::default() };
        s.on_failure_ns(1, &f).unwrap();
        assert_eq!(lock(&p.budgets()[0]).tokens(), Some(500));
    }
}

//! Circuit breakers, shared by reference with the policies that use them.
//!
//! Permits cross the boundary as numbers: `epoch * 2 + trial` (exact while
//! the epoch stays below 2^52); -1 means refused. Outcomes are 0 success,
//! 1 failure, 2 ignored.

use crate::camel_json;
use crate::error::{Error, Result};
use crate::failure::{FailureArgs, StrList};
use crate::host::{count, ms, ms_or_infinity, now_ns, ns, quote, wall_ms, Host, MAX_SAFE_INTEGER};
use crate::options::read_object;
use retrycore::breaker::{
    Acquire, BreakerConfig, BreakerSnapshot, CircuitBreaker, Counted, Permit, SharedBreaker, State, Transition,
};
use retrycore::classify::Classifier;
use retrycore::limits;
use retrycore::ErrorCode;
use retrycore::{json, json::ToJson, json::Value};
use std::marker::PhantomData;
use std::sync::MutexGuard;

/// Writes a breaker transition.
pub(crate) fn transition_json(t: &Transition) -> Value {
    json!({"from": t.from.code(), "to": t.to.code(), "reason": t.reason.code(), "at": ms(t.at)})
}

/// Encodes a permit as a number: `epoch * 2 + trial`.
#[doc(hidden)]
#[inline]
pub fn permit_number(p: &Permit) -> f64 {
    (p.epoch() as f64) * 2.0 + if p.is_trial() { 1.0 } else { 0.0 }
}

/// Decodes a permit number (a whole number in [0, 2^53)).
#[doc(hidden)]
#[inline]
pub fn read_permit(p: f64) -> Result<Permit> {
    let p = count(p, MAX_SAFE_INTEGER, "permit")?;
    Ok(Permit::from_parts(p >> 1, p & 1 == 1, 0))
}

#[inline]
fn counted(outcome: f64) -> Result<Counted> {
    match outcome {
        0.0 => Ok(Counted::Success),
        1.0 => Ok(Counted::Failure),
        2.0 => Ok(Counted::Ignored),
        _ => Err(Error::config(ErrorCode::InvalidValue, "outcome", "must be success, failure or ignored")),
    }
}

/// A circuit breaker as the surface drives it: the shared core breaker,
/// the transitions collected for a JS hook, and the last refusal.
pub struct Breaker<H> {
    b: SharedBreaker,
    /// Collect transitions for `takeTransitions` (only while a JS hook listens).
    collect: bool,
    pending: Vec<Transition>,
    /// The state that refused last and the wait (ns) it named.
    refusal: (State, u64),
    host: PhantomData<fn() -> H>,
}

impl<H: Host> Breaker<H> {
    /// Wraps a breaker shared with policies.
    pub fn from_shared(b: SharedBreaker) -> Self {
        Breaker { b, collect: false, pending: Vec::new(), refusal: (State::Closed, 0), host: PhantomData }
    }

    /// Creates a breaker from a breaker object (JSON text; durations as strings, or ms numbers when `ms_numbers`).
    pub fn new(text: &str, ms_numbers: bool) -> Result<Self> {
        let c = read_object(text, ms_numbers, BreakerConfig::from_typed_value, BreakerConfig::from_json_value)?;
        let b = CircuitBreaker::new(c).map_err(Error::of_config)?;
        Ok(Self::from_shared(b.shared()))
    }

    /// Returns the shared breaker (for a policy to use).
    pub fn shared(&self) -> SharedBreaker {
        self.b.clone()
    }

    #[inline]
    fn lock(&self) -> MutexGuard<'_, CircuitBreaker> {
        self.b.lock().unwrap_or_else(|p| p.into_inner())
    }

    #[inline]
    fn note(&mut self, t: Option<Transition>) -> bool {
        if let Some(t) = t.filter(|_| self.collect && self.pending.len() < 1024) {
            self.pending.push(t);
        }
        t.is_some()
    }

    /// Asks to make one call: a permit (>= 0) or -1 when refused (see `last_retry_after`).
    #[inline]
    pub fn try_acquire(&mut self, now: f64) -> Result<f64> {
        let now = now_ns::<H>(now, "now")?;
        let (a, t) = self.lock().try_acquire(now);
        self.note(t);
        Ok(match a {
            Acquire::Permitted(p) => permit_number(&p),
            Acquire::Rejected { state, retry_after } => {
                self.refusal = (state, retry_after);
                -1.0
            }
        })
    }

    /// Returns the wait (ms) the last refusal named (`Infinity`: not by waiting).
    pub fn last_retry_after(&self) -> f64 {
        ms_or_infinity(self.refusal.1)
    }

    /// Returns the state that refused last.
    pub fn last_refused_state(&self) -> &'static str {
        self.refusal.0.code()
    }

    /// Returns the message of the last refusal: the core's text for a refused
    /// first attempt (`surface::Ending::message`), the same as Python's.
    pub fn last_refused_message(&self) -> String {
        let (state, retry_after) = self.refusal;
        retrycore::surface::breaker_refusal_message(self.lock().config().name.as_deref(), state, retry_after)
    }

    /// Records an outcome (0 success, 1 failure, 2 ignored); returns true on a transition.
    #[inline]
    pub fn record(&mut self, permit: f64, outcome: f64, duration: f64, now: f64) -> Result<bool> {
        let p = read_permit(permit)?;
        let c = counted(outcome)?;
        let d = ns(duration, "duration")?;
        let now = now_ns::<H>(now, "now")?;
        let t = self.lock().on_result(p, now, c, d);
        Ok(self.note(t))
    }

    /// Records a success (as `record(permit, 0, duration, now)`) and answers
    /// what the host's next call may skip ([`CircuitBreaker::free_admission`],
    /// [`CircuitBreaker::free_success`]): -1 nothing; else the permit the next
    /// call is admitted with without asking (`epoch * 2`), plus 1 when a
    /// success no longer than [`free_success_ms`](Self::free_success_ms)
    /// need not be reported either. Nothing is skippable while another object
    /// (a policy, another wrapper) shares the breaker: it could change it unseen.
    #[inline]
    pub fn succeed(&mut self, permit: f64, duration: f64, now: f64) -> Result<f64> {
        self.settle(permit, Counted::Success, duration, now)
    }

    /// Records an outcome (as `record`) and answers what the host's next
    /// call may skip, as [`succeed`](Self::succeed) does: a failing call
    /// that leaves the breaker closed lets the next one be admitted without
    /// asking (a host reports failures one crossing each, not two).
    #[inline]
    pub fn fail(&mut self, permit: f64, outcome: f64, duration: f64, now: f64) -> Result<f64> {
        let c = counted(outcome)?;
        self.settle(permit, c, duration, now)
    }

    #[inline]
    fn settle(&mut self, permit: f64, c: Counted, duration: f64, now: f64) -> Result<f64> {
        let p = read_permit(permit)?;
        let d = ns(duration, "duration")?;
        let now = now_ns::<H>(now, "now")?;
        let mut b = self.lock();
        let t = b.on_result(p, now, c, d);
        let free = match b.free_admission() {
            Some(epoch) if t.is_none() && std::sync::Arc::strong_count(&self.b) == 1 => {
                (epoch as f64) * 2.0 + if b.free_success() { 1.0 } else { 0.0 }
            }
            _ => -1.0,
        };
        drop(b);
        self.note(t);
        // Past 2^52 epochs the permit number is no longer exact: ask.
        Ok(if free < MAX_SAFE_INTEGER as f64 { free } else { -1.0 })
    }

    /// The longest success (ms) that `succeed`'s answer lets the host skip
    /// reporting ([`CircuitBreaker::free_success_limit`], less 1 µs so that a
    /// host's duration rounds to no more than the limit; `Infinity`: any).
    pub fn free_success_ms(&self) -> f64 {
        match self.lock().free_success_limit() {
            u64::MAX => f64::INFINITY,
            l => ms(l.saturating_sub(1_000)),
        }
    }

    /// Records a failure described like a classification input; the
    /// breaker's counting rules decide how it counts. Returns the outcome
    /// counted (0 success, 1 failure, 2 ignored: no string per call).
    pub fn record_failure<L: StrList>(
        &mut self,
        permit: f64,
        duration: f64,
        now: f64,
        failure: FailureArgs<L>,
    ) -> Result<u32> {
        let p = read_permit(permit)?;
        let d = ns(duration, "duration")?;
        let now = now_ns::<H>(now, "now")?;
        let f = failure.read()?;
        // Classify before taking the lock every sharer of the breaker needs
        // (as the core's session does); count and record under it.
        let (c, t) = f.with(|f| {
            let v = Classifier::default().classify(f);
            let mut b = self.lock();
            let c = b.config().count(f, &v);
            (c, b.on_result(p, now, c, d))
        });
        self.note(t);
        // The outcome numbers `record` takes (see `counted`).
        Ok(c as u32)
    }

    /// Gives a permit back without an outcome; returns true on a transition.
    pub fn release(&mut self, permit: f64, now: f64) -> Result<bool> {
        let p = read_permit(permit)?;
        let now = now_ns::<H>(now, "now")?;
        let t = self.lock().release(p, now);
        Ok(self.note(t))
    }

    /// Returns the state code.
    pub fn state(&self) -> &'static str {
        self.lock().state().code()
    }

    /// Returns the window totals and counters.
    pub fn totals(&self) -> Value {
        let b = self.lock();
        let t = b.totals();
        json!({"state": b.state().code(), "calls": t.calls, "failures": t.failures, "slow": t.slow,
               "failureRate": t.failure_rate(), "slowRate": t.slow_rate(),
               "rejections": b.rejections(), "transitions": b.transitions()})
    }

    /// Returns ms until a call could be admitted (0: now; `Infinity`: not by waiting).
    pub fn remaining_open(&self, now: f64) -> Result<f64> {
        let now = now_ns::<H>(now, "now")?;
        let r = self.lock().remaining_open(now);
        Ok(ms_or_infinity(r))
    }

    /// Moves to `state` by hand; returns the transition.
    pub fn transition_to(&mut self, state: &str, now: f64) -> Result<Value> {
        let to = State::from_code(state).ok_or_else(|| {
            Error::config(ErrorCode::InvalidValue, "state", format_args!("not a breaker state: {:?}", quote(state)))
        })?;
        let now = now_ns::<H>(now, "now")?;
        let t = self.lock().transition_to(to, now).map_err(Error::of_config)?;
        self.note(Some(t));
        Ok(transition_json(&t))
    }

    /// Returns to closed with an empty window; returns the transition, or null.
    pub fn reset(&mut self, now: f64) -> Result<Value> {
        let now = now_ns::<H>(now, "now")?;
        let t = self.lock().reset(now);
        self.note(t);
        Ok(t.as_ref().map_or(Value::Null, transition_json))
    }

    /// Captures the state as snapshot JSON text.
    pub fn snapshot(&self, now: f64, wall_now_ms: f64) -> Result<String> {
        let now = now_ns::<H>(now, "now")?;
        let wall = wall_ms(wall_now_ms, "wallNowMs")?;
        Ok(self.lock().snapshot(now, wall).to_json())
    }

    /// Replaces the state with a snapshot's (the breaker stays shared).
    pub fn restore(&mut self, snapshot: &str, now: f64, wall_now_ms: f64) -> Result<()> {
        let now = now_ns::<H>(now, "now")?;
        let wall = wall_ms(wall_now_ms, "wallNowMs")?;
        // The snapshot limit is the core's (`max_snapshot_bytes`, larger than a
        // document's: a busy 100 000-second window is about 5 MB).
        let s = BreakerSnapshot::from_json(snapshot).map_err(Error::of_config)?;
        // One lock: nothing a sharer records can land between reading the
        // settings and replacing the state.
        let mut b = self.lock();
        *b = CircuitBreaker::restore(b.config().clone(), &s, now, wall).map_err(Error::of_config)?;
        Ok(())
    }

    /// Writes the breaker's settings as a breaker object.
    pub fn config_json(&self) -> String {
        self.lock().config().to_json_value().to_string()
    }

    /// Returns true when a counting rule matches messages: only then does
    /// the host send an error's message with a failure it records.
    pub fn needs_message(&self) -> bool {
        self.lock().config().needs_message()
    }

    /// Turns collecting transitions for `take_transitions` on or off.
    pub fn set_collect(&mut self, on: bool) {
        self.collect = on;
        if !on {
            self.pending.clear();
        }
    }

    /// Takes the transitions collected since the last call.
    pub fn take_transitions(&mut self) -> Value {
        Value::Array(std::mem::take(&mut self.pending).iter().map(transition_json).collect())
    }

    /// Returns the current state's metrics (resilience4j's `CircuitBreaker.Metrics`):
    /// rates in percent (-1 below the minimum number of calls) and counts.
    pub fn state_metrics(&self, now: f64) -> Result<Value> {
        let now = now_ns::<H>(now, "now")?;
        Ok(camel_json(self.lock().metrics(now).to_value()))
    }

    /// Records an outcome without a permit (0 success, 1 failure, 2 ignored);
    /// returns true on a transition.
    pub fn record_without_permit(&mut self, outcome: f64, duration: f64, now: f64) -> Result<bool> {
        let c = counted(outcome)?;
        let d = ns(duration, "duration")?;
        let now = now_ns::<H>(now, "now")?;
        let t = self.lock().record(now, c, d);
        Ok(self.note(t))
    }

    /// Opens for `duration` ms by hand; returns the transition.
    pub fn transition_to_open_for(&mut self, duration: f64, now: f64) -> Result<Value> {
        let d = ns(duration, "duration")?;
        let now = now_ns::<H>(now, "now")?;
        let t = self.lock().transition_to_open_for(d, now).map_err(Error::of_config)?;
        self.note(Some(t));
        Ok(transition_json(&t))
    }

    /// Opens until `until` (ms on the clock `now` uses); returns the transition.
    pub fn transition_to_open_until(&mut self, until: f64, now: f64) -> Result<Value> {
        let until = limits::time_from_host_f64(until, 1e6, "until").map_err(Error::of_config)?;
        let now = now_ns::<H>(now, "now")?;
        let t = self.lock().transition_to_open_until(until, now).map_err(Error::of_config)?;
        self.note(Some(t));
        Ok(transition_json(&t))
    }

    /// Returns what a break-duration generator sees now (Polly's
    /// `BreakDurationGeneratorArguments`).
    pub fn break_arguments(&self, now: f64) -> Result<Value> {
        let now = now_ns::<H>(now, "now")?;
        Ok(camel_json(self.lock().break_arguments(now).to_value()))
    }

    /// Replaces the current open period's wait with `duration` ms, counted from when it opened.
    pub fn set_break_duration(&mut self, duration: f64) -> Result<()> {
        let d = ns(duration, "duration")?;
        self.lock().set_break_duration(d).map_err(Error::of_config)
    }
}

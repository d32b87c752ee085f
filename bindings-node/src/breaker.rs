//! Circuit breakers, shared by reference with the policies that use them.
//!
//! Permits cross the boundary as numbers: `epoch * 2 + trial` (exact while
//! the epoch stays below 2^52); -1 means refused.

use crate::policy::{read_with_ms, HostFailure};
use crate::{core_err, ms, ns, raise, wall_ms, Domain};
use napi::{Env, Result};
use napi_derive::napi;
use retrycore::breaker::{
    Acquire, BreakerConfig, BreakerSnapshot, CircuitBreaker, Counted, Permit, SharedBreaker, State, Transition,
};
use retrycore::classify::Classifier;
use serde_json::{json, Value};
use std::sync::MutexGuard;

pub(crate) fn transition_json(t: &Transition) -> Value {
    json!({"from": t.from.code(), "to": t.to.code(), "reason": t.reason.code(), "at": ms(t.at)})
}

/// A circuit breaker.
#[napi]
pub struct NativeBreaker {
    b: SharedBreaker,
    /// Collect transitions for `takeTransitions` (only while a JS hook listens).
    collect: bool,
    pending: Vec<Transition>,
    last_state: State,
    last_retry_after: u64,
}

impl NativeBreaker {
    pub(crate) fn from_shared(b: SharedBreaker) -> NativeBreaker {
        NativeBreaker { b, collect: false, pending: Vec::new(), last_state: State::Closed, last_retry_after: 0 }
    }

    pub(crate) fn shared(&self) -> SharedBreaker {
        self.b.clone()
    }

    fn lock(&self) -> MutexGuard<'_, CircuitBreaker> {
        self.b.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn note(&mut self, t: Option<Transition>) -> bool {
        match t {
            Some(t) => {
                if self.collect && self.pending.len() < 1024 {
                    self.pending.push(t);
                }
                true
            }
            None => false,
        }
    }

    fn permit(env: &Env, p: f64) -> Result<Permit> {
        if !(p >= 0.0 && p.fract() == 0.0 && p < 9_007_199_254_740_992.0) {
            return Err(raise(env, "range", "out_of_range", "permit", &format!("permit: not a permit: {p}")));
        }
        let p = p as u64;
        Ok(Permit::from_parts(p >> 1, p & 1 == 1, 0))
    }
}

fn counted(env: &Env, outcome: u32) -> Result<Counted> {
    match outcome {
        0 => Ok(Counted::Success),
        1 => Ok(Counted::Failure),
        2 => Ok(Counted::Ignored),
        _ => Err(raise(env, "range", "invalid_value", "outcome", "outcome: must be success, failure or ignored")),
    }
}

#[napi]
impl NativeBreaker {
    /// Creates a breaker from a breaker object (JSON text; durations as strings, or ms numbers when `ms`).
    #[napi(constructor, catch_unwind)]
    pub fn new(env: Env, text: String, ms_numbers: bool) -> Result<Self> {
        let c = if ms_numbers {
            read_with_ms(&env, &text, |v| BreakerConfig::from_json_value(v, ""))?
        } else {
            let v: Value = serde_json::from_str(&text)
                .map_err(|e| raise(&env, "type", "invalid_json", "", &format!("not JSON: {e}")))?;
            BreakerConfig::from_json_value(&v, "").map_err(|e| core_err(&env, &e, Domain::Config))?
        };
        let b = CircuitBreaker::new(c).map_err(|e| core_err(&env, &e, Domain::Config))?;
        Ok(Self::from_shared(b.shared()))
    }

    /// Asks to make one call: a permit (>= 0) or -1 when refused (see `lastRetryAfter`).
    #[napi(catch_unwind)]
    pub fn try_acquire(&mut self, env: Env, now: f64) -> Result<f64> {
        let now = crate::now_ns(&env, now, "now")?;
        let (a, t) = self.lock().try_acquire(now);
        self.note(t);
        Ok(match a {
            Acquire::Permitted(p) => (p.epoch() as f64) * 2.0 + if p.is_trial() { 1.0 } else { 0.0 },
            Acquire::Rejected { state, retry_after } => {
                self.last_state = state;
                self.last_retry_after = retry_after;
                -1.0
            }
        })
    }

    /// Returns the wait (ms) the last refusal named (`Infinity`: not by waiting).
    #[napi(getter, catch_unwind)]
    pub fn last_retry_after(&self) -> f64 {
        if self.last_retry_after == u64::MAX {
            f64::INFINITY
        } else {
            ms(self.last_retry_after)
        }
    }

    /// Returns the state that refused last.
    #[napi(getter, catch_unwind)]
    pub fn last_refused_state(&self) -> &'static str {
        self.last_state.code()
    }

    /// Records an outcome (0 success, 1 failure, 2 ignored); returns true on a transition.
    #[napi(catch_unwind)]
    pub fn record(&mut self, env: Env, permit: f64, outcome: u32, duration: f64, now: f64) -> Result<bool> {
        let p = Self::permit(&env, permit)?;
        let c = counted(&env, outcome)?;
        let d = ns(&env, duration, "duration")?;
        let now = crate::now_ns(&env, now, "now")?;
        let t = self.lock().on_result(p, now, c, d);
        Ok(self.note(t))
    }

    /// Records a failure described like a classification input; the
    /// breaker's counting rules decide how it counts. Returns the count used.
    #[napi(catch_unwind)]
    #[allow(clippy::too_many_arguments)]
    pub fn record_failure(
        &mut self,
        env: Env,
        permit: f64,
        duration: f64,
        now: f64,
        status: Option<f64>,
        grpc: Option<String>,
        names: Option<Vec<String>>,
        headers: Option<Vec<String>>,
    ) -> Result<&'static str> {
        let p = Self::permit(&env, permit)?;
        let d = ns(&env, duration, "duration")?;
        let now = crate::now_ns(&env, now, "now")?;
        let f = HostFailure::read(&env, status, grpc, names, None, None, None, headers, None, None)?;
        let mut b = self.lock();
        let c = f.with(|f| b.config().count(f, &Classifier::default().classify(f)));
        let t = b.on_result(p, now, c, d);
        drop(b);
        self.note(t);
        Ok(c.code())
    }

    /// Gives a permit back without an outcome.
    #[napi(catch_unwind)]
    pub fn release(&mut self, env: Env, permit: f64, now: f64) -> Result<bool> {
        let p = Self::permit(&env, permit)?;
        let now = crate::now_ns(&env, now, "now")?;
        let t = self.lock().release(p, now);
        Ok(self.note(t))
    }

    /// Returns the state code.
    #[napi(getter, catch_unwind)]
    pub fn state(&self) -> &'static str {
        self.lock().state().code()
    }

    /// Returns the window totals and counters.
    #[napi(catch_unwind)]
    pub fn totals(&self) -> Value {
        let b = self.lock();
        let t = b.totals();
        json!({"state": b.state().code(), "calls": t.calls, "failures": t.failures, "slow": t.slow,
               "failureRate": t.failure_rate(), "slowRate": t.slow_rate(),
               "rejections": b.rejections(), "transitions": b.transitions()})
    }

    /// Returns ms until a call could be admitted (0: now; `Infinity`: not by waiting).
    #[napi(catch_unwind)]
    pub fn remaining_open(&self, env: Env, now: f64) -> Result<f64> {
        let now = crate::now_ns(&env, now, "now")?;
        let r = self.lock().remaining_open(now);
        Ok(if r == u64::MAX { f64::INFINITY } else { ms(r) })
    }

    /// Moves to `state` by hand.
    #[napi(catch_unwind)]
    pub fn transition_to(&mut self, env: Env, state: String, now: f64) -> Result<Value> {
        let to = State::from_code(&state).ok_or_else(|| {
            raise(&env, "range", "invalid_value", "state", &format!("state: not a breaker state: {state:?}"))
        })?;
        let now = crate::now_ns(&env, now, "now")?;
        let t = self.lock().transition_to(to, now).map_err(|e| core_err(&env, &e, Domain::State))?;
        self.note(Some(t));
        Ok(transition_json(&t))
    }

    /// Returns to closed with an empty window.
    #[napi(catch_unwind)]
    pub fn reset(&mut self, env: Env, now: f64) -> Result<Value> {
        let now = crate::now_ns(&env, now, "now")?;
        let t = self.lock().reset(now);
        self.note(t);
        Ok(t.as_ref().map_or(Value::Null, transition_json))
    }

    /// Captures the state as snapshot JSON text.
    #[napi(catch_unwind)]
    pub fn snapshot(&self, env: Env, now: f64, wall_now_ms: f64) -> Result<String> {
        let now = crate::now_ns(&env, now, "now")?;
        let wall = wall_ms(&env, wall_now_ms, "wallNowMs")?;
        Ok(self.lock().snapshot(now, wall).to_json())
    }

    /// Replaces the state with a snapshot's (the breaker stays shared).
    #[napi(catch_unwind)]
    pub fn restore(&mut self, env: Env, snapshot: String, now: f64, wall_now_ms: f64) -> Result<()> {
        let now = crate::now_ns(&env, now, "now")?;
        let wall = wall_ms(&env, wall_now_ms, "wallNowMs")?;
        let config = self.lock().config().clone();
        let nb = BreakerSnapshot::from_json(&snapshot)
            .and_then(|s| CircuitBreaker::restore(config, &s, now, wall))
            .map_err(|e| core_err(&env, &e, Domain::State))?;
        *self.lock() = nb;
        Ok(())
    }

    /// Writes the breaker's settings as a breaker object.
    #[napi(catch_unwind)]
    pub fn config_json(&self) -> String {
        self.lock().config().to_json_value().to_string()
    }

    /// Turns collecting transitions for `takeTransitions` on or off.
    #[napi(catch_unwind)]
    pub fn set_collect(&mut self, on: bool) {
        self.collect = on;
        if !on {
            self.pending.clear();
        }
    }

    /// Takes the transitions collected since the last call.
    #[napi(catch_unwind)]
    pub fn take_transitions(&mut self) -> Value {
        Value::Array(std::mem::take(&mut self.pending).iter().map(transition_json).collect())
    }
}

//! Circuit breakers, shared by reference with the policies that use them.
//!
//! Permits cross the boundary as numbers: `epoch * 2 + trial` (exact while
//! the epoch stays below 2^52); -1 means refused.

use crate::policy::Failure;
use crate::{Node, OrThrow};
use napi::{Env, Result};
use napi_derive::napi;
use retrycore::breaker::SharedBreaker;
use retrycore_js::Breaker;
use serde_json::Value;

/// A circuit breaker.
#[napi]
pub struct NativeBreaker {
    b: Breaker<Node>,
}

impl NativeBreaker {
    pub(crate) fn from_shared(b: SharedBreaker) -> NativeBreaker {
        NativeBreaker { b: Breaker::from_shared(b) }
    }

    pub(crate) fn shared(&self) -> SharedBreaker {
        self.b.shared()
    }
}

#[napi]
impl NativeBreaker {
    /// Creates a breaker from a breaker object (JSON text; durations as strings, or ms numbers when `ms`).
    #[napi(constructor, catch_unwind)]
    pub fn new(env: Env, text: String, ms_numbers: bool) -> Result<Self> {
        Ok(NativeBreaker { b: Breaker::new(&text, ms_numbers).or_throw(&env)? })
    }

    /// Asks to make one call: a permit (>= 0) or -1 when refused (see `lastRetryAfter`).
    #[napi(catch_unwind)]
    pub fn try_acquire(&mut self, env: Env, now: f64) -> Result<f64> {
        self.b.try_acquire(now).or_throw(&env)
    }

    /// Returns the wait (ms) the last refusal named (`Infinity`: not by waiting).
    #[napi(getter, catch_unwind)]
    pub fn last_retry_after(&self) -> f64 {
        self.b.last_retry_after()
    }

    /// Returns the state that refused last.
    #[napi(getter, catch_unwind)]
    pub fn last_refused_state(&self) -> &'static str {
        self.b.last_refused_state()
    }

    /// Records an outcome (0 success, 1 failure, 2 ignored); returns true on a transition.
    #[napi(catch_unwind)]
    pub fn record(&mut self, env: Env, permit: f64, outcome: f64, duration: f64, now: f64) -> Result<bool> {
        self.b.record(permit, outcome, duration, now).or_throw(&env)
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
        let f = Failure {
            status,
            grpc,
            names,
            method: None,
            idempotent: None,
            key_sent: None,
            headers,
            elapsed_ms: None,
            wall_now_ms: None,
        };
        self.b.record_failure(permit, duration, now, f).or_throw(&env)
    }

    /// Gives a permit back without an outcome.
    #[napi(catch_unwind)]
    pub fn release(&mut self, env: Env, permit: f64, now: f64) -> Result<bool> {
        self.b.release(permit, now).or_throw(&env)
    }

    /// Returns the state code.
    #[napi(getter, catch_unwind)]
    pub fn state(&self) -> &'static str {
        self.b.state()
    }

    /// Returns the window totals and counters.
    #[napi(catch_unwind)]
    pub fn totals(&self) -> Value {
        self.b.totals()
    }

    /// Returns ms until a call could be admitted (0: now; `Infinity`: not by waiting).
    #[napi(catch_unwind)]
    pub fn remaining_open(&self, env: Env, now: f64) -> Result<f64> {
        self.b.remaining_open(now).or_throw(&env)
    }

    /// Moves to `state` by hand.
    #[napi(catch_unwind)]
    pub fn transition_to(&mut self, env: Env, state: String, now: f64) -> Result<Value> {
        self.b.transition_to(&state, now).or_throw(&env)
    }

    /// Returns to closed with an empty window.
    #[napi(catch_unwind)]
    pub fn reset(&mut self, env: Env, now: f64) -> Result<Value> {
        self.b.reset(now).or_throw(&env)
    }

    /// Captures the state as snapshot JSON text.
    #[napi(catch_unwind)]
    pub fn snapshot(&self, env: Env, now: f64, wall_now_ms: f64) -> Result<String> {
        self.b.snapshot(now, wall_now_ms).or_throw(&env)
    }

    /// Replaces the state with a snapshot's (the breaker stays shared).
    #[napi(catch_unwind)]
    pub fn restore(&mut self, env: Env, snapshot: String, now: f64, wall_now_ms: f64) -> Result<()> {
        self.b.restore(&snapshot, now, wall_now_ms).or_throw(&env)
    }

    /// Writes the breaker's settings as a breaker object.
    #[napi(catch_unwind)]
    pub fn config_json(&self) -> String {
        self.b.config_json()
    }

    /// Turns collecting transitions for `takeTransitions` on or off.
    #[napi(catch_unwind)]
    pub fn set_collect(&mut self, on: bool) {
        self.b.set_collect(on)
    }

    /// Takes the transitions collected since the last call.
    #[napi(catch_unwind)]
    pub fn take_transitions(&mut self) -> Value {
        self.b.take_transitions()
    }

    /// Returns the current state's metrics (rates in percent, -1 below the minimum).
    #[napi(catch_unwind)]
    pub fn state_metrics(&self, env: Env, now: f64) -> Result<Value> {
        self.b.state_metrics(now).or_throw(&env)
    }

    /// Records an outcome without a permit (0 success, 1 failure, 2 ignored); returns true on a transition.
    #[napi(catch_unwind)]
    pub fn record_without_permit(&mut self, env: Env, outcome: f64, duration: f64, now: f64) -> Result<bool> {
        self.b.record_without_permit(outcome, duration, now).or_throw(&env)
    }

    /// Opens for `duration` ms by hand.
    #[napi(catch_unwind)]
    pub fn transition_to_open_for(&mut self, env: Env, duration: f64, now: f64) -> Result<Value> {
        self.b.transition_to_open_for(duration, now).or_throw(&env)
    }

    /// Opens until `until` (ms on the clock `now` uses).
    #[napi(catch_unwind)]
    pub fn transition_to_open_until(&mut self, env: Env, until: f64, now: f64) -> Result<Value> {
        self.b.transition_to_open_until(until, now).or_throw(&env)
    }

    /// Returns what a break-duration generator sees now.
    #[napi(catch_unwind)]
    pub fn break_arguments(&self, env: Env, now: f64) -> Result<Value> {
        self.b.break_arguments(now).or_throw(&env)
    }

    /// Replaces the current open period's wait with `duration` ms.
    #[napi(catch_unwind)]
    pub fn set_break_duration(&mut self, env: Env, duration: f64) -> Result<()> {
        self.b.set_break_duration(duration).or_throw(&env)
    }
}

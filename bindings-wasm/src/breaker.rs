//! Circuit breakers, shared by reference with the policies that use them.
//!
//! Permits cross the boundary as numbers: `epoch * 2 + trial` (exact while
//! the epoch stays below 2^52); -1 means refused.

use crate::errors::{nan, JsErr};
use crate::{js, Strings, Wasm};
use retrycore::breaker::SharedBreaker;
use retrycore_js::{Breaker, FailureArgs};
use wasm_bindgen::prelude::*;

/// A circuit breaker.
#[wasm_bindgen]
pub struct NativeBreaker {
    b: Breaker<Wasm>,
}

impl NativeBreaker {
    pub(crate) fn from_shared(b: SharedBreaker) -> NativeBreaker {
        NativeBreaker { b: Breaker::from_shared(b) }
    }

    pub(crate) fn shared(&self) -> SharedBreaker {
        self.b.shared()
    }
}

#[inline(always)]
fn bool_num(r: retrycore_js::Result<bool>) -> f64 {
    nan(r.map(|b| if b { 1.0 } else { 0.0 }))
}

#[wasm_bindgen]
impl NativeBreaker {
    /// Creates a breaker from a breaker object (JSON text; durations as strings, or ms numbers when `ms`).
    #[wasm_bindgen(constructor)]
    pub fn new(text: &str, #[wasm_bindgen(js_name = msNumbers)] ms_numbers: bool) -> Result<NativeBreaker, JsErr> {
        Ok(NativeBreaker { b: Breaker::new(text, ms_numbers)? })
    }

    /// Asks to make one call: a permit (>= 0) or -1 when refused (see `lastRetryAfter`).
    /// Answers `NaN` on error (see `takeError`).
    #[wasm_bindgen(js_name = tryAcquire)]
    pub fn try_acquire(&mut self, now: f64) -> f64 {
        nan(self.b.try_acquire(now))
    }

    /// Returns the wait (ms) the last refusal named (`Infinity`: not by waiting).
    #[wasm_bindgen(getter, js_name = lastRetryAfter)]
    pub fn last_retry_after(&self) -> f64 {
        self.b.last_retry_after()
    }

    /// Returns the state that refused last.
    #[wasm_bindgen(getter, js_name = lastRefusedState)]
    pub fn last_refused_state(&self) -> String {
        self.b.last_refused_state().to_owned()
    }

    /// Records an outcome (0 success, 1 failure, 2 ignored); returns true on a transition.
    /// Answers 1 / 0, or `NaN` on error (see `takeError`).
    pub fn record(&mut self, permit: f64, outcome: f64, duration: f64, now: f64) -> f64 {
        bool_num(self.b.record(permit, outcome, duration, now))
    }

    /// Records a failure described like a classification input; the
    /// breaker's counting rules decide how it counts. Returns the count used.
    #[wasm_bindgen(js_name = recordFailure)]
    #[allow(clippy::too_many_arguments)]
    pub fn record_failure(
        &mut self,
        permit: f64,
        duration: f64,
        now: f64,
        #[wasm_bindgen(unchecked_optional_param_type = "number | undefined | null")] status: Option<f64>,
        #[wasm_bindgen(unchecked_optional_param_type = "string | undefined | null")] grpc: Option<String>,
        #[wasm_bindgen(unchecked_optional_param_type = "Array<string> | undefined | null")] names: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "Array<string> | undefined | null")] headers: JsValue,
    ) -> Result<String, JsErr> {
        let f = FailureArgs {
            status,
            grpc,
            names: Strings(&names),
            method: None,
            idempotent: None,
            key_sent: None,
            headers: Strings(&headers),
            elapsed_ms: None,
            wall_now_ms: None,
        };
        Ok(self.b.record_failure(permit, duration, now, f)?.to_owned())
    }

    /// Gives a permit back without an outcome. Answers 1 / 0, or `NaN` on error.
    pub fn release(&mut self, permit: f64, now: f64) -> f64 {
        bool_num(self.b.release(permit, now))
    }

    /// Returns the state code.
    #[wasm_bindgen(getter)]
    pub fn state(&self) -> String {
        self.b.state().to_owned()
    }

    /// Returns the window totals and counters.
    #[wasm_bindgen(unchecked_return_type = "any")]
    pub fn totals(&self) -> JsValue {
        js(&self.b.totals())
    }

    /// Returns ms until a call could be admitted (0: now; `Infinity`: not by waiting).
    #[wasm_bindgen(js_name = remainingOpen)]
    pub fn remaining_open(&self, now: f64) -> Result<f64, JsErr> {
        Ok(self.b.remaining_open(now)?)
    }

    /// Moves to `state` by hand.
    #[wasm_bindgen(js_name = transitionTo, unchecked_return_type = "any")]
    pub fn transition_to(&mut self, state: &str, now: f64) -> Result<JsValue, JsErr> {
        Ok(js(&self.b.transition_to(state, now)?))
    }

    /// Returns to closed with an empty window.
    #[wasm_bindgen(unchecked_return_type = "any")]
    pub fn reset(&mut self, now: f64) -> Result<JsValue, JsErr> {
        Ok(js(&self.b.reset(now)?))
    }

    /// Captures the state as snapshot JSON text.
    pub fn snapshot(&self, now: f64, #[wasm_bindgen(js_name = wallNowMs)] wall_now_ms: f64) -> Result<String, JsErr> {
        Ok(self.b.snapshot(now, wall_now_ms)?)
    }

    /// Replaces the state with a snapshot's (the breaker stays shared).
    pub fn restore(
        &mut self,
        snapshot: &str,
        now: f64,
        #[wasm_bindgen(js_name = wallNowMs)] wall_now_ms: f64,
    ) -> Result<(), JsErr> {
        Ok(self.b.restore(snapshot, now, wall_now_ms)?)
    }

    /// Writes the breaker's settings as a breaker object.
    #[wasm_bindgen(js_name = configJson)]
    pub fn config_json(&self) -> String {
        self.b.config_json()
    }

    /// Turns collecting transitions for `takeTransitions` on or off.
    #[wasm_bindgen(js_name = setCollect)]
    pub fn set_collect(&mut self, on: bool) {
        self.b.set_collect(on);
    }

    /// Takes the transitions collected since the last call.
    #[wasm_bindgen(js_name = takeTransitions, unchecked_return_type = "any")]
    pub fn take_transitions(&mut self) -> JsValue {
        js(&self.b.take_transitions())
    }

    /// Returns the current state's metrics (rates in percent, -1 below the minimum).
    #[wasm_bindgen(js_name = stateMetrics, unchecked_return_type = "any")]
    pub fn state_metrics(&self, now: f64) -> Result<JsValue, JsErr> {
        Ok(js(&self.b.state_metrics(now)?))
    }

    /// Records an outcome without a permit (0 success, 1 failure, 2 ignored); returns true on a transition.
    #[wasm_bindgen(js_name = recordWithoutPermit)]
    pub fn record_without_permit(&mut self, outcome: f64, duration: f64, now: f64) -> Result<bool, JsErr> {
        Ok(self.b.record_without_permit(outcome, duration, now)?)
    }

    /// Opens for `duration` ms by hand.
    #[wasm_bindgen(js_name = transitionToOpenFor, unchecked_return_type = "any")]
    pub fn transition_to_open_for(&mut self, duration: f64, now: f64) -> Result<JsValue, JsErr> {
        Ok(js(&self.b.transition_to_open_for(duration, now)?))
    }

    /// Opens until `until` (ms on the clock `now` uses).
    #[wasm_bindgen(js_name = transitionToOpenUntil, unchecked_return_type = "any")]
    pub fn transition_to_open_until(&mut self, until: f64, now: f64) -> Result<JsValue, JsErr> {
        Ok(js(&self.b.transition_to_open_until(until, now)?))
    }

    /// Returns what a break-duration generator sees now.
    #[wasm_bindgen(js_name = breakArguments, unchecked_return_type = "any")]
    pub fn break_arguments(&self, now: f64) -> Result<JsValue, JsErr> {
        Ok(js(&self.b.break_arguments(now)?))
    }

    /// Replaces the current open period's wait with `duration` ms.
    #[wasm_bindgen(js_name = setBreakDuration)]
    pub fn set_break_duration(&mut self, duration: f64) -> Result<(), JsErr> {
        Ok(self.b.set_break_duration(duration)?)
    }
}

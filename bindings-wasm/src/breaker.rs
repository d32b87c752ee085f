//! Circuit breakers, shared by reference with the policies that use them.
//!
//! Permits cross the boundary as numbers: `epoch * 2 + trial` (exact while
//! the epoch stays below 2^52); -1 means refused.

use crate::errors::{core_err, nan, raise, Domain, JsErr, R};
use crate::policy::{read_with_ms, HostFailure};
use crate::{js, ms, now_ns, ns, wall_ms};
use retrycore::breaker::{
    Acquire, BreakerConfig, BreakerSnapshot, CircuitBreaker, Counted, Permit, SharedBreaker, State, Transition,
};
use retrycore::classify::Classifier;
use serde_json::{json, Value};
use std::sync::MutexGuard;
use wasm_bindgen::prelude::*;

pub(crate) fn transition_json(t: &Transition) -> Value {
    json!({"from": t.from.code(), "to": t.to.code(), "reason": t.reason.code(), "at": ms(t.at)})
}

/// A circuit breaker.
#[wasm_bindgen]
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

    fn permit(p: f64) -> R<Permit> {
        if !(p >= 0.0 && p.fract() == 0.0 && p < 9_007_199_254_740_992.0) {
            return Err(raise("range", "out_of_range", "permit", &format!("permit: not a permit: {p}")));
        }
        let p = p as u64;
        Ok(Permit::from_parts(p >> 1, p & 1 == 1, 0))
    }

    fn record_r(&mut self, permit: f64, outcome: u32, duration: f64, now: f64) -> R<bool> {
        let p = Self::permit(permit)?;
        let c = counted(outcome)?;
        let d = ns(duration, "duration")?;
        let now = now_ns(now, "now")?;
        let t = self.lock().on_result(p, now, c, d);
        Ok(self.note(t))
    }

    fn release_r(&mut self, permit: f64, now: f64) -> R<bool> {
        let p = Self::permit(permit)?;
        let now = now_ns(now, "now")?;
        let t = self.lock().release(p, now);
        Ok(self.note(t))
    }
}

fn counted(outcome: u32) -> R<Counted> {
    match outcome {
        0 => Ok(Counted::Success),
        1 => Ok(Counted::Failure),
        2 => Ok(Counted::Ignored),
        _ => Err(raise("range", "invalid_value", "outcome", "outcome: must be success, failure or ignored")),
    }
}

#[inline(always)]
fn bool_num(r: R<bool>) -> f64 {
    nan(r.map(|b| if b { 1.0 } else { 0.0 }))
}

#[wasm_bindgen]
impl NativeBreaker {
    /// Creates a breaker from a breaker object (JSON text; durations as strings, or ms numbers when `ms`).
    #[wasm_bindgen(constructor)]
    pub fn new(text: &str, #[wasm_bindgen(js_name = msNumbers)] ms_numbers: bool) -> Result<NativeBreaker, JsErr> {
        let c = if ms_numbers {
            read_with_ms(text, |v| BreakerConfig::from_json_value(v, ""))?
        } else {
            let v: Value =
                serde_json::from_str(text).map_err(|e| raise("type", "invalid_json", "", &format!("not JSON: {e}")))?;
            BreakerConfig::from_json_value(&v, "").map_err(|e| core_err(&e, Domain::Config))?
        };
        let b = CircuitBreaker::new(c).map_err(|e| core_err(&e, Domain::Config))?;
        Ok(Self::from_shared(b.shared()))
    }

    /// Asks to make one call: a permit (>= 0) or -1 when refused (see `lastRetryAfter`).
    /// Answers `NaN` on error (see `takeError`).
    #[wasm_bindgen(js_name = tryAcquire)]
    pub fn try_acquire(&mut self, now: f64) -> f64 {
        let now = match now_ns(now, "now") {
            Ok(n) => n,
            Err(e) => return nan(Err(e)),
        };
        let (a, t) = self.lock().try_acquire(now);
        self.note(t);
        match a {
            Acquire::Permitted(p) => (p.epoch() as f64) * 2.0 + if p.is_trial() { 1.0 } else { 0.0 },
            Acquire::Rejected { state, retry_after } => {
                self.last_state = state;
                self.last_retry_after = retry_after;
                -1.0
            }
        }
    }

    /// Returns the wait (ms) the last refusal named (`Infinity`: not by waiting).
    #[wasm_bindgen(getter, js_name = lastRetryAfter)]
    pub fn last_retry_after(&self) -> f64 {
        if self.last_retry_after == u64::MAX {
            f64::INFINITY
        } else {
            ms(self.last_retry_after)
        }
    }

    /// Returns the state that refused last.
    #[wasm_bindgen(getter, js_name = lastRefusedState)]
    pub fn last_refused_state(&self) -> String {
        self.last_state.code().to_owned()
    }

    /// Records an outcome (0 success, 1 failure, 2 ignored); returns true on a transition.
    /// Answers 1 / 0, or `NaN` on error (see `takeError`).
    pub fn record(&mut self, permit: f64, outcome: u32, duration: f64, now: f64) -> f64 {
        bool_num(self.record_r(permit, outcome, duration, now))
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
        let p = Self::permit(permit)?;
        let d = ns(duration, "duration")?;
        let now = now_ns(now, "now")?;
        let f = HostFailure::read(status, grpc, &names, None, None, None, &headers, None, None)?;
        let mut b = self.lock();
        let c = f.with(|f| b.config().count(f, &Classifier::default().classify(f)));
        let t = b.on_result(p, now, c, d);
        drop(b);
        self.note(t);
        Ok(c.code().to_owned())
    }

    /// Gives a permit back without an outcome. Answers 1 / 0, or `NaN` on error.
    pub fn release(&mut self, permit: f64, now: f64) -> f64 {
        bool_num(self.release_r(permit, now))
    }

    /// Returns the state code.
    #[wasm_bindgen(getter)]
    pub fn state(&self) -> String {
        self.lock().state().code().to_owned()
    }

    /// Returns the window totals and counters.
    #[wasm_bindgen(unchecked_return_type = "any")]
    pub fn totals(&self) -> JsValue {
        let b = self.lock();
        let t = b.totals();
        js(&json!({"state": b.state().code(), "calls": t.calls, "failures": t.failures, "slow": t.slow,
                   "failureRate": t.failure_rate(), "slowRate": t.slow_rate(),
                   "rejections": b.rejections(), "transitions": b.transitions()}))
    }

    /// Returns ms until a call could be admitted (0: now; `Infinity`: not by waiting).
    #[wasm_bindgen(js_name = remainingOpen)]
    pub fn remaining_open(&self, now: f64) -> Result<f64, JsErr> {
        let now = now_ns(now, "now")?;
        let r = self.lock().remaining_open(now);
        Ok(if r == u64::MAX { f64::INFINITY } else { ms(r) })
    }

    /// Moves to `state` by hand.
    #[wasm_bindgen(js_name = transitionTo, unchecked_return_type = "any")]
    pub fn transition_to(&mut self, state: &str, now: f64) -> Result<JsValue, JsErr> {
        let to = State::from_code(state).ok_or_else(|| {
            let shown: String = state.chars().take(64).collect();
            raise("range", "invalid_value", "state", &format!("state: not a breaker state: {shown:?}"))
        })?;
        let now = now_ns(now, "now")?;
        let t = self.lock().transition_to(to, now).map_err(|e| core_err(&e, Domain::State))?;
        self.note(Some(t));
        Ok(js(&transition_json(&t)))
    }

    /// Returns to closed with an empty window.
    #[wasm_bindgen(unchecked_return_type = "any")]
    pub fn reset(&mut self, now: f64) -> Result<JsValue, JsErr> {
        let now = now_ns(now, "now")?;
        let t = self.lock().reset(now);
        self.note(t);
        Ok(t.as_ref().map_or(JsValue::NULL, |t| js(&transition_json(t))))
    }

    /// Captures the state as snapshot JSON text.
    pub fn snapshot(&self, now: f64, #[wasm_bindgen(js_name = wallNowMs)] wall_now_ms: f64) -> Result<String, JsErr> {
        let now = now_ns(now, "now")?;
        let wall = wall_ms(wall_now_ms, "wallNowMs")?;
        Ok(self.lock().snapshot(now, wall).to_json())
    }

    /// Replaces the state with a snapshot's (the breaker stays shared).
    pub fn restore(
        &mut self,
        snapshot: &str,
        now: f64,
        #[wasm_bindgen(js_name = wallNowMs)] wall_now_ms: f64,
    ) -> Result<(), JsErr> {
        let now = now_ns(now, "now")?;
        let wall = wall_ms(wall_now_ms, "wallNowMs")?;
        let config = self.lock().config().clone();
        let nb = BreakerSnapshot::from_json(snapshot)
            .and_then(|s| CircuitBreaker::restore(config, &s, now, wall))
            .map_err(|e| core_err(&e, Domain::State))?;
        *self.lock() = nb;
        Ok(())
    }

    /// Writes the breaker's settings as a breaker object.
    #[wasm_bindgen(js_name = configJson)]
    pub fn config_json(&self) -> String {
        self.lock().config().to_json_value().to_string()
    }

    /// Turns collecting transitions for `takeTransitions` on or off.
    #[wasm_bindgen(js_name = setCollect)]
    pub fn set_collect(&mut self, on: bool) {
        self.collect = on;
        if !on {
            self.pending.clear();
        }
    }

    /// Takes the transitions collected since the last call.
    #[wasm_bindgen(js_name = takeTransitions, unchecked_return_type = "any")]
    pub fn take_transitions(&mut self) -> JsValue {
        js(&Value::Array(std::mem::take(&mut self.pending).iter().map(transition_json).collect()))
    }
}

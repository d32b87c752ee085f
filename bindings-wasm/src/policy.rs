//! Policies, sessions (in a per-policy slab, named by numeric ids) and classification.

use crate::breaker::NativeBreaker;
use crate::budget::NativeBudget;
use crate::errors::{nan, JsErr};
use crate::{js, numbers, Strings, Wasm};
use retrycore::classify::Classifier;
use retrycore_js::verdict::{classify_json, classify_status as classify_status_default};
use retrycore_js::{FailureArgs, Policy};
use serde_json::json;
use wasm_bindgen::prelude::*;

/// Classifies a status with the built-in tables (the hot path; see `classifyStatus` in lib/).
/// Answers `NaN` on error (see `takeError`).
#[wasm_bindgen(js_name = classifyStatus)]
pub fn classify_status(status: f64, flags: f64) -> f64 {
    nan(classify_status_default(status, flags).map(f64::from))
}

/// Classifies a failure with the built-in tables.
#[wasm_bindgen(unchecked_return_type = "any")]
#[allow(clippy::too_many_arguments)]
pub fn classify(
    #[wasm_bindgen(unchecked_optional_param_type = "number | undefined | null")] status: Option<f64>,
    #[wasm_bindgen(unchecked_optional_param_type = "string | undefined | null")] grpc: Option<String>,
    #[wasm_bindgen(unchecked_optional_param_type = "Array<string> | undefined | null")] names: JsValue,
    #[wasm_bindgen(unchecked_optional_param_type = "string | undefined | null")] method: Option<String>,
    #[wasm_bindgen(unchecked_optional_param_type = "boolean | undefined | null")] idempotent: Option<bool>,
    #[wasm_bindgen(js_name = keySent, unchecked_optional_param_type = "boolean | undefined | null")] key_sent: Option<
        bool,
    >,
    #[wasm_bindgen(unchecked_optional_param_type = "Array<string> | undefined | null")] headers: JsValue,
    #[wasm_bindgen(js_name = wallNowMs, unchecked_optional_param_type = "number | undefined | null")]
    wall_now_ms: Option<f64>,
) -> Result<JsValue, JsErr> {
    let (names, headers) = (Strings(&names), Strings(&headers));
    let f = FailureArgs { status, grpc, names, method, idempotent, key_sent, headers, elapsed_ms: None, wall_now_ms };
    Ok(js(&classify_json(&Classifier::default(), &f.read()?)))
}

/// A live retry policy and the sessions it runs.
#[wasm_bindgen]
pub struct NativePolicy {
    p: Policy<Wasm>,
}

impl From<Policy<Wasm>> for NativePolicy {
    fn from(p: Policy<Wasm>) -> NativePolicy {
        NativePolicy { p }
    }
}

#[wasm_bindgen]
impl NativePolicy {
    /// Creates a policy from a document (JSON text; durations are strings).
    #[wasm_bindgen(js_name = fromJson)]
    pub fn from_json(text: &str, entropy: Option<String>) -> Result<NativePolicy, JsErr> {
        Ok(Policy::from_json(text, entropy.as_deref())?.into())
    }

    /// Creates a policy from typed options (JSON text whose durations may be milliseconds).
    #[wasm_bindgen(js_name = fromOptions)]
    pub fn from_options(text: &str, entropy: Option<String>) -> Result<NativePolicy, JsErr> {
        Ok(Policy::from_options(text, entropy.as_deref())?.into())
    }

    /// Writes the normalized policy document.
    #[wasm_bindgen(js_name = toJson)]
    pub fn to_json(&self) -> String {
        self.p.to_json()
    }

    /// Returns the schedule: rows of low / mid / high delays (ms) per retry.
    #[wasm_bindgen(unchecked_return_type = "any")]
    pub fn schedule(&self) -> JsValue {
        js(&self.p.schedule())
    }

    /// Computes the backoff delay (ms) of retry `retry` for the draw `r`.
    /// Answers `NaN` on error (see `takeError`).
    pub fn delay(&self, retry: f64, r: f64, prev: Option<f64>) -> f64 {
        nan(self.p.delay(retry, r, prev))
    }

    /// Draws the delays (ms) of retries 1..=count from a generator seeded with `seed`.
    #[wasm_bindgen(js_name = sampleDelays, unchecked_return_type = "Array<number>")]
    pub fn sample_delays(&self, seed: &str, count: f64) -> Result<JsValue, JsErr> {
        Ok(js(&json!(self.p.sample_delays(seed, count)?)))
    }

    /// Replays `draws` (each in [0, 1]) through the backoff: the delays (ms) of retries 1..=draws.len().
    #[wasm_bindgen(js_name = replayDelays, unchecked_return_type = "Array<number>")]
    pub fn replay_delays(
        &self,
        #[wasm_bindgen(unchecked_param_type = "Array<number>")] draws: JsValue,
    ) -> Result<JsValue, JsErr> {
        let draws = numbers(&draws, "draws")?.unwrap_or_default();
        Ok(js(&json!(self.p.replay_delays(&draws)?)))
    }

    /// Returns a policy for tests: at most `attempts` calls, delays capped at `max_delay` ms.
    pub fn testing(
        &self,
        attempts: f64,
        #[wasm_bindgen(js_name = maxDelay)] max_delay: f64,
    ) -> Result<NativePolicy, JsErr> {
        Ok(self.p.testing(attempts, max_delay)?.into())
    }

    /// Returns the counters with the retry_attempts_total family of metric names.
    #[wasm_bindgen(unchecked_return_type = "any")]
    pub fn counters(&self) -> JsValue {
        js(&self.p.counters())
    }

    /// Returns the policy's shared breaker, if any.
    #[wasm_bindgen(unchecked_return_type = "NativeBreaker | null")]
    pub fn breaker(&self) -> JsValue {
        self.p.breaker().map_or(JsValue::NULL, |b| NativeBreaker::from_shared(b).into())
    }

    /// Returns the number of budgets.
    #[wasm_bindgen(js_name = budgetCount)]
    pub fn budget_count(&self) -> u32 {
        self.p.budget_count()
    }

    /// Returns the budget at `index`.
    #[wasm_bindgen(unchecked_return_type = "NativeBudget | null")]
    pub fn budget(&self, index: f64) -> JsValue {
        self.p.budget(index).map_or(JsValue::NULL, |b| NativeBudget::from_shared(b).into())
    }

    /// Returns a policy whose sessions share `breaker`.
    #[wasm_bindgen(js_name = shareBreaker)]
    pub fn share_breaker(&self, breaker: &NativeBreaker) -> NativePolicy {
        self.p.share_breaker(breaker.shared()).into()
    }

    /// Returns a policy whose budget at `index` is `budget`.
    #[wasm_bindgen(js_name = shareBudget)]
    pub fn share_budget(&self, index: f64, budget: &NativeBudget) -> Result<NativePolicy, JsErr> {
        Ok(self.p.share_budget(index, budget.shared())?.into())
    }

    /// Classifies a status with this policy's rules (packed; see `classify_status`).
    /// Answers `NaN` on error (see `takeError`).
    #[wasm_bindgen(js_name = classifyStatus)]
    pub fn classify_status(&mut self, status: f64, flags: f64) -> f64 {
        nan(self.p.classify_status(status, flags).map(f64::from))
    }

    /// Classifies a failure with this policy's rules.
    #[wasm_bindgen(unchecked_return_type = "any")]
    #[allow(clippy::too_many_arguments)]
    pub fn classify(
        &self,
        #[wasm_bindgen(unchecked_optional_param_type = "number | undefined | null")] status: Option<f64>,
        #[wasm_bindgen(unchecked_optional_param_type = "string | undefined | null")] grpc: Option<String>,
        #[wasm_bindgen(unchecked_optional_param_type = "Array<string> | undefined | null")] names: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "string | undefined | null")] method: Option<String>,
        #[wasm_bindgen(unchecked_optional_param_type = "boolean | undefined | null")] idempotent: Option<bool>,
        #[wasm_bindgen(js_name = keySent, unchecked_optional_param_type = "boolean | undefined | null")]
        key_sent: Option<bool>,
        #[wasm_bindgen(unchecked_optional_param_type = "Array<string> | undefined | null")] headers: JsValue,
        #[wasm_bindgen(js_name = wallNowMs, unchecked_optional_param_type = "number | undefined | null")]
        wall_now_ms: Option<f64>,
    ) -> Result<JsValue, JsErr> {
        let (names, headers) = (Strings(&names), Strings(&headers));
        let f =
            FailureArgs { status, grpc, names, method, idempotent, key_sent, headers, elapsed_ms: None, wall_now_ms };
        Ok(js(&self.p.classify(f)?))
    }

    /// Returns true when the policy has an attempt timeout or a deadline.
    #[wasm_bindgen(js_name = hasTimeouts)]
    pub fn has_timeouts(&self) -> bool {
        self.p.has_timeouts()
    }

    // ------------------------------------------------------------ sessions

    /// Starts a session; returns its id. Answers `NaN` on error (see `takeError`).
    #[allow(clippy::too_many_arguments)]
    pub fn begin(
        &mut self,
        #[wasm_bindgen(unchecked_optional_param_type = "string | undefined | null")] key: Option<String>,
        #[wasm_bindgen(unchecked_optional_param_type = "string | undefined | null")] seed: Option<String>,
        #[wasm_bindgen(unchecked_optional_param_type = "boolean | undefined | null")] idempotent: Option<bool>,
        #[wasm_bindgen(js_name = keySent, unchecked_optional_param_type = "boolean | undefined | null")]
        key_sent: Option<bool>,
        #[wasm_bindgen(unchecked_optional_param_type = "string | undefined | null")] method: Option<String>,
        #[wasm_bindgen(unchecked_optional_param_type = "Array<number> | undefined | null")] draws: JsValue,
    ) -> f64 {
        nan(numbers(&draws, "draws").and_then(|d| self.p.begin(key, seed.as_deref(), idempotent, key_sent, method, d)))
    }

    /// Starts a session and gates its first attempt in one call (the
    /// `execute` fast path): the id when it may proceed, `-id - 1` when the
    /// first attempt was rejected (see `gate`). Answers `NaN` on error.
    #[allow(clippy::too_many_arguments)]
    pub fn start(
        &mut self,
        now: f64,
        #[wasm_bindgen(unchecked_optional_param_type = "string | undefined | null")] key: Option<String>,
        #[wasm_bindgen(unchecked_optional_param_type = "boolean | undefined | null")] idempotent: Option<bool>,
        #[wasm_bindgen(js_name = keySent, unchecked_optional_param_type = "boolean | undefined | null")]
        key_sent: Option<bool>,
        #[wasm_bindgen(unchecked_optional_param_type = "string | undefined | null")] method: Option<String>,
    ) -> f64 {
        nan(self.p.start(now, key, idempotent, key_sent, method))
    }

    /// Records a success and frees the session in one call (the `execute` fast path).
    /// Answers 0, or `NaN` on error.
    pub fn finish(&mut self, id: f64, now: f64) -> f64 {
        nan(self.p.finish(id, now).map(|()| 0.0))
    }

    /// Gates the next attempt: returns the attempt number, or 0 when rejected (see `gate`).
    /// Answers `NaN` on error.
    pub fn before(&mut self, id: f64, now: f64) -> f64 {
        nan(self.p.before(id, now))
    }

    /// Returns the last gate of a session.
    #[wasm_bindgen(unchecked_return_type = "any")]
    pub fn gate(&mut self, id: f64) -> Result<JsValue, JsErr> {
        Ok(js(&self.p.gate(id)?))
    }

    /// Answers a failed attempt: the delay (ms) of the retry, or -1 when giving up (see `decision`).
    /// Answers `NaN` on error.
    #[allow(clippy::too_many_arguments)]
    pub fn fail(
        &mut self,
        id: f64,
        now: f64,
        #[wasm_bindgen(unchecked_optional_param_type = "number | undefined | null")] status: Option<f64>,
        #[wasm_bindgen(unchecked_optional_param_type = "string | undefined | null")] grpc: Option<String>,
        #[wasm_bindgen(unchecked_optional_param_type = "Array<string> | undefined | null")] names: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "string | undefined | null")] method: Option<String>,
        #[wasm_bindgen(unchecked_optional_param_type = "boolean | undefined | null")] idempotent: Option<bool>,
        #[wasm_bindgen(js_name = keySent, unchecked_optional_param_type = "boolean | undefined | null")]
        key_sent: Option<bool>,
        #[wasm_bindgen(unchecked_optional_param_type = "Array<string> | undefined | null")] headers: JsValue,
        #[wasm_bindgen(js_name = elapsedMs, unchecked_optional_param_type = "number | undefined | null")]
        elapsed_ms: Option<f64>,
        #[wasm_bindgen(js_name = wallNowMs, unchecked_optional_param_type = "number | undefined | null")]
        wall_now_ms: Option<f64>,
    ) -> f64 {
        let (names, headers) = (Strings(&names), Strings(&headers));
        let f = FailureArgs { status, grpc, names, method, idempotent, key_sent, headers, elapsed_ms, wall_now_ms };
        nan(self.p.fail(id, now, f))
    }

    /// Returns the last decision of a session.
    #[wasm_bindgen(unchecked_return_type = "any")]
    pub fn decision(&mut self, id: f64) -> Result<JsValue, JsErr> {
        Ok(js(&self.p.decision(id)?))
    }

    /// Records a success and finishes the session. Answers 0, or `NaN` on error.
    pub fn succeed(&mut self, id: f64, now: f64, #[wasm_bindgen(js_name = elapsedMs)] elapsed_ms: Option<f64>) -> f64 {
        nan(self.p.succeed(id, now, elapsed_ms).map(|()| 0.0))
    }

    /// Ends a session as cancelled. Answers 0, or `NaN` on error.
    pub fn cancel(&mut self, id: f64, now: f64) -> f64 {
        nan(self.p.cancel(id, now).map(|()| 0.0))
    }

    /// Gives back what a session holds without counting anything (the vectors' `drop`).
    pub fn release(&mut self, id: f64) -> Result<(), JsErr> {
        Ok(self.p.release(id)?)
    }

    /// Frees a session's slot (releasing what it still holds). Unknown ids are ignored.
    ///
    /// Named `free` like the Node binding's; it replaces wasm-bindgen's
    /// generated `free()` on this class (the object itself is freed by the
    /// garbage collector's finalizer, never by hand).
    #[wasm_bindgen(js_name = free)]
    pub fn free_session(&mut self, id: f64) {
        self.p.free(id);
    }

    /// Returns a session's idempotency key.
    pub fn key(&mut self, id: f64) -> Result<String, JsErr> {
        Ok(self.p.key(id)?)
    }

    /// Returns a session's state: attempts made, done, give-up reason, key minted.
    #[wasm_bindgen(unchecked_return_type = "any")]
    pub fn status(&mut self, id: f64) -> Result<JsValue, JsErr> {
        Ok(js(&self.p.status(id)?))
    }

    /// Takes the breaker transitions a session's calls caused.
    #[wasm_bindgen(unchecked_return_type = "any")]
    pub fn transitions(&mut self, id: f64) -> Result<JsValue, JsErr> {
        Ok(js(&self.p.transitions(id)?))
    }
}

//! Retry budgets, shared by reference with the policies that use them.
//!
//! Categories cross the boundary as their index in `info().categories`.

use crate::errors::{nan, JsErr};
use crate::{js, Wasm};
use retrycore::budget::SharedBudget;
use retrycore_js::Budget;
use wasm_bindgen::prelude::*;

/// A retry budget.
#[wasm_bindgen]
pub struct NativeBudget {
    b: Budget<Wasm>,
}

impl NativeBudget {
    pub(crate) fn from_shared(b: SharedBudget) -> NativeBudget {
        NativeBudget { b: Budget::from_shared(b) }
    }

    pub(crate) fn shared(&self) -> SharedBudget {
        self.b.shared()
    }
}

#[inline(always)]
fn unit(r: retrycore_js::Result<()>) -> f64 {
    nan(r.map(|()| 0.0))
}

#[wasm_bindgen]
impl NativeBudget {
    /// Creates a budget from a budget object (JSON text; durations as strings, or ms numbers when `ms`).
    #[wasm_bindgen(constructor)]
    pub fn new(text: &str, #[wasm_bindgen(js_name = msNumbers)] ms_numbers: bool) -> Result<NativeBudget, JsErr> {
        Ok(NativeBudget { b: Budget::new(text, ms_numbers)? })
    }

    /// Returns the budget's name.
    #[wasm_bindgen(getter)]
    pub fn name(&self) -> String {
        self.b.name()
    }

    /// Returns the budget's kind.
    #[wasm_bindgen(getter)]
    pub fn kind(&self) -> String {
        self.b.kind().to_owned()
    }

    /// Writes the settings as a budget object.
    #[wasm_bindgen(js_name = configJson)]
    pub fn config_json(&self) -> String {
        self.b.config_json()
    }

    /// A logical operation starts (deposit, call in flight). Answers 0, or `NaN` on error.
    pub fn start(&self, now: f64) -> f64 {
        unit(self.b.start(now))
    }

    /// A logical operation ends.
    pub fn end(&self, #[wasm_bindgen(js_name = holdsSlot)] holds_slot: bool) {
        self.b.end(holds_slot);
    }

    /// Checks a retry after `category` without changing anything: null, or the refusal.
    #[wasm_bindgen(unchecked_return_type = "any")]
    pub fn check(
        &self,
        now: f64,
        #[wasm_bindgen(js_name = categoryId)] category_id: f64,
        refused: bool,
        #[wasm_bindgen(js_name = holdsSlot)] holds_slot: bool,
    ) -> Result<JsValue, JsErr> {
        Ok(js(&self.b.check(now, category_id, refused, holds_slot)?))
    }

    /// Takes what a retry costs: `{cost, slot}`.
    #[wasm_bindgen(unchecked_return_type = "any")]
    pub fn withdraw(
        &self,
        now: f64,
        #[wasm_bindgen(js_name = categoryId)] category_id: f64,
        refused: bool,
        #[wasm_bindgen(js_name = holdsSlot)] holds_slot: bool,
    ) -> Result<JsValue, JsErr> {
        Ok(js(&self.b.withdraw(now, category_id, refused, holds_slot)?))
    }

    /// Checks, then withdraws when allowed: the cost (>= 0) or -1 when refused (the hot path).
    /// Answers `NaN` on error (see `takeError`).
    #[wasm_bindgen(js_name = tryWithdraw)]
    pub fn try_withdraw(&self, now: f64, #[wasm_bindgen(js_name = categoryId)] category_id: f64) -> f64 {
        nan(self.b.try_withdraw(now, category_id))
    }

    /// Records a failed attempt. Answers 0, or `NaN` on error.
    #[wasm_bindgen(js_name = onFailure)]
    #[allow(clippy::too_many_arguments)]
    pub fn on_failure(
        &self,
        now: f64,
        #[wasm_bindgen(js_name = categoryId)] category_id: f64,
        counts: bool,
        #[wasm_bindgen(js_name = reachedBackend)] reached_backend: bool,
        #[wasm_bindgen(js_name = declinedPushback)] declined_pushback: bool,
        refused: bool,
    ) -> f64 {
        unit(self.b.on_failure(now, category_id, counts, reached_backend, declined_pushback, refused))
    }

    /// Records a success; `cost` is what the retry that led to it took. Answers 0, or `NaN` on error.
    #[wasm_bindgen(js_name = onSuccess)]
    pub fn on_success(&self, now: f64, cost: Option<f64>) -> f64 {
        unit(self.b.on_success(now, cost))
    }

    /// The adaptive throttle's check before an attempt (draw `r`): null, or the refusal.
    #[wasm_bindgen(js_name = beforeAttempt, unchecked_return_type = "any")]
    pub fn before_attempt(&self, now: f64, r: f64) -> Result<JsValue, JsErr> {
        Ok(js(&self.b.before_attempt(now, r)?))
    }

    /// Returns the budget's level (tokens, or its counts).
    #[wasm_bindgen(unchecked_return_type = "any")]
    pub fn level(&self, now: f64) -> Result<JsValue, JsErr> {
        Ok(js(&self.b.level(now)?))
    }

    /// Returns refusals and withdrawals so far.
    #[wasm_bindgen(unchecked_return_type = "any")]
    pub fn stats(&self) -> JsValue {
        js(&self.b.stats())
    }
}

//! Retry budgets, shared by reference with the policies that use them.
//!
//! Categories cross the boundary as their index in `info().categories`.

use crate::errors::{core_err, nan, raise, Domain, JsErr, R};
use crate::policy::read_with_ms;
use crate::{js, now_ns};
use retrycore::budget::{Budget, BudgetConfig, FailureFacts, SharedBudget};
use retrycore::classify::Category;
use serde_json::{json, Value};
use std::sync::MutexGuard;
use wasm_bindgen::prelude::*;

/// A retry budget.
#[wasm_bindgen]
pub struct NativeBudget {
    b: SharedBudget,
}

impl NativeBudget {
    pub(crate) fn from_shared(b: SharedBudget) -> NativeBudget {
        NativeBudget { b }
    }

    pub(crate) fn shared(&self) -> SharedBudget {
        self.b.clone()
    }

    fn lock(&self) -> MutexGuard<'_, Budget> {
        self.b.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn try_withdraw_r(&self, now: f64, category_id: u32) -> R<f64> {
        let now = now_ns(now, "now")?;
        let c = category(category_id)?;
        let mut b = self.lock();
        if b.check(now, c, false, false).is_err() {
            b.count_refusal();
            return Ok(-1.0);
        }
        Ok(f64::from(b.withdraw(now, c, false, false).0.unwrap_or(0)))
    }
}

fn category(id: u32) -> R<Category> {
    Category::ALL
        .get(id as usize)
        .copied()
        .ok_or_else(|| raise("range", "invalid_value", "category", &format!("category: no category {id}")))
}

#[inline(always)]
fn unit(r: R<()>) -> f64 {
    nan(r.map(|()| 0.0))
}

#[wasm_bindgen]
impl NativeBudget {
    /// Creates a budget from a budget object (JSON text; durations as strings, or ms numbers when `ms`).
    #[wasm_bindgen(constructor)]
    pub fn new(text: &str, #[wasm_bindgen(js_name = msNumbers)] ms_numbers: bool) -> Result<NativeBudget, JsErr> {
        let c = if ms_numbers {
            read_with_ms(text, |v| BudgetConfig::from_json_value(v, ""))?
        } else {
            let v: Value =
                serde_json::from_str(text).map_err(|e| raise("type", "invalid_json", "", &format!("not JSON: {e}")))?;
            BudgetConfig::from_json_value(&v, "").map_err(|e| core_err(&e, Domain::Config))?
        };
        let b = Budget::new(c).map_err(|e| core_err(&e, Domain::Config))?;
        Ok(NativeBudget { b: b.shared() })
    }

    /// Returns the budget's name.
    #[wasm_bindgen(getter)]
    pub fn name(&self) -> String {
        self.lock().name().to_owned()
    }

    /// Returns the budget's kind.
    #[wasm_bindgen(getter)]
    pub fn kind(&self) -> String {
        self.lock().config().kind_name().to_owned()
    }

    /// Writes the settings as a budget object.
    #[wasm_bindgen(js_name = configJson)]
    pub fn config_json(&self) -> String {
        self.lock().config().to_json_value().to_string()
    }

    /// A logical operation starts (deposit, call in flight). Answers 0, or `NaN` on error.
    pub fn start(&self, now: f64) -> f64 {
        unit(now_ns(now, "now").map(|now| self.lock().on_operation_start(now)))
    }

    /// A logical operation ends.
    pub fn end(&self, #[wasm_bindgen(js_name = holdsSlot)] holds_slot: bool) {
        self.lock().on_operation_end(holds_slot);
    }

    /// Checks a retry after `category` without changing anything: null, or the refusal.
    #[wasm_bindgen(unchecked_return_type = "any")]
    pub fn check(
        &self,
        now: f64,
        #[wasm_bindgen(js_name = categoryId)] category_id: u32,
        refused: bool,
        #[wasm_bindgen(js_name = holdsSlot)] holds_slot: bool,
    ) -> Result<JsValue, JsErr> {
        let now = now_ns(now, "now")?;
        let c = category(category_id)?;
        Ok(match self.lock().check(now, c, refused, holds_slot) {
            Ok(()) => JsValue::NULL,
            Err(r) => js(&json!({"budget": r.budget, "reason": r.reason})),
        })
    }

    /// Takes what a retry costs: `{cost, slot}`.
    #[wasm_bindgen(unchecked_return_type = "any")]
    pub fn withdraw(
        &self,
        now: f64,
        #[wasm_bindgen(js_name = categoryId)] category_id: u32,
        refused: bool,
        #[wasm_bindgen(js_name = holdsSlot)] holds_slot: bool,
    ) -> Result<JsValue, JsErr> {
        let now = now_ns(now, "now")?;
        let c = category(category_id)?;
        let (cost, slot) = self.lock().withdraw(now, c, refused, holds_slot);
        Ok(js(&json!({"cost": cost, "slot": slot})))
    }

    /// Checks, then withdraws when allowed: the cost (>= 0) or -1 when refused (the hot path).
    /// Answers `NaN` on error (see `takeError`).
    #[wasm_bindgen(js_name = tryWithdraw)]
    pub fn try_withdraw(&self, now: f64, #[wasm_bindgen(js_name = categoryId)] category_id: u32) -> f64 {
        nan(self.try_withdraw_r(now, category_id))
    }

    /// Records a failed attempt. Answers 0, or `NaN` on error.
    #[wasm_bindgen(js_name = onFailure)]
    #[allow(clippy::too_many_arguments)]
    pub fn on_failure(
        &self,
        now: f64,
        #[wasm_bindgen(js_name = categoryId)] category_id: u32,
        counts: bool,
        #[wasm_bindgen(js_name = reachedBackend)] reached_backend: bool,
        #[wasm_bindgen(js_name = declinedPushback)] declined_pushback: bool,
        refused: bool,
    ) -> f64 {
        let r = (|| {
            let now = now_ns(now, "now")?;
            let c = category(category_id)?;
            self.lock()
                .on_failure(now, FailureFacts { category: c, counts, reached_backend, declined_pushback, refused });
            Ok(())
        })();
        unit(r)
    }

    /// Records a success; `cost` is what the retry that led to it took. Answers 0, or `NaN` on error.
    #[wasm_bindgen(js_name = onSuccess)]
    pub fn on_success(&self, now: f64, cost: Option<u32>) -> f64 {
        unit(now_ns(now, "now").map(|now| self.lock().on_success(now, cost)))
    }

    /// The adaptive throttle's check before an attempt (draw `r`): null, or the refusal.
    #[wasm_bindgen(js_name = beforeAttempt, unchecked_return_type = "any")]
    pub fn before_attempt(&self, now: f64, r: f64) -> Result<JsValue, JsErr> {
        let now = now_ns(now, "now")?;
        if !(0.0..=1.0).contains(&r) {
            return Err(raise("range", "out_of_range", "r", &format!("r: must be in [0, 1], got {r}")));
        }
        Ok(match self.lock().before_attempt(now, r) {
            None => JsValue::NULL,
            Some(x) => js(&json!({"budget": x.budget, "reason": x.reason})),
        })
    }

    /// Returns the budget's level (tokens, or its counts).
    #[wasm_bindgen(unchecked_return_type = "any")]
    pub fn level(&self, now: f64) -> Result<JsValue, JsErr> {
        let now = now_ns(now, "now")?;
        Ok(js(&self.lock().level(now)))
    }

    /// Returns refusals and withdrawals so far.
    #[wasm_bindgen(unchecked_return_type = "any")]
    pub fn stats(&self) -> JsValue {
        let b = self.lock();
        js(&json!({"refusals": b.refusals(), "withdrawals": b.withdrawals()}))
    }
}

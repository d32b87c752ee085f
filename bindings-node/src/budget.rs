//! Retry budgets, shared by reference with the policies that use them.
//!
//! Categories cross the boundary as their index in `info().categories`.

use crate::policy::read_with_ms;
use crate::{core_err, raise, Domain};
use napi::{Env, Result};
use napi_derive::napi;
use retrycore::budget::{Budget, BudgetConfig, FailureFacts, SharedBudget};
use retrycore::classify::Category;
use serde_json::{json, Value};
use std::sync::MutexGuard;

/// A retry budget.
#[napi]
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
}

fn category(env: &Env, id: u32) -> Result<Category> {
    Category::ALL
        .get(id as usize)
        .copied()
        .ok_or_else(|| raise(env, "range", "invalid_value", "category", &format!("category: no category {id}")))
}

#[napi]
impl NativeBudget {
    /// Creates a budget from a budget object (JSON text; durations as strings, or ms numbers when `ms`).
    #[napi(constructor, catch_unwind)]
    pub fn new(env: Env, text: String, ms_numbers: bool) -> Result<Self> {
        let c = if ms_numbers {
            read_with_ms(&env, &text, |v| BudgetConfig::from_json_value(v, ""))?
        } else {
            let v: Value = serde_json::from_str(&text)
                .map_err(|e| raise(&env, "type", "invalid_json", "", &format!("not JSON: {e}")))?;
            BudgetConfig::from_json_value(&v, "").map_err(|e| core_err(&env, &e, Domain::Config))?
        };
        let b = Budget::new(c).map_err(|e| core_err(&env, &e, Domain::Config))?;
        Ok(NativeBudget { b: b.shared() })
    }

    /// Returns the budget's name.
    #[napi(getter, catch_unwind)]
    pub fn name(&self) -> String {
        self.lock().name().to_owned()
    }

    /// Returns the budget's kind.
    #[napi(getter, catch_unwind)]
    pub fn kind(&self) -> &'static str {
        self.lock().config().kind_name()
    }

    /// Writes the settings as a budget object.
    #[napi(catch_unwind)]
    pub fn config_json(&self) -> String {
        self.lock().config().to_json_value().to_string()
    }

    /// A logical operation starts (deposit, call in flight).
    #[napi(catch_unwind)]
    pub fn start(&self, env: Env, now: f64) -> Result<()> {
        let now = crate::now_ns(&env, now, "now")?;
        self.lock().on_operation_start(now);
        Ok(())
    }

    /// A logical operation ends.
    #[napi(catch_unwind)]
    pub fn end(&self, holds_slot: bool) {
        self.lock().on_operation_end(holds_slot);
    }

    /// Checks a retry after `category` without changing anything: null, or the refusal.
    #[napi(catch_unwind)]
    pub fn check(&self, env: Env, now: f64, category_id: u32, refused: bool, holds_slot: bool) -> Result<Value> {
        let now = crate::now_ns(&env, now, "now")?;
        let c = category(&env, category_id)?;
        Ok(match self.lock().check(now, c, refused, holds_slot) {
            Ok(()) => Value::Null,
            Err(r) => json!({"budget": r.budget, "reason": r.reason}),
        })
    }

    /// Takes what a retry costs: `{cost, slot}`.
    #[napi(catch_unwind)]
    pub fn withdraw(&self, env: Env, now: f64, category_id: u32, refused: bool, holds_slot: bool) -> Result<Value> {
        let now = crate::now_ns(&env, now, "now")?;
        let c = category(&env, category_id)?;
        let (cost, slot) = self.lock().withdraw(now, c, refused, holds_slot);
        Ok(json!({"cost": cost, "slot": slot}))
    }

    /// Checks, then withdraws when allowed: the cost (>= 0) or -1 when refused (the hot path).
    #[napi(catch_unwind)]
    pub fn try_withdraw(&self, env: Env, now: f64, category_id: u32) -> Result<f64> {
        let now = crate::now_ns(&env, now, "now")?;
        let c = category(&env, category_id)?;
        let mut b = self.lock();
        if b.check(now, c, false, false).is_err() {
            b.count_refusal();
            return Ok(-1.0);
        }
        Ok(f64::from(b.withdraw(now, c, false, false).0.unwrap_or(0)))
    }

    /// Records a failed attempt.
    #[napi(catch_unwind)]
    #[allow(clippy::too_many_arguments)]
    pub fn on_failure(
        &self,
        env: Env,
        now: f64,
        category_id: u32,
        counts: bool,
        reached_backend: bool,
        declined_pushback: bool,
        refused: bool,
    ) -> Result<()> {
        let now = crate::now_ns(&env, now, "now")?;
        let c = category(&env, category_id)?;
        self.lock().on_failure(now, FailureFacts { category: c, counts, reached_backend, declined_pushback, refused });
        Ok(())
    }

    /// Records a success; `cost` is what the retry that led to it took.
    #[napi(catch_unwind)]
    pub fn on_success(&self, env: Env, now: f64, cost: Option<u32>) -> Result<()> {
        let now = crate::now_ns(&env, now, "now")?;
        self.lock().on_success(now, cost);
        Ok(())
    }

    /// The adaptive throttle's check before an attempt (draw `r`): null, or the refusal.
    #[napi(catch_unwind)]
    pub fn before_attempt(&self, env: Env, now: f64, r: f64) -> Result<Value> {
        let now = crate::now_ns(&env, now, "now")?;
        if !(0.0..=1.0).contains(&r) {
            return Err(raise(&env, "range", "out_of_range", "r", &format!("r: must be in [0, 1], got {r}")));
        }
        Ok(match self.lock().before_attempt(now, r) {
            None => Value::Null,
            Some(x) => json!({"budget": x.budget, "reason": x.reason}),
        })
    }

    /// Returns the budget's level (tokens, or its counts).
    #[napi(catch_unwind)]
    pub fn level(&self, env: Env, now: f64) -> Result<Value> {
        let now = crate::now_ns(&env, now, "now")?;
        Ok(self.lock().level(now))
    }

    /// Returns refusals and withdrawals so far.
    #[napi(catch_unwind)]
    pub fn stats(&self) -> Value {
        let b = self.lock();
        json!({"refusals": b.refusals(), "withdrawals": b.withdrawals()})
    }
}

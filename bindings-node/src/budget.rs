//! Retry budgets, shared by reference with the policies that use them.
//!
//! Categories cross the boundary as their index in `info().categories`.

use crate::{Node, OrThrow};
use napi::{Env, Result};
use napi_derive::napi;
use retrycore::budget::SharedBudget;
use retrycore_js::Budget;
use serde_json::Value;

/// A retry budget.
#[napi]
pub struct NativeBudget {
    b: Budget<Node>,
}

impl NativeBudget {
    pub(crate) fn from_shared(b: SharedBudget) -> NativeBudget {
        NativeBudget { b: Budget::from_shared(b) }
    }

    pub(crate) fn shared(&self) -> SharedBudget {
        self.b.shared()
    }
}

#[napi]
impl NativeBudget {
    /// Creates a budget from a budget object (JSON text; durations as strings, or ms numbers when `ms`).
    #[napi(constructor, catch_unwind)]
    pub fn new(env: Env, text: String, ms_numbers: bool) -> Result<Self> {
        Ok(NativeBudget { b: Budget::new(&text, ms_numbers).or_throw(&env)? })
    }

    /// Returns the budget's name.
    #[napi(getter, catch_unwind)]
    pub fn name(&self) -> String {
        self.b.name()
    }

    /// Returns the budget's kind.
    #[napi(getter, catch_unwind)]
    pub fn kind(&self) -> &'static str {
        self.b.kind()
    }

    /// Writes the settings as a budget object.
    #[napi(catch_unwind)]
    pub fn config_json(&self) -> String {
        self.b.config_json()
    }

    /// A logical operation starts (deposit, call in flight).
    #[napi(catch_unwind)]
    pub fn start(&self, env: Env, now: f64) -> Result<()> {
        self.b.start(now).or_throw(&env)
    }

    /// A logical operation ends.
    #[napi(catch_unwind)]
    pub fn end(&self, holds_slot: bool) {
        self.b.end(holds_slot)
    }

    /// Checks a retry after `category` without changing anything: null, or the refusal.
    #[napi(catch_unwind)]
    pub fn check(&self, env: Env, now: f64, category_id: f64, refused: bool, holds_slot: bool) -> Result<Value> {
        self.b.check(now, category_id, refused, holds_slot).or_throw(&env)
    }

    /// Takes what a retry costs: `{cost, slot}`.
    #[napi(catch_unwind)]
    pub fn withdraw(&self, env: Env, now: f64, category_id: f64, refused: bool, holds_slot: bool) -> Result<Value> {
        self.b.withdraw(now, category_id, refused, holds_slot).or_throw(&env)
    }

    /// Checks, then withdraws when allowed: the cost (>= 0) or -1 when refused (the hot path).
    #[napi(catch_unwind)]
    pub fn try_withdraw(&self, env: Env, now: f64, category_id: f64) -> Result<f64> {
        self.b.try_withdraw(now, category_id).or_throw(&env)
    }

    /// Records a failed attempt.
    #[napi(catch_unwind)]
    #[allow(clippy::too_many_arguments)]
    pub fn on_failure(
        &self,
        env: Env,
        now: f64,
        category_id: f64,
        counts: bool,
        reached_backend: bool,
        declined_pushback: bool,
        refused: bool,
    ) -> Result<()> {
        self.b.on_failure(now, category_id, counts, reached_backend, declined_pushback, refused).or_throw(&env)
    }

    /// Records a success; `cost` is what the retry that led to it took.
    #[napi(catch_unwind)]
    pub fn on_success(&self, env: Env, now: f64, cost: Option<f64>) -> Result<()> {
        self.b.on_success(now, cost).or_throw(&env)
    }

    /// The adaptive throttle's check before an attempt (draw `r`): null, or the refusal.
    #[napi(catch_unwind)]
    pub fn before_attempt(&self, env: Env, now: f64, r: f64) -> Result<Value> {
        self.b.before_attempt(now, r).or_throw(&env)
    }

    /// Returns the budget's level (tokens, or its counts).
    #[napi(catch_unwind)]
    pub fn level(&self, env: Env, now: f64) -> Result<Value> {
        self.b.level(now).or_throw(&env)
    }

    /// Returns refusals and withdrawals so far.
    #[napi(catch_unwind)]
    pub fn stats(&self) -> Value {
        self.b.stats()
    }
}

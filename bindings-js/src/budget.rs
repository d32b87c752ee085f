//! Retry budgets, shared by reference with the policies that use them.
//!
//! Categories cross the boundary as their index in `info().categories`.

use crate::error::{Error, Result};
use crate::host::{count, now_ns, Host};
use crate::options::read_object;
use retrycore::budget::{Budget as CoreBudget, BudgetConfig, FailureFacts, Refusal, SharedBudget};
use retrycore::classify::Category;
use retrycore::ErrorCode;
use retrycore::{json, json::Value};
use std::marker::PhantomData;
use std::sync::MutexGuard;

#[inline]
fn category(id: f64) -> Result<Category> {
    // At most 2^32 − 1, so the index is exact.
    let i = count(id, u32::MAX.into(), "category")? as usize;
    Category::ALL
        .get(i)
        .copied()
        .ok_or_else(|| Error::config(ErrorCode::InvalidValue, "category", format_args!("no category {id}")))
}

/// Writes a refusal (null: none).
fn refusal_json(r: Option<Refusal>) -> Value {
    r.map_or(Value::Null, |r| json!({"budget": r.budget, "reason": r.reason}))
}

/// A retry budget as the surface drives it.
pub struct Budget<H> {
    b: SharedBudget,
    host: PhantomData<fn() -> H>,
}

impl<H: Host> Budget<H> {
    /// Wraps a budget shared with policies.
    pub fn from_shared(b: SharedBudget) -> Self {
        Budget { b, host: PhantomData }
    }

    /// Creates a budget from a budget object (JSON text; durations as strings, or ms numbers when `ms_numbers`).
    pub fn new(text: &str, ms_numbers: bool) -> Result<Self> {
        let c = read_object(text, ms_numbers, BudgetConfig::from_typed_value, BudgetConfig::from_json_value)?;
        let b = CoreBudget::new(c).map_err(Error::of_config)?;
        Ok(Self::from_shared(b.shared()))
    }

    /// Returns the shared budget (for a policy to use).
    pub fn shared(&self) -> SharedBudget {
        self.b.clone()
    }

    #[inline]
    fn lock(&self) -> MutexGuard<'_, CoreBudget> {
        self.b.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Returns the budget's name.
    pub fn name(&self) -> String {
        self.lock().name().to_owned()
    }

    /// Returns the budget's kind.
    pub fn kind(&self) -> &'static str {
        self.lock().config().kind_name()
    }

    /// Writes the settings as a budget object.
    pub fn config_json(&self) -> String {
        self.lock().config().to_json_value().to_string()
    }

    /// A logical operation starts (deposit, call in flight).
    pub fn start(&self, now: f64) -> Result<()> {
        let now = now_ns::<H>(now, "now")?;
        self.lock().on_operation_start(now);
        Ok(())
    }

    /// A logical operation ends.
    pub fn end(&self, holds_slot: bool) {
        self.lock().on_operation_end(holds_slot);
    }

    /// Checks a retry after `category` without changing anything: null, or the refusal.
    pub fn check(&self, now: f64, category_id: f64, refused: bool, holds_slot: bool) -> Result<Value> {
        let now = now_ns::<H>(now, "now")?;
        let c = category(category_id)?;
        Ok(refusal_json(self.lock().check(now, c, refused, holds_slot).err()))
    }

    /// Takes what a retry costs: `{cost, slot}`.
    pub fn withdraw(&self, now: f64, category_id: f64, refused: bool, holds_slot: bool) -> Result<Value> {
        let now = now_ns::<H>(now, "now")?;
        let c = category(category_id)?;
        let (cost, slot) = self.lock().withdraw(now, c, refused, holds_slot);
        Ok(json!({"cost": cost, "slot": slot}))
    }

    /// Checks, then withdraws when allowed: the cost (>= 0) or -1 when refused (the hot path).
    #[inline]
    pub fn try_withdraw(&self, now: f64, category_id: f64) -> Result<f64> {
        let now = now_ns::<H>(now, "now")?;
        let c = category(category_id)?;
        let mut b = self.lock();
        if b.check(now, c, false, false).is_err() {
            b.count_refusal();
            return Ok(-1.0);
        }
        Ok(f64::from(b.withdraw(now, c, false, false).0.unwrap_or(0)))
    }

    /// Records a failed attempt.
    pub fn on_failure(
        &self,
        now: f64,
        category_id: f64,
        counts: bool,
        reached_backend: bool,
        declined_pushback: bool,
        refused: bool,
    ) -> Result<()> {
        let now = now_ns::<H>(now, "now")?;
        let c = category(category_id)?;
        self.lock().on_failure(now, FailureFacts { category: c, counts, reached_backend, declined_pushback, refused });
        Ok(())
    }

    /// Records a success; `cost` is what the retry that led to it took.
    ///
    /// `cost` is range-checked (a whole number up to 2^32 − 1): a -1 never
    /// wraps into a refill.
    pub fn on_success(&self, now: f64, cost: Option<f64>) -> Result<()> {
        let now = now_ns::<H>(now, "now")?;
        let cost = cost.map(|c| count(c, u32::MAX.into(), "cost")).transpose()?.map(|c| c as u32);
        self.lock().on_success(now, cost);
        Ok(())
    }

    /// The adaptive throttle's check before an attempt (draw `r`): null, or the refusal.
    pub fn before_attempt(&self, now: f64, r: f64) -> Result<Value> {
        let now = now_ns::<H>(now, "now")?;
        retrycore::backoff::check_r(r).map_err(Error::of_config)?;
        Ok(refusal_json(self.lock().before_attempt(now, r)))
    }

    /// Returns the budget's level (tokens, or its counts).
    pub fn level(&self, now: f64) -> Result<Value> {
        let now = now_ns::<H>(now, "now")?;
        Ok(self.lock().level(now))
    }

    /// Returns refusals and withdrawals so far.
    pub fn stats(&self) -> Value {
        let b = self.lock();
        json!({"refusals": b.refusals(), "withdrawals": b.withdrawals()})
    }

    /// Takes `amount` tokens from a token bucket if it holds that many,
    /// after the time-based refill; true when taken. Counts no withdrawal
    /// or refusal (the raw bucket, for callers pricing their own work).
    ///
    /// `amount` is range-checked (a whole number up to 2^32 − 1).
    pub fn acquire(&self, amount: f64, now: f64) -> Result<bool> {
        let amount = count(amount, u32::MAX.into(), "amount")? as u32;
        let now = now_ns::<H>(now, "now")?;
        self.lock().acquire(now, amount).map_err(Error::of_config)
    }

    /// Returns `amount` tokens to a token bucket, up to its capacity.
    pub fn release(&self, amount: f64, now: f64) -> Result<()> {
        let amount = count(amount, u32::MAX.into(), "amount")? as u32;
        let now = now_ns::<H>(now, "now")?;
        self.lock().release(now, amount).map_err(Error::of_config)
    }
}

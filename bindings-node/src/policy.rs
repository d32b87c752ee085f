//! Policies, sessions (in a per-policy slab, named by numeric ids) and classification.

use crate::breaker::NativeBreaker;
use crate::budget::NativeBudget;
use crate::{Node, OrThrow};
use napi::{Env, Result};
use napi_derive::napi;
use retrycore::classify::Classifier;
use retrycore_js::verdict::{classify_json, classify_status as classify_status_default};
use retrycore_js::{FailureArgs, Policy};
use serde_json::Value;

/// The failure arguments as napi-rs converted them.
pub(crate) type Failure = FailureArgs<Option<Vec<String>>>;

/// Classifies a status with the built-in tables (the hot path; see `classifyStatus` in lib/).
#[napi(catch_unwind)]
pub fn classify_status(env: Env, status: f64, flags: f64) -> Result<u32> {
    classify_status_default(status, flags).or_throw(&env)
}

/// Classifies a failure with the built-in tables.
#[napi(catch_unwind)]
#[allow(clippy::too_many_arguments)]
pub fn classify(
    env: Env,
    status: Option<f64>,
    grpc: Option<String>,
    names: Option<Vec<String>>,
    method: Option<String>,
    idempotent: Option<bool>,
    key_sent: Option<bool>,
    headers: Option<Vec<String>>,
    wall_now_ms: Option<f64>,
) -> Result<Value> {
    let f = Failure { status, grpc, names, method, idempotent, key_sent, headers, elapsed_ms: None, wall_now_ms };
    Ok(classify_json(&Classifier::default(), &f.read().or_throw(&env)?))
}

/// A live retry policy and the sessions it runs.
#[napi]
pub struct NativePolicy {
    p: Policy<Node>,
}

#[napi]
impl NativePolicy {
    /// Creates a policy from a document (JSON text; durations are strings).
    #[napi(factory, catch_unwind)]
    pub fn from_json(env: Env, text: String, entropy: Option<String>) -> Result<NativePolicy> {
        Ok(NativePolicy { p: Policy::from_json(&text, entropy.as_deref()).or_throw(&env)? })
    }

    /// Creates a policy from typed options (JSON text whose durations may be milliseconds).
    #[napi(factory, catch_unwind)]
    pub fn from_options(env: Env, text: String, entropy: Option<String>) -> Result<NativePolicy> {
        Ok(NativePolicy { p: Policy::from_options(&text, entropy.as_deref()).or_throw(&env)? })
    }

    /// Writes the normalized policy document.
    #[napi(catch_unwind)]
    pub fn to_json(&self) -> String {
        self.p.to_json()
    }

    /// Returns the schedule: rows of low / mid / high delays (ms) per retry.
    #[napi(catch_unwind)]
    pub fn schedule(&self) -> Value {
        self.p.schedule()
    }

    /// Computes the backoff delay (ms) of retry `retry` for the draw `r`.
    #[napi(catch_unwind)]
    pub fn delay(&self, env: Env, retry: f64, r: f64, prev: Option<f64>) -> Result<f64> {
        self.p.delay(retry, r, prev).or_throw(&env)
    }

    /// Draws the delays (ms) of retries 1..=count from a generator seeded with `seed`.
    #[napi(catch_unwind)]
    pub fn sample_delays(&self, env: Env, seed: String, count: f64) -> Result<Vec<f64>> {
        self.p.sample_delays(&seed, count).or_throw(&env)
    }

    /// Replays `draws` (each in [0, 1]) through the backoff: the delays (ms) of retries 1..=draws.len().
    #[napi(catch_unwind)]
    pub fn replay_delays(&self, env: Env, draws: Vec<f64>) -> Result<Vec<f64>> {
        self.p.replay_delays(&draws).or_throw(&env)
    }

    /// Returns a policy for tests: at most `attempts` calls, delays capped at `max_delay` ms.
    #[napi(catch_unwind)]
    pub fn testing(&self, env: Env, attempts: f64, max_delay: f64) -> Result<NativePolicy> {
        Ok(NativePolicy { p: self.p.testing(attempts, max_delay).or_throw(&env)? })
    }

    /// Returns the counters with the retry_attempts_total family of metric names.
    #[napi(catch_unwind)]
    pub fn counters(&self) -> Value {
        self.p.counters()
    }

    /// Returns the policy's shared breaker, if any.
    #[napi(catch_unwind)]
    pub fn breaker(&self) -> Option<NativeBreaker> {
        self.p.breaker().map(NativeBreaker::from_shared)
    }

    /// Returns the number of budgets.
    #[napi(catch_unwind)]
    pub fn budget_count(&self) -> u32 {
        self.p.budget_count()
    }

    /// Returns the budget at `index`.
    #[napi(catch_unwind)]
    pub fn budget(&self, index: f64) -> Option<NativeBudget> {
        self.p.budget(index).map(NativeBudget::from_shared)
    }

    /// Returns a policy whose sessions share `breaker`.
    #[napi(catch_unwind)]
    pub fn share_breaker(&self, breaker: &NativeBreaker) -> NativePolicy {
        NativePolicy { p: self.p.share_breaker(breaker.shared()) }
    }

    /// Returns a policy whose budget at `index` is `budget`.
    #[napi(catch_unwind)]
    pub fn share_budget(&self, env: Env, index: f64, budget: &NativeBudget) -> Result<NativePolicy> {
        Ok(NativePolicy { p: self.p.share_budget(index, budget.shared()).or_throw(&env)? })
    }

    /// Classifies a status with this policy's rules (packed; see `classify_status`).
    #[napi(catch_unwind)]
    pub fn classify_status(&mut self, env: Env, status: f64, flags: f64) -> Result<u32> {
        self.p.classify_status(status, flags).or_throw(&env)
    }

    /// Classifies a failure with this policy's rules.
    #[napi(catch_unwind)]
    #[allow(clippy::too_many_arguments)]
    pub fn classify(
        &self,
        env: Env,
        status: Option<f64>,
        grpc: Option<String>,
        names: Option<Vec<String>>,
        method: Option<String>,
        idempotent: Option<bool>,
        key_sent: Option<bool>,
        headers: Option<Vec<String>>,
        wall_now_ms: Option<f64>,
    ) -> Result<Value> {
        let f = Failure { status, grpc, names, method, idempotent, key_sent, headers, elapsed_ms: None, wall_now_ms };
        self.p.classify(f).or_throw(&env)
    }

    /// Returns true when the policy has an attempt timeout or a deadline.
    #[napi(catch_unwind)]
    pub fn has_timeouts(&self) -> bool {
        self.p.has_timeouts()
    }

    // ------------------------------------------------------------ sessions

    /// Starts a session; returns its id.
    #[napi(catch_unwind)]
    #[allow(clippy::too_many_arguments)]
    pub fn begin(
        &mut self,
        env: Env,
        key: Option<String>,
        seed: Option<String>,
        idempotent: Option<bool>,
        key_sent: Option<bool>,
        method: Option<String>,
        draws: Option<Vec<f64>>,
    ) -> Result<f64> {
        self.p.begin(key, seed.as_deref(), idempotent, key_sent, method, draws).or_throw(&env)
    }

    /// Starts a session and gates its first attempt in one call (the
    /// `execute` fast path): the id when it may proceed, `-id - 1` when the
    /// first attempt was rejected (see `gate`).
    #[napi(catch_unwind)]
    #[allow(clippy::too_many_arguments)]
    pub fn start(
        &mut self,
        env: Env,
        now: f64,
        key: Option<String>,
        idempotent: Option<bool>,
        key_sent: Option<bool>,
        method: Option<String>,
    ) -> Result<f64> {
        self.p.start(now, key, idempotent, key_sent, method).or_throw(&env)
    }

    /// Records a success and frees the session in one call (the `execute` fast path).
    #[napi(catch_unwind)]
    pub fn finish(&mut self, env: Env, id: f64, now: f64) -> Result<()> {
        self.p.finish(id, now).or_throw(&env)
    }

    /// Gates the next attempt: returns the attempt number, or 0 when rejected (see `gate`).
    #[napi(catch_unwind)]
    pub fn before(&mut self, env: Env, id: f64, now: f64) -> Result<f64> {
        self.p.before(id, now).or_throw(&env)
    }

    /// Returns the last gate of a session.
    #[napi(catch_unwind)]
    pub fn gate(&mut self, env: Env, id: f64) -> Result<Value> {
        self.p.gate(id).or_throw(&env)
    }

    /// Answers a failed attempt: the delay (ms) of the retry, or -1 when giving up (see `decision`).
    #[napi(catch_unwind)]
    #[allow(clippy::too_many_arguments)]
    pub fn fail(
        &mut self,
        env: Env,
        id: f64,
        now: f64,
        status: Option<f64>,
        grpc: Option<String>,
        names: Option<Vec<String>>,
        method: Option<String>,
        idempotent: Option<bool>,
        key_sent: Option<bool>,
        headers: Option<Vec<String>>,
        elapsed_ms: Option<f64>,
        wall_now_ms: Option<f64>,
    ) -> Result<f64> {
        let f = Failure { status, grpc, names, method, idempotent, key_sent, headers, elapsed_ms, wall_now_ms };
        self.p.fail(id, now, f).or_throw(&env)
    }

    /// Returns the last decision of a session.
    #[napi(catch_unwind)]
    pub fn decision(&mut self, env: Env, id: f64) -> Result<Value> {
        self.p.decision(id).or_throw(&env)
    }

    /// Records a success and finishes the session.
    #[napi(catch_unwind)]
    pub fn succeed(&mut self, env: Env, id: f64, now: f64, elapsed_ms: Option<f64>) -> Result<()> {
        self.p.succeed(id, now, elapsed_ms).or_throw(&env)
    }

    /// Ends a session as cancelled.
    #[napi(catch_unwind)]
    pub fn cancel(&mut self, env: Env, id: f64, now: f64) -> Result<()> {
        self.p.cancel(id, now).or_throw(&env)
    }

    /// Gives back what a session holds without counting anything (the vectors' `drop`).
    #[napi(catch_unwind)]
    pub fn release(&mut self, env: Env, id: f64) -> Result<()> {
        self.p.release(id).or_throw(&env)
    }

    /// Frees a session's slot (releasing what it still holds). Unknown ids are ignored.
    #[napi(catch_unwind)]
    pub fn free(&mut self, id: f64) {
        self.p.free(id)
    }

    /// Returns a session's idempotency key.
    #[napi(catch_unwind)]
    pub fn key(&mut self, env: Env, id: f64) -> Result<String> {
        self.p.key(id).or_throw(&env)
    }

    /// Returns a session's state: attempts made, done, give-up reason, key minted.
    #[napi(catch_unwind)]
    pub fn status(&mut self, env: Env, id: f64) -> Result<Value> {
        self.p.status(id).or_throw(&env)
    }

    /// Takes the breaker transitions a session's calls caused.
    #[napi(catch_unwind)]
    pub fn transitions(&mut self, env: Env, id: f64) -> Result<Value> {
        self.p.transitions(id).or_throw(&env)
    }
}

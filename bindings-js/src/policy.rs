//! Policies and the sessions they run.
//!
//! Sessions live in a per-policy slab and are named by generation-tagged
//! numeric ids, `generation * 2^21 + index`: an id of a freed slot never
//! names the session that reuses it. The slab shrinks as sessions finish:
//! free slots are reused lowest index first, trailing free slots are
//! dropped, and a slot created again starts past every generation a dropped
//! slot had, so no old id comes back to life. The hot steps (`before`, `fail`,
//! `succeed`, `start`, `finish`) answer numbers; the last gate and decision
//! of a session are kept for the JS layer to read as JSON when it needs them.

use crate::error::{Error, Result};
use crate::failure::{FailureArgs, StrList};
use crate::host::{count, draw, ms, ms_of, now_ns, ns, u64_arg, Host};
use crate::verdict::{classify_packed, StatusCache};
use crate::{transition_json, Breaker, Budget};
use retrycore::classify::{Failure, HostVerdict};
use retrycore::policy::{PolicyConfig, RetryPolicy};
use retrycore::session::{Decision, Gate, RetrySession, SessionOptions};
use retrycore::surface::{self, Ended, Ending, Observed};
use retrycore::ErrorCode;
use retrycore::{json, json::Value};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::marker::PhantomData;

/// Slots a policy holds at most (2^21); the low bits of an id.
const INDEX_LEN: u64 = 1 << 21;
const INDEX_BITS: f64 = INDEX_LEN as f64;

struct Slot {
    gen: u32,
    session: Option<RetrySession>,
    gate: Option<Gate>,
    decision: Option<Decision>,
}

impl Slot {
    const fn empty(gen: u32) -> Slot {
        Slot { gen, session: None, gate: None, decision: None }
    }
}

/// A live slot's session, last gate and last decision, borrowed field by field.
type Live<'a> = (&'a mut RetrySession, &'a mut Option<Gate>, &'a mut Option<Decision>);

#[cold]
fn finished() -> Error {
    Error::config(ErrorCode::InvalidState, "session", "this session is finished and released")
}

/// The slot index and generation an id names, if it could name one: a
/// whole number in [0, 2^53).
#[doc(hidden)]
#[inline(always)]
pub fn id_parts(id: f64) -> Option<(usize, u32)> {
    let n = id as u64;
    // n < 2^53, so the generation (n >> 21) < 2^32.
    ((0.0..9_007_199_254_740_992.0).contains(&id) && n as f64 == id)
        .then_some(((n & (INDEX_LEN - 1)) as usize, (n >> 21) as u32))
}

/// Writes how a call ends as the caller sees it (the core's `surface::Ended`);
/// a `raise` carries its message (`Ending::message`, the same text as Python's)
/// and, for a breaker's refusal, the state it refused in.
fn ending_json(e: &Ended) -> Value {
    let mut v = ending_kind_json(e);
    // Whether a give-up fallback answers instead (`Ending::falls_back`): after an error, after a returned value.
    v["fallsBack"] = json!(e.ending.falls_back(false));
    v["fallsBackOnValue"] = json!(e.ending.falls_back(true));
    v
}

fn ending_kind_json(e: &Ended) -> Value {
    match e.ending {
        Ending::Return => json!({"kind": "return"}),
        Ending::Propagate => json!({"kind": "propagate"}),
        Ending::Cancelled => json!({"kind": "cancelled"}),
        Ending::Raise { class, code, reason, marked, has_cause } => json!({
            "kind": "raise", "class": class.code(), "code": code, "reason": reason, "marked": marked, "cause": has_cause,
            "message": e.message, "state": e.state, "limiter": e.limiter,
        }),
    }
}

/// Writes a gate; a rejection carries the end of the call (`surface::after_reject`).
fn gate_json(g: &Gate, session: &RetrySession) -> Value {
    match g {
        Gate::Proceed { attempt, max_attempts, timeout, wait } => json!({
            "action": "proceed", "attempt": attempt, "maxAttempts": max_attempts,
            "timeout": timeout.map(ms_of), "wait": wait.map(ms_of),
        }),
        Gate::Reject { reason, retry_after, budget } => {
            let e = surface::after_reject(session, *reason, *retry_after, budget.as_deref());
            json!({
                "action": "reject", "reason": reason.code(),
                "retryAfter": retry_after.map(ms_of),
                "budget": budget,
                "limiter": session.limiter_rejection().map(|r| r.limiter.clone()),
                "limiterReason": session.limiter_rejection().map(|r| r.reason),
                "attempts": e.attempts,
                "maxAttempts": e.max_attempts,
                "ending": ending_json(&e),
                "onGiveUp": e.fires_on_give_up,
                "giveUpReason": e.reason,
            })
        }
    }
}

/// Writes a decision and what the caller observes after it (`surface::after_decision`).
fn decision_json(d: &Decision, session: &RetrySession) -> Value {
    let mut v = match d {
        Decision::Retry { retry, attempt, delay, backoff, server_delay, capped, category } => json!({
            "action": "retry", "retry": retry, "attempt": attempt, "delay": ms_of(*delay), "backoff": ms_of(*backoff),
            "serverDelay": server_delay.map(ms_of), "capped": capped, "category": category.code(),
        }),
        Decision::GiveUp { reason, category, exhausted, refusal, attempts } => json!({
            "action": "give_up", "reason": reason.code(), "category": category.code(), "exhausted": exhausted,
            "attempts": attempts, "budget": refusal.as_ref().map(|r| r.budget.clone()),
            "budgetReason": refusal.as_ref().map(|r| r.reason),
        }),
    };
    if let Value::Object(m) = &mut v {
        match surface::after_decision(session, d) {
            Observed::Retry(hook) => {
                m.insert("onRetry".into(), json!({ "attempt": hook.attempt, "retry": hook.retry }));
                m.insert("maxAttempts".into(), hook.max_attempts.into());
            }
            Observed::End(e) => {
                m.insert("maxAttempts".into(), e.max_attempts.into());
                m.insert("ending".into(), ending_json(&e));
                m.insert("onGiveUp".into(), e.fires_on_give_up.into());
                m.insert("giveUpReason".into(), e.reason.into());
            }
        }
    }
    v
}

/// A live retry policy and the sessions it runs.
pub struct Policy<H> {
    p: RetryPolicy,
    slots: Vec<Slot>,
    /// Free slot indices, lowest first; indices past `slots.len()` (of
    /// dropped trailing slots) are stale and skipped.
    free: BinaryHeap<Reverse<u32>>,
    /// The highest generation of any dropped slot: a slot pushed again starts past it.
    gen_floor: u32,
    status_cache: StatusCache,
    host: PhantomData<fn() -> H>,
}

impl<H: Host> Policy<H> {
    fn wrap(p: RetryPolicy) -> Self {
        Policy {
            p,
            slots: Vec::new(),
            free: BinaryHeap::new(),
            gen_floor: 0,
            status_cache: StatusCache::default(),
            host: PhantomData,
        }
    }

    fn create(c: PolicyConfig, entropy: Option<&str>) -> Result<Self> {
        let e = entropy.map_or_else(|| draw::<H, 8>().map(u64::from_le_bytes), |s| u64_arg(s, "entropy"))?;
        RetryPolicy::new(c, Some(e)).map(Self::wrap).map_err(Error::of_config)
    }

    /// Creates a policy from a document (JSON text; durations are strings).
    pub fn from_json(text: &str, entropy: Option<&str>) -> Result<Self> {
        let c = PolicyConfig::from_json(text).map_err(Error::of_config)?;
        Self::create(c, entropy)
    }

    /// Creates a policy from typed options (JSON text whose durations may be milliseconds).
    pub fn from_options(text: &str, entropy: Option<&str>) -> Result<Self> {
        let c = PolicyConfig::from_typed_value(&crate::options::parse(text)?, crate::options::MS)
            .map_err(Error::of_config)?;
        Self::create(c, entropy)
    }

    /// Writes the normalized policy document.
    pub fn to_json(&self) -> String {
        self.p.config().to_json()
    }

    /// Returns the schedule: rows of low / mid / high delays (ms) per retry.
    pub fn schedule(&self) -> Value {
        let s = self.p.schedule();
        let rows: Vec<Value> = s
            .rows
            .iter()
            .map(|r| {
                json!({"retry": r.retry, "attempt": r.attempt, "low": ms_of(r.low), "mid": ms_of(r.mid),
                       "high": ms_of(r.high), "cumulativeHigh": ms_of(r.cumulative_high)})
            })
            .collect();
        json!({"rows": rows, "worstCase": ms_of(s.worst_case()),
               "maxAttempts": self.p.config().max_attempts,
               "deadline": self.p.config().deadline.map(ms)})
    }

    /// Computes the backoff delay (ms) of retry `retry` for the draw `r`.
    #[inline]
    pub fn delay(&self, retry: f64, r: f64, prev: Option<f64>) -> Result<f64> {
        if !(retry >= 1.0 && retry.fract() == 0.0) {
            return Err(Error::config(
                ErrorCode::OutOfRange,
                "retry",
                format_args!("must be an integer >= 1, got {retry}"),
            ));
        }
        let retry = if retry > f64::from(u32::MAX) { u32::MAX } else { retry as u32 };
        let prev = prev.map(|p| ns(p, "prev")).transpose()?;
        // A delay that depends on a history it is not given is refused
        // (missing_field / invalid_combination, field prev), as in Python.
        self.p.config().backoff.delay_alone_ns(retry, r, prev).map(ms).map_err(Error::of_config)
    }

    /// Draws the delays (ms) of retries 1..=count from a generator seeded with `seed`.
    pub fn sample_delays(&self, seed: &str, n: f64) -> Result<Vec<f64>> {
        let count = count(n, retrycore::limits::MAX_ITEMS as u64, "count")? as u32;
        let seed = u64_arg(seed, "seed")?;
        Ok(self.p.config().backoff.sample_sequence_ns(seed, count).into_iter().map(ms).collect())
    }

    /// Replays `draws` (each in [0, 1]) through the backoff: the delays (ms) of retries 1..=draws.len().
    pub fn replay_delays(&self, draws: &[f64]) -> Result<Vec<f64>> {
        self.p.config().backoff.replay_ns(draws).map(|v| v.into_iter().map(ms).collect()).map_err(Error::of_config)
    }

    /// Returns a policy for tests: at most `attempts` calls, delays capped at `max_delay` ms.
    pub fn testing(&self, attempts: f64, max_delay: f64) -> Result<Self> {
        let attempts = count(attempts, u32::MAX.into(), "attempts")? as u32;
        let max = ns(max_delay, "maxDelay")?;
        self.p.testing(attempts, max).map(Self::wrap).map_err(Error::of_config)
    }

    /// Returns the counters with the retry_attempts_total family of metric names.
    pub fn counters(&self) -> Value {
        self.p.counters().snapshot().to_json_value()
    }

    /// Returns the policy's shared breaker, if any.
    pub fn breaker(&self) -> Option<Breaker<H>> {
        self.p.breaker().cloned().map(Breaker::from_shared)
    }

    /// Returns the number of budgets.
    pub fn budget_count(&self) -> u32 {
        u32::try_from(self.p.budgets().len()).unwrap_or(u32::MAX)
    }

    /// Returns the budget at `index`.
    pub fn budget(&self, index: f64) -> Option<Budget<H>> {
        let i = count(index, u32::MAX.into(), "index").ok()? as usize;
        self.p.budgets().get(i).cloned().map(Budget::from_shared)
    }

    /// Returns a policy whose sessions share `breaker`.
    pub fn share_breaker(&self, breaker: &Breaker<H>) -> Self {
        Self::wrap(self.p.with_breaker(Some(breaker.shared())))
    }

    /// Returns a policy whose budget at `index` is `budget`.
    pub fn share_budget(&self, index: f64, budget: &Budget<H>) -> Result<Self> {
        let i = count(index, u32::MAX.into(), "index")? as usize;
        let mut list = self.p.budgets().to_vec();
        let slot = list
            .get_mut(i)
            .ok_or_else(|| Error::config(ErrorCode::OutOfRange, "budgets", "no budget at that index"))?;
        *slot = budget.shared();
        Ok(Self::wrap(self.p.with_budgets(list)))
    }

    /// Classifies a status with this policy's rules (packed; see `verdict::classify_status_with`).
    #[inline]
    pub fn classify_status(&mut self, status: f64, flags: f64) -> Result<u32> {
        self.status_cache.get(|f| self.p.config().classify(f), status, flags)
    }

    /// Classifies a failure with this policy's rules and, for a failure that
    /// does not say, its `idempotent` (as the policy's sessions do); packed
    /// (see `verdict::pack_all`).
    pub fn classify<L: StrList>(&self, failure: FailureArgs<L>) -> Result<u32> {
        Ok(classify_packed(|f| self.p.config().classify(f), &failure.read()?))
    }

    /// Returns true when the policy's classification rules or its breaker's
    /// counting rules match messages: only then does the host send an
    /// error's message (read once, when the policy is made).
    pub fn needs_message(&self) -> bool {
        self.p.needs_message()
    }

    /// Returns true when the policy has an attempt timeout or a deadline.
    pub fn has_timeouts(&self) -> bool {
        self.p.config().attempt_timeout.is_some() || self.p.config().deadline.is_some()
    }

    /// Returns true when the policy has a limiter (a gate may then carry a wait).
    pub fn has_limiter(&self) -> bool {
        self.p.limiter().is_some()
    }

    // ------------------------------------------------------------ sessions

    #[inline]
    fn slot(&mut self, id: f64) -> Result<Live<'_>> {
        let (idx, gen) = id_parts(id).ok_or_else(finished)?;
        match self.slots.get_mut(idx) {
            Some(Slot { gen: g, session: Some(session), gate, decision }) if *g == gen => Ok((session, gate, decision)),
            _ => Err(finished()),
        }
    }

    #[inline]
    fn session(&mut self, id: f64) -> Result<&mut RetrySession> {
        Ok(self.slot(id)?.0)
    }

    /// Starts a session; returns its id.
    pub fn begin(
        &mut self,
        key: Option<String>,
        seed: Option<&str>,
        idempotent: Option<bool>,
        key_sent: Option<bool>,
        method: Option<String>,
        draws: Option<Vec<f64>>,
    ) -> Result<f64> {
        let key_entropy = if key.is_none() { Some(draw::<H, 16>()?) } else { None };
        let seed = seed.map(|s| u64_arg(s, "seed")).transpose()?;
        let opts = SessionOptions { key, key_entropy, seed, idempotent, idempotency_key_sent: key_sent, method, draws };
        let s = self.p.session(opts).map_err(Error::of_idempotency)?;
        let idx = match self.pop_free() {
            Some(i) => i,
            None => {
                if self.slots.len() >= INDEX_LEN as usize {
                    return Err(Error::config(ErrorCode::TooLarge, "session", "too many live sessions"));
                }
                self.slots.push(Slot::empty(self.gen_floor));
                self.slots.len() - 1
            }
        };
        let Some(slot) = self.slots.get_mut(idx) else {
            return Err(finished());
        };
        *slot = Slot { session: Some(s), ..Slot::empty(slot.gen.wrapping_add(1)) };
        Ok(f64::from(slot.gen) * INDEX_BITS + idx as f64)
    }

    /// Starts a session and gates its first attempt in one call (the
    /// `execute` fast path): the id when it may proceed, `-id - 1` when the
    /// first attempt was rejected (see `gate`).
    pub fn start(
        &mut self,
        now: f64,
        key: Option<String>,
        idempotent: Option<bool>,
        key_sent: Option<bool>,
        method: Option<String>,
    ) -> Result<f64> {
        let id = self.begin(key, None, idempotent, key_sent, method, None)?;
        let attempt = self.before(id, now);
        if attempt.is_err() {
            self.free(id);
        }
        Ok(if attempt? == 0.0 { -id - 1.0 } else { id })
    }

    /// Accounts for `n` first-try successes `execute` ran without a session,
    /// `duration_ns` in all (see `RetryPolicy::settle_first_tries`).
    pub fn settle(&self, n: f64, duration_ns: f64) -> Result<()> {
        let n = count(n, u64::MAX, "n")?;
        let d = count(duration_ns, u64::MAX, "durationNs")?;
        self.p.settle_first_tries(n, d);
        Ok(())
    }

    /// Records a success and frees the session in one call (the `execute` fast path).
    pub fn finish(&mut self, id: f64, now: f64) -> Result<()> {
        let r = self.succeed(id, now, None);
        self.free(id);
        r
    }

    /// Gates the next attempt: returns the attempt number, or 0 when rejected (see `gate`).
    #[inline]
    pub fn before(&mut self, id: f64, now: f64) -> Result<f64> {
        let now = now_ns::<H>(now, "now")?;
        let (session, gate, _) = self.slot(id)?;
        let g = session.before_attempt_ns(now).map_err(Error::of_config)?;
        let r = if let Gate::Proceed { attempt, .. } = g { f64::from(attempt) } else { 0.0 };
        *gate = Some(g);
        Ok(r)
    }

    /// Returns the last gate of a session (null before the first).
    pub fn gate(&mut self, id: f64) -> Result<Value> {
        let (session, gate, _) = self.slot(id)?;
        Ok(gate.as_ref().map_or(Value::Null, |g| gate_json(g, session)))
    }

    /// Answers a failed attempt: the delay (ms) of the retry, or -1 when giving up (see `decision`).
    #[inline]
    pub fn fail<L: StrList>(&mut self, id: f64, now: f64, failure: FailureArgs<L>) -> Result<f64> {
        let now = now_ns::<H>(now, "now")?;
        let f = failure.read()?;
        let (session, _, decision) = self.slot(id)?;
        let d = f.with(|f| session.on_failure_ns(now, f)).map_err(Error::of_config)?;
        let r = if let Decision::Retry { delay, .. } = &d { ms_of(*delay) } else { -1.0 };
        *decision = Some(d);
        Ok(r)
    }

    /// [`Self::fail`] for a failure described by an interned list of names
    /// (and the method, flags and verdict the session's call gave), with the
    /// decision in the answer: a retry without a server delay whose numbers
    /// are `attempt` (the failed attempt), `attempt + 1` and the hook's
    /// `attempt` answers `category | capped << B | delay_ns << B+1`, with
    /// `B` = `CATEGORY_BITS` and the delay in ns below 2^47; -1 a give-up;
    /// -2 any other retry (then read `decision`).
    #[allow(clippy::too_many_arguments)]
    pub fn fail_names(
        &mut self,
        id: f64,
        now: f64,
        names_id: f64,
        attempt: f64,
        method: Option<String>,
        idempotent: Option<bool>,
        key_sent: Option<bool>,
        verdict: Option<String>,
    ) -> Result<f64> {
        const B: u32 = retrycore::classify::CATEGORY_BITS;
        // `fail`'s checks in `fail`'s order, without its buffer: the failure is the names and these alone.
        let now = now_ns::<H>(now, "now")?;
        let list = crate::names::interned(names_id)?;
        let host = verdict.map(|v| HostVerdict::parse(&v, "verdict")).transpose().map_err(Error::of_config)?;
        let (session, _, decision) = self.slot(id)?;
        let d = crate::failure::with_names(&list, |error_names| {
            let f = Failure {
                error_names,
                method: method.as_deref(),
                idempotent,
                idempotency_key_sent: key_sent.unwrap_or(false),
                host,
                ..Failure::default()
            };
            session.on_failure_ns(now, &f)
        })
        .map_err(Error::of_config)?;
        let packed = match &d {
            Decision::Retry { retry, attempt: next, server_delay: None, capped, category, delay, .. } => {
                let ns = retrycore::duration::from_std(*delay);
                let fits = matches!(surface::after_decision(session, &d), Observed::Retry(hook) if hook.attempt == *retry)
                    && f64::from(*retry) == attempt
                    && *next == retry.saturating_add(1)
                    && ns < 1 << 47;
                if fits {
                    f64::from(category.index() | u32::from(*capped) << B) + ns as f64 * f64::from(1u32 << (B + 1))
                } else {
                    -2.0
                }
            }
            Decision::Retry { .. } => -2.0,
            Decision::GiveUp { .. } => -1.0,
        };
        *decision = Some(d);
        Ok(packed)
    }

    /// Returns the last decision of a session (null before the first).
    pub fn decision(&mut self, id: f64) -> Result<Value> {
        let (session, _, decision) = self.slot(id)?;
        Ok(decision.as_ref().map_or(Value::Null, |d| decision_json(d, session)))
    }

    /// The last decision of a session when it is a retry, packed for the JS
    /// layer to write without JSON, with `B` = `CATEGORY_BITS`: category |
    /// capped << B | has a server delay << B+1 | retry << B+2 | attempt <<
    /// B+16 | the on_retry hook's attempt << B+30 (`surface::after_decision`),
    /// each number below 2^14; -1 for a give-up, no decision or a number past
    /// that (then read `decision`). Its backoff and server delay: [`Self::retry_delay`].
    #[inline]
    pub fn retried(&mut self, id: f64) -> Result<f64> {
        const B: u32 = retrycore::classify::CATEGORY_BITS;
        let (session, _, decision) = self.slot(id)?;
        let Some(d @ Decision::Retry { retry, attempt, server_delay, capped, category, .. }) = decision.as_ref() else {
            return Ok(-1.0);
        };
        let Observed::Retry(hook) = surface::after_decision(session, d) else { return Ok(-1.0) };
        let numbers = [*retry, *attempt, hook.attempt];
        if numbers.iter().any(|n| *n >= 1 << 14) {
            return Ok(-1.0);
        }
        let mut packed =
            f64::from(category.index() | u32::from(*capped) << B | u32::from(server_delay.is_some()) << (B + 1));
        let mut scale = f64::from(1u32 << (B + 2));
        for n in numbers {
            packed += f64::from(n) * scale;
            scale *= 16384.0;
        }
        Ok(packed)
    }

    /// The backoff (`server` false) or the server delay (ms; NaN: none) of a
    /// session's last decision, a retry (see [`Self::retried`]).
    #[inline]
    pub fn retry_delay(&mut self, id: f64, server: bool) -> Result<f64> {
        let (_, _, decision) = self.slot(id)?;
        Ok(match decision {
            Some(Decision::Retry { server_delay, .. }) if server => server_delay.map_or(f64::NAN, ms_of),
            Some(Decision::Retry { backoff, .. }) => ms_of(*backoff),
            _ => f64::NAN,
        })
    }

    /// Records a success and finishes the session.
    #[inline]
    pub fn succeed(&mut self, id: f64, now: f64, elapsed_ms: Option<f64>) -> Result<()> {
        let now = now_ns::<H>(now, "now")?;
        let elapsed = elapsed_ms.map(|e| ns(e, "elapsed")).transpose()?;
        self.session(id)?.on_success_ns(now, elapsed).map_err(Error::of_config)
    }

    /// Ends a session as cancelled.
    pub fn cancel(&mut self, id: f64, now: f64) -> Result<()> {
        let now = now_ns::<H>(now, "now")?;
        self.session(id)?.cancel_ns(now);
        Ok(())
    }

    /// Gives back what a session holds without counting anything (the vectors' `drop`).
    pub fn release(&mut self, id: f64) -> Result<()> {
        self.session(id)?.release();
        Ok(())
    }

    /// Frees a session's slot (releasing what it still holds). Unknown ids are ignored.
    #[inline]
    pub fn free(&mut self, id: f64) {
        let Some((idx, gen)) = id_parts(id) else { return };
        if let Some(s) = self.slots.get_mut(idx) {
            if s.gen == gen && s.session.is_some() {
                *s = Slot::empty(gen);
                if idx + 1 == self.slots.len() {
                    self.shrink();
                } else {
                    self.free.push(Reverse(idx as u32));
                }
            }
        }
    }

    /// Takes the lowest free slot index still inside the slab.
    #[inline]
    fn pop_free(&mut self) -> Option<usize> {
        let Reverse(i) = self.free.pop()?;
        if (i as usize) < self.slots.len() {
            return Some(i as usize);
        }
        // The lowest is stale, so every other one is too.
        self.free.clear();
        None
    }

    /// Drops the trailing free slots, and the memory of a slab and free list
    /// much larger than what is live.
    #[cold]
    fn shrink(&mut self) {
        while let Some(last) = self.slots.last() {
            if last.session.is_some() {
                break;
            }
            self.gen_floor = self.gen_floor.max(last.gen);
            self.slots.pop();
        }
        let len = self.slots.len();
        if self.free.len() > 2 * len + 64 {
            let keep: Vec<Reverse<u32>> = self.free.drain().filter(|Reverse(i)| (*i as usize) < len).collect();
            self.free = keep.into();
        }
        if self.slots.capacity() > 4 * len + 64 {
            self.slots.shrink_to(2 * len);
            self.free.shrink_to(2 * len);
        }
    }

    /// Returns the slots the slab holds and the sessions live in it (tests).
    pub fn slab_size(&self) -> (usize, usize) {
        (self.slots.len(), self.slots.iter().filter(|s| s.session.is_some()).count())
    }

    /// Returns the capacity of the slab and the length of its free list (tests).
    #[doc(hidden)]
    pub fn slab_memory(&self) -> (usize, usize) {
        (self.slots.capacity(), self.free.len())
    }

    /// Returns a session's idempotency key.
    pub fn key(&mut self, id: f64) -> Result<String> {
        Ok(self.session(id)?.key().to_owned())
    }

    /// Returns a session's state: attempts made, done, give-up reason, key minted.
    pub fn status(&mut self, id: f64) -> Result<Value> {
        let s = self.session(id)?;
        Ok(json!({"attempts": s.attempts(), "done": s.is_done(),
                  "reason": s.give_up_reason().map(|r| r.code()), "keyMinted": s.key_minted()}))
    }

    /// Takes the breaker transitions a session's calls caused.
    pub fn transitions(&mut self, id: f64) -> Result<Value> {
        let t = self.session(id)?.take_transitions();
        Ok(Value::Array(t.iter().map(transition_json).collect()))
    }
}

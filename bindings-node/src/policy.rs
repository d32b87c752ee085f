//! Policies, sessions (in a per-policy slab, named by numeric ids) and classification.

use crate::breaker::NativeBreaker;
use crate::budget::NativeBudget;
use crate::{core_err, entropy, entropy_u64, ms, ns, raise, u64_arg, wall_ms, Domain};
use napi::{Env, Result};
use napi_derive::napi;
use retrycore::classify::{Category, Classifier, Failure, GrpcCode, RetryRule, Verdict};
use retrycore::policy::{PolicyConfig, RetryPolicy};
use retrycore::session::{Decision, Gate, RetrySession, SessionOptions};
use retrycore::ErrorCode;
use serde_json::{json, Value};

/// Reads a document whose durations may be numbers of milliseconds (typed
/// JS options): each bare number the core refuses as `invalid_duration` is
/// converted with `from_millis_f64` to an exact `"<ns>ns"` string and the
/// document is read again. The core alone knows which keys are durations.
pub(crate) fn read_with_ms<T>(env: &Env, text: &str, read: impl Fn(&Value) -> retrycore::Result<T>) -> Result<T> {
    if text.len() > retrycore::policy::MAX_DOCUMENT {
        return Err(raise(env, "range", "too_large", "", "options are at most 1 MiB of JSON"));
    }
    let mut v: Value = serde_json::from_str(text)
        .map_err(|e| raise(env, "type", "invalid_json", "", &format!("options are not JSON: {e}")))?;
    for _ in 0..256 {
        match read(&v) {
            Err(e) if e.kind() == ErrorCode::InvalidDuration => {
                let field = e.field().to_owned();
                match locate(&mut v, &field) {
                    Some(slot) if slot.is_number() => {
                        let n = slot.as_f64().unwrap_or(f64::NAN);
                        let ns = retrycore::duration::from_millis_f64(n, &field)
                            .map_err(|e| core_err(env, &e, Domain::Config))?;
                        *slot = Value::String(format!("{ns}ns"));
                    }
                    _ => return Err(core_err(env, &e, Domain::Config)),
                }
            }
            Err(e) => return Err(core_err(env, &e, Domain::Config)),
            Ok(t) => return Ok(t),
        }
    }
    Err(raise(env, "range", "too_large", "", "too many duration fields"))
}

/// Finds the value at a field path such as `budgets[0].window`.
fn locate<'a>(v: &'a mut Value, path: &str) -> Option<&'a mut Value> {
    let mut cur = v;
    for part in path.split('.') {
        let (name, rest) = match part.find('[') {
            Some(i) => (&part[..i], &part[i..]),
            None => (part, ""),
        };
        if !name.is_empty() {
            cur = cur.get_mut(name)?;
        }
        for idx in rest.split('[').filter(|s| !s.is_empty()) {
            let i: usize = idx.trim_end_matches(']').parse().ok()?;
            cur = cur.get_mut(i)?;
        }
    }
    Some(cur)
}

/// What the host saw of one failed attempt, owned.
pub(crate) struct HostFailure {
    status: Option<u16>,
    grpc: Option<GrpcCode>,
    names: Vec<String>,
    method: Option<String>,
    idempotent: Option<bool>,
    key_sent: bool,
    headers: Vec<String>,
    elapsed: Option<u64>,
    wall: Option<u64>,
}

impl HostFailure {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn read(
        env: &Env,
        status: Option<f64>,
        grpc: Option<String>,
        names: Option<Vec<String>>,
        method: Option<String>,
        idempotent: Option<bool>,
        key_sent: Option<bool>,
        headers: Option<Vec<String>>,
        elapsed_ms: Option<f64>,
        wall_now_ms: Option<f64>,
    ) -> Result<HostFailure> {
        let status = match status {
            None => None,
            Some(s) if s.fract() == 0.0 && (0.0..=999.0).contains(&s) => Some(s as u16),
            Some(s) => {
                return Err(raise(
                    env,
                    "range",
                    "out_of_range",
                    "status",
                    &format!("status: must be an integer in [0, 999], got {s}"),
                ))
            }
        };
        let grpc = match grpc {
            None => None,
            Some(g) => Some(GrpcCode::parse(&g).ok_or_else(|| {
                raise(env, "range", "invalid_value", "grpcCode", &format!("grpcCode: not a gRPC status code: {g:?}"))
            })?),
        };
        let headers = headers.unwrap_or_default();
        if headers.len() & 1 == 1 {
            return Err(raise(env, "type", "invalid_type", "headers", "headers: must be name/value pairs"));
        }
        Ok(HostFailure {
            status,
            grpc,
            names: names.unwrap_or_default(),
            method,
            idempotent,
            key_sent: key_sent.unwrap_or(false),
            headers,
            elapsed: elapsed_ms.map(|e| ns(env, e, "elapsed")).transpose()?,
            wall: wall_now_ms.map(|w| wall_ms(env, w, "wallNowMs")).transpose()?,
        })
    }

    pub(crate) fn with<R>(&self, f: impl FnOnce(&Failure<'_>) -> R) -> R {
        let names: Vec<&str> = self.names.iter().map(String::as_str).collect();
        let headers: Vec<(&str, &str)> = self.headers.chunks_exact(2).map(|p| (p[0].as_str(), p[1].as_str())).collect();
        let failure = Failure {
            status: self.status,
            grpc_code: self.grpc,
            error_names: &names,
            method: self.method.as_deref(),
            idempotent: self.idempotent,
            idempotency_key_sent: self.key_sent,
            headers: &headers,
            elapsed: self.elapsed.map(std::time::Duration::from_nanos),
            wall_now_ms: self.wall,
        };
        f(&failure)
    }
}

pub(crate) fn verdict_json(v: &Verdict, refused: bool) -> Value {
    json!({
        "category": v.category.code(),
        "retry": v.retry.code(),
        "safe": v.safe,
        "retryable": v.retryable,
        "serverDeclined": v.server_declined,
        "serverDelay": v.advice.delay_ns().map(ms),
        "shouldRetry": v.advice.should_retry,
        "refused": refused,
    })
}

fn rule_index(r: RetryRule) -> u32 {
    match r {
        RetryRule::Always => 0,
        RetryRule::IfIdempotent => 1,
        RetryRule::Never => 2,
    }
}

fn category_index(c: Category) -> u32 {
    Category::ALL.iter().position(|x| *x == c).unwrap_or(Category::ALL.len() - 1) as u32
}

/// Packs a verdict without server advice into one number:
/// category | rule << 4 | safe << 6 | retryable << 7 | declined << 8.
fn pack(v: &Verdict) -> u32 {
    category_index(v.category)
        | rule_index(v.retry) << 4
        | u32::from(v.safe) << 6
        | u32::from(v.retryable) << 7
        | u32::from(v.server_declined) << 8
}

/// Memoized verdicts of a classifier for a status alone: the core's answers
/// for (status 0..=999, flags 0..=7), computed on first use.
#[derive(Default)]
pub(crate) struct StatusCache(Vec<u16>);

impl StatusCache {
    pub(crate) fn get(&mut self, c: &Classifier, env: &Env, status: f64, flags: u32) -> Result<u32> {
        if !(status.fract() == 0.0 && (0.0..=999.0).contains(&status)) || flags > 7 {
            return classify_status_with(c, env, status, flags);
        }
        if self.0.is_empty() {
            self.0 = vec![u16::MAX; 1000 * 8];
        }
        let i = status as usize * 8 + flags as usize;
        if self.0[i] == u16::MAX {
            self.0[i] = classify_status_with(c, env, status, flags)? as u16;
        }
        Ok(u32::from(self.0[i]))
    }
}

/// Classifies a status alone: flags bit 0 = idempotent, bit 1 = declared
/// not idempotent, bit 2 = idempotency key sent.
pub(crate) fn classify_status_with(c: &Classifier, env: &Env, status: f64, flags: u32) -> Result<u32> {
    if !(status.fract() == 0.0 && (0.0..=999.0).contains(&status)) {
        return Err(raise(
            env,
            "range",
            "out_of_range",
            "status",
            &format!("status: must be an integer in [0, 999], got {status}"),
        ));
    }
    if flags > 7 {
        return Err(raise(env, "range", "out_of_range", "flags", "flags: must be in [0, 7]"));
    }
    let idempotent = if flags & 1 != 0 {
        Some(true)
    } else if flags & 2 != 0 {
        Some(false)
    } else {
        None
    };
    let f =
        Failure { status: Some(status as u16), idempotent, idempotency_key_sent: flags & 4 != 0, ..Default::default() };
    Ok(pack(&c.classify(&f)))
}

pub(crate) fn classify_with(c: &Classifier, f: &HostFailure) -> Value {
    f.with(|f| verdict_json(&c.classify(f), retrycore::classify::is_refused(f.error_names)))
}

/// Classifies a status with the built-in tables (the hot path; see `classifyStatus` in lib/).
#[napi(catch_unwind)]
pub fn classify_status(env: Env, status: f64, flags: u32) -> Result<u32> {
    thread_local!(static DEFAULT: (Classifier, std::cell::RefCell<StatusCache>) = (Classifier::default(), Default::default()));
    DEFAULT.with(|(c, cache)| cache.borrow_mut().get(c, &env, status, flags))
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
    let f = HostFailure::read(&env, status, grpc, names, method, idempotent, key_sent, headers, None, wall_now_ms)?;
    Ok(classify_with(&Classifier::default(), &f))
}

struct Slot {
    gen: u32,
    session: Option<RetrySession>,
    gate: Option<Gate>,
    decision: Option<Decision>,
}

const INDEX_BITS: f64 = 2_097_152.0; // 2^21 slots

/// A live retry policy and the sessions it runs.
#[napi]
pub struct NativePolicy {
    p: RetryPolicy,
    slots: Vec<Slot>,
    free: Vec<u32>,
    status_cache: StatusCache,
}

impl NativePolicy {
    fn wrap(p: RetryPolicy) -> NativePolicy {
        NativePolicy { p, slots: Vec::new(), free: Vec::new(), status_cache: StatusCache::default() }
    }

    fn slot(&mut self, env: &Env, id: f64) -> Result<&mut Slot> {
        let idx = (id % INDEX_BITS) as usize;
        let gen = (id / INDEX_BITS).floor();
        match self.slots.get_mut(idx) {
            Some(s) if id >= 0.0 && f64::from(s.gen) == gen && s.session.is_some() => Ok(s),
            _ => Err(raise(env, "state", "invalid_state", "session", "session: this session is finished and released")),
        }
    }

    fn session(&mut self, env: &Env, id: f64) -> Result<&mut RetrySession> {
        Ok(self.slot(env, id)?.session.as_mut().expect("checked by slot"))
    }
}

fn gate_json(g: &Gate) -> Value {
    match g {
        Gate::Proceed { attempt, max_attempts, timeout } => json!({
            "action": "proceed", "attempt": attempt, "maxAttempts": max_attempts,
            "timeout": timeout.map(|t| ms(retrycore::duration::from_std(t))),
        }),
        Gate::Reject { reason, retry_after, budget } => json!({
            "action": "reject", "reason": reason.code(),
            "retryAfter": retry_after.map(|t| ms(retrycore::duration::from_std(t))),
            "budget": budget,
        }),
    }
}

fn decision_json(d: &Decision) -> Value {
    let m = |t: std::time::Duration| ms(retrycore::duration::from_std(t));
    match d {
        Decision::Retry { retry, attempt, delay, backoff, server_delay, capped, category } => json!({
            "action": "retry", "retry": retry, "attempt": attempt, "delay": m(*delay), "backoff": m(*backoff),
            "serverDelay": server_delay.map(m), "capped": capped, "category": category.code(),
        }),
        Decision::GiveUp { reason, category, exhausted, refusal, attempts } => json!({
            "action": "give_up", "reason": reason.code(), "category": category.code(), "exhausted": exhausted,
            "attempts": attempts, "budget": refusal.as_ref().map(|r| r.budget.clone()),
            "budgetReason": refusal.as_ref().map(|r| r.reason),
        }),
    }
}

#[napi]
impl NativePolicy {
    /// Creates a policy from a document (JSON text; durations are strings).
    #[napi(factory, catch_unwind)]
    pub fn from_json(env: Env, text: String, entropy: Option<String>) -> Result<NativePolicy> {
        let c = PolicyConfig::from_json(&text).map_err(|e| core_err(&env, &e, Domain::Config))?;
        Self::create(&env, c, entropy)
    }

    /// Creates a policy from typed options (JSON text whose durations may be milliseconds).
    #[napi(factory, catch_unwind)]
    pub fn from_options(env: Env, text: String, entropy: Option<String>) -> Result<NativePolicy> {
        let c = crate::policy::read_with_ms(&env, &text, PolicyConfig::from_json_value)?;
        Self::create(&env, c, entropy)
    }

    fn create(env: &Env, c: PolicyConfig, entropy: Option<String>) -> Result<NativePolicy> {
        let e = match entropy {
            Some(s) => u64_arg(env, &s, "entropy")?,
            None => entropy_u64(env)?,
        };
        RetryPolicy::new(c, Some(e)).map(Self::wrap).map_err(|e| core_err(env, &e, Domain::Config))
    }

    /// Writes the normalized policy document.
    #[napi(catch_unwind)]
    pub fn to_json(&self) -> String {
        self.p.config().to_json()
    }

    /// Returns the schedule: rows of low / mid / high delays (ms) per retry.
    #[napi(catch_unwind)]
    pub fn schedule(&self) -> Value {
        let s = self.p.schedule();
        let rows: Vec<Value> = s
            .rows
            .iter()
            .map(|r| {
                let f = |d: std::time::Duration| ms(retrycore::duration::from_std(d));
                json!({"retry": r.retry, "attempt": r.attempt, "low": f(r.low), "mid": f(r.mid), "high": f(r.high),
                       "cumulativeHigh": f(r.cumulative_high)})
            })
            .collect();
        json!({"rows": rows, "worstCase": ms(retrycore::duration::from_std(s.worst_case())),
               "maxAttempts": self.p.config().max_attempts,
               "deadline": self.p.config().deadline.map(ms)})
    }

    /// Computes the backoff delay (ms) of retry `retry` for the draw `r`.
    #[napi(catch_unwind)]
    pub fn delay(&self, env: Env, retry: f64, r: f64, prev: Option<f64>) -> Result<f64> {
        if !(retry >= 1.0 && retry.fract() == 0.0) {
            return Err(raise(
                &env,
                "range",
                "out_of_range",
                "retry",
                &format!("retry: must be an integer >= 1, got {retry}"),
            ));
        }
        let retry = if retry > f64::from(u32::MAX) { u32::MAX } else { retry as u32 };
        let prev = match prev {
            Some(p) => Some(ns(&env, p, "prev")?),
            None => None,
        };
        self.p.config().backoff.delay_ns(retry, r, prev).map(ms).map_err(|e| core_err(&env, &e, Domain::Config))
    }

    /// Draws the delays (ms) of retries 1..=count from a generator seeded with `seed`.
    #[napi(catch_unwind)]
    pub fn sample_delays(&self, env: Env, seed: String, count: u32) -> Result<Vec<f64>> {
        if count > 100_000 {
            return Err(raise(&env, "range", "out_of_range", "count", "count: at most 100000 delays"));
        }
        let seed = u64_arg(&env, &seed, "seed")?;
        Ok(self.p.config().backoff.sample_sequence_ns(seed, count).into_iter().map(ms).collect())
    }

    /// Replays `draws` (each in [0, 1]) through the backoff: the delays (ms) of retries 1..=draws.len().
    #[napi(catch_unwind)]
    pub fn replay_delays(&self, env: Env, draws: Vec<f64>) -> Result<Vec<f64>> {
        self.p
            .config()
            .backoff
            .replay_ns(&draws)
            .map(|v| v.into_iter().map(ms).collect())
            .map_err(|e| core_err(&env, &e, Domain::Config))
    }

    /// Returns a policy for tests: at most `attempts` calls, delays capped at `max_delay` ms.
    #[napi(catch_unwind)]
    pub fn testing(&self, env: Env, attempts: f64, max_delay: f64) -> Result<NativePolicy> {
        if !(attempts.fract() == 0.0 && (0.0..=f64::from(u32::MAX)).contains(&attempts)) {
            return Err(raise(
                &env,
                "range",
                "out_of_range",
                "attempts",
                &format!("attempts: must be an integer >= 1, got {attempts}"),
            ));
        }
        let max = ns(&env, max_delay, "maxDelay")?;
        self.p.testing(attempts as u32, max).map(Self::wrap).map_err(|e| core_err(&env, &e, Domain::Config))
    }

    /// Returns the counters as the seeds' metric names.
    #[napi(catch_unwind)]
    pub fn counters(&self) -> Value {
        self.p.counters().snapshot().to_json_value()
    }

    /// Returns the policy's shared breaker, if any.
    #[napi(catch_unwind)]
    pub fn breaker(&self) -> Option<NativeBreaker> {
        self.p.breaker().map(|b| NativeBreaker::from_shared(b.clone()))
    }

    /// Returns the number of budgets.
    #[napi(catch_unwind)]
    pub fn budget_count(&self) -> u32 {
        self.p.budgets().len() as u32
    }

    /// Returns the budget at `index`.
    #[napi(catch_unwind)]
    pub fn budget(&self, index: u32) -> Option<NativeBudget> {
        self.p.budgets().get(index as usize).map(|b| NativeBudget::from_shared(b.clone()))
    }

    /// Returns a policy whose sessions share `breaker`.
    #[napi(catch_unwind)]
    pub fn share_breaker(&self, breaker: &NativeBreaker) -> NativePolicy {
        Self::wrap(self.p.with_breaker(Some(breaker.shared())))
    }

    /// Returns a policy whose budget at `index` is `budget`.
    #[napi(catch_unwind)]
    pub fn share_budget(&self, env: Env, index: u32, budget: &NativeBudget) -> Result<NativePolicy> {
        let mut list = self.p.budgets().to_vec();
        match list.get_mut(index as usize) {
            Some(slot) => *slot = budget.shared(),
            None => return Err(raise(&env, "range", "out_of_range", "budgets", "budgets: no budget at that index")),
        }
        Ok(Self::wrap(self.p.with_budgets(list)))
    }

    /// Classifies a status with this policy's rules (packed; see `classify_status`).
    #[napi(catch_unwind)]
    pub fn classify_status(&mut self, env: Env, status: f64, flags: u32) -> Result<u32> {
        self.status_cache.get(&self.p.config().classifier, &env, status, flags)
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
        let f = HostFailure::read(&env, status, grpc, names, method, idempotent, key_sent, headers, None, wall_now_ms)?;
        Ok(classify_with(&self.p.config().classifier, &f))
    }

    /// Returns true when the policy has an attempt timeout or a deadline.
    #[napi(catch_unwind)]
    pub fn has_timeouts(&self) -> bool {
        self.p.config().attempt_timeout.is_some() || self.p.config().deadline.is_some()
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
        let key_entropy = if key.is_none() {
            let mut b = [0u8; 16];
            entropy(&env, &mut b)?;
            Some(b)
        } else {
            None
        };
        let seed = seed.map(|s| u64_arg(&env, &s, "seed")).transpose()?;
        let opts = SessionOptions { key, key_entropy, seed, idempotent, idempotency_key_sent: key_sent, method, draws };
        let s = self.p.session(opts).map_err(|e| core_err(&env, &e, Domain::Idempotency))?;
        let idx = match self.free.pop() {
            Some(i) => i,
            None => {
                if self.slots.len() >= INDEX_BITS as usize {
                    return Err(raise(&env, "range", "too_large", "session", "session: too many live sessions"));
                }
                self.slots.push(Slot { gen: 0, session: None, gate: None, decision: None });
                (self.slots.len() - 1) as u32
            }
        };
        let slot = &mut self.slots[idx as usize];
        slot.gen = slot.gen.wrapping_add(1);
        slot.session = Some(s);
        slot.gate = None;
        slot.decision = None;
        Ok(f64::from(slot.gen) * INDEX_BITS + f64::from(idx))
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
        let id = self.begin(env, key, None, idempotent, key_sent, method, None)?;
        match self.before(env, id, now) {
            Ok(0.0) => Ok(-id - 1.0),
            Ok(_) => Ok(id),
            Err(e) => {
                self.free(id);
                Err(e)
            }
        }
    }

    /// Records a success and frees the session in one call (the `execute` fast path).
    #[napi(catch_unwind)]
    pub fn finish(&mut self, env: Env, id: f64, now: f64) -> Result<()> {
        let r = self.succeed(env, id, now, None);
        self.free(id);
        r
    }

    /// Gates the next attempt: returns the attempt number, or 0 when rejected (see `gate`).
    #[napi(catch_unwind)]
    pub fn before(&mut self, env: Env, id: f64, now: f64) -> Result<f64> {
        let now = crate::now_ns(&env, now, "now")?;
        let slot = self.slot(&env, id)?;
        let s = slot.session.as_mut().expect("checked by slot");
        let g = s.before_attempt_ns(now).map_err(|e| core_err(&env, &e, Domain::State))?;
        let r = match g {
            Gate::Proceed { attempt, .. } => f64::from(attempt),
            Gate::Reject { .. } => 0.0,
        };
        slot.gate = Some(g);
        Ok(r)
    }

    /// Returns the last gate of a session.
    #[napi(catch_unwind)]
    pub fn gate(&mut self, env: Env, id: f64) -> Result<Value> {
        Ok(self.slot(&env, id)?.gate.as_ref().map_or(Value::Null, gate_json))
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
        let now = crate::now_ns(&env, now, "now")?;
        let f = HostFailure::read(
            &env,
            status,
            grpc,
            names,
            method,
            idempotent,
            key_sent,
            headers,
            elapsed_ms,
            wall_now_ms,
        )?;
        let slot = self.slot(&env, id)?;
        let s = slot.session.as_mut().expect("checked by slot");
        let d = f.with(|f| s.on_failure_ns(now, f)).map_err(|e| core_err(&env, &e, Domain::State))?;
        let r = match &d {
            Decision::Retry { delay, .. } => ms(retrycore::duration::from_std(*delay)),
            Decision::GiveUp { .. } => -1.0,
        };
        slot.decision = Some(d);
        Ok(r)
    }

    /// Returns the last decision of a session.
    #[napi(catch_unwind)]
    pub fn decision(&mut self, env: Env, id: f64) -> Result<Value> {
        Ok(self.slot(&env, id)?.decision.as_ref().map_or(Value::Null, decision_json))
    }

    /// Records a success and finishes the session.
    #[napi(catch_unwind)]
    pub fn succeed(&mut self, env: Env, id: f64, now: f64, elapsed_ms: Option<f64>) -> Result<()> {
        let now = crate::now_ns(&env, now, "now")?;
        let elapsed = elapsed_ms.map(|e| ns(&env, e, "elapsed")).transpose()?;
        self.session(&env, id)?.on_success_ns(now, elapsed).map_err(|e| core_err(&env, &e, Domain::State))
    }

    /// Ends a session as cancelled.
    #[napi(catch_unwind)]
    pub fn cancel(&mut self, env: Env, id: f64, now: f64) -> Result<()> {
        let now = crate::now_ns(&env, now, "now")?;
        self.session(&env, id)?.cancel_ns(now);
        Ok(())
    }

    /// Gives back what a session holds without counting anything (the vectors' `drop`).
    #[napi(catch_unwind)]
    pub fn release(&mut self, env: Env, id: f64) -> Result<()> {
        self.session(&env, id)?.release();
        Ok(())
    }

    /// Frees a session's slot (releasing what it still holds). Unknown ids are ignored.
    #[napi(catch_unwind)]
    pub fn free(&mut self, id: f64) {
        let idx = (id % INDEX_BITS) as usize;
        if let Some(s) = self.slots.get_mut(idx) {
            if id >= 0.0 && f64::from(s.gen) == (id / INDEX_BITS).floor() && s.session.is_some() {
                s.session = None;
                s.gate = None;
                s.decision = None;
                self.free.push(idx as u32);
            }
        }
    }

    /// Returns a session's idempotency key.
    #[napi(catch_unwind)]
    pub fn key(&mut self, env: Env, id: f64) -> Result<String> {
        Ok(self.session(&env, id)?.key().to_owned())
    }

    /// Returns a session's state: attempts made, done, give-up reason, key minted.
    #[napi(catch_unwind)]
    pub fn status(&mut self, env: Env, id: f64) -> Result<Value> {
        let s = self.session(&env, id)?;
        Ok(json!({"attempts": s.attempts(), "done": s.is_done(),
                  "reason": s.give_up_reason().map(|r| r.code()), "keyMinted": s.key_minted()}))
    }

    /// Takes the breaker transitions a session's calls caused.
    #[napi(catch_unwind)]
    pub fn transitions(&mut self, env: Env, id: f64) -> Result<Value> {
        let t = self.session(&env, id)?.take_transitions();
        Ok(Value::Array(t.iter().map(crate::breaker::transition_json).collect()))
    }
}

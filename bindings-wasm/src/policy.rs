//! Policies, sessions (in a per-policy slab, named by numeric ids) and classification.

use crate::breaker::NativeBreaker;
use crate::budget::NativeBudget;
use crate::errors::{core_err, nan, raise, Domain, JsErr, R};
use crate::{entropy, entropy_u64, js, ms, now_ns, ns, numbers, strings, u64_arg, wall_ms};
use retrycore::classify::{Category, Classifier, Failure, GrpcCode, RetryRule, Verdict};
use retrycore::policy::{PolicyConfig, RetryPolicy};
use retrycore::session::{Decision, Gate, RetrySession, SessionOptions};
use retrycore::ErrorCode;
use serde_json::{json, Value};
use std::sync::atomic::{AtomicU16, Ordering};
use wasm_bindgen::prelude::*;

/// Reads a document whose durations may be numbers of milliseconds (typed
/// JS options): each bare number the core refuses as `invalid_duration` is
/// converted with `from_millis_f64` to an exact `"<ns>ns"` string and the
/// document is read again. The core alone knows which keys are durations.
pub(crate) fn read_with_ms<T>(text: &str, read: impl Fn(&Value) -> retrycore::Result<T>) -> R<T> {
    if text.len() > retrycore::policy::MAX_DOCUMENT {
        return Err(raise("range", "too_large", "", "options are at most 1 MiB of JSON"));
    }
    let mut v: Value = serde_json::from_str(text)
        .map_err(|e| raise("type", "invalid_json", "", &format!("options are not JSON: {e}")))?;
    for _ in 0..256 {
        match read(&v) {
            Err(e) if e.kind() == ErrorCode::InvalidDuration => {
                let field = e.field().to_owned();
                match locate(&mut v, &field) {
                    Some(slot) if slot.is_number() => {
                        let n = slot.as_f64().unwrap_or(f64::NAN);
                        let ns = retrycore::duration::from_millis_f64(n, &field)
                            .map_err(|e| core_err(&e, Domain::Config))?;
                        *slot = Value::String(format!("{ns}ns"));
                    }
                    _ => return Err(core_err(&e, Domain::Config)),
                }
            }
            Err(e) => return Err(core_err(&e, Domain::Config)),
            Ok(t) => return Ok(t),
        }
    }
    Err(raise("range", "too_large", "", "too many duration fields"))
}

/// Finds the value at a field path such as `budgets[0].window`.
fn locate<'a>(v: &'a mut Value, path: &str) -> Option<&'a mut Value> {
    let mut cur = v;
    for part in path.split('.') {
        let (name, rest) = match part.find('[') {
            Some(i) => (part.get(..i)?, part.get(i..)?),
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

fn status_of(s: f64) -> R<u16> {
    if s.fract() == 0.0 && (0.0..=999.0).contains(&s) {
        Ok(s as u16)
    } else {
        Err(raise("range", "out_of_range", "status", &format!("status: must be an integer in [0, 999], got {s}")))
    }
}

impl HostFailure {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn read(
        status: Option<f64>,
        grpc: Option<String>,
        names: &JsValue,
        method: Option<String>,
        idempotent: Option<bool>,
        key_sent: Option<bool>,
        headers: &JsValue,
        elapsed_ms: Option<f64>,
        wall_now_ms: Option<f64>,
    ) -> R<HostFailure> {
        let status = status.map(status_of).transpose()?;
        let grpc = match grpc {
            None => None,
            Some(g) => Some(GrpcCode::parse(&g).ok_or_else(|| {
                let shown: String = g.chars().take(64).collect();
                raise("range", "invalid_value", "grpcCode", &format!("grpcCode: not a gRPC status code: {shown:?}"))
            })?),
        };
        let headers = strings(headers, "headers")?.unwrap_or_default();
        if headers.len() & 1 == 1 {
            return Err(raise("type", "invalid_type", "headers", "headers: must be name/value pairs"));
        }
        Ok(HostFailure {
            status,
            grpc,
            names: strings(names, "names")?.unwrap_or_default(),
            method,
            idempotent,
            key_sent: key_sent.unwrap_or(false),
            headers,
            elapsed: elapsed_ms.map(|e| ns(e, "elapsed")).transpose()?,
            wall: wall_now_ms.map(|w| wall_ms(w, "wallNowMs")).transpose()?,
        })
    }

    pub(crate) fn with<T>(&self, f: impl FnOnce(&Failure<'_>) -> T) -> T {
        let names: Vec<&str> = self.names.iter().map(String::as_str).collect();
        let headers: Vec<(&str, &str)> = self.headers.chunks_exact(2).filter_map(crate::pair).collect();
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
    pub(crate) fn get(&mut self, c: &Classifier, status: f64, flags: u32) -> R<u32> {
        if !(status.fract() == 0.0 && (0.0..=999.0).contains(&status)) || flags > 7 {
            return classify_status_with(c, status, flags);
        }
        if self.0.is_empty() {
            self.0 = vec![u16::MAX; 1000 * 8];
        }
        let i = status as usize * 8 + flags as usize;
        match self.0.get(i).copied() {
            Some(u16::MAX) | None => {
                let v = classify_status_with(c, status, flags)?;
                if let Some(slot) = self.0.get_mut(i) {
                    *slot = v as u16;
                }
                Ok(v)
            }
            Some(v) => Ok(u32::from(v)),
        }
    }
}

/// Classifies a status alone: flags bit 0 = idempotent, bit 1 = declared
/// not idempotent, bit 2 = idempotency key sent.
pub(crate) fn classify_status_with(c: &Classifier, status: f64, flags: u32) -> R<u32> {
    let status = status_of(status)?;
    if flags > 7 {
        return Err(raise("range", "out_of_range", "flags", "flags: must be in [0, 7]"));
    }
    let idempotent = if flags & 1 != 0 {
        Some(true)
    } else if flags & 2 != 0 {
        Some(false)
    } else {
        None
    };
    let f = Failure { status: Some(status), idempotent, idempotency_key_sent: flags & 4 != 0, ..Default::default() };
    Ok(pack(&c.classify(&f)))
}

pub(crate) fn classify_with(c: &Classifier, f: &HostFailure) -> JsValue {
    js(&f.with(|f| verdict_json(&c.classify(f), retrycore::classify::is_refused(f.error_names))))
}

/// The built-in tables' verdicts for a status alone, memoized like
/// [`StatusCache`], plus one (0: not asked yet, so the table is zeroed
/// memory, not 16 KB of data). Atomics only for interior mutability: wasm32
/// without threads has one thread.
static DEFAULT_STATUS: [AtomicU16; 8000] = [const { AtomicU16::new(0) }; 8000];

/// Classifies a status with the built-in tables (the hot path; see `classifyStatus` in lib/).
/// Answers `NaN` on error (see `takeError`).
#[wasm_bindgen(js_name = classifyStatus)]
pub fn classify_status(status: f64, flags: u32) -> f64 {
    let slot = if status.fract() == 0.0 && (0.0..=999.0).contains(&status) && flags <= 7 {
        DEFAULT_STATUS.get(status as usize * 8 + flags as usize)
    } else {
        None
    };
    if let Some(v) = slot.map(|s| s.load(Ordering::Relaxed)).filter(|v| *v != 0) {
        return f64::from(v - 1);
    }
    let r = classify_status_with(&Classifier::default(), status, flags);
    if let (Some(s), Ok(v)) = (slot, &r) {
        s.store((*v as u16).saturating_add(1), Ordering::Relaxed);
    }
    nan(r.map(f64::from))
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
    let f = HostFailure::read(status, grpc, &names, method, idempotent, key_sent, &headers, None, wall_now_ms)?;
    Ok(classify_with(&Classifier::default(), &f))
}

struct Slot {
    gen: u32,
    session: Option<RetrySession>,
    gate: Option<Gate>,
    decision: Option<Decision>,
}

const INDEX_BITS: f64 = 2_097_152.0; // 2^21 slots

fn finished() -> JsErr {
    raise("state", "invalid_state", "session", "session: this session is finished and released")
}

/// A live retry policy and the sessions it runs.
#[wasm_bindgen]
pub struct NativePolicy {
    p: RetryPolicy,
    slots: Vec<Slot>,
    free: Vec<u32>,
    status_cache: StatusCache,
}

/// The slot index and generation an id names, if it could name one.
#[inline(always)]
fn id_parts(id: f64) -> Option<(usize, u32)> {
    if !(id >= 0.0 && id.fract() == 0.0 && id < 9_007_199_254_740_992.0) {
        return None;
    }
    let gen = (id / INDEX_BITS).floor();
    if gen > f64::from(u32::MAX) {
        return None;
    }
    Some(((id % INDEX_BITS) as usize, gen as u32))
}

impl NativePolicy {
    fn wrap(p: RetryPolicy) -> NativePolicy {
        NativePolicy { p, slots: Vec::new(), free: Vec::new(), status_cache: StatusCache::default() }
    }

    fn slot(&mut self, id: f64) -> R<&mut Slot> {
        let (idx, gen) = id_parts(id).ok_or_else(finished)?;
        match self.slots.get_mut(idx) {
            Some(s) if s.gen == gen && s.session.is_some() => Ok(s),
            _ => Err(finished()),
        }
    }

    fn session(&mut self, id: f64) -> R<&mut RetrySession> {
        self.slot(id)?.session.as_mut().ok_or_else(finished)
    }

    fn create(c: PolicyConfig, entropy: Option<String>) -> R<NativePolicy> {
        let e = match entropy {
            Some(s) => u64_arg(&s, "entropy")?,
            None => entropy_u64()?,
        };
        RetryPolicy::new(c, Some(e)).map(Self::wrap).map_err(|e| core_err(&e, Domain::Config))
    }

    fn delay_r(&self, retry: f64, r: f64, prev: Option<f64>) -> R<f64> {
        if !(retry >= 1.0 && retry.fract() == 0.0) {
            return Err(raise(
                "range",
                "out_of_range",
                "retry",
                &format!("retry: must be an integer >= 1, got {retry}"),
            ));
        }
        let retry = if retry > f64::from(u32::MAX) { u32::MAX } else { retry as u32 };
        let prev = prev.map(|p| ns(p, "prev")).transpose()?;
        self.p.config().backoff.delay_ns(retry, r, prev).map(ms).map_err(|e| core_err(&e, Domain::Config))
    }

    #[allow(clippy::too_many_arguments)]
    fn begin_r(
        &mut self,
        key: Option<String>,
        seed: Option<String>,
        idempotent: Option<bool>,
        key_sent: Option<bool>,
        method: Option<String>,
        draws: Option<Vec<f64>>,
    ) -> R<f64> {
        let key_entropy = if key.is_none() {
            let mut b = [0u8; 16];
            entropy(&mut b)?;
            Some(b)
        } else {
            None
        };
        let seed = seed.map(|s| u64_arg(&s, "seed")).transpose()?;
        let opts = SessionOptions { key, key_entropy, seed, idempotent, idempotency_key_sent: key_sent, method, draws };
        let s = self.p.session(opts).map_err(|e| core_err(&e, Domain::Idempotency))?;
        let idx = match self.free.pop() {
            Some(i) => i as usize,
            None => {
                if self.slots.len() >= INDEX_BITS as usize {
                    return Err(raise("range", "too_large", "session", "session: too many live sessions"));
                }
                self.slots.push(Slot { gen: 0, session: None, gate: None, decision: None });
                self.slots.len() - 1
            }
        };
        let Some(slot) = self.slots.get_mut(idx) else {
            return Err(finished());
        };
        slot.gen = slot.gen.wrapping_add(1);
        slot.session = Some(s);
        slot.gate = None;
        slot.decision = None;
        Ok(f64::from(slot.gen) * INDEX_BITS + idx as f64)
    }

    fn before_r(&mut self, id: f64, now: f64) -> R<f64> {
        let now = now_ns(now, "now")?;
        let slot = self.slot(id)?;
        let s = slot.session.as_mut().ok_or_else(finished)?;
        let g = s.before_attempt_ns(now).map_err(|e| core_err(&e, Domain::State))?;
        let r = match g {
            Gate::Proceed { attempt, .. } => f64::from(attempt),
            Gate::Reject { .. } => 0.0,
        };
        slot.gate = Some(g);
        Ok(r)
    }

    fn succeed_r(&mut self, id: f64, now: f64, elapsed_ms: Option<f64>) -> R<()> {
        let now = now_ns(now, "now")?;
        let elapsed = elapsed_ms.map(|e| ns(e, "elapsed")).transpose()?;
        self.session(id)?.on_success_ns(now, elapsed).map_err(|e| core_err(&e, Domain::State))
    }

    fn free_slot(&mut self, id: f64) {
        let Some((idx, gen)) = id_parts(id) else { return };
        if let Some(s) = self.slots.get_mut(idx) {
            if s.gen == gen && s.session.is_some() {
                s.session = None;
                s.gate = None;
                s.decision = None;
                self.free.push(idx as u32);
            }
        }
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

#[wasm_bindgen]
impl NativePolicy {
    /// Creates a policy from a document (JSON text; durations are strings).
    #[wasm_bindgen(js_name = fromJson)]
    pub fn from_json(text: &str, entropy: Option<String>) -> Result<NativePolicy, JsErr> {
        let c = PolicyConfig::from_json(text).map_err(|e| core_err(&e, Domain::Config))?;
        Self::create(c, entropy)
    }

    /// Creates a policy from typed options (JSON text whose durations may be milliseconds).
    #[wasm_bindgen(js_name = fromOptions)]
    pub fn from_options(text: &str, entropy: Option<String>) -> Result<NativePolicy, JsErr> {
        let c = read_with_ms(text, PolicyConfig::from_json_value)?;
        Self::create(c, entropy)
    }

    /// Writes the normalized policy document.
    #[wasm_bindgen(js_name = toJson)]
    pub fn to_json(&self) -> String {
        self.p.config().to_json()
    }

    /// Returns the schedule: rows of low / mid / high delays (ms) per retry.
    #[wasm_bindgen(unchecked_return_type = "any")]
    pub fn schedule(&self) -> JsValue {
        let s = self.p.schedule();
        let f = |d: std::time::Duration| ms(retrycore::duration::from_std(d));
        let rows: Vec<Value> = s
            .rows
            .iter()
            .map(|r| {
                json!({"retry": r.retry, "attempt": r.attempt, "low": f(r.low), "mid": f(r.mid), "high": f(r.high),
                       "cumulativeHigh": f(r.cumulative_high)})
            })
            .collect();
        js(&json!({"rows": rows, "worstCase": f(s.worst_case()),
                   "maxAttempts": self.p.config().max_attempts,
                   "deadline": self.p.config().deadline.map(ms)}))
    }

    /// Computes the backoff delay (ms) of retry `retry` for the draw `r`.
    /// Answers `NaN` on error (see `takeError`).
    pub fn delay(&self, retry: f64, r: f64, prev: Option<f64>) -> f64 {
        nan(self.delay_r(retry, r, prev))
    }

    /// Draws the delays (ms) of retries 1..=count from a generator seeded with `seed`.
    #[wasm_bindgen(js_name = sampleDelays, unchecked_return_type = "Array<number>")]
    pub fn sample_delays(&self, seed: &str, count: u32) -> Result<JsValue, JsErr> {
        if count > 100_000 {
            return Err(raise("range", "out_of_range", "count", "count: at most 100000 delays"));
        }
        let seed = u64_arg(seed, "seed")?;
        let v: Vec<f64> = self.p.config().backoff.sample_sequence_ns(seed, count).into_iter().map(ms).collect();
        Ok(js(&json!(v)))
    }

    /// Replays `draws` (each in [0, 1]) through the backoff: the delays (ms) of retries 1..=draws.len().
    #[wasm_bindgen(js_name = replayDelays, unchecked_return_type = "Array<number>")]
    pub fn replay_delays(
        &self,
        #[wasm_bindgen(unchecked_param_type = "Array<number>")] draws: JsValue,
    ) -> Result<JsValue, JsErr> {
        let draws = numbers(&draws, "draws")?.unwrap_or_default();
        let v = self.p.config().backoff.replay_ns(&draws).map_err(|e| core_err(&e, Domain::Config))?;
        Ok(js(&json!(v.into_iter().map(ms).collect::<Vec<f64>>())))
    }

    /// Returns a policy for tests: at most `attempts` calls, delays capped at `max_delay` ms.
    pub fn testing(
        &self,
        attempts: f64,
        #[wasm_bindgen(js_name = maxDelay)] max_delay: f64,
    ) -> Result<NativePolicy, JsErr> {
        if !(attempts.fract() == 0.0 && (0.0..=f64::from(u32::MAX)).contains(&attempts)) {
            return Err(raise(
                "range",
                "out_of_range",
                "attempts",
                &format!("attempts: must be an integer >= 1, got {attempts}"),
            ));
        }
        let max = ns(max_delay, "maxDelay")?;
        self.p.testing(attempts as u32, max).map(Self::wrap).map_err(|e| core_err(&e, Domain::Config))
    }

    /// Returns the counters as the seeds' metric names.
    #[wasm_bindgen(unchecked_return_type = "any")]
    pub fn counters(&self) -> JsValue {
        js(&self.p.counters().snapshot().to_json_value())
    }

    /// Returns the policy's shared breaker, if any.
    #[wasm_bindgen(unchecked_return_type = "NativeBreaker | null")]
    pub fn breaker(&self) -> JsValue {
        self.p.breaker().map_or(JsValue::NULL, |b| NativeBreaker::from_shared(b.clone()).into())
    }

    /// Returns the number of budgets.
    #[wasm_bindgen(js_name = budgetCount)]
    pub fn budget_count(&self) -> u32 {
        u32::try_from(self.p.budgets().len()).unwrap_or(u32::MAX)
    }

    /// Returns the budget at `index`.
    #[wasm_bindgen(unchecked_return_type = "NativeBudget | null")]
    pub fn budget(&self, index: u32) -> JsValue {
        self.p.budgets().get(index as usize).map_or(JsValue::NULL, |b| NativeBudget::from_shared(b.clone()).into())
    }

    /// Returns a policy whose sessions share `breaker`.
    #[wasm_bindgen(js_name = shareBreaker)]
    pub fn share_breaker(&self, breaker: &NativeBreaker) -> NativePolicy {
        Self::wrap(self.p.with_breaker(Some(breaker.shared())))
    }

    /// Returns a policy whose budget at `index` is `budget`.
    #[wasm_bindgen(js_name = shareBudget)]
    pub fn share_budget(&self, index: u32, budget: &NativeBudget) -> Result<NativePolicy, JsErr> {
        let mut list = self.p.budgets().to_vec();
        match list.get_mut(index as usize) {
            Some(slot) => *slot = budget.shared(),
            None => return Err(raise("range", "out_of_range", "budgets", "budgets: no budget at that index")),
        }
        Ok(Self::wrap(self.p.with_budgets(list)))
    }

    /// Classifies a status with this policy's rules (packed; see `classify_status`).
    /// Answers `NaN` on error (see `takeError`).
    #[wasm_bindgen(js_name = classifyStatus)]
    pub fn classify_status(&mut self, status: f64, flags: u32) -> f64 {
        nan(self.status_cache.get(&self.p.config().classifier, status, flags).map(f64::from))
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
        let f = HostFailure::read(status, grpc, &names, method, idempotent, key_sent, &headers, None, wall_now_ms)?;
        Ok(classify_with(&self.p.config().classifier, &f))
    }

    /// Returns true when the policy has an attempt timeout or a deadline.
    #[wasm_bindgen(js_name = hasTimeouts)]
    pub fn has_timeouts(&self) -> bool {
        self.p.config().attempt_timeout.is_some() || self.p.config().deadline.is_some()
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
        nan(numbers(&draws, "draws").and_then(|d| self.begin_r(key, seed, idempotent, key_sent, method, d)))
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
        let r =
            self.begin_r(key, None, idempotent, key_sent, method, None).and_then(|id| match self.before_r(id, now) {
                Ok(0.0) => Ok(-id - 1.0),
                Ok(_) => Ok(id),
                Err(e) => {
                    self.free_slot(id);
                    Err(e)
                }
            });
        nan(r)
    }

    /// Records a success and frees the session in one call (the `execute` fast path).
    /// Answers 0, or `NaN` on error.
    pub fn finish(&mut self, id: f64, now: f64) -> f64 {
        let r = self.succeed_r(id, now, None);
        self.free_slot(id);
        nan(r.map(|()| 0.0))
    }

    /// Gates the next attempt: returns the attempt number, or 0 when rejected (see `gate`).
    /// Answers `NaN` on error.
    pub fn before(&mut self, id: f64, now: f64) -> f64 {
        nan(self.before_r(id, now))
    }

    /// Returns the last gate of a session.
    #[wasm_bindgen(unchecked_return_type = "any")]
    pub fn gate(&mut self, id: f64) -> Result<JsValue, JsErr> {
        Ok(self.slot(id)?.gate.as_ref().map_or(JsValue::NULL, |g| js(&gate_json(g))))
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
        let r = (|| {
            let now = now_ns(now, "now")?;
            let f = HostFailure::read(
                status,
                grpc,
                &names,
                method,
                idempotent,
                key_sent,
                &headers,
                elapsed_ms,
                wall_now_ms,
            )?;
            let slot = self.slot(id)?;
            let s = slot.session.as_mut().ok_or_else(finished)?;
            let d = f.with(|f| s.on_failure_ns(now, f)).map_err(|e| core_err(&e, Domain::State))?;
            let r = match &d {
                Decision::Retry { delay, .. } => ms(retrycore::duration::from_std(*delay)),
                Decision::GiveUp { .. } => -1.0,
            };
            slot.decision = Some(d);
            Ok(r)
        })();
        nan(r)
    }

    /// Returns the last decision of a session.
    #[wasm_bindgen(unchecked_return_type = "any")]
    pub fn decision(&mut self, id: f64) -> Result<JsValue, JsErr> {
        Ok(self.slot(id)?.decision.as_ref().map_or(JsValue::NULL, |d| js(&decision_json(d))))
    }

    /// Records a success and finishes the session. Answers 0, or `NaN` on error.
    pub fn succeed(&mut self, id: f64, now: f64, #[wasm_bindgen(js_name = elapsedMs)] elapsed_ms: Option<f64>) -> f64 {
        nan(self.succeed_r(id, now, elapsed_ms).map(|()| 0.0))
    }

    /// Ends a session as cancelled. Answers 0, or `NaN` on error.
    pub fn cancel(&mut self, id: f64, now: f64) -> f64 {
        let r = (|| {
            let now = now_ns(now, "now")?;
            self.session(id)?.cancel_ns(now);
            Ok(0.0)
        })();
        nan(r)
    }

    /// Gives back what a session holds without counting anything (the vectors' `drop`).
    pub fn release(&mut self, id: f64) -> Result<(), JsErr> {
        self.session(id)?.release();
        Ok(())
    }

    /// Frees a session's slot (releasing what it still holds). Unknown ids are ignored.
    ///
    /// Named `free` like the Node binding's; it replaces wasm-bindgen's
    /// generated `free()` on this class (the object itself is freed by the
    /// garbage collector's finalizer, never by hand).
    #[wasm_bindgen(js_name = free)]
    pub fn free_session(&mut self, id: f64) {
        self.free_slot(id);
    }

    /// Returns a session's idempotency key.
    pub fn key(&mut self, id: f64) -> Result<String, JsErr> {
        Ok(self.session(id)?.key().to_owned())
    }

    /// Returns a session's state: attempts made, done, give-up reason, key minted.
    #[wasm_bindgen(unchecked_return_type = "any")]
    pub fn status(&mut self, id: f64) -> Result<JsValue, JsErr> {
        let s = self.session(id)?;
        Ok(js(&json!({"attempts": s.attempts(), "done": s.is_done(),
                      "reason": s.give_up_reason().map(|r| r.code()), "keyMinted": s.key_minted()})))
    }

    /// Takes the breaker transitions a session's calls caused.
    #[wasm_bindgen(unchecked_return_type = "any")]
    pub fn transitions(&mut self, id: f64) -> Result<JsValue, JsErr> {
        let t = self.session(id)?.take_transitions();
        Ok(js(&Value::Array(t.iter().map(crate::breaker::transition_json).collect())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_checked_before_use() {
        assert_eq!(id_parts(INDEX_BITS + 3.0), Some((3, 1)));
        for bad in [f64::NAN, -1.0, 0.5, f64::INFINITY, 2f64.powi(53)] {
            assert_eq!(id_parts(bad), None);
        }
    }

    #[test]
    fn locate_tolerates_odd_paths() {
        let mut v = serde_json::json!({"a": [{"b": 1}]});
        assert_eq!(locate(&mut v, "a[0].b").map(|x| x.clone()), Some(serde_json::json!(1)));
        for p in ["", "a[", "a[x]", "a[99].b", "[0]", "a]]"] {
            let _ = locate(&mut v, p);
        }
    }
}

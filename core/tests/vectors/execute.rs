//! Runner for the `execute` kind: whole calls as a host's retry loop runs
//! them (tests/vectors/README.md, "execute"), driven through
//! `retrycore::session` with an injected clock and a recording sleep, the
//! end of each call mapped by `retrycore::surface` — what every binding's
//! `retry` / `execute` must reproduce.

use crate::common::Case;
use retrycore::breaker::Transition;
use retrycore::classify::{FailureBuf, GrpcCode, HostVerdict};
use retrycore::policy::{PolicyConfig, RetryPolicy};
use retrycore::retry_log::{self, LogEvent};
use retrycore::session::{Decision, Gate, RetrySession, SessionOptions};
use retrycore::surface::{self, Ending, Observed, RetryNumbers};
use retrycore::{json, json::Value};
use std::collections::VecDeque;

/// The name a host-enforced attempt timeout carries here (JS hosts throw
/// `AbortSignal.timeout()`'s DOMException, Python hosts `TimeoutError`).
const HOST_TIMEOUT: &str = "DOMException:TimeoutError";
const MS: f64 = 1e6;

pub fn run(kind: &str, case: &Case) -> Option<Result<(), String>> {
    // `retry_log` cases are execute cases run with a logger (tests/vectors/README.md, "retry_log").
    matches!(kind, "execute" | "retry_log").then(|| execute(case, kind == "retry_log"))
}

/// Milliseconds (a JSON number) as nanoseconds.
fn ns_of(v: &Value, what: &str) -> Result<u64, String> {
    let ms = v.as_f64().ok_or_else(|| format!("{what}: not a number"))?;
    if ms.is_nan() || ms < 0.0 {
        return Err(format!("{what}: not a duration"));
    }
    Ok((ms * MS).round() as u64)
}

/// Nanoseconds as the milliseconds a host reports: exact ns / 1e6.
fn ms_of(ns: u64) -> Value {
    if ns % 1_000_000 == 0 {
        json!(ns / 1_000_000)
    } else {
        json!(ns as f64 / MS)
    }
}

/// The shared clock of a case: monotonic ns, and the wall clock it drives.
struct Clock {
    start: u64,
    now: u64,
    wall_start_ms: Option<u64>,
}

impl Clock {
    fn wall_ms(&self) -> Option<u64> {
        self.wall_start_ms.map(|w| w + (self.now - self.start) / 1_000_000)
    }
}

/// The flattened cause chain of a portable thrown error: per error the
/// retrycore marker, its `code`, its `names`, then its `cause`'s.
fn names_of(mut e: &Value, out: &mut Vec<String>) {
    loop {
        if let Some(m) = e.get("retrycore").and_then(Value::as_str) {
            out.push(format!("retrycore:{m}"));
        }
        if let Some(c) = e.get("code").and_then(Value::as_str) {
            out.push(c.to_owned());
        }
        for n in e.get("names").and_then(Value::as_array).into_iter().flatten() {
            if let Some(n) = n.as_str() {
                out.push(n.to_owned());
            }
        }
        match e.get("cause") {
            Some(c) if c.is_object() => e = c,
            _ => return,
        }
    }
}

fn headers_of(v: Option<&Value>) -> Vec<(String, String)> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter().filter_map(|h| Some((h.get(0)?.as_str()?.to_owned(), h.get(1)?.as_str()?.to_owned()))).collect()
        })
        .unwrap_or_default()
}

fn transitions(events: &mut Vec<Value>, ts: Vec<Transition>) {
    for t in ts {
        events.push(
            json!({"hook": "on_state_change", "from": t.from.code(), "to": t.to.code(), "reason": t.reason.code()}),
        );
    }
}

/// What a call ended with, as the expectation spells it.
fn ending_json(e: Ending, from_response: bool) -> Value {
    match e {
        Ending::Return => json!({"ending": "return"}),
        // A response nothing retries is the caller's value (docs/sessions.md).
        Ending::Propagate if from_response => json!({"ending": "return"}),
        Ending::Propagate => json!({"ending": "propagate"}),
        Ending::Cancelled => json!({"ending": "cancelled"}),
        Ending::Raise { class, code, reason, marked, has_cause } => json!({
            "ending": "raise", "class": class.code(), "code": code, "reason": reason, "marked": marked, "cause": has_cause,
        }),
    }
}

/// The log event of an `on_give_up` (without the host's part).
fn give_up<'a>(g: &surface::GiveUpEvent<'a>) -> LogEvent<'a> {
    LogEvent {
        attempt: g.attempt,
        max_attempts: g.max_attempts,
        category: g.category,
        reason: Some(g.reason),
        budget: g.budget,
        ..LogEvent::default()
    }
}

enum Step {
    Suspended,
    Done,
}

/// One call of a case: the host's loop, resumable at a suspended sleep.
struct CallRun<'a> {
    spec: &'a Value,
    session: RetrySession,
    sleeps: Vec<Value>,
    events: Vec<Value>,
    calls: u64,
    last_was_response: bool,
    wake: Option<u64>,
    /// The attempt a suspended limiter wait was for: (attempt, timeout).
    gated: Option<(u32, Option<u64>)>,
    got: Value,
    /// `retry_if_result`: the verdict the caller's predicate gives each returned value.
    if_result: Option<Value>,
    /// `retry_if_error`: the predicate answers each thrown outcome's `verdict`.
    if_error: bool,
    /// `fallback`: the value the give-up fallback returns.
    fallback: Option<Value>,
    /// `before_after`: the `before` and `after` hooks are recorded.
    before_after: bool,
    /// The retry log's records (`retry_log` cases), or None: no logger.
    records: Option<Vec<Value>>,
    /// The outermost error's type name, as the log names it: the first of `names` (None: a response, a timeout's own).
    error: Option<String>,
}

impl<'a> CallRun<'a> {
    fn new(policy: &RetryPolicy, spec: &'a Value, log: bool) -> Result<CallRun<'a>, String> {
        let o = spec.get("options").cloned().unwrap_or(json!({}));
        let key = o.get("key").and_then(Value::as_str).map(str::to_owned);
        let opts = SessionOptions {
            key_entropy: key.is_none().then_some([0; 16]),
            key,
            seed: None,
            idempotent: o.get("idempotent").and_then(Value::as_bool),
            idempotency_key_sent: o.get("idempotency_key_sent").and_then(Value::as_bool),
            method: o.get("method").and_then(Value::as_str).map(str::to_owned),
            draws: None,
        };
        Ok(CallRun {
            spec,
            session: policy.session(opts).map_err(|e| e.to_string())?,
            sleeps: Vec::new(),
            events: Vec::new(),
            calls: 0,
            last_was_response: false,
            wake: None,
            gated: None,
            got: Value::Null,
            if_result: o.get("retry_if_result").cloned(),
            if_error: o.get("retry_if_error").and_then(Value::as_bool).unwrap_or(false),
            fallback: o.get("fallback").cloned(),
            before_after: o.get("before_after").and_then(Value::as_bool).unwrap_or(false),
            records: log.then(Vec::new),
            error: None,
        })
    }

    /// The end of a call that gave up: the fallback's value when it answers
    /// (`Ending::falls_back`), else `ending`.
    fn give_up(&mut self, end: &surface::Ended, ending: Value) -> Step {
        match &self.fallback {
            Some(v) if end.ending.falls_back(self.last_was_response) => {
                self.events.push(json!({"hook": "fallback", "attempts": end.attempts, "reason": end.reason}));
                let e = json!({"ending": "fallback", "value": v});
                self.end(e)
            }
            _ => self.end(ending),
        }
    }

    /// Logs a retry or a give-up (`ev` without the host's part), as a host's logger does
    /// (`retrycore::retry_log`): the error's name, the key and the caller's correlation id added.
    fn log(&mut self, ev: LogEvent<'_>) {
        let Some(records) = self.records.as_mut() else { return };
        let key = self.session.key().to_owned();
        let correlation_id = self.spec.get("correlation_id").and_then(Value::as_str);
        let r = retry_log::record(&LogEvent { error: self.error.as_deref(), key: &key, correlation_id, ..ev });
        records.push(r.to_json_value());
    }

    fn end(&mut self, mut ending: Value) -> Step {
        ending["attempts"] = json!(self.session.attempts());
        ending["calls"] = json!(self.calls);
        ending["sleeps"] = Value::Array(std::mem::take(&mut self.sleeps));
        ending["events"] = Value::Array(std::mem::take(&mut self.events));
        if let Some(r) = self.records.take() {
            ending["records"] = Value::Array(r);
        }
        self.got = ending;
        Step::Done
    }

    /// Gates the next attempt: Ok((attempt, timeout)) to make it (after
    /// sleeping the limiter's wait), or Err(the step: the end of the call,
    /// or a suspension in the limiter's wait).
    #[allow(clippy::type_complexity)]
    fn gate(&mut self, clock: &mut Clock, suspend_at: Option<u64>) -> Result<Result<(u32, Option<u64>), Step>, String> {
        let gate = self.session.before_attempt_ns(clock.now).map_err(|e| format!("before_attempt: {e}"))?;
        let ts = self.session.take_transitions();
        transitions(&mut self.events, ts);
        match gate {
            Gate::Reject { .. } => {
                // What the caller observes, as every host maps it (surface::after_gate).
                let end = surface::after_gate(&self.session, &gate).ok_or("a refusal ends the call")?;
                if let Some(g) = end.on_give_up() {
                    self.events.push(json!({"hook": "on_give_up", "attempts": g.attempt, "reason": g.reason}));
                    self.log(give_up(&g));
                }
                let mut e = ending_json(end.ending, self.last_was_response);
                if e["class"] == "circuit_open" {
                    e["retry_after"] = end.retry_after.map_or(Value::Null, ms_of);
                }
                if e["class"] == "limiter_rejected" {
                    e["retry_after"] = end.retry_after.map_or(Value::Null, ms_of);
                    e["limiter"] = json!(end.limiter);
                }
                if let Some(b) = &end.budget {
                    e["budget"] = json!(b);
                }
                Ok(Err(self.give_up(&end, e)))
            }
            Gate::Proceed { attempt, timeout, wait, .. } => {
                let timeout = timeout.map(retrycore::duration::from_std);
                // The limiter's reserved wait: a sleep before the call.
                if let Some(w) = wait.map(retrycore::duration::from_std) {
                    self.sleeps.push(ms_of(w));
                    if suspend_at == Some(self.sleeps.len() as u64) {
                        self.wake = Some(clock.now + w);
                        self.gated = Some((attempt, timeout));
                        return Ok(Err(Step::Suspended));
                    }
                    clock.now += w;
                }
                Ok(Ok((attempt, timeout)))
            }
        }
    }

    /// Runs the call until it ends or suspends at a sleep.
    fn drive(&mut self, clock: &mut Clock) -> Result<Step, String> {
        if let Some(w) = self.wake.take() {
            clock.now = clock.now.max(w);
        }
        let script = self.spec.get("script").and_then(Value::as_array).ok_or("script")?;
        let suspend_at = self.spec.get("suspend_at_sleep").and_then(Value::as_u64);
        loop {
            let (attempt, timeout) = match self.gated.take() {
                Some(g) => g,
                None => match self.gate(clock, suspend_at)? {
                    Ok(g) => g,
                    Err(step) => return Ok(step),
                },
            };
            if self.before_after {
                self.events.push(json!({"hook": "before", "attempt": attempt}));
            }
            self.calls += 1;
            let out = script
                .get(attempt as usize - 1)
                .ok_or_else(|| format!("attempt {attempt} made, the script has {}", script.len()))?;
            let took = ns_of(out.get("ms").ok_or("ms")?, "ms")?;
            if let Some(t) = timeout {
                if took > t {
                    return Err(format!("attempt {attempt} takes {took} ns, past its timeout of {t} ns"));
                }
            }
            if out.get("timeout").is_some() && timeout != Some(took) {
                return Err(format!(
                    "attempt {attempt}: a host timeout lasts the attempt's timeout {timeout:?}, not {took}"
                ));
            }
            clock.now += took;
            let ok_response = out
                .get("respond")
                .and_then(|r| r.get("status"))
                .and_then(Value::as_u64)
                .is_some_and(|s| (200..=299).contains(&s));
            // The caller's result predicate: a truthy verdict makes the returned value a failure.
            let result_verdict = match (&self.if_result, out.get("return").and_then(Value::as_str)) {
                (Some(m), Some(v)) => m.get(v).filter(|x| !matches!(x, Value::Null | Value::Bool(false))).cloned(),
                _ => None,
            };
            if (out.get("return").is_some() || ok_response) && result_verdict.is_none() {
                self.session.on_success_ns(clock.now, None).map_err(|e| e.to_string())?;
                let ts = self.session.take_transitions();
                transitions(&mut self.events, ts);
                return Ok(self.end(ending_json(Ending::Return, false)));
            }
            if out.get("cancel").is_some() {
                self.session.cancel_ns(clock.now);
                let ts = self.session.take_transitions();
                transitions(&mut self.events, ts);
                return Ok(self.end(ending_json(Ending::Cancelled, false)));
            }
            let mut f = FailureBuf::<String> { wall_now_ms: clock.wall_ms(), ..Default::default() };
            self.error = None;
            if let Some(v) = &result_verdict {
                f.host = HostVerdict::from_json(v, "verdict").map_err(|e| e.to_string())?;
                self.last_was_response = true;
            } else if let Some(t) = out.get("throw") {
                if self.if_error {
                    let v = t.get("verdict").unwrap_or(&Value::Null);
                    f.host = HostVerdict::from_json(v, "verdict").map_err(|e| e.to_string())?;
                }
                names_of(t, &mut f.error_names);
                self.error = t.get("names").and_then(|n| n.get(0)).and_then(Value::as_str).map(str::to_owned);
                f.status = t.get("status").and_then(Value::as_u64).map(|s| s as u16);
                f.grpc_code = t.get("grpc_code").and_then(Value::as_u64).and_then(|c| GrpcCode::new(c as u8));
                f.headers = headers_of(t.get("headers"));
                self.last_was_response = false;
            } else if let Some(r) = out.get("respond") {
                f.status = r.get("status").and_then(Value::as_u64).map(|s| s as u16);
                f.headers = headers_of(r.get("headers"));
                self.last_was_response = true;
            } else if out.get("timeout").is_some() {
                f.error_names.push(HOST_TIMEOUT.to_owned());
                self.error = Some("TimeoutError".to_owned());
                self.last_was_response = false;
            } else {
                return Err(format!("attempt {attempt}: unknown outcome {out}"));
            }
            let d = f.with(|x| self.session.on_failure_ns(clock.now, x)).map_err(|e| e.to_string())?;
            let ts = self.session.take_transitions();
            transitions(&mut self.events, ts);
            // What the caller observes, as every host maps it (surface::after_decision).
            match surface::after_decision(&self.session, &d) {
                Observed::Retry(ev) => {
                    let n = RetryNumbers::of_retry(ev.retry);
                    if !matches!(d, Decision::Retry { attempt, .. } if attempt == n.next_attempt) {
                        return Err(format!("{d:?}: Retry.attempt is not the coming call {}", n.next_attempt));
                    }
                    let delay = ev.delay;
                    if self.before_after {
                        self.events.push(json!({"hook": "after", "attempt": ev.attempt, "category": ev.category}));
                    }
                    self.events.push(json!({"hook": "on_retry", "attempt": ev.attempt, "retry": ev.retry,
                        "delay": ms_of(delay), "category": ev.category}));
                    self.log(LogEvent {
                        retry: Some(ev.retry),
                        attempt: ev.attempt,
                        max_attempts: ev.max_attempts,
                        category: Some(ev.category),
                        delay: Some(delay),
                        ..LogEvent::default()
                    });
                    // A host never calls its sleep for a delay of 0.
                    if delay > 0 {
                        self.sleeps.push(ms_of(delay));
                        if suspend_at == Some(self.sleeps.len() as u64) {
                            self.wake = Some(clock.now + delay);
                            return Ok(Step::Suspended);
                        }
                        clock.now += delay;
                    }
                }
                Observed::End(end) => {
                    if self.before_after {
                        self.events.push(json!({"hook": "after", "attempt": end.attempts, "category": end.category}));
                    }
                    if let Some(g) = end.on_give_up() {
                        self.events.push(json!({"hook": "on_give_up", "attempts": g.attempt, "reason": g.reason}));
                        self.log(give_up(&g));
                    }
                    let mut e = ending_json(end.ending, self.last_was_response);
                    if e["ending"] == "raise" {
                        e["category"] = json!(end.category);
                    }
                    if let Some(b) = &end.budget {
                        e["budget"] = json!(b);
                    }
                    return Ok(self.give_up(&end, e));
                }
            }
        }
    }
}

/// Compares `got` with `want`: objects by the keys `want` gives, arrays
/// element by element and by length, numbers as f64.
fn same(what: &str, got: &Value, want: &Value) -> Result<(), String> {
    match (got, want) {
        (_, Value::Object(w)) => {
            for (k, wv) in w {
                same(&format!("{what}.{k}"), got.get(k).unwrap_or(&Value::Null), wv)?;
            }
            Ok(())
        }
        (Value::Array(g), Value::Array(w)) => {
            if g.len() != w.len() {
                return Err(format!("{what}: got {got}, want {want}"));
            }
            for (i, (a, b)) in g.iter().zip(w).enumerate() {
                same(&format!("{what}[{i}]"), a, b)?;
            }
            Ok(())
        }
        (Value::Number(a), Value::Number(b)) if a.as_f64() == b.as_f64() => Ok(()),
        (a, b) if a == b => Ok(()),
        _ => Err(format!("{what}: got {got}, want {want}")),
    }
}

fn execute(case: &Case, log: bool) -> Result<(), String> {
    let config =
        PolicyConfig::from_json(&case.get("policy").ok_or("policy")?.to_string()).map_err(|e| e.to_string())?;
    // Entropy 0: only cases without draws omit the policy's seed.
    let policy = RetryPolicy::new(config, Some(0)).map_err(|e| e.to_string())?;
    let c = case.get("clock").ok_or("clock")?;
    let start = ns_of(c.get("start_ms").ok_or("clock.start_ms")?, "clock.start_ms")?;
    let mut clock = Clock { start, now: start, wall_start_ms: c.get("wall_start_ms").and_then(Value::as_u64) };
    let specs = case.get("calls").and_then(Value::as_array).ok_or("calls")?;
    let mut runs = Vec::with_capacity(specs.len());
    // Calls start in order; a call suspended at a sleep resumes once every
    // call has started, in the order they suspended.
    let mut suspended = VecDeque::new();
    for (i, spec) in specs.iter().enumerate() {
        if let Some(a) = spec.get("advance_ms") {
            clock.now += ns_of(a, "advance_ms")?;
        }
        let mut r = CallRun::new(&policy, spec, log).map_err(|e| format!("call {i}: {e}"))?;
        if let Step::Suspended = r.drive(&mut clock).map_err(|e| format!("call {i}: {e}"))? {
            suspended.push_back(i);
        }
        runs.push(r);
    }
    while let Some(i) = suspended.pop_front() {
        if let Step::Suspended = runs[i].drive(&mut clock).map_err(|e| format!("call {i}: {e}"))? {
            suspended.push_back(i);
        }
    }
    for (i, (r, spec)) in runs.iter().zip(specs).enumerate() {
        same(&format!("call {i}"), &r.got, spec.get("expect").ok_or("expect")?)?;
    }
    Ok(())
}

//! Runners for the retry kinds: rng, duration, policy, backoff, delay
//! sequences, schedules, classification, Retry-After, sessions, breakers,
//! budgets and lint.

use crate::common::{as_u64, check_error, eq, Case};
use retrycore::backoff::Backoff;
use retrycore::breaker::{Acquire, BreakerConfig, BreakerSnapshot, CircuitBreaker, Counted, Permit, State, Transition};
use retrycore::budget::{Budget, BudgetConfig, FailureFacts};
use retrycore::classify::{Category, Classifier, FailureBuf, GrpcCode, HostVerdict, RetryableTrait};
use retrycore::lint::{lint, Service};
use retrycore::policy::{PolicyConfig, RetryPolicy};
use retrycore::retry_after::{parse_http_date, read_headers};
use retrycore::rng::{Rng, Xoshiro256pp};
use retrycore::session::{Decision, Gate, RetrySession, SessionOptions};
use retrycore::{json, json::Value};
use std::collections::HashMap;

pub fn run(kind: &str, case: &Case) -> Option<Result<(), String>> {
    Some(match kind {
        "rng" => rng(case),
        "duration" => duration(case),
        "policy" => policy(case),
        "backoff" => backoff(case),
        "delay_sequence" => delay_sequence(case),
        "delay_replay" => delay_replay(case),
        "schedule" => schedule(case),
        "classify" => classify(case),
        "retry_after" => retry_after(case),
        "http_date" => http_date(case),
        "session" => session(case),
        "breaker" => breaker(case),
        "budget" => budget(case),
        "lint" => lint_case(case),
        "alerts" => alerts_case(case),
        _ => return None,
    })
}

fn ns(d: std::time::Duration) -> u64 {
    retrycore::duration::from_std(d)
}

fn doc_of(case: &Case, key: &str) -> String {
    case.get(key).map_or_else(|| "{}".to_owned(), |v| v.to_string())
}

fn rng(case: &Case) -> Result<(), String> {
    let seed = case.u64("seed").ok_or("seed")?;
    let mut g = Xoshiro256pp::seed_from_u64(seed);
    if let Some(want) = case.get("u64").and_then(Value::as_array) {
        for (i, w) in want.iter().enumerate() {
            eq(&format!("u64[{i}]"), g.next_u64(), as_u64(w).ok_or("u64 value")?)?;
        }
    }
    if let Some(want) = case.get("f64").and_then(Value::as_array) {
        for (i, w) in want.iter().enumerate() {
            eq(&format!("f64[{i}]"), g.next_f64().to_bits(), w.as_f64().ok_or("f64 value")?.to_bits())?;
        }
    }
    Ok(())
}

fn duration(case: &Case) -> Result<(), String> {
    let text = case.str("text").ok_or("text")?;
    let got = retrycore::duration::parse_duration(text, "duration");
    if let Some(ns) = check_error(case, got)? {
        eq("ns", ns, case.u64("expect").ok_or("expect")?)?;
    }
    Ok(())
}

fn policy(case: &Case) -> Result<(), String> {
    let text = match case.get("text") {
        Some(Value::String(s)) => s.clone(),
        _ => doc_of(case, "document"),
    };
    match (PolicyConfig::from_json(&text), case.expected_error()) {
        (Err(e), Some(code)) => {
            eq("error", e.code(), code)?;
            if let Some(f) = case.str("error_field") {
                eq("error_field", e.field(), f)?;
            }
            Ok(())
        }
        (Err(e), None) => Err(format!("unexpected error {} ({e})", e.code())),
        (Ok(c), Some(code)) => Err(format!("expected error {code}, got {}", c.to_json())),
        (Ok(c), None) => {
            let got = c.to_json_value();
            if let Some(want) = case.get("expect") {
                eq("normalized", &got, want)?;
            }
            // The normalized form parses back to the same settings.
            let back = PolicyConfig::from_json(&got.to_string()).map_err(|e| format!("normalized form: {e}"))?;
            eq("round trip", back, c)
        }
    }
}

fn backoff_of(case: &Case) -> Result<Backoff, retrycore::Error> {
    PolicyConfig::from_json(&doc_of(case, "policy")).map(|c| c.backoff)
}

fn backoff(case: &Case) -> Result<(), String> {
    let b = match check_error(case, backoff_of(case))? {
        Some(b) => b,
        None => return Ok(()),
    };
    let retry = case.u64("retry").ok_or("retry")?;
    let retry = u32::try_from(retry).map_err(|_| "retry past u32")?;
    let r = case.get("r").and_then(Value::as_f64).ok_or("r")?;
    let prev = case.u64("prev");
    if let Some(d) = check_error(case, b.delay_ns(retry, r, prev))? {
        eq("delay", d, case.u64("expect").ok_or("expect")?)?;
    }
    Ok(())
}

fn delay_sequence(case: &Case) -> Result<(), String> {
    let b = backoff_of(case).map_err(|e| e.to_string())?;
    let seed = case.u64("seed").ok_or("seed")?;
    let want: Vec<u64> =
        case.get("expect").and_then(Value::as_array).ok_or("expect")?.iter().filter_map(as_u64).collect();
    eq("delays", b.sample_sequence_ns(seed, want.len() as u32), want)
}

fn delay_replay(case: &Case) -> Result<(), String> {
    let b = match check_error(case, backoff_of(case))? {
        Some(b) => b,
        None => return Ok(()),
    };
    let draws: Vec<f64> =
        case.get("draws").and_then(Value::as_array).ok_or("draws")?.iter().filter_map(Value::as_f64).collect();
    let want: Vec<u64> =
        case.get("expect").and_then(Value::as_array).ok_or("expect")?.iter().filter_map(as_u64).collect();
    eq("delays", b.replay_ns(&draws).map_err(|e| e.to_string())?, want)
}

fn schedule(case: &Case) -> Result<(), String> {
    let c = PolicyConfig::from_json(&doc_of(case, "policy")).map_err(|e| e.to_string())?;
    let s = c.backoff.schedule(c.max_attempts);
    let rows: Vec<Value> = s
        .rows
        .iter()
        .map(|r| json!({"retry": r.retry, "attempt": r.attempt, "low": ns(r.low), "mid": ns(r.mid), "high": ns(r.high), "cumulative_high": ns(r.cumulative_high)}))
        .collect();
    let want = case.expect()["rows"].as_array().ok_or("rows")?;
    // `row_count`, when given, is the length of the listing and `rows` its first rows only.
    let count = case.expect().get("row_count").and_then(Value::as_u64).map_or(want.len(), |n| n as usize);
    eq("row count", rows.len(), count)?;
    for (g, w) in rows.iter().zip(want) {
        subset("row", g, w)?;
    }
    eq("worst_case", ns(s.worst_case()), as_u64(&case.expect()["worst_case"]).ok_or("worst_case")?)
}

/// A failure read from a vector.
pub struct OwnedFailure;

impl OwnedFailure {
    pub fn read(v: &Value) -> Result<FailureBuf, String> {
        let grpc = match v.get("grpc_code") {
            None | Some(Value::Null) => None,
            Some(Value::Number(n)) => GrpcCode::new(n.as_u64().ok_or("grpc_code")? as u8),
            Some(Value::String(s)) => GrpcCode::parse(s),
            Some(_) => return Err("grpc_code".into()),
        };
        Ok(FailureBuf {
            status: v.get("status").and_then(Value::as_u64).map(|s| s as u16),
            grpc_code: grpc,
            error_names: v
                .get("error_names")
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(|x| x.as_str().map(str::to_owned)).collect())
                .unwrap_or_default(),
            method: v.get("method").and_then(Value::as_str).map(str::to_owned),
            idempotent: v.get("idempotent").and_then(Value::as_bool),
            idempotency_key_sent: v.get("idempotency_key_sent").and_then(Value::as_bool).unwrap_or(false),
            headers: v
                .get("headers")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(|h| Some((h.get(0)?.as_str()?.to_owned(), h.get(1)?.as_str()?.to_owned())))
                        .collect()
                })
                .unwrap_or_default(),
            elapsed: v.get("elapsed").and_then(as_u64).map(std::time::Duration::from_nanos),
            wall_now_ms: v.get("wall_now_ms").and_then(as_u64),
            message: v.get("message").and_then(Value::as_str).map(str::to_owned),
            // Smithy's @retryable trait: `true`, or `{"throttling": bool}` (read by the core, as hosts read it).
            retryable: RetryableTrait::from_json(v.get("retryable").unwrap_or(&Value::Null), "retryable")
                .map_err(|e| e.to_string())?,
            should_retry: v.get("should_retry").and_then(Value::as_bool),
            // The caller's predicate's verdict: null, a boolean or a string (read by the core, as hosts read it).
            host: HostVerdict::from_json(v.get("verdict").unwrap_or(&Value::Null), "verdict")
                .map_err(|e| e.to_string())?,
        })
    }
}

/// Compares only the keys the expectation gives.
fn subset(what: &str, got: &Value, want: &Value) -> Result<(), String> {
    match want {
        Value::Object(w) => {
            for (k, wv) in w {
                let gv = got.get(k).unwrap_or(&Value::Null);
                subset(&format!("{what}.{k}"), gv, wv)?;
            }
            Ok(())
        }
        _ => {
            let same = match (got, want) {
                (Value::Number(a), Value::Number(b)) => match (a.as_u64(), b.as_u64()) {
                    (Some(x), Some(y)) => x == y,
                    _ => a.as_f64() == b.as_f64(),
                },
                // Integers past 2^53 are written as decimal strings.
                (Value::Number(_), Value::String(_)) => as_u64(got).is_some() && as_u64(got) == as_u64(want),
                (a, b) => a == b,
            };
            if same {
                Ok(())
            } else {
                Err(format!("{what}: got {got}, want {want}"))
            }
        }
    }
}

fn classify(case: &Case) -> Result<(), String> {
    let classifier = match case.get("policy") {
        Some(p) => PolicyConfig::from_json(&p.to_string()).map_err(|e| e.to_string())?.classifier,
        None => Classifier::default(),
    };
    let f = OwnedFailure::read(case.get("failure").ok_or("failure")?)?;
    let v = f.with(|f| classifier.classify(f));
    let got = json!({
        "category": v.category.code(),
        "retry": v.retry.code(),
        "safe": v.safe,
        "retryable": v.retryable,
        "server_declined": v.server_declined,
        "server_delay": v.advice.delay_ns(),
        "refused": f.with(|f| retrycore::classify::is_refused(f.error_names)),
    });
    subset("verdict", &got, case.expect())
}

fn retry_after(case: &Case) -> Result<(), String> {
    let f = OwnedFailure::read(&case.v)?;
    let a = read_headers(f.headers.iter().map(|(a, b)| (a.as_str(), b.as_str())), f.wall_now_ms);
    let got = json!({
        "delay": a.delay_ns(),
        "source": a.delay.map(|(_, s)| s.name()),
        "declined": a.declined_by_pushback,
        "should_retry": a.should_retry,
        "retry_exhausted": a.retry_exhausted,
    });
    subset("advice", &got, case.expect())
}

fn http_date(case: &Case) -> Result<(), String> {
    let value = case.str("value").ok_or("value")?;
    let now = case.u64("wall_now_ms").ok_or("wall_now_ms")?;
    let got = parse_http_date(value, now);
    let want = case.expect().as_i64();
    eq("unix seconds", got, want)
}

fn transition_json(t: &Transition) -> Value {
    json!({"from": t.from.code(), "to": t.to.code(), "reason": t.reason.code(), "at": t.at})
}

fn session(case: &Case) -> Result<(), String> {
    let config = PolicyConfig::from_json(&doc_of(case, "policy")).map_err(|e| e.to_string())?;
    let policy = RetryPolicy::new(config, Some(0)).map_err(|e| e.to_string())?;
    let mut sessions: HashMap<String, RetrySession> = HashMap::new();
    let steps = case.get("steps").and_then(Value::as_array).ok_or("steps")?;
    for (i, step) in steps.iter().enumerate() {
        let at = |m: String| format!("step {i}: {m}");
        let op = step["op"].as_str().ok_or_else(|| at("op".into()))?;
        let sid = step.get("s").and_then(Value::as_str).unwrap_or("main").to_owned();
        let now = step.get("now").and_then(as_u64).unwrap_or(0);
        let want = step.get("expect");
        if op == "start" || (!sessions.contains_key(&sid) && op != "counters" && op != "breaker" && op != "budget") {
            let o = if op == "start" { step } else { case.get("session").unwrap_or(&Value::Null) };
            let opts = SessionOptions {
                key: o.get("key").and_then(Value::as_str).map(str::to_owned).or_else(|| Some("vector-key".into())),
                key_entropy: None,
                seed: o.get("seed").and_then(as_u64),
                idempotent: o.get("idempotent").and_then(Value::as_bool),
                idempotency_key_sent: o.get("idempotency_key_sent").and_then(Value::as_bool),
                method: o.get("method").and_then(Value::as_str).map(str::to_owned),
                draws: o.get("draws").and_then(Value::as_array).map(|a| a.iter().filter_map(Value::as_f64).collect()),
            };
            sessions.insert(sid.clone(), policy.session(opts).map_err(|e| at(e.to_string()))?);
            if op == "start" {
                continue;
            }
        }
        let got = match op {
            "before_attempt" => {
                let s = sessions.get_mut(&sid).ok_or_else(|| at("no session".into()))?;
                match s.before_attempt_ns(now) {
                    Ok(Gate::Proceed { attempt, max_attempts, timeout, wait }) => json!({"proceed": {
                        "attempt": attempt, "max_attempts": max_attempts, "timeout": timeout.map(ns), "wait": wait.map(ns),
                    }}),
                    Ok(Gate::Reject { reason, retry_after, budget }) => json!({"reject": {
                        "reason": reason.code(),
                        "retry_after": retry_after.map(ns),
                        "budget": budget,
                        "limiter": s.limiter_rejection().map(|r| r.limiter.clone()),
                        "limiter_reason": s.limiter_rejection().map(|r| r.reason),
                    }}),
                    Err(e) => json!({"error": e.code()}),
                }
            }
            "failure" => {
                let f = OwnedFailure::read(step.get("failure").unwrap_or(&json!({})))?;
                let s = sessions.get_mut(&sid).ok_or_else(|| at("no session".into()))?;
                match f.with(|f| s.on_failure_ns(now, f)) {
                    Ok(Decision::Retry { retry, attempt, delay, backoff, server_delay, capped, category }) => {
                        json!({"retry": {"retry": retry, "attempt": attempt, "delay": ns(delay), "backoff": ns(backoff),
                            "server_delay": server_delay.map(ns), "capped": capped, "category": category.code()}})
                    }
                    Ok(Decision::GiveUp { reason, category, exhausted, refusal, attempts }) => {
                        json!({"give_up": {"reason": reason.code(), "category": category.code(), "exhausted": exhausted,
                            "attempts": attempts, "budget": refusal.as_ref().map(|r| r.budget.clone()),
                            "budget_reason": refusal.as_ref().map(|r| r.reason)}})
                    }
                    Err(e) => json!({"error": e.code()}),
                }
            }
            "success" => {
                let s = sessions.get_mut(&sid).ok_or_else(|| at("no session".into()))?;
                match s.on_success_ns(now, step.get("elapsed").and_then(as_u64)) {
                    Ok(()) => json!({"ok": true}),
                    Err(e) => json!({"error": e.code()}),
                }
            }
            "cancel" => {
                let s = sessions.get_mut(&sid).ok_or_else(|| at("no session".into()))?;
                s.cancel_ns(now);
                json!({"ok": true})
            }
            "drop" => {
                sessions.remove(&sid);
                json!({"ok": true})
            }
            "key" => {
                let s = sessions.get(&sid).ok_or_else(|| at("no session".into()))?;
                json!(s.key())
            }
            "counters" => policy.counters().snapshot().to_json_value(),
            "breaker" => {
                let br = policy.breaker().ok_or_else(|| at("no breaker".into()))?;
                let br = br.lock().unwrap();
                json!({"state": br.state().code(), "calls": br.totals().calls, "failures": br.totals().failures})
            }
            "budget" => {
                let idx = step.get("index").and_then(Value::as_u64).unwrap_or(0) as usize;
                let b = policy.budgets().get(idx).ok_or_else(|| at("no budget".into()))?;
                b.lock().unwrap().level(now)
            }
            other => return Err(at(format!("unknown op {other}"))),
        };
        if let Some(want) = want {
            subset(&format!("step {i} ({op})"), &got, want)?;
        }
    }
    Ok(())
}

fn counted(s: &str) -> Result<Counted, String> {
    Ok(match s {
        "success" => Counted::Success,
        "failure" => Counted::Failure,
        "ignored" => Counted::Ignored,
        other => return Err(format!("outcome {other}")),
    })
}

fn breaker(case: &Case) -> Result<(), String> {
    let config_doc = case.get("config").cloned().unwrap_or(json!({}));
    let config = match BreakerConfig::from_json_value(&config_doc, "") {
        Ok(c) => c,
        Err(e) => {
            return match case.expected_error() {
                Some(code) => eq("error", e.code(), code),
                None => Err(format!("unexpected error {} ({e})", e.code())),
            }
        }
    };
    if let Some(code) = case.expected_error() {
        return Err(format!("expected error {code}"));
    }
    let mut b = CircuitBreaker::new(config.clone()).map_err(|e| e.to_string())?;
    let mut permits: Vec<Permit> = Vec::new();
    let mut snaps: HashMap<String, String> = HashMap::new();
    let steps = case.get("steps").and_then(Value::as_array).ok_or("steps")?;
    for (i, step) in steps.iter().enumerate() {
        let op = step["op"].as_str().ok_or("op")?;
        let now = step.get("now").and_then(as_u64).unwrap_or(0);
        let want = step.get("expect");
        let got = match op {
            "acquire" => {
                let (a, t) = b.try_acquire(now);
                let mut v = match a {
                    Acquire::Permitted(p) => {
                        permits.push(p);
                        json!({"permitted": true, "trial": p.is_trial(), "permit": permits.len() - 1})
                    }
                    Acquire::Rejected { state, retry_after } => json!({"permitted": false, "state": state.code(),
                        "retry_after": if retry_after == u64::MAX { Value::Null } else { retry_after.into() }}),
                };
                v["transition"] = t.as_ref().map_or(Value::Null, transition_json);
                v
            }
            "result" | "release" => {
                let idx = step.get("permit").and_then(Value::as_u64).ok_or("permit")? as usize;
                let p = *permits.get(idx).ok_or("permit index")?;
                let t = if op == "result" {
                    let c = counted(step.get("outcome").and_then(Value::as_str).unwrap_or("success"))?;
                    b.on_result(p, now, c, step.get("duration").and_then(as_u64).unwrap_or(0))
                } else {
                    b.release(p, now)
                };
                json!({"transition": t.as_ref().map_or(Value::Null, transition_json)})
            }
            "call" => {
                // acquire + result in one step.
                let (a, t1) = b.try_acquire(now);
                match a {
                    Acquire::Permitted(p) => {
                        let c = counted(step.get("outcome").and_then(Value::as_str).unwrap_or("success"))?;
                        let t2 = b.on_result(p, now, c, step.get("duration").and_then(as_u64).unwrap_or(0));
                        json!({"permitted": true, "transition": t2.or(t1).as_ref().map_or(Value::Null, transition_json)})
                    }
                    Acquire::Rejected { state, .. } => json!({"permitted": false, "state": state.code(),
                        "transition": t1.as_ref().map_or(Value::Null, transition_json)}),
                }
            }
            "state" => {
                json!({"state": b.state().code(), "calls": b.totals().calls, "failures": b.totals().failures, "slow": b.totals().slow})
            }
            "transition_to" => {
                let to = State::from_code(step["to"].as_str().ok_or("to")?).ok_or("state")?;
                match b.transition_to(to, now) {
                    Ok(t) => json!({"transition": transition_json(&t)}),
                    Err(e) => json!({"error": e.code()}),
                }
            }
            "reset" => json!({"transition": b.reset(now).as_ref().map_or(Value::Null, transition_json)}),
            "metrics" => retrycore::json::ToJson::to_value(&b.metrics(now)),
            "record" => {
                let c = counted(step.get("outcome").and_then(Value::as_str).unwrap_or("success"))?;
                let t = b.record(now, c, step.get("duration").and_then(as_u64).unwrap_or(0));
                json!({"transition": t.as_ref().map_or(Value::Null, transition_json)})
            }
            "transition_to_open_for" | "transition_to_open_until" => {
                let r = if op == "transition_to_open_for" {
                    b.transition_to_open_for(step.get("duration").and_then(as_u64).ok_or("duration")?, now)
                } else {
                    b.transition_to_open_until(step.get("until").and_then(as_u64).ok_or("until")?, now)
                };
                match r {
                    Ok(t) => json!({"transition": transition_json(&t)}),
                    Err(e) => json!({"error": e.code()}),
                }
            }
            "break_arguments" => retrycore::json::ToJson::to_value(&b.break_arguments(now)),
            "set_break_duration" => {
                match b.set_break_duration(step.get("duration").and_then(as_u64).ok_or("duration")?) {
                    Ok(()) => json!({}),
                    Err(e) => json!({"error": e.code()}),
                }
            }
            "snapshot" => {
                let snap = b.snapshot(now, step.get("wall_now_ms").and_then(as_u64).unwrap_or(0));
                let text = snap.to_json();
                snaps.insert(step.get("save_as").and_then(Value::as_str).unwrap_or("s").to_owned(), text.clone());
                retrycore::parse_stored(&text).unwrap()
            }
            "restore" => {
                let text = match (step.get("snapshot"), step.get("snapshot_text")) {
                    (_, Some(Value::String(raw))) => raw.clone(),
                    (Some(Value::String(name)), _) => snaps.get(name).cloned().ok_or("snapshot name")?,
                    (Some(v), _) => v.to_string(),
                    _ => return Err("restore needs a snapshot".into()),
                };
                let cfg = match step.get("config") {
                    Some(c) => BreakerConfig::from_json_value(c, "").map_err(|e| e.to_string())?,
                    None => config.clone(),
                };
                let wall = step.get("wall_now_ms").and_then(as_u64).unwrap_or(0);
                match BreakerSnapshot::from_json(&text).and_then(|s| CircuitBreaker::restore(cfg, &s, now, wall)) {
                    Ok(nb) => {
                        b = nb;
                        permits.clear();
                        json!({"state": b.state().code()})
                    }
                    Err(e) => json!({"error": e.code()}),
                }
            }
            other => return Err(format!("step {i}: unknown op {other}")),
        };
        if let Some(want) = want {
            subset(&format!("step {i} ({op})"), &got, want)?;
        }
    }
    Ok(())
}

fn category(v: &Value) -> Result<Category, String> {
    Category::from_code(v.as_str().unwrap_or("server_error")).ok_or_else(|| format!("category {v}"))
}

fn budget(case: &Case) -> Result<(), String> {
    let config = match BudgetConfig::from_json_value(case.get("config").unwrap_or(&json!({})), "") {
        Ok(c) => c,
        Err(e) => {
            return match case.expected_error() {
                Some(code) => eq("error", e.code(), code),
                None => Err(format!("unexpected error {} ({e})", e.code())),
            }
        }
    };
    if let Some(code) = case.expected_error() {
        return Err(format!("expected error {code}"));
    }
    let mut b = Budget::new(config).map_err(|e| e.to_string())?;
    let steps = case.get("steps").and_then(Value::as_array).ok_or("steps")?;
    for (i, step) in steps.iter().enumerate() {
        let op = step["op"].as_str().ok_or("op")?;
        let now = step.get("now").and_then(as_u64).unwrap_or(0);
        let want = step.get("expect");
        let cat = category(step.get("category").unwrap_or(&json!("server_error")))?;
        let refused = step.get("refused").and_then(Value::as_bool).unwrap_or(false);
        let holds = step.get("holds_slot").and_then(Value::as_bool).unwrap_or(false);
        let repeat = step.get("times").and_then(Value::as_u64).unwrap_or(1);
        let mut got = Value::Null;
        for _ in 0..repeat {
            got = match op {
                "start" => {
                    b.on_operation_start(now);
                    json!({"ok": true})
                }
                "end" => {
                    b.on_operation_end(holds);
                    json!({"ok": true})
                }
                "check" => match b.check(now, cat, refused, holds) {
                    Ok(()) => json!({"allowed": true}),
                    Err(r) => json!({"allowed": false, "reason": r.reason, "budget": r.budget}),
                },
                "withdraw" => {
                    let (cost, slot) = b.withdraw(now, cat, refused, holds);
                    json!({"cost": cost, "slot": slot})
                }
                "retry" => match b.check(now, cat, refused, holds) {
                    Ok(()) => {
                        let (cost, slot) = b.withdraw(now, cat, refused, holds);
                        json!({"allowed": true, "cost": cost, "slot": slot})
                    }
                    Err(r) => json!({"allowed": false, "reason": r.reason}),
                },
                "failure" => {
                    b.on_failure(
                        now,
                        FailureFacts {
                            category: cat,
                            counts: step.get("counts").and_then(Value::as_bool).unwrap_or(true),
                            reached_backend: step.get("reached_backend").and_then(Value::as_bool).unwrap_or(true),
                            declined_pushback: step.get("declined_pushback").and_then(Value::as_bool).unwrap_or(false),
                            refused,
                        },
                    );
                    json!({"ok": true})
                }
                "success" => {
                    b.on_success(now, step.get("cost").and_then(Value::as_u64).map(|c| c as u32));
                    json!({"ok": true})
                }
                "before_attempt" => {
                    let r = step.get("r").and_then(Value::as_f64).ok_or("r")?;
                    match b.before_attempt(now, r) {
                        None => json!({"allowed": true}),
                        Some(r) => json!({"allowed": false, "reason": r.reason}),
                    }
                }
                "level" => b.level(now),
                "deposit_retry" => {
                    // One operation starts, then its retry asks the budget (Finagle's test loop).
                    b.on_operation_start(now);
                    let ok = b.check(now, cat, refused, holds).is_ok();
                    if ok {
                        b.withdraw(now, cat, refused, holds);
                    }
                    let n = got.get("allowed").and_then(Value::as_u64).unwrap_or(0) + u64::from(ok);
                    json!({ "allowed": n })
                }
                other => return Err(format!("step {i}: unknown op {other}")),
            };
        }
        if let Some(want) = want {
            subset(&format!("step {i} ({op})"), &got, want)?;
        }
    }
    Ok(())
}

fn lint_case(case: &Case) -> Result<(), String> {
    let policy = PolicyConfig::from_json(&doc_of(case, "policy")).map_err(|e| e.to_string())?;
    let service = match case.get("service") {
        Some(s) => match Service::from_json_value(s) {
            Ok(s) => Some(s),
            Err(e) => {
                return match case.expected_error() {
                    Some(code) => eq("error", e.code(), code),
                    None => Err(format!("unexpected error {} ({e})", e.code())),
                }
            }
        },
        None => None,
    };
    let findings = lint(&policy, service.as_ref());
    let mut got: Vec<&str> = findings.iter().map(|f| f.code).collect();
    got.sort_unstable();
    let mut want: Vec<&str> =
        case.get("expect").and_then(Value::as_array).ok_or("expect")?.iter().filter_map(Value::as_str).collect();
    want.sort_unstable();
    eq("findings", got, want)
}

/// `alerts`: an alerts document (docs/observability.md, "Alerts") → every check, or an error naming its field.
fn alerts_case(case: &Case) -> Result<(), String> {
    let text = case.get("document").ok_or("document")?.to_string();
    match (retrycore::alerts::evaluate_document(&text, None), case.expected_error()) {
        (Err(e), Some(code)) => {
            eq("error", e.code(), code)?;
            case.str("error_field").map_or(Ok(()), |f| eq("error_field", e.field(), f))
        }
        (Err(e), None) => Err(format!("unexpected error {} ({e})", e.code())),
        (Ok(ev), Some(code)) => Err(format!("expected error {code}, got {}", ev.to_json_value())),
        (Ok(ev), None) => {
            let got = ev.to_json_value();
            if same_json(&got, case.expect()) {
                Ok(())
            } else {
                Err(format!("got {got}, want {}", case.expect()))
            }
        }
    }
}

/// JSON equality with numbers compared as f64 (`1` and `1.0` are one number).
fn same_json(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same_json(p, q)),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same_json(v, w)))
        }
        _ => a == b,
    }
}

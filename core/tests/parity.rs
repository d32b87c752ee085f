//! The differential-test generator (`make parity`).
//!
//! Generates random cases — policies, draws, failures with junk headers and
//! name chains, session step streams with breakers and budgets, breaker and
//! budget event streams, JSON values for canonical JSON and fingerprints,
//! keys and headers — computes what the core answers, and writes them as
//! vector files. Every runtime then runs those files with its ordinary vector
//! runner (`RETRYCORE_VECTORS=<dir>`), so Rust, Python, Node and wasm must
//! agree on every decision, delay (exact nanoseconds), state, code and
//! fingerprint.
//!
//! `PARITY_OUT=<dir> PARITY_CASES=<n> PARITY_SEED=<u64> cargo test -p retrycore --test parity -- --nocapture`
//! writes the files; without `PARITY_OUT` the test generates a small set
//! into a temporary directory and checks the generator against the Rust
//! runner (so the generator cannot drift from the vector schema).

#[path = "vectors/common.rs"]
mod common;
#[path = "vectors/idempotency.rs"]
mod idempotency;
#[path = "vectors/retry.rs"]
mod retry;

use retrycore::breaker::{Acquire, BreakerConfig, CircuitBreaker, Counted, Permit, Transition};
use retrycore::budget::{Budget, BudgetConfig, FailureFacts};
use retrycore::classify::Category;
use retrycore::idempotency as idem;
use retrycore::policy::{PolicyConfig, RetryPolicy};
use retrycore::retry_after::read_headers;
use retrycore::rng::{Rng, Xoshiro256pp};
use retrycore::session::{Decision, Gate, SessionOptions};
use retrycore::{
    json,
    json::{Map, Value},
};
use std::path::{Path, PathBuf};

struct Gen(Xoshiro256pp);

impl Gen {
    fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.0.next_u64() % n
        }
    }
    fn chance(&mut self, p: f64) -> bool {
        self.0.next_f64() < p
    }
    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len() as u64) as usize]
    }
    fn r(&mut self) -> f64 {
        match self.below(10) {
            0 => 0.0,
            1 => 1.0,
            2 => 0.5,
            _ => self.0.next_f64(),
        }
    }
}

fn num(v: u64) -> Value {
    if v <= 1 << 53 {
        json!(v)
    } else {
        json!(v.to_string())
    }
}

fn ns(d: std::time::Duration) -> u64 {
    retrycore::duration::from_std(d)
}

const DURATIONS: &[&str] =
    &["0s", "1ns", "7ms", "10ms", "50ms", "100ms", "250ms", "1s", "1.5s", "2s", "5s", "20s", "1m", "17ns", "333ms"];

fn policy_doc(g: &mut Gen, allow_breaker: bool) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("version".into(), json!(1));
    if g.chance(0.3) {
        let profiles =
            ["aws-standard", "aws-2026", "grpc", "polly", "resilience4j", "tenacity", "stamina", "envoy", "finagle"];
        m.insert("profile".into(), json!(g.pick(&profiles)));
        if g.chance(0.5) {
            m.insert("max_attempts".into(), json!(1 + g.below(6)));
        }
        return m;
    }
    m.insert("max_attempts".into(), json!(1 + g.below(7)));
    let kind = *g.pick(&["constant", "linear", "exponential", "exponential", "decorrelated"]);
    m.insert("backoff".into(), json!(kind));
    let initial_idx = g.below(DURATIONS.len() as u64) as usize;
    let initial = DURATIONS[initial_idx];
    let initial = if kind == "decorrelated" && initial == "0s" { "10ms" } else { initial };
    m.insert("initial".into(), json!(initial));
    // max_delay ≥ initial: choose from later entries of a sorted list.
    let sorted =
        ["1ns", "17ns", "7ms", "10ms", "50ms", "100ms", "250ms", "333ms", "1s", "1.5s", "2s", "5s", "20s", "1m"];
    let init_ns = retrycore::duration::parse_duration(initial, "x").unwrap();
    let bigger: Vec<&str> =
        sorted.iter().copied().filter(|d| retrycore::duration::parse_duration(d, "x").unwrap() >= init_ns).collect();
    if !bigger.is_empty() {
        m.insert("max_delay".into(), json!(g.pick(&bigger)));
    } else {
        m.insert("max_delay".into(), json!(initial));
    }
    if kind == "exponential" {
        m.insert("multiplier".into(), json!(*g.pick(&[1.0, 1.5, 2.0, 3.0, 10.0, 1e6, 1.0000001])));
    }
    if kind == "linear" && g.chance(0.5) {
        m.insert("increment".into(), json!(g.pick(DURATIONS)));
    }
    if kind != "decorrelated" {
        let j = match g.below(7) {
            0 => json!("none"),
            1 => json!("full"),
            2 => json!("equal"),
            3 => json!((g.below(11) as f64) / 10.0),
            4 => json!({"kind": "symmetric", "factor": (g.below(11) as f64) / 10.0}),
            5 => json!({"kind": "additive", "amount": "1ns"}),
            _ => json!("full"),
        };
        m.insert("jitter".into(), j);
    }
    if g.chance(0.3) {
        m.insert("deadline".into(), json!(*g.pick(&["100ms", "1s", "5s", "30s"])));
    }
    if g.chance(0.3) {
        m.insert("attempt_timeout".into(), json!(*g.pick(&["10ms", "100ms", "1s"])));
    }
    if g.chance(0.2) {
        m.insert("max_retry_after".into(), json!(*g.pick(&["1s", "5s", "60s"])));
        m.insert("cap_retry_after".into(), json!(g.chance(0.5)));
    }
    if g.chance(0.1) {
        m.insert("honor_retry_after".into(), json!(false));
    }
    if g.chance(0.2) {
        m.insert("idempotent".into(), json!(g.chance(0.5)));
    }
    if g.chance(0.2) {
        m.insert(
            "classification".into(),
            json!({"defaults": g.chance(0.8), "rules": [{"status": *g.pick(&[429u16, 500, 503, 409]), "retry": *g.pick(&["always", "never", "if_idempotent"])}]}),
        );
    }
    if allow_breaker && g.chance(0.35) {
        let k = *g.pick(&["count_based", "time_based", "consecutive", "sampling"]);
        let mut b = json!({"kind": k, "wait_duration_in_open_state": *g.pick(&["10ms", "1s", "5s"])});
        if k == "sampling" {
            b["minimum_throughput"] = json!(2 + g.below(4));
            b["failure_ratio"] = json!(*g.pick(&[0.1, 0.5, 1.0]));
            b["sampling_duration"] = json!(*g.pick(&["100ms", "1s", "30s"]));
        } else if k != "consecutive" {
            b["minimum_number_of_calls"] = json!(1 + g.below(5));
            b["sliding_window_size"] = json!(1 + g.below(5));
            b["permitted_number_of_calls_in_half_open_state"] = json!(1 + g.below(3));
        } else {
            b["failure_threshold"] = json!(1 + g.below(4));
        }
        m.insert("breaker".into(), b);
    }
    if g.chance(0.35) {
        m.insert("budget".into(), budget_doc(g));
    }
    m
}

fn budget_doc(g: &mut Gen) -> Value {
    match g.below(6) {
        0 => json!({"kind": "token_bucket", "capacity": 1 + g.below(30)}),
        1 => json!({"kind": "grpc", "max_tokens": 1 + g.below(10), "token_ratio": *g.pick(&[0.1, 0.5, 0.251, 1.0])}),
        2 => {
            json!({"kind": "ratio", "ratio": *g.pick(&[0.0, 0.1, 0.5]), "min_retries_per_second": g.below(3), "window": "1s"})
        }
        3 => json!({"kind": "concurrency", "ratio": *g.pick(&[0.0, 0.2, 0.5]), "min_concurrency": g.below(3)}),
        4 => {
            json!({"kind": "finagle", "ttl": "1s", "min_retries_per_second": g.below(3), "percent_can_retry": *g.pick(&[0.0, 0.2, 0.3, 0.5])})
        }
        _ => json!({"kind": "adaptive", "k": *g.pick(&[1.0, 2.0]), "window": "1s"}),
    }
}

const NAMES: &[&str] = &[
    "ECONNREFUSED",
    "ECONNRESET",
    "ETIMEDOUT",
    "EPIPE",
    "UND_ERR_SOCKET",
    "builtins.ConnectionResetError",
    "builtins.TimeoutError",
    "builtins.ConnectionError",
    "requests.exceptions.ConnectionError",
    "urllib3.exceptions.NewConnectionError",
    "java.net.ConnectException",
    "java.net.SocketTimeoutException",
    "HttpClientErrorException$TooManyRequests",
    "asyncio.exceptions.CancelledError",
    "AbortError",
    "DOMException:TimeoutError",
    "TypeError",
    "FetchNetworkError",
    "retrycore:retry_exhausted",
    "retrycore:breaker_open",
    "ThrottlingException",
    "com.acme.Unknown",
    "System.Threading.Tasks.TaskCanceledException",
    "System.TimeoutException",
    "",
    "..",
    "a.b.",
    "$",
];

const HEADER_VALUES: &[&str] = &[
    "0",
    "1",
    "3",
    "120",
    "-1",
    "1.5",
    "",
    "soon",
    "Sun, 06 Nov 1994 08:49:47 GMT",
    "Sunday, 06-Nov-94 08:49:47 GMT",
    "Sun Nov  6 08:49:47 1994",
    "Sun, 31 Feb 1994 08:49:37 GMT",
    "99999999999999999999",
    " 7 ",
    "true",
    "false",
    "1, 2",
];

const HEADER_NAMES: &[&str] = &[
    "Retry-After",
    "retry-after",
    "retry-after-ms",
    "x-amz-retry-after",
    "grpc-retry-pushback-ms",
    "x-should-retry",
    "Stripe-Should-Retry",
    "x-retry-exhausted",
    "content-type",
];

fn failure_doc(g: &mut Gen) -> Value {
    let mut f = Map::new();
    if g.chance(0.6) {
        f.insert(
            "status".into(),
            json!(*g.pick(&[200u16, 400, 401, 404, 408, 409, 418, 425, 429, 500, 501, 502, 503, 504, 511, 599])),
        );
    }
    if g.chance(0.2) {
        f.insert("grpc_code".into(), json!(g.below(17)));
    }
    if g.chance(0.6) {
        let n = 1 + g.below(4);
        let names: Vec<&str> = (0..n).map(|_| *g.pick(NAMES)).collect();
        f.insert("error_names".into(), json!(names));
    }
    if g.chance(0.7) {
        f.insert("method".into(), json!(*g.pick(&["GET", "POST", "PUT", "DELETE", "PATCH", "get"])));
    }
    if g.chance(0.2) {
        f.insert("idempotent".into(), json!(g.chance(0.5)));
    }
    if g.chance(0.2) {
        f.insert("idempotency_key_sent".into(), json!(true));
    }
    if g.chance(0.5) {
        let n = 1 + g.below(3);
        let hs: Vec<Value> = (0..n).map(|_| json!([*g.pick(HEADER_NAMES), *g.pick(HEADER_VALUES)])).collect();
        f.insert("headers".into(), Value::Array(hs));
        f.insert("wall_now_ms".into(), json!(784_111_777_000u64));
    }
    Value::Object(f)
}

fn transition(t: &Option<Transition>) -> Value {
    t.as_ref().map_or(
        Value::Null,
        |t| json!({"from": t.from.code(), "to": t.to.code(), "reason": t.reason.code(), "at": t.at}),
    )
}

fn gen_delay_replay(g: &mut Gen, i: usize) -> Option<Value> {
    let doc = Value::Object(policy_doc(g, false));
    let c = PolicyConfig::from_json(&doc.to_string()).ok()?;
    let n = 1 + g.below(8) as usize;
    let draws: Vec<f64> = (0..n).map(|_| g.r()).collect();
    let delays = c.backoff.replay_ns(&draws).ok()?;
    Some(
        json!({"name": format!("parity delay_replay {i}"), "policy": doc, "draws": draws, "expect": delays.iter().map(|d| num(*d)).collect::<Vec<_>>()}),
    )
}

fn gen_classify(g: &mut Gen, i: usize) -> Option<Value> {
    let f = failure_doc(g);
    let mut case = json!({"name": format!("parity classify {i}"), "failure": f.clone()});
    let classifier = if g.chance(0.3) {
        let p = policy_doc(g, false);
        let mut d = Map::new();
        d.insert("version".into(), json!(1));
        if let Some(cl) = p.get("classification") {
            d.insert("classification".into(), cl.clone());
        }
        if let Some(pr) = p.get("profile") {
            d.insert("profile".into(), pr.clone());
        }
        case["policy"] = Value::Object(d.clone());
        PolicyConfig::from_json(&Value::Object(d).to_string()).ok()?.classifier
    } else {
        Default::default()
    };
    let o = retry::OwnedFailure::read(&f).expect("a generated failure reads back");
    let v = o.with(|f| classifier.classify(f));
    case["expect"] = json!({
        "category": v.category.code(), "retry": v.retry.code(), "safe": v.safe, "retryable": v.retryable,
        "server_declined": v.server_declined, "server_delay": v.advice.delay_ns().map(num),
        "refused": o.with(|f| retrycore::classify::is_refused(f.error_names)),
    });
    Some(case)
}

fn gen_retry_after(g: &mut Gen, i: usize) -> Option<Value> {
    let n = g.below(4);
    let hs: Vec<(String, String)> =
        (0..n).map(|_| ((*g.pick(HEADER_NAMES)).to_owned(), (*g.pick(HEADER_VALUES)).to_owned())).collect();
    let wall = if g.chance(0.7) { Some(784_111_777_000u64 + g.below(20_000)) } else { None };
    let a = read_headers(hs.iter().map(|(a, b)| (a.as_str(), b.as_str())), wall);
    let mut case = json!({"name": format!("parity retry_after {i}"), "headers": hs.iter().map(|(a, b)| json!([a, b])).collect::<Vec<_>>(),
        "expect": {"delay": a.delay_ns().map(num), "source": a.delay.map(|(_, s)| s.name()), "declined": a.declined_by_pushback,
                   "should_retry": a.should_retry, "retry_exhausted": a.retry_exhausted}});
    if let Some(w) = wall {
        case["wall_now_ms"] = json!(w);
    }
    Some(case)
}

fn gen_session(g: &mut Gen, i: usize) -> Option<Value> {
    let doc = Value::Object(policy_doc(g, true));
    let config = PolicyConfig::from_json(&doc.to_string()).ok()?;
    let policy = RetryPolicy::new(config, Some(0)).ok()?;
    let names = ["main", "b", "c"];
    let mut sessions: Vec<Option<retrycore::session::RetrySession>> = vec![None, None, None];
    let mut steps = Vec::new();
    let mut now: u64 = 0;
    for _ in 0..(3 + g.below(14)) {
        let si = g.below(3) as usize;
        now += match g.below(4) {
            0 => 0,
            1 => g.below(1000),
            2 => g.below(200) * 1_000_000,
            _ => g.below(6) * 1_000_000_000,
        };
        if sessions[si].is_none() {
            let seed = g.below(1000);
            let opts = SessionOptions { key: Some("vector-key".into()), seed: Some(seed), ..Default::default() };
            sessions[si] = Some(policy.session(opts).ok()?);
            steps.push(json!({"op": "start", "s": names[si], "seed": seed}));
        }
        let s = sessions[si].as_mut()?;
        let step = match g.below(10) {
            0..=3 => {
                let got = match s.before_attempt_ns(now) {
                    Ok(Gate::Proceed { attempt, max_attempts, timeout, .. }) => {
                        json!({"proceed": {"attempt": attempt, "max_attempts": max_attempts, "timeout": timeout.map(|t| num(ns(t)))}})
                    }
                    Ok(Gate::Reject { reason, retry_after, budget }) => {
                        json!({"reject": {"reason": reason.code(), "retry_after": retry_after.map(|t| num(ns(t))), "budget": budget}})
                    }
                    Err(e) => json!({"error": e.code()}),
                };
                json!({"op": "before_attempt", "s": names[si], "now": num(now), "expect": got})
            }
            4..=7 => {
                let f = failure_doc(g);
                let o = retry::OwnedFailure::read(&f).expect("a generated failure reads back");
                let got = match o.with(|f| s.on_failure_ns(now, f)) {
                    Ok(Decision::Retry { retry, attempt, delay, backoff, server_delay, capped, category }) => {
                        json!({"retry": {
                        "retry": retry, "attempt": attempt, "delay": num(ns(delay)), "backoff": num(ns(backoff)),
                        "server_delay": server_delay.map(|d| num(ns(d))), "capped": capped, "category": category.code()}})
                    }
                    Ok(Decision::GiveUp { reason, category, exhausted, refusal, attempts }) => json!({"give_up": {
                        "reason": reason.code(), "category": category.code(), "exhausted": exhausted, "attempts": attempts,
                        "budget": refusal.as_ref().map(|r| r.budget.clone()), "budget_reason": refusal.as_ref().map(|r| r.reason)}}),
                    Err(e) => json!({"error": e.code()}),
                };
                json!({"op": "failure", "s": names[si], "now": num(now), "failure": f, "expect": got})
            }
            8 => {
                let got = match s.on_success_ns(now, None) {
                    Ok(()) => json!({"ok": true}),
                    Err(e) => json!({"error": e.code()}),
                };
                json!({"op": "success", "s": names[si], "now": num(now), "expect": got})
            }
            _ => {
                sessions[si] = None;
                json!({"op": "drop", "s": names[si]})
            }
        };
        steps.push(step);
    }
    steps.push(json!({"op": "counters", "expect": policy.counters().snapshot().to_json_value()}));
    if let Some(b) = policy.breaker() {
        let b = b.lock().unwrap();
        steps.push(json!({"op": "breaker", "expect": {"state": b.state().code(), "calls": b.totals().calls, "failures": b.totals().failures}}));
    }
    if let Some(b) = policy.budgets().first() {
        steps.push(json!({"op": "budget", "now": num(now), "expect": b.lock().unwrap().level(now)}));
    }
    Some(json!({"name": format!("parity session {i}"), "policy": doc, "steps": steps}))
}

fn gen_breaker(g: &mut Gen, i: usize) -> Option<Value> {
    let doc = policy_doc(g, true)
        .get("breaker")
        .cloned()
        .unwrap_or(json!({"minimum_number_of_calls": 3, "sliding_window_size": 3}));
    let cfg = BreakerConfig::from_json_value(&doc, "").ok()?;
    let mut b = CircuitBreaker::new(cfg.clone()).ok()?;
    let mut permits: Vec<Permit> = Vec::new();
    let mut steps = Vec::new();
    let mut now = 0u64;
    for _ in 0..(4 + g.below(25)) {
        now += match g.below(3) {
            0 => g.below(100),
            1 => g.below(500) * 1_000_000,
            _ => g.below(8) * 1_000_000_000,
        };
        let outcome = *g.pick(&["success", "failure", "failure", "ignored"]);
        let counted = match outcome {
            "success" => Counted::Success,
            "failure" => Counted::Failure,
            _ => Counted::Ignored,
        };
        let duration = *g.pick(&[0u64, 1_000_000_000, 70_000_000_000]);
        let step = match g.below(6) {
            0 | 1 => {
                let (a, t) = b.try_acquire(now);
                let mut v = match a {
                    Acquire::Permitted(p) => {
                        permits.push(p);
                        json!({"permitted": true, "trial": p.is_trial(), "permit": permits.len() - 1})
                    }
                    Acquire::Rejected { state, retry_after } => json!({"permitted": false, "state": state.code(),
                        "retry_after": if retry_after == u64::MAX { Value::Null } else { num(retry_after) }}),
                };
                v["transition"] = transition(&t);
                json!({"op": "acquire", "now": num(now), "expect": v})
            }
            2 | 3 if !permits.is_empty() => {
                let idx = g.below(permits.len() as u64) as usize;
                let t = b.on_result(permits[idx], now, counted, duration);
                json!({"op": "result", "now": num(now), "permit": idx, "outcome": outcome, "duration": num(duration), "expect": {"transition": transition(&t)}})
            }
            4 if !permits.is_empty() => {
                let idx = g.below(permits.len() as u64) as usize;
                let t = b.release(permits[idx], now);
                json!({"op": "release", "now": num(now), "permit": idx, "expect": {"transition": transition(&t)}})
            }
            _ => {
                let (a, t1) = b.try_acquire(now);
                let v = match a {
                    Acquire::Permitted(p) => {
                        let t2 = b.on_result(p, now, counted, duration);
                        json!({"permitted": true, "transition": transition(&t2.or(t1))})
                    }
                    Acquire::Rejected { state, .. } => {
                        json!({"permitted": false, "state": state.code(), "transition": transition(&t1)})
                    }
                };
                json!({"op": "call", "now": num(now), "outcome": outcome, "duration": num(duration), "expect": v})
            }
        };
        steps.push(step);
        let t = b.totals();
        steps.push(json!({"op": "state", "expect": {"state": b.state().code(), "calls": t.calls, "failures": t.failures, "slow": t.slow}}));
    }
    Some(json!({"name": format!("parity breaker {i}"), "config": doc, "steps": steps}))
}

fn gen_budget(g: &mut Gen, i: usize) -> Option<Value> {
    let doc = budget_doc(g);
    let mut b = Budget::new(BudgetConfig::from_json_value(&doc, "").ok()?).ok()?;
    let cats = ["server_error", "timeout", "overloaded", "connect", "invalid_request"];
    let mut steps = Vec::new();
    let mut now = 0u64;
    for _ in 0..(4 + g.below(30)) {
        now += g.below(4) * 100_000_000 + g.below(3);
        let cat = *g.pick(&cats);
        let category = Category::from_code(cat).unwrap();
        let refused = g.chance(0.1);
        let holds = g.chance(0.2);
        let step = match g.below(8) {
            0 | 1 => {
                b.on_operation_start(now);
                json!({"op": "start", "now": num(now)})
            }
            2 => {
                b.on_operation_end(holds);
                json!({"op": "end", "now": num(now), "holds_slot": holds})
            }
            3 | 4 => {
                let got = match b.check(now, category, refused, holds) {
                    Ok(()) => {
                        let (cost, slot) = b.withdraw(now, category, refused, holds);
                        json!({"allowed": true, "cost": cost, "slot": slot})
                    }
                    Err(r) => json!({"allowed": false, "reason": r.reason}),
                };
                json!({"op": "retry", "now": num(now), "category": cat, "refused": refused, "holds_slot": holds, "expect": got})
            }
            5 => {
                let counts = g.chance(0.8);
                let pushback = g.chance(0.1);
                b.on_failure(
                    now,
                    FailureFacts {
                        category,
                        counts,
                        reached_backend: cat != "connect",
                        declined_pushback: pushback,
                        refused,
                    },
                );
                json!({"op": "failure", "now": num(now), "category": cat, "counts": counts, "reached_backend": cat != "connect", "declined_pushback": pushback, "refused": refused})
            }
            6 => {
                let cost = if g.chance(0.5) { Some(g.below(15) as u32) } else { None };
                b.on_success(now, cost);
                let mut s = json!({"op": "success", "now": num(now)});
                if let Some(c) = cost {
                    s["cost"] = json!(c);
                }
                s
            }
            _ => {
                let r = g.r();
                let got = match b.before_attempt(now, r) {
                    None => json!({"allowed": true}),
                    Some(rf) => json!({"allowed": false, "reason": rf.reason}),
                };
                json!({"op": "before_attempt", "now": num(now), "r": r, "expect": got})
            }
        };
        steps.push(step);
        steps.push(json!({"op": "level", "now": num(now), "expect": b.level(now)}));
    }
    Some(json!({"name": format!("parity budget {i}"), "config": doc, "steps": steps}))
}

fn json_value(g: &mut Gen, depth: u32) -> Value {
    match if depth > 3 { g.below(4) } else { g.below(7) } {
        0 => Value::Null,
        1 => json!(g.chance(0.5)),
        2 => {
            let x = match g.below(6) {
                0 => (g.below(2000) as f64) - 1000.0,
                1 => f64::from_bits(g.0.next_u64() & !(0x7ff << 52) | ((g.below(2046) + 1) << 52)),
                2 => (g.below(1 << 53) as f64) * if g.chance(0.5) { 1.0 } else { -1.0 },
                3 => 1e21 * (g.below(10) as f64 + 1.0),
                4 => (g.0.next_f64() - 0.5) * 1e-7,
                _ => -0.0,
            };
            if x.is_finite() {
                json!(x)
            } else {
                json!(0)
            }
        }
        3 => {
            let pool =
                ["", "a", "é", "\u{1F600}", "\"quote\"", "\\", "\n\t", "\u{7f}", "\u{10}", "€", "zz", "A", "\u{fb33}"];
            json!((0..g.below(3)).map(|_| *g.pick(&pool)).collect::<String>())
        }
        4 | 5 => {
            let mut m = Map::new();
            for _ in 0..g.below(4) {
                let keys = ["a", "b", "B", "é", "\u{1F600}", "€", "10", "1", "", "\u{fb33}", "\r"];
                m.insert((*g.pick(&keys)).to_owned(), json_value(g, depth + 1));
            }
            Value::Object(m)
        }
        _ => Value::Array((0..g.below(4)).map(|_| json_value(g, depth + 1)).collect()),
    }
}

fn gen_jcs(g: &mut Gen, i: usize) -> Option<Value> {
    let v = json_value(g, 0);
    let got = idem::canonicalize(&v);
    let mut case = json!({"name": format!("parity jcs {i}"), "value": v});
    match got {
        Ok(t) => case["expect"] = json!(t),
        Err(e) => case["error"] = json!(e.code()),
    }
    Some(case)
}

fn gen_fingerprint(g: &mut Gen, i: usize) -> Option<Value> {
    let body = json_value(g, 0);
    let mut case = json!({"name": format!("parity fingerprint {i}"), "body": body.clone()});
    let got = if g.chance(0.5) {
        let m = *g.pick(&["GET", "POST"]);
        case["method"] = json!(m);
        case["path"] = json!("/v1/charges");
        idem::fingerprint_http(m, "/v1/charges", &body, None)
    } else {
        case["operation"] = json!("charge");
        idem::fingerprint_operation("charge", &body, None)
    };
    match got {
        Ok(t) => case["expect"] = json!(t),
        Err(e) => case["error"] = json!(e.code()),
    }
    Some(case)
}

fn gen_key(g: &mut Gen, i: usize) -> Option<Value> {
    let junk = ["a", "Z", "0", ":", "-", "_", " ", "\t", "é", "sha256:", "~", "!", "\u{7f}", "\""];
    let clean = ["a", "Z", "0", ":", "-", "_", "~", "!", "order", "1001"];
    let pool: &[&str] = if g.chance(0.5) { &clean } else { &junk };
    let key: String = (0..g.below(12)).map(|_| *g.pick(pool)).collect();
    let mut case = json!({"name": format!("parity key {i}"), "key": key});
    match idem::validate_key(&key, idem::DEFAULT_MAX_KEY_LEN) {
        Ok(()) => case["expect"] = json!(true),
        Err(e) => case["error"] = json!(e.code()),
    }
    Some(case)
}

fn gen_header(g: &mut Gen, i: usize) -> Option<Value> {
    let pool = ["\"", "a", "b", "\\", ";", "=", " ", "\t", "k", "1", "?", "é", "\"abc\"", ";p=1"];
    let mut value: String = (0..g.below(10)).map(|_| *g.pick(&pool)).collect();
    if g.chance(0.5) {
        let inner: String = (0..g.below(8)).map(|_| *g.pick(&["a", "b", "1", "-", ":", "\\\"", "\\\\"])).collect();
        value = format!("\"{inner}\"");
    }
    let form = *g.pick(&["sf_string", "sf_string_or_token"]);
    let f = if form == "sf_string" { idem::HeaderForm::SfString } else { idem::HeaderForm::SfStringOrToken };
    let mut case = json!({"name": format!("parity header {i}"), "value": value, "form": form});
    match idem::parse_header(&value, f) {
        Ok(k) => case["expect"] = json!(k),
        Err(e) => case["error"] = json!(e.code()),
    }
    Some(case)
}

type Maker = fn(&mut Gen, usize) -> Option<Value>;

const KINDS: &[(&str, &str, Maker)] = &[
    ("delay_replay", "delay_replay", gen_delay_replay),
    ("classify", "classify", gen_classify),
    ("retry_after", "retry_after", gen_retry_after),
    ("session", "session", gen_session),
    ("breaker", "breaker", gen_breaker),
    ("budget", "budget", gen_budget),
    ("jcs", "jcs", gen_jcs),
    ("fingerprint", "fingerprint", gen_fingerprint),
    ("key_validate", "key", gen_key),
    ("header_parse", "header", gen_header),
];

/// Writes `cases` random cases (spread over the kinds) into `dir`; returns the count written.
pub fn generate(dir: &Path, cases: usize, seed: u64) -> usize {
    std::fs::create_dir_all(dir).unwrap();
    let mut g = Gen(Xoshiro256pp::seed_from_u64(seed));
    let per = cases.div_ceil(KINDS.len());
    let mut written = 0;
    for (kind, file, make) in KINDS {
        let mut out = Vec::with_capacity(per);
        let mut i = 0;
        while out.len() < per && i < per * 20 {
            if let Some(c) = make(&mut g, i) {
                out.push(c);
            }
            i += 1;
        }
        written += out.len();
        let doc = json!({"_comment": format!("Generated by core/tests/parity.rs (seed {seed}): random {kind} cases answered by the Rust core; every runtime must agree."), "kind": kind, "cases": out});
        std::fs::write(dir.join(format!("parity-{file}.json")), serde_json::to_string(&doc).unwrap()).unwrap();
    }
    written
}

#[test]
fn parity_generator() {
    let (dir, cases, seed, keep) = match std::env::var_os("PARITY_OUT") {
        Some(d) => (
            PathBuf::from(d),
            std::env::var("PARITY_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(10_000),
            std::env::var("PARITY_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(1),
            true,
        ),
        None => {
            (std::env::temp_dir().join(format!("retrycore-parity-selfcheck-{}", std::process::id())), 400, 7, false)
        }
    };
    let n = generate(&dir, cases, seed);
    eprintln!("parity: {n} cases written to {}", dir.display());
    // The Rust runner must agree with what the generator recorded.
    let mut failures = Vec::new();
    for e in std::fs::read_dir(&dir).unwrap().flatten() {
        let doc: Value =
            serde_json::from_str::<serde_json::Value>(&std::fs::read_to_string(e.path()).unwrap()).unwrap().into();
        let kind = doc["kind"].as_str().unwrap().to_owned();
        for raw in doc["cases"].as_array().unwrap() {
            let case = common::Case::new(raw, &doc);
            match retry::run(&kind, &case).or_else(|| idempotency::run(&kind, &case)) {
                Some(Ok(())) => {}
                Some(Err(m)) => failures.push(format!("{kind} {}: {m}", raw["name"])),
                None => failures.push(format!("{kind}: no runner")),
            }
        }
    }
    if !keep {
        let _ = std::fs::remove_dir_all(&dir);
    }
    assert!(failures.is_empty(), "the Rust runner disagrees with the parity generator:\n{}", failures.join("\n"));
}

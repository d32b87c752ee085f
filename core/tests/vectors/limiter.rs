//! The `limiter` kind: a limiter configuration and a script of steps
//! (`acquire`, `release`, `cancel`, `state`), each compared with its
//! `expect` (tests/vectors/README.md).

use crate::common::{as_u64, Case};
use retrycore::limiters::{AttemptKind, Completion, Limiter, LimiterConfig, Signal};
use retrycore::{json, json::Value};

pub fn run(kind: &str, case: &Case) -> Option<Result<(), String>> {
    match kind {
        "limiter" => Some(limiter(case)),
        _ => None,
    }
}

/// Compares `want` ⊆ `got`; a float in `want` matches within `tol` relative.
pub fn subset(what: &str, got: &Value, want: &Value, tol: f64) -> Result<(), String> {
    match (want, got) {
        (Value::Object(w), Value::Object(g)) => {
            for (k, wv) in w {
                let gv = g.get(k).unwrap_or(&Value::Null);
                subset(&format!("{what}.{k}"), gv, wv, tol)?;
            }
            Ok(())
        }
        (Value::Number(w), Value::Number(g)) if w.is_f64() || g.is_f64() => {
            let (w, g) = (w.as_f64().unwrap_or(f64::NAN), g.as_f64().unwrap_or(f64::NAN));
            if w == g || (w - g).abs() <= tol * w.abs().max(g.abs()) {
                Ok(())
            } else {
                Err(format!("{what}: got {g:?}, want {w:?}"))
            }
        }
        _ if want == got => Ok(()),
        _ => Err(format!("{what}: got {got}, want {want}")),
    }
}

fn limiter(case: &Case) -> Result<(), String> {
    let cfg = LimiterConfig::from_json_value(case.get("config").unwrap_or(&Value::Null), "");
    let cfg = match (cfg, case.expected_error()) {
        (Err(e), Some(code)) => {
            crate::common::eq("error", e.code(), code)?;
            if let Some(f) = case.str("error_field") {
                crate::common::eq("error_field", e.field(), f)?;
            }
            return Ok(());
        }
        (Err(e), None) => return Err(format!("unexpected error {} ({e})", e.code())),
        (Ok(c), Some(code)) => return Err(format!("expected error {code}, got {c:?}")),
        (Ok(c), None) => c,
    };
    let tol = case.get("tolerance").and_then(Value::as_f64).unwrap_or(0.0);
    let mut l = Limiter::new(cfg, case.u64("created").unwrap_or(0));
    let steps = case.get("steps").and_then(Value::as_array).ok_or("steps")?;
    for (i, step) in steps.iter().enumerate() {
        let op = step["op"].as_str().ok_or("op")?;
        let now = step.get("now").and_then(as_u64).unwrap_or(0);
        let mut got = Value::Null;
        for _ in 0..step.get("times").and_then(Value::as_u64).unwrap_or(1) {
            got = match op {
                "acquire" => {
                    let kind = step.get("attempt").and_then(Value::as_str).unwrap_or("initial");
                    let kind = AttemptKind::parse(kind).ok_or("attempt")?;
                    let within = step.get("within").and_then(as_u64);
                    l.acquire(now, kind, within).to_json(1.0)
                }
                "release" => {
                    let signal = Signal::parse(step.get("signal").and_then(Value::as_str).unwrap_or("success"))
                        .ok_or("signal")?;
                    let rtt = step.get("rtt").and_then(as_u64).unwrap_or(0);
                    json!({ "granted": l.release(now, Completion { rtt, signal }) })
                }
                "cancel" => {
                    let ticket = step.get("ticket").and_then(as_u64).ok_or("ticket")?;
                    l.cancel(now, ticket).to_json(1.0)
                }
                "state" => l.state(now),
                other => return Err(format!("step {i}: unknown op {other:?}")),
            };
        }
        if let Some(want) = step.get("expect") {
            subset(&format!("step {i} ({op})"), &got, want, tol)?;
        }
    }
    Ok(())
}

//! The `compensation` and `dead_letter_replay` kinds: a saga (or letters
//! and options) and a script of steps, each compared with its `expect` or
//! its `error` (tests/vectors/README.md).

use crate::common::{as_u64, eq, Case};
use retrycore::compensation::{CompensationPlan, CompensationRun, Outcome};
use retrycore::dead_letter_replay::Replay;
use retrycore::{json, json::Value};

pub fn run(kind: &str, case: &Case) -> Option<Result<(), String>> {
    match kind {
        "compensation" => Some(compensation(case)),
        "dead_letter_replay" => Some(replay(case)),
        _ => None,
    }
}

/// Compares `want` ⊆ `got`: an object's keys given, a list's every item (and its length).
pub fn subset(what: &str, got: &Value, want: &Value) -> Result<(), String> {
    match (want, got) {
        (Value::Object(w), Value::Object(g)) => {
            for (k, wv) in w {
                subset(&format!("{what}.{k}"), g.get(k).unwrap_or(&Value::Null), wv)?;
            }
            Ok(())
        }
        (Value::Array(w), Value::Array(g)) => {
            eq(&format!("{what} length"), g.len(), w.len())?;
            for (i, (gv, wv)) in g.iter().zip(w).enumerate() {
                subset(&format!("{what}[{i}]"), gv, wv)?;
            }
            Ok(())
        }
        _ if want == got => Ok(()),
        _ => Err(format!("{what}: got {got}, want {want}")),
    }
}

/// Checks a step's (or a case's) result against its `error` and `error_field`, or its `expect`.
fn check(what: &str, spec: &Value, got: retrycore::Result<Value>) -> Result<bool, String> {
    match (spec.get("error").and_then(Value::as_str), got) {
        (Some(code), Err(e)) => {
            eq(&format!("{what}: error"), e.code(), code)?;
            if let Some(f) = spec.get("error_field").and_then(Value::as_str) {
                eq(&format!("{what}: error_field"), e.field(), f)?;
            }
            Ok(false)
        }
        (Some(code), Ok(v)) => Err(format!("{what}: expected error {code}, got {v}")),
        (None, Err(e)) => Err(format!("{what}: unexpected error {} ({e})", e.code())),
        (None, Ok(v)) => {
            if let Some(want) = spec.get("expect") {
                subset(what, &v, want)?;
            }
            Ok(true)
        }
    }
}

fn steps(case: &Case) -> Result<&Vec<Value>, String> {
    case.get("steps").and_then(Value::as_array).ok_or_else(|| "steps".to_owned())
}

fn compensation(case: &Case) -> Result<(), String> {
    let plan = CompensationPlan::from_json_value(case.get("saga").unwrap_or(&Value::Null));
    let Some(plan) = check_case(case, plan)? else { return Ok(()) };
    let mut run = CompensationRun::new(plan);
    for (i, step) in steps(case)?.iter().enumerate() {
        let op = step["op"].as_str().ok_or("op")?;
        let got = match op {
            "next" => Ok(run.next().map_or(Value::Null, |p| p.to_json_value())),
            "record" => Outcome::from_json_value(&step["outcome"])
                .and_then(|o| run.record(o))
                .map(|l| l.map_or(Value::Null, |l| l.to_value())),
            "result" => Ok(run.result()),
            other => return Err(format!("step {i}: unknown op {other:?}")),
        };
        check(&format!("step {i} ({op})"), step, got)?;
    }
    Ok(())
}

fn replay(case: &Case) -> Result<(), String> {
    let null = Value::Null;
    let r = Replay::from_json_values(
        case.get("letters").unwrap_or(&null),
        case.get("options").unwrap_or(&null),
        case.u64("wall_now_ms").unwrap_or(0),
    );
    let Some(mut r) = check_case(case, r)? else { return Ok(()) };
    for (i, step) in steps(case)?.iter().enumerate() {
        let op = step["op"].as_str().ok_or("op")?;
        let got = match op {
            "groups" => Ok(r.groups()),
            "next_batch" => r.next_batch().map(|ids| json!(ids)),
            "record" => {
                let id = step["msg_id"].as_str().ok_or("msg_id")?;
                let ok = step["ok"].as_bool().ok_or("ok")?;
                let now = step.get("wall_now_ms").and_then(as_u64).ok_or("wall_now_ms")?;
                r.record(id, ok, now).map(|()| Value::Null)
            }
            "letters" => Ok(r.letters_json()),
            "audit" => Ok(r.audit()),
            other => return Err(format!("step {i}: unknown op {other:?}")),
        };
        check(&format!("step {i} ({op})"), step, got)?;
    }
    Ok(())
}

/// The case-level `error` (with `error_field`) for building the run; `None` when it failed as expected.
fn check_case<T: std::fmt::Debug>(case: &Case, got: retrycore::Result<T>) -> Result<Option<T>, String> {
    match (case.expected_error(), got) {
        (Some(code), Err(e)) => {
            eq("error", e.code(), code)?;
            if let Some(f) = case.str("error_field") {
                eq("error_field", e.field(), f)?;
            }
            Ok(None)
        }
        (Some(code), Ok(v)) => Err(format!("expected error {code}, got {v:?}")),
        (None, Err(e)) => Err(format!("unexpected error {} ({e})", e.code())),
        (None, Ok(v)) => Ok(Some(v)),
    }
}

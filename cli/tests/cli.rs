//! End-to-end tests of the `retrycore` binary: golden outputs, the retry
//! arithmetic of docs/cli.md reproduced by the simulation, and exit codes.
//!
//! Golden files live in `tests/golden/`; run with `UPDATE_GOLDEN=1` to
//! rewrite them from the current output (then review the diff).

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_retrycore"));
    c.current_dir(env!("CARGO_MANIFEST_DIR"));
    c
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("the binary runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("utf-8 stdout")
}

fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).expect("utf-8 stderr")
}

fn data(name: &str) -> String {
    format!("tests/data/{name}")
}

fn example(name: &str) -> String {
    format!("../examples/{name}")
}

/// Compares `actual` with `tests/golden/<name>`, or rewrites it when UPDATE_GOLDEN is set.
fn golden(name: &str, actual: &str) {
    let path: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden").join(name);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|_| panic!("{} is missing: run with UPDATE_GOLDEN=1", path.display()));
    if expected != actual {
        panic!(
            "{} differs from the output (rerun with UPDATE_GOLDEN=1 if the change is intended)\n--- expected\n{expected}\n--- actual\n{actual}",
            path.display()
        );
    }
}

fn simulate_json(args: &[&str]) -> Value {
    let mut all = vec!["simulate", "--json"];
    all.extend_from_slice(args);
    let o = run(&all);
    assert!(o.status.success(), "simulate failed: {}", stderr(&o));
    serde_json::from_str(&stdout(&o)).expect("simulate --json prints JSON")
}

fn result<'a>(v: &'a Value, name: &str) -> &'a Value {
    v["results"].as_array().unwrap().iter().find(|r| r["name"] == name).unwrap_or_else(|| panic!("no result {name}"))
}

fn num(v: &Value, key: &str) -> f64 {
    v[key].as_f64().unwrap_or_else(|| panic!("{key} is not a number in {v}"))
}

// ---------------------------------------------------------------- golden outputs

#[test]
fn simulate_table_is_golden() {
    let o = run(&["simulate", "--scenario", &data("small.json")]);
    assert!(o.status.success(), "{}", stderr(&o));
    golden("simulate-small.txt", &stdout(&o));
    // The same seed gives the same table; the --seed flag overrides the scenario's.
    let again = run(&["simulate", "--scenario", &data("small.json"), "--seed", "7"]);
    assert_eq!(stdout(&o), stdout(&again));
    let other = run(&["simulate", "--scenario", &data("small.json"), "--seed", "8"]);
    assert_ne!(stdout(&o), stdout(&other));
}

#[test]
fn explain_outputs_are_golden() {
    for p in ["five-attempts-1s-x2", "good", "bad"] {
        let o = run(&["explain", &example(&format!("policies/{p}.json"))]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        golden(&format!("explain-{p}.txt"), &stdout(&o));
    }
    let o = run(&["explain", "--json", &example("policies/five-attempts-1s-x2.json")]);
    assert_eq!(o.status.code(), Some(0));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    golden("explain-five-attempts-1s-x2.json", &stdout(&o));
    // 1 s ×2 with proportional(0.5): five attempts have four waits (docs/policy.md).
    let rows = v["schedule"].as_array().unwrap();
    assert_eq!(rows.len(), 4);
    let highs: Vec<&str> = rows.iter().map(|r| r["high"].as_str().unwrap()).collect();
    assert_eq!(highs, ["1s", "2s", "4s", "8s"]);
    assert_eq!(rows[0]["low"], "500ms");
    assert_eq!(v["worst_case"], "15s");
    let cats = v["categories"].as_array().unwrap();
    assert_eq!(cats.len(), 16);
    let timeout = cats.iter().find(|c| c["category"] == "timeout").unwrap();
    assert_eq!(timeout["retry"], "if_idempotent");
    let exhausted = cats.iter().find(|c| c["category"] == "retry_exhausted").unwrap();
    assert_eq!((exhausted["retry"].as_str(), exhausted["decided_by"].as_str()), (Some("never"), Some("marker")));
}

#[test]
fn explain_honours_category_rules() {
    let o = run(&["explain", "--json", &example("policies/bad.json")]);
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let timeout = v["categories"].as_array().unwrap().iter().find(|c| c["category"] == "timeout").unwrap().clone();
    assert_eq!(timeout["retry"], "always");
    assert_eq!(timeout["decided_by"], "rules[1]");
}

#[test]
fn lint_outputs_are_golden() {
    for (p, code) in [("five-attempts-1s-x2", 0), ("good", 0), ("bad", 1)] {
        let o = run(&["lint", &example(&format!("policies/{p}.json"))]);
        assert_eq!(o.status.code(), Some(code), "{p}: {}", stderr(&o));
        golden(&format!("lint-{p}.txt"), &stdout(&o));
    }
    let o = run(&["lint", &example("policies/good.json"), "--service", &example("services/three-layers.json")]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).contains("4 × 4 × 4 = 64"), "{}", stdout(&o));
    golden("lint-good-three-layers.txt", &stdout(&o));
}

#[test]
fn lint_json_and_exit_codes() {
    let o = run(&["lint", "--json", &example("policies/bad.json")]);
    assert_eq!(o.status.code(), Some(1));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["ok"], false);
    let codes: Vec<&str> = v["findings"].as_array().unwrap().iter().map(|f| f["code"].as_str().unwrap()).collect();
    assert!(codes.contains(&"seed_in_policy") && codes.contains(&"retries_client_error"), "{codes:?}");
    assert_eq!(v["findings"][0]["severity"], "error");
    let o = run(&["lint", "--json", &example("policies/good.json")]);
    assert_eq!(o.status.code(), Some(0));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!((v["ok"].as_bool(), v["findings"].as_array().map(Vec::len)), (Some(true), Some(0)));
}

// ---------------------------------------------------------------- the retry arithmetic

#[test]
fn three_layers_of_four_attempts_make_64_calls() {
    let v = simulate_json(&["--scenario", &data("dead-server.json")]);
    let naive = result(&v, "3 layers x 4, no marker");
    assert_eq!(naive["user_requests"], 100);
    assert_eq!(naive["unanswered"], 0);
    assert_eq!(naive["server_calls"], 6400, "4 × 4 × 4 = 64 calls per request");
    assert_eq!(num(naive, "amplification"), 64.0);
    // retrycore's marker: the inner layer's give-up is not retried again outside.
    let marker = result(&v, "3 layers x 4, marker");
    assert_eq!(marker["server_calls"], 400);
    assert_eq!(marker["give_ups"]["not_retryable"], 200, "two outer layers see retry_exhausted");
    // The same as retrying at one layer only.
    let one = result(&v, "retry at one layer");
    assert_eq!(one["server_calls"], 400);
}

/// The 10 ms buckets that hold the instants `t`.
fn buckets_at(load: &[f64], step_s: f64, instants: &[f64]) -> f64 {
    instants.iter().map(|t| load[(t / step_s).floor() as usize] * step_s).sum()
}

#[test]
fn without_jitter_retries_cluster_at_the_backoff_instants() {
    let v = simulate_json(&["--scenario", &data("burst.json")]);
    let step = 0.01;
    // Every client calls at 0; each call fails 5 ms later; backoff 1 s, 2 s, 4 s.
    let instants = [1.005, 3.010, 7.015];
    let none = result(&v, "no jitter");
    let load: Vec<f64> = none["load_per_s"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect();
    let total: f64 = load.iter().sum::<f64>() * step;
    assert_eq!(total.round(), 4000.0);
    let retries = total - load[0] * step;
    let at_instants = buckets_at(&load, step, &instants);
    assert!(at_instants >= 0.99 * retries, "{at_instants} of {retries} retries at the backoff instants");
    // Full jitter spreads the same retries over the whole backoff window.
    let full = result(&v, "full jitter");
    let load: Vec<f64> = full["load_per_s"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect();
    let at_instants = buckets_at(&load, step, &instants);
    assert!(at_instants < 0.05 * retries, "{at_instants} of {retries} retries at the instants with full jitter");
    let peak_retry = |l: &[f64]| l[1..].iter().copied().fold(0.0, f64::max);
    let none_load: Vec<f64> = none["load_per_s"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect();
    assert!(peak_retry(&load) * 10.0 < peak_retry(&none_load));
}

#[test]
fn full_jitter_lowers_the_peak_and_budgets_and_breakers_lower_the_load() {
    let v = simulate_json(&["--scenario", &data("small.json")]);
    let none = result(&v, "exponential");
    let full = result(&v, "full jitter");
    assert!(num(full, "peak_per_s") < num(none, "peak_per_s"), "peak(full jitter) < peak(no jitter)");
    for name in ["+ budget", "+ breaker"] {
        let r = result(&v, name);
        assert!(num(r, "server_calls") < num(full, "server_calls"), "{name} lowers the total load");
        assert!(num(r, "peak_per_s") < num(full, "peak_per_s"), "{name} lowers the peak");
    }
    assert!(num(result(&v, "+ budget"), "budget_refusals") > 0.0);
    assert!(num(result(&v, "+ breaker"), "breaker_rejections") > 0.0);
    // Every request gets an answer in the drain, and healthy requests take ~latency.
    for r in v["results"].as_array().unwrap() {
        assert_eq!(r["unanswered"], 0, "{}", r["name"]);
        assert!(num(&r["latency_ms"], "p50") < 100.0);
    }
}

#[test]
fn the_default_scenario_is_complete() {
    let o = run(&["simulate", "--print-scenario"]);
    assert!(o.status.success());
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["clients"], 10000);
    assert_eq!(v["outage"]["start"], "10s");
    assert_eq!(v["outage"]["end"], "20s");
    let names: Vec<&str> = v["policies"].as_array().unwrap().iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert_eq!(names.len(), 8, "{names:?}");
    // The limiter row (docs/limiters.md) carries its limiter object.
    let limited = v["policies"].as_array().unwrap().iter().find(|p| p["name"] == "+ rate limiter").unwrap();
    assert_eq!(limited["limiter"]["kind"], "token_bucket");
    // Scaled down 100×, the default still runs (fast, in debug) and draws its chart.
    let dir = std::env::temp_dir().join(format!("retrycore-cli-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let svg = dir.join("storm.svg");
    let o = run(&[
        "simulate",
        "--scale",
        "0.01",
        "--only",
        "exponential",
        "--only",
        "+ retry budget",
        "--out",
        svg.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.starts_with("<svg") && text.contains("server down") && text.contains("+ retry budget"));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_policy_file_joins_the_comparison() {
    let v = simulate_json(&[
        "--scenario",
        &data("small.json"),
        "--only",
        "exponential",
        "--policy",
        &example("policies/good.json"),
    ]);
    let names: Vec<&str> = v["results"].as_array().unwrap().iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["exponential", "good"]);
}

// ---------------------------------------------------------------- errors: one line, exit 2

fn assert_usage_error(o: &Output, needle: &str) {
    assert_eq!(o.status.code(), Some(2), "stderr: {}", stderr(o));
    let err = stderr(o);
    assert_eq!(err.matches('\n').count(), 1, "one line on stderr, got {err:?}");
    assert!(err.starts_with("retrycore: "), "{err:?}");
    assert!(err.contains(needle), "{err:?} should mention {needle:?}");
    assert!(o.stdout.is_empty(), "nothing on stdout");
}

#[test]
fn errors_are_one_line_with_exit_code_2() {
    assert_usage_error(&run(&["explain", "no/such/policy.json"]), "no such file");
    assert_usage_error(&run(&["lint", "no/such/policy.json"]), "no such file");
    assert_usage_error(&run(&["lint", &example("policies/good.json"), "--service", "nope.json"]), "nope.json");
    assert_usage_error(&run(&["explain", &data("broken.json")]), "not valid JSON");
    assert_usage_error(&run(&["lint", &data("invalid-policy.json")]), "deadline");
    assert_usage_error(&run(&["simulate", "--scenario", &data("broken.json")]), "broken.json");
    assert_usage_error(&run(&["simulate", "--scenario", &data("unknown-key-scenario.json")]), "servers");
    assert_usage_error(&run(&["simulate", "--scenario", "missing.json"]), "no such file");
    assert_usage_error(&run(&["simulate", "--policy", &data("invalid-policy.json")]), "deadline");
    assert_usage_error(&run(&["simulate", "--only", "nonesuch"]), "nonesuch");
    assert_usage_error(&run(&["simulate", "--bogus"]), "--bogus");
    assert_usage_error(&run(&["simulate", "--seed", "minus-one"]), "minus-one");
    assert_usage_error(&run(&["explain"]), "POLICY");
    assert_usage_error(&run(&["frobnicate"]), "frobnicate");
    assert_usage_error(&run(&[]), "simulate, explain, lint or alerts");
}

#[test]
fn help_and_version_exit_0() {
    let o = run(&["--help"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).contains("simulate") && stdout(&o).contains("explain") && stdout(&o).contains("lint"));
    let o = run(&["simulate", "--help"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).contains("--scenario"));
    let o = run(&["--version"]);
    assert_eq!(o.status.code(), Some(0));
}

#[test]
fn the_limiter_row_caps_the_retry_storm() {
    let o = run(&["simulate", "--scale", "0.1", "--json", "--only", "exp + full jitter", "--only", "+ rate limiter"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let (free, limited) = (result(&v, "exp + full jitter"), result(&v, "+ rate limiter"));
    // The limiter refuses calls locally instead of sending them into the outage.
    assert!(num(limited, "rejected") > 0.0);
    assert!(num(limited, "server_calls") < num(free, "server_calls"));
    assert!(num(limited, "peak_per_s") < num(free, "peak_per_s"));
    assert!(num(limited, "success_rate") > num(free, "success_rate"));
}

#[test]
fn a_bad_limiter_in_a_scenario_names_its_field() {
    let dir = std::env::temp_dir().join(format!("retrycore-cli-limiter-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("bad-limiter.json");
    let scenario = r#"{"policies": [{"name": "l", "policy": {"version": 1}, "limiter": {"kind": "bulkhead", "max_concurrent": 0}}]}"#;
    std::fs::write(&path, scenario).unwrap();
    let o = run(&["simulate", "--scenario", path.to_str().unwrap(), "--no-progress"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("policies[0].limiter.max_concurrent"), "{}", stderr(&o));
}

//! `retrycore alerts`: the core's rules over a counters document, and the
//! same rules written for Prometheus, checked by the real `promtool`
//! (Debian's `prometheus` package; `make test-cli` installs it).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_retrycore"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(args)
        .output()
        .expect("the binary runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8(b.to_vec()).expect("utf-8")
}

/// docs/observability.md's example: its counters document (written to a
/// temporary file) and the output it shows for `retrycore alerts`.
fn doc_example() -> (PathBuf, String) {
    let doc = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/observability.md")).unwrap();
    let json = doc.split("```json\n").nth(1).and_then(|b| b.split("```").next()).expect("a json block");
    let shown = doc.split("$ retrycore alerts counters.json\n").nth(1).and_then(|b| b.split("```").next());
    let dir = std::env::temp_dir().join(format!("retrycore-alerts-doc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("counters.json");
    std::fs::write(&path, json).unwrap();
    (path, shown.expect("the output block").to_owned())
}

/// A fresh directory holding promtool's unit tests and the rules under test.
fn rules_dir(tag: &str, thresholds: Option<&str>) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("retrycore-alerts-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/alerts");
    std::fs::copy(data.join("promtool-test.yml"), dir.join("promtool-test.yml")).unwrap();
    let mut args = vec!["alerts", "--prometheus"];
    let t = dir.join("thresholds.json");
    if let Some(json) = thresholds {
        std::fs::write(&t, json).unwrap();
        args.extend(["--thresholds", t.to_str().unwrap()]);
    }
    let o = run(&args);
    assert!(o.status.success(), "{}", text(&o.stderr));
    std::fs::write(dir.join("rules.yml"), &o.stdout).unwrap();
    dir
}

fn promtool(dir: &Path, args: &[&str]) -> Output {
    Command::new("promtool")
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("promtool is required ({e}); `scripts/ensure-debian.sh prometheus` installs it"))
}

#[test]
fn the_documented_example_prints_what_the_docs_show_and_exits_1() {
    let (counters, shown) = doc_example();
    let o = run(&["alerts", counters.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout), shown);
    let o = run(&["alerts", "--json", counters.to_str().unwrap()]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!((v["interval"].as_str(), v["alerts"].as_u64()), (Some("5m"), Some(3)));
    assert_eq!(v["checks"][0]["level"], "critical");
}

#[test]
fn raised_thresholds_silence_the_rules_they_raise() {
    let dir = rules_dir("eval", Some(r#"{"retry_rate": {"above": 0.5}, "exhausted_rate": {"min_volume": 5000}}"#));
    let (counters, _) = doc_example();
    let t = dir.join("thresholds.json");
    let o = run(&["alerts", counters.to_str().unwrap(), "--thresholds", t.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let out = text(&o.stdout);
    assert!(out.starts_with("critical   breaker_open"), "{out}");
    assert!(out.contains("ok         retry_rate") && out.contains("low_volume exhausted_rate"), "{out}");
}

#[test]
fn promtool_accepts_the_rules_and_they_fire_as_the_core_says() {
    let dir = rules_dir("ok", None);
    let o = promtool(&dir, &["check", "rules", "rules.yml"]);
    assert!(o.status.success(), "{}{}", text(&o.stdout), text(&o.stderr));
    assert!(text(&o.stdout).contains("SUCCESS: 4 rules found"));
    let o = promtool(&dir, &["test", "rules", "promtool-test.yml"]);
    assert!(o.status.success(), "{}{}", text(&o.stdout), text(&o.stderr));
}

#[test]
fn promtool_tests_fail_when_a_threshold_moves() {
    // The same unit tests against rules whose retry rate needs 50 %: the
    // expected RetryRateHigh alert no longer fires, so the tests can fail.
    let dir = rules_dir("raised", Some(r#"{"retry_rate": {"above": 0.5}}"#));
    let o = promtool(&dir, &["test", "rules", "promtool-test.yml"]);
    assert!(!o.status.success());
    let out = text(&o.stdout) + &text(&o.stderr);
    assert!(out.contains("RetryRateHigh"), "{out}");
}

#[test]
fn the_grafana_dashboard_is_json_with_a_panel_per_rule() {
    let o = run(&["alerts", "--grafana", "--interval", "2m"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let panels = v["panels"].as_array().unwrap();
    assert!(panels.len() >= 4);
    // Every panel but the breaker's state (a gauge, read as is) is over the interval.
    let ranged = panels.iter().filter(|p| p["targets"][0]["expr"].as_str().is_some_and(|e| e.contains("[2m]")));
    assert_eq!(ranged.count(), panels.len() - 1);
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let dir = rules_dir("bad", Some(r#"{"retry_rate": {"above": 0.5}}"#));
    let t = dir.join("thresholds.json");
    let both = dir.join("both.json");
    std::fs::write(&both, r#"{"interval": "1m", "before": {}, "after": {}, "thresholds": {}}"#).unwrap();
    let cases: [(Vec<&str>, &str); 5] = [
        (vec!["alerts"], "a counters document is required"),
        (
            vec!["alerts", "--prometheus", "--interval", "1.5us"],
            "invalid --interval: a Prometheus range is whole milliseconds",
        ),
        (vec!["alerts", "tests/data/alerts/nope.json"], "cannot read counters"),
        (
            vec!["alerts", both.to_str().unwrap(), "--thresholds", t.to_str().unwrap()],
            "thresholds: thresholds are given apart as well",
        ),
        (vec!["alerts", "--prometheus", "tests/data/alerts/promtool-test.yml"], "cannot be used with"),
    ];
    for (args, want) in cases {
        let o = run(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = text(&o.stderr);
        assert!(err.contains(want) && err.lines().count() == 1, "{args:?}: {err}");
    }
}

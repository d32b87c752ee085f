//! docs/observability.md states the metric model and the alert rules the
//! core has: every metric with its kind, labels and help, and every rule
//! with its level, threshold and minimum volume; its counters example is
//! an alerts document the core reads; every name map of the exporters is
//! listed with its instruments, and the events example makes the samples shown.

use retrycore::alerts::{evaluate_document, AlertConfig, Rule};
use retrycore::metrics;
use std::path::Path;

fn page() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/observability.md")).unwrap()
}

#[test]
fn the_metrics_table_is_the_model() {
    let page = page();
    let mut rows = String::new();
    for m in metrics::ALL {
        let labels: Vec<String> = m.labels.iter().map(|l| format!("`{l}`")).collect();
        rows.push_str(&format!("| `{}` | {} | {} | {} |\n", m.name, m.kind.code(), labels.join(", "), m.help));
    }
    assert!(page.contains(&rows), "docs/observability.md's metrics table should read:\n{rows}");
}

#[test]
fn the_alerts_table_is_the_rules() {
    let page = page();
    let cfg = AlertConfig::default();
    let rows: Vec<&str> = page.lines().filter(|l| l.starts_with("| `")).collect();
    for rule in Rule::ALL {
        let head = format!("| `{}` | {} | ", rule.code(), rule.level().code());
        let row = rows.iter().find(|r| r.starts_with(&head)).unwrap_or_else(|| panic!("no row starts {head}"));
        match cfg.threshold(rule) {
            Some(t) => {
                let above = format!(" | {}% | {} ", t.above * 100.0, t.min_volume);
                assert!(row.contains(&above), "{row} should hold{above}");
            }
            None => assert!(row.ends_with("| — | — |"), "{row}"),
        }
    }
}

#[test]
fn the_example_is_an_alerts_document() {
    let page = page();
    let json = page.split("```json\n").nth(1).and_then(|b| b.split("```").next()).unwrap();
    let e = evaluate_document(json, None).unwrap();
    assert_eq!(e.alerts().count(), 3);
}

#[test]
fn every_name_map_is_listed() {
    let page = page();
    for map in metrics::NameMap::ALL {
        let mut rows = String::new();
        for i in map.instruments() {
            let labels: Vec<String> = i.labels.iter().map(|l| format!("`{l}`")).collect();
            let unit = if i.unit.is_empty() { "—".to_owned() } else { format!("`{}`", i.unit) };
            rows.push_str(&format!(
                "| `{}` | `{}` | {} | {} | {} |\n",
                i.name,
                i.prometheus,
                i.kind.code(),
                labels.join(", "),
                unit
            ));
        }
        assert!(page.contains(&rows), "docs/observability.md's {} table should read:\n{rows}", map.code());
    }
}

#[test]
fn the_events_example_makes_the_samples_shown() {
    let page = page();
    let section = page.split("### Events").nth(1).unwrap();
    let events = section.split("```json\n").nth(1).and_then(|b| b.split("```").next()).unwrap();
    let shown = section.split("```json\n").nth(2).and_then(|b| b.split("```").next()).unwrap();
    let shown: retrycore::json::Value = serde_json::from_str::<serde_json::Value>(shown).unwrap().into();
    assert_eq!(metrics::samples_document(events).unwrap(), shown);
}

//! The dead-letter replay planner: refusals with their reasons, batches
//! that grow while they succeed and stop when they fail, letters marked
//! replayed, and an audit record that its schema accepts.

use proptest::prelude::*;
use retrycore::dead_letter_replay::{reason_kind, Replay, ReplayOptions};
use retrycore::idempotency::{DeadLetter, DeadLetterStatus};
use retrycore::{json, json::Value};

fn letter(id: &str, class: &str, idempotent: bool) -> DeadLetter {
    DeadLetter::builder(id, json!({"id": id}))
        .reason("exhausted")
        .error(class, "boom")
        .attempts(3)
        .first_failure_ms(1_000)
        .last_failure_ms(2_000)
        .target_idempotent(idempotent)
        .build()
        .unwrap()
}

fn options(v: Value) -> ReplayOptions {
    ReplayOptions::from_json_value(&v).unwrap()
}

/// Whether `v` fits the audit record's schema.
struct Schema(jsonschema::Validator);

impl Schema {
    fn is_valid(&self, v: &Value) -> bool {
        self.0.is_valid(&serde_json::Value::from(v.clone()))
    }
}

fn schema() -> Schema {
    let text =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../schema/dead-letter-replay.schema.json"))
            .unwrap();
    Schema(jsonschema::validator_for(&serde_json::from_str(&text).unwrap()).unwrap())
}

#[test]
fn reason_kinds_come_from_the_classification_tables() {
    assert_eq!(reason_kind("503"), "system");
    assert_eq!(reason_kind("HTTP 503"), "system");
    assert_eq!(reason_kind("ConnectionResetError"), "system");
    assert_eq!(reason_kind("400"), "data");
    assert_eq!(reason_kind("HTTP 422"), "data");
    assert_eq!(reason_kind("NoSuchThing"), "unknown");
}

#[test]
fn refuses_with_reasons_groups_and_grows_batches() {
    let mut letters: Vec<DeadLetter> = (0..10).map(|i| letter(&format!("m{i}"), "503", true)).collect();
    letters.push(letter("post", "503", false));
    letters.push(letter("bad", "400", true));
    let mut done = letter("old", "503", true);
    done.mark_replayable().unwrap();
    done.mark_replayed().unwrap();
    letters.push(done);
    let mut r = Replay::new(letters, options(json!({"operator": "ops@example.com"})), 1_700_000_000_000).unwrap();
    let groups = r.groups();
    assert_eq!(groups[0]["kind"], "data");
    assert_eq!(groups[1]["msg_ids"].as_array().unwrap().len(), 12);
    let mut sizes = Vec::new();
    loop {
        let batch = r.next_batch().unwrap();
        if batch.is_empty() {
            break;
        }
        sizes.push(batch.len());
        for id in &batch {
            r.record(id, true, 1_700_000_060_000).unwrap();
        }
    }
    assert_eq!(sizes, [1, 2, 4, 3]);
    let audit = r.audit();
    assert!(schema().is_valid(&audit), "{audit}");
    assert_eq!(audit["replayed"].as_array().unwrap().len(), 10);
    let skipped: Vec<(&str, &str)> = audit["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["msg_id"].as_str().unwrap(), s["reason"].as_str().unwrap()))
        .collect();
    assert_eq!(skipped, [("post", "target_not_idempotent"), ("bad", "data_error"), ("old", "already_replayed")]);
    assert_eq!(audit["finished_at"], "2023-11-14T22:14:20.000Z");
    assert!(r.letters()[..10].iter().all(|l| l.status == DeadLetterStatus::Replayed));
    assert_eq!(r.letters()[10].status, DeadLetterStatus::Pending);
}

#[test]
fn a_batch_over_the_threshold_stops_the_replay() {
    let letters: Vec<DeadLetter> = (0..20).map(|i| letter(&format!("m{i}"), "ConnectionResetError", true)).collect();
    let mut r =
        Replay::new(letters, options(json!({"operator": "a", "initial_batch": 2, "max_failure_rate": 0.25})), 0)
            .unwrap();
    let b = r.next_batch().unwrap();
    // The batch is not over: no next one yet, and a stranger is refused.
    assert_eq!(r.next_batch().unwrap_err().code(), "invalid_state");
    assert_eq!(r.record("m9", true, 1).unwrap_err().code(), "invalid_value");
    r.record(&b[0], true, 1).unwrap();
    r.record(&b[1], false, 1).unwrap();
    assert_eq!(r.record(&b[1], true, 1).unwrap_err().code(), "invalid_value");
    assert!(r.next_batch().unwrap().is_empty());
    let audit = r.audit();
    assert!(schema().is_valid(&audit), "{audit}");
    assert_eq!(audit["failed"], json!(["m1"]));
    assert_eq!(audit["not_attempted"].as_array().unwrap().len(), 18);
    assert!(audit["stopped"].as_str().unwrap().contains("0.5"));
    assert_eq!(r.letters()[1].status, DeadLetterStatus::Pending);
}

#[test]
fn options_are_checked_with_code_and_field() {
    let err = |v: Value| {
        let e = ReplayOptions::from_json_value(&v).unwrap_err();
        (e.code(), e.field().to_owned())
    };
    assert_eq!(err(json!({})), ("missing_field", "operator".into()));
    assert_eq!(err(json!({"operator": "a", "initial_batch": 0})), ("out_of_range", "initial_batch".into()));
    assert_eq!(err(json!({"operator": "a", "growth": 0.5})), ("out_of_range", "growth".into()));
    assert_eq!(err(json!({"operator": "a", "max_failure_rate": 2})), ("out_of_range", "max_failure_rate".into()));
    assert_eq!(
        err(json!({"operator": "a", "initial_batch": 5, "max_batch": 2})),
        ("invalid_combination", "initial_batch".into())
    );
    assert_eq!(err(json!({"operator": "a", "batch": 2})), ("unknown_key", "batch".into()));
}

proptest! {
    /// Whatever the outcomes: every letter ends in exactly one list of the
    /// audit, batches never exceed max_batch, a batch over the threshold is
    /// the last, and the audit always fits its schema.
    #[test]
    fn every_letter_is_accounted_for(n in 0usize..60, outcomes in prop::collection::vec(any::<bool>(), 60),
                                     initial in 1usize..4, max in 4usize..10, rate in 0.0f64..=1.0, idem in prop::collection::vec(any::<bool>(), 60)) {
        let letters: Vec<DeadLetter> = (0..n).map(|i| letter(&format!("m{i}"), "503", idem[i] || i % 3 != 0)).collect();
        let opts = options(json!({"operator": "p", "initial_batch": initial, "max_batch": max, "max_failure_rate": rate}));
        let mut r = Replay::new(letters, opts, 0).unwrap();
        let mut k = 0;
        loop {
            let batch = r.next_batch().unwrap();
            if batch.is_empty() { break; }
            prop_assert!(batch.len() <= max);
            for id in &batch { r.record(id, outcomes[k % 60], 5).unwrap(); k += 1; }
        }
        let a = r.audit();
        prop_assert!(schema().is_valid(&a));
        let count = |key: &str| a[key].as_array().unwrap().len();
        prop_assert_eq!(count("replayed") + count("failed") + count("skipped") + count("not_attempted"), n);
        let batches = a["batches"].as_array().unwrap();
        for (i, b) in batches.iter().enumerate() {
            let over = b["failed"].as_f64().unwrap() / b["size"].as_f64().unwrap() > rate;
            prop_assert!(!over || i + 1 == batches.len(), "a batch over the threshold is the last");
        }
        prop_assert!(a["finished_at"].is_string());
    }
}

/// The JSON blocks of a docs page.
fn doc_blocks(page: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(format!("{}/../docs/{page}", env!("CARGO_MANIFEST_DIR"))).unwrap();
    text.split("```json\n")
        .skip(1)
        .map(|b| serde_json::from_str::<serde_json::Value>(b.split("```").next().unwrap()).unwrap().into())
        .collect()
}

#[test]
fn the_docs_examples_hold() {
    let audit = &doc_blocks("dead-letters.md")[0];
    assert!(schema().is_valid(audit), "docs/dead-letters.md's audit record fits its schema");
    let saga = &doc_blocks("compensation.md")[0];
    let plan = retrycore::compensation::CompensationPlan::from_json_value(saga).unwrap();
    let order: Vec<&str> = plan.planned.iter().map(|p| p.compensate.as_str()).collect();
    assert_eq!(order, ["refund", "release"]);
}

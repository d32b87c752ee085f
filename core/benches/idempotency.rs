//! Benchmarks of the idempotency module: key validation, fingerprints, record decisions.
//!
//! Targets (issue 4): key validation ≤ 50 ns, fingerprint of a 1 KB JSON
//! object ≤ 5 µs, a record decision ≤ 50 ns. Run with
//! `cargo bench -p retrycore --bench idempotency`.
use criterion::{black_box, criterion_group, criterion_main, Criterion};
use retrycore::idempotency::{
    decide, fingerprint_http, parse_json, validate_key, IdempotencyRecord, JsonValue, RecordConfig, RecordState,
    StoredResponse,
};
use std::time::Duration;

/// A JSON object of about 1 KB: a payment with a customer, line items and metadata.
fn one_kb_json() -> String {
    let mut items = Vec::new();
    for i in 0..6 {
        items.push(format!(
            r#"{{"sku":"SKU-{i:04}","name":"Item number {i}","quantity":{q},"unit_price":{p},"tax_rate":0.{t}5,"tags":["a","b"]}}"#,
            q = i + 1,
            p = 1999 + i * 100,
            t = i
        ));
    }
    let text = format!(
        r#"{{"amount":12990,"currency":"usd","customer":{{"id":"cus_8e03978e40d5","email":"jane.doe@example.com","name":"Jane Doe","address":{{"line1":"1 Main Street","city":"Springfield","postal_code":"12345","country":"US"}}}},"items":[{}],"metadata":{{"order_id":"order-1001","channel":"web","campaign":"spring-sale","note":"leave at the door \u00e9"}},"capture":true,"statement_descriptor":"RETRYCORE*SHOP"}}"#,
        items.join(",")
    );
    assert!((900..1300).contains(&text.len()), "{} bytes", text.len());
    text
}

fn keys(c: &mut Criterion) {
    c.bench_function("validate_key/derived 20 chars", |b| {
        b.iter(|| validate_key(black_box("order-1001:charge:v1"), 255))
    });
    c.bench_function("validate_key/uuid 36 chars", |b| {
        b.iter(|| validate_key(black_box("8e03978e-40d5-43e8-bc93-6894a57f9324"), 255))
    });
    let long = "k".repeat(255);
    c.bench_function("validate_key/255 chars", |b| b.iter(|| validate_key(black_box(&long), 255)));
}

fn fingerprints(c: &mut Criterion) {
    let text = one_kb_json();
    let host = parse_json(&text).unwrap();
    let doc = retrycore::parse_stored(&text).unwrap();
    c.bench_function("fingerprint_http/1 KB JsonValue (parse excluded)", |b| {
        b.iter(|| fingerprint_http(black_box("POST"), "/v1/charges", black_box(&host), None).unwrap())
    });
    c.bench_function("fingerprint_http/1 KB json::Value (parse excluded)", |b| {
        b.iter(|| fingerprint_http(black_box("POST"), "/v1/charges", black_box(&doc), None).unwrap())
    });
    c.bench_function("fingerprint_http/1 KB text (parse_json included)", |b| {
        b.iter(|| {
            let body: JsonValue = parse_json(black_box(&text)).unwrap();
            fingerprint_http("POST", "/v1/charges", &body, None).unwrap()
        })
    });
    let selected = ["/amount", "/currency", "/customer/id"];
    c.bench_function("fingerprint_http/1 KB JsonValue, 3 selected pointers", |b| {
        b.iter(|| fingerprint_http(black_box("POST"), "/v1/charges", black_box(&host), Some(&selected)).unwrap())
    });
}

fn decisions(c: &mut Criterion) {
    let cfg = RecordConfig::new(Duration::from_secs(30), Duration::from_secs(86_400)).unwrap();
    let fp = "9f2c4e1b7a3d5c6e8f0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60";
    let key = "order-1001:charge:v1";
    let t = 1_700_000_000_000u64;
    let succeeded = IdempotencyRecord {
        key: key.into(),
        fingerprint: fp.into(),
        state: RecordState::Succeeded,
        fence: 3,
        created_ms: t - 10_000,
        lease_until_ms: t - 5_000,
        completed_ms: Some(t - 5_000),
        expires_at_ms: t + 86_400_000,
        response: Some(StoredResponse { status: Some(201), headers: Vec::new(), body: None }),
        failure_category: None,
    };
    let processing = IdempotencyRecord {
        state: RecordState::Processing,
        lease_until_ms: t + 1_500,
        completed_ms: None,
        response: None,
        ..succeeded.clone()
    };
    let failed = IdempotencyRecord {
        state: RecordState::Failed,
        failure_category: Some("resource_exhausted".into()),
        ..succeeded.clone()
    };
    c.bench_function("decide/replay (succeeded)", |b| {
        b.iter(|| decide(black_box(Some(&succeeded)), key, black_box(fp), black_box(t), &cfg).unwrap())
    });
    c.bench_function("decide/in_progress", |b| {
        b.iter(|| decide(black_box(Some(&processing)), key, black_box(fp), black_box(t), &cfg).unwrap())
    });
    c.bench_function("decide/execute (no record)", |b| {
        b.iter(|| decide(black_box(None), key, black_box(fp), black_box(t), &cfg).unwrap())
    });
    c.bench_function("decide/execute (failure released by category)", |b| {
        b.iter(|| decide(black_box(Some(&failed)), key, black_box(fp), black_box(t), &cfg).unwrap())
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(2));
    targets = keys, fingerprints, decisions
}
criterion_main!(benches);

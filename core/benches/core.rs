//! Criterion benchmarks of the core's hot paths (`make bench`).
//!
//! Figures and the machine they were taken on are in BENCHMARKS.md.

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use retrycore::backoff::Backoff;
use retrycore::breaker::{Acquire, BreakerConfig, BreakerKind, CircuitBreaker, Counted};
use retrycore::budget::{Budget, BudgetConfig};
use retrycore::classify::{classify, Category, Failure};
use retrycore::policy::{PolicyConfig, RetryPolicy};
use retrycore::session::{Decision, SessionOptions};

fn backoff(c: &mut Criterion) {
    let b = Backoff::default();
    c.bench_function("delay (exponential, full jitter, explicit r)", |x| {
        let mut n = 0u32;
        x.iter(|| {
            n = n % 10 + 1;
            black_box(b.delay_ns(black_box(n), black_box(0.37), None).unwrap())
        })
    });
    let mut rng = retrycore::rng::Xoshiro256pp::seed_from_u64(1);
    c.bench_function("delay (exponential, full jitter, seeded draw)", |x| {
        x.iter(|| black_box(b.sample(black_box(3), &mut rng, None).unwrap()))
    });
}

fn classification(c: &mut Criterion) {
    let f = Failure { status: Some(503), method: Some("GET"), ..Default::default() };
    c.bench_function("classify by status", |x| x.iter(|| black_box(classify(black_box(&f)))));
    let names = ["requests.exceptions.ConnectionError", "urllib3.exceptions.MaxRetryError", "ECONNREFUSED"];
    let f = Failure { error_names: &names, method: Some("POST"), ..Default::default() };
    c.bench_function("classify 3 exception names", |x| x.iter(|| black_box(classify(black_box(&f)))));
    let h = [("Retry-After", "3"), ("Content-Type", "application/json")];
    let f = Failure { status: Some(503), headers: &h, method: Some("GET"), ..Default::default() };
    c.bench_function("classify status + Retry-After", |x| x.iter(|| black_box(classify(black_box(&f)))));
}

fn session(c: &mut Criterion) {
    let p = RetryPolicy::new(PolicyConfig::from_json(r#"{"max_attempts": 1000000}"#).unwrap(), Some(1)).unwrap();
    let mut s = p.session(SessionOptions { key: Some("bench".into()), ..Default::default() }).unwrap();
    let f = Failure { status: Some(503), method: Some("GET"), ..Default::default() };
    let mut now = 0u64;
    c.bench_function("session step (before_attempt + on_failure → retry)", |x| {
        x.iter(|| {
            s.before_attempt_ns(now).unwrap();
            now += 1000;
            match s.on_failure_ns(now, black_box(&f)).unwrap() {
                Decision::Retry { .. } => {}
                Decision::GiveUp { .. } => {
                    s = p.session(SessionOptions { key: Some("bench".into()), ..Default::default() }).unwrap();
                }
            }
        })
    });
    c.bench_function("session: new + first-try success", |x| {
        x.iter(|| {
            let mut s = p.session(SessionOptions { key: Some("bench".into()), ..Default::default() }).unwrap();
            s.before_attempt_ns(now).unwrap();
            s.on_success_ns(now + 10, None).unwrap();
        })
    });
}

fn breakers(c: &mut Criterion) {
    for (name, kind, size) in [
        ("count window of 100", BreakerKind::CountBased, 100),
        ("time window of 60 s", BreakerKind::TimeBased, 60),
        ("time window of 100 s", BreakerKind::TimeBased, 100),
        ("time window of 100 000 s", BreakerKind::TimeBased, 100_000),
    ] {
        let cfg = BreakerConfig { kind, sliding_window_size: size, ..BreakerConfig::default() };
        let mut b = CircuitBreaker::new(cfg).unwrap();
        let mut now = 0u64;
        let mut i = 0u32;
        c.bench_function(&format!("breaker try_acquire + record ({name})"), |x| {
            x.iter(|| {
                now += 7_000_000;
                i = i.wrapping_add(1);
                if let (Acquire::Permitted(p), _) = b.try_acquire(now) {
                    let outcome = if i % 5 == 0 { Counted::Failure } else { Counted::Success };
                    black_box(b.on_result(p, now, outcome, 1000));
                }
            })
        });
    }
}

fn budgets(c: &mut Criterion) {
    let mut b = Budget::new(BudgetConfig::token_bucket()).unwrap();
    c.bench_function("token bucket check + withdraw + refund", |x| {
        x.iter(|| {
            if b.check(0, Category::ServerError, false, false).is_ok() {
                let (cost, _) = b.withdraw(0, Category::ServerError, false, false);
                b.on_success(0, cost);
            }
        })
    });
    let mut b = Budget::new(BudgetConfig::ratio()).unwrap();
    let mut now = 0u64;
    c.bench_function("ratio budget deposit + check + withdraw", |x| {
        x.iter(|| {
            now += 1_000_000;
            b.on_operation_start(now);
            if b.check(now, Category::ServerError, false, false).is_ok() {
                black_box(b.withdraw(now, Category::ServerError, false, false));
            }
        })
    });
}

criterion_group!(benches, backoff, classification, session, breakers, budgets);
criterion_main!(benches);

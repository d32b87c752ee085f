//! Property tests of the core's invariants.

use proptest::prelude::*;
use retrycore::backoff::{BackoffBuilder, BackoffKind, Jitter};
use retrycore::breaker::{Acquire, BreakerConfig, BreakerKind, CircuitBreaker, Counted, State};
use retrycore::budget::{Budget, BudgetConfig, FailureFacts};
use retrycore::classify::{Category, Failure};
use retrycore::policy::{PolicyConfig, RetryPolicy};
use retrycore::session::{Decision, Gate, SessionOptions};

fn kind() -> impl Strategy<Value = BackoffKind> {
    prop_oneof![
        Just(BackoffKind::Constant),
        Just(BackoffKind::Linear),
        Just(BackoffKind::Exponential),
        Just(BackoffKind::Decorrelated)
    ]
}

fn jitter(max: u64) -> impl Strategy<Value = Jitter> {
    prop_oneof![
        Just(Jitter::None),
        Just(Jitter::Full),
        Just(Jitter::Equal),
        (0.0..=1.0f64).prop_map(Jitter::Proportional),
        (0..=max).prop_map(Jitter::Additive),
        (0.0..=1.0f64).prop_map(Jitter::Symmetric),
    ]
}

prop_compose! {
    fn builder()(max in 0u64..=u64::MAX / 2, k in kind(), mult in 1.0f64..1e6, frac in 0.0f64..=1.0, inc in any::<u64>(), floor_frac in 0.0f64..=1.0)
        (j in jitter(max), max in Just(max), k in Just(k), mult in Just(mult), frac in Just(frac), inc in Just(inc), floor_frac in Just(floor_frac))
        -> BackoffBuilder {
        let initial = ((max as f64) * frac) as u64;
        let initial = if k == BackoffKind::Decorrelated { initial.max(1) } else { initial };
        let max = max.max(initial);
        BackoffBuilder {
            kind: Some(k),
            initial: Some(initial),
            max_delay: Some(max),
            multiplier: Some(mult),
            increment: Some(inc),
            jitter: Some(if k == BackoffKind::Decorrelated { Jitter::None } else { j }),
            min_delay: Some(((max as f64) * floor_frac * 0.5) as u64),
            immediate_first_retry: None,
            profile: None,
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn delay_stays_within_bounds(b in builder(), retry in 1u32..=u32::MAX, r in 0.0f64..=1.0, prev in any::<u64>()) {
        if let Ok(bo) = b.build() {
            let d = bo.delay_ns(retry, r, Some(prev)).unwrap();
            prop_assert!(d <= bo.max_delay_ns());
            prop_assert!(d >= bo.min_delay_ns());
        }
    }

    #[test]
    fn base_never_decreases_with_n(b in builder(), n in 1u32..u32::MAX) {
        if let Ok(bo) = b.build() {
            if bo.kind() != BackoffKind::Decorrelated {
                // With r = 1 (or 0 for proportional) the delay is monotone in the base.
                let a = bo.delay_ns(n, 1.0, None).unwrap();
                let c = bo.delay_ns(n + 1, 1.0, None).unwrap();
                prop_assert!(c >= a, "n={} {} < {}", n, c, a);
            }
        }
    }

    #[test]
    fn schedule_brackets_every_draw(b in builder(), attempts in 1u32..20, r in 0.0f64..=1.0) {
        if let Ok(bo) = b.build() {
            if bo.kind() != BackoffKind::Decorrelated {
                let s = bo.schedule(attempts);
                for row in &s.rows {
                    let d = bo.delay(row.retry, r, None).unwrap();
                    prop_assert!(row.low <= d && d <= row.high);
                }
            }
        }
    }

    #[test]
    fn session_respects_attempts_and_deadline(
        attempts in 1u32..8,
        deadline_ms in 1u64..5000,
        timeout_ms in proptest::option::of(1u64..2000),
        steps in proptest::collection::vec((0u64..400, 0u64..400), 1..20),
        seed in any::<u64>(),
    ) {
        let mut c = PolicyConfig::from_json(&format!(r#"{{"max_attempts": {attempts}, "deadline": "{deadline_ms}ms"}}"#)).unwrap();
        c.attempt_timeout = timeout_ms.map(|t| t * 1_000_000);
        let p = RetryPolicy::new(c, Some(seed)).unwrap();
        let mut s = p.session(SessionOptions { key: Some("k".into()), seed: Some(seed), ..Default::default() }).unwrap();
        let mut now = 0u64;
        let deadline = deadline_ms * 1_000_000;
        let mut made = 0;
        for (work, extra) in steps {
            match s.before_attempt_ns(now).unwrap() {
                Gate::Proceed { attempt, timeout, .. } => {
                    made += 1;
                    prop_assert_eq!(attempt, made);
                    prop_assert!(attempt <= attempts);
                    prop_assert!(retrycore::duration::from_std(timeout.unwrap()) <= deadline);
                    if attempt > 1 {
                        prop_assert!(now < deadline);
                    }
                }
                Gate::Reject { .. } => break,
            }
            now += work * 1_000_000;
            let f = Failure { status: Some(503), method: Some("GET"), ..Default::default() };
            match s.on_failure_ns(now, &f).unwrap() {
                Decision::Retry { delay, .. } => {
                    let at = now + retrycore::duration::from_std(delay);
                    match timeout_ms {
                        Some(t) => prop_assert!(at + t * 1_000_000 <= deadline),
                        None => prop_assert!(at < deadline),
                    }
                    now = at + extra * 1_000;
                }
                Decision::GiveUp { .. } => break,
            }
        }
        prop_assert!(made <= attempts);
    }
}

/// A naive breaker window: the list of all recorded calls, recounted.
#[derive(Default)]
struct Naive {
    calls: Vec<(u64, bool, bool)>,
}

impl Naive {
    fn totals(&self, kind: BreakerKind, size: u32, now: u64) -> (u32, u32, u32) {
        let live: Vec<_> = match kind {
            BreakerKind::CountBased => self.calls.iter().rev().take(size as usize).collect(),
            _ => {
                let sec = now / 1_000_000_000;
                self.calls.iter().filter(|(t, _, _)| t / 1_000_000_000 + u64::from(size) > sec).collect()
            }
        };
        let n = live.len() as u32;
        let f = live.iter().filter(|c| c.1).count() as u32;
        let s = live.iter().filter(|c| c.2).count() as u32;
        (n, f, s)
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 500, ..ProptestConfig::default() })]

    /// Window counts equal a naive recount of the same events (metrics_only, so it never opens).
    #[test]
    fn window_matches_naive_recount(
        time_based in any::<bool>(),
        size in 1u32..20,
        // Short steps fill buckets; long ones (up to 60 s) move a time window by more than its size.
        events in proptest::collection::vec((prop_oneof![4 => 0u64..3_000_000_000, 1 => 0u64..60_000_000_000], any::<bool>(), any::<bool>()), 1..200),
    ) {
        let kind = if time_based { BreakerKind::TimeBased } else { BreakerKind::CountBased };
        let cfg = BreakerConfig {
            kind,
            sliding_window_size: size,
            minimum_number_of_calls: 1,
            slow_call_duration_threshold: 1000,
            initial_state: State::MetricsOnly,
            ..BreakerConfig::default()
        };
        let mut b = CircuitBreaker::new(cfg).unwrap();
        let mut naive = Naive::default();
        let mut now = 0u64;
        for (dt, fail, slow) in events {
            now += dt;
            let p = match b.try_acquire(now).0 { Acquire::Permitted(p) => p, _ => unreachable!() };
            b.on_result(p, now, if fail { Counted::Failure } else { Counted::Success }, if slow { 2000 } else { 0 });
            naive.calls.push((now, fail, slow));
            let t = b.totals();
            // The time window is judged at the last record; compare there.
            prop_assert_eq!((t.calls, t.failures, t.slow), naive.totals(kind, size, now));
        }
    }

    /// An open breaker never admits before its wait ends; half-open never admits more than permitted.
    #[test]
    fn open_and_half_open_limits(
        permitted in 1u32..5,
        wait_ms in 1u64..1000,
        ops in proptest::collection::vec((0u64..300_000_000, 0u8..4), 1..300),
    ) {
        let cfg = BreakerConfig {
            minimum_number_of_calls: 2,
            sliding_window_size: 4,
            wait_duration_in_open_state: wait_ms * 1_000_000,
            max_wait_duration_in_open_state: wait_ms * 1_000_000,
            permitted_number_of_calls_in_half_open_state: permitted,
            max_wait_duration_in_half_open_state: 500_000_000,
            ..BreakerConfig::default()
        };
        let mut b = CircuitBreaker::new(cfg).unwrap();
        let mut now = 0u64;
        let mut opened_at: Option<u64> = None;
        let mut outstanding = Vec::new();
        let mut trials_in_state = 0u32;
        for (dt, op) in ops {
            now += dt;
            let before = b.state();
            match op {
                0 | 1 => {
                    let (a, t) = b.try_acquire(now);
                    if let Some(t) = t {
                        if t.to == State::HalfOpen {
                            trials_in_state = 0;
                        }
                        if t.to == State::Open {
                            opened_at = Some(now);
                        }
                    }
                    if let Acquire::Permitted(p) = a {
                        if before == State::Open {
                            prop_assert!(now > opened_at.unwrap() + wait_ms * 1_000_000);
                        }
                        if p.is_trial() { trials_in_state += 1; }
                        if b.state() == State::HalfOpen { prop_assert!(trials_in_state <= permitted); }
                        outstanding.push((p, op == 1));
                    }
                }
                2 => if let Some((p, fail)) = outstanding.pop() {
                    let t = b.on_result(p, now, if fail { Counted::Failure } else { Counted::Success }, 0);
                    if let Some(t) = t { if t.to == State::Open { opened_at = Some(now); } }
                },
                _ => if let Some((p, _)) = outstanding.pop() {
                    if b.release(p, now).is_some_and(|t| t.to == State::Open) { opened_at = Some(now); }
                    if p.is_trial() && b.state() == State::HalfOpen { trials_in_state = trials_in_state.saturating_sub(1); }
                },
            }
        }
    }

    /// Token buckets never go negative nor above capacity.
    #[test]
    fn token_bucket_bounds(ops in proptest::collection::vec((0u8..4, 0u8..4), 1..500), capacity in 1u32..600) {
        let mut cfg = BudgetConfig::token_bucket();
        if let retrycore::budget::BudgetKind::TokenBucket { capacity: c, .. } = &mut cfg.kind { *c = capacity; }
        let mut b = Budget::new(cfg).unwrap();
        let cats = [Category::Timeout, Category::Overloaded, Category::ServerError, Category::Connect];
        for (op, c) in ops {
            let cat = cats[c as usize];
            match op {
                0 => if b.check(0, cat, false, false).is_ok() { b.withdraw(0, cat, false, false); },
                1 => b.on_success(0, None),
                2 => b.on_success(0, Some(10)),
                _ => b.on_failure(0, FailureFacts { category: cat, counts: true, reached_backend: true, declined_pushback: false, refused: false }),
            }
            let t = b.tokens().unwrap();
            prop_assert!(t <= u64::from(capacity));
        }
    }

    /// With smithy-rs's refill and fractional reward, a token bucket still
    /// stays within its capacity, its level's fraction in [0, capacity], and
    /// a retry is allowed exactly when its cost fits the tokens.
    #[test]
    fn refilling_token_bucket_bounds(
        ops in proptest::collection::vec((0u8..5, 0u8..4, 0u64..3_000_000_000), 1..300),
        capacity in 0u32..600, initial in 0u32..600, rate in 0.0f64..50.0, reward in 0.0f64..3.0,
    ) {
        let mut cfg = BudgetConfig::token_bucket();
        if let retrycore::budget::BudgetKind::TokenBucket { capacity: c, initial_tokens, refill_rate, success_reward, .. } = &mut cfg.kind {
            *c = capacity;
            *initial_tokens = Some(initial.min(capacity));
            *refill_rate = rate;
            *success_reward = reward;
        }
        let mut b = Budget::new(cfg).unwrap();
        let cats = [Category::Timeout, Category::Overloaded, Category::ServerError, Category::Connect];
        let mut now = 0u64;
        for (op, c, dt) in ops {
            now += dt;
            let cat = cats[c as usize];
            match op {
                0 => {
                    let ok = b.check(now, cat, false, false).is_ok();
                    let before = b.tokens().unwrap();
                    if ok {
                        let (cost, _) = b.withdraw(now, cat, false, false);
                        prop_assert!(u64::from(cost.unwrap()) <= before);
                    }
                }
                1 => b.on_success(now, None),
                2 => b.on_success(now, Some(10)),
                3 => { b.acquire(now, c.into()).unwrap(); }
                _ => b.release(now, c.into()).unwrap(),
            }
            prop_assert!(b.tokens().unwrap() <= u64::from(capacity));
            let level = b.level(now);
            prop_assert!(level["tokens"].as_u64().unwrap() <= u64::from(capacity));
            let f = level.get("fraction").and_then(retrycore::json::Value::as_f64).unwrap_or(0.0);
            prop_assert!((0.0..=f64::from(capacity)).contains(&f), "{level}");
        }
    }

    /// gRPC tokens stay in [0, max] and are multiples of the arithmetic's thousandths.
    #[test]
    fn grpc_tokens_bounds(ops in proptest::collection::vec(any::<bool>(), 1..500), max in 1u32..=1000, ratio_milli in 1u32..5000) {
        let mut b = Budget::new(BudgetConfig::grpc(f64::from(max), f64::from(ratio_milli) / 1000.0).unwrap()).unwrap();
        for ok in ops {
            if ok { b.on_success(0, None); } else {
                b.on_failure(0, FailureFacts { category: Category::ServerError, counts: true, reached_backend: true, declined_pushback: false, refused: false });
            }
            let t = b.tokens().unwrap();
            prop_assert!(t <= u64::from(max) * 1000);
        }
    }
}

//! Property tests of the limiters' invariants: never over the limit, a
//! bounded queue, waits that never run backwards, adaptive limits within
//! their bounds.

use proptest::prelude::*;
use retrycore::json;
use retrycore::limiters::{AttemptKind, Cancelled, Completion, Decision, Limiter, LimiterConfig, Registry, Signal};

fn config(v: retrycore::json::Value) -> LimiterConfig {
    LimiterConfig::from_json_value(&v, "").expect("a valid limiter")
}

/// One step of a random schedule: time advances by `dt`, then one action.
#[derive(Clone, Debug)]
enum Step {
    Acquire { dt: u64, within: Option<u64> },
    Release { dt: u64, overloaded: bool, rtt: u64 },
    Cancel { dt: u64, pick: usize },
}

fn steps(max_dt: u64) -> impl Strategy<Value = Vec<Step>> {
    prop::collection::vec(
        prop_oneof![
            3 => (0..=max_dt, prop::option::of(0..=max_dt * 4)).prop_map(|(dt, within)| Step::Acquire { dt, within }),
            2 => (0..=max_dt, any::<bool>(), 0..=10 * max_dt).prop_map(|(dt, overloaded, rtt)| Step::Release { dt, overloaded, rtt }),
            1 => (0..=max_dt, any::<usize>()).prop_map(|(dt, pick)| Step::Cancel { dt, pick }),
        ],
        1..200,
    )
}

proptest! {
    /// Many callers on one bulkhead: in flight never above the limit, the
    /// queue never above its cap, and every waiter is either granted,
    /// cancelled or still queued.
    #[test]
    fn bulkhead_never_over_the_limit(max in 1u64..6, queue in 0u64..6, wait_ms in 0u64..50, schedule in steps(10_000_000)) {
        let mut l = Limiter::new(config(json!({"kind": "bulkhead", "max_concurrent": max, "queue_limit": queue, "max_wait": format!("{wait_ms}ms")})), 0);
        let (mut now, mut running, mut waiting) = (0u64, 0u64, Vec::<u64>::new());
        for s in schedule {
            match s {
                Step::Acquire { dt, within } => {
                    now += dt;
                    match l.acquire(now, AttemptKind::Initial, within) {
                        Decision::Proceed => running += 1,
                        Decision::Queued { ticket, max_wait } => {
                            prop_assert!(max_wait.is_some_and(|m| m > 0));
                            waiting.push(ticket);
                        }
                        Decision::Reject(r) => prop_assert!(r.reason == "bulkhead_full" || r.reason == "queue_full"),
                        Decision::Delay { .. } => prop_assert!(false, "a bulkhead never delays"),
                    }
                }
                Step::Release { dt, .. } if running > 0 => {
                    now += dt;
                    running -= 1;
                    if let Some(t) = l.release(now, Completion { rtt: 0, signal: Signal::Success }) {
                        let i = waiting.iter().position(|w| *w == t);
                        prop_assert_eq!(i, Some(0), "the oldest waiter is served first");
                        waiting.remove(0);
                        running += 1;
                    }
                }
                Step::Cancel { dt, pick } if !waiting.is_empty() => {
                    now += dt;
                    let t = waiting.remove(pick % waiting.len());
                    prop_assert!(matches!(l.cancel(now, t), Cancelled::Removed(_)));
                }
                _ => {}
            }
            prop_assert!(running <= max);
            prop_assert_eq!(l.in_flight(), running);
            prop_assert!(waiting.len() as u64 <= queue);
            prop_assert_eq!(l.state(now)["queued"].as_u64(), Some(waiting.len() as u64));
        }
    }

    /// Rate limiters: the starts (now for a proceed, now + wait for a
    /// delay) never exceed the limit in any window, and starts never run
    /// backwards for callers arriving in order (oldest first).
    #[test]
    fn rate_limiters_never_over_the_limit(kind in 0usize..3, limit in 1u64..5, per in 1u64..5, segs in 1u64..5, queue in 0u64..8,
                                          gaps in prop::collection::vec(0u64..=300, 1..200), cancel_every in 2usize..9) {
        let period = 1000u64;
        let per = per.min(limit);
        let v = match kind {
            0 => json!({"kind": "token_bucket", "token_limit": limit, "tokens_per_period": per, "period": "1000ns", "queue_limit": queue}),
            1 => json!({"kind": "fixed_window", "permit_limit": limit, "window": "1000ns", "queue_limit": queue}),
            _ => json!({"kind": "sliding_window", "permit_limit": limit, "window": format!("{}ns", period * segs), "segments": segs, "queue_limit": queue}),
        };
        let mut l = Limiter::new(config(v), 0);
        let (mut now, mut last_start) = (0u64, 0u64);
        let mut starts: Vec<u64> = Vec::new();
        for (n, dt) in gaps.into_iter().enumerate() {
            now += dt;
            match l.acquire(now, AttemptKind::Initial, None) {
                Decision::Proceed => {
                    prop_assert!(now >= last_start, "a newcomer never overtakes a waiter");
                    last_start = now;
                    starts.push(now);
                }
                Decision::Delay { wait, ticket } => {
                    prop_assert!(wait > 0);
                    if n % cancel_every == 0 {
                        prop_assert_eq!(l.cancel(now, ticket), Cancelled::Refunded);
                    } else {
                        prop_assert!(now + wait >= last_start, "starts run in arrival order");
                        last_start = now + wait;
                        starts.push(now + wait);
                    }
                }
                Decision::Reject(r) => {
                    prop_assert!(r.reason == "queue_full" || r.reason == "wait_too_long");
                    prop_assert!(r.retry_after.is_some_and(|d| d > 0));
                }
                Decision::Queued { .. } => prop_assert!(false, "a rate limiter never queues"),
            }
            prop_assert!(l.state(now)["queued"].as_u64().unwrap_or(u64::MAX) <= queue);
        }
        // Every window on the replenishment grid: one period for a bucket
        // (and two periods hold at most one refill more), the whole
        // window for a sliding one.
        let span = if kind == 2 { period * segs } else { period };
        let count = |from: u64, to: u64| starts.iter().filter(|t| **t >= from && **t < to).count() as u64;
        let last = starts.last().copied().unwrap_or(0);
        let mut w = 0u64;
        while w <= last {
            let inside = count(w, w + span);
            prop_assert!(inside <= limit, "{} starts in [{}, {}) > {}", inside, w, w + span, limit);
            if kind == 0 {
                prop_assert!(count(w, w + 2 * period) <= limit + per);
            }
            w += period;
        }
    }

    /// AWS's adaptive limiter: the fill rate stays at 0.5/s or more, the
    /// tokens never exceed the capacity, every wait is finite.
    #[test]
    fn aws_adaptive_rates_stay_sane(schedule in steps(400_000_000)) {
        let mut l = Limiter::new(config(json!({"profile": "aws-adaptive"})), 0);
        let mut now = 0u64;
        for s in schedule {
            match s {
                Step::Acquire { dt, within } => { now += dt; let _ = l.acquire(now, AttemptKind::Retry, within); }
                Step::Release { dt, overloaded, rtt } => {
                    now += dt;
                    let signal = if overloaded { Signal::Overloaded } else { Signal::Success };
                    l.release(now, Completion { rtt, signal });
                }
                Step::Cancel { dt, .. } => now += dt,
            }
            let st = l.state(now);
            let fill = st["fill_rate"].as_f64().unwrap_or(f64::NAN);
            prop_assert!(fill >= 0.5 && fill.is_finite(), "fill rate {}", fill);
            prop_assert!(st["capacity"].as_f64().unwrap_or(f64::NAN) <= st["max_capacity"].as_f64().unwrap_or(f64::NAN));
        }
    }

    /// Adaptive concurrency: the limit stays within [min, max], and a call
    /// proceeds only under it.
    #[test]
    fn adaptive_limits_stay_in_bounds(gradient in any::<bool>(), min in 1u32..30, span in 0u32..200, schedule in steps(10_000_000)) {
        let max = min + span;
        let kind = if gradient { "gradient2" } else { "aimd" };
        let mut l = Limiter::new(config(json!({"kind": kind, "min_limit": min, "max_limit": max, "initial_limit": min})), 0);
        let mut now = 0u64;
        for s in schedule {
            match s {
                Step::Acquire { dt, .. } => {
                    now += dt;
                    let before = l.in_flight();
                    let limit = l.state(now)["limit"].as_u64().unwrap_or(0);
                    match l.acquire(now, AttemptKind::Initial, None) {
                        Decision::Proceed => prop_assert!(before < limit),
                        Decision::Reject(r) => { prop_assert_eq!(r.reason, "limit_reached"); prop_assert!(before >= limit) }
                        other => prop_assert!(false, "unexpected {:?}", other),
                    }
                }
                Step::Release { dt, overloaded, rtt } if l.in_flight() > 0 => {
                    now += dt;
                    let signal = if overloaded { Signal::Overloaded } else { Signal::Success };
                    l.release(now, Completion { rtt, signal });
                }
                _ => {}
            }
            let limit = l.state(now)["limit"].as_u64().unwrap_or(0);
            prop_assert!((u64::from(min)..=u64::from(max)).contains(&limit), "limit {} outside [{}, {}]", limit, min, max);
        }
    }
}

#[test]
fn registry_is_bounded_and_isolates_downstreams() {
    let cfg = config(json!({"kind": "bulkhead", "name": "api", "max_concurrent": 1}));
    let mut r = Registry::new(cfg, 2).expect("registry");
    assert_eq!(r.get("a", 0).expect("a").acquire(0, AttemptKind::Initial, None), Decision::Proceed);
    // "b" has its own slot although "a" is full.
    let b = r.get("b", 1).expect("b");
    assert_eq!(b.name(), "api:b");
    assert_eq!(b.acquire(1, AttemptKind::Initial, None), Decision::Proceed);
    // Both are busy: a third downstream finds no room.
    assert_eq!(r.get("c", 2).map(|_| ()).unwrap_err().code(), "too_large");
    // "b" ends: it is idle, so "c" takes its place.
    r.get("b", 3).expect("b").release(3, Completion { rtt: 0, signal: Signal::Success });
    assert!(r.get("c", 4).is_ok());
    assert!(r.peek("b").is_none());
    assert_eq!(r.len(), 2);
    assert_eq!(Registry::new(config(json!({"kind": "aimd"})), 0).unwrap_err().code(), "out_of_range");
}

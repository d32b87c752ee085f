//! Breaker snapshots from outside: restore refuses or gives a breaker that works.
#![no_main]
use libfuzzer_sys::fuzz_target;
use retrycore::breaker::{BreakerConfig, BreakerKind, BreakerSnapshot, CircuitBreaker, Counted, Acquire};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(snap) = BreakerSnapshot::from_json(text) else { return };
    for kind in [BreakerKind::CountBased, BreakerKind::TimeBased, BreakerKind::Consecutive] {
        let cfg = BreakerConfig { kind, sliding_window_size: 10, minimum_number_of_calls: 5, ..BreakerConfig::default() };
        if let Ok(mut b) = CircuitBreaker::restore(cfg, &snap, 1_000_000_000, 5_000) {
            for i in 0..20u64 {
                let now = 1_000_000_000 + i * 700_000_000;
                if let (Acquire::Permitted(p), _) = b.try_acquire(now) {
                    b.on_result(p, now, if i % 3 == 0 { Counted::Failure } else { Counted::Success }, i);
                }
            }
        }
    }
});

//! A session driven by arbitrary operations and times: never a panic, never
//! more attempts than max_attempts, and delays within the policy's bounds.
#![no_main]
use libfuzzer_sys::fuzz_target;
use retrycore::classify::Failure;
use retrycore::policy::{PolicyConfig, RetryPolicy};
use retrycore::session::{Decision, Gate, SessionOptions};

fuzz_target!(|data: &[u8]| {
    if data.len() < 4 {
        return;
    }
    let doc = r#"{"max_attempts": 6, "deadline": "30s", "budget": {"kind": "token_bucket", "capacity": 40},
                  "breaker": {"minimum_number_of_calls": 3, "sliding_window_size": 5, "wait_duration_in_open_state": "1s"}}"#;
    let p = RetryPolicy::new(PolicyConfig::from_json(doc).unwrap(), Some(u64::from(data[0]))).unwrap();
    let mut s = p.session(SessionOptions { key: Some("k".into()), seed: Some(u64::from(data[1])), ..Default::default() }).unwrap();
    let mut now = 0u64;
    let statuses = [503u16, 500, 504, 429, 400, 200, 409, 408];
    for chunk in data[2..].chunks(2) {
        now = now.wrapping_add(u64::from(chunk[0]) * 37_000_000) % (1 << 50);
        match chunk.get(1).copied().unwrap_or(0) % 6 {
            0 | 1 => {
                if let Ok(Gate::Proceed { attempt, .. }) = s.before_attempt_ns(now) {
                    assert!(attempt <= 6);
                }
            }
            2 | 3 => {
                let status = statuses[usize::from(chunk[0] % 8)];
                let f = Failure { status: Some(status), method: Some(if chunk[0] & 1 == 0 { "GET" } else { "POST" }), ..Default::default() };
                if let Ok(Decision::Retry { delay, .. }) = s.on_failure_ns(now, &f) {
                    assert!(delay <= std::time::Duration::from_secs(60));
                }
            }
            4 => {
                let _ = s.on_success_ns(now, None);
            }
            _ => {
                if s.is_done() {
                    s = p.session(SessionOptions { key: Some("k".into()), ..Default::default() }).unwrap();
                }
            }
        }
    }
});

//! Any text through the policy parser: an error or a policy whose normalized
//! form parses back to the same settings; never a panic.
#![no_main]
use libfuzzer_sys::fuzz_target;
use retrycore::policy::PolicyConfig;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(c) = PolicyConfig::from_json(text) {
        let back = PolicyConfig::from_json(&c.to_json()).expect("normalized form parses");
        assert_eq!(back, c);
        let s = c.backoff.schedule(c.max_attempts.min(50));
        for row in &s.rows {
            assert!(row.low <= row.mid.max(row.low) && row.high <= std::time::Duration::from_nanos(c.backoff.max_delay_ns()));
        }
    }
});

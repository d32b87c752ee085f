//! Header lists and HTTP-dates: never a panic; a date parses to a time whose
//! delay is consistent with its seconds.
#![no_main]
use libfuzzer_sys::fuzz_target;
use retrycore::retry_after::{parse_http_date, parse_retry_after, read_headers};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let now = 1_780_000_000_000u64;
    let _ = parse_http_date(text, now);
    let _ = parse_retry_after(text, Some(now));
    let headers: Vec<(&str, &str)> = text.lines().filter_map(|l| l.split_once(':')).collect();
    let a = read_headers(headers.iter().copied(), Some(now));
    if a.declined_by_pushback {
        assert!(a.delay.is_none());
    }
});

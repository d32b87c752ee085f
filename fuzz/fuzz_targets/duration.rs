//! Duration strings: parse, and every success formats back to the same value.
#![no_main]
use libfuzzer_sys::fuzz_target;
use retrycore::duration::{format_duration, parse_duration};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(ns) = parse_duration(text, "d") {
        assert_eq!(parse_duration(&format_duration(ns), "d").unwrap(), ns);
    }
});

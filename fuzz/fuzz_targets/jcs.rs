//! RFC 8785 canonical JSON: never a panic; canonicalizing the canonical form gives itself.
#![no_main]
use libfuzzer_sys::fuzz_target;
use retrycore::idempotency::canonicalize_json;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(c) = canonicalize_json(text) {
        assert_eq!(canonicalize_json(&c).unwrap(), c);
    }
});

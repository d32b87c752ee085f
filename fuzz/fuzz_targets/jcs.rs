//! RFC 8785 canonical JSON: never a panic; canonicalizing the canonical form
//! gives itself; text canonicalised straight (`JsonText`) is what the tree gives.
#![no_main]
use libfuzzer_sys::fuzz_target;
use retrycore::idempotency::{canonicalize_json, canonicalize_value, parse_json};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let general = parse_json(text).and_then(|v| canonicalize_value(&v)).map_err(|e| e.code());
    assert_eq!(canonicalize_json(text).map_err(|e| e.code()), general);
    if let Ok(c) = canonicalize_json(text) {
        assert_eq!(canonicalize_json(&c).unwrap(), c);
    }
});

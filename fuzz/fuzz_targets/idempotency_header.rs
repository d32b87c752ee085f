//! Idempotency-Key headers and keys: parse / validate, and a parsed key formats back and reparses.
#![no_main]
use libfuzzer_sys::fuzz_target;
use retrycore::idempotency::{format_header, parse_header, storage_key, validate_key, HeaderForm, DEFAULT_MAX_KEY_LEN};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    for form in [HeaderForm::SfString, HeaderForm::SfStringOrToken] {
        if let Ok(key) = parse_header(text, form) {
            let again = format_header(&key).expect("a parsed key formats");
            assert_eq!(parse_header(&again, HeaderForm::SfString).unwrap(), key);
        }
    }
    if validate_key(text, DEFAULT_MAX_KEY_LEN).is_ok() {
        let s = storage_key(text, 64).unwrap();
        assert!(s.len() <= 64);
    }
});

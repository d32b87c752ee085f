//! Lint over any policy and service description: never a panic.
#![no_main]
use libfuzzer_sys::fuzz_target;
use retrycore::lint::{lint, Service};
use retrycore::policy::PolicyConfig;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let (p, s) = text.split_once('\n').unwrap_or((text, "{}"));
    let Ok(policy) = PolicyConfig::from_json(p) else { return };
    let service = Service::from_json(s).ok();
    for f in lint(&policy, service.as_ref()) {
        assert!(!f.code.is_empty() && !f.message.is_empty());
    }
});

//! Classification rules from a document, applied to a failure built from the
//! rest of the input: never a panic; a verdict is retryable only if its rule allows.
#![no_main]
use libfuzzer_sys::fuzz_target;
use retrycore::classify::{Failure, GrpcCode, RetryRule};
use retrycore::policy::PolicyConfig;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let (doc, rest) = text.split_once('\n').unwrap_or((text, ""));
    let classifier = PolicyConfig::from_json(doc).map(|c| c.classifier).unwrap_or_default();
    let mut parts = rest.split('|');
    let status = parts.next().and_then(|s| s.parse::<u16>().ok());
    let grpc = parts.next().and_then(GrpcCode::parse);
    let method = parts.next();
    let names: Vec<&str> = parts.next().map(|s| s.split(',').collect()).unwrap_or_default();
    let headers: Vec<(&str, &str)> = parts.next().map(|s| s.split(';').filter_map(|h| h.split_once('=')).collect()).unwrap_or_default();
    let f = Failure { status, grpc_code: grpc, method, error_names: &names, headers: &headers, wall_now_ms: Some(0), ..Default::default() };
    let v = classifier.classify(&f);
    if v.retryable {
        assert!(v.retry != RetryRule::Never && !v.server_declined);
    }
});

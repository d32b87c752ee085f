//! Runners for the idempotency kinds (keys, headers, fingerprints, records, dead letters).
use crate::common::Case;

pub fn run(_kind: &str, _case: &Case) -> Option<Result<(), String>> {
    None
}

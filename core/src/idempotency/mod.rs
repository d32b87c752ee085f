//! Idempotency keys, request fingerprints, record decisions and dead letters.
//!
//! # Why
//!
//! A client that retries cannot know whether its first attempt ran: a POST
//! that timed out may already have charged the card. Retrying is only safe
//! when the server can tell a repeat from a new request and answer the repeat
//! with the first outcome. That takes four pieces, all here, all pure:
//!
//! - a **key** the client sends unchanged on every retry
//!   ([`derive_key`] from business id, operation and version; [`mint_key`]
//!   when there is none; [`validate_key`], [`scoped_key`], [`storage_key`];
//!   the `Idempotency-Key` header with [`format_header`] and
//!   [`parse_header`]);
//! - a **fingerprint** of what was asked ([`fingerprint_http`],
//!   [`fingerprint_operation`]), the SHA-256 of RFC 8785 canonical JSON
//!   ([`canonicalize`], [`canonicalize_value`], [`parse_json`]), so that the
//!   same key with another payload is refused instead of answered with
//!   someone else's result;
//! - a **record** per key and the rules over it ([`decide`], [`complete`],
//!   [`renew_lease`]): execute, refuse a mismatch, say "in progress", take
//!   over an abandoned claim with a higher fencing token, or replay;
//! - a **store protocol** ([`store_protocol`]): the schema and atomic
//!   statements of each SQL dialect and the Redis scripts that store records
//!   by these rules, as data hosts execute with their own drivers;
//! - a **dead letter** ([`DeadLetter`]) for what still failed, with enough
//!   context to replay it later, and only into a target that deduplicates.
//!
//! The module reads no clock and no randomness: wall-clock Unix epoch
//! milliseconds and the entropy of a minted key come in as arguments.

mod dead_letter;
mod failure_handling;
mod fingerprint;
mod header;
pub(crate) mod jcs;
pub(crate) mod json;
mod key;
mod record;
mod rfc3339;
mod store;
mod store_sql;
mod text;

pub use dead_letter::{DeadLetter, DeadLetterBuilder, DeadLetterStatus};
pub use fingerprint::{
    fingerprint_http, fingerprint_http_canonical, fingerprint_operation, fingerprint_operation_canonical, FingerprintOf,
};
pub use header::{format_header, parse_header, HeaderForm};
pub use jcs::{canonicalize, canonicalize_any, canonicalize_json, canonicalize_value, format_number, JsonInput};
pub use json::{parse_json, string_from_utf16, JsonValue, MAX_DEPTH};
pub use key::{
    derive_key, mint_key, scoped_key, storage_key, validate_key, validate_record_key, DEFAULT_MAX_KEY_LEN,
    HASHED_KEY_PREFIX, MIN_STORAGE_KEY_LEN,
};
pub use record::{
    complete, decide, missing_key_answer, renew_lease, Claim, ExecuteReason, FailureHandling, HttpAnswer,
    IdempotencyRecord, Outcome, RecordConfig, RecordDecision, RecordState, StoredResponse, RELEASING_CATEGORIES,
};
pub use rfc3339::{format_rfc3339_ms, parse_rfc3339_ms, MAX_RFC3339_MS};
pub use store::{
    claim_release_params, encode_response, record_from_row, record_to_row, record_to_row_json, render, store_protocol,
    ColumnValue, Dialect, Placeholder, REDIS_SLACK_MS, REPLAYED_HEADERS, STORE_KEY_MAX_LEN, STORE_PROTOCOL_VERSION,
};
pub use text::JsonText;

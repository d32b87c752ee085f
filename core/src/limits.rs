//! The input limits every entry point applies, in one place.
//!
//! A host walks what its caller hands it (arrays, iterables, cause chains,
//! header lists) before the core sees it. Each walk is bounded by one of
//! these numbers *before* it starts, so a sparse array with a length of
//! 2³² − 1, an endless iterator or a self-referencing cause chain costs at
//! most the limit, never a hang or an exhausted allocator. The same numbers
//! hold in every host; `docs/limits.md` lists them per entry point.
//!
//! The checks are functions here, so a host never re-states a rule: it
//! calls [`check_items`], [`check_bytes`], [`time_from_host_f64`] or
//! [`count_from_f64`] and raises what they return.

use crate::{Error, ErrorCode, Result};

/// Bytes of JSON text any document may have: policy documents, breaker and
/// budget configurations, service descriptions, snapshots and typed options
/// (1 MiB).
pub const MAX_DOCUMENT_BYTES: usize = 1 << 20;

/// Bytes of a breaker snapshot's JSON text (16 MiB): a time window of
/// 100 000 one-second buckets, every one of them busy, needs about 5 MB.
pub const MAX_SNAPSHOT_BYTES: usize = 16 << 20;

/// Nesting depth of any JSON value or host container converted to one.
pub const MAX_DEPTH: usize = 128;

/// Elements of any one list a host converts element by element (delay
/// histories, JSON-pointer selections, rule lists, arrays inside typed
/// options or fingerprinted values).
pub const MAX_ITEMS: usize = 65_536;

/// Header entries read from one failure or response.
pub const MAX_HEADERS: usize = 256;

/// Errors walked along one cause chain (`__cause__` / `__context__`,
/// `cause`; the members of an `AggregateError` or `ExceptionGroup` are not
/// walked).
pub const MAX_CHAIN: usize = 16;

/// Names (codes, names and class names) kept for one failure.
pub const MAX_ERROR_NAMES: usize = 256;

/// Bytes of one name, code or header name; a longer one is skipped.
pub const MAX_NAME_BYTES: usize = 256;

/// Bytes of one header value; a longer one is ignored like a malformed one.
pub const MAX_HEADER_VALUE_BYTES: usize = 8 << 10;

/// Bytes of an error's message a host sends for message rules
/// ([`Failure::message`](crate::classify::Failure::message)); a longer one
/// is cut to its first bytes by [`clip_message`].
pub const MAX_MESSAGE_BYTES: usize = 8 << 10;

/// Bytes of one JSON text handed to the fingerprint and canonical-JSON
/// functions (request bodies are larger than configuration documents).
pub const MAX_BODY_BYTES: usize = 16 << 20;

/// The largest monotonic or wall-clock instant, in nanoseconds, that an
/// entry point accepts: `u64::MAX`, about 584 years after the clock's
/// origin. A later `now` would pin every breaker's clock at the end of time.
pub const MAX_TIME_NS: u64 = u64::MAX;

/// 2^64, the first f64 above `u64::MAX`.
const TWO_POW_64: f64 = 18_446_744_073_709_551_616.0;

/// Every limit by its host name (camelCase in JS, snake_case in Python),
/// for the hosts' constant tables and the drift test.
pub const ALL: &[(&str, u64)] = &[
    ("max_document_bytes", MAX_DOCUMENT_BYTES as u64),
    ("max_snapshot_bytes", MAX_SNAPSHOT_BYTES as u64),
    ("max_depth", MAX_DEPTH as u64),
    ("max_items", MAX_ITEMS as u64),
    ("max_headers", MAX_HEADERS as u64),
    ("max_chain", MAX_CHAIN as u64),
    ("max_error_names", MAX_ERROR_NAMES as u64),
    ("max_name_bytes", MAX_NAME_BYTES as u64),
    ("max_header_value_bytes", MAX_HEADER_VALUE_BYTES as u64),
    ("max_body_bytes", MAX_BODY_BYTES as u64),
    ("max_message_bytes", MAX_MESSAGE_BYTES as u64),
];

/// Returns the part of an error's message that message rules read: the
/// first [`MAX_MESSAGE_BYTES`] bytes, cut back to a character boundary.
/// A host clips what it reads from an error (`str(exc)`, `error.message`)
/// with this before it sends it, so a huge message costs at most the limit.
pub fn clip_message(message: &str) -> &str {
    if message.len() <= MAX_MESSAGE_BYTES {
        return message;
    }
    let mut end = MAX_MESSAGE_BYTES;
    while !message.is_char_boundary(end) {
        end -= 1;
    }
    &message[..end]
}

/// Refuses a list of `len` elements before it is walked.
///
/// # Errors
/// `too_large`, naming `field`, when `len` exceeds [`MAX_ITEMS`]. Hosts call
/// it with the length they are about to iterate (a JS `length`, a Python
/// `len()` or the count reached by a bounded iteration).
pub fn check_items(len: u64, field: &str) -> Result<()> {
    if len > MAX_ITEMS as u64 {
        return Err(too_large_items(field));
    }
    Ok(())
}

#[cold]
fn too_large_items(field: &str) -> Error {
    Error::new(ErrorCode::TooLarge, field.to_owned(), format!("at most {MAX_ITEMS} items"))
}

/// Refuses a text of `len` bytes over `limit` before it is read.
///
/// # Errors
/// `too_large`, naming `field`.
pub fn check_bytes(len: usize, limit: usize, field: &str) -> Result<()> {
    if len > limit {
        return Err(Error::new(ErrorCode::TooLarge, field.to_owned(), format!("at most {limit} bytes")));
    }
    Ok(())
}

/// Refuses nesting at `depth` (0 = the outermost value) beyond [`MAX_DEPTH`].
///
/// # Errors
/// `too_deep`, naming `field`.
pub fn check_depth(depth: usize, field: &str) -> Result<()> {
    if depth >= MAX_DEPTH {
        return Err(Error::new(
            ErrorCode::TooDeep,
            field.to_owned(),
            format!("nesting deeper than {MAX_DEPTH} levels (or a cycle)"),
        ));
    }
    Ok(())
}

/// Converts a host instant (a `now` or `wall_now`) in units of `scale`
/// nanoseconds to nanoseconds, rounding half to even.
///
/// # Errors
/// `out_of_range` for NaN and negative values, `invalid_time` for infinities
/// and instants past [`MAX_TIME_NS`] (which would otherwise saturate and pin
/// the object's clock at the end of time), each naming `field`.
pub fn time_from_host_f64(value: f64, scale: f64, field: &str) -> Result<u64> {
    if value.is_nan() {
        return Err(Error::new(ErrorCode::OutOfRange, field.to_owned(), "must be a number, got NaN"));
    }
    if value < 0.0 {
        return Err(Error::new(ErrorCode::OutOfRange, field.to_owned(), format!("must not be negative, got {value}")));
    }
    let ns = (value * scale).round_ties_even();
    if ns >= TWO_POW_64 {
        return Err(Error::new(
            ErrorCode::InvalidTime,
            field.to_owned(),
            format!("{value} is past the largest instant (2^64 ns after the clock's origin)"),
        ));
    }
    Ok(ns as u64)
}

/// Converts a host count or amount (a budget cost, a number of calls) to an
/// integer in `0..=max`.
///
/// # Errors
/// `out_of_range`, naming `field`, for NaN, infinities, fractions, negative
/// values and values above `max` — never a wrap-around (a `-1` that becomes
/// 4 294 967 295) or a silent zero.
pub fn count_from_f64(value: f64, max: u64, field: &str) -> Result<u64> {
    if value >= 0.0 && value.fract() == 0.0 && value < TWO_POW_64 && (value as u64) <= max {
        return Ok(value as u64);
    }
    Err(Error::new(
        ErrorCode::OutOfRange,
        field.to_owned(),
        format!("must be a whole number from 0 to {max}, got {value}"),
    ))
}

/// Converts a host integer to one in `0..=max`; see [`count_from_f64`].
///
/// # Errors
/// `out_of_range`, naming `field`.
pub fn count_from_i128(value: i128, max: u64, field: &str) -> Result<u64> {
    match u64::try_from(value) {
        Ok(v) if v <= max => Ok(v),
        _ => Err(Error::new(
            ErrorCode::OutOfRange,
            field.to_owned(),
            format!("must be a whole number from 0 to {max}, got {value}"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clip_message_keeps_short_messages_and_cuts_at_a_char_boundary() {
        assert_eq!(clip_message("fetch failed"), "fetch failed");
        let long = format!("{}é tail", "a".repeat(MAX_MESSAGE_BYTES - 1));
        let clipped = clip_message(&long);
        assert_eq!(clipped.len(), MAX_MESSAGE_BYTES - 1, "the two-byte é straddles the limit and is dropped");
        assert_eq!(clip_message(&"a".repeat(MAX_MESSAGE_BYTES + 5)).len(), MAX_MESSAGE_BYTES);
    }

    #[test]
    fn times() {
        assert_eq!(time_from_host_f64(1.5, 1e9, "now").unwrap(), 1_500_000_000);
        assert_eq!(time_from_host_f64(-0.0, 1e9, "now").unwrap(), 0);
        for bad in [1e308, 18_446_744_073.709_553, f64::INFINITY] {
            assert_eq!(time_from_host_f64(bad, 1e9, "now").unwrap_err().code(), "invalid_time", "{bad}");
        }
        assert_eq!(time_from_host_f64(2f64.powi(64), 1.0, "now").unwrap_err().code(), "invalid_time");
        assert_eq!(time_from_host_f64(f64::NAN, 1e6, "now").unwrap_err().code(), "out_of_range");
        assert_eq!(time_from_host_f64(-1.0, 1e6, "now").unwrap_err().code(), "out_of_range");
        assert_eq!(time_from_host_f64(18_446_744_073_709.0, 1e6, "now").unwrap(), 18_446_744_073_709_000_704);
    }

    #[test]
    fn counts() {
        assert_eq!(count_from_f64(5.0, u32::MAX as u64, "cost").unwrap(), 5);
        for bad in [-1.0, f64::NAN, 0.5, f64::INFINITY, 4_294_967_296.0] {
            let e = count_from_f64(bad, u32::MAX as u64, "cost").unwrap_err();
            assert_eq!((e.code(), e.field()), ("out_of_range", "cost"), "{bad}");
        }
        assert_eq!(count_from_f64(u64::MAX as f64, u64::MAX, "n").unwrap_err().code(), "out_of_range");
        assert_eq!(count_from_i128(-1, 10, "n").unwrap_err().code(), "out_of_range");
        assert_eq!(count_from_i128(10, 10, "n").unwrap(), 10);
    }

    #[test]
    fn docs_list_every_limit_with_its_value() {
        let page = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/limits.md")).unwrap();
        let rows: Vec<&str> = page.lines().filter(|l| l.starts_with("| `max_")).collect();
        assert_eq!(rows.len(), ALL.len(), "docs/limits.md lists {} limits, the core has {}", rows.len(), ALL.len());
        for (name, value) in ALL {
            let row = format!("| `{name}` | {value} |");
            assert!(rows.iter().any(|r| r.starts_with(&row)), "docs/limits.md has no row {row}");
        }
    }

    #[test]
    fn sizes() {
        assert!(check_items(MAX_ITEMS as u64, "x").is_ok());
        assert_eq!(check_items(u32::MAX as u64, "x").unwrap_err().code(), "too_large");
        assert_eq!(check_bytes(11, 10, "x").unwrap_err().code(), "too_large");
        assert_eq!(check_depth(MAX_DEPTH, "x").unwrap_err().code(), "too_deep");
    }
}

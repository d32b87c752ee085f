//! Typed options: documents whose durations may be millisecond numbers.
//!
//! The JS layer turns its camelCase options into the core's snake_case
//! document, but leaves durations as the numbers of milliseconds the caller
//! gave. The core's typed readers (`from_typed_value` with a unit of 1e6 ns)
//! know which keys are durations, so the document is read once, as is.
//! Errors keep the core's field path.

use crate::error::{Error, Result};
use retrycore::json::Value;

/// Nanoseconds in the unit of a bare duration number: JS milliseconds.
pub const MS: f64 = 1e6;

/// Parses a document (typed options, or a breaker or budget object) with
/// the core's one parser: size limit, duplicate keys and syntax refused as
/// every document reader refuses them (see `docs/js.md, "Input limits"`).
pub fn parse(text: &str) -> Result<Value> {
    retrycore::parse_document(text).map_err(Error::of_config)
}

/// Reads a breaker or budget object: with `typed` (a core `from_typed_value`
/// reader, durations as millisecond numbers or strings) when `ms_numbers`,
/// else with `doc` (a document reader: durations as strings).
pub fn read_object<T>(
    text: &str,
    ms_numbers: bool,
    typed: impl Fn(&Value, f64) -> retrycore::Result<T>,
    doc: impl Fn(&Value, &str) -> retrycore::Result<T>,
) -> Result<T> {
    let v = parse(text)?;
    if ms_numbers { typed(&v, MS) } else { doc(&v, "") }.map_err(Error::of_config)
}

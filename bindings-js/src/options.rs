//! Typed options: documents whose durations may be millisecond numbers.
//!
//! The JS layer turns its camelCase options into the core's snake_case
//! document, but leaves durations as the numbers of milliseconds the caller
//! gave. The core alone knows which keys are durations, so the document is
//! read as is, and each bare number the core refuses as `invalid_duration`
//! is converted with `from_millis_f64` to an exact `"<ns>ns"` string before
//! the document is read again. Errors keep the core's field path.

use crate::error::{Error, Result};
use retrycore::ErrorCode;
use serde_json::Value;

/// Reads a document whose durations may be numbers of milliseconds (typed
/// JS options), with `read` (a core reader).
pub fn read_with_ms<T>(text: &str, read: impl Fn(&Value) -> retrycore::Result<T>) -> Result<T> {
    document_size(text)?;
    let mut v: Value = serde_json::from_str(text)
        .map_err(|e| Error::type_error("invalid_json", "", format!("options are not JSON: {e}")))?;
    for _ in 0..256 {
        match read(&v) {
            Err(e) if e.kind() == ErrorCode::InvalidDuration => {
                let field = e.field().to_owned();
                match locate(&mut v, &field) {
                    Some(slot) if slot.is_number() => {
                        let n = slot.as_f64().unwrap_or(f64::NAN);
                        let ns = retrycore::duration::from_millis_f64(n, &field).map_err(Error::of_config)?;
                        *slot = Value::String(format!("{ns}ns"));
                    }
                    _ => return Err(Error::of_config(e)),
                }
            }
            Err(e) => return Err(Error::of_config(e)),
            Ok(t) => return Ok(t),
        }
    }
    Err(Error::range("too_large", "", "too many duration fields"))
}

/// Refuses a document over [`MAX_DOCUMENT_BYTES`](retrycore::limits::MAX_DOCUMENT_BYTES)
/// before parsing it, whatever the entry (options, breaker and budget
/// objects, snapshots; see `docs/js.md, "Input limits"`).
pub fn document_size(text: &str) -> Result<()> {
    retrycore::limits::check_bytes(text.len(), retrycore::limits::MAX_DOCUMENT_BYTES, "").map_err(Error::of_config)
}

/// Reads a breaker or budget object with `read` (a core reader taking a
/// path): durations as strings, or as millisecond numbers when `ms_numbers`.
pub fn read_object<T>(text: &str, ms_numbers: bool, read: impl Fn(&Value, &str) -> retrycore::Result<T>) -> Result<T> {
    if ms_numbers {
        read_with_ms(text, |v| read(v, ""))
    } else {
        document_size(text)?;
        let v: Value =
            serde_json::from_str(text).map_err(|e| Error::type_error("invalid_json", "", format!("not JSON: {e}")))?;
        read(&v, "").map_err(Error::of_config)
    }
}

/// Finds the value at a field path such as `budgets[0].window`.
fn locate<'a>(v: &'a mut Value, path: &str) -> Option<&'a mut Value> {
    let mut cur = v;
    for part in path.split('.') {
        let (name, rest) = match part.find('[') {
            Some(i) => (part.get(..i)?, part.get(i..)?),
            None => (part, ""),
        };
        if !name.is_empty() {
            cur = cur.get_mut(name)?;
        }
        for idx in rest.split('[').filter(|s| !s.is_empty()) {
            let i: usize = idx.trim_end_matches(']').parse().ok()?;
            cur = cur.get_mut(i)?;
        }
    }
    Some(cur)
}

#[cfg(test)]
mod tests {
    use super::*;
    use retrycore::policy::PolicyConfig;

    #[test]
    fn locate_tolerates_odd_paths() {
        let mut v = serde_json::json!({"a": [{"b": 1}]});
        assert_eq!(locate(&mut v, "a[0].b").map(|x| x.clone()), Some(serde_json::json!(1)));
        for p in ["", "a[", "a[x]", "a[99].b", "[0]", "a]]"] {
            let _ = locate(&mut v, p);
        }
    }

    #[test]
    fn millisecond_numbers_become_exact_nanoseconds() {
        let c = read_with_ms(r#"{"initial": 1.5}"#, PolicyConfig::from_json_value).unwrap();
        let doc: Value = serde_json::from_str(&c.to_json()).unwrap();
        assert_eq!(doc["initial"], "1.5ms");
        let e = read_with_ms(r#"{"initial": -1}"#, PolicyConfig::from_json_value).unwrap_err();
        assert_eq!((e.code, e.field.as_str()), ("out_of_range", "initial"));
        assert_eq!(read_with_ms("{", PolicyConfig::from_json_value).unwrap_err().code, "invalid_json");
    }
}

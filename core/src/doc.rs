//! Reading JSON documents field by field, with aliases, precise errors and
//! unknown keys rejected.

use crate::duration::parse_duration;
use crate::json::{Map, Value};
use crate::{Error, ErrorCode, Result};

/// Returns the JSON type name of a value, for error messages.
pub(crate) fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Joins a path and a key: `("backoff", "initial")` → `"backoff.initial"`.
pub(crate) fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

/// Parses a JSON document of at most [`MAX_DOCUMENT_BYTES`] bytes, mapping
/// syntax errors to `invalid_json`.
///
/// A key given twice in one object is `invalid_json` too: with the last one
/// silently winning, `{"max_attempts": 3, "max_attempts": 30}` would mean
/// one thing to a reviewer and another to the engine.
///
/// [`MAX_DOCUMENT_BYTES`]: crate::limits::MAX_DOCUMENT_BYTES
pub(crate) fn parse_json(text: &str) -> Result<Value> {
    crate::limits::check_bytes(text.len(), crate::limits::MAX_DOCUMENT_BYTES, "")?;
    parse_any_size(text)
}

/// [`parse_json`] without its size limit, for what the core stores rather
/// than reads as settings: records and dead letters (their bodies are the
/// application's), and snapshots (which have their own limit).
pub(crate) fn parse_any_size(text: &str) -> Result<Value> {
    crate::idempotency::json::parse_tree::<Value>(text)
        .map_err(|e| Error::new(ErrorCode::InvalidJson, "", format!("not valid json: {}", e.reason())))
}

/// Documents read numbers as serde_json does: an integer that fits 64 bits
/// exactly (`u64`, or `i64` when negative), `-0` and every other number a
/// double (correctly rounded); a number beyond a double's range is refused.
impl crate::idempotency::json::Tree for Value {
    fn null() -> Self {
        Value::Null
    }
    fn bool(b: bool) -> Self {
        Value::Bool(b)
    }
    fn string(s: String) -> Self {
        Value::String(s)
    }
    fn number(n: &crate::idempotency::json::NumberText<'_>) -> std::result::Result<Self, (ErrorCode, String)> {
        if n.integer {
            if let Ok(m) = n.digits.parse::<u64>() {
                match (n.negative, m) {
                    (false, m) => return Ok(Value::from(m)),
                    (true, 0) => return Ok(Value::from(-0.0)),
                    (true, m) if m <= 1 << 63 => return Ok(Value::from((m as i64).wrapping_neg())),
                    _ => {}
                }
            }
        }
        match crate::float::parse_f64(n.text) {
            Some(f) if f.is_finite() => Ok(crate::json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
            _ => Err((ErrorCode::InvalidJson, format!("number {} is out of range", n.text))),
        }
    }
    fn array(items: Vec<Self>) -> Self {
        Value::Array(items)
    }
    fn object(members: Vec<(String, Self)>) -> Self {
        Value::Object(members.into_iter().collect())
    }
}

/// The message of a `null` in typed options (see [`refuse_null`]).
pub const NULL_OPTION: &str = "must not be null or None (leave it out for the default)";

/// Refuses a `null` anywhere in typed options (a host's keyword arguments or
/// option object): there, leaving a key out gives its default, and a `null`
/// (Python's `None`) would silently do the same (docs/policy.md, "Typed
/// options" in docs/python.md and docs/js.md). A document keeps reading
/// `null` as "not given". A `null` at the top is left to the reader, which
/// takes or refuses it as the whole value.
///
/// # Errors
/// `invalid_type` naming the first `null` met (members in key order, then
/// list items), its path written `a.b[0].c` under `path`.
pub fn refuse_null(v: &Value, path: &str) -> Result<()> {
    match v {
        Value::Object(m) => m.iter().try_for_each(|(k, x)| inner_null(x, &join(path, k))),
        Value::Array(xs) => xs.iter().enumerate().try_for_each(|(i, x)| inner_null(x, &format!("{path}[{i}]"))),
        _ => Ok(()),
    }
}

fn inner_null(v: &Value, path: &str) -> Result<()> {
    match v {
        Value::Null => Err(Error::new(ErrorCode::InvalidType, path.to_owned(), NULL_OPTION)),
        _ => refuse_null(v, path),
    }
}

/// Lays a host's keyword options (`typed`, an object) over a document (an
/// object, or null for none): returns the merged object and the keys that
/// came from `typed`, whose bare numbers are durations in host units while
/// the document's are refused as in any document (`invalid_duration`).
///
/// # Errors
/// `invalid_type` when either is not an object.
pub fn typed_over(document: &Value, typed: &Value) -> Result<(Value, Vec<String>)> {
    let object = |v: &Value, field: &str| -> Result<Map<String, Value>> {
        match v {
            Value::Null => Ok(Map::new()),
            Value::Object(m) => Ok(m.clone()),
            other => Err(Error::new(
                ErrorCode::InvalidType,
                field.to_owned(),
                format!("must be an object, got {}", type_name(other)),
            )),
        }
    };
    let mut merged = object(document, "config")?;
    refuse_null(typed, "")?;
    let typed = object(typed, "")?;
    let keys: Vec<String> = typed.keys().cloned().collect();
    merged.extend(typed);
    Ok((Value::Object(merged), keys))
}

/// An object being read; every key must be taken before [`Obj::finish`].
pub(crate) struct Obj<'a> {
    map: &'a Map<String, Value>,
    path: String,
    taken: Vec<&'a str>,
    /// Nanoseconds per host unit when bare numbers are durations (typed
    /// options: 1e6 for JavaScript milliseconds, 1e9 for Python seconds);
    /// `None` in documents, where a bare number is refused.
    unit: Option<f64>,
    /// With `unit`: the only keys whose bare numbers are durations (the
    /// keyword options laid over a document, [`typed_over`]); `None`: all.
    typed_keys: Option<&'a [String]>,
}

impl<'a> Obj<'a> {
    /// Starts reading `v`, which must be an object, found at `path`.
    pub fn new(v: &'a Value, path: &str) -> Result<Self> {
        Obj::typed(v, path, None)
    }

    /// Starts reading `v` as [`Obj::new`] does, with bare numbers in
    /// duration fields read in host units of `unit` nanoseconds when given.
    pub fn typed(v: &'a Value, path: &str, unit: Option<f64>) -> Result<Self> {
        match v {
            Value::Object(map) => Ok(Obj { map, path: path.to_owned(), taken: Vec::new(), unit, typed_keys: None }),
            other => Err(Error::new(
                ErrorCode::InvalidType,
                path.to_owned(),
                format!("must be an object, got {}", type_name(other)),
            )),
        }
    }

    /// Starts reading `v` as [`Obj::typed`] does, with bare numbers read as
    /// durations only under `typed_keys` (the other keys are a document's).
    pub fn typed_only(v: &'a Value, path: &str, unit: f64, typed_keys: &'a [String]) -> Result<Self> {
        let mut o = Obj::typed(v, path, Some(unit))?;
        o.typed_keys = Some(typed_keys);
        Ok(o)
    }

    /// The host unit of a bare-number duration under `key` or its aliases,
    /// if bare numbers are durations there.
    fn unit_for(&self, key: &str, aliases: &[&str]) -> Option<f64> {
        let unit = self.unit?;
        match self.typed_keys {
            None => Some(unit),
            Some(keys) => std::iter::once(key)
                .chain(aliases.iter().copied())
                .any(|k| self.map.contains_key(k) && keys.iter().any(|t| t == k))
                .then_some(unit),
        }
    }

    /// Returns the path of `key` inside this object.
    pub fn field(&self, key: &str) -> String {
        join(&self.path, key)
    }

    /// Takes `key` or one of its aliases (at most one of them may be present).
    pub fn take(&mut self, key: &'a str, aliases: &[&'a str]) -> Result<Option<(&'a Value, String)>> {
        let mut found: Option<(&'a str, &'a Value)> = None;
        for name in std::iter::once(&key).chain(aliases.iter()) {
            if let Some((k, v)) = self.map.get_key_value(*name) {
                if let Some((prev, _)) = found {
                    return Err(Error::new(
                        ErrorCode::InvalidCombination,
                        self.field(k),
                        format!("is an alias of {prev}; give only one of them"),
                    ));
                }
                self.taken.push(k.as_str());
                found = Some((k.as_str(), v));
            }
        }
        Ok(found.filter(|(_, v)| !v.is_null()).map(|(k, v)| (v, self.field(k))))
    }

    /// Takes a duration string.
    pub fn duration(&mut self, key: &'a str, aliases: &[&'a str]) -> Result<Option<u64>> {
        let unit = self.unit_for(key, aliases);
        match self.take(key, aliases)? {
            None => Ok(None),
            Some((Value::String(s), f)) => parse_duration(s, &f).map(Some),
            Some((Value::Number(n), f)) if unit.is_some() => {
                let scale = unit.unwrap_or(1.0);
                crate::duration::from_host_f64(n.as_f64().unwrap_or(f64::NAN), scale, &f).map(Some)
            }
            Some((Value::Number(n), f)) => Err(Error::new(
                ErrorCode::InvalidDuration,
                f,
                format!(
                    "a bare number is ambiguous (ms or s?); write a string with a unit such as \"{n}ms\" or \"{n}s\""
                ),
            )),
            Some((other, f)) => Err(Error::new(
                ErrorCode::InvalidType,
                f,
                format!("must be a duration string such as \"250ms\", got {}", type_name(other)),
            )),
        }
    }

    /// Takes a boolean.
    pub fn bool(&mut self, key: &'a str, aliases: &[&'a str]) -> Result<Option<bool>> {
        match self.take(key, aliases)? {
            None => Ok(None),
            Some((Value::Bool(b), _)) => Ok(Some(*b)),
            Some((other, f)) => {
                Err(Error::new(ErrorCode::InvalidType, f, format!("must be a boolean, got {}", type_name(other))))
            }
        }
    }

    /// Takes a string.
    pub fn str(&mut self, key: &'a str, aliases: &[&'a str]) -> Result<Option<(&'a str, String)>> {
        match self.take(key, aliases)? {
            None => Ok(None),
            Some((Value::String(s), f)) => Ok(Some((s.as_str(), f))),
            Some((other, f)) => {
                Err(Error::new(ErrorCode::InvalidType, f, format!("must be a string, got {}", type_name(other))))
            }
        }
    }

    /// Takes a finite number.
    pub fn f64(&mut self, key: &'a str, aliases: &[&'a str]) -> Result<Option<f64>> {
        match self.take(key, aliases)? {
            None => Ok(None),
            Some((v, f)) => number(v, &f).map(Some),
        }
    }

    /// Takes an integer in `[min, max]`.
    pub fn uint(&mut self, key: &'a str, aliases: &[&'a str], min: u64, max: u64) -> Result<Option<u64>> {
        match self.take(key, aliases)? {
            None => Ok(None),
            Some((v, f)) => uint(v, &f, min, max).map(Some),
        }
    }

    /// Rejects every key not taken.
    pub fn finish(self) -> Result<()> {
        for k in self.map.keys() {
            if !self.taken.contains(&k.as_str()) {
                return Err(Error::new(ErrorCode::UnknownKey, self.field(k), "is not a known key"));
            }
        }
        Ok(())
    }
}

/// Reads a finite JSON number.
pub(crate) fn number(v: &Value, field: &str) -> Result<f64> {
    match v {
        Value::Number(n) => match n.as_f64() {
            Some(x) if x.is_finite() => Ok(x),
            _ => Err(Error::new(ErrorCode::OutOfRange, field.to_owned(), "must be a finite number")),
        },
        other => Err(Error::new(
            ErrorCode::InvalidType,
            field.to_owned(),
            format!("must be a number, got {}", type_name(other)),
        )),
    }
}

/// Reads an integer in `[min, max]`.
pub(crate) fn uint(v: &Value, field: &str, min: u64, max: u64) -> Result<u64> {
    match v {
        Value::Number(n) => {
            let got = if let Some(u) = n.as_u64() {
                Some(u)
            } else if n.as_i64().is_some() {
                None
            } else {
                // 3.0 is accepted as 3; 3.5 is not an integer.
                n.as_f64().filter(|x| x.fract() == 0.0 && *x >= 0.0 && *x < 1.8e19).map(|x| x as u64)
            };
            match got {
                Some(u) if (min..=max).contains(&u) => Ok(u),
                Some(u) => Err(Error::new(
                    ErrorCode::OutOfRange,
                    field.to_owned(),
                    format!("must be an integer in [{min}, {max}], got {u}"),
                )),
                None => Err(Error::new(
                    ErrorCode::OutOfRange,
                    field.to_owned(),
                    format!("must be an integer in [{min}, {max}], got {n}"),
                )),
            }
        }
        other => Err(Error::new(
            ErrorCode::InvalidType,
            field.to_owned(),
            format!("must be an integer, got {}", type_name(other)),
        )),
    }
}

/// Reads a `u64` written as a decimal string (JSON numbers stop at 2^53 in JavaScript).
pub(crate) fn u64_string(v: &Value, field: &str) -> Result<u64> {
    match v {
        Value::String(s) if !s.is_empty() && s.len() <= 20 && s.bytes().all(|b| b.is_ascii_digit()) => s
            .parse::<u64>()
            .map_err(|_| Error::new(ErrorCode::OutOfRange, field.to_owned(), "must be at most 18446744073709551615")),
        Value::Number(n) if n.as_u64().is_some_and(|u| u <= (1u64 << 53)) => Ok(n.as_u64().unwrap_or(0)),
        Value::Number(_) => Err(Error::new(
            ErrorCode::InvalidType,
            field.to_owned(),
            "write large integers as a decimal string (JavaScript numbers stop at 2^53)",
        )),
        other => Err(Error::new(
            ErrorCode::InvalidType,
            field.to_owned(),
            format!("must be a decimal string of an unsigned 64-bit integer, got {}", type_name(other)),
        )),
    }
}

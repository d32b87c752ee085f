//! Helpers shared by the vector runners.
#![allow(dead_code)]

use retrycore::json::Value;

/// One case of a vector file, with the file's `defaults` merged under it.
pub struct Case {
    /// The case as written, with file-level `defaults` filled in for keys it lacks.
    pub v: Value,
}

impl Case {
    pub fn new(raw: &Value, file: &Value) -> Case {
        let mut v = raw.clone();
        if let (Some(obj), Some(defaults)) = (v.as_object_mut(), file.get("defaults").and_then(Value::as_object)) {
            for (k, d) in defaults {
                if !obj.contains_key(k) {
                    obj.insert(k.clone(), d.clone());
                }
            }
        }
        Case { v }
    }

    pub fn get(&self, key: &str) -> Option<&Value> {
        self.v.get(key).filter(|x| !x.is_null())
    }

    pub fn str(&self, key: &str) -> Option<&str> {
        self.get(key).and_then(Value::as_str)
    }

    pub fn u64(&self, key: &str) -> Option<u64> {
        self.get(key).and_then(as_u64)
    }

    /// The error code a case expects, if it expects an error.
    pub fn expected_error(&self) -> Option<&str> {
        self.str("error")
    }

    pub fn expect(&self) -> &Value {
        self.v.get("expect").unwrap_or(&Value::Null)
    }
}

/// Reads an integer written as a JSON number or a decimal string (for values past 2^53).
pub fn as_u64(v: &Value) -> Option<u64> {
    match v {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => s.parse().ok(),
        _ => None,
    }
}

/// Compares an outcome against a case's `error` expectation.
pub fn check_error<T: std::fmt::Debug>(case: &Case, got: Result<T, retrycore::Error>) -> Result<Option<T>, String> {
    match (case.expected_error(), got) {
        (Some(code), Err(e)) if e.code() == code => Ok(None),
        (Some(code), Err(e)) => Err(format!("expected error {code}, got {} ({e})", e.code())),
        (Some(code), Ok(v)) => Err(format!("expected error {code}, got {v:?}")),
        (None, Err(e)) => Err(format!("unexpected error {} ({e})", e.code())),
        (None, Ok(v)) => Ok(Some(v)),
    }
}

/// Checks that `got` equals `want`, naming `what` otherwise.
pub fn eq<T: PartialEq + std::fmt::Debug>(what: &str, got: T, want: T) -> Result<(), String> {
    if got == want {
        Ok(())
    } else {
        Err(format!("{what}: got {got:?}, want {want:?}"))
    }
}

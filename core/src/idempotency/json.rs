//! A JSON tree for hosts, and a parser that keeps what a fingerprint needs.
//!
//! `crate::json::Value` cannot carry a non-finite number, forgets duplicate
//! keys and rounds integers beyond 64 bits on the way in, so bindings build a
//! [`JsonValue`] from host values instead, and JSON text goes through
//! [`parse_json`], which sees every number's spelling.

use super::jcs::{integer_is_exact, write_number};
use crate::{Error, ErrorCode, Result};
use std::fmt;

/// The deepest nesting of arrays and objects accepted: 128.
///
/// `[]` and `{}` are at depth 1, `[[]]` at depth 2; a scalar inside counts
/// nothing. Deeper input is refused with `too_deep` before any recursion goes
/// further, so hostile input (100 000 levels) costs neither stack nor much
/// memory.
pub const MAX_DEPTH: usize = crate::limits::MAX_DEPTH;

/// A JSON value as a host hands it over: numbers are doubles, objects keep
/// their members in the host's order.
///
/// Unlike `crate::json::Value`, a number may be non-finite and an object may
/// repeat a key, so that [`canonicalize_value`](super::canonicalize_value)
/// can refuse them with an error that says so, instead of the binding losing
/// them silently. Dropping, cloning and comparing a value never recurse, so
/// even a value built 100 000 levels deep is safe to hold; comparison is
/// structural and order-sensitive (compare canonical forms to ignore member
/// order). Because the type implements `Drop`, take the contents of a
/// variant with `std::mem::take` rather than by moving out of a `match`.
#[derive(Default)]
pub enum JsonValue {
    /// `null`.
    #[default]
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number, as a double.
    Number(f64),
    /// A string.
    String(String),
    /// An array.
    Array(Vec<JsonValue>),
    /// An object, members in order; keys should be unique.
    Object(Vec<(String, JsonValue)>),
}

impl JsonValue {
    fn is_container(&self) -> bool {
        matches!(self, JsonValue::Array(a) if !a.is_empty()) || matches!(self, JsonValue::Object(o) if !o.is_empty())
    }
}

impl Drop for JsonValue {
    fn drop(&mut self) {
        // Flatten the tree onto a heap stack so nested values are dropped
        // one level at a time, never by deep recursion.
        let has_nested = match self {
            JsonValue::Array(a) => a.iter().any(JsonValue::is_container),
            JsonValue::Object(o) => o.iter().any(|(_, v)| v.is_container()),
            _ => false,
        };
        if !has_nested {
            return;
        }
        let mut stack: Vec<JsonValue> = Vec::new();
        let take = |v: &mut JsonValue, stack: &mut Vec<JsonValue>| match v {
            JsonValue::Array(a) => stack.extend(a.drain(..).filter(JsonValue::is_container)),
            JsonValue::Object(o) => stack.extend(o.drain(..).map(|(_, v)| v).filter(JsonValue::is_container)),
            _ => {}
        };
        take(self, &mut stack);
        while let Some(mut v) = stack.pop() {
            take(&mut v, &mut stack);
        }
    }
}

impl Clone for JsonValue {
    fn clone(&self) -> Self {
        enum Frame<'a> {
            Arr(std::slice::Iter<'a, JsonValue>, Vec<JsonValue>),
            Obj(std::slice::Iter<'a, (String, JsonValue)>, Vec<(String, JsonValue)>, String),
        }
        let mut stack: Vec<Frame<'_>> = Vec::new();
        let mut cur = self;
        loop {
            let mut produced = match cur {
                JsonValue::Null => Some(JsonValue::Null),
                JsonValue::Bool(b) => Some(JsonValue::Bool(*b)),
                JsonValue::Number(n) => Some(JsonValue::Number(*n)),
                JsonValue::String(s) => Some(JsonValue::String(s.clone())),
                JsonValue::Array(a) => {
                    stack.push(Frame::Arr(a.iter(), Vec::with_capacity(a.len())));
                    None
                }
                JsonValue::Object(o) => {
                    stack.push(Frame::Obj(o.iter(), Vec::with_capacity(o.len()), String::new()));
                    None
                }
            };
            loop {
                let Some(top) = stack.last_mut() else {
                    return produced.unwrap_or_default();
                };
                match top {
                    Frame::Arr(it, out) => {
                        if let Some(v) = produced.take() {
                            out.push(v);
                        }
                        if let Some(next) = it.next() {
                            cur = next;
                            break;
                        }
                    }
                    Frame::Obj(it, out, key) => {
                        if let Some(v) = produced.take() {
                            out.push((std::mem::take(key), v));
                        }
                        if let Some((k, next)) = it.next() {
                            key.clone_from(k);
                            cur = next;
                            break;
                        }
                    }
                }
                produced = match stack.pop() {
                    Some(Frame::Arr(_, out)) => Some(JsonValue::Array(out)),
                    Some(Frame::Obj(_, out, _)) => Some(JsonValue::Object(out)),
                    None => None,
                };
            }
        }
    }
}

impl PartialEq for JsonValue {
    fn eq(&self, other: &Self) -> bool {
        let mut stack = vec![(self, other)];
        while let Some(pair) = stack.pop() {
            match pair {
                (JsonValue::Null, JsonValue::Null) => {}
                (JsonValue::Bool(a), JsonValue::Bool(b)) if a == b => {}
                (JsonValue::Number(a), JsonValue::Number(b)) if a == b => {}
                (JsonValue::String(a), JsonValue::String(b)) if a == b => {}
                (JsonValue::Array(a), JsonValue::Array(b)) if a.len() == b.len() => stack.extend(a.iter().zip(b)),
                (JsonValue::Object(a), JsonValue::Object(b)) if a.len() == b.len() => {
                    for ((ka, va), (kb, vb)) in a.iter().zip(b) {
                        if ka != kb {
                            return false;
                        }
                        stack.push((va, vb));
                    }
                }
                _ => return false,
            }
        }
        true
    }
}

impl fmt::Debug for JsonValue {
    /// Writes the value as compact JSON text in member order (non-finite
    /// numbers as `NaN`/`inf`), eliding anything deeper than [`MAX_DEPTH`].
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fn go(v: &JsonValue, f: &mut fmt::Formatter<'_>, depth: usize) -> fmt::Result {
            match v {
                JsonValue::Null => f.write_str("null"),
                JsonValue::Bool(b) => write!(f, "{b}"),
                JsonValue::Number(n) if n.is_finite() => {
                    let mut s = String::new();
                    write_number(&mut s, *n);
                    f.write_str(&s)
                }
                JsonValue::Number(n) => write!(f, "{n}"),
                JsonValue::String(s) => write!(f, "{s:?}"),
                _ if depth >= MAX_DEPTH => f.write_str("…"),
                JsonValue::Array(a) => {
                    f.write_str("[")?;
                    for (i, x) in a.iter().enumerate() {
                        if i > 0 {
                            f.write_str(",")?;
                        }
                        go(x, f, depth + 1)?;
                    }
                    f.write_str("]")
                }
                JsonValue::Object(o) => {
                    f.write_str("{")?;
                    for (i, (k, x)) in o.iter().enumerate() {
                        if i > 0 {
                            f.write_str(",")?;
                        }
                        write!(f, "{k:?}:")?;
                        go(x, f, depth + 1)?;
                    }
                    f.write_str("}")
                }
            }
        }
        go(self, f, 0)
    }
}

impl TryFrom<&crate::json::Value> for JsonValue {
    type Error = Error;

    /// Converts a `crate::json::Value`, refusing integers that a double cannot
    /// hold exactly (`invalid_number`) and nesting deeper than [`MAX_DEPTH`]
    /// (`too_deep`).
    fn try_from(v: &crate::json::Value) -> Result<Self> {
        fn go(v: &crate::json::Value, depth: usize) -> Result<JsonValue> {
            use crate::json::Value as V;
            if matches!(v, V::Array(_) | V::Object(_)) && depth >= MAX_DEPTH {
                return Err(Error::new(ErrorCode::TooDeep, "value", format!("nesting deeper than {MAX_DEPTH} levels")));
            }
            Ok(match v {
                V::Null => JsonValue::Null,
                V::Bool(b) => JsonValue::Bool(*b),
                V::Number(n) => {
                    JsonValue::Number(serde_number(n).map_err(|r| Error::new(ErrorCode::InvalidNumber, "value", r))?)
                }
                V::String(s) => JsonValue::String(s.clone()),
                V::Array(a) => JsonValue::Array(a.iter().map(|x| go(x, depth + 1)).collect::<Result<_>>()?),
                V::Object(o) => {
                    JsonValue::Object(o.iter().map(|(k, x)| Ok((k.clone(), go(x, depth + 1)?))).collect::<Result<_>>()?)
                }
            })
        }
        go(v, 0)
    }
}

/// Converts a `crate::json::Number` to the double it denotes, or says why it cannot.
///
/// Integers are accepted when a double holds them exactly, or when their
/// decimal spelling is exactly how ECMAScript prints the nearest double
/// (`123456789012345680000`), so that canonical output parses back.
pub(crate) fn serde_number(n: &crate::json::Number) -> std::result::Result<f64, String> {
    if let Some(u) = n.as_u64() {
        let f = u as f64;
        if u <= 1 << 53 || integer_is_exact(&u.to_string(), f) {
            return Ok(f);
        }
        return Err(format!("integer {u} cannot be held exactly by a double"));
    }
    if let Some(i) = n.as_i64() {
        let f = i as f64;
        if i >= -(1 << 53) || integer_is_exact(&i.unsigned_abs().to_string(), -f) {
            return Ok(f);
        }
        return Err(format!("integer {i} cannot be held exactly by a double"));
    }
    match n.as_f64() {
        Some(f) if f.is_finite() => Ok(f),
        _ => Err(format!("number {n} is not finite")),
    }
}

/// Decodes UTF-16 code units (a JavaScript or Java string) into a `String`.
///
/// # Errors
/// `invalid_string` when a surrogate is unpaired, naming its 0-based index:
/// such a string has no UTF-8 form, and RFC 8785 refuses it.
pub fn string_from_utf16(units: &[u16]) -> Result<String> {
    let mut out = String::with_capacity(units.len());
    let mut pos = 0;
    for r in char::decode_utf16(units.iter().copied()) {
        match r {
            Ok(c) => {
                out.push(c);
                pos += c.len_utf16();
            }
            Err(e) => {
                return Err(Error::new(
                    ErrorCode::InvalidString,
                    "value",
                    format!("lone surrogate U+{:04X} at index {pos}", e.unpaired_surrogate()),
                ));
            }
        }
    }
    Ok(out)
}

/// Parses JSON text (RFC 8259) into a [`JsonValue`], without recursion.
///
/// Beyond plain syntax, refuses what a fingerprint must not silently change:
/// numbers outside the range of a double (`1e400`), integer literals that a
/// double cannot hold exactly (`9007199254740993`; an integer is accepted if
/// exact or if it is exactly how ECMAScript prints the nearest double, such as
/// `123456789012345680000`), `\u` escapes that leave a lone surrogate,
/// duplicate keys in one object, and nesting deeper than [`MAX_DEPTH`].
/// Numbers with a fraction or an exponent round to the nearest double, as
/// every JSON parser does.
///
/// # Errors
/// `invalid_json` (syntax, duplicate key), `invalid_number`,
/// `invalid_string`, `too_deep`; each message gives the 0-based byte position.
pub fn parse_json(text: &str) -> Result<JsonValue> {
    parse_tree(text)
}

/// A number as written: its whole text, its integer digits (without the
/// sign), whether it has a sign and whether it is an integer (no fraction,
/// no exponent). The syntax is already checked.
pub(crate) struct NumberText<'a> {
    pub text: &'a str,
    pub digits: &'a str,
    pub negative: bool,
    pub integer: bool,
}

/// A tree [`parse_tree`] builds: [`JsonValue`] (fingerprints: doubles, with
/// exactness checks) or the document model (`crate::json::Value` for now:
/// exact 64-bit integers; see `crate::doc::parse_json`). One parser for both,
/// so they agree on syntax, escapes, duplicates and depth.
pub(crate) trait Tree: Sized {
    /// `null`.
    fn null() -> Self;
    /// `true` or `false`.
    fn bool(b: bool) -> Self;
    /// A string.
    fn string(s: String) -> Self;
    /// A number, or the code and text of why the tree refuses it.
    fn number(n: &NumberText<'_>) -> std::result::Result<Self, (ErrorCode, String)>;
    /// An array.
    fn array(items: Vec<Self>) -> Self;
    /// An object; its keys are unique.
    fn object(members: Vec<(String, Self)>) -> Self;
}

impl Tree for JsonValue {
    fn null() -> Self {
        JsonValue::Null
    }
    fn bool(b: bool) -> Self {
        JsonValue::Bool(b)
    }
    fn string(s: String) -> Self {
        JsonValue::String(s)
    }
    fn number(n: &NumberText<'_>) -> std::result::Result<Self, (ErrorCode, String)> {
        if n.integer && n.digits.len() <= 15 {
            // Exact in a double: no rounding to do.
            let mag = n.digits.bytes().fold(0i64, |a, c| a * 10 + (c - b'0') as i64);
            return Ok(JsonValue::Number(if n.negative { -(mag as f64) } else { mag as f64 }));
        }
        let f = crate::float::parse_f64(n.text).ok_or((ErrorCode::InvalidJson, "malformed number".to_owned()))?;
        if !f.is_finite() {
            return Err((ErrorCode::InvalidNumber, format!("number {} is beyond the range of a double", n.text)));
        }
        if n.integer && !integer_is_exact(n.digits, f.abs()) {
            return Err((ErrorCode::InvalidNumber, format!("integer {} cannot be held exactly by a double", n.text)));
        }
        Ok(JsonValue::Number(f))
    }
    fn array(items: Vec<Self>) -> Self {
        JsonValue::Array(items)
    }
    fn object(members: Vec<(String, Self)>) -> Self {
        JsonValue::Object(members)
    }
}

/// Parses JSON text into a [`Tree`], without recursion: the syntax, escapes,
/// lone surrogates, duplicate keys and depth as [`parse_json`] documents;
/// numbers as the tree reads them.
pub(crate) fn parse_tree<T: Tree>(text: &str) -> Result<T> {
    // Open containers; their finished children wait on two shared stacks
    // and move into an exactly sized Vec when the container closes.
    enum Frame {
        Arr(usize),
        Obj(usize, String, usize),
    }
    let mut p = Lexer { s: text, b: text.as_bytes(), pos: 0 };
    let mut stack: Vec<Frame> = Vec::new();
    let mut items: Vec<T> = Vec::new();
    let mut members: Vec<(String, T)> = Vec::new();
    'value: loop {
        p.skip_ws();
        let mut v = match p.peek() {
            Some(c @ (b'[' | b'{')) => {
                if stack.len() >= MAX_DEPTH {
                    return Err(p.err(ErrorCode::TooDeep, &format!("nesting deeper than {MAX_DEPTH} levels")));
                }
                let start = p.pos;
                p.pos += 1;
                p.skip_ws();
                if c == b'[' {
                    if p.peek() == Some(b']') {
                        p.pos += 1;
                        T::array(Vec::new())
                    } else {
                        stack.push(Frame::Arr(items.len()));
                        continue 'value;
                    }
                } else if p.peek() == Some(b'}') {
                    p.pos += 1;
                    T::object(Vec::new())
                } else {
                    let key = p.key()?;
                    stack.push(Frame::Obj(members.len(), key, start));
                    continue 'value;
                }
            }
            Some(b'"') => T::string(p.string()?),
            Some(b't') => p.literal("true").map(|()| T::bool(true))?,
            Some(b'f') => p.literal("false").map(|()| T::bool(false))?,
            Some(b'n') => p.literal("null").map(|()| T::null())?,
            Some(b'-' | b'0'..=b'9') => p.number()?,
            Some(_) => return Err(p.unexpected("a value")),
            None => return Err(p.err(ErrorCode::InvalidJson, "unexpected end of input, expected a value")),
        };
        // Attach the finished value to its parent, closing parents as they end.
        loop {
            match stack.last_mut() {
                None => {
                    p.skip_ws();
                    if p.pos != p.b.len() {
                        return Err(p.unexpected("the end of input"));
                    }
                    return Ok(v);
                }
                Some(Frame::Arr(_)) => {
                    items.push(v);
                    p.skip_ws();
                    match p.peek() {
                        Some(b',') => {
                            p.pos += 1;
                            continue 'value;
                        }
                        Some(b']') => p.pos += 1,
                        _ => return Err(p.unexpected("',' or ']'")),
                    }
                }
                Some(Frame::Obj(_, key, _)) => {
                    members.push((std::mem::take(key), v));
                    p.skip_ws();
                    match p.peek() {
                        Some(b',') => {
                            p.pos += 1;
                            p.skip_ws();
                            *key = p.key()?;
                            continue 'value;
                        }
                        Some(b'}') => p.pos += 1,
                        _ => return Err(p.unexpected("',' or '}'")),
                    }
                }
            }
            v = match stack.pop() {
                Some(Frame::Arr(base)) => T::array(items.drain(base..).collect()),
                Some(Frame::Obj(base, _, start)) => {
                    if let Some(k) = find_duplicate(&members[base..]) {
                        return Err(Error::new(
                            ErrorCode::InvalidJson,
                            "json",
                            format!("duplicate key {k:?} in the object at position {start}"),
                        ));
                    }
                    T::object(members.drain(base..).collect())
                }
                None => T::null(),
            };
        }
    }
}

/// Returns a key that occurs twice among `members`, if any.
pub(crate) fn find_duplicate<V>(members: &[(String, V)]) -> Option<&str> {
    if members.len() <= 16 {
        for (i, (k, _)) in members.iter().enumerate() {
            if members[..i].iter().any(|(j, _)| j == k) {
                return Some(k);
            }
        }
        return None;
    }
    let mut keys: Vec<&str> = members.iter().map(|(k, _)| k.as_str()).collect();
    keys.sort_unstable();
    keys.windows(2).find(|w| w[0] == w[1]).map(|w| w[0])
}

struct Lexer<'a> {
    s: &'a str,
    b: &'a [u8],
    pos: usize,
}

impl Lexer<'_> {
    #[inline]
    fn peek(&self) -> Option<u8> {
        self.b.get(self.pos).copied()
    }

    #[inline]
    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.pos += 1;
        }
    }

    fn err(&self, code: ErrorCode, what: &str) -> Error {
        Error::new(code, "json", format!("{what} at position {}", self.pos))
    }

    fn unexpected(&self, expected: &str) -> Error {
        match self.s.get(self.pos..).and_then(|r| r.chars().next()) {
            Some(c) => self.err(
                ErrorCode::InvalidJson,
                &format!("unexpected {}, expected {expected}", super::key::describe_char(c)),
            ),
            None => self.err(ErrorCode::InvalidJson, &format!("unexpected end of input, expected {expected}")),
        }
    }

    fn literal(&mut self, word: &str) -> Result<()> {
        if self.b[self.pos..].starts_with(word.as_bytes()) {
            self.pos += word.len();
            Ok(())
        } else {
            Err(self.unexpected("a value"))
        }
    }

    /// A member name and its colon.
    fn key(&mut self) -> Result<String> {
        if self.peek() != Some(b'"') {
            return Err(self.unexpected("a string key"));
        }
        let k = self.string()?;
        self.skip_ws();
        if self.peek() != Some(b':') {
            return Err(self.unexpected("':'"));
        }
        self.pos += 1;
        Ok(k)
    }

    fn hex4(&mut self) -> Result<u16> {
        let mut v: u16 = 0;
        for _ in 0..4 {
            let d = match self.peek() {
                Some(c @ b'0'..=b'9') => c - b'0',
                Some(c @ b'a'..=b'f') => c - b'a' + 10,
                Some(c @ b'A'..=b'F') => c - b'A' + 10,
                _ => return Err(self.unexpected("a hex digit")),
            };
            v = v << 4 | d as u16;
            self.pos += 1;
        }
        Ok(v)
    }

    /// A string, with the opening quote at `pos`.
    fn string(&mut self) -> Result<String> {
        self.pos += 1;
        let mut out = String::new();
        loop {
            let run_start = self.pos;
            let plain = |c: u8| c != b'"' && c != b'\\' && c >= 0x20;
            while self.pos + 16 <= self.b.len()
                && self.b[self.pos..self.pos + 16].iter().fold(true, |ok, &c| ok & plain(c))
            {
                self.pos += 16;
            }
            while self.peek().is_some_and(plain) {
                self.pos += 1;
            }
            // The run ends on an ASCII byte or the end, so it is whole UTF-8.
            if out.is_empty() && self.peek() == Some(b'"') {
                self.pos += 1;
                return Ok(self.s[run_start..self.pos - 1].to_owned());
            }
            out.push_str(&self.s[run_start..self.pos]);
            match self.peek() {
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    self.pos += 1;
                    let c = match self.peek() {
                        Some(b'"') => '"',
                        Some(b'\\') => '\\',
                        Some(b'/') => '/',
                        Some(b'b') => '\u{8}',
                        Some(b'f') => '\u{c}',
                        Some(b'n') => '\n',
                        Some(b'r') => '\r',
                        Some(b't') => '\t',
                        Some(b'u') => {
                            let at = self.pos - 1;
                            self.pos += 1;
                            let hi = self.hex4()?;
                            let c = if (0xd800..0xdc00).contains(&hi) {
                                if self.b[self.pos..].starts_with(b"\\u") {
                                    self.pos += 2;
                                    let lo = self.hex4()?;
                                    if !(0xdc00..0xe000).contains(&lo) {
                                        return Err(lone(hi, at));
                                    }
                                    0x10000 + ((hi as u32 - 0xd800) << 10) + (lo as u32 - 0xdc00)
                                } else {
                                    return Err(lone(hi, at));
                                }
                            } else if (0xdc00..0xe000).contains(&hi) {
                                return Err(lone(hi, at));
                            } else {
                                hi as u32
                            };
                            out.push(char::from_u32(c).unwrap_or('\u{fffd}'));
                            continue;
                        }
                        _ => return Err(self.unexpected("an escape character")),
                    };
                    out.push(c);
                    self.pos += 1;
                }
                Some(_) => return Err(self.unexpected("a string character (control characters must be escaped)")),
                None => return Err(self.err(ErrorCode::InvalidJson, "unterminated string")),
            }
        }
    }

    /// A number: its syntax checked here, its value read by the tree.
    fn number<T: Tree>(&mut self) -> Result<T> {
        let start = self.pos;
        let digits = |l: &mut Self| {
            let s = l.pos;
            while let Some(b'0'..=b'9') = l.peek() {
                l.pos += 1;
            }
            l.pos - s
        };
        let negative = self.peek() == Some(b'-');
        if negative {
            self.pos += 1;
        }
        let int_start = self.pos;
        let n = digits(self);
        if n == 0 {
            return Err(self.unexpected("a digit"));
        }
        if n > 1 && self.b[int_start] == b'0' {
            self.pos = int_start;
            return Err(self.err(ErrorCode::InvalidJson, "leading zero in a number"));
        }
        let mut integer = true;
        if self.peek() == Some(b'.') {
            integer = false;
            self.pos += 1;
            if digits(self) == 0 {
                return Err(self.unexpected("a digit after '.'"));
            }
        }
        if let Some(b'e' | b'E') = self.peek() {
            integer = false;
            self.pos += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.pos += 1;
            }
            if digits(self) == 0 {
                return Err(self.unexpected("a digit in the exponent"));
            }
        }
        let text =
            NumberText { text: &self.s[start..self.pos], digits: &self.s[int_start..int_start + n], negative, integer };
        T::number(&text).map_err(|(code, what)| {
            self.pos = start;
            self.err(code, &what)
        })
    }
}

fn lone(unit: u16, at: usize) -> Error {
    Error::new(ErrorCode::InvalidString, "json", format!("lone surrogate \\u{unit:04x} at position {at}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_values() {
        let v = parse_json(r#" {"a": [1, 2.5, -0, true, null, "x\u00e9\ud83d\ude00"], "b": {}} "#).unwrap();
        let JsonValue::Object(o) = &v else { panic!() };
        assert_eq!(o.len(), 2);
        assert_eq!(o[0].0, "a");
        let JsonValue::Array(a) = &o[0].1 else { panic!() };
        assert_eq!(a[5], JsonValue::String("x\u{e9}\u{1f600}".into()));
        assert_eq!(v.clone(), v);
    }

    #[test]
    fn refuses_what_would_change_silently() {
        let code = |t: &str| parse_json(t).unwrap_err().code();
        assert_eq!(code("9007199254740993"), "invalid_number");
        assert_eq!(code("-9007199254740993"), "invalid_number");
        assert!(parse_json("9007199254740992").is_ok());
        assert!(parse_json("123456789012345680000").is_ok());
        assert!(parse_json("18446744073709551616").is_ok());
        assert_eq!(code("123456789012345678901"), "invalid_number");
        assert_eq!(code("1e400"), "invalid_number");
        assert!(parse_json("1e-400").is_ok());
        assert_eq!(code(r#""\ud800""#), "invalid_string");
        assert_eq!(code(r#""\udc00""#), "invalid_string");
        assert_eq!(code(r#""\ud800\u0041""#), "invalid_string");
        assert_eq!(code(r#"{"a":1,"a":2}"#), "invalid_json");
        assert_eq!(code("01"), "invalid_json");
        assert_eq!(code("[1,]"), "invalid_json");
        assert_eq!(code("\"a\u{1}\""), "invalid_json");
        assert_eq!(code("1 2"), "invalid_json");
        assert_eq!(code(""), "invalid_json");
        assert_eq!(code("NaN"), "invalid_json");
    }

    #[test]
    fn depth_limit_without_recursion() {
        let ok = "[".repeat(MAX_DEPTH) + &"]".repeat(MAX_DEPTH);
        assert!(parse_json(&ok).is_ok());
        let deep = "[".repeat(MAX_DEPTH + 1) + &"]".repeat(MAX_DEPTH + 1);
        assert_eq!(parse_json(&deep).unwrap_err().code(), "too_deep");
        let hostile = "{\"a\":".repeat(100_000) + "1" + &"}".repeat(100_000);
        assert_eq!(parse_json(&hostile).unwrap_err().code(), "too_deep");
    }

    #[test]
    fn deep_values_drop_clone_and_compare_without_recursion() {
        let mut v = JsonValue::Null;
        for i in 0..200_000 {
            v = if i % 2 == 0 {
                JsonValue::Array(vec![v, JsonValue::Bool(true)])
            } else {
                JsonValue::Object(vec![("k".into(), v)])
            };
        }
        let w = v.clone();
        assert!(v == w);
        drop(v);
        drop(w);
    }

    proptest::proptest! {
        #[test]
        fn never_panics_on_arbitrary_text(text in "\\PC{0,64}") {
            let _ = parse_json(&text);
        }

        #[test]
        fn never_panics_on_json_like_text(text in r#"[\[\]{}",:0-9eE+\-. a-z\\]{0,64}"#) {
            if let Ok(v) = parse_json(&text) {
                // Whatever parses also canonicalises, and the result parses again.
                let c = crate::idempotency::canonicalize_value(&v).unwrap();
                proptest::prop_assert_eq!(crate::idempotency::canonicalize_json(&c).unwrap(), c);
            }
        }
    }

    #[test]
    fn utf16_strings() {
        assert_eq!(string_from_utf16(&[0x61, 0xd83d, 0xde00]).unwrap(), "a\u{1f600}");
        let e = string_from_utf16(&[0x61, 0xd83d, 0x62]).unwrap_err();
        assert_eq!(e.code(), "invalid_string");
        assert!(e.reason().contains("index 1"), "{e}");
        assert_eq!(string_from_utf16(&[0xde00]).unwrap_err().code(), "invalid_string");
    }
}

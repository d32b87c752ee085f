//! The `Idempotency-Key` header as an RFC 8941 structured-field string.
//!
//! The IETF draft (`draft-ietf-httpapi-idempotency-key-header`) defines the
//! field as an Item whose value is a String: `Idempotency-Key: "8e03978e"`.
//! Stripe and many others send the bare key instead (`Idempotency-Key:
//! 8e03978e`); [`HeaderForm::SfStringOrToken`] accepts that form too.

use super::key::{describe_char, validate_key, DEFAULT_MAX_KEY_LEN};
use crate::{Error, ErrorCode, Result};

/// The forms of `Idempotency-Key` header value that [`parse_header`] accepts.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
pub enum HeaderForm {
    /// Only an RFC 8941 sf-string, `"key"`, as the IETF draft requires.
    #[default]
    SfString,
    /// An sf-string, or else the whole value taken as the bare key (Stripe's
    /// form). A value that starts with `"` is always read as an sf-string.
    SfStringOrToken,
}

/// Formats a key as the value of an `Idempotency-Key` header: an RFC 8941 sf-string.
///
/// The key is wrapped in double quotes with `\` and `"` escaped:
/// `format_header("a\"b")` gives `"a\"b"` (with the quotes).
///
/// # Errors
/// Any error of [`validate_key`] with the default maximum of 255 characters:
/// a key that is not visible ASCII could not be sent as an sf-string.
pub fn format_header(key: &str) -> Result<String> {
    validate_key(key, DEFAULT_MAX_KEY_LEN)?;
    let mut out = String::with_capacity(key.len() + 2);
    out.push('"');
    for c in key.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    Ok(out)
}

/// Parses the value of an `Idempotency-Key` header and returns the key.
///
/// The value is parsed as an RFC 8941 Item (§4.2): leading and trailing
/// spaces are discarded (horizontal tabs too, which HTTP's field parsing
/// removes before RFC 8941 sees the value), the bare item must be a String,
/// and any parameters after it (`"k";v=1`) must be well formed and are then
/// ignored — RFC 8941 makes parameters part of every Item and extensions rely
/// on unknown ones being skipped, so rejecting them would refuse valid
/// values. Nothing but spaces may follow. With [`HeaderForm::SfStringOrToken`]
/// a value that does not start with `"` is taken whole, after trimming, as the
/// key. The key then goes through [`validate_key`] with the default maximum.
///
/// # Errors
/// - `invalid_header` when the value is empty, is not ASCII, or is not a
///   well-formed sf-string Item (an unterminated string, an escape other than
///   `\"` and `\\`, a control character, trailing characters, a malformed
///   parameter, a list of several values); the message gives the 0-based
///   byte position;
/// - `invalid_key` when the string parses but is not a valid key (empty, a
///   space inside, longer than 255 characters, `sha256:` prefix).
pub fn parse_header(value: &str, form: HeaderForm) -> Result<String> {
    let bytes = value.as_bytes();
    let mut start = 0;
    let mut end = bytes.len();
    while start < end && matches!(bytes[start], b' ' | b'\t') {
        start += 1;
    }
    while end > start && matches!(bytes[end - 1], b' ' | b'\t') {
        end -= 1;
    }
    if start == end {
        return Err(Error::new(ErrorCode::InvalidHeader, "idempotency_key", "is empty"));
    }
    if bytes[start] != b'"' {
        if form == HeaderForm::SfStringOrToken {
            let key = &value[start..end];
            validate_key(key, DEFAULT_MAX_KEY_LEN)?;
            return Ok(key.to_owned());
        }
        return Err(header_error(
            value,
            start,
            "expected an sf-string (a key in double quotes); a bare key is accepted only in the sf-string-or-token form",
        ));
    }
    if let Some(pos) = bytes.iter().position(|b| !b.is_ascii()) {
        return Err(header_error(value, pos, "is not ascii"));
    }
    let mut p = Parser { s: value, b: bytes, pos: start, end };
    let key = p.string()?;
    p.parameters()?;
    if p.pos != p.end {
        return Err(p.error("unexpected characters after the string"));
    }
    validate_key(&key, DEFAULT_MAX_KEY_LEN)?;
    Ok(key)
}

fn header_error(value: &str, pos: usize, what: &str) -> Error {
    let found = match value[pos..].chars().next() {
        Some(c) => format!(" ({})", describe_char(c)),
        None => String::new(),
    };
    Error::new(ErrorCode::InvalidHeader, "idempotency_key", format!("{what} at position {pos}{found}"))
}

/// An RFC 8941 parser over `b[pos..end]`, all ASCII.
struct Parser<'a> {
    s: &'a str,
    b: &'a [u8],
    pos: usize,
    end: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        (self.pos < self.end).then(|| self.b[self.pos])
    }

    fn error(&self, what: &str) -> Error {
        if self.pos >= self.end {
            Error::new(ErrorCode::InvalidHeader, "idempotency_key", format!("{what} at position {}", self.pos))
        } else {
            header_error(self.s, self.pos, what)
        }
    }

    /// RFC 8941 §4.2.5, with the opening quote at `pos`.
    fn string(&mut self) -> Result<String> {
        self.pos += 1;
        let mut out = String::new();
        loop {
            let Some(c) = self.peek() else {
                return Err(self.error("unterminated string"));
            };
            match c {
                b'\\' => {
                    self.pos += 1;
                    match self.peek() {
                        Some(n @ (b'"' | b'\\')) => out.push(n as char),
                        Some(_) => return Err(self.error("invalid escape (only \\\" and \\\\ are allowed)")),
                        None => return Err(self.error("unterminated escape")),
                    }
                }
                b'"' => {
                    self.pos += 1;
                    return Ok(out);
                }
                0x20..=0x7e => out.push(c as char),
                _ => return Err(self.error("invalid character in string")),
            }
            self.pos += 1;
        }
    }

    /// RFC 8941 §4.2.3.2: `*( ";" *SP key [ "=" bare-item ] )`.
    fn parameters(&mut self) -> Result<()> {
        while self.peek() == Some(b';') {
            self.pos += 1;
            while self.peek() == Some(b' ') {
                self.pos += 1;
            }
            match self.peek() {
                Some(b'a'..=b'z' | b'*') => self.pos += 1,
                _ => return Err(self.error("expected a parameter key")),
            }
            while let Some(b'a'..=b'z' | b'0'..=b'9' | b'_' | b'-' | b'.' | b'*') = self.peek() {
                self.pos += 1;
            }
            if self.peek() == Some(b'=') {
                self.pos += 1;
                self.bare_item()?;
            }
        }
        Ok(())
    }

    /// RFC 8941 §4.2.3.1 (and RFC 9651's dates and display strings), value discarded.
    fn bare_item(&mut self) -> Result<()> {
        match self.peek() {
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(b'"') => self.string().map(drop),
            Some(b'A'..=b'Z' | b'a'..=b'z' | b'*') => {
                self.pos += 1;
                while let Some(c) = self.peek() {
                    if c.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~:/".contains(&c) {
                        self.pos += 1;
                    } else {
                        break;
                    }
                }
                Ok(())
            }
            Some(b':') => {
                self.pos += 1;
                while let Some(c) = self.peek() {
                    if c == b':' {
                        self.pos += 1;
                        return Ok(());
                    }
                    if !(c.is_ascii_alphanumeric() || matches!(c, b'+' | b'/' | b'=')) {
                        return Err(self.error("invalid character in byte sequence"));
                    }
                    self.pos += 1;
                }
                Err(self.error("unterminated byte sequence"))
            }
            Some(b'?') => {
                self.pos += 1;
                match self.peek() {
                    Some(b'0' | b'1') => {
                        self.pos += 1;
                        Ok(())
                    }
                    _ => Err(self.error("invalid boolean")),
                }
            }
            Some(b'@') => {
                self.pos += 1;
                let at = self.pos;
                self.number()?;
                if self.b[at..self.pos].contains(&b'.') {
                    self.pos = at;
                    return Err(self.error("a date must be an integer"));
                }
                Ok(())
            }
            Some(b'%') => self.display_string(),
            _ => Err(self.error("expected a parameter value")),
        }
    }

    /// RFC 8941 §4.2.4.
    fn number(&mut self) -> Result<()> {
        let start = self.pos;
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        if !matches!(self.peek(), Some(b'0'..=b'9')) {
            return Err(self.error("expected a digit"));
        }
        let (mut int_digits, mut frac_digits, mut decimal) = (0usize, 0usize, false);
        while let Some(c) = self.peek() {
            match c {
                b'0'..=b'9' if decimal => frac_digits += 1,
                b'0'..=b'9' => int_digits += 1,
                b'.' if !decimal => {
                    if int_digits > 12 {
                        return Err(self.error("decimal with more than 12 integer digits"));
                    }
                    decimal = true;
                }
                _ => break,
            }
            self.pos += 1;
        }
        let ok = if decimal { (1..=3).contains(&frac_digits) } else { int_digits <= 15 };
        if ok {
            Ok(())
        } else {
            self.pos = start;
            Err(self.error("invalid number"))
        }
    }

    /// RFC 9651 §4.2.10, `%"` at `pos`.
    fn display_string(&mut self) -> Result<()> {
        self.pos += 1;
        if self.peek() != Some(b'"') {
            return Err(self.error("expected '\"' after '%'"));
        }
        self.pos += 1;
        let mut bytes = Vec::new();
        loop {
            match self.peek() {
                None => return Err(self.error("unterminated display string")),
                Some(b'"') => {
                    self.pos += 1;
                    return match std::str::from_utf8(&bytes) {
                        Ok(_) => Ok(()),
                        Err(_) => Err(self.error("display string is not utf-8")),
                    };
                }
                Some(b'%') => {
                    let hex = |c: u8| match c {
                        b'0'..=b'9' => Some(c - b'0'),
                        b'a'..=b'f' => Some(c - b'a' + 10),
                        _ => None,
                    };
                    let hi = self.b.get(self.pos + 1).filter(|_| self.pos + 1 < self.end).and_then(|&c| hex(c));
                    let lo = self.b.get(self.pos + 2).filter(|_| self.pos + 2 < self.end).and_then(|&c| hex(c));
                    match (hi, lo) {
                        (Some(h), Some(l)) => bytes.push(h << 4 | l),
                        _ => return Err(self.error("invalid percent escape")),
                    }
                    self.pos += 3;
                }
                Some(c @ 0x20..=0x7e) => {
                    bytes.push(c);
                    self.pos += 1;
                }
                Some(_) => return Err(self.error("invalid character in display string")),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(v: &str) -> Result<String> {
        parse_header(v, HeaderForm::SfString)
    }

    #[test]
    fn formats_and_parses_round_trip() {
        for k in ["8e03978e-40d5-43e8-bc93-6894a57f9324", "a\"b", "a\\b", "!", "x=y;z"] {
            let h = format_header(k).unwrap();
            assert_eq!(p(&h).unwrap(), k, "{h}");
        }
        assert_eq!(format_header("a\"b\\c").unwrap(), r#""a\"b\\c""#);
        assert_eq!(format_header("a b").unwrap_err().code(), "invalid_key");
    }

    #[test]
    fn parses_items() {
        assert_eq!(p(r#"  "abc"	"#).unwrap(), "abc");
        assert_eq!(p(r#""abc";a=1;b;c="x";d=?0;e=tok/1;f=:AAE=:;g=-1.5;h=@17;i=%"%c3%a9""#).unwrap(), "abc");
        assert_eq!(p(r#""abc"; a=1"#).unwrap(), "abc");
        assert_eq!(p(r#""abc" ;a=1"#).unwrap_err().code(), "invalid_header");
        assert_eq!(p(r#""abc";A=1"#).unwrap_err().code(), "invalid_header");
        assert_eq!(p(r#""abc", "def""#).unwrap_err().code(), "invalid_header");
        assert_eq!(p(r#""abc"#).unwrap_err().code(), "invalid_header");
        assert_eq!(p(r#""a\nb""#).unwrap_err().code(), "invalid_header");
        assert_eq!(p("abc").unwrap_err().code(), "invalid_header");
        assert_eq!(p("").unwrap_err().code(), "invalid_header");
        assert_eq!(p(r#""""#).unwrap_err().code(), "invalid_key");
        assert_eq!(p(r#""a b""#).unwrap_err().code(), "invalid_key");
        assert_eq!(p("\"caf\u{e9}\"").unwrap_err().code(), "invalid_header");
        let e = p(r#""ab\x""#).unwrap_err();
        assert!(e.reason().contains("position 4"), "{e}");
        assert_eq!(parse_header(" abc ", HeaderForm::SfStringOrToken).unwrap(), "abc");
        assert_eq!(parse_header("a b", HeaderForm::SfStringOrToken).unwrap_err().code(), "invalid_key");
        assert_eq!(p(r#""abc";a=1234567890123456"#).unwrap_err().code(), "invalid_header");
        assert_eq!(p(r#""abc";a=1.2345"#).unwrap_err().code(), "invalid_header");
        assert_eq!(p(r#""abc";a=%"%c3""#).unwrap_err().code(), "invalid_header");
    }
}

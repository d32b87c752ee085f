//! RFC 8785 JSON Canonicalization Scheme (JCS).
//!
//! The canonical form sorts object members by the UTF-16 code units of their
//! names, writes numbers as ECMAScript's `Number.prototype.toString` does and
//! strings with the minimal escaping of `JSON.stringify`, and has no
//! whitespace. Two hosts that hold the same data (a Python dict, a JS object)
//! therefore write the same bytes.

use super::json::{serde_number, JsonValue, MAX_DEPTH};
use crate::{Error, ErrorCode, Result};
use std::cmp::Ordering;
use std::fmt::Write as _;

/// A JSON tree that the canonicalizer and the fingerprints accept:
/// `crate::json::Value` and [`JsonValue`].
///
/// The trait is sealed; its methods are private to the crate.
pub trait JsonInput: private::Sealed {}

impl JsonInput for crate::json::Value {}
impl JsonInput for JsonValue {}

pub(crate) mod private {
    /// One node of a tree, as the canonicalizer sees it.
    pub enum Node<'a, T> {
        Null,
        Bool(bool),
        Number(f64),
        /// A number that cannot be canonicalised, with the reason.
        BadNumber(String),
        String(&'a str),
        Array(&'a [T]),
        Object,
    }

    /// The crate-private view of a [`super::JsonInput`] tree.
    pub trait Sealed: Sized {
        /// Returns the node at this value.
        fn node(&self) -> Node<'_, Self>;
        /// Appends this object's members, in any order.
        fn members<'a>(&'a self, out: &mut Vec<(&'a str, &'a Self)>);
        /// Returns the member named `name`, if this is an object that has one.
        fn member(&self, name: &str) -> Option<&Self>;
    }
}

use private::{Node, Sealed};

impl Sealed for crate::json::Value {
    #[inline]
    fn node(&self) -> Node<'_, Self> {
        use crate::json::Value as V;
        match self {
            V::Null => Node::Null,
            V::Bool(b) => Node::Bool(*b),
            V::Number(n) => match serde_number(n) {
                Ok(f) => Node::Number(f),
                Err(r) => Node::BadNumber(r),
            },
            V::String(s) => Node::String(s),
            V::Array(a) => Node::Array(a),
            V::Object(_) => Node::Object,
        }
    }

    fn members<'a>(&'a self, out: &mut Vec<(&'a str, &'a Self)>) {
        if let crate::json::Value::Object(m) = self {
            out.extend(m.iter().map(|(k, v)| (k.as_str(), v)));
        }
    }

    fn member(&self, name: &str) -> Option<&Self> {
        match self {
            crate::json::Value::Object(m) => m.get(name),
            _ => None,
        }
    }
}

impl Sealed for JsonValue {
    #[inline]
    fn node(&self) -> Node<'_, Self> {
        match self {
            JsonValue::Null => Node::Null,
            JsonValue::Bool(b) => Node::Bool(*b),
            JsonValue::Number(n) if n.is_finite() => Node::Number(*n),
            JsonValue::Number(n) => Node::BadNumber(format!("number {n} is not finite")),
            JsonValue::String(s) => Node::String(s),
            JsonValue::Array(a) => Node::Array(a),
            JsonValue::Object(_) => Node::Object,
        }
    }

    fn members<'a>(&'a self, out: &mut Vec<(&'a str, &'a Self)>) {
        if let JsonValue::Object(m) = self {
            out.extend(m.iter().map(|(k, v)| (k.as_str(), v)));
        }
    }

    fn member(&self, name: &str) -> Option<&Self> {
        match self {
            JsonValue::Object(m) => m.iter().find(|(k, _)| k == name).map(|(_, v)| v),
            _ => None,
        }
    }
}

/// An error found inside a tree, with the path to it (innermost token first).
pub(crate) struct TreeError {
    code: ErrorCode,
    reason: String,
    path: Vec<String>,
}

impl TreeError {
    pub(crate) fn new(code: ErrorCode, reason: impl Into<String>) -> Self {
        TreeError { code, reason: reason.into(), path: Vec::new() }
    }

    pub(crate) fn at(mut self, token: impl Into<String>) -> Self {
        self.path.push(token.into());
        self
    }

    /// Turns this into an [`Error`] about `field`, naming the JSON pointer.
    pub(crate) fn into_error(self, field: &'static str) -> Error {
        let mut pointer = String::new();
        for t in self.path.iter().rev() {
            pointer.push('/');
            pointer.push_str(&t.replace('~', "~0").replace('/', "~1"));
        }
        let place = if pointer.is_empty() { "the root".to_owned() } else { pointer };
        Error::new(self.code, field, format!("{} at {place}", self.reason))
    }
}

/// Compares two strings by their UTF-16 code units, as RFC 8785 §3.2.3 sorts keys.
pub(crate) fn cmp_utf16(a: &str, b: &str) -> Ordering {
    let (x, y) = (a.as_bytes(), b.as_bytes());
    let Some(i) = x.iter().zip(y).position(|(p, q)| p != q) else {
        return x.len().cmp(&y.len());
    };
    // UTF-8 order is code point order; UTF-16 differs only where a
    // supplementary character (a surrogate pair, D800–DFFF) meets U+E000–U+FFFF.
    let mut s = i;
    while !a.is_char_boundary(s) {
        s -= 1;
    }
    let ca = a[s..].chars().next().unwrap_or('\0');
    let cb = b[s..].chars().next().unwrap_or('\0');
    let unit = |c: char| {
        let c = c as u32;
        if c >= 0x10000 {
            0xd800 + ((c - 0x10000) >> 10)
        } else {
            c
        }
    };
    unit(ca).cmp(&unit(cb)).then((ca as u32).cmp(&(cb as u32)))
}

/// A fixed buffer for one formatted number (no heap allocation).
struct NumBuf {
    buf: [u8; 40],
    len: usize,
}

impl std::fmt::Write for NumBuf {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let end = self.len + s.len();
        if end > self.buf.len() {
            return Err(std::fmt::Error);
        }
        self.buf[self.len..end].copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

/// Appends the decimal digits of `v`.
fn write_u64(out: &mut String, mut v: u64) {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    out.push_str(std::str::from_utf8(&buf[i..]).unwrap_or("0"));
}

const POW10: [f64; 16] = [1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15];

/// Finds the shortest `n · 10^-p` (p ≥ 1, fewer than 16 digits) equal to `x`
/// in [1e-6, 1e15), the common short decimals (`0.05`, `19.99`), without the
/// general shortest-digits algorithm.
///
/// Sound because a double holds 15 significant digits unambiguously: at most
/// one candidate with fewer than 16 digits lies within `x`'s rounding
/// interval, so there is no closest-or-even choice to make; `n` is
/// `x · 10^p` rounded (its error is far below one half); and `n / 10^p` is
/// the correctly rounded value of the decimal, since `n` < 2^53 and `10^p` is
/// exact (Clinger's fast path), so the comparison is exact.
fn short_decimal(x: f64) -> Option<(u64, usize)> {
    if !(1e-6..1e15).contains(&x) {
        return None;
    }
    for (p, &scale) in POW10.iter().enumerate().skip(1) {
        let scaled = x * scale;
        if scaled >= 1e15 {
            return None;
        }
        let n = (scaled + 0.5) as u64;
        if n as f64 / scale == x {
            return Some((n, p));
        }
    }
    None
}

/// Appends the ECMAScript `Number::toString` of a finite `x` (ECMA-262 §6.1.6.1.20).
pub(crate) fn write_number(out: &mut String, x: f64) {
    if x == 0.0 {
        out.push('0');
        return;
    }
    let i = x as i64;
    if i as f64 == x && x.abs() < 9_007_199_254_740_992.0 {
        // Every integer below 2^53 is its own shortest spelling.
        if i < 0 {
            out.push('-');
        }
        write_u64(out, i.unsigned_abs());
        return;
    }
    if x < 0.0 {
        out.push('-');
    }
    if let Some((n, p)) = short_decimal(x.abs()) {
        // n · 10^-p with p ≥ 1 fraction digits, 1e-6 ≤ |x| < 1e15: plain notation.
        let scale = 10u64.pow(p as u32);
        write_u64(out, n / scale);
        out.push('.');
        let frac = n % scale;
        let mut width = 1;
        while width < p && frac >= 10u64.pow(width as u32) {
            width += 1;
        }
        for _ in width..p {
            out.push('0');
        }
        write_u64(out, frac);
        return;
    }
    let (digits, k, exp) = shortest_digits(x.abs());
    lay_out(out, &digits[..k], exp + 1, 21, -6, "");
}

/// Writes the shortest digits `s` of a number in [10^(n-1), 10^n) as
/// ECMAScript's Number::toString does (`max` 21, `min` −6, no suffix) or
/// serde_json (16, −5, `.0` after an integer): plainly from 10^(min) to
/// below 10^max, else as `d.ddde±x`.
pub(crate) fn lay_out(out: &mut String, s: &[u8], n: i32, max: i32, min: i32, integral: &str) {
    let k = s.len() as i32;
    let s = std::str::from_utf8(s).unwrap_or("0");
    if k <= n && n <= max {
        out.push_str(s);
        (k..n).for_each(|_| out.push('0'));
        out.push_str(integral);
    } else if 0 < n && n <= max {
        out.push_str(&s[..n as usize]);
        out.push('.');
        out.push_str(&s[n as usize..]);
    } else if min < n && n <= 0 {
        out.push_str("0.");
        (n..0).for_each(|_| out.push('0'));
        out.push_str(s);
    } else {
        out.push_str(&s[..1]);
        if k > 1 {
            out.push('.');
            out.push_str(&s[1..]);
        }
        out.push_str(if n > 0 { "e+" } else { "e-" });
        let _ = write!(out, "{}", (n - 1).unsigned_abs());
    }
}

/// The shortest decimal digits that read back as `x` (finite, > 0), the
/// closest to `x` when several are as short and the even one on an exact
/// tie, with the exponent of the first: `x` ≈ d.ddd × 10^exp. These are
/// the s and n of ECMAScript's Number::toString (n = exp + 1), and ryu's.
pub(crate) fn shortest_digits(x: f64) -> ([u8; 20], usize, i32) {
    // Rust's `{:e}` gives the shortest digits that round-trip, the closest
    // to x when several are as short: the s and n of the ECMAScript algorithm.
    let mut nb = NumBuf { buf: [0; 40], len: 0 };
    let _ = write!(nb, "{:e}", x);
    let text = &nb.buf[..nb.len];
    let e_at = text.iter().position(|&c| c == b'e').unwrap_or(text.len());
    let mut digits = [0u8; 20];
    let mut k = 0;
    for &c in &text[..e_at] {
        if c.is_ascii_digit() && k < digits.len() {
            digits[k] = c;
            k += 1;
        }
    }
    let exp: i32 =
        std::str::from_utf8(&text[(e_at + 1).min(text.len())..]).ok().and_then(|s| s.parse().ok()).unwrap_or(0);
    if k > 1 && (digits[k - 1] - b'0') % 2 == 1 && is_exact_midpoint(x, &digits[..k]) {
        // x lies exactly halfway between s and s − 1 in the last place.
        // ECMAScript then takes the even one (as V8 and RFC 8785 Appendix B
        // do) where Rust rounds the tie up, provided s − 1 reads back as x
        // (it does not at a power of two, whose lower gap is half as wide).
        digits[k - 1] -= 1;
        if !reads_back(&digits[..k], exp, x) {
            digits[k - 1] += 1;
        }
    }
    (digits, k, exp)
}

/// Whether the digits `s` (the first one before the point) times 10^`exp` parse to `x`.
fn reads_back(s: &[u8], exp: i32, x: f64) -> bool {
    let mut buf = NumBuf { buf: [0; 40], len: 0 };
    let _ = buf.write_str(std::str::from_utf8(&s[..1]).unwrap_or("0"));
    let _ = buf.write_str(".");
    let _ = buf.write_str(std::str::from_utf8(&s[1..]).unwrap_or("0"));
    let _ = write!(buf, "e{exp}");
    std::str::from_utf8(&buf.buf[..buf.len]).ok().and_then(crate::float::parse_f64) == Some(x)
}

/// Whether the exact value of `x` (> 0) is the midpoint between the
/// shortest digits `s` and `s` − 1 in the last place, that is whether its
/// exact decimal expansion is `s` with the last digit lowered by one and a
/// `5` appended.
fn is_exact_midpoint(x: f64, s: &[u8]) -> bool {
    let mut mid = [0u8; 21];
    let k = s.len();
    mid[..k].copy_from_slice(s);
    mid[k - 1] -= 1;
    mid[k] = b'5';
    let mid = &mid[..=k];
    // The exact significant digits of x, if there are at most 19 of them.
    let bits = x.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i32;
    let frac = bits & ((1 << 52) - 1);
    let (mut m, mut e) = if biased == 0 { (frac, -1074) } else { (frac | (1 << 52), biased - 1075) };
    if m == 0 {
        return false;
    }
    let tz = m.trailing_zeros() as i32;
    m >>= tz;
    e += tz;
    let exact: u128 = if e >= 0 {
        // An integer: m · 2^e, with trailing zeros dropped below.
        match (m as u128).checked_shl(e as u32).filter(|v| v >> e == m as u128 && e < 75) {
            Some(v) => v,
            None => return exact_decimal(x).trim_end_matches('0').as_bytes() == mid,
        }
    } else {
        // m / 2^j = m · 5^j / 10^j.
        let mut v = m as u128;
        for _ in 0..(-e) {
            match v.checked_mul(5) {
                Some(n) if n < 10u128.pow(19) => v = n,
                _ => return false,
            }
        }
        v
    };
    let mut buf = NumBuf { buf: [0; 40], len: 0 };
    let _ = write!(buf, "{exact}");
    let mut digits = &buf.buf[..buf.len];
    while let [rest @ .., b'0'] = digits {
        digits = rest;
    }
    digits == mid
}

/// Formats a number as ECMAScript's `String(x)` does, which is how RFC 8785 writes numbers.
///
/// `1.0` → `1`, `-0` → `0`, `1e21` → `1e+21`, `1e-7` → `1e-7`, `0.000001` →
/// `0.000001`, `0.1 + 0.2` → `0.30000000000000004`.
///
/// # Errors
/// `invalid_number` when `x` is NaN or infinite (JSON has no spelling for them).
pub fn format_number(x: f64) -> Result<String> {
    if !x.is_finite() {
        return Err(Error::new(ErrorCode::InvalidNumber, "value", format!("number {x} is not finite")));
    }
    let mut s = String::new();
    write_number(&mut s, x);
    Ok(s)
}

/// Whether the integer literal `digits` (no sign) may stand for the double `f` (≥ 0).
///
/// True when `f` equals it exactly, or when `digits` is how ECMAScript writes
/// `f` (so canonical output parses back). Anything else would silently be a
/// different integer.
pub(crate) fn integer_is_exact(digits: &str, f: f64) -> bool {
    if !f.is_finite() || f < 0.0 {
        return false;
    }
    let mut es = String::new();
    write_number(&mut es, f);
    if es == digits {
        return true;
    }
    if f.fract() != 0.0 {
        return false;
    }
    if f < 18_446_744_073_709_551_616.0 {
        return (f as u64).to_string() == digits;
    }
    if f < 3.402_823_669_209_385e38 {
        return (f as u128).to_string() == digits;
    }
    exact_decimal(f) == digits
}

/// The exact decimal expansion of an integral, finite double ≥ 2^128.
fn exact_decimal(f: f64) -> String {
    let bits = f.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i32 - 1075;
    let mant = (bits & ((1 << 52) - 1)) | (1 << 52);
    // Little-endian limbs in base 10^9.
    let mut limbs: Vec<u32> = Vec::new();
    let mut m = mant;
    while m > 0 {
        limbs.push((m % 1_000_000_000) as u32);
        m /= 1_000_000_000;
    }
    let mut e = exp.max(0);
    while e > 0 {
        let step = e.min(30);
        let mut carry: u64 = 0;
        for l in limbs.iter_mut() {
            let v = ((*l as u64) << step) + carry;
            *l = (v % 1_000_000_000) as u32;
            carry = v / 1_000_000_000;
        }
        while carry > 0 {
            limbs.push((carry % 1_000_000_000) as u32);
            carry /= 1_000_000_000;
        }
        e -= step;
    }
    let mut out = String::new();
    for (i, l) in limbs.iter().rev().enumerate() {
        if i == 0 {
            let _ = write!(out, "{l}");
        } else {
            let _ = write!(out, "{l:09}");
        }
    }
    out
}

/// Appends `s` as a JSON string with RFC 8785's minimal escaping (§3.2.2.2).
pub(crate) fn write_string(out: &mut String, s: &str) {
    #[inline]
    fn plain(c: u8) -> bool {
        c >= 0x20 && c != b'"' && c != b'\\'
    }
    out.push('"');
    let b = s.as_bytes();
    // Skip whole chunks that need no escape (without early exit, so the
    // check vectorises); most strings are copied in one piece.
    let mut i = 0;
    while i + 16 <= b.len() && b[i..i + 16].iter().fold(true, |ok, &c| ok & plain(c)) {
        i += 16;
    }
    let mut run = 0;
    while i < b.len() {
        let c = b[i];
        i += 1;
        if plain(c) {
            continue;
        }
        out.push_str(&s[run..i - 1]);
        run = i;
        match c {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            0x08 => out.push_str("\\b"),
            0x09 => out.push_str("\\t"),
            0x0a => out.push_str("\\n"),
            0x0c => out.push_str("\\f"),
            0x0d => out.push_str("\\r"),
            _ => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                out.push_str("\\u00");
                out.push(HEX[(c >> 4) as usize] as char);
                out.push(HEX[(c & 15) as usize] as char);
            }
        }
    }
    out.push_str(&s[run..]);
    out.push('"');
}

/// Writes canonical JSON into `out`, reusing one scratch list for the
/// members of every object it sorts.
pub(crate) struct Writer<'a, T> {
    pub(crate) out: String,
    scratch: Vec<(&'a str, &'a T)>,
}

impl<'a, T: Sealed> Writer<'a, T> {
    pub(crate) fn new(capacity: usize) -> Self {
        Writer { out: String::with_capacity(capacity), scratch: Vec::new() }
    }

    /// Appends the canonical form of `v`, nested in `depth` containers already.
    ///
    /// Recursion stops at [`MAX_DEPTH`]: a container deeper than that is an
    /// error before anything inside it is visited.
    pub(crate) fn value(&mut self, v: &'a T, depth: usize) -> Result<(), TreeError> {
        match v.node() {
            Node::Null => self.out.push_str("null"),
            Node::Bool(true) => self.out.push_str("true"),
            Node::Bool(false) => self.out.push_str("false"),
            Node::Number(x) => write_number(&mut self.out, x),
            Node::BadNumber(reason) => return Err(TreeError::new(ErrorCode::InvalidNumber, reason)),
            Node::String(s) => write_string(&mut self.out, s),
            Node::Array(items) => {
                check_depth(depth)?;
                self.out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        self.out.push(',');
                    }
                    self.value(item, depth + 1).map_err(|e| e.at(i.to_string()))?;
                }
                self.out.push(']');
            }
            Node::Object => {
                check_depth(depth)?;
                self.members(v, depth, |_| true, |w, _, v, depth| w.value(v, depth))?;
            }
        }
        Ok(())
    }

    /// Appends object `v` with the members that `keep` accepts, sorted, each
    /// value written by `each`.
    pub(crate) fn members(
        &mut self,
        v: &'a T,
        depth: usize,
        keep: impl Fn(&str) -> bool,
        mut each: impl FnMut(&mut Self, &'a str, &'a T, usize) -> Result<(), TreeError>,
    ) -> Result<(), TreeError> {
        // Members go on the shared scratch list; nested objects push theirs
        // after ours and truncate back, so our slice stays in place.
        let base = self.scratch.len();
        v.members(&mut self.scratch);
        let mut end = base;
        for i in base..self.scratch.len() {
            if keep(self.scratch[i].0) {
                self.scratch.swap(i, end);
                end += 1;
            }
        }
        self.scratch.truncate(end);
        self.scratch[base..].sort_by(|a, b| cmp_utf16(a.0, b.0));
        self.out.push('{');
        let mut result = Ok(());
        for i in base..end {
            let (k, child) = self.scratch[i];
            if i > base {
                if self.scratch[i - 1].0 == k {
                    result = Err(TreeError::new(ErrorCode::InvalidValue, format!("duplicate key {k:?}")));
                    break;
                }
                self.out.push(',');
            }
            write_string(&mut self.out, k);
            self.out.push(':');
            if let Err(e) = each(self, k, child, depth + 1) {
                result = Err(e.at(k));
                break;
            }
        }
        self.scratch.truncate(base);
        self.out.push('}');
        result
    }
}

pub(crate) fn check_depth(depth: usize) -> Result<(), TreeError> {
    if depth >= MAX_DEPTH {
        return Err(TreeError::new(ErrorCode::TooDeep, format!("nesting deeper than {MAX_DEPTH} levels")));
    }
    Ok(())
}

/// Returns the RFC 8785 canonical JSON of a `crate::json::Value`.
///
/// # Errors
/// - `invalid_number` for an integer that a double cannot hold exactly
///   (`9007199254740993`); the message names its JSON pointer;
/// - `too_deep` for nesting deeper than [`MAX_DEPTH`].
///
/// A parsed value has already rounded integers beyond the 64-bit range (a
/// document reader refuses duplicate keys, a host's may keep the last); use
/// [`canonicalize_json`] on text to catch those too.
pub fn canonicalize(value: &crate::json::Value) -> Result<String> {
    canonicalize_any(value)
}

/// Returns the RFC 8785 canonical JSON of a host-built [`JsonValue`].
///
/// # Errors
/// - `invalid_number` for a NaN or infinite number;
/// - `invalid_value` for an object that repeats a key;
/// - `too_deep` for nesting deeper than [`MAX_DEPTH`];
///
/// each message names the JSON pointer of the offending value.
pub fn canonicalize_value(value: &JsonValue) -> Result<String> {
    canonicalize_any(value)
}

/// Returns the RFC 8785 canonical JSON of any [`JsonInput`] tree.
///
/// # Errors
/// As [`canonicalize`] and [`canonicalize_value`].
pub fn canonicalize_any<T: JsonInput>(value: &T) -> Result<String> {
    let mut w = Writer::new(64);
    w.value(value, 0).map_err(|e| e.into_error("value"))?;
    Ok(w.out)
}

/// Parses JSON text and returns its RFC 8785 canonical form.
///
/// # Errors
/// Every error of [`parse_json`](super::parse_json): syntax, duplicate keys,
/// numbers a double cannot hold, lone surrogates, nesting deeper than
/// [`MAX_DEPTH`].
pub fn canonicalize_json(text: &str) -> Result<String> {
    match super::JsonText::parse(text)? {
        super::JsonText::Canonical(c) => Ok(c),
        super::JsonText::Tree(v) => canonicalize_value(&v),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::idempotency::parse_json;
    use proptest::prelude::*;

    fn num(x: f64) -> String {
        format_number(x).unwrap()
    }

    #[test]
    fn ecmascript_numbers() {
        let table: &[(f64, &str)] = &[
            (0.0, "0"),
            (-0.0, "0"),
            (1.0, "1"),
            (-1.0, "-1"),
            (5e-324, "5e-324"),
            (-5e-324, "-5e-324"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            (-1.7976931348623157e308, "-1.7976931348623157e+308"),
            (1e21, "1e+21"),
            (1e20, "100000000000000000000"),
            (999999999999999900000.0, "999999999999999900000"),
            (999999999999999999999.0, "1e+21"),
            (1e-6, "0.000001"),
            (1e-7, "1e-7"),
            (1.5e-7, "1.5e-7"),
            (0.1 + 0.2, "0.30000000000000004"),
            (123e20, "1.23e+22"),
            (123456789012345680000.0, "123456789012345680000"),
            (9007199254740992.0, "9007199254740992"),
            (9007199254740994.0, "9007199254740994"),
            (18446744073709551616.0, "18446744073709552000"),
            (4.35, "4.35"),
            (0.002, "0.002"),
            (0.000001234, "0.000001234"),
            (1e23, "1e+23"),
            (2.2250738585072014e-308, "2.2250738585072014e-308"),
            (2.225073858507201e-308, "2.225073858507201e-308"),
            (1.5, "1.5"),
            (-1.5, "-1.5"),
            (333333333.3333333, "333333333.3333333"),
            (5e-7, "5e-7"),
            (1e300, "1e+300"),
            // Exact ties between two shortest spellings: the even one, unless
            // only one reads back (2^-24 sits on a power-of-two boundary).
            (1424953923781206.0 + 0.25, "1424953923781206.2"),
            (1.0 / 16777216.0, "5.960464477539063e-8"),
        ];
        for &(x, want) in table {
            assert_eq!(num(x), want, "{x:e}");
        }
        assert_eq!(format_number(f64::NAN).unwrap_err().code(), "invalid_number");
        assert_eq!(format_number(f64::INFINITY).unwrap_err().code(), "invalid_number");
    }

    #[test]
    fn rfc8785_appendix_b_numbers() {
        // IEEE 754 bit patterns and their canonical spellings, RFC 8785 Appendix B.
        let table: &[(u64, &str)] = &[
            (0x0000000000000000, "0"),
            (0x8000000000000000, "0"),
            (0x0000000000000001, "5e-324"),
            (0x8000000000000001, "-5e-324"),
            (0x7fefffffffffffff, "1.7976931348623157e+308"),
            (0xffefffffffffffff, "-1.7976931348623157e+308"),
            (0x4340000000000000, "9007199254740992"),
            (0xc340000000000000, "-9007199254740992"),
            (0x4430000000000000, "295147905179352830000"),
            (0x44b52d02c7e14af5, "9.999999999999997e+22"),
            (0x44b52d02c7e14af6, "1e+23"),
            (0x44b52d02c7e14af7, "1.0000000000000001e+23"),
            (0x444b1ae4d6e2ef4e, "999999999999999700000"),
            (0x444b1ae4d6e2ef4f, "999999999999999900000"),
            (0x444b1ae4d6e2ef50, "1e+21"),
            (0x3eb0c6f7a0b5ed8c, "9.999999999999997e-7"),
            (0x3eb0c6f7a0b5ed8d, "0.000001"),
            (0x41b3de4355555553, "333333333.3333332"),
            (0x41b3de4355555554, "333333333.33333325"),
            (0x41b3de4355555555, "333333333.3333333"),
            (0x41b3de4355555556, "333333333.3333334"),
            (0x41b3de4355555557, "333333333.33333343"),
            (0xbecbf647612f3696, "-0.0000033333333333333333"),
            (0x43143ff3c1cb0959, "1424953923781206.2"),
        ];
        for &(bits, want) in table {
            assert_eq!(num(f64::from_bits(bits)), want, "{bits:016x}");
        }
        for bits in [0x7fffffffffffffffu64, 0x7ff0000000000000] {
            assert!(format_number(f64::from_bits(bits)).is_err());
        }
    }

    #[test]
    fn rfc8785_examples() {
        let text = r#"{
  "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
  "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
  "literals": [null, true, false]
}"#;
        assert_eq!(
            canonicalize_json(text).unwrap(),
            r#"{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}"#
        );
        let sorting = r#"{
  "\u20ac": "Euro Sign",
  "\r": "Carriage Return",
  "\ufb33": "Hebrew Letter Dalet With Dagesh",
  "1": "One",
  "\ud83d\ude00": "Emoji: Grinning Face",
  "\u0080": "Control",
  "\u00f6": "Latin Small Letter O With Diaeresis"
}"#;
        assert_eq!(
            canonicalize_json(sorting).unwrap(),
            "{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\u{80}\":\"Control\",\"\u{f6}\":\"Latin Small Letter O With Diaeresis\",\"\u{20ac}\":\"Euro Sign\",\"\u{1f600}\":\"Emoji: Grinning Face\",\"\u{fb33}\":\"Hebrew Letter Dalet With Dagesh\"}"
        );
    }

    #[test]
    fn serde_values() {
        let v: crate::json::Value =
            serde_json::from_str::<serde_json::Value>(r#"{"b":[1.0,1e2,100,-0.0],"a":"x"}"#).unwrap().into();
        assert_eq!(canonicalize(&v).unwrap(), r#"{"a":"x","b":[1,100,100,0]}"#);
        let big: crate::json::Value = serde_json::from_str::<serde_json::Value>("[9007199254740993]").unwrap().into();
        let e = canonicalize(&big).unwrap_err();
        assert_eq!(e.code(), "invalid_number");
        assert!(e.reason().ends_with("at /0"), "{e}");
        let neg: crate::json::Value = serde_json::from_str::<serde_json::Value>("-9007199254740993").unwrap().into();
        assert_eq!(canonicalize(&neg).unwrap_err().code(), "invalid_number");
        let min: crate::json::Value = serde_json::from_str::<serde_json::Value>("-9223372036854775808").unwrap().into();
        assert_eq!(canonicalize(&min).unwrap(), "-9223372036854776000");
    }

    #[test]
    fn host_values() {
        let v = JsonValue::Object(vec![("a".into(), JsonValue::Array(vec![JsonValue::Number(f64::NAN)]))]);
        let e = canonicalize_value(&v).unwrap_err();
        assert_eq!(e.code(), "invalid_number");
        assert!(e.reason().ends_with("at /a/0"), "{e}");
        let dup = JsonValue::Object(vec![("a".into(), JsonValue::Null), ("a".into(), JsonValue::Null)]);
        assert_eq!(canonicalize_value(&dup).unwrap_err().code(), "invalid_value");
        let mut deep = JsonValue::Null;
        for _ in 0..100_000 {
            deep = JsonValue::Array(vec![deep]);
        }
        assert_eq!(canonicalize_value(&deep).unwrap_err().code(), "too_deep");
    }

    #[test]
    fn utf16_order() {
        assert_eq!(cmp_utf16("\u{1f600}", "\u{fb33}"), Ordering::Less);
        assert_eq!(cmp_utf16("\u{fb33}", "\u{1f600}"), Ordering::Greater);
        assert_eq!(cmp_utf16("a", "ab"), Ordering::Less);
        assert_eq!(cmp_utf16("\u{1f600}", "\u{1f601}"), Ordering::Less);
        assert_eq!(cmp_utf16("\u{10000}", "\u{1f600}"), Ordering::Less);
        assert_eq!(cmp_utf16("é", "z"), Ordering::Greater);
    }

    fn arb_json() -> impl Strategy<Value = crate::json::Value> {
        let leaf = prop_oneof![
            Just(crate::json::Value::Null),
            any::<bool>().prop_map(crate::json::Value::Bool),
            any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(|f| json!(f)),
            (-(1i64 << 53)..(1i64 << 53)).prop_map(|i| json!(i)),
            "\\PC{0,8}".prop_map(crate::json::Value::String),
            any::<String>().prop_map(crate::json::Value::String),
        ];
        leaf.prop_recursive(4, 48, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(crate::json::Value::Array),
                prop::collection::vec((any::<String>(), inner), 0..6)
                    .prop_map(|m| crate::json::Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #[test]
        fn number_round_trips(bits in any::<u64>()) {
            let x = f64::from_bits(bits);
            prop_assume!(x.is_finite());
            let s = num(x);
            let back: f64 = s.parse().unwrap();
            prop_assert_eq!(back, if x == 0.0 { 0.0 } else { x });
            // It also parses back through our own parser, unchanged.
            let JsonValue::Number(y) = parse_json(&s).unwrap() else { panic!() };
            prop_assert_eq!(y.to_bits(), back.to_bits());
        }

        #[test]
        fn canonical_form_reparses_equal_and_is_idempotent(v in arb_json()) {
            let c = canonicalize(&v).unwrap();
            let back: crate::json::Value = serde_json::from_str::<serde_json::Value>(&c).unwrap().into();
            prop_assert_eq!(canonicalize(&back).unwrap(), c.clone());
            prop_assert_eq!(canonicalize_json(&c).unwrap(), c.clone());
            let host = JsonValue::try_from(&v).unwrap();
            prop_assert_eq!(canonicalize_value(&host).unwrap(), c.clone());
        }

        #[test]
        fn member_order_does_not_matter(pairs in prop::collection::vec(("\\PC{0,4}", any::<i32>()), 0..12), seed in any::<u64>()) {
            let mut pairs = pairs;
            pairs.sort_by(|a, b| a.0.cmp(&b.0));
            pairs.dedup_by(|a, b| a.0 == b.0);
            let forward = JsonValue::Object(pairs.iter().map(|(k, v)| (k.clone(), JsonValue::Number(*v as f64))).collect());
            let mut shuffled = pairs.clone();
            let n = shuffled.len();
            let mut s = seed;
            for i in (1..n).rev() {
                s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                shuffled.swap(i, (s >> 33) as usize % (i + 1));
            }
            let other = JsonValue::Object(shuffled.iter().map(|(k, v)| (k.clone(), JsonValue::Number(*v as f64))).collect());
            prop_assert_eq!(canonicalize_value(&forward).unwrap(), canonicalize_value(&other).unwrap());
        }
    }
}

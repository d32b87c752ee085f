//! Canonical JSON straight from JSON text, without building a tree.
//!
//! Bodies reach a fingerprint as text (the JS bindings write them with
//! `JSON.stringify`), and most are plain: strings without escapes, short
//! integers. For those the canonical form is the text itself with the
//! whitespace dropped and each object's members in order, so it is written
//! while the text is read (one output buffer, members reordered in place
//! when they come unsorted). Anything else — an escape, an integer of more
//! than 15 digits, a duplicate key, any error — is left to the general path
//! (`parse_json`, then the writer), whose result this always equals
//! (`canonical_text_is_the_general_path` below, and the fuzz target).

use super::jcs::{cmp_utf16, write_number};
use super::json::{parse_json, JsonValue, MAX_DEPTH};
use crate::Result;
use std::cmp::Ordering;

/// JSON text read for canonicalisation: its canonical form when the fast
/// path could write it, else the parsed tree.
pub enum JsonText {
    /// The RFC 8785 canonical form, written straight from the text.
    Canonical(String),
    /// The tree `parse_json` built (text the fast path leaves to it).
    Tree(JsonValue),
}

impl JsonText {
    /// Reads JSON text: canonical already when it is plain, else parsed.
    ///
    /// # Errors
    /// Every error of [`parse_json`].
    pub fn parse(text: &str) -> Result<JsonText> {
        let mut out = String::with_capacity(text.len());
        if write_canonical_text(&mut out, text) {
            Ok(JsonText::Canonical(out))
        } else {
            parse_json(text).map(JsonText::Tree)
        }
    }
}

/// Appends the canonical form of `text` to `out` and returns true, or
/// returns false with `out` as it was when `text` needs the general path.
pub(crate) fn write_canonical_text(out: &mut String, text: &str) -> bool {
    let start = out.len();
    let mut r = Reader { s: text, b: text.as_bytes(), pos: 0, out, members: Vec::new() };
    let ok = r.value(0).is_some() && {
        r.ws();
        r.pos == r.b.len()
    };
    if !ok {
        r.out.truncate(start);
    }
    ok
}

/// One member of an open object: its key (a range of the text) and its
/// `"key":value` (a range of the output).
#[derive(Clone, Copy)]
struct Member {
    key: (usize, usize),
    out: (usize, usize),
}

fn key_of<'a>(text: &'a str, m: &Member) -> &'a str {
    &text[m.key.0..m.key.1]
}

struct Reader<'a, 'o> {
    s: &'a str,
    b: &'a [u8],
    pos: usize,
    out: &'o mut String,
    /// The members of every open object, innermost last.
    members: Vec<Member>,
}

impl Reader<'_, '_> {
    #[inline]
    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.b.get(self.pos) {
            self.pos += 1;
        }
    }

    /// A string without escapes, opening quote at `pos`: its contents' range.
    /// Such a string is its own canonical spelling (RFC 8785 escapes only
    /// `"`, `\` and control characters, none of which it can hold).
    #[inline]
    fn string(&mut self) -> Option<(usize, usize)> {
        let start = self.pos + 1;
        let mut i = start;
        loop {
            match *self.b.get(i)? {
                b'"' => break,
                b'\\' => return None,
                c if c < 0x20 => return None,
                _ => i += 1,
            }
        }
        self.pos = i + 1;
        Some((start, i))
    }

    fn key(&self, m: &Member) -> &str {
        key_of(self.s, m)
    }

    /// A value at nesting `depth` (the containers around it), written canonically.
    fn value(&mut self, depth: usize) -> Option<()> {
        self.ws();
        match *self.b.get(self.pos)? {
            b'"' => {
                let (a, z) = self.string()?;
                self.out.push_str(&self.s[a - 1..=z]);
            }
            b't' => self.literal("true")?,
            b'f' => self.literal("false")?,
            b'n' => self.literal("null")?,
            b'-' | b'0'..=b'9' => self.number()?,
            b'[' => {
                if depth >= MAX_DEPTH {
                    return None;
                }
                self.pos += 1;
                self.out.push('[');
                self.ws();
                if self.b.get(self.pos) == Some(&b']') {
                    self.pos += 1;
                } else {
                    loop {
                        self.value(depth + 1)?;
                        self.ws();
                        match *self.b.get(self.pos)? {
                            b',' => self.out.push(','),
                            b']' => break,
                            _ => return None,
                        }
                        self.pos += 1;
                    }
                    self.pos += 1;
                }
                self.out.push(']');
            }
            b'{' => {
                if depth >= MAX_DEPTH {
                    return None;
                }
                self.pos += 1;
                self.object(depth)?;
            }
            _ => return None,
        }
        Some(())
    }

    fn literal(&mut self, word: &str) -> Option<()> {
        if !self.b[self.pos..].starts_with(word.as_bytes()) {
            return None;
        }
        self.pos += word.len();
        self.out.push_str(word);
        Some(())
    }

    /// A number, as `parse_json` reads it and the writer writes it; an
    /// integer of more than 15 digits is left to the general path.
    fn number(&mut self) -> Option<()> {
        let start = self.pos;
        let digits = |r: &mut Self| {
            let s = r.pos;
            while let Some(b'0'..=b'9') = r.b.get(r.pos) {
                r.pos += 1;
            }
            r.pos - s
        };
        if self.b[self.pos] == b'-' {
            self.pos += 1;
        }
        let int_start = self.pos;
        let n = digits(self);
        if n == 0 || (n > 1 && self.b[int_start] == b'0') {
            return None;
        }
        let mut integer = true;
        if self.b.get(self.pos) == Some(&b'.') {
            integer = false;
            self.pos += 1;
            if digits(self) == 0 {
                return None;
            }
        }
        if let Some(b'e' | b'E') = self.b.get(self.pos) {
            integer = false;
            self.pos += 1;
            if let Some(b'+' | b'-') = self.b.get(self.pos) {
                self.pos += 1;
            }
            if digits(self) == 0 {
                return None;
            }
        }
        if integer {
            if n > 15 {
                return None;
            }
            // Exact in a double, and without a leading zero its digits are
            // how ECMAScript writes it; zero (also `-0`) is `0`.
            if self.b[int_start] == b'0' {
                self.out.push('0');
            } else {
                self.out.push_str(&self.s[start..self.pos]);
            }
            return Some(());
        }
        let x = crate::float::parse_f64(&self.s[start..self.pos])?;
        if !x.is_finite() {
            return None;
        }
        write_number(self.out, x);
        Some(())
    }

    /// An object, after its `{`: the members written in the order of their
    /// keys' UTF-16 code units (RFC 8785 §3.2.3).
    fn object(&mut self, depth: usize) -> Option<()> {
        let open = self.out.len();
        self.out.push('{');
        let base = self.members.len();
        self.ws();
        if self.b.get(self.pos) == Some(&b'}') {
            self.pos += 1;
            self.out.push('}');
            return Some(());
        }
        let mut sorted = true;
        loop {
            self.ws();
            if self.b.get(self.pos) != Some(&b'"') {
                return None;
            }
            let key = self.string()?;
            self.ws();
            if self.b.get(self.pos) != Some(&b':') {
                return None;
            }
            self.pos += 1;
            if self.members.len() > base {
                self.out.push(',');
            }
            let at = self.out.len();
            self.out.push_str(&self.s[key.0 - 1..=key.1]);
            self.out.push(':');
            self.value(depth + 1)?;
            let m = Member { key, out: (at, self.out.len()) };
            if let Some(prev) = self.members[base..].last() {
                // Strictly ascending so far: in order, and no key twice.
                sorted = sorted && cmp_utf16(self.key(prev), self.key(&m)) == Ordering::Less;
            }
            self.members.push(m);
            self.ws();
            match *self.b.get(self.pos)? {
                b',' => self.pos += 1,
                b'}' => break,
                _ => return None,
            }
        }
        self.pos += 1;
        if !sorted {
            let s = self.s;
            let key = |m: &Member| key_of(s, m);
            let ms = &mut self.members[base..];
            ms.sort_unstable_by(|a, b| cmp_utf16(key(a), key(b)));
            if ms.windows(2).any(|w| key(&w[0]) == key(&w[1])) {
                // A duplicate key: the general path says so.
                return None;
            }
            let written = self.out[open + 1..].to_owned();
            self.out.truncate(open + 1);
            for (i, m) in ms.iter().enumerate() {
                if i > 0 {
                    self.out.push(',');
                }
                self.out.push_str(&written[m.out.0 - open - 1..m.out.1 - open - 1]);
            }
        }
        self.members.truncate(base);
        self.out.push('}');
        Some(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::idempotency::canonicalize_value;
    use proptest::prelude::*;

    /// The general path's answer for `text`: its canonical form, or its error code.
    fn general(text: &str) -> std::result::Result<String, &'static str> {
        parse_json(text).and_then(|v| canonicalize_value(&v)).map_err(|e| e.code())
    }

    fn fast(text: &str) -> Option<String> {
        let mut out = String::from("prefix");
        let ok = write_canonical_text(&mut out, text);
        assert!(ok || out == "prefix", "{text:?}: output left behind");
        ok.then(|| out["prefix".len()..].to_owned())
    }

    #[test]
    fn plain_text_is_written_canonically() {
        let cases = [
            (
                r#"{"amount":1000,"currency":"usd","items":[{"sku":"a","qty":2}]}"#,
                r#"{"amount":1000,"currency":"usd","items":[{"qty":2,"sku":"a"}]}"#,
            ),
            (
                " { \"b\" : [ 1.50 , -0, 0, -12, 1e21, true,false,null,{} ,[]] , \"a\" : \"x\" } ",
                r#"{"a":"x","b":[1.5,0,0,-12,1e+21,true,false,null,{},[]]}"#,
            ),
            (r#"{"é":1,"z":2,"😀":3,"דּ":4}"#, r#"{"z":2,"é":1,"😀":3,"דּ":4}"#),
            (r#"[{"b":{"d":1,"c":2},"a":[{"f":1,"e":2}]}]"#, r#"[{"a":[{"e":2,"f":1}],"b":{"c":2,"d":1}}]"#),
            ("123456789012345", "123456789012345"),
            ("\"\"", "\"\""),
        ];
        for (text, want) in cases {
            assert_eq!(fast(text).as_deref(), Some(want), "{text}");
            assert_eq!(general(text).as_deref(), Ok(want), "{text}");
        }
    }

    #[test]
    fn the_rest_is_left_to_the_general_path() {
        for text in [
            r#"{"a":1,"a":2}"#,
            r#"{"b":1,"a":2,"b":3}"#,
            r#""\u0041""#,
            r#"{"a\"b":1}"#,
            "1234567890123456",
            "9007199254740993",
            "1e400",
            "01",
            "-",
            "1.",
            "[1,]",
            "{\"a\":1,}",
            "[1 2]",
            "",
            "nul",
            "\"a\u{1}\"",
            "1 2",
            "{\"a\" 1}",
            "[",
        ] {
            assert_eq!(fast(text), None, "{text}");
        }
        let deep = "[".repeat(MAX_DEPTH) + &"]".repeat(MAX_DEPTH);
        assert_eq!(fast(&deep).as_deref(), general(&deep).ok().as_deref());
        let deeper = "[".repeat(MAX_DEPTH + 1) + &"]".repeat(MAX_DEPTH + 1);
        assert_eq!(fast(&deeper), None);
        assert_eq!(general(&deeper), Err("too_deep"));
    }

    proptest! {
        /// Whatever the fast path writes is what the general path writes.
        #[test]
        fn canonical_text_is_the_general_path(text in r#"[\[\]{}",:0-9eE+\-. a-zé😀\\]{0,48}"#) {
            if let Some(c) = fast(&text) {
                prop_assert_eq!(general(&text), Ok(c));
            }
        }

        /// The same on JSON that parses: serde_json's own spellings of random trees.
        #[test]
        fn serde_text_is_the_general_path(v in arb_json(), pretty in any::<bool>()) {
            let text = if pretty { serde_json::to_string_pretty(&v).unwrap() } else { v.to_string() };
            if let Some(c) = fast(&text) {
                prop_assert_eq!(general(&text), Ok(c));
            }
        }
    }

    proptest! {
        /// Objects with their members in any order, keys repeated at times.
        #[test]
        fn unsorted_members_are_the_general_path(
            members in prop::collection::vec(("[a-cé😀דּ]{0,2}", -50i64..50, any::<bool>()), 0..8),
        ) {
            let flat: Vec<String> = members.iter().map(|(k, v, _)| format!("\"{k}\":{v}")).collect();
            let flat = format!("{{{}}}", flat.join(","));
            let nested: Vec<String> = members
                .iter()
                .map(|(k, v, deep)| if *deep { format!("\"{k}\":{flat}") } else { format!(" \"{k}\" : {v}.25 ") })
                .collect();
            let nested = format!("[{{{}}}, {flat}]", nested.join(","));
            let mut keys: Vec<&str> = members.iter().map(|(k, _, _)| k.as_str()).collect();
            keys.sort_unstable();
            let unique = keys.windows(2).all(|w| w[0] != w[1]);
            for text in [flat.clone(), nested] {
                let g = general(&text);
                prop_assert_eq!(g.is_ok(), unique);
                match fast(&text) {
                    Some(c) => prop_assert_eq!(g, Ok(c)),
                    None => prop_assert!(!unique, "{} left to the general path", text),
                }
            }
        }
    }

    fn arb_json() -> impl Strategy<Value = crate::json::Value> {
        let leaf = prop_oneof![
            Just(crate::json::Value::Null),
            any::<bool>().prop_map(crate::json::Value::Bool),
            any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(|f| json!(f)),
            (-(1i64 << 53)..(1i64 << 53)).prop_map(|i| json!(i)),
            "[a-cé😀דּ\"\\\\]{0,4}".prop_map(crate::json::Value::String),
        ];
        leaf.prop_recursive(4, 48, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(crate::json::Value::Array),
                prop::collection::vec(("[a-cé😀דּ]{0,3}", inner), 0..6)
                    .prop_map(|m| crate::json::Value::Object(m.into_iter().collect())),
            ]
        })
    }
}

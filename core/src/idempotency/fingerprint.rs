//! Request fingerprints: SHA-256 of the canonical JSON of what was asked.

use super::jcs::private::{Node, Sealed};
use super::jcs::{check_depth, write_string, JsonInput, TreeError, Writer};
use super::json::parse_json;
use super::text::JsonText;
use crate::{Error, ErrorCode, Result};

/// Which parts of a body a fingerprint keeps: a trie of pointer tokens.
#[derive(Debug, Default)]
struct Selection {
    /// The whole subtree here is selected.
    all: bool,
    children: Vec<(String, Selection)>,
}

impl Selection {
    fn insert(&mut self, tokens: &[String]) {
        let mut node = self;
        for t in tokens {
            if node.all {
                return;
            }
            let i = match node.children.iter().position(|(k, _)| k == t) {
                Some(i) => i,
                None => {
                    node.children.push((t.clone(), Selection::default()));
                    node.children.len() - 1
                }
            };
            node = &mut node.children[i].1;
        }
        node.all = true;
        node.children.clear();
    }

    fn child(&self, token: &str) -> Option<&Selection> {
        self.children.iter().find(|(k, _)| k == token).map(|(_, s)| s)
    }
}

/// Splits an RFC 6901 pointer into its unescaped tokens.
fn pointer_tokens(pointer: &str) -> Result<Vec<String>> {
    if pointer.is_empty() {
        return Ok(Vec::new());
    }
    let Some(rest) = pointer.strip_prefix('/') else {
        return Err(Error::new(
            ErrorCode::InvalidPointer,
            "selected",
            format!("pointer {pointer:?} must be empty or start with '/'"),
        ));
    };
    rest.split('/')
        .map(|t| {
            let mut out = String::with_capacity(t.len());
            let mut chars = t.chars();
            while let Some(c) = chars.next() {
                if c != '~' {
                    out.push(c);
                    continue;
                }
                match chars.next() {
                    Some('0') => out.push('~'),
                    Some('1') => out.push('/'),
                    _ => {
                        return Err(Error::new(
                            ErrorCode::InvalidPointer,
                            "selected",
                            format!("pointer {pointer:?} has '~' not followed by '0' or '1'"),
                        ))
                    }
                }
            }
            Ok(out)
        })
        .collect()
}

/// Reads an array index token as RFC 6901 writes it: `0` or digits without a leading zero.
fn array_index(token: &str) -> Option<usize> {
    let b = token.as_bytes();
    if b.is_empty() || !b.iter().all(u8::is_ascii_digit) || (b.len() > 1 && b[0] == b'0') {
        return None;
    }
    token.parse().ok()
}

/// Follows `tokens` from `body`, or says why the pointer selects nothing.
fn resolve<T: Sealed>(body: &T, pointer: &str, tokens: &[String]) -> Result<()> {
    let mut node = body;
    for (depth, t) in tokens.iter().enumerate() {
        let next = match node.node() {
            Node::Object => node.member(t),
            Node::Array(items) => array_index(t).and_then(|i| items.get(i)),
            _ => None,
        };
        match next {
            Some(n) => node = n,
            None => {
                let at: Vec<&str> = pointer.splitn(depth + 2, '/').collect();
                let parent = at[..at.len().saturating_sub(1)].join("/");
                return Err(Error::new(
                    ErrorCode::InvalidPointer,
                    "selected",
                    format!("pointer {pointer:?} selects nothing: no member {t:?} at {parent:?}"),
                ));
            }
        }
    }
    Ok(())
}

/// Appends the canonical form of the parts of `v` that `sel` keeps.
fn write_selected<'a, T: Sealed>(
    w: &mut Writer<'a, T>,
    v: &'a T,
    sel: &Selection,
    depth: usize,
) -> Result<(), TreeError> {
    if sel.all {
        return w.value(v, depth);
    }
    match v.node() {
        Node::Array(items) => {
            check_depth(depth)?;
            let last = sel.children.iter().filter_map(|(t, _)| array_index(t)).max();
            w.out.push('[');
            if let Some(last) = last {
                for (i, item) in items.iter().enumerate().take(last + 1) {
                    if i > 0 {
                        w.out.push(',');
                    }
                    match sel.child(&i.to_string()) {
                        Some(s) => write_selected(w, item, s, depth + 1).map_err(|e| e.at(i.to_string()))?,
                        None => w.out.push_str("null"),
                    }
                }
            }
            w.out.push(']');
        }
        Node::Object => {
            check_depth(depth)?;
            w.members(
                v,
                depth,
                |k| sel.child(k).is_some(),
                |w, k, v, depth| match sel.child(k) {
                    Some(s) => write_selected(w, v, s, depth),
                    None => w.value(v, depth),
                },
            )?;
        }
        _ => return w.value(v, depth),
    }
    Ok(())
}

/// Appends the canonical body, narrowed to `selected` when given.
fn write_body<'a, T: JsonInput>(w: &mut Writer<'a, T>, body: &'a T, selected: Option<&[&str]>) -> Result<()> {
    let Some(pointers) = selected else {
        return w.value(body, 0).map_err(|e| e.into_error("body"));
    };
    if pointers.is_empty() {
        return Err(Error::new(
            ErrorCode::InvalidPointer,
            "selected",
            "is empty; it would make every body fingerprint the same",
        ));
    }
    let mut sel = Selection::default();
    for p in pointers {
        let tokens = pointer_tokens(p)?;
        resolve(body, p, &tokens)?;
        sel.insert(&tokens);
    }
    write_selected(w, body, &sel, 0).map_err(|e| e.into_error("body"))
}

fn hex_digest(canonical: &str) -> String {
    crate::sha256::sha256_hex(canonical.as_bytes())
}

fn non_empty(field: &'static str, v: &str) -> Result<()> {
    if v.is_empty() {
        return Err(Error::new(ErrorCode::InvalidValue, field, "is empty"));
    }
    Ok(())
}

/// Returns the canonical JSON that [`fingerprint_http`] hashes.
///
/// # Errors
/// As [`fingerprint_http`].
pub fn fingerprint_http_canonical<T: JsonInput>(
    method: &str,
    path: &str,
    body: &T,
    selected: Option<&[&str]>,
) -> Result<String> {
    non_empty("method", method)?;
    non_empty("path", path)?;
    let mut w = Writer::new(1024);
    w.out.push_str("{\"body\":");
    write_body(&mut w, body, selected)?;
    Ok(http_tail(w.out, method, path))
}

/// Closes the canonical JSON of an HTTP fingerprint after its body.
fn http_tail(mut out: String, method: &str, path: &str) -> String {
    out.push_str(",\"method\":");
    write_string(&mut out, method);
    out.push_str(",\"path\":");
    write_string(&mut out, path);
    out.push('}');
    out
}

/// Returns the fingerprint of an HTTP request: lowercase hex SHA-256 of the
/// RFC 8785 canonical JSON of `{"method", "path", "body"}`.
///
/// `method` and `path` are taken as given (methods are case-sensitive in
/// HTTP; include the query in `path` only if it is part of the request's
/// identity). A request without a body passes JSON `null`. Key order,
/// whitespace and number spelling of the body do not change the result; any
/// change of a value does.
///
/// `selected`, when given, narrows the body to the RFC 6901 JSON pointers
/// listed: the body is replaced by a pruned copy that keeps only the selected
/// subtrees, in their original positions. Objects keep only the members on a
/// selected path; arrays keep their elements up to the highest selected
/// index, with unselected elements before it written as `null` so the
/// selected ones keep their indices. The pointer `""` selects the whole body.
///
/// # Errors
/// - `invalid_value` when `method` or `path` is empty;
/// - `invalid_pointer` when `selected` is empty, or a pointer is malformed
///   (not starting with `/`, a `~` not followed by `0` or `1`) or selects
///   nothing (a missing member, an index out of range or written with a
///   leading zero, `-`, a step into a scalar);
/// - `invalid_number`, `invalid_value` (duplicate key), `too_deep` from the
///   body, naming the JSON pointer (see [`canonicalize_value`](super::canonicalize_value)).
pub fn fingerprint_http<T: JsonInput>(method: &str, path: &str, body: &T, selected: Option<&[&str]>) -> Result<String> {
    Ok(hex_digest(&fingerprint_http_canonical(method, path, body, selected)?))
}

/// Returns the canonical JSON that [`fingerprint_operation`] hashes.
///
/// # Errors
/// As [`fingerprint_operation`].
pub fn fingerprint_operation_canonical<T: JsonInput>(
    operation: &str,
    body: &T,
    selected: Option<&[&str]>,
) -> Result<String> {
    non_empty("operation", operation)?;
    let mut w = Writer::new(1024);
    w.out.push_str("{\"body\":");
    write_body(&mut w, body, selected)?;
    Ok(operation_tail(w.out, operation))
}

/// Closes the canonical JSON of an operation's fingerprint after its body.
fn operation_tail(mut out: String, operation: &str) -> String {
    out.push_str(",\"operation\":");
    write_string(&mut out, operation);
    out.push('}');
    out
}

/// Returns the fingerprint of a non-HTTP call (a message, a gRPC method, a
/// job): lowercase hex SHA-256 of the RFC 8785 canonical JSON of
/// `{"operation", "body"}`.
///
/// `selected` narrows the body as for [`fingerprint_http`].
///
/// # Errors
/// `invalid_value` when `operation` is empty; otherwise as [`fingerprint_http`].
pub fn fingerprint_operation<T: JsonInput>(operation: &str, body: &T, selected: Option<&[&str]>) -> Result<String> {
    Ok(hex_digest(&fingerprint_operation_canonical(operation, body, selected)?))
}

/// What a fingerprint is of, as a caller's options name it: an HTTP
/// request (`method` + `path`) or another operation (`operation`). Every
/// host reads its `fingerprint` options with [`FingerprintOf::read`], so
/// which options go together, and the error a wrong mix gets, is decided
/// here once (docs/idempotency.md, "Canonical JSON and fingerprints").
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum FingerprintOf<'a> {
    /// An HTTP request: `{"method", "path", "body"}` ([`fingerprint_http`]).
    Http {
        /// The method, as given.
        method: &'a str,
        /// The path, as given.
        path: &'a str,
    },
    /// Any other call: `{"operation", "body"}` ([`fingerprint_operation`]).
    Operation(&'a str),
}

impl<'a> FingerprintOf<'a> {
    /// Reads a fingerprint's options as the caller gave them (`None`: left out).
    ///
    /// # Errors
    /// - `invalid_value` on `operation` when `operation` comes with `method`
    ///   or `path` (one or the other, not both);
    /// - `missing_field` on `path` when `method` comes without it, on
    ///   `method` when `path` comes without it, and on `operation` when
    ///   none is given.
    pub fn read(method: Option<&'a str>, path: Option<&'a str>, operation: Option<&'a str>) -> Result<Self> {
        let missing = |field: &'static str, why: &str| Err(Error::new(ErrorCode::MissingField, field, why.to_owned()));
        match (operation, method, path) {
            (Some(op), None, None) => Ok(FingerprintOf::Operation(op)),
            (Some(_), _, _) => {
                Err(Error::new(ErrorCode::InvalidValue, "operation", "give operation, or method and path, not both"))
            }
            (None, Some(method), Some(path)) => Ok(FingerprintOf::Http { method, path }),
            (None, Some(_), None) => missing("path", "an HTTP fingerprint takes a path with its method"),
            (None, None, Some(_)) => missing("method", "an HTTP fingerprint takes a method with its path"),
            (None, None, None) => missing("operation", "give operation, or method and path"),
        }
    }

    /// Returns the fingerprint of `body` ([`fingerprint_http`] or
    /// [`fingerprint_operation`]), or with `canonical` the canonical JSON it
    /// hashes.
    ///
    /// # Errors
    /// As [`fingerprint_http`] and [`fingerprint_operation`].
    pub fn fingerprint<T: JsonInput>(self, body: &T, selected: Option<&[&str]>, canonical: bool) -> Result<String> {
        match (self, canonical) {
            (FingerprintOf::Http { method, path }, false) => fingerprint_http(method, path, body, selected),
            (FingerprintOf::Http { method, path }, true) => fingerprint_http_canonical(method, path, body, selected),
            (FingerprintOf::Operation(op), false) => fingerprint_operation(op, body, selected),
            (FingerprintOf::Operation(op), true) => fingerprint_operation_canonical(op, body, selected),
        }
    }

    /// As [`FingerprintOf::fingerprint`], of a body given as JSON text and
    /// read by [`JsonText::parse`]: a body it wrote canonically already is
    /// put in place as it is (no tree is built).
    ///
    /// # Errors
    /// As [`fingerprint_http`] and [`fingerprint_operation`].
    pub fn fingerprint_text(self, body: &JsonText, selected: Option<&[&str]>, canonical: bool) -> Result<String> {
        let reparsed;
        let tree = match (body, selected) {
            (JsonText::Canonical(c), None) => {
                let head = |extra: usize| {
                    let mut out = String::with_capacity(c.len() + extra + 32);
                    out.push_str("{\"body\":");
                    out.push_str(c);
                    out
                };
                let out = match self {
                    FingerprintOf::Http { method, path } => {
                        non_empty("method", method)?;
                        non_empty("path", path)?;
                        http_tail(head(method.len() + path.len()), method, path)
                    }
                    FingerprintOf::Operation(op) => {
                        non_empty("operation", op)?;
                        operation_tail(head(op.len()), op)
                    }
                };
                return Ok(if canonical { out } else { hex_digest(&out) });
            }
            // A selection walks the tree: the canonical form's is the body's.
            (JsonText::Canonical(c), Some(_)) => {
                reparsed = parse_json(c)?;
                &reparsed
            }
            (JsonText::Tree(t), _) => t,
        };
        self.fingerprint(tree, selected, canonical)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::idempotency::{parse_json, JsonValue};

    #[test]
    fn the_options_of_a_fingerprint_are_read_once() {
        let http = FingerprintOf::read(Some("POST"), Some("/v1/charges"), None).unwrap();
        assert_eq!(http, FingerprintOf::Http { method: "POST", path: "/v1/charges" });
        let body = json!({"a": 1});
        assert_eq!(
            http.fingerprint(&body, None, false).unwrap(),
            fingerprint_http("POST", "/v1/charges", &body, None).unwrap()
        );
        let op = FingerprintOf::read(None, None, Some("put")).unwrap();
        assert_eq!(op.fingerprint(&body, None, true).unwrap(), r#"{"body":{"a":1},"operation":"put"}"#);
        let err = |m, p, o| FingerprintOf::read(m, p, o).map(|_| ()).map_err(|e| (e.code(), e.field().to_owned()));
        assert_eq!(err(Some("GET"), None, None), Err(("missing_field", "path".into())));
        assert_eq!(err(None, Some("/x"), None), Err(("missing_field", "method".into())));
        assert_eq!(err(None, None, None), Err(("missing_field", "operation".into())));
        assert_eq!(err(Some("GET"), None, Some("put")), Err(("invalid_value", "operation".into())));
        assert_eq!(err(None, Some("/x"), Some("put")), Err(("invalid_value", "operation".into())));
    }

    #[test]
    fn equal_across_spellings_and_different_on_change() {
        let a = fingerprint_http("POST", "/v1/charges", &json!({"a": 1, "b": [1.5, "x"]}), None).unwrap();
        let b = parse_json(r#"{ "b" : [ 15e-1, "\u0078" ], "a" : 1.0 }"#).unwrap();
        assert_eq!(fingerprint_http("POST", "/v1/charges", &b, None).unwrap(), a);
        assert_eq!(a.len(), 64);
        assert!(a.bytes().all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(&c)));
        let c = fingerprint_http("POST", "/v1/charges", &json!({"a": 2, "b": [1.5, "x"]}), None).unwrap();
        assert_ne!(a, c);
        let op = fingerprint_operation("POST /v1/charges", &json!({"a": 1, "b": [1.5, "x"]}), None).unwrap();
        assert_ne!(a, op);
    }

    #[test]
    fn selection_is_a_pruned_copy() {
        let body = json!({"items": [{"sku": "A", "qty": 1}, {"sku": "B", "qty": 2}], "note": "x"});
        let c = fingerprint_operation_canonical("order", &body, Some(&["/items/1/sku"])).unwrap();
        assert_eq!(c, r#"{"body":{"items":[null,{"sku":"B"}]},"operation":"order"}"#);
        let whole = fingerprint_operation_canonical("order", &body, Some(&["", "/note"])).unwrap();
        assert_eq!(whole, fingerprint_operation_canonical("order", &body, None).unwrap());
        let code = |sel: &[&str]| fingerprint_operation("order", &body, Some(sel)).unwrap_err().code();
        assert_eq!(code(&["/items/2"]), "invalid_pointer");
        assert_eq!(code(&["/items/01"]), "invalid_pointer");
        assert_eq!(code(&["/note/x"]), "invalid_pointer");
        assert_eq!(code(&["items"]), "invalid_pointer");
        assert_eq!(code(&[]), "invalid_pointer");
    }

    #[test]
    fn hostile_bodies_are_typed_errors() {
        let big = format!("{{\"s\":\"{}\"}}", "x".repeat(10 << 20));
        let v = parse_json(&big).unwrap();
        assert_eq!(fingerprint_http("POST", "/", &v, None).unwrap().len(), 64);
        let mut deep = JsonValue::Null;
        for _ in 0..100_000 {
            deep = JsonValue::Object(vec![("a".into(), deep)]);
        }
        let e = fingerprint_http("POST", "/", &deep, None).unwrap_err();
        assert_eq!(e.code(), "too_deep");
        assert_eq!(e.field(), "body");
        let nan = JsonValue::Array(vec![JsonValue::Number(f64::NAN)]);
        assert_eq!(fingerprint_http("POST", "/", &nan, None).unwrap_err().code(), "invalid_number");
        assert_eq!(crate::idempotency::validate_key(&"k".repeat(10 << 20), 255).unwrap_err().code(), "invalid_key");
    }
}

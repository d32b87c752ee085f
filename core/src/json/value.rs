//! The JSON value itself: serde_json's `Value`, `Map` and `Number`, as far
//! as the core and its bindings use them, without serde.
//!
//! It behaves as serde_json's (without `preserve_order`): an object keeps its
//! keys sorted (a sorted vector here, a B-tree there), a number is an
//! unsigned or a negative 64-bit integer or a finite double, and the text is
//! serde_json's: the same escapes, integers as written, doubles as its
//! float writer lays them out (`2.0`, `1e+21`, `1.5e-7`). `core/tests/json_value.rs` holds it to
//! serde_json on random values.

use std::borrow::Borrow;
use std::fmt::{self, Write as _};
use std::ops;

/// A JSON value.
#[derive(Clone, PartialEq, Eq, Default)]
pub enum Value {
    /// `null`.
    #[default]
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number.
    Number(Number),
    /// A string.
    String(String),
    /// An array.
    Array(Vec<Value>),
    /// An object, its keys sorted.
    Object(Map<String, Value>),
}

/// A JSON number: an integer that fits 64 bits exactly, or a finite double.
#[derive(Clone, Copy, PartialEq)]
pub struct Number(N);

#[derive(Clone, Copy, PartialEq)]
enum N {
    PosInt(u64),
    /// Always below zero.
    NegInt(i64),
    /// Always finite.
    Float(f64),
}

// A Float is never NaN.
impl Eq for Number {}

impl Number {
    /// The double `f`, or `None` when it is not finite.
    pub fn from_f64(f: f64) -> Option<Number> {
        f.is_finite().then_some(Number(N::Float(f)))
    }

    /// Whether it is an integer from 0 to 2^64 − 1.
    pub fn is_u64(&self) -> bool {
        matches!(self.0, N::PosInt(_))
    }

    /// Whether it is an integer from −2^63 to 2^63 − 1.
    pub fn is_i64(&self) -> bool {
        match self.0 {
            N::PosInt(v) => v <= i64::MAX as u64,
            N::NegInt(_) => true,
            N::Float(_) => false,
        }
    }

    /// Whether it is a double (written with a point or an exponent).
    pub fn is_f64(&self) -> bool {
        matches!(self.0, N::Float(_))
    }

    /// The integer, if it is one from 0 to 2^64 − 1.
    pub fn as_u64(&self) -> Option<u64> {
        match self.0 {
            N::PosInt(v) => Some(v),
            _ => None,
        }
    }

    /// The integer, if it is one from −2^63 to 2^63 − 1.
    pub fn as_i64(&self) -> Option<i64> {
        match self.0 {
            N::PosInt(v) => i64::try_from(v).ok(),
            N::NegInt(v) => Some(v),
            N::Float(_) => None,
        }
    }

    /// The number as a double (an integer rounded to the nearest).
    pub fn as_f64(&self) -> Option<f64> {
        Some(match self.0 {
            N::PosInt(v) => v as f64,
            N::NegInt(v) => v as f64,
            N::Float(v) => v,
        })
    }
}

impl fmt::Display for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::new();
        write_number(&mut s, self);
        f.write_str(&s)
    }
}

impl fmt::Debug for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Number({self})")
    }
}

macro_rules! from_unsigned {
    ($($t:ty),*) => {$(
        impl From<$t> for Number {
            fn from(v: $t) -> Number {
                Number(N::PosInt(v as u64))
            }
        }
        impl From<$t> for Value {
            fn from(v: $t) -> Value {
                Value::Number(v.into())
            }
        }
    )*};
}
from_unsigned!(u8, u16, u32, u64, usize);

macro_rules! from_signed {
    ($($t:ty),*) => {$(
        impl From<$t> for Number {
            fn from(v: $t) -> Number {
                Number(if v < 0 { N::NegInt(v as i64) } else { N::PosInt(v as u64) })
            }
        }
        impl From<$t> for Value {
            fn from(v: $t) -> Value {
                Value::Number(v.into())
            }
        }
    )*};
}
from_signed!(i8, i16, i32, i64, isize);

/// A double that is not finite is `null`.
impl From<f64> for Value {
    fn from(f: f64) -> Value {
        Number::from_f64(f).map_or(Value::Null, Value::Number)
    }
}

impl From<f32> for Value {
    fn from(f: f32) -> Value {
        Value::from(f64::from(f))
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Value {
        Value::Bool(b)
    }
}

impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::String(s)
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::String(s.to_owned())
    }
}

impl From<Number> for Value {
    fn from(n: Number) -> Value {
        Value::Number(n)
    }
}

impl From<Map<String, Value>> for Value {
    fn from(m: Map<String, Value>) -> Value {
        Value::Object(m)
    }
}

impl<T: Into<Value>> From<Vec<T>> for Value {
    fn from(v: Vec<T>) -> Value {
        Value::Array(v.into_iter().map(Into::into).collect())
    }
}

impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(v: Option<T>) -> Value {
        v.map_or(Value::Null, Into::into)
    }
}

impl From<()> for Value {
    fn from((): ()) -> Value {
        Value::Null
    }
}

impl<T: Into<Value>> FromIterator<T> for Value {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Value {
        Value::Array(iter.into_iter().map(Into::into).collect())
    }
}

impl<K: Into<String>, V: Into<Value>> FromIterator<(K, V)> for Value {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Value {
        Value::Object(iter.into_iter().map(|(k, v)| (k.into(), v.into())).collect())
    }
}

impl Value {
    /// Whether it is `null`.
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// Whether it is `true` or `false`.
    pub fn is_boolean(&self) -> bool {
        matches!(self, Value::Bool(_))
    }

    /// Whether it is a number.
    pub fn is_number(&self) -> bool {
        matches!(self, Value::Number(_))
    }

    /// Whether it is a string.
    pub fn is_string(&self) -> bool {
        matches!(self, Value::String(_))
    }

    /// Whether it is an array.
    pub fn is_array(&self) -> bool {
        matches!(self, Value::Array(_))
    }

    /// Whether it is an object.
    pub fn is_object(&self) -> bool {
        matches!(self, Value::Object(_))
    }

    /// Whether it is an integer from 0 to 2^64 − 1.
    pub fn is_u64(&self) -> bool {
        matches!(self, Value::Number(n) if n.is_u64())
    }

    /// Whether it is an integer from −2^63 to 2^63 − 1.
    pub fn is_i64(&self) -> bool {
        matches!(self, Value::Number(n) if n.is_i64())
    }

    /// Whether it is a double.
    pub fn is_f64(&self) -> bool {
        matches!(self, Value::Number(n) if n.is_f64())
    }

    /// The boolean, if it is one.
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// The number, if it is one.
    pub fn as_number(&self) -> Option<&Number> {
        match self {
            Value::Number(n) => Some(n),
            _ => None,
        }
    }

    /// The integer, if it is one from 0 to 2^64 − 1.
    pub fn as_u64(&self) -> Option<u64> {
        self.as_number()?.as_u64()
    }

    /// The integer, if it is one from −2^63 to 2^63 − 1.
    pub fn as_i64(&self) -> Option<i64> {
        self.as_number()?.as_i64()
    }

    /// The number as a double, if it is a number.
    pub fn as_f64(&self) -> Option<f64> {
        self.as_number()?.as_f64()
    }

    /// The string, if it is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// The items, if it is an array.
    pub fn as_array(&self) -> Option<&Vec<Value>> {
        match self {
            Value::Array(v) => Some(v),
            _ => None,
        }
    }

    /// The items, if it is an array.
    pub fn as_array_mut(&mut self) -> Option<&mut Vec<Value>> {
        match self {
            Value::Array(v) => Some(v),
            _ => None,
        }
    }

    /// The members, if it is an object.
    pub fn as_object(&self) -> Option<&Map<String, Value>> {
        match self {
            Value::Object(m) => Some(m),
            _ => None,
        }
    }

    /// The members, if it is an object.
    pub fn as_object_mut(&mut self) -> Option<&mut Map<String, Value>> {
        match self {
            Value::Object(m) => Some(m),
            _ => None,
        }
    }

    /// The member `key` of an object, or the item at an index of an array.
    pub fn get<I: Index>(&self, index: I) -> Option<&Value> {
        index.index_into(self)
    }

    /// As [`get`](Value::get), mutably.
    pub fn get_mut<I: Index>(&mut self, index: I) -> Option<&mut Value> {
        index.index_into_mut(self)
    }

    /// Takes the value out, leaving `null`.
    pub fn take(&mut self) -> Value {
        std::mem::take(self)
    }
}

/// What indexes a [`Value`]: a key (`&str`, `String`) or a position (`usize`).
pub trait Index: private::Sealed {
    #[doc(hidden)]
    fn index_into<'v>(&self, v: &'v Value) -> Option<&'v Value>;
    #[doc(hidden)]
    fn index_into_mut<'v>(&self, v: &'v mut Value) -> Option<&'v mut Value>;
    /// `v[key] = x` on `null` makes it an object first, as serde_json does.
    #[doc(hidden)]
    fn index_or_insert<'v>(&self, v: &'v mut Value) -> &'v mut Value;
}

mod private {
    pub trait Sealed {}
    impl Sealed for usize {}
    impl Sealed for str {}
    impl Sealed for String {}
    impl<T: Sealed + ?Sized> Sealed for &T {}
}

impl Index for usize {
    fn index_into<'v>(&self, v: &'v Value) -> Option<&'v Value> {
        v.as_array()?.get(*self)
    }
    fn index_into_mut<'v>(&self, v: &'v mut Value) -> Option<&'v mut Value> {
        v.as_array_mut()?.get_mut(*self)
    }
    fn index_or_insert<'v>(&self, v: &'v mut Value) -> &'v mut Value {
        let what = match v.as_array() {
            Some(a) => format!("array of length {}", a.len()),
            None => kind(v).to_owned(),
        };
        match v.as_array_mut().and_then(|a| a.get_mut(*self)) {
            Some(x) => x,
            None => panic!("cannot access index {self} of JSON {what}"),
        }
    }
}

impl Index for str {
    fn index_into<'v>(&self, v: &'v Value) -> Option<&'v Value> {
        v.as_object()?.get(self)
    }
    fn index_into_mut<'v>(&self, v: &'v mut Value) -> Option<&'v mut Value> {
        v.as_object_mut()?.get_mut(self)
    }
    fn index_or_insert<'v>(&self, v: &'v mut Value) -> &'v mut Value {
        if v.is_null() {
            *v = Value::Object(Map::new());
        }
        let what = kind(v);
        match v.as_object_mut() {
            Some(m) => m.entry_or_default(self),
            None => panic!("cannot access key {self:?} in JSON {what}"),
        }
    }
}

impl Index for String {
    fn index_into<'v>(&self, v: &'v Value) -> Option<&'v Value> {
        self.as_str().index_into(v)
    }
    fn index_into_mut<'v>(&self, v: &'v mut Value) -> Option<&'v mut Value> {
        self.as_str().index_into_mut(v)
    }
    fn index_or_insert<'v>(&self, v: &'v mut Value) -> &'v mut Value {
        self.as_str().index_or_insert(v)
    }
}

impl<T: Index + ?Sized> Index for &T {
    fn index_into<'v>(&self, v: &'v Value) -> Option<&'v Value> {
        (**self).index_into(v)
    }
    fn index_into_mut<'v>(&self, v: &'v mut Value) -> Option<&'v mut Value> {
        (**self).index_into_mut(v)
    }
    fn index_or_insert<'v>(&self, v: &'v mut Value) -> &'v mut Value {
        (**self).index_or_insert(v)
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

static NULL: Value = Value::Null;

/// `v["key"]`, `v[0]`: the member or item, or `null` when there is none.
impl<I: Index> ops::Index<I> for Value {
    type Output = Value;
    fn index(&self, index: I) -> &Value {
        index.index_into(self).unwrap_or(&NULL)
    }
}

/// `v["key"] = x` (on an object, or on `null`, which becomes one), `v[0] = x`
/// (an item that exists); anything else panics, as serde_json's does.
impl<I: Index> ops::IndexMut<I> for Value {
    fn index_mut(&mut self, index: I) -> &mut Value {
        index.index_or_insert(self)
    }
}

macro_rules! eq_with {
    ($($t:ty => $conv:expr),* $(,)?) => {$(
        impl PartialEq<$t> for Value {
            #[allow(clippy::redundant_closure_call)]
            fn eq(&self, other: &$t) -> bool {
                ($conv)(self, other)
            }
        }
        impl PartialEq<Value> for $t {
            fn eq(&self, other: &Value) -> bool {
                other == self
            }
        }
    )*};
}
eq_with!(
    str => |v: &Value, o: &str| v.as_str() == Some(o),
    &str => |v: &Value, o: &&str| v.as_str() == Some(*o),
    String => |v: &Value, o: &String| v.as_str() == Some(o.as_str()),
    bool => |v: &Value, o: &bool| v.as_bool() == Some(*o),
    i32 => |v: &Value, o: &i32| v.as_i64() == Some(i64::from(*o)),
    i64 => |v: &Value, o: &i64| v.as_i64() == Some(*o),
    u32 => |v: &Value, o: &u32| v.as_u64() == Some(u64::from(*o)),
    u64 => |v: &Value, o: &u64| v.as_u64() == Some(*o),
    usize => |v: &Value, o: &usize| v.as_u64() == Some(*o as u64),
    i8 => |v: &Value, o: &i8| v.as_i64() == Some(i64::from(*o)),
    i16 => |v: &Value, o: &i16| v.as_i64() == Some(i64::from(*o)),
    isize => |v: &Value, o: &isize| v.as_i64() == Some(*o as i64),
    u8 => |v: &Value, o: &u8| v.as_u64() == Some(u64::from(*o)),
    u16 => |v: &Value, o: &u16| v.as_u64() == Some(u64::from(*o)),
    f32 => |v: &Value, o: &f32| v.as_f64() == Some(f64::from(*o)),
    f64 => |v: &Value, o: &f64| v.as_f64() == Some(*o),
);

impl fmt::Debug for Value {
    /// As serde_json's: `Object {"a": Number(1)}`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Null => f.write_str("Null"),
            Value::Bool(b) => write!(f, "Bool({b})"),
            Value::Number(n) => fmt::Debug::fmt(n, f),
            Value::String(s) => write!(f, "String({s:?})"),
            Value::Array(v) => {
                f.write_str("Array ")?;
                fmt::Debug::fmt(v, f)
            }
            Value::Object(m) => {
                f.write_str("Object ")?;
                fmt::Debug::fmt(m, f)
            }
        }
    }
}

impl fmt::Display for Value {
    /// Compact JSON text, as serde_json writes it; `{:#}` indents it by two
    /// spaces, as serde_json's `to_string_pretty` does.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::new();
        write_laid_out(&mut s, self, f.alternate().then_some(0));
        f.write_str(&s)
    }
}

/// Appends `v` as compact JSON text. Nesting is bounded by what built it (the
/// parser stops at [`MAX_DEPTH`](crate::limits::MAX_DEPTH)).
pub(crate) fn write_value(out: &mut String, v: &Value) {
    write_laid_out(out, v, None);
}

/// Writes `v` compactly (`indent` `None`), or with serde_json's pretty
/// layout at depth `indent`: one member or item a line, two spaces a level,
/// `": "` after a key, `[]` and `{}` when empty.
fn write_laid_out(out: &mut String, v: &Value, indent: Option<usize>) {
    let (open, close, len) = match v {
        Value::Null => return out.push_str("null"),
        Value::Bool(b) => return out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => return write_number(out, n),
        Value::String(s) => return write_string(out, s),
        Value::Array(items) => ('[', ']', items.len()),
        Value::Object(m) => ('{', '}', m.len()),
    };
    let inner = indent.map(|i| i + 1);
    let newline = |out: &mut String, level: Option<usize>| {
        if let Some(level) = level {
            out.push('\n');
            (0..level).for_each(|_| out.push_str("  "));
        }
    };
    out.push(open);
    for i in 0..len {
        if i > 0 {
            out.push(',');
        }
        newline(out, inner);
        match v {
            Value::Array(items) => write_laid_out(out, &items[i], inner),
            Value::Object(m) => {
                let (k, x) = &m.members[i];
                write_string(out, k);
                out.push_str(if indent.is_some() { ": " } else { ":" });
                write_laid_out(out, x, inner);
            }
            _ => {}
        }
    }
    if len > 0 {
        newline(out, indent);
    }
    out.push(close);
}

/// A string with serde_json's escapes: `"` and `\`, and every control
/// character (`\b \t \n \f \r` short, the others `\u00XX`); nothing else.
pub(crate) fn write_string(out: &mut String, s: &str) {
    out.push('"');
    let mut start = 0;
    for (i, b) in s.bytes().enumerate() {
        let short = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0x08 => "\\b",
            0x0c => "\\f",
            0..=0x1f => "",
            _ => continue,
        };
        out.push_str(&s[start..i]);
        if short.is_empty() {
            let hex = b"0123456789abcdef";
            out.push_str("\\u00");
            out.push(hex[usize::from(b >> 4)] as char);
            out.push(hex[usize::from(b & 15)] as char);
        } else {
            out.push_str(short);
        }
        start = i + 1;
    }
    out.push_str(&s[start..]);
    out.push('"');
}

/// A number as serde_json writes it: an integer in decimal, a double with
/// the shortest digits that read back, in plain notation from 1e-5 to below
/// 1e16 (`2.0`, `0.00001`, `-0.0`), else in exponent notation (`1e+16`,
/// `1.5e-7`).
fn write_number(out: &mut String, n: &Number) {
    match n.0 {
        N::PosInt(v) => {
            let _ = write!(out, "{v}");
        }
        N::NegInt(v) => {
            let _ = write!(out, "{v}");
        }
        N::Float(x) => {
            if x.is_sign_negative() {
                out.push('-');
            }
            if x == 0.0 {
                out.push_str("0.0");
                return;
            }
            let (digits, len, exp) = crate::idempotency::jcs::shortest_digits(x.abs());
            crate::idempotency::jcs::lay_out(out, &digits[..len], exp + 1, 16, -5, ".0");
        }
    }
}

/// A JSON object: members sorted by key, each key once; also the core's
/// map of names to values of any type (`alerts::Snapshot`).
///
/// Lookups are binary searches; [`insert`](Map::insert) shifts the members
/// after the new key, so an object built key by key from unsorted input costs
/// O(n²) moves: whatever builds one from input (the parser, a binding's
/// converter, `collect`, `extend`) gathers its members and sorts them once.
#[derive(Clone, PartialEq, Eq)]
pub struct Map<K, V> {
    members: Vec<(K, V)>,
}

impl<V> Default for Map<String, V> {
    fn default() -> Self {
        Map::new()
    }
}

impl<V> Map<String, V> {
    /// An empty object.
    pub fn new() -> Self {
        Map { members: Vec::new() }
    }

    /// An empty object with room for `n` members.
    pub fn with_capacity(n: usize) -> Self {
        Map { members: Vec::with_capacity(n) }
    }

    /// Members sorted by key, the last of each key kept (as inserting them in
    /// order would).
    pub(crate) fn from_members(mut members: Vec<(String, V)>) -> Self {
        // A stable sort keeps equal keys in their order: the last one wins.
        members.sort_by(|a, b| a.0.cmp(&b.0));
        let mut out: Vec<(String, V)> = Vec::with_capacity(members.len());
        for m in members {
            match out.last_mut() {
                Some(last) if last.0 == m.0 => *last = m,
                _ => out.push(m),
            }
        }
        Map { members: out }
    }

    fn find<Q: Ord + ?Sized>(&self, key: &Q) -> Result<usize, usize>
    where
        String: Borrow<Q>,
    {
        self.members.binary_search_by(|(k, _)| k.borrow().cmp(key))
    }

    /// Sets `key` to `value`; returns the value it had.
    pub fn insert(&mut self, key: String, value: V) -> Option<V> {
        match self.find(key.as_str()) {
            Ok(i) => Some(std::mem::replace(&mut self.members[i].1, value)),
            Err(i) => {
                self.members.insert(i, (key, value));
                None
            }
        }
    }

    fn entry_or_default(&mut self, key: &str) -> &mut V
    where
        V: Default,
    {
        let i = match self.find(key) {
            Ok(i) => i,
            Err(i) => {
                self.members.insert(i, (key.to_owned(), V::default()));
                i
            }
        };
        &mut self.members[i].1
    }

    /// The value of `key`.
    pub fn get<Q: Ord + ?Sized>(&self, key: &Q) -> Option<&V>
    where
        String: Borrow<Q>,
    {
        self.find(key).ok().map(|i| &self.members[i].1)
    }

    /// The key as stored and its value.
    pub fn get_key_value<Q: Ord + ?Sized>(&self, key: &Q) -> Option<(&String, &V)>
    where
        String: Borrow<Q>,
    {
        self.find(key).ok().map(|i| (&self.members[i].0, &self.members[i].1))
    }

    /// The value of `key`, mutably.
    pub fn get_mut<Q: Ord + ?Sized>(&mut self, key: &Q) -> Option<&mut V>
    where
        String: Borrow<Q>,
    {
        self.find(key).ok().map(|i| &mut self.members[i].1)
    }

    /// Whether `key` is there.
    pub fn contains_key<Q: Ord + ?Sized>(&self, key: &Q) -> bool
    where
        String: Borrow<Q>,
    {
        self.find(key).is_ok()
    }

    /// Removes `key`; returns its value.
    pub fn remove<Q: Ord + ?Sized>(&mut self, key: &Q) -> Option<V>
    where
        String: Borrow<Q>,
    {
        self.find(key).ok().map(|i| self.members.remove(i).1)
    }

    /// The number of members.
    pub fn len(&self) -> usize {
        self.members.len()
    }

    /// Whether it has no member.
    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    /// The members, by key.
    pub fn iter(&self) -> Iter<'_, V> {
        Iter(self.members.iter())
    }

    /// The members, by key, their values mutable.
    pub fn iter_mut(&mut self) -> IterMut<'_, V> {
        IterMut(self.members.iter_mut())
    }

    /// The keys, sorted.
    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &String> + ExactSizeIterator {
        self.members.iter().map(|(k, _)| k)
    }

    /// The values, by key.
    pub fn values(&self) -> impl DoubleEndedIterator<Item = &V> + ExactSizeIterator {
        self.members.iter().map(|(_, v)| v)
    }

    /// The values, by key, mutable.
    pub fn values_mut(&mut self) -> impl DoubleEndedIterator<Item = &mut V> + ExactSizeIterator {
        self.members.iter_mut().map(|(_, v)| v)
    }

    /// Keeps the members for which `keep` answers true.
    pub fn retain(&mut self, mut keep: impl FnMut(&String, &mut V) -> bool) {
        self.members.retain_mut(|(k, v)| keep(k, v));
    }

    /// Removes every member.
    pub fn clear(&mut self) {
        self.members.clear();
    }
}

/// The members of a [`Map`], by key.
pub struct Iter<'a, V = Value>(std::slice::Iter<'a, (String, V)>);

impl<'a, V> Iterator for Iter<'a, V> {
    type Item = (&'a String, &'a V);
    fn next(&mut self) -> Option<Self::Item> {
        self.0.next().map(|(k, v)| (k, v))
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }
}

impl<V> DoubleEndedIterator for Iter<'_, V> {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.0.next_back().map(|(k, v)| (k, v))
    }
}

impl<V> ExactSizeIterator for Iter<'_, V> {}

/// The members of a [`Map`], by key, their values mutable.
pub struct IterMut<'a, V = Value>(std::slice::IterMut<'a, (String, V)>);

impl<'a, V> Iterator for IterMut<'a, V> {
    type Item = (&'a String, &'a mut V);
    fn next(&mut self) -> Option<Self::Item> {
        self.0.next().map(|(k, v)| (&*k, v))
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }
}

impl<V> DoubleEndedIterator for IterMut<'_, V> {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.0.next_back().map(|(k, v)| (&*k, v))
    }
}

impl<V> ExactSizeIterator for IterMut<'_, V> {}

impl<'a, V> IntoIterator for &'a Map<String, V> {
    type Item = (&'a String, &'a V);
    type IntoIter = Iter<'a, V>;
    fn into_iter(self) -> Iter<'a, V> {
        self.iter()
    }
}

impl<'a, V> IntoIterator for &'a mut Map<String, V> {
    type Item = (&'a String, &'a mut V);
    type IntoIter = IterMut<'a, V>;
    fn into_iter(self) -> IterMut<'a, V> {
        self.iter_mut()
    }
}

impl<V> IntoIterator for Map<String, V> {
    type Item = (String, V);
    type IntoIter = std::vec::IntoIter<(String, V)>;
    fn into_iter(self) -> Self::IntoIter {
        self.members.into_iter()
    }
}

impl<V> FromIterator<(String, V)> for Map<String, V> {
    fn from_iter<I: IntoIterator<Item = (String, V)>>(iter: I) -> Self {
        Map::from_members(iter.into_iter().collect())
    }
}

/// The new members win over the old, as inserting them in order would;
/// one sort for the lot, not a shift per key.
impl<V> Extend<(String, V)> for Map<String, V> {
    fn extend<I: IntoIterator<Item = (String, V)>>(&mut self, iter: I) {
        let mut members = std::mem::take(&mut self.members);
        members.extend(iter);
        *self = Map::from_members(members);
    }
}

impl<V, Q: Ord + ?Sized> ops::Index<&Q> for Map<String, V>
where
    String: Borrow<Q>,
{
    type Output = V;
    /// Panics when `key` is not there, as serde_json's does.
    fn index(&self, key: &Q) -> &V {
        self.get(key).expect("no entry found for key")
    }
}

impl<V: fmt::Debug> fmt::Debug for Map<String, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

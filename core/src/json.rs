//! The core's JSON value: what documents are read into and what the core
//! writes (records, snapshots, decisions), with [`json!`](crate::json!) to
//! build one and [`ToJson`] to turn the core's types into one.
//!
//! The value is the core's own ([`value`]), serde_json's without serde: the
//! WebAssembly package carries no serde (docs/js.md, "Size"). With
//! the feature `serde`, [`Value`] is `Serialize` and converts to and from
//! `serde_json::Value`, and the core's records, decisions and snapshots
//! derive `Serialize` as they write themselves here.

mod value;
pub(crate) use value::write_value;

pub use value::{Index, Iter, IterMut, Map, Number, Value};

#[cfg(any(test, feature = "serde"))]
mod with_serde {
    use super::{Map, Number, Value};

    impl serde::Serialize for Value {
        fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            use serde::ser::{SerializeMap, SerializeSeq};
            match self {
                Value::Null => s.serialize_unit(),
                Value::Bool(b) => s.serialize_bool(*b),
                Value::Number(n) => match (n.as_u64(), n.as_i64()) {
                    (Some(u), _) => s.serialize_u64(u),
                    (None, Some(i)) => s.serialize_i64(i),
                    _ => s.serialize_f64(n.as_f64().unwrap_or_default()),
                },
                Value::String(x) => s.serialize_str(x),
                Value::Array(items) => {
                    let mut seq = s.serialize_seq(Some(items.len()))?;
                    items.iter().try_for_each(|x| seq.serialize_element(x))?;
                    seq.end()
                }
                Value::Object(m) => {
                    let mut map = s.serialize_map(Some(m.len()))?;
                    m.iter().try_for_each(|(k, x)| map.serialize_entry(k, x))?;
                    map.end()
                }
            }
        }
    }

    /// Read as serde_json reads its value.
    impl<'de> serde::Deserialize<'de> for Value {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Value, D::Error> {
            serde_json::Value::deserialize(d).map(Value::from)
        }
    }

    /// serde_json's value as the core's: the same tree.
    impl From<serde_json::Value> for Value {
        fn from(v: serde_json::Value) -> Value {
            match v {
                serde_json::Value::Null => Value::Null,
                serde_json::Value::Bool(b) => Value::Bool(b),
                serde_json::Value::Number(n) => match (n.as_u64(), n.as_i64()) {
                    (Some(u), _) => Value::from(u),
                    (None, Some(i)) => Value::from(i),
                    _ => n.as_f64().and_then(Number::from_f64).map_or(Value::Null, Value::Number),
                },
                serde_json::Value::String(x) => Value::String(x),
                serde_json::Value::Array(items) => Value::Array(items.into_iter().map(Value::from).collect()),
                serde_json::Value::Object(m) => {
                    Value::Object(m.into_iter().map(|(k, x)| (k, Value::from(x))).collect())
                }
            }
        }
    }

    /// The core's value as serde_json's: the same tree.
    impl From<Value> for serde_json::Value {
        fn from(v: Value) -> serde_json::Value {
            match v {
                Value::Null => serde_json::Value::Null,
                Value::Bool(b) => serde_json::Value::Bool(b),
                Value::Number(n) => match (n.as_u64(), n.as_i64()) {
                    (Some(u), _) => u.into(),
                    (None, Some(i)) => i.into(),
                    _ => n.as_f64().map_or(serde_json::Value::Null, serde_json::Value::from),
                },
                Value::String(x) => serde_json::Value::String(x),
                Value::Array(items) => serde_json::Value::Array(items.into_iter().map(Into::into).collect()),
                Value::Object(m) => serde_json::Value::Object(
                    m.into_iter().map(|(k, x)| (k, x.into())).collect::<serde_json::Map<_, _>>(),
                ),
            }
        }
    }

    impl From<Map<String, Value>> for serde_json::Map<String, serde_json::Value> {
        fn from(m: Map<String, Value>) -> Self {
            m.into_iter().map(|(k, x)| (k, x.into())).collect()
        }
    }
}

/// A type the core writes as JSON: numbers, strings, options (`None` is
/// `null`), lists, and the core's own records, decisions and snapshots.
///
/// [`json!`](crate::json!) writes every expression it is given with it, by
/// reference, as serde_json's `json!` does with `Serialize`.
pub trait ToJson {
    /// The value this is written as.
    fn to_value(&self) -> Value;

    /// Appends this as compact JSON text. The core's structs write their
    /// members in the order they declare them (as serde's derive did), where
    /// [`to_value`](ToJson::to_value)'s objects sort their keys.
    fn write_json(&self, out: &mut String) {
        write_value(out, &self.to_value());
    }

    /// This as compact JSON text (see [`write_json`](ToJson::write_json)).
    fn to_json_text(&self) -> String {
        let mut out = String::new();
        self.write_json(&mut out);
        out
    }
}

/// Appends an object's text with its members in the order given.
pub(crate) fn write_members(out: &mut String, members: &[(&str, &dyn ToJson)]) {
    out.push('{');
    for (i, (k, v)) in members.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        value::write_string(out, k);
        out.push(':');
        v.write_json(out);
    }
    out.push('}');
}

/// An object of `members` (its keys sorted once).
pub(crate) fn members_value(members: &[(&str, &dyn ToJson)]) -> Value {
    Value::Object(members.iter().map(|(k, v)| ((*k).to_owned(), v.to_value())).collect())
}

/// Implements [`ToJson`] for a struct from its members, named once: its
/// value is an object of them, its text lists them in this order (as
/// [`write_members`] does, but without dynamic dispatch: each struct's
/// members are written by their own types' code, which is smaller in the
/// wasm module than a vtable per member type).
macro_rules! json_struct {
    ($t:ty { $($f:ident),+ $(,)? }) => {
        impl $crate::json::ToJson for $t {
            fn to_value(&self) -> $crate::json::Value {
                let mut m = $crate::json::Map::new();
                $(m.insert(stringify!($f).into(), $crate::json::ToJson::to_value(&self.$f));)+
                $crate::json::Value::Object(m)
            }
            fn write_json(&self, out: &mut String) {
                let mut sep = '{';
                $(
                    out.push(sep);
                    sep = ',';
                    out.push_str(concat!("\"", stringify!($f), "\":"));
                    $crate::json::ToJson::write_json(&self.$f, out);
                )+
                let _ = sep;
                out.push('}');
            }
        }
    };
}

impl ToJson for Value {
    fn to_value(&self) -> Value {
        self.clone()
    }
}

impl ToJson for Map<String, Value> {
    fn to_value(&self) -> Value {
        Value::Object(self.clone())
    }
}

impl ToJson for str {
    fn to_value(&self) -> Value {
        Value::String(self.to_owned())
    }
}

impl ToJson for String {
    fn to_value(&self) -> Value {
        Value::String(self.clone())
    }
}

impl ToJson for bool {
    fn to_value(&self) -> Value {
        Value::Bool(*self)
    }
}

macro_rules! to_json_via_from {
    ($($t:ty),*) => {$(
        impl ToJson for $t {
            fn to_value(&self) -> Value {
                Value::from(*self)
            }
        }
    )*};
}
// A float that is not finite is `null`, as serde_json writes it.
to_json_via_from!(u8, u16, u32, u64, usize, i8, i16, i32, i64, isize, f32, f64);

impl<T: ToJson + ?Sized> ToJson for &T {
    fn to_value(&self) -> Value {
        (**self).to_value()
    }
    fn write_json(&self, out: &mut String) {
        (**self).write_json(out);
    }
}

impl<T: ToJson> ToJson for Option<T> {
    fn to_value(&self) -> Value {
        self.as_ref().map_or(Value::Null, ToJson::to_value)
    }
    fn write_json(&self, out: &mut String) {
        match self {
            Some(x) => x.write_json(out),
            None => out.push_str("null"),
        }
    }
}

impl<T: ToJson> ToJson for [T] {
    fn to_value(&self) -> Value {
        Value::Array(self.iter().map(ToJson::to_value).collect())
    }
    fn write_json(&self, out: &mut String) {
        out.push('[');
        for (i, x) in self.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            x.write_json(out);
        }
        out.push(']');
    }
}

impl<T: ToJson, const N: usize> ToJson for [T; N] {
    fn to_value(&self) -> Value {
        self[..].to_value()
    }
    fn write_json(&self, out: &mut String) {
        self[..].write_json(out);
    }
}

impl<T: ToJson> ToJson for Vec<T> {
    fn to_value(&self) -> Value {
        self[..].to_value()
    }
    fn write_json(&self, out: &mut String) {
        self[..].write_json(out);
    }
}

impl<A: ToJson, B: ToJson> ToJson for (A, B) {
    fn to_value(&self) -> Value {
        Value::Array(vec![self.0.to_value(), self.1.to_value()])
    }
    fn write_json(&self, out: &mut String) {
        out.push('[');
        self.0.write_json(out);
        out.push(',');
        self.1.write_json(out);
        out.push(']');
    }
}

/// Builds a [`Value`] from JSON-like syntax, as serde_json's `json!` does:
/// `json!({"a": [1, x, null], "b": {"c": y}})`, each expression written by
/// [`ToJson`] (by reference: nothing is moved).
///
/// Adapted from serde_json's `json!` (MIT OR Apache-2.0), with `ToJson` in
/// place of `Serialize`.
#[macro_export]
macro_rules! json {
    ($($json:tt)+) => {
        $crate::json_internal!($($json)+)
    };
}

#[macro_export]
#[doc(hidden)]
macro_rules! json_internal {
    (@array [$($elems:expr,)*]) => {
        ::std::vec![$($elems,)*]
    };
    (@array [$($elems:expr),*]) => {
        ::std::vec![$($elems),*]
    };
    (@array [$($elems:expr,)*] null $($rest:tt)*) => {
        $crate::json_internal!(@array [$($elems,)* $crate::json_internal!(null)] $($rest)*)
    };
    (@array [$($elems:expr,)*] true $($rest:tt)*) => {
        $crate::json_internal!(@array [$($elems,)* $crate::json_internal!(true)] $($rest)*)
    };
    (@array [$($elems:expr,)*] false $($rest:tt)*) => {
        $crate::json_internal!(@array [$($elems,)* $crate::json_internal!(false)] $($rest)*)
    };
    (@array [$($elems:expr,)*] [$($array:tt)*] $($rest:tt)*) => {
        $crate::json_internal!(@array [$($elems,)* $crate::json_internal!([$($array)*])] $($rest)*)
    };
    (@array [$($elems:expr,)*] {$($map:tt)*} $($rest:tt)*) => {
        $crate::json_internal!(@array [$($elems,)* $crate::json_internal!({$($map)*})] $($rest)*)
    };
    (@array [$($elems:expr,)*] $next:expr, $($rest:tt)*) => {
        $crate::json_internal!(@array [$($elems,)* $crate::json_internal!($next),] $($rest)*)
    };
    (@array [$($elems:expr,)*] $last:expr) => {
        $crate::json_internal!(@array [$($elems,)* $crate::json_internal!($last)])
    };
    (@array [$($elems:expr),*] , $($rest:tt)*) => {
        $crate::json_internal!(@array [$($elems,)*] $($rest)*)
    };
    (@array [$($elems:expr),*] $unexpected:tt $($rest:tt)*) => {
        $crate::json_unexpected!($unexpected)
    };

    (@object $object:ident () () ()) => {};
    (@object $object:ident [$($key:tt)+] ($value:expr) , $($rest:tt)*) => {
        let _ = $object.insert(($($key)+).into(), $value);
        $crate::json_internal!(@object $object () ($($rest)*) ($($rest)*));
    };
    (@object $object:ident [$($key:tt)+] ($value:expr) $unexpected:tt $($rest:tt)*) => {
        $crate::json_unexpected!($unexpected);
    };
    (@object $object:ident [$($key:tt)+] ($value:expr)) => {
        let _ = $object.insert(($($key)+).into(), $value);
    };
    (@object $object:ident ($($key:tt)+) (: null $($rest:tt)*) $copy:tt) => {
        $crate::json_internal!(@object $object [$($key)+] ($crate::json_internal!(null)) $($rest)*);
    };
    (@object $object:ident ($($key:tt)+) (: true $($rest:tt)*) $copy:tt) => {
        $crate::json_internal!(@object $object [$($key)+] ($crate::json_internal!(true)) $($rest)*);
    };
    (@object $object:ident ($($key:tt)+) (: false $($rest:tt)*) $copy:tt) => {
        $crate::json_internal!(@object $object [$($key)+] ($crate::json_internal!(false)) $($rest)*);
    };
    (@object $object:ident ($($key:tt)+) (: [$($array:tt)*] $($rest:tt)*) $copy:tt) => {
        $crate::json_internal!(@object $object [$($key)+] ($crate::json_internal!([$($array)*])) $($rest)*);
    };
    (@object $object:ident ($($key:tt)+) (: {$($map:tt)*} $($rest:tt)*) $copy:tt) => {
        $crate::json_internal!(@object $object [$($key)+] ($crate::json_internal!({$($map)*})) $($rest)*);
    };
    (@object $object:ident ($($key:tt)+) (: $value:expr , $($rest:tt)*) $copy:tt) => {
        $crate::json_internal!(@object $object [$($key)+] ($crate::json_internal!($value)) , $($rest)*);
    };
    (@object $object:ident ($($key:tt)+) (: $value:expr) $copy:tt) => {
        $crate::json_internal!(@object $object [$($key)+] ($crate::json_internal!($value)));
    };
    (@object $object:ident ($($key:tt)+) (:) $copy:tt) => {
        $crate::json_internal!();
    };
    (@object $object:ident ($($key:tt)+) () $copy:tt) => {
        $crate::json_internal!();
    };
    (@object $object:ident () (: $($rest:tt)*) ($colon:tt $($copy:tt)*)) => {
        $crate::json_unexpected!($colon);
    };
    (@object $object:ident ($($key:tt)*) (, $($rest:tt)*) ($comma:tt $($copy:tt)*)) => {
        $crate::json_unexpected!($comma);
    };
    (@object $object:ident () (($key:expr) : $($rest:tt)*) $copy:tt) => {
        $crate::json_internal!(@object $object ($key) (: $($rest)*) (: $($rest)*));
    };
    (@object $object:ident ($($key:tt)*) (: $($unexpected:tt)+) $copy:tt) => {
        $crate::json_expect_expr_comma!($($unexpected)+);
    };
    (@object $object:ident ($($key:tt)*) ($tt:tt $($rest:tt)*) $copy:tt) => {
        $crate::json_internal!(@object $object ($($key)* $tt) ($($rest)*) ($($rest)*));
    };

    (null) => {
        $crate::json::Value::Null
    };
    (true) => {
        $crate::json::Value::Bool(true)
    };
    (false) => {
        $crate::json::Value::Bool(false)
    };
    ([]) => {
        $crate::json::Value::Array(::std::vec![])
    };
    ([ $($tt:tt)+ ]) => {
        $crate::json::Value::Array($crate::json_internal!(@array [] $($tt)+))
    };
    ({}) => {
        $crate::json::Value::Object($crate::json::Map::new())
    };
    ({ $($tt:tt)+ }) => {
        $crate::json::Value::Object({
            let mut object = $crate::json::Map::new();
            $crate::json_internal!(@object object () ($($tt)+) ($($tt)+));
            object
        })
    };
    ($other:expr) => {
        $crate::json::ToJson::to_value(&$other)
    };
}

#[macro_export]
#[doc(hidden)]
macro_rules! json_unexpected {
    () => {};
}

#[macro_export]
#[doc(hidden)]
macro_rules! json_expect_expr_comma {
    ($e:expr , $($tt:tt)*) => {};
}

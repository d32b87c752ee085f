//! The core's JSON value (`retrycore::json`) against serde_json's, which it
//! replaces: the same text for every double (its bits drawn at random, and
//! the edges of each notation), every string (control characters, quotes,
//! non-ASCII), every tree; the same answers from its accessors; and an
//! object that behaves as serde_json's sorted map under inserts and removes.

use proptest::prelude::*;
use retrycore::json::{Map, Value};

fn theirs(v: &Value) -> serde_json::Value {
    serde_json::Value::from(v.clone())
}

fn arb_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<u64>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(|b| Value::from(f64::from_bits(b))),
        "[a-c\"\\\\\u{0}-\u{1f}\u{7f}é😀/]{0,6}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 40, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec(("[a-d\"é]{0,3}", inner), 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect::<Map<String, Value>>())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(20_000))]
    /// Every double is written as serde_json writes it, and reads back.
    #[test]
    fn doubles(bits in any::<u64>()) {
        let x = f64::from_bits(bits);
        let ours = Value::from(x);
        prop_assert_eq!(ours.to_string(), theirs(&ours).to_string());
        if x.is_finite() {
            prop_assert_eq!(ours.to_string().parse::<f64>().ok(), Some(x));
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3_000))]
    /// Trees: the same text, the same tree back through serde_json.
    #[test]
    fn trees(v in arb_value()) {
        let text = v.to_string();
        prop_assert_eq!(&text, &theirs(&v).to_string());
        prop_assert_eq!(format!("{v:#}"), serde_json::to_string_pretty(&theirs(&v)).unwrap());
        let back: Value = serde_json::from_str::<serde_json::Value>(&text).unwrap().into();
        prop_assert_eq!(back, v);
    }

    /// Objects behave as serde_json's sorted map, key by key and batch by batch.
    #[test]
    fn objects(ops in prop::collection::vec((0u8..4, "[a-e]{0,2}", any::<u8>()), 0..40)) {
        let mut ours = Map::new();
        let mut them = serde_json::Map::new();
        for (op, k, x) in ops {
            match op {
                0 => prop_assert_eq!(
                    ours.insert(k.clone(), Value::from(x)).map(|v| theirs(&v)),
                    them.insert(k, serde_json::Value::from(x))
                ),
                1 => prop_assert_eq!(ours.remove(k.as_str()).map(|v| theirs(&v)), them.remove(k.as_str())),
                // A batch, its key repeated: the last one wins.
                2 => {
                    let batch = [(k.clone(), x), (format!("{k}x"), x), (k.clone(), x.wrapping_add(1))];
                    ours.extend(batch.iter().map(|(k, x)| (k.clone(), Value::from(*x))));
                    them.extend(batch.iter().map(|(k, x)| (k.clone(), serde_json::Value::from(*x))));
                }
                _ => {
                    prop_assert_eq!(ours.get(k.as_str()).map(theirs), them.get(k.as_str()).cloned());
                    prop_assert_eq!(ours.contains_key(k.as_str()), them.contains_key(k.as_str()));
                }
            }
            prop_assert_eq!(ours.len(), them.len());
            prop_assert!(ours.keys().eq(them.keys()));
        }
    }
}

#[test]
fn the_edges_of_each_notation() {
    for x in [
        0.0,
        -0.0,
        1.0,
        2.0,
        0.1,
        100.0,
        1e15,
        9.999999999999998e15,
        1e16,
        1.5e16,
        1e21,
        1e22,
        1e-5,
        1.5e-5,
        9.999999999999999e-6,
        1e-6,
        1.5e-7,
        5e-324,
        f64::MAX,
        f64::MIN_POSITIVE,
        9007199254740993.0,
        0.3,
        2.0f64.powi(60),
        2.0f64.powi(-60),
        123456789012345.6,
        5e-310,
    ] {
        for y in [x, -x] {
            let v = Value::from(y);
            assert_eq!(v.to_string(), theirs(&v).to_string(), "{y:e}");
        }
    }
    assert_eq!(Value::from(f64::NAN), Value::Null);
    assert_eq!(Value::from(f64::INFINITY), Value::Null);
}

#[test]
fn accessors_answer_as_serde_jsons() {
    let samples = [
        Value::from(u64::MAX),
        Value::from(i64::MIN),
        Value::from(1u8),
        Value::from(-1),
        Value::from(1.0),
        Value::from(-0.0),
        Value::from("x"),
        Value::Null,
        Value::Bool(true),
        retrycore::json!([1, "a"]),
        retrycore::json!({"a": {"b": [1]}}),
    ];
    for v in &samples {
        let t = theirs(v);
        assert_eq!(v.as_u64(), t.as_u64(), "{v}");
        assert_eq!(v.as_i64(), t.as_i64(), "{v}");
        assert_eq!(v.as_f64(), t.as_f64(), "{v}");
        assert_eq!(v.is_u64(), t.is_u64(), "{v}");
        assert_eq!(v.is_i64(), t.is_i64(), "{v}");
        assert_eq!(v.is_f64(), t.is_f64(), "{v}");
        assert_eq!(v.as_str(), t.as_str(), "{v}");
        assert_eq!(v.as_bool(), t.as_bool(), "{v}");
        assert_eq!(format!("{v:?}"), format!("{t:?}"), "Debug");
        assert_eq!(theirs(&v["a"]), t["a"]);
        assert_eq!(theirs(&v[1]), t[1]);
    }
    let mut v = Value::Null;
    v["a"] = retrycore::json!(1);
    v["b"]["c"] = retrycore::json!(null);
    assert_eq!(v.to_string(), r#"{"a":1,"b":{"c":null}}"#);
}

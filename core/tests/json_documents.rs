//! The document parser (`retrycore::parse_document`, the core's own JSON
//! parser in document mode) against serde_json, which read documents before
//! it: on every fuzz corpus input, every vector file, hand-picked edges and
//! generated text, both accept the same text with the same value (its
//! serde_json text equal, so `-0.0` and `1.0` stay what they were) or both
//! refuse it, but for two deliberate differences: a key given twice in one
//! object is refused (serde_json keeps the last), and nesting is limited as
//! every JSON value is (docs/limits.md, `max_depth`: 128 levels read, 129
//! refused; serde_json refused 128 already).

use proptest::prelude::*;
use serde_json::Value;
use std::path::Path;

/// Why the two may differ on `text`, if they may.
fn allowed_difference(reason: &str) -> bool {
    reason.contains("duplicate key") || reason.contains("nesting deeper than")
}

fn agree(text: &str) {
    let ours = retrycore::parse_document(text);
    let theirs = serde_json::from_str::<Value>(text);
    match (&ours, &theirs) {
        (Ok(a), Ok(b)) => assert_eq!(a.to_string(), b.to_string(), "different values for {text:?}"),
        (Err(e), Err(_)) => assert_eq!(e.code(), "invalid_json", "{text:?}: {e}"),
        (Err(e), Ok(_)) if allowed_difference(e.reason()) => {}
        (Err(e), Ok(v)) => panic!("{text:?}: refused ({e}) but serde_json reads {v}"),
        (Ok(v), Err(e)) => panic!("{text:?}: read as {v} but serde_json refuses it ({e})"),
    }
}

fn each_file(dir: &Path, f: &mut dyn FnMut(&str)) -> usize {
    let mut n = 0;
    let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            n += each_file(&p, f);
        } else if let Ok(text) = std::fs::read_to_string(&p) {
            f(&text);
            n += 1;
        }
    }
    n
}

#[test]
fn fuzz_corpora_and_vectors() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut n = 0;
    for dir in ["fuzz/corpus", "tests/vectors"] {
        n += each_file(&root.join(dir), &mut agree);
    }
    assert!(n > 5000, "only {n} inputs");
}

#[test]
fn edges() {
    for text in [
        "0",
        "-0",
        "-0.0",
        "0.0",
        "1.0",
        "1e2",
        "1E+2",
        "1e-400",
        "1e400",
        "-1e400",
        "2.5e-324",
        "1.7976931348623157e308",
        "18446744073709551615",
        "18446744073709551616",
        "-9223372036854775808",
        "-9223372036854775809",
        "123456789012345678901234567890",
        "9007199254740993",
        "0.1",
        "3.141592653589793238462643383279",
        "01",
        "-",
        "1.",
        ".5",
        "1e",
        "+1",
        "NaN",
        "Infinity",
        "[1,]",
        "{\"a\":1,}",
        "{\"a\" 1}",
        "{1:2}",
        "[",
        "]",
        "",
        " ",
        "\u{feff}{}",
        "{} x",
        "true",
        "tru",
        "nulll",
        "\"\\ud800\"",
        "\"\\udc00\"",
        "\"\\ud83d\\ude00\"",
        "\"\\u00e9\"",
        "\"\\x\"",
        "\"a\tb\"",
        "\"a\u{7f}b\"",
        "\"\u{e9}\"",
        "\"\\/\"",
        "[1, 2.5, -3, \"x\", null, true, {}]",
        "{\"b\":1,\"a\":2}",
        "{\"a\":1,\"a\":2}",
        "{\"a\":{\"b\":[{\"c\":null}]}}",
        " \t\n\r[ ] ",
    ] {
        agree(text);
    }
    for depth in [1, 127, 128, 129, 200] {
        for text in ["[".repeat(depth) + &"]".repeat(depth), "{\"a\":".repeat(depth) + "1" + &"}".repeat(depth)] {
            if depth < 128 {
                agree(&text);
            } else {
                let read = retrycore::parse_document(&text);
                assert_eq!(read.is_ok(), depth == 128, "{depth} levels: {read:?}");
            }
        }
    }
}

fn json_text() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        Just("null".to_owned()),
        any::<bool>().prop_map(|b| b.to_string()),
        any::<i64>().prop_map(|n| n.to_string()),
        any::<u64>().prop_map(|n| n.to_string()),
        any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(|f| format!("{f:e}")),
        "[-+0-9.eE]{1,24}",
        "\"([a-z\u{e9}\u{1f600}]|\\\\[nrt\"\\\\/bfu]|\\\\u[0-9a-fA-F]{4}){0,8}\"",
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(|xs| format!("[{}]", xs.join(","))),
            prop::collection::vec(("[a-c]{1,2}", inner), 0..6).prop_map(|ms| format!(
                "{{{}}}",
                ms.iter().map(|(k, v)| format!("\"{k}\": {v}")).collect::<Vec<_>>().join(", ")
            )),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    #[test]
    fn generated_text(text in json_text()) {
        agree(&text);
    }

    #[test]
    fn generated_text_cut_or_spliced(text in json_text(), cut in any::<prop::sample::Index>(), junk in "[\\[\\]{}\",:0-9e.\\-a-z \\\\]{0,3}") {
        let mut at = cut.index(text.len() + 1);
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        agree(&format!("{}{junk}{}", &text[..at], &text[at..]));
        agree(&text[..at]);
    }
}

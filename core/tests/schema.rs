//! The shipped JSON Schema agrees with the parser on the policy vectors and
//! the example policies.

use serde_json::Value;
use std::path::Path;

fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

fn load(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

/// Invalid documents whose rule the schema cannot express (the parser is authoritative).
const PARSER_ONLY: &[&str] = &[
    "initial above max_delay",
    "min_delay above max_delay",
    "additive jitter above max",
    "decorrelated with jitter",
    "decorrelated zero initial",
    "alias and key together",
    "unknown jitter key",
    "symmetric without factor",
    "rule with reversed range",
    "rule with unknown grpc code",
    "budget and budgets",
    "two budgets with one name",
    "seed past u64",
    "max_attempts fractional",
    "a token bucket without its limit names limiter.token_limit",
];

#[test]
fn schema_agrees_with_the_parser() {
    let schema = load(&root().join("schema/policy.schema.json"));
    let validator = jsonschema::validator_for(&schema).expect("the schema compiles");
    let mut checked = 0;
    let files = [
        "tests/vectors/policy/documents.json",
        "tests/vectors/policy/anchor-keys.json",
        "tests/vectors/policy/limiter.json",
    ];
    let docs: Vec<Value> = files.iter().map(|f| load(&root().join(f))).collect();
    for case in docs.iter().flat_map(|d| d["cases"].as_array().unwrap()) {
        let name = case["name"].as_str().unwrap();
        let Some(document) = case.get("document") else { continue };
        let valid = validator.is_valid(document);
        if case.get("error").is_some() {
            if !PARSER_ONLY.contains(&name) {
                assert!(!valid, "{name}: the parser rejects it but the schema accepts it");
            }
        } else {
            assert!(valid, "{name}: the parser accepts it but the schema rejects it");
            assert!(validator.is_valid(&case["expect"]), "{name}: the normalized form fails the schema");
        }
        checked += 1;
    }
    assert!(checked > 50);
    for dir in ["examples/policies"] {
        let Ok(entries) = std::fs::read_dir(root().join(dir)) else { continue };
        for e in entries.flatten() {
            let p = e.path();
            if p.extension().is_some_and(|x| x == "json") && !p.to_string_lossy().contains("invalid") {
                let v = load(&p);
                assert!(validator.is_valid(&v), "{}: fails the schema", p.display());
                retrycore::policy::PolicyConfig::from_json(&v.to_string())
                    .unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            }
        }
    }
}

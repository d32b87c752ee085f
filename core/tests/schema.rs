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

/// Service descriptions the schema cannot judge as the parser does (the parser is authoritative).
const SERVICE_PARSER_ONLY: &[&str] = &["service error: service with a cycle"];

#[test]
fn service_schema_agrees_with_the_parser() {
    let schema = load(&root().join("schema/service.schema.json"));
    let validator = jsonschema::validator_for(&schema).expect("the schema compiles");
    let mut checked = 0;
    let dir = root().join("tests/vectors/lint");
    for e in std::fs::read_dir(&dir).unwrap().flatten() {
        for case in load(&e.path())["cases"].as_array().unwrap() {
            let Some(service) = case.get("service") else { continue };
            let name = case["name"].as_str().unwrap();
            let parsed = retrycore::lint::Service::from_json_value(&service.clone().into());
            if SERVICE_PARSER_ONLY.contains(&name) {
                continue;
            }
            assert_eq!(validator.is_valid(service), parsed.is_ok(), "{name}: the schema and the parser disagree");
            checked += 1;
        }
    }
    for e in std::fs::read_dir(root().join("examples/services")).into_iter().flatten().flatten() {
        let v = load(&e.path());
        assert!(validator.is_valid(&v), "{}: fails the schema", e.path().display());
        retrycore::lint::Service::from_json_value(&v.clone().into())
            .unwrap_or_else(|x| panic!("{}: {x}", e.path().display()));
    }
    assert!(checked > 10, "{checked} service descriptions checked");
}

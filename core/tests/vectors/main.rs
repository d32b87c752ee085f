//! Runs every shared vector file in `tests/vectors/` against the core.
//!
//! Each file has a `kind`; each kind's module checks its cases. The same
//! files run in Python, Node and wasm through their bindings.

mod common;
mod execute;
mod idempotency;
mod limiter;
mod metrics;
mod retry;
mod saga;
mod store;

use common::Case;
use retrycore::json::Value;
use std::path::{Path, PathBuf};

fn vector_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).expect("tests/vectors exists").flatten().collect();
    entries.sort_by_key(|e| e.path());
    for e in entries {
        let p = e.path();
        if p.is_dir() {
            vector_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "json") {
            out.push(p);
        }
    }
}

fn dispatch(kind: &str, case: &Case) -> Option<Result<(), String>> {
    retry::run(kind, case)
        .or_else(|| idempotency::run(kind, case))
        .or_else(|| execute::run(kind, case))
        .or_else(|| store::run(kind, case))
        .or_else(|| limiter::run(kind, case))
        .or_else(|| saga::run(kind, case))
        .or_else(|| metrics::run(kind, case))
}

#[test]
fn shared_vectors() {
    // RETRYCORE_VECTORS points the runner at another directory (make parity).
    let root = std::env::var_os("RETRYCORE_VECTORS")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/vectors"));
    let mut files = Vec::new();
    vector_files(&root, &mut files);
    assert!(!files.is_empty(), "no vector files under {}", root.display());
    let mut failures = Vec::new();
    let mut total = 0usize;
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let doc: Value = serde_json::from_str::<serde_json::Value>(&text)
            .map(Value::from)
            .unwrap_or_else(|e| panic!("{}: not JSON: {e}", file.display()));
        let kind = doc["kind"].as_str().unwrap_or_else(|| panic!("{}: no kind", file.display()));
        assert!(doc.get("_comment").is_some(), "{}: every vector file has a _comment", file.display());
        let cases = doc["cases"].as_array().unwrap_or_else(|| panic!("{}: no cases", file.display()));
        for (i, raw) in cases.iter().enumerate() {
            total += 1;
            let case = Case::new(raw, &doc);
            let name = raw["name"].as_str().map(str::to_owned).unwrap_or_else(|| format!("#{i}"));
            match dispatch(kind, &case) {
                None => panic!("{}: kind {kind:?} has no runner", file.display()),
                Some(Ok(())) => {}
                Some(Err(msg)) => failures.push(format!(
                    "{} [{}] {}: {msg}",
                    file.strip_prefix(&root).unwrap_or(file).display(),
                    kind,
                    name
                )),
            }
        }
    }
    eprintln!("shared vectors: {} cases in {} files, {} failed", total, files.len(), failures.len());
    assert!(failures.is_empty(), "{} vector cases failed:\n{}", failures.len(), failures.join("\n"));
}

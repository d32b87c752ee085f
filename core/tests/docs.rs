//! Renders the built-in classification tables into docs/classification.md
//! and fails when the checked-in page drifts from the data
//! (`UPDATE_DOCS=1 cargo test -p retrycore --test docs` rewrites it).

use retrycore::classify::{builtin_tables, Category};
use std::fmt::Write as _;
use std::path::Path;

fn render() -> String {
    let rows = builtin_tables();
    let mut out = String::new();
    out.push_str(
        "# Classification tables\n\n\
         <!-- Generated from core/data/*.tsv by core/tests/docs.rs; edit the data, then run\n     \
         UPDATE_DOCS=1 cargo test -p retrycore --test docs -->\n\n\
         What a failure is, and whether it may be retried. The tables are an\n\
         **allow-list**: a status, code or name that no row knows is `unknown`, and\n\
         `unknown` is never retried. How the tables are consulted is described in\n\
         [classification rules](classification-rules.md).\n\n## Categories\n\n\
         | category | retry | counts as a breaker failure |\n| --- | --- | --- |\n",
    );
    for c in Category::ALL {
        let breaker = match retrycore::breaker::BreakerConfig::default_count(c) {
            retrycore::breaker::Counted::Failure => "yes",
            retrycore::breaker::Counted::Success => "no (a success)",
            retrycore::breaker::Counted::Ignored => "not recorded",
        };
        writeln!(out, "| `{}` | `{}` | {breaker} |", c.code(), c.default_rule().code()).unwrap();
    }
    out.push_str(
        "\n`if_idempotent` retries only a GET, HEAD, OPTIONS, TRACE, PUT or DELETE, or a call the\n\
         caller declares idempotent (`idempotent: true`) or sends with an idempotency key the server\n\
         deduplicates on (`idempotency_key_sent: true`). A 409 with a sent key is retried `always`\n\
         (the original is still in progress); a 503 with a Retry-After, and gRPC UNAVAILABLE with a\n\
         pushback, are `overloaded`. Why timeouts, resets and 5xx wait for idempotency is explained in\n\
         [classification rules](classification-rules.md#timeouts-resets-and-5xx-wait-for-idempotency).\n\
         A `cancelled` outcome is neither a success nor a failure for budgets and breakers; an open-breaker\n\
         rejection carries the remaining open time, and other breakers ignore it.\n\n## HTTP statuses\n\n\
         Any other 5xx is a `server_error`; any other status decides nothing.\n\n\
         | status | category | note |\n| --- | --- | --- |\n",
    );
    for r in rows.iter().filter(|r| r.ecosystem == "http") {
        writeln!(out, "| {} | `{}` | {} |", r.number, r.category, r.note).unwrap();
    }
    out.push_str("\n## gRPC status codes\n\n| code | name | category | note |\n| --- | --- | --- | --- |\n");
    for r in rows.iter().filter(|r| r.ecosystem == "grpc") {
        writeln!(out, "| {} | `{}` | `{}` | {} |", r.number, r.key, r.category, r.note).unwrap();
    }
    out.push_str(
        "\n## Error names and codes\n\n\
         Flags: **qualified** — matches only the full name (its simple name is ambiguous);\n\
         **defer** — a wrapper that decides only when nothing else in the cause chain does;\n\
         **refused** — a refused connection, which takes no budget token.\n",
    );
    let mut ecos: Vec<&str> =
        rows.iter().filter(|r| r.number == 0 && r.ecosystem != "grpc").map(|r| r.ecosystem).collect();
    ecos.sort_unstable();
    ecos.dedup();
    for eco in ecos {
        writeln!(out, "\n### {eco}\n\n| name | category | flags | note |\n| --- | --- | --- | --- |").unwrap();
        let mut these: Vec<_> = rows.iter().filter(|r| r.ecosystem == eco && r.number == 0).collect();
        these.sort_by_key(|r| (r.category, r.key));
        for r in these {
            writeln!(
                out,
                "| `{}` | `{}` | {} | {} |",
                r.key.replace('|', "\\|"),
                r.category,
                r.flags,
                r.note.replace('|', "\\|")
            )
            .unwrap();
        }
    }
    out
}

#[test]
fn classification_page_matches_the_data() {
    let path = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/classification.md"));
    let want = render();
    if std::env::var_os("UPDATE_DOCS").is_some() {
        std::fs::write(path, &want).unwrap();
        return;
    }
    let got = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        got == want,
        "docs/classification.md drifted from core/data; run UPDATE_DOCS=1 cargo test -p retrycore --test docs"
    );
}

/// The ```json blocks of README.md and docs/*.md that are not policy
/// documents, with what they are instead (each must still be JSON).
const NOT_POLICIES: &[(&str, &str)] = &[
    ("docs/cli.md", "a simulation scenario (read by `retrycore simulate --scenario`)"),
    ("docs/idempotency.md", "a stored idempotency record, shown for its fields"),
    ("docs/compensation.md", "a saga document (read by `CompensationPlan`; tests/dead_letters.rs parses it)"),
    ("docs/dead-letters.md", "a replay audit record (tests/dead_letters.rs holds it to its schema)"),
];

/// Every policy shown in the docs parses as written: each ```json block of
/// README.md and docs/*.md is a policy document (a block of one document per
/// line is read line by line), except the blocks `NOT_POLICIES` names.
#[test]
fn json_snippets_in_the_docs_are_policies_that_parse() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let mut files = vec![root.join("README.md")];
    let mut docs: Vec<_> = std::fs::read_dir(root.join("docs")).unwrap().map(|e| e.unwrap().path()).collect();
    docs.retain(|p| p.extension().is_some_and(|x| x == "md"));
    docs.sort();
    files.extend(docs);
    let mut policies = 0;
    for path in files {
        let rel = path.strip_prefix(root).unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&path).unwrap();
        for (i, block) in text.split("```json\n").skip(1).enumerate() {
            let block = block.split("```").next().unwrap();
            let at = format!("{rel}, json block {}", i + 1);
            if NOT_POLICIES.iter().any(|(f, _)| *f == rel) {
                serde_json::from_str::<serde_json::Value>(block).unwrap_or_else(|e| panic!("{at}: not JSON: {e}"));
                continue;
            }
            let docs: Vec<&str> = if serde_json::from_str::<serde_json::Value>(block).is_ok() {
                vec![block]
            } else {
                block.lines().filter(|l| !l.trim().is_empty()).collect()
            };
            for d in docs {
                retrycore::policy::PolicyConfig::from_json(d).unwrap_or_else(|e| panic!("{at}: {e}\n{d}"));
                policies += 1;
            }
        }
    }
    assert!(policies >= 6, "only {policies} policies found in the docs");
}

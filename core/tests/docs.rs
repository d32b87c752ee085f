//! Renders the built-in classification tables into docs/classification.md
//! and fails when the checked-in page drifts from the data
//! (`UPDATE_DOCS=1 cargo test -p retrycore --test docs` rewrites it).

use retrycore::classify::{builtin_tables, classify, Category, DecidedBy, FailureBuf, Verdict};
use serde_json::Value;
use std::fmt::Write as _;
use std::path::Path;

/// The cases of tests/vectors/classify/clients.json: what each HTTP client
/// raised per fault (captured from the versions the file names).
fn client_cases() -> Vec<Value> {
    let path = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/vectors/classify/clients.json"));
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    doc["cases"].as_array().unwrap().clone()
}

/// The core's verdict on a case's failure, and the name (or "status N") that decided it.
fn verdict_of(case: &Value) -> (Verdict, String) {
    let f = &case["failure"];
    let strs = |v: &Value| v.as_array().map(|a| a.iter().map(|x| x.as_str().unwrap().to_owned()).collect::<Vec<_>>());
    let names = strs(&f["error_names"]).unwrap_or_default();
    let headers =
        f["headers"].as_array().map(|a| a.iter().map(|h| strs(h).unwrap()).map(|h| (h[0].clone(), h[1].clone())));
    let buf = FailureBuf {
        status: f["status"].as_u64().map(|s| s as u16),
        error_names: names.clone(),
        grpc_code: f["grpc_code"].as_u64().and_then(|c| retrycore::classify::GrpcCode::new(c as u8)),
        method: f["method"].as_str().map(str::to_owned),
        idempotent: f["idempotent"].as_bool(),
        headers: headers.map(Iterator::collect).unwrap_or_default(),
        ..Default::default()
    };
    let v = buf.with(classify);
    let by = match v.decided_by {
        DecidedBy::Name(i) | DecidedBy::Wrapper(i) => format!("`{}`", names[i]),
        DecidedBy::Status => format!("status {}", buf.status.unwrap()),
        DecidedBy::GrpcCode => format!("gRPC code {}", buf.grpc_code.unwrap().name()),
        other => format!("{other:?}"),
    };
    (v, by)
}

/// The "Real clients" section: per client, each fault, the outermost error,
/// what decided, the category and whether a GET and a POST are retried.
fn render_clients(out: &mut String) {
    out.push_str(
        "\n## Real clients\n\n\
         What the HTTP clients raise for each fault, and the verdict. The rows are the cases of\n\
         `tests/vectors/classify/clients.json`, which every runtime runs: each error's cause chain\n\
         as the host reads it, captured from the client version named against a local server\n\
         (refused port, a full accept queue, a reset before and after the request was read, a\n\
         close without an answer, no answer within the read timeout, a body cut short, plain\n\
         HTTP answering a TLS client, a self-signed certificate; for gRPC, a server answering\n\
         each status). **GET** and **POST** say whether the attempt is retried once the method is\n\
         known: read from the error where *method on the error* says so, else declared by the\n\
         caller (docs/classification-rules.md, \"What is read\"); for gRPC they are a call\n\
         declared idempotent and one that is not. `retrycore:connecting` is the marker a host adds when the error says\n\
         the request was never sent (got's `event`, node:http's `socket.connecting`): the JS\n\
         host's reading of it is not written yet, so until then those two connect timeouts are\n\
         `timeout`. `core/tests/docs.rs` reads this table back and compares it with the core.\n",
    );
    let cases = client_cases();
    let mut clients: Vec<&str> = Vec::new();
    for c in &cases {
        let name = c["client"].as_str().unwrap();
        if !clients.contains(&name) {
            clients.push(name);
        }
    }
    for client in clients {
        writeln!(
            out,
            "\n### {client}\n\n| fault | error | decided by | category | GET | POST | method on the error |\n\
             | --- | --- | --- | --- | --- | --- | --- |"
        )
        .unwrap();
        let these: Vec<&Value> = cases.iter().filter(|c| c["client"] == client).collect();
        for pair in these.chunks(2) {
            let (get, post) = (&pair[0], &pair[1]);
            assert_eq!(get["fault"], post["fault"], "clients.json: GET and POST cases come in pairs");
            let ((g, by), (p, _)) = (verdict_of(get), verdict_of(post));
            let yes = |v: &Verdict| if v.retryable { "retried" } else { "no" };
            let names = get["failure"]["error_names"].as_array().unwrap();
            let mut error = format!("`{}`", names[0].as_str().unwrap());
            if let Some(r) = get["reads"].as_str() {
                write!(error, " + `retrycore:connecting` (from {r})").unwrap();
            }
            writeln!(
                out,
                "| {} | {error} | {by} | `{}` / `{}` | {} | {} | {} |",
                get["fault"].as_str().unwrap(),
                g.category.code(),
                g.retry.code(),
                yes(&g),
                yes(&p),
                if get["method_on_error"] == true { "yes" } else { "no" },
            )
            .unwrap();
        }
    }
}

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
    render_clients(&mut out);
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

/// The "Real clients" tables as the checked-in page shows them agree with
/// the core: each row's category, rule, decider and GET/POST answers are
/// what the core says of that client's fault (read from the page, not from
/// `render`, so an edited page fails too).
#[test]
fn the_real_clients_tables_say_what_the_core_decides() {
    let path = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/classification.md"));
    let page = std::fs::read_to_string(path).unwrap();
    let section = page.split("\n## Real clients\n").nth(1).expect("docs/classification.md has a Real clients section");
    let cases = client_cases();
    let (mut client, mut rows) = (String::new(), 0);
    for line in section.lines() {
        if let Some(c) = line.strip_prefix("### ") {
            client = c.to_owned();
            continue;
        }
        let cells: Vec<&str> = line.split(" | ").map(|c| c.trim_matches(|x| x == '|' || x == ' ')).collect();
        if cells.len() != 7 || cells[0] == "fault" || cells[0].starts_with("---") {
            continue;
        }
        // The GET (or idempotent) case, then its POST (or not idempotent) twin.
        let i = cases
            .iter()
            .position(|c| c["client"] == client.as_str() && c["fault"] == cells[0])
            .unwrap_or_else(|| panic!("no case for {client}: {}", cells[0]));
        let ((g, by), (p, _)) = (verdict_of(&cases[i]), verdict_of(&cases[i + 1]));
        let at = format!("{client}: {}", cells[0]);
        assert_eq!(cells[2], by, "{at}: decided by");
        assert_eq!(cells[3], format!("`{}` / `{}`", g.category.code(), g.retry.code()), "{at}: category");
        assert_eq!(cells[4] == "retried", g.retryable, "{at}: GET");
        assert_eq!(cells[5] == "retried", p.retryable, "{at}: POST");
        rows += 1;
    }
    assert_eq!(rows * 2, cases.len(), "every case of clients.json has its row");
}

/// The ```json blocks of README.md and docs/*.md that are not policy
/// documents, with what they are instead (each must still be JSON).
const NOT_POLICIES: &[(&str, &str)] = &[
    ("docs/cli.md", "a simulation scenario (read by `retrycore simulate --scenario`)"),
    ("docs/idempotency.md", "a stored idempotency record, shown for its fields"),
    ("docs/observability.md", "an alerts document (read by core/tests/observability.rs)"),
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

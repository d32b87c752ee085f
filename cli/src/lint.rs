//! `retrycore lint POLICY [--service SERVICE]`: the core's lint findings.

use crate::error::CliError;
use crate::input;
use retrycore::json;
use retrycore::lint::{self, Finding, Severity};
use std::fmt::Write as _;
use std::path::Path;

/// Runs the command; returns exit code 1 when a finding is an error.
pub fn run(policy: &Path, service: Option<&Path>, as_json: bool) -> Result<u8, CliError> {
    let (config, _) = input::read_policy(policy)?;
    let svc = service.map(input::read_service).transpose()?;
    let mut findings = lint::lint(&config, svc.as_ref());
    // Most serious first; the core's order within a severity.
    findings.sort_by_key(|f| std::cmp::Reverse(f.severity));
    let errors = findings.iter().filter(|f| f.severity == Severity::Error).count();
    let out = if as_json {
        render_json(policy, service, &findings)
    } else {
        render_text(&input::policy_name(&config, policy), &findings)
    };
    print!("{out}");
    Ok(u8::from(errors > 0))
}

fn render_json(policy: &Path, service: Option<&Path>, findings: &[Finding]) -> String {
    let count = |s: Severity| findings.iter().filter(|f| f.severity == s).count();
    let v = json!({
        "policy": policy.display().to_string(),
        "service": service.map(|s| s.display().to_string()),
        "ok": count(Severity::Error) == 0,
        "errors": count(Severity::Error),
        "warnings": count(Severity::Warning),
        "infos": count(Severity::Info),
        "findings": findings.iter().map(|f| json!({
            "code": f.code,
            "severity": f.severity.code(),
            "field": f.field,
            "message": f.message,
        })).collect::<Vec<_>>(),
    });
    format!("{}\n", serde_json::to_string_pretty(&v).unwrap_or_default())
}

/// Renders findings for people: one line each, then a summary line.
pub fn render_text(name: &str, findings: &[Finding]) -> String {
    let mut s = String::new();
    let code_w = findings.iter().map(|f| f.code.len()).max().unwrap_or(0);
    for f in findings {
        let field = if f.field.is_empty() { String::new() } else { format!("{}: ", f.field) };
        let _ = writeln!(s, "{:<7} {:<code_w$}  {field}{}", f.severity.code(), f.code, f.message);
    }
    let count = |sev: Severity| findings.iter().filter(|f| f.severity == sev).count();
    let (e, w, i) = (count(Severity::Error), count(Severity::Warning), count(Severity::Info));
    if findings.is_empty() {
        let _ = writeln!(s, "{name}: no findings");
    } else {
        let mut parts = vec![plural(e, "error"), plural(w, "warning")];
        if i > 0 {
            parts.push(plural(i, "note"));
        }
        let verdict = if e > 0 { "fails" } else { "passes" };
        let _ = writeln!(s, "{name}: {} — {verdict}", parts.join(", "));
    }
    s
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

//! `retrycore explain POLICY`: the delay schedule, what each error category
//! gets, the server-delay handling, the budget and the breaker, in words.

use crate::error::CliError;
use crate::input;
use retrycore::backoff::{BackoffKind, Jitter, Schedule};
use retrycore::breaker::{BreakerConfig, Counted};
use retrycore::classify::{Category, CategoryDecidedBy, RetryRule};
use retrycore::duration::{format_duration, from_std, human};
use retrycore::policy::{LongServerDelay, PolicyConfig, Purpose};
use retrycore::{json, json::Value};
use std::fmt::Write as _;
use std::path::Path;

/// Runs the command.
pub fn run(path: &Path, as_json: bool) -> Result<u8, CliError> {
    let (config, _) = input::read_policy(path)?;
    let name = input::policy_name(&config, path);
    let e = Explanation::new(&config)?;
    let out = if as_json { e.to_json(&name, &config) } else { e.to_text(&name, &config) };
    print!("{out}");
    Ok(0)
}

/// What one category gets under the policy.
struct CategoryLine {
    category: Category,
    retry: RetryRule,
    /// `default`, `marker`, `rules[i]` or `tables off`.
    decided_by: String,
    note: String,
    breaker: Option<Counted>,
}

struct Explanation {
    schedule: Schedule,
    categories: Vec<CategoryLine>,
    breaker: Option<String>,
    budgets: Vec<(String, String, String)>,
    rules: Vec<Value>,
}

impl Explanation {
    fn new(c: &PolicyConfig) -> Result<Explanation, CliError> {
        let schedule = c.backoff.schedule(c.max_attempts);
        let breaker = c.breaker.as_ref().map(|b| b.describe());
        let budgets = c.budgets.iter().map(|b| (b.name.clone(), b.kind_name().to_owned(), b.describe())).collect();
        let rules = c
            .to_json_value()
            .get("classification")
            .and_then(|v| v.get("rules"))
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let categories = Category::ALL.iter().map(|&cat| category_line(c, cat)).collect();
        Ok(Explanation { schedule, categories, breaker, budgets, rules })
    }

    fn to_text(&self, name: &str, c: &PolicyConfig) -> String {
        let mut s = String::new();
        let retries = c.max_attempts.saturating_sub(1);
        let _ = writeln!(s, "policy {name}{}", if c.purpose == Purpose::Compensation { " (compensation)" } else { "" });
        let _ = writeln!(
            s,
            "  {} attempt{} ({} retr{}); {}",
            c.max_attempts,
            if c.max_attempts == 1 { "" } else { "s" },
            retries,
            if retries == 1 { "y" } else { "ies" },
            describe_backoff(c)
        );
        let _ = writeln!(s, "  deadline: {}", c.deadline.map_or_else(|| "none".to_owned(), human));
        let _ = writeln!(s, "  attempt timeout: {}", c.attempt_timeout.map_or_else(|| "none".to_owned(), human));
        if let Some(seed) = c.seed {
            let _ = writeln!(s, "  seed: {seed} (tests and simulations only)");
        }
        s.push('\n');

        // The schedule.
        if self.schedule.rows.is_empty() {
            let _ = writeln!(s, "delay schedule: no retries (max_attempts 1)");
        } else {
            let _ = writeln!(s, "delay schedule (low / mid / high: r = 0, 0.5, 1):");
            let rows: Vec<[String; 6]> = self
                .schedule
                .rows
                .iter()
                .map(|r| {
                    [
                        r.retry.to_string(),
                        r.attempt.to_string(),
                        human(from_std(r.low)),
                        human(from_std(r.mid)),
                        human(from_std(r.high)),
                        human(from_std(r.cumulative_high)),
                    ]
                })
                .collect();
            let header = ["retry", "before attempt", "low", "mid", "high", "worst case so far"];
            table(&mut s, &header, &rows);
            if self.schedule.truncated {
                let _ = writeln!(s, "  … listing stops after {} retries", Schedule::MAX_ROWS);
            }
            let worst = from_std(self.schedule.worst_case());
            let _ = writeln!(s, "  worst case of all waits: {}", human(worst));
            if let Some(t) = c.attempt_timeout {
                let total = t.saturating_mul(u64::from(c.max_attempts)).saturating_add(worst);
                let _ = writeln!(
                    s,
                    "  worst case with every attempt timing out: {} × {} + {} = {}",
                    c.max_attempts,
                    human(t),
                    human(worst),
                    human(total)
                );
            }
            match c.deadline {
                Some(d) => {
                    let _ = writeln!(s, "  deadline {}: {}", human(d), deadline_effect(&self.schedule, c, d));
                }
                None => {
                    let _ = writeln!(s, "  no deadline: the waits above are the only bound");
                }
            }
        }
        s.push('\n');

        // Categories.
        let _ = writeln!(s, "what each error category gets:");
        let with_breaker = self.breaker.is_some();
        let rows: Vec<Vec<String>> = self
            .categories
            .iter()
            .map(|l| {
                let mut row = vec![l.category.code().to_owned(), l.retry.code().to_owned(), l.decided_by.clone()];
                if with_breaker {
                    row.push(l.breaker.map_or_else(String::new, |b| b.code().to_owned()));
                }
                row.push(l.note.clone());
                row
            })
            .collect();
        let mut header = vec!["category", "retry", "decided by"];
        if with_breaker {
            header.push("breaker counts");
        }
        header.push("note");
        table(&mut s, &header, &rows);
        let safe = match c.idempotent {
            Some(true) => "every call of this policy is declared idempotent: if_idempotent retries always".to_owned(),
            Some(false) => "calls are declared not idempotent: if_idempotent never retries".to_owned(),
            None => "if_idempotent retries GET, HEAD, OPTIONS, TRACE, PUT and DELETE, or a call declared idempotent or sent with an idempotency key; a POST that timed out is not retried".to_owned(),
        };
        let _ = writeln!(s, "  {safe}");
        if !self.rules.is_empty() {
            let _ = writeln!(s, "  user rules, first match wins (after the markers, before the tables):");
            for (i, r) in self.rules.iter().enumerate() {
                let _ = writeln!(s, "    rules[{i}]: {}", describe_rule(r));
            }
        }
        if !c.classifier.defaults {
            let _ = writeln!(
                s,
                "  built-in tables are off (defaults: false): what no rule matches is unknown, never retried"
            );
        }
        s.push('\n');

        let _ = writeln!(s, "server delays: {}", describe_server_delays(c));
        if self.budgets.is_empty() {
            let _ = writeln!(s, "budget: none — nothing caps retries across calls (a retry budget: Google SRE book, \"Handling Overload\")");
        }
        for (name, kind, d) in &self.budgets {
            let label = if name == kind { kind.clone() } else { format!("{name} ({kind})") };
            let _ = writeln!(s, "budget {label}: {d}");
        }
        match &self.breaker {
            Some(b) => {
                let _ = writeln!(s, "breaker: {b}");
            }
            None => {
                let _ = writeln!(s, "breaker: none");
            }
        }
        s
    }

    fn to_json(&self, name: &str, c: &PolicyConfig) -> String {
        let d = |x: std::time::Duration| format_duration(from_std(x));
        let v = json!({
            "policy": name,
            "max_attempts": c.max_attempts,
            "backoff": describe_backoff(c),
            "deadline": c.deadline.map(format_duration),
            "attempt_timeout": c.attempt_timeout.map(format_duration),
            "schedule": self.schedule.rows.iter().map(|r| json!({
                "retry": r.retry,
                "attempt": r.attempt,
                "low": d(r.low),
                "mid": d(r.mid),
                "high": d(r.high),
                "cumulative_low": d(r.cumulative_low),
                "cumulative_high": d(r.cumulative_high),
            })).collect::<Vec<_>>(),
            "schedule_truncated": self.schedule.truncated,
            "worst_case": d(self.schedule.worst_case()),
            "deadline_effect": c.deadline.map(|dl| deadline_effect(&self.schedule, c, dl)),
            "categories": self.categories.iter().map(|l| json!({
                "category": l.category.code(),
                "retry": l.retry.code(),
                "decided_by": l.decided_by,
                "breaker": l.breaker.map(Counted::code),
                "note": l.note,
            })).collect::<Vec<_>>(),
            "idempotent": c.idempotent,
            "rules": self.rules,
            "defaults": c.classifier.defaults,
            "server_delays": describe_server_delays(c),
            "budgets": self.budgets.iter().map(|(n, k, d)| json!({"name": n, "kind": k, "description": d})).collect::<Vec<_>>(),
            "breaker": self.breaker,
        });
        format!("{}\n", serde_json::to_string_pretty(&v).unwrap_or_default())
    }
}

/// The rule a category gets, as the core's classifier decides it
/// ([`Classifier::rule_for_category`](retrycore::classify::Classifier::rule_for_category)),
/// with the note explain prints beside it.
fn category_line(c: &PolicyConfig, cat: Category) -> CategoryLine {
    let breaker = c.breaker.as_ref().map(|b| breaker_count(b, cat));
    let rule = c.classifier.rule_for_category(cat);
    let partial: Vec<String> = rule.partial.iter().map(|i| format!("rules[{i}]")).collect();
    let (decided_by, note) = match rule.decided_by {
        CategoryDecidedBy::Marker => {
            let note = match cat {
                Category::RetryExhausted => "an inner layer already retried (retry at one layer only)",
                Category::Cancelled => "neither success nor failure for budgets and breakers",
                _ => "a local breaker refused; other breakers ignore it",
            };
            ("marker".to_owned(), note.to_owned())
        }
        CategoryDecidedBy::Rule(i) => {
            let mut note = rule.reported_as.map(|to| format!("reported as {}", to.code())).unwrap_or_default();
            if !partial.is_empty() {
                note = join_notes(&note, &format!("earlier {} match some failures first", partial.join(", ")));
            }
            (format!("rules[{i}]"), note)
        }
        CategoryDecidedBy::Default | CategoryDecidedBy::TablesOff => {
            let default = match cat {
                _ if rule.decided_by == CategoryDecidedBy::TablesOff => "",
                Category::Conflict => "always when an idempotency key is sent (the original is still in progress)",
                Category::Overloaded => "waits at least the server's Retry-After",
                Category::Connect => "a refused connection takes no budget token",
                Category::Timeout => "the outcome is unknown: it may have run",
                Category::ServerError => "503 with Retry-After is overloaded instead",
                Category::ResourceExhausted => "local; budgets and limits still apply",
                _ => "",
            };
            let mut note = default.to_owned();
            if !partial.is_empty() {
                note = join_notes(&note, &format!("{} match some of these failures first", partial.join(", ")));
            }
            let by = if rule.decided_by == CategoryDecidedBy::TablesOff { "tables off" } else { "default" };
            (by.to_owned(), note)
        }
    };
    CategoryLine { category: cat, retry: rule.retry, decided_by, note, breaker }
}

fn join_notes(a: &str, b: &str) -> String {
    match (a.is_empty(), b.is_empty()) {
        (true, _) => b.to_owned(),
        (_, true) => a.to_owned(),
        _ => format!("{a}; {b}"),
    }
}

/// How the breaker counts a category: its count rules by category, else the defaults.
fn breaker_count(b: &BreakerConfig, cat: Category) -> Counted {
    for r in &b.count_rules {
        let only_category = r.when.status.is_empty() && r.when.grpc_code.is_empty() && r.when.name.is_empty();
        if only_category && (r.when.category.is_empty() || r.when.category.contains(&cat)) {
            return r.count;
        }
    }
    BreakerConfig::default_count(cat)
}

fn describe_rule(r: &Value) -> String {
    let mut when = Vec::new();
    for key in ["status", "grpc_code", "name", "category"] {
        if let Some(v) = r.get(key) {
            let items: Vec<String> = match v {
                Value::Array(a) => a.iter().map(value_text).collect(),
                other => vec![value_text(other)],
            };
            when.push(format!("{key} {}", items.join(" | ")));
        }
    }
    let when = if when.is_empty() { "every failure".to_owned() } else { when.join(" and ") };
    let retry = r.get("retry").map(value_text).unwrap_or_default();
    match r.get("as") {
        Some(cat) => format!("{when} → {retry} (as {})", value_text(cat)),
        None => format!("{when} → {retry}"),
    }
}

fn value_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Describes the backoff and jitter in one line.
pub fn describe_backoff(c: &PolicyConfig) -> String {
    let b = &c.backoff;
    let init = human(b.initial_ns());
    let max = human(b.max_delay_ns());
    let base = match b.kind() {
        BackoffKind::Constant => format!("constant backoff of {init}"),
        BackoffKind::Linear => {
            format!("linear backoff from {init} in steps of {} up to {max}", human(b.increment_ns()))
        }
        BackoffKind::Exponential => format!("exponential backoff from {init} ×{} up to {max}", b.multiplier()),
        BackoffKind::Decorrelated => format!("decorrelated backoff from {init} up to {max} (AWS decorrelated jitter)"),
    };
    let jitter = match b.jitter() {
        Jitter::None if b.kind() == BackoffKind::Decorrelated => String::new(),
        Jitter::None => ", no jitter (clients that fail together retry together)".to_owned(),
        Jitter::Full => ", full jitter (uniform in [0, base])".to_owned(),
        Jitter::Equal => ", equal jitter (uniform in [base/2, base])".to_owned(),
        Jitter::Proportional(f) => format!(", proportional jitter {f} (base · (1 − {f}·r))"),
        Jitter::Additive(a) => format!(", additive jitter up to {}", human(a)),
        Jitter::Symmetric(f) => format!(", symmetric jitter ±{f} (base · (1 ± {f}·r))"),
    };
    let floor = if b.min_delay_ns() > 0 { format!(", never below {}", human(b.min_delay_ns())) } else { String::new() };
    format!("{base}{jitter}{floor}")
}

fn describe_server_delays(c: &PolicyConfig) -> String {
    if !c.honor_retry_after {
        return "Retry-After and pushback are ignored".to_owned();
    }
    let longer = match c.on_long_retry_after {
        LongServerDelay::GiveUp => "a longer one gives up (retry_after_too_long)",
        LongServerDelay::Cap => "a longer one is capped there and reported (lint: capped_server_delay)",
    };
    format!(
        "Retry-After, retry-after-ms and grpc-retry-pushback-ms are honoured up to {}: the wait is max(server delay, backoff); {longer}",
        human(c.max_retry_after)
    )
}

/// Says which attempts the deadline lets run.
fn deadline_effect(s: &Schedule, c: &PolicyConfig, deadline: u64) -> String {
    let t = c.attempt_timeout.unwrap_or(0);
    // Attempt k+1 starts after k attempts and k waits; with attempt_timeout it must also fit.
    let mut fits_worst = c.max_attempts;
    let mut fits_best = c.max_attempts;
    for r in &s.rows {
        let k = u64::from(r.retry);
        let start_worst = from_std(r.cumulative_high).saturating_add(t.saturating_mul(k));
        let start_best = from_std(r.cumulative_low);
        let need = |start: u64| if t > 0 { start.saturating_add(t) > deadline } else { start >= deadline };
        if need(start_worst) && fits_worst == c.max_attempts {
            fits_worst = r.retry;
        }
        if need(start_best) && fits_best == c.max_attempts {
            fits_best = r.retry;
        }
    }
    if fits_worst == c.max_attempts {
        "every attempt fits, even in the worst case".to_owned()
    } else if fits_best == c.max_attempts {
        format!(
            "in the worst case only {fits_worst} of {} attempts fit{}",
            c.max_attempts,
            if t > 0 { " (every attempt timing out, longest waits)" } else { " (longest waits)" }
        )
    } else {
        format!("at most {fits_best} of {} attempts can ever fit: later ones never run", c.max_attempts)
    }
}

/// Writes an aligned table with a two-space indent.
fn table<H: AsRef<str>, R: AsRef<[String]>>(s: &mut String, header: &[H], rows: &[R]) {
    let n = header.len();
    let mut w: Vec<usize> = header.iter().map(|h| h.as_ref().chars().count()).collect();
    for r in rows {
        for (i, cell) in r.as_ref().iter().enumerate().take(n) {
            w[i] = w[i].max(cell.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let mut l = String::from("  ");
        for (i, c) in cells.iter().enumerate() {
            if i + 1 == cells.len() {
                l.push_str(c);
            } else {
                l.push_str(c);
                l.push_str(&" ".repeat(w[i] - c.chars().count() + 2));
            }
        }
        l.trim_end().to_owned()
    };
    let _ = writeln!(s, "{}", line(header.iter().map(AsRef::as_ref).collect()));
    for r in rows {
        let _ = writeln!(s, "{}", line(r.as_ref().iter().map(String::as_str).collect()));
    }
}

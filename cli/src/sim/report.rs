//! The terminal table and the JSON of a simulation.

use super::scenario::Scenario;
use super::stats::{Summary, RECOVERED_SHARE};
use retrycore::duration::{format_duration, human};
use retrycore::session::GiveUpReason;
use retrycore::{
    json,
    json::{Map, Value},
};
use std::fmt::Write as _;

/// Formats a latency for the table: `850µs`, `21ms`, `1.52s`.
pub fn fmt_time(ns: u64) -> String {
    let ms = ns as f64 / 1e6;
    if ns < 1_000_000 {
        format!("{}µs", (ns as f64 / 1e3).round())
    } else if ms < 10.0 {
        format!("{ms:.1}ms")
    } else if ms < 1000.0 {
        format!("{}ms", ms.round())
    } else if ms < 100_000.0 {
        format!("{:.2}s", ms / 1e3)
    } else {
        format!("{}s", (ms / 1e3).round())
    }
}

/// Formats seconds of simulated time compactly (`10s`, `2.5s`).
pub fn fmt_secs(ns: u64) -> String {
    let s = ns as f64 / 1e9;
    if (s - s.round()).abs() < 1e-9 {
        format!("{}s", s.round())
    } else {
        format!("{}s", (s * 1000.0).round() / 1000.0)
    }
}

/// One line on what the scenario is.
pub fn headline(scn: &Scenario) -> String {
    let rate = f64::from(scn.clients) / (scn.interval as f64 / 1e9);
    let outage = match scn.outage {
        Some(o) => format!("down {}–{} ({})", fmt_secs(o.start), fmt_secs(o.end), o.mode.name()),
        None => "never down".to_owned(),
    };
    format!(
        "{} clients, one {} each ~{} ({}/s); server capacity {}/s, {}; {} run, seed {}",
        scn.clients,
        scn.method,
        fmt_secs(scn.interval),
        trim_num(rate),
        trim_num(scn.capacity),
        outage,
        fmt_secs(scn.duration),
        scn.seed
    )
}

fn trim_num(x: f64) -> String {
    if (x - x.round()).abs() < 1e-9 {
        format!("{}", x.round() as i64)
    } else {
        format!("{x:.1}")
    }
}

fn recovery_text(s: &Summary) -> String {
    match s.recovery {
        Ok(None) => "-".to_owned(),
        Ok(Some(ns)) => fmt_secs(ns),
        Err(()) => "never".to_owned(),
    }
}

/// Renders the comparison table with its headline and column notes.
pub fn table(scn: &Scenario, summaries: &[Summary]) -> String {
    let header = ["policy", "layers", "server calls", "peak/s", "calls/req", "success", "recovery", "p50", "p99"];
    let rows: Vec<Vec<String>> = summaries
        .iter()
        .map(|s| {
            vec![
                s.name.clone(),
                if s.layers > 1 { format!("{}{}", s.layers, if s.marker { "" } else { "*" }) } else { "1".to_owned() },
                s.calls.to_string(),
                format!("{}", s.peak.round() as u64),
                format!("{:.2}", s.amplification),
                format!("{:.1}%", s.success * 100.0),
                recovery_text(s),
                fmt_time(s.p50),
                fmt_time(s.p99),
            ]
        })
        .collect();
    let mut w: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for r in &rows {
        for (i, c) in r.iter().enumerate() {
            w[i] = w[i].max(c.chars().count());
        }
    }
    let mut out = String::new();
    let _ = writeln!(out, "{}", headline(scn));
    out.push('\n');
    let line = |cells: &[String]| {
        let mut l = String::new();
        for (i, c) in cells.iter().enumerate() {
            let pad = w[i] - c.chars().count();
            if i == 0 {
                l.push_str(c);
                l.push_str(&" ".repeat(pad));
            } else {
                l.push_str("  ");
                l.push_str(&" ".repeat(pad));
                l.push_str(c);
            }
        }
        l
    };
    let head: Vec<String> = header.iter().map(|h| (*h).to_owned()).collect();
    let _ = writeln!(out, "{}", line(&head));
    for r in &rows {
        let _ = writeln!(out, "{}", line(r));
    }
    out.push('\n');
    let _ = writeln!(
        out,
        "server calls: every call that reached the server, drain included; peak/s: the busiest {} step;",
        human(scn.step)
    );
    let _ = writeln!(
        out,
        "calls/req: server calls per user request; recovery: from the outage's end until the success rate"
    );
    let _ = writeln!(
        out,
        "stays ≥ {}% of the healthy one to the end of the run (never: it did not); p50/p99: user latency",
        (RECOVERED_SHARE * 100.0).round()
    );
    if summaries.iter().any(|s| s.layers > 1 && !s.marker) {
        let _ = writeln!(out, "*: inner give-ups reach outer layers as plain 503s (no x-retry-exhausted marker)");
    }
    out
}

/// Renders the results as JSON.
pub fn json(scn: &Scenario, summaries: &[Summary]) -> Value {
    let results: Vec<Value> = summaries
        .iter()
        .map(|s| {
            let r = &s.run;
            let mut give_ups = Map::new();
            for (i, reason) in GiveUpReason::ALL.iter().enumerate() {
                if r.give_ups[i] > 0 {
                    give_ups.insert(reason.code().to_owned(), r.give_ups[i].into());
                }
            }
            let step_s = scn.step as f64 / 1e9;
            json!({
                "name": s.name,
                "layers": s.layers,
                "marker": s.marker,
                "server_calls": s.calls,
                "peak_per_s": s.peak,
                "peak_at_s": s.peak_at as f64 / 1e9,
                "amplification": s.amplification,
                "user_requests": r.user_requests,
                "succeeded": r.user_ok,
                "unanswered": r.unanswered,
                "success_rate": s.success,
                "recovered": s.recovery.is_ok(),
                "recovery_s": match s.recovery { Ok(Some(ns)) => json!(ns as f64 / 1e9), _ => Value::Null },
                "latency_ms": {
                    "p50": s.p50 as f64 / 1e6,
                    "p99": s.p99 as f64 / 1e6,
                },
                "server": {
                    "served": r.served,
                    "served_too_late": r.late,
                    "shed": r.shed,
                    "during_outage": r.down,
                },
                "attempts": r.attempts,
                "retries": r.retries,
                "give_ups": give_ups,
                "rejected": r.rejected,
                "budget_refusals": r.budget_refusals,
                "breaker_rejections": r.breaker_rejections,
                "breaker_transitions": r.breaker_transitions,
                "events": r.events,
                "peak_requests_in_flight": r.peak_in_flight,
                "load_per_s": r.calls.iter().map(|&c| f64::from(c) / step_s).collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({
        "scenario": scn.to_json_value(),
        "step": format_duration(scn.step),
        "recovery_definition": "time from the outage's end to the first step from which every 1 s window of user answers, to the end of the run, succeeds at least 95 % as often as answers before the outage (at least 3 s must remain); null: never",
        "results": results,
    })
}

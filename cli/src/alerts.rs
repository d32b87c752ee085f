//! `retrycore alerts COUNTERS`: the core's alert rules over two counter
//! snapshots; `--prometheus` and `--grafana` write the same rules as
//! Prometheus alerting rules and a Grafana dashboard.

use crate::error::CliError;
use crate::input;
use retrycore::alerts::{self, AlertConfig, Evaluation, Status};
use std::fmt::Write as _;
use std::path::Path;

/// What to write.
pub enum Mode {
    /// Evaluate a counters document.
    Evaluate,
    /// Prometheus alerting rules (YAML).
    Prometheus,
    /// A Grafana dashboard (JSON).
    Grafana,
}

/// Runs the command; returns exit code 1 when an alert fires.
pub fn run(
    mode: Mode,
    counters: Option<&Path>,
    interval: &str,
    thresholds: Option<&Path>,
    as_json: bool,
) -> Result<u8, CliError> {
    let cfg = match thresholds {
        None => AlertConfig::default(),
        Some(p) => {
            let text = input::read_text(p, "thresholds")?;
            let v = input::parse_json(&text, p, "thresholds")?;
            AlertConfig::read(&v, "").map_err(|e| {
                CliError::input(format!("invalid thresholds {}: {}", p.display(), input::core_error(&e)))
            })?
        }
    };
    let interval_ns = || {
        retrycore::duration::parse_duration(interval, "--interval")
            .and_then(|ns| alerts::prometheus_range(ns, "--interval").map(|_| ns))
            .map_err(|e| CliError::input(format!("invalid {}", input::core_error(&e))))
    };
    match mode {
        Mode::Prometheus => {
            let y =
                alerts::prometheus_rules(interval_ns()?, &cfg).map_err(|e| CliError::input(input::core_error(&e)))?;
            print!("{y}");
            Ok(0)
        }
        Mode::Grafana => {
            let d =
                alerts::grafana_dashboard(interval_ns()?, &cfg).map_err(|e| CliError::input(input::core_error(&e)))?;
            println!("{}", serde_json::to_string_pretty(&d).unwrap_or_default());
            Ok(0)
        }
        Mode::Evaluate => {
            let path = counters.ok_or_else(|| {
                CliError::input("a counters document is required (or --prometheus / --grafana; see --help)")
            })?;
            let text = input::read_text(path, "counters")?;
            let e = alerts::evaluate_document(&text, thresholds.map(|_| &cfg)).map_err(|e| {
                CliError::input(format!("invalid counters {}: {}", path.display(), input::core_error(&e)))
            })?;
            if as_json {
                println!("{}", serde_json::to_string_pretty(&e.to_json_value()).unwrap_or_default());
            } else {
                print!("{}", render_text(&e));
            }
            let fired = e.alerts().next().is_some();
            Ok(u8::from(fired))
        }
    }
}

/// Renders the checks for people: firing ones first, then a summary line.
fn render_text(e: &Evaluation) -> String {
    let mut s = String::new();
    let rule_w = e.checks.iter().map(|c| c.rule.code().len()).max().unwrap_or(0);
    for c in &e.checks {
        let status = if c.status == Status::Firing { c.rule.level().code() } else { c.status.code() };
        let _ = writeln!(s, "{status:<10} {:<rule_w$}  {}", c.rule.code(), c.message);
    }
    let fired: Vec<_> = e.alerts().collect();
    if fired.is_empty() {
        let _ = writeln!(s, "no alerts ({} checks)", e.checks.len());
    } else {
        let n = fired.len();
        let _ = writeln!(s, "{n} alert{} ({} checks)", if n == 1 { "" } else { "s" }, e.checks.len());
    }
    s
}

//! `retrycore`: the retry-storm simulator, the schedule explainer, the
//! policy linter and the alert rules, built on the `retrycore` core.
//!
//! Exit codes: 0 on success; 1 when `lint` finds an error or an alert fires; 2 for every
//! usage or input error (unknown flag, missing file, bad JSON, invalid
//! policy or scenario), always with one line on stderr.

use clap::{Args, Parser, Subcommand};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

mod alerts;
mod error;
mod explain;
mod input;
mod lint;
mod sim;

/// Simulate retry storms, explain a retry policy, lint it.
#[derive(Parser, Debug)]
#[command(name = "retrycore", version, about, long_about = None, disable_help_subcommand = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Simulate many clients retrying against a server that goes down, and compare policies.
    Simulate(SimulateArgs),
    /// Show a policy's delay schedule, what each error category gets, its budget and breaker.
    Explain(ExplainArgs),
    /// Check a policy (and the service around it) for common retry pitfalls; exit 1 on errors.
    Lint(LintArgs),
    /// Check the alert rules over two counter snapshots (exit 1 when one fires), or write them for Prometheus or Grafana.
    Alerts(AlertsArgs),
}

#[derive(Args, Debug)]
struct SimulateArgs {
    /// A scenario file (JSON) replacing the built-in default scenario.
    #[arg(long, value_name = "FILE")]
    scenario: Option<PathBuf>,
    /// A policy document (JSON) to add to the comparison; repeatable.
    #[arg(long, value_name = "FILE")]
    policy: Vec<PathBuf>,
    /// Compare only these policies (by name); repeatable.
    #[arg(long, value_name = "NAME")]
    only: Vec<String>,
    /// The simulation's seed (overrides the scenario's).
    #[arg(long)]
    seed: Option<u64>,
    /// Multiply the clients and the server's capacity by this factor (same load ratio).
    #[arg(long, value_name = "FACTOR")]
    scale: Option<f64>,
    /// Write the load chart (SVG) to this file.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Print the results as JSON on stdout instead of the table.
    #[arg(long)]
    json: bool,
    /// Print the scenario in effect (JSON) and exit.
    #[arg(long)]
    print_scenario: bool,
    /// Print events simulated, events per second, wall time and peak memory on stderr.
    #[arg(long)]
    stats: bool,
    /// Never show the progress bar.
    #[arg(long)]
    no_progress: bool,
}

#[derive(Args, Debug)]
struct ExplainArgs {
    /// The policy document (JSON).
    policy: PathBuf,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(Args, Debug)]
struct LintArgs {
    /// The policy document (JSON).
    policy: PathBuf,
    /// A service description (JSON): layers, idempotency retention and lease, heartbeat, p99.
    #[arg(long, value_name = "FILE")]
    service: Option<PathBuf>,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(Args, Debug)]
struct AlertsArgs {
    /// A counters document (JSON): the interval and two snapshots of the counters.
    counters: Option<PathBuf>,
    /// Write the rules as Prometheus alerting rules (YAML) instead.
    #[arg(long, conflicts_with_all = ["counters", "grafana", "json"])]
    prometheus: bool,
    /// Write a Grafana dashboard (JSON) for the default metric names instead.
    #[arg(long, conflicts_with_all = ["counters", "json"])]
    grafana: bool,
    /// The range each ratio is computed over, for --prometheus and --grafana.
    #[arg(long, value_name = "DURATION", default_value = "5m")]
    interval: String,
    /// Thresholds and minimum volumes (JSON) replacing the defaults.
    #[arg(long, value_name = "FILE")]
    thresholds: Option<PathBuf>,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return usage_error(e),
    };
    let result = match cli.command {
        Command::Simulate(a) => sim::cli::run(sim::cli::Options {
            scenario: a.scenario,
            policies: a.policy,
            only: a.only,
            seed: a.seed,
            scale: a.scale,
            out: a.out,
            json: a.json,
            print_scenario: a.print_scenario,
            stats: a.stats,
            progress: !a.no_progress,
        }),
        Command::Explain(a) => explain::run(&a.policy, a.json),
        Command::Lint(a) => lint::run(&a.policy, a.service.as_deref(), a.json),
        Command::Alerts(a) => {
            let mode = if a.prometheus {
                alerts::Mode::Prometheus
            } else if a.grafana {
                alerts::Mode::Grafana
            } else {
                alerts::Mode::Evaluate
            };
            alerts::run(mode, a.counters.as_deref(), &a.interval, a.thresholds.as_deref(), a.json)
        }
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "retrycore: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}

/// Prints clap's help and version as usual (exit 0); any other parse error
/// becomes one line on stderr and exit code 2.
fn usage_error(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            let _ = e.print();
            ExitCode::SUCCESS
        }
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand | ErrorKind::MissingSubcommand => {
            let _ = writeln!(
                std::io::stderr(),
                "retrycore: a command is required: simulate, explain, lint or alerts (see retrycore --help)"
            );
            ExitCode::from(2)
        }
        _ => {
            // clap's message up to its first blank line, on one line.
            let text = e.render().to_string();
            let head: Vec<&str> = text
                .lines()
                .map(str::trim)
                .skip_while(|l| l.is_empty())
                .take_while(|l| !l.is_empty() && !l.starts_with("Usage:"))
                .collect();
            let line = head.join(" ");
            let line = line.strip_prefix("error: ").unwrap_or(&line);
            let line = if line.is_empty() { "invalid arguments" } else { line };
            let _ = writeln!(std::io::stderr(), "retrycore: {line} (see --help)");
            ExitCode::from(2)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_is_consistent() {
        Cli::command().debug_assert();
    }
}

//! The `simulate` command: options, the progress bar, the outputs.

use super::scenario::{Entry, Scenario};
use super::{chart, report};
use crate::error::CliError;
use crate::input;
use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Instant;

/// The command's options.
pub struct Options {
    /// A scenario file.
    pub scenario: Option<PathBuf>,
    /// Policy documents to add.
    pub policies: Vec<PathBuf>,
    /// Keep only these entries.
    pub only: Vec<String>,
    /// Seed override.
    pub seed: Option<u64>,
    /// Clients and capacity factor.
    pub scale: Option<f64>,
    /// SVG output.
    pub out: Option<PathBuf>,
    /// JSON on stdout.
    pub json: bool,
    /// Print the scenario and exit.
    pub print_scenario: bool,
    /// Performance figures on stderr.
    pub stats: bool,
    /// Allow the progress bar (shown only when stderr is a terminal).
    pub progress: bool,
}

/// Loads the scenario with the options applied.
pub fn load(o: &Options) -> Result<Scenario, CliError> {
    let mut scn = match &o.scenario {
        Some(path) => {
            let text = input::read_text(path, "scenario")?;
            Scenario::from_json(&text, &path.display().to_string())?
        }
        None => Scenario::default_scenario()?,
    };
    if let Some(seed) = o.seed {
        scn.seed = seed;
    }
    if let Some(f) = o.scale {
        scn.scale(f)?;
    }
    // --only picks among the scenario's policies; --policy files always join.
    if !o.only.is_empty() {
        for name in &o.only {
            if !scn.entries.iter().any(|e| &e.name == name) {
                let known: Vec<&str> = scn.entries.iter().map(|e| e.name.as_str()).collect();
                return Err(CliError::input(format!("--only {name:?}: no such policy (have: {})", known.join(", "))));
            }
        }
        scn.entries.retain(|e| o.only.contains(&e.name));
    }
    for path in &o.policies {
        let (config, doc) = input::read_policy(path)?;
        let name = input::policy_name(&config, path);
        if scn.entries.iter().any(|e| e.name == name) {
            return Err(CliError::input(format!(
                "policy {} is named {name:?} like a policy of the scenario: give it another \"name\"",
                path.display()
            )));
        }
        let n = scn.layers as usize;
        scn.entries.push(Entry {
            name,
            layers: vec![config; n],
            docs: vec![doc; n],
            marker: true,
            limiter: None,
            limiter_doc: None,
        });
    }
    if scn.entries.is_empty() {
        return Err(CliError::input("the scenario has no policies to compare"));
    }
    Ok(scn)
}

/// Peak resident memory of this process, in KiB (Linux), if known.
pub fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Runs the command.
pub fn run(o: Options) -> Result<u8, CliError> {
    let scn = load(&o)?;
    if o.print_scenario {
        println!("{}", serde_json::to_string_pretty(&scn.to_json_value()).unwrap_or_default());
        return Ok(0);
    }
    let horizon_ms = (scn.duration + scn.drain) / 1_000_000;
    let total = horizon_ms * scn.entries.len() as u64;
    let pb = if o.progress && std::io::stderr().is_terminal() {
        let pb = ProgressBar::new(total);
        pb.set_style(
            ProgressStyle::with_template("simulating {bar:40.cyan/blue} {percent:>3}% of simulated time, {elapsed}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        pb
    } else {
        ProgressBar::hidden()
    };
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let started = Instant::now();
    let tick = |ns: u64| pb.inc(ns / 1_000_000);
    let summaries = super::simulate(&scn, threads, &tick).map_err(|e| CliError::input(format!("simulation: {e}")))?;
    let wall = started.elapsed();
    pb.finish_and_clear();
    if let Some(path) = &o.out {
        chart::write_svg(path, &scn, &summaries)?;
    }
    if o.json {
        println!("{}", serde_json::to_string_pretty(&report::json(&scn, &summaries)).unwrap_or_default());
    } else {
        print!("{}", report::table(&scn, &summaries));
        if let Some(path) = &o.out {
            println!("chart written to {}", path.display());
        }
    }
    if o.stats {
        let events: u64 = summaries.iter().map(|s| s.run.events).sum();
        let in_flight = summaries.iter().map(|s| s.run.peak_in_flight).max().unwrap_or(0);
        let secs = wall.as_secs_f64();
        eprintln!(
            "stats: {} runs, {events} events in {:.3} s on {threads} threads = {:.2} M events/s; peak requests in flight {in_flight}; peak RSS {}",
            summaries.len(),
            secs,
            events as f64 / secs / 1e6,
            peak_rss_kib().map_or_else(|| "unknown".to_owned(), |k| format!("{:.1} MiB", k as f64 / 1024.0))
        );
    }
    Ok(0)
}

//! `retrycore simulate`: a seeded discrete-event simulation of many clients
//! retrying against a server that goes down, built on the core's own
//! policies, sessions, breakers and budgets.

pub mod chart;
pub mod cli;
pub mod engine;
pub mod queue;
pub mod report;
pub mod scenario;
pub mod stats;

use scenario::Scenario;
use stats::Summary;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Runs every entry of the scenario (in parallel on up to `threads`
/// threads; each run is independent and seeded, so the results do not
/// depend on the thread count). `progress` receives simulated-time advances
/// in nanoseconds, from any thread.
pub fn simulate(scn: &Scenario, threads: usize, progress: &(dyn Fn(u64) + Sync)) -> Result<Vec<Summary>, String> {
    let n = scn.entries.len();
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Result<stats::RunResult, String>>>> = Mutex::new(vec![None; n]);
    let threads = threads.clamp(1, n.max(1));
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= n {
                    break;
                }
                let mut seen = 0u64;
                let mut report = |t: u64| {
                    if t > seen {
                        progress(t - seen);
                        seen = t;
                    }
                };
                let r = engine::Run::new(scn, &scn.entries[i]).map(|run| run.run(&mut report));
                results.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(r);
            });
        }
    });
    let results = results.into_inner().unwrap_or_else(|e| e.into_inner());
    results
        .into_iter()
        .zip(&scn.entries)
        .map(|(r, e)| {
            let run = r.ok_or_else(|| format!("{}: the run did not finish", e.name))??;
            Ok(Summary::new(&e.name, scn, run))
        })
        .collect()
}

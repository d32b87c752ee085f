//! What a run measures, and the figures derived from it.

use super::scenario::Scenario;
use retrycore::session::GiveUpReason;

/// Sub-buckets per power of two (relative error ≤ 1/128 at the midpoint).
const SUB_BITS: u32 = 6;
const SUB: u64 = 1 << SUB_BITS;
const BUCKETS: usize = ((64 - SUB_BITS as usize) + 1) * SUB as usize;

/// A log-linear histogram of nanosecond values: fixed memory whatever the count.
#[derive(Clone, Debug)]
pub struct Histogram {
    counts: Vec<u64>,
    total: u64,
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram { counts: vec![0; BUCKETS], total: 0 }
    }
}

impl Histogram {
    fn index(v: u64) -> usize {
        if v < SUB {
            return v as usize;
        }
        let e = 63 - v.leading_zeros();
        (((e - SUB_BITS + 1) as u64) * SUB + ((v >> (e - SUB_BITS)) & (SUB - 1))) as usize
    }

    fn midpoint(i: usize) -> u64 {
        let i = i as u64;
        if i < SUB {
            return i;
        }
        let e = (i / SUB) as u32 + SUB_BITS - 1;
        let sub = i % SUB;
        let width = 1u64 << (e - SUB_BITS);
        ((SUB + sub) << (e - SUB_BITS)) + width / 2
    }

    /// Records one value.
    pub fn record(&mut self, v: u64) {
        self.counts[Self::index(v)] += 1;
        self.total += 1;
    }

    /// Returns the q-quantile (q in [0, 1]) as its bucket's midpoint, or `None` when empty.
    pub fn quantile(&self, q: f64) -> Option<u64> {
        if self.total == 0 {
            return None;
        }
        let rank = ((q * self.total as f64).ceil() as u64).clamp(1, self.total);
        let mut seen = 0;
        for (i, c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return Some(Self::midpoint(i));
            }
        }
        None
    }
}

/// The raw measurements of one run.
#[derive(Clone, Debug)]
pub struct RunResult {
    /// Layers of the entry.
    pub layers: usize,
    /// Inner give-ups carried the marker.
    pub marker: bool,
    /// Server calls per step.
    pub calls: Vec<u32>,
    /// User requests answered per step (success or failure).
    pub answered: Vec<u32>,
    /// User requests answered with success per step.
    pub succeeded: Vec<u32>,
    /// User latency: from the request to its answer.
    pub latency: Histogram,
    /// User requests issued.
    pub user_requests: u64,
    /// User requests that succeeded.
    pub user_ok: u64,
    /// User requests still unanswered at the end of the drain.
    pub unanswered: u64,
    /// Calls the server answered in time.
    pub served: u64,
    /// Calls the server served after their caller had timed out (wasted work).
    pub late: u64,
    /// Calls the server shed with 503 (queue full).
    pub shed: u64,
    /// Calls that met the outage.
    pub down: u64,
    /// Events processed.
    pub events: u64,
    /// Most user requests in flight at once.
    pub peak_in_flight: usize,
    /// Give-ups by reason, summed over every layer (in `GiveUpReason::ALL` order).
    pub give_ups: [u64; GiveUpReason::ALL.len()],
    /// Attempts refused before they were made (breaker open, throttled).
    pub rejected: u64,
    /// Retries a budget refused.
    pub budget_refusals: u64,
    /// Attempts made at every layer.
    pub attempts: u64,
    /// Retries decided at every layer.
    pub retries: u64,
    /// Calls the breakers refused.
    pub breaker_rejections: u64,
    /// Breaker state changes.
    pub breaker_transitions: u64,
}

/// The figures the table, the chart and the JSON show for one entry.
#[derive(Clone, Debug)]
pub struct Summary {
    /// The entry's name.
    pub name: String,
    /// Layers.
    pub layers: usize,
    /// Marker on inner give-ups.
    pub marker: bool,
    /// Server calls in all.
    pub calls: u64,
    /// The busiest step, in calls per second.
    pub peak: f64,
    /// When the busiest step began (ns).
    pub peak_at: u64,
    /// Server calls per user request.
    pub amplification: f64,
    /// Share of user requests that succeeded.
    pub success: f64,
    /// Time from the outage's end until the success rate stayed ≥ 95 % of healthy for 3 s;
    /// `Err(())` when that never happened in the run; `Ok(None)` without an outage.
    pub recovery: Result<Option<u64>, ()>,
    /// Median user latency (ns).
    pub p50: u64,
    /// 99th percentile user latency (ns).
    pub p99: u64,
    /// The raw run.
    pub run: RunResult,
}

/// How much of the healthy success rate counts as recovered.
pub const RECOVERED_SHARE: f64 = 0.95;
/// How long the success rate must stay recovered, in ns.
pub const RECOVERED_FOR: u64 = 3_000_000_000;
/// The width of the window a success rate is measured over, in ns.
pub const RATE_WINDOW: u64 = 1_000_000_000;

impl Summary {
    /// Derives the figures of a run.
    pub fn new(name: &str, scn: &Scenario, run: RunResult) -> Summary {
        let calls: u64 = run.calls.iter().map(|&c| u64::from(c)).sum();
        let (peak_i, peak_c) =
            run.calls.iter().enumerate().fold((0, 0u32), |b, (i, &c)| if c > b.1 { (i, c) } else { b });
        let step_s = scn.step as f64 / 1e9;
        let recovery = recovery(scn, &run);
        Summary {
            name: name.to_owned(),
            layers: run.layers,
            marker: run.marker,
            calls,
            peak: f64::from(peak_c) / step_s,
            peak_at: peak_i as u64 * scn.step,
            amplification: if run.user_requests == 0 { 0.0 } else { calls as f64 / run.user_requests as f64 },
            success: if run.user_requests == 0 { 0.0 } else { run.user_ok as f64 / run.user_requests as f64 },
            recovery,
            p50: run.latency.quantile(0.5).unwrap_or(0),
            p99: run.latency.quantile(0.99).unwrap_or(0),
            run,
        }
    }
}

/// The success rate of user requests answered in `[from, from + w)` steps (0 when none were).
fn rate(run: &RunResult, from: usize, w: usize) -> f64 {
    let end = (from + w).min(run.answered.len());
    let a: u64 = run.answered[from.min(end)..end].iter().map(|&x| u64::from(x)).sum();
    let s: u64 = run.succeeded[from.min(end)..end].iter().map(|&x| u64::from(x)).sum();
    if a == 0 {
        0.0
    } else {
        s as f64 / a as f64
    }
}

/// Time to recover: the first step boundary t ≥ the outage's end from
/// which every 1-s window of answers, up to the end of the run's
/// `duration`, has a success rate ≥ 95 % of the healthy one (the rate of
/// answers before the outage; 1 when the outage starts at 0), provided at
/// least 3 s of the run remain after t. A relapse later in the run moves
/// the recovery past it: a server that recovers and falls again has not
/// recovered.
fn recovery(scn: &Scenario, run: &RunResult) -> Result<Option<u64>, ()> {
    let Some(o) = scn.outage else { return Ok(None) };
    let step = scn.step;
    let w = (RATE_WINDOW.div_ceil(step)) as usize;
    let hold = (RECOVERED_FOR.div_ceil(step)) as usize;
    let healthy_steps = (o.start / step) as usize;
    let healthy = if healthy_steps == 0 { 1.0 } else { rate(run, 0, healthy_steps) };
    let healthy = if healthy == 0.0 { 1.0 } else { healthy };
    let threshold = RECOVERED_SHARE * healthy;
    let first = o.end.div_ceil(step) as usize;
    let end = ((scn.duration / step) as usize).min(run.answered.len());
    if end < w {
        return Err(());
    }
    // Walk back from the last window that fits in the run: the stretch of
    // good windows that reaches the end starts at `t`.
    let mut t = end - w + 1;
    while t > first && rate(run, t - 1, w) >= threshold {
        t -= 1;
    }
    if t == end - w + 1 || end - t < hold {
        return Err(());
    }
    let at = t as u64 * step;
    Ok(Some(at - o.end.min(at)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_quantiles_are_close() {
        let mut h = Histogram::default();
        for v in 1..=100_000u64 {
            h.record(v * 1000);
        }
        let p50 = h.quantile(0.5).unwrap() as f64;
        let p99 = h.quantile(0.99).unwrap() as f64;
        assert!((p50 / 50_000_000.0 - 1.0).abs() < 0.01, "{p50}");
        assert!((p99 / 99_000_000.0 - 1.0).abs() < 0.01, "{p99}");
        assert_eq!(Histogram::default().quantile(0.5), None);
        let mut small = Histogram::default();
        small.record(3);
        assert_eq!(small.quantile(0.99), Some(3));
        let mut big = Histogram::default();
        big.record(u64::MAX);
        assert!(big.quantile(0.5).unwrap() > u64::MAX / 2);
    }
}

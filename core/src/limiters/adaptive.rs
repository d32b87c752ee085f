//! Adaptive concurrency limits from Netflix's concurrency-limits
//! (`AIMDLimit.java`, `Gradient2Limit.java`, gated like `SimpleLimiter`: a
//! call proceeds while fewer than `limit` are in flight, else it is
//! rejected with `limit_reached`).
//!
//! Netflix samples the in-flight count when a call starts; here a sample
//! takes the count when the call ends, before its own slot is freed (the
//! same number when calls do not overlap, and no per-call state to carry).

use super::config::{AimdParams, Gradient2Params};
use super::{Answer, Completion, Signal};

/// Frees one slot and returns the in-flight count before it (the sample's).
fn end(in_flight: &mut u64) -> u64 {
    let before = *in_flight;
    *in_flight = in_flight.saturating_sub(1);
    before
}

fn gate(in_flight: &mut u64, limit: u64) -> Answer {
    if *in_flight < limit {
        *in_flight += 1;
        Answer::Proceed
    } else {
        Answer::Reject("limit_reached", None)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Aimd {
    p: AimdParams,
    limit: u32,
    in_flight: u64,
}

impl Aimd {
    pub(crate) fn new(p: AimdParams) -> Aimd {
        let limit = p.initial_limit;
        Aimd { p, limit, in_flight: 0 }
    }

    pub(crate) fn limit(&self) -> u32 {
        self.limit
    }

    pub(crate) fn in_flight(&self) -> u64 {
        self.in_flight
    }

    pub(crate) fn acquire(&mut self) -> Answer {
        gate(&mut self.in_flight, u64::from(self.limit))
    }

    pub(crate) fn release(&mut self, c: Completion) {
        let in_flight = end(&mut self.in_flight);
        match c.signal {
            Signal::Ignore => {}
            Signal::Success => self.sample(c.rtt, in_flight, false),
            Signal::Overloaded => self.sample(c.rtt, in_flight, true),
        }
    }

    /// `AIMDLimit._update`: a drop (or a latency past `timeout`) multiplies
    /// the limit by `backoff_ratio`, truncated as Java's `(int)` cast does; a
    /// success while at least half the limit is in use adds one; the result
    /// stays within [min, max].
    pub(crate) fn sample(&mut self, rtt: u64, in_flight: u64, dropped: bool) {
        let mut limit = self.limit;
        if dropped || rtt > self.p.timeout {
            limit = (f64::from(limit) * self.p.backoff_ratio) as u32;
        } else if in_flight.saturating_mul(2) >= u64::from(limit) {
            limit = limit.saturating_add(1);
        }
        self.limit = limit.max(self.p.min_limit).min(self.p.max_limit);
    }
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Gradient2 {
    p: Gradient2Params,
    estimated: f64,
    /// `ExpAvgMeasurement(long_window, 10)`: a plain mean of the first 10
    /// samples, then an exponential average with factor 2 / (window + 1).
    long_rtt: f64,
    long_sum: f64,
    long_count: u32,
    in_flight: u64,
}

const WARMUP: u32 = 10;

impl Gradient2 {
    pub(crate) fn new(p: Gradient2Params) -> Gradient2 {
        let estimated = f64::from(p.initial_limit);
        Gradient2 { p, estimated, long_rtt: 0.0, long_sum: 0.0, long_count: 0, in_flight: 0 }
    }

    pub(crate) fn limit(&self) -> u32 {
        self.estimated as u32
    }

    pub(crate) fn estimated_limit(&self) -> f64 {
        self.estimated
    }

    pub(crate) fn in_flight(&self) -> u64 {
        self.in_flight
    }

    pub(crate) fn acquire(&mut self) -> Answer {
        let limit = u64::from(self.limit());
        gate(&mut self.in_flight, limit)
    }

    /// Gradient2 samples latency only: a drop is a sample like any other
    /// (`Gradient2Limit._update` ignores `didDrop`); an ignored call none.
    pub(crate) fn release(&mut self, c: Completion) {
        let in_flight = end(&mut self.in_flight);
        if c.signal != Signal::Ignore {
            self.sample(c.rtt, in_flight);
        }
    }

    fn add_long(&mut self, sample: f64) -> f64 {
        if self.long_count < WARMUP {
            self.long_count += 1;
            self.long_sum += sample;
            self.long_rtt = self.long_sum / f64::from(self.long_count);
        } else {
            let factor = 2.0 / (f64::from(self.p.long_window) + 1.0);
            self.long_rtt = self.long_rtt * (1.0 - factor) + sample * factor;
        }
        self.long_rtt
    }

    /// `Gradient2Limit._update`, step for step. A latency of 0 counts as
    /// 1 ns (Java would divide by zero and carry a NaN limit).
    pub(crate) fn sample(&mut self, rtt: u64, in_flight: u64) {
        let queue_size = f64::from(self.p.queue_size);
        let short = rtt.max(1) as f64;
        let long = self.add_long(rtt as f64);
        // A long average far above the current latency (load has passed)
        // decays faster than its smoothing alone would let it.
        if long / short > 2.0 {
            self.long_rtt *= 0.95;
        }
        // An application that does not use its limit does not grow it.
        if (in_flight as f64) < self.estimated / 2.0 {
            return;
        }
        let gradient = (self.p.rtt_tolerance * long / short).clamp(0.5, 1.0);
        let mut new_limit = self.estimated * gradient + queue_size;
        new_limit = self.estimated * (1.0 - self.p.smoothing) + new_limit * self.p.smoothing;
        new_limit = new_limit.min(f64::from(self.p.max_limit)).max(f64::from(self.p.min_limit));
        self.estimated = new_limit;
    }
}

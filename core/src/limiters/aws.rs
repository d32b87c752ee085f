//! AWS's adaptive client rate limiter: botocore `retries/adaptive.py`
//! (`ClientRateLimiter`, `RateClocker`), `retries/bucket.py`
//! (`TokenBucket`) and `retries/throttling.py` (`CubicCalculator`), as
//! smithy-rs `client_rate_limiter.rs` and aws-sdk-go-v2 `retry/adaptive*`
//! port them.
//!
//! Off until the first throttling response; from then on every request,
//! the first included, takes a token from a bucket whose fill rate follows
//! CUBIC: cut to β = 0.7 of the measured send rate on a throttle, then
//! grown along `0.4·(t − t_throttle − k)³ + w_max`, never above twice the
//! measured rate, never below 0.5 tokens a second. The send rate is
//! measured in half-second buckets, smoothed by 0.8.
//!
//! A request that finds too few tokens reserves them and waits for the
//! bucket to fill (smithy-rs's answer; botocore blocks on a condition for
//! the same time). Arithmetic is botocore's, in float seconds, with
//! `libm::cbrt` for the cube root.

use super::config::{AwsParams, Wait};
use super::{refuse_wait, Answer, AttemptKind};
use crate::json::Value;

const MIN_FILL_RATE: f64 = 0.5;
const MIN_CAPACITY: f64 = 1.0;
const SMOOTH: f64 = 0.8;
const BETA: f64 = 0.7;
const SCALE_CONSTANT: f64 = 0.4;
/// botocore `ClientRateLimiter._MAX_RATE_ADJUST_SCALE`.
const MAX_RATE_ADJUST_SCALE: f64 = 2.0;

fn secs(now: u64) -> f64 {
    now as f64 / 1e9
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) struct AwsAdaptive {
    p: AwsParams,
    fill_rate: f64,
    max_capacity: f64,
    capacity: f64,
    last_timestamp: f64,
    enabled: bool,
    measured_rate: f64,
    last_bucket: f64,
    request_count: u64,
    last_max_rate: f64,
    last_throttle: f64,
}

impl AwsAdaptive {
    /// botocore's start: `TokenBucket(max_rate=1)` (fill rate 1, capacity
    /// 1, no token yet), `CubicCalculator(starting_max_rate=0,
    /// start_time=now)`, `RateClocker` with its bucket at `floor(now)`.
    pub(crate) fn new(p: AwsParams, now: u64) -> AwsAdaptive {
        let t = secs(now);
        AwsAdaptive {
            p,
            fill_rate: 1.0,
            max_capacity: 1.0,
            capacity: 0.0,
            last_timestamp: t,
            enabled: false,
            measured_rate: 0.0,
            last_bucket: libm::floor(t),
            request_count: 0,
            last_max_rate: 0.0,
            last_throttle: t,
        }
    }

    pub(crate) fn enabled(&self) -> bool {
        self.enabled
    }

    fn cost(&self, kind: AttemptKind) -> u64 {
        match kind {
            AttemptKind::Initial => 1,
            AttemptKind::Retry => self.p.retry_cost,
            AttemptKind::RetryAfterTimeout => self.p.timeout_retry_cost,
        }
    }

    fn refill(&mut self, t: f64) {
        let t = t.max(self.last_timestamp);
        let fill = (t - self.last_timestamp) * self.fill_rate;
        self.capacity = (self.capacity + fill).min(self.max_capacity);
        self.last_timestamp = t;
    }

    pub(crate) fn acquire(&mut self, now: u64, kind: AttemptKind, within: Option<u64>) -> Answer {
        if !self.enabled {
            return Answer::Proceed;
        }
        let cost = self.cost(kind);
        let amount = cost as f64;
        self.refill(secs(now));
        if amount <= self.capacity {
            self.capacity -= amount;
            return Answer::Proceed;
        }
        let wait = ((amount - self.capacity) / self.fill_rate * 1e9).round_ties_even() as u64;
        let w = Wait { queue_limit: u64::MAX, max_wait: self.p.max_wait };
        if let Some(refusal) = refuse_wait(wait, 0, w, within) {
            return refusal;
        }
        self.capacity -= amount;
        Answer::Delay(wait, cost)
    }

    /// Returns an abandoned reservation's tokens (its ticket is its cost).
    pub(crate) fn refund(&mut self, cost: u64) -> bool {
        self.capacity = (self.capacity + cost as f64).min(self.max_capacity);
        true
    }

    /// `RateClocker.record`: counts the response and, when a new
    /// half-second bucket starts, smooths the rate of the last one in.
    fn record(&mut self, t: f64) {
        let bucket = libm::floor(t * 2.0) / 2.0;
        self.request_count += 1;
        if bucket > self.last_bucket {
            let current = self.request_count as f64 / (bucket - self.last_bucket);
            self.measured_rate = current * SMOOTH + self.measured_rate * (1.0 - SMOOTH);
            self.request_count = 0;
            self.last_bucket = bucket;
        }
    }

    /// CUBIC's `k`: the time the curve takes to climb back to `w_max`.
    fn time_window(&self) -> f64 {
        libm::cbrt(self.last_max_rate * (1.0 - BETA) / SCALE_CONSTANT)
    }

    /// `ClientRateLimiter.on_receiving_response`: every response, the
    /// throttling ones switching the limiter on.
    pub(crate) fn update(&mut self, now: u64, throttled: bool) {
        let t = secs(now);
        self.record(t);
        let rate = if throttled {
            let rate_to_use = if self.enabled { self.measured_rate.min(self.fill_rate) } else { self.measured_rate };
            self.last_max_rate = rate_to_use;
            self.last_throttle = t;
            self.enabled = true;
            rate_to_use * BETA
        } else {
            let dt = t - self.last_throttle - self.time_window();
            SCALE_CONSTANT * (dt * dt * dt) + self.last_max_rate
        };
        let new_rate = rate.min(MAX_RATE_ADJUST_SCALE * self.measured_rate);
        // Tokens due at the old rate are added before the rate changes.
        self.refill(t);
        self.fill_rate = new_rate.max(MIN_FILL_RATE);
        self.max_capacity = new_rate.max(MIN_CAPACITY);
        self.capacity = self.capacity.min(self.max_capacity);
    }

    pub(crate) fn view(&self) -> Value {
        json!({
            "enabled": self.enabled,
            "measured_rate": self.measured_rate,
            "fill_rate": self.fill_rate,
            "max_capacity": self.max_capacity,
            "capacity": self.capacity,
            "last_max_rate": self.last_max_rate,
        })
    }
}

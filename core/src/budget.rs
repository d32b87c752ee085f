//! Retry budgets: a fleet-wide limit on how much retrying may add.
//!
//! Why budgets and not just `max_attempts`? Attempts bound one operation;
//! they do nothing about many operations failing together. When a
//! downstream is down, every caller retries `max_attempts − 1` times, and
//! three layers each retrying four times turn one click into 64 calls. A
//! budget caps retries as a share of the traffic (or of a token pool), so a
//! healthy service retries freely and a failing one quickly stops adding
//! load.
//!
//! Five kinds, each the arithmetic of a well-known client:
//! - [`BudgetKind::TokenBucket`] — AWS SDK "standard" mode (500 tokens, a
//!   retry costs 5, 10 after a timeout; a success refunds or adds 1);
//! - [`BudgetKind::Grpc`] — gRFC A6 retry throttling, in integer thousandths;
//! - [`BudgetKind::Ratio`] — Finagle's RetryBudget: retries ≤ ratio · first
//!   attempts + a minimum per second, over a sliding window;
//! - [`BudgetKind::Concurrency`] — Envoy: retries in flight < max(ratio ·
//!   calls in flight, minimum);
//! - [`BudgetKind::Adaptive`] — Google SRE client-side throttling, consulted
//!   before every attempt.
//!
//! A refusal always names the budget and the reason. Time is an argument;
//! memory is bounded by a fixed number of buckets.

use crate::classify::Category;
use crate::doc::Obj;
use crate::duration::format_duration;
use crate::json::Value;
use crate::{Error, ErrorCode, Result};

const NS_PER_S: u64 = 1_000_000_000;

/// The arithmetic of a budget.
#[derive(Clone, Debug, PartialEq)]
pub enum BudgetKind {
    /// AWS SDK standard mode's retry quota.
    TokenBucket {
        /// Tokens when full (500).
        capacity: u32,
        /// Cost of a retry (5).
        retry_cost: u32,
        /// Cost of a retry after a `timeout` (10).
        timeout_cost: u32,
        /// Cost of a retry after `overloaded` (5).
        throttling_cost: u32,
        /// Tokens a success without a retry adds (1).
        success_increment: u32,
        /// Tokens at the start (default: `capacity`).
        initial_tokens: Option<u32>,
        /// Tokens added per whole second of `now` (smithy-rs `refill_rate`; 0: none).
        refill_rate: f64,
        /// Fractional tokens every success adds instead of the refund and
        /// `success_increment` (smithy-rs `success_reward`; 0: off).
        success_reward: f64,
    },
    /// gRFC A6 retry throttling.
    Grpc {
        /// Tokens when full, in thousandths (`max_tokens` · 1000, at most 1 000 000).
        max_milli: u64,
        /// Thousandths an OK adds (`token_ratio` truncated to 3 decimals).
        ratio_milli: u64,
    },
    /// Finagle's RetryBudget.
    Ratio {
        /// Retries allowed per first attempt (0.1).
        ratio: f64,
        /// Retries allowed per second regardless of traffic (1).
        min_retries_per_second: f64,
        /// The window (10 s), split into 10 buckets.
        window: u64,
    },
    /// Envoy's retry budget.
    Concurrency {
        /// Share of calls in flight that may be retries (0.2).
        ratio: f64,
        /// Retries always allowed in flight (3).
        min_concurrency: u32,
    },
    /// Finagle's `RetryBudget`, integer arithmetic: deposits of 1000 per
    /// request, withdrawals of trunc(1000 / percent) per retry, a reserve of
    /// `min_retries_per_second · ttl_s · withdrawal`, over twitter-util's
    /// `WindowedAdder` (10 slices, re-based on access time).
    Finagle {
        /// Share of requests that may be retried (0.2), in [0, 1000].
        percent_can_retry: f64,
        /// Retries per second always allowed (10), an integer.
        min_retries_per_second: u32,
        /// The window (10 s), between 1 s and 60 s.
        ttl: u64,
    },
    /// Google SRE client-side throttling.
    Adaptive {
        /// The multiplier K (2).
        k: f64,
        /// The window (2 min), split into buckets.
        window: u64,
    },
}

/// A budget's settings: a name and its arithmetic.
#[derive(Clone, Debug, PartialEq)]
pub struct BudgetConfig {
    /// The name refusals and metrics carry (default: the kind).
    pub name: String,
    /// The arithmetic.
    pub kind: BudgetKind,
}

/// Why a budget refused.
#[derive(Clone, Debug, PartialEq)]
pub struct Refusal {
    /// The budget's name.
    pub budget: String,
    /// A stable code: `insufficient_tokens`, `below_threshold`,
    /// `ratio_exceeded`, `too_many_retries_in_flight`, `throttled`.
    pub reason: &'static str,
    /// The numbers behind it; `Display` writes a readable line
    /// (`"cost 10 > 3 tokens"`). Kept as numbers so a refusal (frequent
    /// under a storm) formats nothing unless someone reads it.
    pub detail: RefusalDetail,
}

/// The numbers behind a [`Refusal`].
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum RefusalDetail {
    /// A retry costs more tokens than there are.
    Tokens {
        /// What the retry costs.
        cost: i64,
        /// What is left.
        tokens: i64,
    },
    /// gRPC throttling: tokens (thousandths) at or below half the maximum.
    BelowThreshold {
        /// Tokens in thousandths.
        milli: u64,
        /// The maximum in thousandths.
        max_milli: u64,
    },
    /// The ratio budget's inequality would fail.
    Ratio {
        /// Retries in the window, this one included.
        retries: u64,
        /// The allowed ratio.
        ratio: f64,
        /// First attempts in the window.
        requests: u64,
    },
    /// Too many retries in flight.
    InFlight {
        /// Retries in flight.
        retries: u64,
        /// The limit.
        limit: u64,
        /// Calls in flight.
        calls: u64,
    },
    /// The adaptive throttle drew below its rejection probability.
    Throttled {
        /// The rejection probability.
        probability: f64,
        /// Requests in the window.
        requests: u64,
        /// Accepts in the window.
        accepts: u64,
    },
}

impl std::fmt::Display for RefusalDetail {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            RefusalDetail::Tokens { cost, tokens } => write!(f, "cost {cost} > {tokens} tokens"),
            RefusalDetail::BelowThreshold { milli, max_milli } => {
                write!(f, "{} tokens ≤ {}", milli as f64 / 1000.0, max_milli as f64 / 2000.0)
            }
            RefusalDetail::Ratio { retries, ratio, requests } => {
                write!(f, "{retries} retries would exceed {ratio} × {requests} requests + minimum")
            }
            RefusalDetail::InFlight { retries, limit, calls } => {
                write!(f, "{retries} retries in flight ≥ limit {limit} ({calls} calls)")
            }
            RefusalDetail::Throttled { probability, requests, accepts } => {
                write!(f, "rejected locally with probability {probability:.3} ({requests} requests, {accepts} accepts)")
            }
        }
    }
}

const RATIO_BUCKETS: usize = 10;
const ADAPTIVE_BUCKETS: usize = 60;

/// The leases of a concurrency budget's retry slots, `(expiry, id)`, sorted:
/// at most one per slot, so a sorted vector (its inserts shift at most the
/// budget's limit of pairs) instead of a B-tree.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Leases(Vec<(u64, u64)>);

impl Leases {
    fn insert(&mut self, lease: (u64, u64)) {
        if let Err(i) = self.0.binary_search(&lease) {
            self.0.insert(i, lease);
        }
    }

    /// Removes `lease`; whether it was there.
    fn remove(&mut self, lease: (u64, u64)) -> bool {
        self.0.binary_search(&lease).map(|i| self.0.remove(i)).is_ok()
    }

    fn contains(&self, lease: (u64, u64)) -> bool {
        self.0.binary_search(&lease).is_ok()
    }

    /// Removes the leases that ended at or before `now`; how many.
    fn expire(&mut self, now: u64) -> usize {
        let n = self.0.partition_point(|l| l.0 <= now);
        self.0.drain(..n);
        n
    }
}

/// Counts per time slot in a ring of buckets, with running totals over the
/// live slots so a sum costs no loop.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Ring {
    /// Slot width in nanoseconds.
    width: u64,
    /// (slot index, a, b) per bucket; slot u64::MAX = empty.
    slots: Vec<(u64, u64, u64)>,
    /// The newest slot brought up to date (`u64::MAX`: none yet).
    head: u64,
    /// The time the head slot ends (a `now` below it needs no division).
    head_end: u64,
    /// Sums of `a` and `b` over the live slots.
    totals: (u64, u64),
}

impl Ring {
    fn new(window: u64, n: usize) -> Ring {
        Ring {
            width: (window / n as u64).max(1),
            slots: vec![(u64::MAX, 0, 0); n],
            head: u64::MAX,
            head_end: 0,
            totals: (0, 0),
        }
    }

    /// Moves the window to `now` (monotonic), dropping slots that left it.
    fn advance(&mut self, now: u64) {
        if self.head != u64::MAX && now < self.head_end {
            return;
        }
        let slot = now / self.width;
        let n = self.slots.len() as u64;
        if self.head == u64::MAX || slot >= self.head.saturating_add(n) {
            // Everything left the window.
            for b in &mut self.slots {
                *b = (u64::MAX, 0, 0);
            }
            self.totals = (0, 0);
        } else {
            for s in self.head + 1..=slot {
                let b = &mut self.slots[(s % n) as usize];
                if b.0 != u64::MAX {
                    self.totals.0 -= b.1;
                    self.totals.1 -= b.2;
                }
                *b = (u64::MAX, 0, 0);
            }
        }
        self.head = slot;
        self.head_end = slot.saturating_add(1).saturating_mul(self.width);
    }

    /// Adds to the current slot at `now`.
    fn add(&mut self, now: u64, a: u64, b: u64) {
        self.advance(now);
        let n = self.slots.len() as u64;
        let head = self.head;
        let bucket = &mut self.slots[(head % n) as usize];
        if bucket.0 != head {
            *bucket = (head, 0, 0);
        }
        bucket.1 += a;
        bucket.2 += b;
        self.totals.0 += a;
        self.totals.1 += b;
    }

    /// Sums over the window at `now` (≥ the last `advance`), without moving it.
    fn sums(&self, now: u64) -> (u64, u64) {
        if self.head == u64::MAX || now < self.head_end {
            return self.totals;
        }
        let slot = now / self.width;
        let n = self.slots.len() as u64;
        self.slots
            .iter()
            .filter(|b| b.0 != u64::MAX && b.0 <= slot && b.0 + n > slot)
            .fold((0, 0), |(a, c), b| (a + b.1, c + b.2))
    }
}

/// twitter-util's `WindowedAdder`: a live counter and N = slices − 1
/// history slots, re-based on the time of access (milliseconds).
#[derive(Clone, Debug, PartialEq, Eq)]
struct WindowedAdder {
    window_ms: i64,
    buf: [i64; 9],
    live: i64,
    i: usize,
    old_ms: Option<i64>,
}

impl WindowedAdder {
    fn new(range_ms: i64) -> Self {
        WindowedAdder { window_ms: (range_ms / 10).max(1), buf: [0; 9], live: 0, i: 0, old_ms: None }
    }

    fn expire(&mut self, now_ms: i64) {
        let old = *self.old_ms.get_or_insert(now_ms);
        if now_ms - old < self.window_ms {
            return;
        }
        const N: i64 = 9;
        self.buf[self.i] = std::mem::take(&mut self.live);
        self.i = (self.i + 1) % N as usize;
        let nskip = ((now_ms - old) / self.window_ms - 1).min(N);
        if nskip > 0 {
            let r = nskip.min(N - self.i as i64) as usize;
            self.buf[self.i..self.i + r].fill(0);
            self.buf[..(nskip as usize - r)].fill(0);
            self.i = (self.i + nskip as usize) % N as usize;
        }
        self.old_ms = Some(now_ms);
    }

    fn add(&mut self, now_ms: i64, x: i64) {
        self.expire(now_ms);
        self.live += x;
    }

    fn sum(&mut self, now_ms: i64) -> i64 {
        self.expire(now_ms);
        self.live + self.buf.iter().sum::<i64>()
    }
}

/// The mutable state of a budget.
#[derive(Clone, Debug, PartialEq)]
enum Tokens {
    /// Whole tokens, smithy-rs's fractional accumulator, and the whole
    /// second of `now` it last refilled at (0 at the start).
    Bucket {
        tokens: u32,
        fraction: f64,
        refilled_at_s: u64,
    },
    Grpc {
        milli: u64,
    },
    Ratio {
        ring: Ring,
    },
    /// `retries` counts every retry slot held; `leases` those a session
    /// took (by expiry, then lease id), which end by themselves.
    Concurrency {
        calls: u64,
        retries: u64,
        leases: Leases,
        next_lease: u64,
    },
    Finagle {
        adder: WindowedAdder,
        deposit: i64,
        withdrawal: i64,
        reserve: i64,
    },
    Adaptive {
        ring: Ring,
    },
}

/// A retry budget: plain data, shared among sessions behind a lock ([`SharedBudget`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Budget {
    config: BudgetConfig,
    state: Tokens,
    last_now: u64,
    refusals: u64,
    withdrawals: u64,
}

/// A budget shared by reference among sessions (`Send + Sync`).
pub type SharedBudget = std::sync::Arc<std::sync::Mutex<Budget>>;

/// How long a retry slot's lease outlives the retry it was taken for: the
/// wait, the attempt's timeout, then this grace (30 s).
pub const SLOT_LEASE_GRACE_NS: u64 = 30 * NS_PER_S;

/// A concurrency budget's retry slot held by one session until `until`
/// (see [`Budget::lease_slot`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct SlotLease {
    /// When the lease ends, in the budget's monotonic nanoseconds.
    pub until: u64,
    /// The lease's number within its budget.
    pub id: u64,
}

fn ratio_check(v: f64, field: &'static str) -> Result<()> {
    if !(v.is_finite() && (0.0..=1.0).contains(&v)) {
        return Err(Error::new(ErrorCode::OutOfRange, field, format!("must be in [0, 1], got {v}")));
    }
    Ok(())
}

impl BudgetConfig {
    /// AWS SDK standard mode: 500 tokens, costs 5 / 10 / 5, +1 on success.
    pub fn token_bucket() -> BudgetConfig {
        BudgetConfig {
            name: "token_bucket".into(),
            kind: BudgetKind::TokenBucket {
                capacity: 500,
                retry_cost: 5,
                timeout_cost: 10,
                throttling_cost: 5,
                success_increment: 1,
                initial_tokens: None,
                refill_rate: 0.0,
                success_reward: 0.0,
            },
        }
    }

    /// Finagle's defaults here: ratio 0.1, 1 retry per second, 10 s window.
    pub fn ratio() -> BudgetConfig {
        BudgetConfig {
            name: "ratio".into(),
            kind: BudgetKind::Ratio { ratio: 0.1, min_retries_per_second: 1.0, window: 10 * NS_PER_S },
        }
    }

    /// Finagle's `RetryBudget()` defaults: ttl 10 s, 10 retries per second, 20 %.
    pub fn finagle() -> BudgetConfig {
        BudgetConfig {
            name: "finagle".into(),
            kind: BudgetKind::Finagle { percent_can_retry: 0.2, min_retries_per_second: 10, ttl: 10 * NS_PER_S },
        }
    }

    /// Envoy's defaults: 20 %, at least 3.
    pub fn concurrency() -> BudgetConfig {
        BudgetConfig { name: "concurrency".into(), kind: BudgetKind::Concurrency { ratio: 0.2, min_concurrency: 3 } }
    }

    /// The SRE book's defaults: K = 2 over 2 minutes.
    pub fn adaptive() -> BudgetConfig {
        BudgetConfig { name: "adaptive".into(), kind: BudgetKind::Adaptive { k: 2.0, window: 120 * NS_PER_S } }
    }

    /// gRFC A6 throttling with the given `max_tokens` and `token_ratio`.
    ///
    /// # Errors
    /// `out_of_range` unless `max_tokens` is in (0, 1000] and `token_ratio` > 0
    /// (after truncation to 3 decimals).
    pub fn grpc(max_tokens: f64, token_ratio: f64) -> Result<BudgetConfig> {
        if !(max_tokens.is_finite() && max_tokens > 0.0 && max_tokens <= 1000.0) {
            return Err(Error::new(
                ErrorCode::OutOfRange,
                "max_tokens",
                format!("must be in (0, 1000], got {max_tokens}"),
            ));
        }
        if !(token_ratio.is_finite() && token_ratio > 0.0) {
            return Err(Error::new(ErrorCode::OutOfRange, "token_ratio", format!("must be > 0, got {token_ratio}")));
        }
        let ratio_milli = (token_ratio * 1000.0).trunc();
        if !(1.0..=1e12).contains(&ratio_milli) {
            return Err(Error::new(
                ErrorCode::OutOfRange,
                "token_ratio",
                "must be at least 0.001 (tokens are kept to 3 decimals)",
            ));
        }
        // max_tokens · 1000 in integer thousandths, truncated like the ratio.
        let max_milli = (max_tokens * 1000.0).trunc() as u64;
        Ok(BudgetConfig { name: "grpc".into(), kind: BudgetKind::Grpc { max_milli, ratio_milli: ratio_milli as u64 } })
    }

    /// Checks the settings.
    ///
    /// # Errors
    /// `out_of_range` for ratios outside [0, 1], a zero window, a negative
    /// minimum, K < 1, a token bucket's `refill_rate` or `success_reward`
    /// negative or not finite; `invalid_combination` for `initial_tokens`
    /// above `capacity`.
    pub fn validate(&self) -> Result<()> {
        match &self.kind {
            BudgetKind::TokenBucket { capacity, initial_tokens, refill_rate, success_reward, .. } => {
                if initial_tokens.is_some_and(|t| t > *capacity) {
                    return Err(Error::new(
                        ErrorCode::InvalidCombination,
                        "initial_tokens",
                        format!("must not exceed capacity ({capacity})"),
                    ));
                }
                for (v, field) in [(refill_rate, "refill_rate"), (success_reward, "success_reward")] {
                    if !(v.is_finite() && *v >= 0.0 && *v <= 1e9) {
                        return Err(Error::new(
                            ErrorCode::OutOfRange,
                            field,
                            format!("must be a finite number in [0, 1e9], got {v}"),
                        ));
                    }
                }
            }
            BudgetKind::Grpc { max_milli, ratio_milli } => {
                if *max_milli == 0 || *max_milli > 1_000_000 {
                    return Err(Error::new(ErrorCode::OutOfRange, "max_tokens", "must be in (0, 1000]"));
                }
                if *ratio_milli == 0 {
                    return Err(Error::new(ErrorCode::OutOfRange, "token_ratio", "must be at least 0.001"));
                }
            }
            BudgetKind::Ratio { ratio, min_retries_per_second, window } => {
                ratio_check(*ratio, "ratio")?;
                if !(min_retries_per_second.is_finite() && *min_retries_per_second >= 0.0) {
                    return Err(Error::new(
                        ErrorCode::OutOfRange,
                        "min_retries_per_second",
                        format!("must be a finite number ≥ 0, got {min_retries_per_second}"),
                    ));
                }
                if *window < RATIO_BUCKETS as u64 {
                    return Err(Error::new(ErrorCode::OutOfRange, "window", "must be at least 10ns"));
                }
            }
            BudgetKind::Concurrency { ratio, .. } => ratio_check(*ratio, "ratio")?,
            BudgetKind::Finagle { percent_can_retry, ttl, .. } => {
                if !(percent_can_retry.is_finite() && (0.0..=1000.0).contains(percent_can_retry)) {
                    return Err(Error::new(
                        ErrorCode::OutOfRange,
                        "percent_can_retry",
                        format!("must be in [0, 1000], got {percent_can_retry}"),
                    ));
                }
                if !(NS_PER_S..=60 * NS_PER_S).contains(ttl) {
                    return Err(Error::new(
                        ErrorCode::OutOfRange,
                        "ttl",
                        "must be between 1s and 60s (Finagle's bounds)",
                    ));
                }
            }
            BudgetKind::Adaptive { k, window } => {
                if !(k.is_finite() && *k >= 1.0) {
                    return Err(Error::new(
                        ErrorCode::OutOfRange,
                        "k",
                        format!("must be a finite number ≥ 1, got {k}"),
                    ));
                }
                if *window < ADAPTIVE_BUCKETS as u64 {
                    return Err(Error::new(ErrorCode::OutOfRange, "window", "must be at least 60ns"));
                }
            }
        }
        Ok(())
    }

    /// Returns the kind's document name.
    pub fn kind_name(&self) -> &'static str {
        match self.kind {
            BudgetKind::TokenBucket { .. } => "token_bucket",
            BudgetKind::Grpc { .. } => "grpc",
            BudgetKind::Ratio { .. } => "ratio",
            BudgetKind::Concurrency { .. } => "concurrency",
            BudgetKind::Finagle { .. } => "finagle",
            BudgetKind::Adaptive { .. } => "adaptive",
        }
    }

    /// Returns true when the kind's answers depend on `now` (the ratio,
    /// Finagle and adaptive windows). A token bucket, the gRPC throttle and a
    /// concurrency budget ignore `now`, so a host may skip reading its clock
    /// for them and pass 0.
    pub fn depends_on_time(&self) -> bool {
        match self.kind {
            BudgetKind::TokenBucket { refill_rate, .. } => refill_rate > 0.0,
            BudgetKind::Ratio { .. } | BudgetKind::Finagle { .. } | BudgetKind::Adaptive { .. } => true,
            BudgetKind::Grpc { .. } | BudgetKind::Concurrency { .. } => false,
        }
    }

    /// Reads a budget object of a policy document: `kind` plus the kind's keys.
    pub fn from_json_value(v: &Value, path: &str) -> Result<BudgetConfig> {
        Self::from_value_in(v, path, None)
    }

    /// Reads typed options (a budget object whose durations may be bare
    /// numbers of `unit_ns` nanoseconds; see
    /// [`BreakerConfig::from_typed_value`](crate::breaker::BreakerConfig::from_typed_value));
    /// a `null` is refused with `invalid_type`.
    pub fn from_typed_value(v: &Value, unit_ns: f64) -> Result<BudgetConfig> {
        crate::doc::refuse_null(v, "")?;
        Self::from_value_in(v, "", Some(unit_ns))
    }

    pub(crate) fn from_value_in(v: &Value, path: &str, unit: Option<f64>) -> Result<BudgetConfig> {
        Self::from_obj(Obj::typed(v, path, unit)?, path)
    }

    /// Reads a host's keyword options (`typed`) laid over a budget
    /// configuration given as a document (`document`, or null): bare
    /// numbers are durations in host units of `unit_ns` nanoseconds only
    /// among the keyword options; in the document they are refused with
    /// `invalid_duration`, as in any document. A `null` among the keyword
    /// options is `invalid_type`; in the document it means "not given".
    pub fn from_typed_over(document: &Value, typed: &Value, unit_ns: f64) -> Result<BudgetConfig> {
        let (v, keys) = crate::doc::typed_over(document, typed)?;
        Self::from_obj(Obj::typed_only(&v, "", unit_ns, &keys)?, "")
    }

    fn from_obj(mut o: Obj<'_>, path: &str) -> Result<BudgetConfig> {
        let (kind, kf) = o
            .str("kind", &["type"])?
            .ok_or_else(|| Error::new(ErrorCode::MissingField, o.field("kind"), "a budget names its kind"))?;
        let mut c = match kind {
            "token_bucket" => {
                let mut c = BudgetConfig::token_bucket();
                if let BudgetKind::TokenBucket {
                    capacity,
                    retry_cost,
                    timeout_cost,
                    throttling_cost,
                    success_increment,
                    initial_tokens,
                    refill_rate,
                    success_reward,
                } = &mut c.kind
                {
                    let max = u64::from(u32::MAX);
                    if let Some(x) = o.uint("capacity", &["max_capacity"], 0, max)? {
                        *capacity = x as u32;
                    }
                    if let Some(x) = o.uint("retry_cost", &[], 0, max)? {
                        *retry_cost = x as u32;
                    }
                    if let Some(x) = o.uint("timeout_cost", &["timeout_retry_cost"], 0, max)? {
                        *timeout_cost = x as u32;
                    }
                    if let Some(x) = o.uint("throttling_cost", &["throttling_retry_cost"], 0, max)? {
                        *throttling_cost = x as u32;
                    }
                    if let Some(x) = o.uint("success_increment", &["no_retry_increment"], 0, max)? {
                        *success_increment = x as u32;
                    }
                    if let Some(x) = o.uint("initial_tokens", &["initial_capacity"], 0, max)? {
                        *initial_tokens = Some(x as u32);
                    }
                    if let Some(x) = o.f64("refill_rate", &[])? {
                        *refill_rate = x;
                    }
                    if let Some(x) = o.f64("success_reward", &[])? {
                        *success_reward = x;
                    }
                }
                c
            }
            "grpc" => {
                let m = o.f64("max_tokens", &[])?;
                let r = o.f64("token_ratio", &[])?;
                match (m, r) {
                    (Some(m), Some(r)) => BudgetConfig::grpc(m, r).map_err(|e| e.within(path))?,
                    _ => {
                        return Err(Error::new(
                            ErrorCode::MissingField,
                            o.field(if m.is_none() { "max_tokens" } else { "token_ratio" }),
                            "grpc retry throttling requires max_tokens and token_ratio",
                        ))
                    }
                }
            }
            "ratio" => {
                let mut c = BudgetConfig::ratio();
                if let BudgetKind::Ratio { ratio, min_retries_per_second, window } = &mut c.kind {
                    if let Some(x) = o.f64("ratio", &["percent_can_retry"])? {
                        *ratio = x;
                    }
                    if let Some(x) = o.f64("min_retries_per_second", &["min_retries_per_sec"])? {
                        *min_retries_per_second = x;
                    }
                    if let Some(x) = o.duration("window", &["ttl"])? {
                        *window = x;
                    }
                }
                c
            }
            "concurrency" => {
                let mut c = BudgetConfig::concurrency();
                if let BudgetKind::Concurrency { ratio, min_concurrency } = &mut c.kind {
                    if let Some(x) = o.f64("ratio", &["budget_percent"])? {
                        *ratio = x;
                    }
                    if let Some(x) = o.uint("min_concurrency", &["min_retry_concurrency"], 0, u64::from(u32::MAX))? {
                        *min_concurrency = x as u32;
                    }
                }
                c
            }
            "finagle" => {
                let mut c = BudgetConfig::finagle();
                if let BudgetKind::Finagle { percent_can_retry, min_retries_per_second, ttl } = &mut c.kind {
                    if let Some(x) = o.f64("percent_can_retry", &["ratio"])? {
                        *percent_can_retry = x;
                    }
                    if let Some(x) =
                        o.uint("min_retries_per_second", &["min_retries_per_sec"], 0, u64::from(u32::MAX))?
                    {
                        *min_retries_per_second = x as u32;
                    }
                    if let Some(x) = o.duration("ttl", &["window"])? {
                        *ttl = x;
                    }
                }
                c
            }
            "adaptive" => {
                let mut c = BudgetConfig::adaptive();
                if let BudgetKind::Adaptive { k, window } = &mut c.kind {
                    if let Some(x) = o.f64("k", &[])? {
                        *k = x;
                    }
                    if let Some(x) = o.duration("window", &[])? {
                        *window = x;
                    }
                }
                c
            }
            other => {
                return Err(Error::new(
                    ErrorCode::InvalidValue,
                    kf,
                    format!("must be token_bucket, grpc, ratio, concurrency, finagle or adaptive, got {other:?}"),
                ))
            }
        };
        if let Some((n, _)) = o.str("name", &[])? {
            c.name = n.to_owned();
        }
        o.finish()?;
        c.validate().map_err(|e| e.within(path))?;
        Ok(c)
    }

    /// Writes the settings as a document object.
    pub fn to_json_value(&self) -> Value {
        let mut m = crate::json::Map::new();
        m.insert("kind".into(), self.kind_name().into());
        m.insert("name".into(), self.name.as_str().into());
        match &self.kind {
            BudgetKind::TokenBucket {
                capacity,
                retry_cost,
                timeout_cost,
                throttling_cost,
                success_increment,
                initial_tokens,
                refill_rate,
                success_reward,
            } => {
                m.insert("capacity".into(), (*capacity).into());
                m.insert("retry_cost".into(), (*retry_cost).into());
                m.insert("timeout_cost".into(), (*timeout_cost).into());
                m.insert("throttling_cost".into(), (*throttling_cost).into());
                m.insert("success_increment".into(), (*success_increment).into());
                if let Some(t) = initial_tokens {
                    m.insert("initial_tokens".into(), (*t).into());
                }
                if *refill_rate > 0.0 {
                    m.insert("refill_rate".into(), (*refill_rate).into());
                }
                if *success_reward > 0.0 {
                    m.insert("success_reward".into(), (*success_reward).into());
                }
            }
            BudgetKind::Grpc { max_milli, ratio_milli } => {
                m.insert("max_tokens".into(), (*max_milli as f64 / 1000.0).into());
                m.insert("token_ratio".into(), (*ratio_milli as f64 / 1000.0).into());
            }
            BudgetKind::Ratio { ratio, min_retries_per_second, window } => {
                m.insert("ratio".into(), (*ratio).into());
                m.insert("min_retries_per_second".into(), (*min_retries_per_second).into());
                m.insert("window".into(), format_duration(*window).into());
            }
            BudgetKind::Concurrency { ratio, min_concurrency } => {
                m.insert("ratio".into(), (*ratio).into());
                m.insert("min_concurrency".into(), (*min_concurrency).into());
            }
            BudgetKind::Finagle { percent_can_retry, min_retries_per_second, ttl } => {
                m.insert("percent_can_retry".into(), (*percent_can_retry).into());
                m.insert("min_retries_per_second".into(), (*min_retries_per_second).into());
                m.insert("ttl".into(), format_duration(*ttl).into());
            }
            BudgetKind::Adaptive { k, window } => {
                m.insert("k".into(), (*k).into());
                m.insert("window".into(), format_duration(*window).into());
            }
        }
        Value::Object(m)
    }

    /// Describes the budget in one line, for `explain`.
    pub fn describe(&self) -> String {
        match &self.kind {
            BudgetKind::TokenBucket {
                capacity,
                retry_cost,
                timeout_cost,
                throttling_cost,
                success_increment,
                initial_tokens,
                refill_rate,
                success_reward,
            } => {
                let mut d = format!(
                    "token bucket of {capacity}: a retry costs {retry_cost} ({timeout_cost} after a timeout, {throttling_cost} after overload)"
                );
                if *success_reward > 0.0 {
                    d.push_str(&format!("; a success adds {success_reward}"));
                } else {
                    d.push_str(&format!("; a success refunds its retry's cost or adds {success_increment}"));
                }
                if *refill_rate > 0.0 {
                    d.push_str(&format!("; refills {refill_rate} per second"));
                }
                if let Some(t) = initial_tokens {
                    d.push_str(&format!("; starts with {t}"));
                }
                d
            }
            BudgetKind::Grpc { max_milli, ratio_milli } => format!(
                "grpc throttling: {} tokens, a retryable failure takes 1, an OK adds {}; retries stop at or below {} tokens",
                *max_milli as f64 / 1000.0,
                *ratio_milli as f64 / 1000.0,
                *max_milli as f64 / 2000.0
            ),
            BudgetKind::Ratio { ratio, min_retries_per_second, window } => format!(
                "retries ≤ {ratio} × first attempts + {min_retries_per_second}/s over {}",
                format_duration(*window)
            ),
            BudgetKind::Concurrency { ratio, min_concurrency } => format!(
                "retries in flight < max({ratio} × calls in flight, {min_concurrency})"
            ),
            BudgetKind::Finagle { percent_can_retry, min_retries_per_second, ttl } => format!(
                "Finagle RetryBudget: {percent_can_retry} of requests plus {min_retries_per_second}/s over {}, in integer tokens",
                format_duration(*ttl)
            ),
            BudgetKind::Adaptive { k, window } => format!(
                "client-side throttling: reject with probability (requests − {k} × accepts)/(requests + 1) over {}",
                format_duration(*window)
            ),
        }
    }
}

/// Brings a token bucket up to `now` the way smithy-rs's `TokenBucket::acquire`
/// does: the time-based refill (`refill_tokens_based_on_time`: whole
/// seconds elapsed × rate into the fractional accumulator, which never
/// exceeds the capacity), then `convert_fractional_tokens` (whole tokens
/// move into the bucket up to its capacity; the excess is dropped).
fn settle_bucket(state: &mut Tokens, kind: &BudgetKind, now: u64) {
    let (Tokens::Bucket { tokens, fraction, refilled_at_s }, BudgetKind::TokenBucket { capacity, refill_rate, .. }) =
        (state, kind)
    else {
        return;
    };
    let cap = f64::from(*capacity);
    if *refill_rate > 0.0 {
        let secs = now / NS_PER_S;
        if secs > *refilled_at_s {
            let elapsed = secs - *refilled_at_s;
            *refilled_at_s = secs;
            if *fraction < cap {
                *fraction = (*fraction + elapsed as f64 * refill_rate).min(cap);
            }
        }
    }
    if !fraction.is_finite() {
        *fraction = 0.0;
        return;
    }
    let whole = fraction.floor();
    if whole >= 1.0 {
        // `add_permits`: up to the capacity.
        let room = capacity.saturating_sub(*tokens);
        *tokens += (whole.min(f64::from(room))) as u32;
        *fraction -= whole;
    }
}

impl Budget {
    /// Creates a budget (full, or a token bucket's `initial_tokens`).
    ///
    /// # Errors
    /// As [`BudgetConfig::validate`].
    pub fn new(config: BudgetConfig) -> Result<Budget> {
        config.validate()?;
        let state = match &config.kind {
            BudgetKind::TokenBucket { capacity, initial_tokens, .. } => {
                Tokens::Bucket { tokens: initial_tokens.unwrap_or(*capacity), fraction: 0.0, refilled_at_s: 0 }
            }
            BudgetKind::Grpc { max_milli, .. } => Tokens::Grpc { milli: *max_milli },
            BudgetKind::Ratio { window, .. } => Tokens::Ratio { ring: Ring::new(*window, RATIO_BUCKETS) },
            BudgetKind::Concurrency { .. } => {
                Tokens::Concurrency { calls: 0, retries: 0, leases: Default::default(), next_lease: 0 }
            }
            BudgetKind::Finagle { percent_can_retry, min_retries_per_second, ttl } => {
                // RetryBudget.apply: ScaleFactor 1000.
                let (deposit, withdrawal) =
                    if *percent_can_retry == 0.0 { (0, 1) } else { (1000, (1000.0 / percent_can_retry) as i64) };
                let ttl_s = (*ttl / NS_PER_S) as i64;
                let reserve = i64::from(*min_retries_per_second).saturating_mul(ttl_s).saturating_mul(withdrawal);
                Tokens::Finagle { adder: WindowedAdder::new((*ttl / 1_000_000) as i64), deposit, withdrawal, reserve }
            }
            BudgetKind::Adaptive { window, .. } => Tokens::Adaptive { ring: Ring::new(*window, ADAPTIVE_BUCKETS) },
        };
        Ok(Budget { config, state, last_now: 0, refusals: 0, withdrawals: 0 })
    }

    /// Wraps the budget for sharing.
    pub fn shared(self) -> SharedBudget {
        std::sync::Arc::new(std::sync::Mutex::new(self))
    }

    /// Returns the settings.
    pub fn config(&self) -> &BudgetConfig {
        &self.config
    }

    /// Returns the budget's name.
    pub fn name(&self) -> &str {
        &self.config.name
    }

    /// Returns how many retries it refused.
    pub fn refusals(&self) -> u64 {
        self.refusals
    }

    /// Returns how many retries it paid for.
    pub fn withdrawals(&self) -> u64 {
        self.withdrawals
    }

    fn clock(&mut self, now: u64) -> u64 {
        if now > self.last_now {
            self.last_now = now;
        }
        self.last_now
    }

    /// Returns the budget's level for metrics: tokens (token bucket, grpc
    /// as a float), or (retries, requests) in the window, or (retries, calls)
    /// in flight, or (requests, accepts) — as a JSON object.
    pub fn level(&self, now: u64) -> Value {
        let now = now.max(self.last_now);
        match &self.state {
            Tokens::Bucket { .. } => {
                let mut settled = self.state.clone();
                settle_bucket(&mut settled, &self.config.kind, now);
                match settled {
                    Tokens::Bucket { tokens, fraction, .. } if fraction > 0.0 => {
                        json!({ "tokens": tokens, "fraction": fraction })
                    }
                    Tokens::Bucket { tokens, .. } => json!({ "tokens": tokens }),
                    _ => Value::Null,
                }
            }
            Tokens::Grpc { milli } => json!({ "tokens": *milli as f64 / 1000.0 }),
            Tokens::Ratio { ring } => {
                let (requests, retries) = ring.sums(now);
                json!({ "requests": requests, "retries": retries })
            }
            Tokens::Concurrency { calls, retries, .. } => json!({ "calls": calls, "retries": retries }),
            Tokens::Finagle { adder, withdrawal, reserve, .. } => {
                let count = adder.clone().sum((now / 1_000_000) as i64) + reserve;
                json!({ "tokens": count, "balance": count / withdrawal })
            }
            Tokens::Adaptive { ring } => {
                let (requests, accepts) = ring.sums(now);
                json!({ "requests": requests, "accepts": accepts })
            }
        }
    }

    /// Returns the token count of a token bucket (or grpc tokens in thousandths).
    pub fn tokens(&self) -> Option<u64> {
        match self.state {
            Tokens::Bucket { tokens, .. } => Some(u64::from(tokens)),
            Tokens::Grpc { milli } => Some(milli),
            _ => None,
        }
    }

    /// A logical operation starts (its first attempt): a ratio budget
    /// deposits 1, a concurrency budget counts a call in flight.
    pub fn on_operation_start(&mut self, now: u64) {
        let now = self.clock(now);
        match &mut self.state {
            Tokens::Ratio { ring } => ring.add(now, 1, 0),
            Tokens::Concurrency { calls, .. } => *calls += 1,
            Tokens::Finagle { adder, deposit, .. } => adder.add((now / 1_000_000) as i64, *deposit),
            _ => {}
        }
    }

    /// A logical operation ends (success, give-up, cancel or drop): a
    /// concurrency budget releases the call and its retry slot, if held.
    pub fn on_operation_end(&mut self, held_retry_slot: bool) {
        if let Tokens::Concurrency { calls, retries, .. } = &mut self.state {
            *calls = calls.saturating_sub(1);
            if held_retry_slot {
                *retries = retries.saturating_sub(1);
            }
        }
    }

    /// The adaptive throttle, consulted before every attempt: counts the
    /// request and rejects iff `r` < max(0, (requests − K·accepts)/(requests + 1)).
    /// Other kinds never reject here. Returns the refusal, if any.
    pub fn before_attempt(&mut self, now: u64, r: f64) -> Option<Refusal> {
        let now = self.clock(now);
        if let (Tokens::Adaptive { ring }, BudgetKind::Adaptive { k, .. }) = (&mut self.state, &self.config.kind) {
            // The probability comes from the window before this request; the
            // request is counted whatever the answer.
            ring.advance(now);
            let (requests, accepts) = ring.sums(now);
            ring.add(now, 1, 0);
            let p = ((requests as f64 - k * accepts as f64) / (requests as f64 + 1.0)).max(0.0);
            if r < p {
                self.refusals += 1;
                return Some(Refusal {
                    budget: self.config.name.clone(),
                    reason: "throttled",
                    detail: RefusalDetail::Throttled { probability: p, requests, accepts },
                });
            }
        }
        None
    }

    /// Returns true for a budget consulted in [`before_attempt`](Self::before_attempt).
    pub fn is_adaptive(&self) -> bool {
        matches!(self.state, Tokens::Adaptive { .. })
    }

    /// Records a failed attempt that reached the point of classification.
    ///
    /// `counts` is true when the category's rule is not `never` (a failure
    /// for budgets); `reached_backend` is false for local failures
    /// (connect, open breaker, local exhaustion); `declined_pushback` is a
    /// gRPC don't-retry pushback; `refused` marks a refused connection,
    /// which takes no token.
    pub fn on_failure(&mut self, now: u64, f: FailureFacts) {
        let now = self.clock(now);
        match &mut self.state {
            Tokens::Grpc { milli } if (f.counts && !f.refused) || f.declined_pushback => {
                *milli = milli.saturating_sub(1000);
            }
            Tokens::Adaptive { ring } if f.reached_backend && f.category != Category::Overloaded => {
                ring.add(now, 0, 1);
            }
            _ => {}
        }
    }

    /// Records a successful attempt; `retry_cost` is what the token bucket
    /// took for the retry that led to it (`None` for a first attempt).
    ///
    /// With a `success_reward`, a token bucket adds the reward to its
    /// fractional tokens instead and keeps the retry's cost (smithy-rs
    /// `release_retry_permit`: `reward_success`, then the permit is
    /// forgotten); the reward turns into whole tokens at the next withdrawal.
    pub fn on_success(&mut self, now: u64, retry_cost: Option<u32>) {
        let now = self.clock(now);
        match (&mut self.state, &self.config.kind) {
            (Tokens::Bucket { fraction, .. }, BudgetKind::TokenBucket { capacity, success_reward, .. })
                if *success_reward > 0.0 =>
            {
                let cap = f64::from(*capacity);
                if *fraction < cap {
                    *fraction = (*fraction + success_reward).min(cap);
                }
            }
            (Tokens::Bucket { tokens, .. }, BudgetKind::TokenBucket { capacity, success_increment, .. }) => {
                let add = retry_cost.unwrap_or(*success_increment);
                *tokens = tokens.saturating_add(add).min(*capacity);
            }
            (Tokens::Grpc { milli }, BudgetKind::Grpc { max_milli, ratio_milli }) => {
                *milli = milli.saturating_add(*ratio_milli).min(*max_milli);
            }
            (Tokens::Adaptive { ring }, _) => ring.add(now, 0, 1),
            _ => {}
        }
    }

    /// The cost a token bucket charges for a retry after `category`.
    fn cost(&self, category: Category, refused: bool) -> u32 {
        match &self.config.kind {
            BudgetKind::TokenBucket { retry_cost, timeout_cost, throttling_cost, .. } => {
                if refused {
                    0
                } else {
                    match category {
                        Category::Timeout => *timeout_cost,
                        Category::Overloaded => *throttling_cost,
                        _ => *retry_cost,
                    }
                }
            }
            _ => 0,
        }
    }

    /// Checks, without changing anything, whether a retry after `category`
    /// is affordable. `holds_retry_slot` is true when the session already
    /// holds a concurrency retry slot.
    ///
    /// Takes `&mut self` only for Finagle's window, which re-bases itself on
    /// every access as twitter-util's `WindowedAdder` does, and for a token
    /// bucket's lazy refill (smithy-rs refills in `acquire`); no budget is spent.
    pub fn check(
        &mut self,
        now: u64,
        category: Category,
        refused: bool,
        holds_retry_slot: bool,
    ) -> Result<(), Refusal> {
        let now = now.max(self.last_now);
        if let Tokens::Finagle { adder, .. } = &mut self.state {
            adder.expire((now / 1_000_000) as i64);
        }
        settle_bucket(&mut self.state, &self.config.kind, now);
        self.expire_leases(now);
        let refuse = |reason: &'static str, detail: RefusalDetail| {
            Err(Refusal { budget: self.config.name.clone(), reason, detail })
        };
        match (&self.state, &self.config.kind) {
            (Tokens::Bucket { tokens, .. }, _) => {
                let cost = self.cost(category, refused);
                if cost > *tokens {
                    return refuse(
                        "insufficient_tokens",
                        RefusalDetail::Tokens { cost: i64::from(cost), tokens: i64::from(*tokens) },
                    );
                }
            }
            (Tokens::Grpc { milli }, BudgetKind::Grpc { max_milli, .. }) => {
                if refused {
                    return Ok(());
                }
                if *milli * 2 <= *max_milli {
                    return refuse(
                        "below_threshold",
                        RefusalDetail::BelowThreshold { milli: *milli, max_milli: *max_milli },
                    );
                }
            }
            (Tokens::Ratio { ring }, BudgetKind::Ratio { ratio, min_retries_per_second, window }) => {
                if refused {
                    return Ok(());
                }
                let (requests, retries) = ring.sums(now);
                let allowed = ratio * requests as f64 + min_retries_per_second * (*window as f64 / 1e9);
                if (retries + 1) as f64 > allowed {
                    return refuse(
                        "ratio_exceeded",
                        RefusalDetail::Ratio { retries: retries + 1, ratio: *ratio, requests },
                    );
                }
            }
            (Tokens::Finagle { adder, withdrawal, reserve, .. }, _) => {
                if refused {
                    return Ok(());
                }
                // tryGet(n): count = windowed sum + reserve ≥ n.
                let count = adder.live + adder.buf.iter().sum::<i64>() + reserve;
                if count < *withdrawal {
                    return refuse("insufficient_tokens", RefusalDetail::Tokens { cost: *withdrawal, tokens: count });
                }
            }
            (Tokens::Concurrency { calls, retries, .. }, BudgetKind::Concurrency { ratio, min_concurrency }) => {
                if holds_retry_slot {
                    return Ok(());
                }
                let limit = ((ratio * *calls as f64).floor() as u64).max(u64::from(*min_concurrency));
                if *retries >= limit {
                    return refuse(
                        "too_many_retries_in_flight",
                        RefusalDetail::InFlight { retries: *retries, limit, calls: *calls },
                    );
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// Frees the retry slots whose lease ended at or before `now`.
    fn expire_leases(&mut self, now: u64) {
        if let Tokens::Concurrency { retries, leases, .. } = &mut self.state {
            let ended = leases.expire(now);
            *retries = retries.saturating_sub(ended as u64);
        }
    }

    /// Gives the retry slot a session took at a retry a lease ending at
    /// `until` (`old`: the lease it held until now, renewed), and returns
    /// the lease; `None` for budgets that hold no slots.
    ///
    /// A lease is how an abandoned session (one that never reports its end:
    /// a dropped future, a crashed worker) gives its slot back: when the
    /// lease ends, the slot is free again, and the session, if it comes
    /// back, competes for a slot like a new retry. See
    /// `docs/breakers-and-budgets.md`.
    pub fn lease_slot(&mut self, old: Option<SlotLease>, until: u64) -> Option<SlotLease> {
        let Tokens::Concurrency { leases, next_lease, .. } = &mut self.state else { return None };
        let id = match old {
            Some(l) if leases.remove((l.until, l.id)) => l.id,
            _ => {
                *next_lease += 1;
                *next_lease
            }
        };
        leases.insert((until, id));
        Some(SlotLease { until, id })
    }

    /// Returns true when `lease` still holds its slot at `now` (ending
    /// every lease that has run out first).
    pub fn lease_live(&mut self, now: u64, lease: SlotLease) -> bool {
        let now = self.clock(now);
        self.expire_leases(now);
        matches!(&self.state, Tokens::Concurrency { leases, .. } if leases.contains((lease.until, lease.id)))
    }

    /// Ends `lease` before its time (the session finished); frees its slot
    /// unless the lease had already run out and freed it.
    pub fn end_lease(&mut self, lease: SlotLease) {
        if let Tokens::Concurrency { retries, leases, .. } = &mut self.state {
            if leases.remove((lease.until, lease.id)) {
                *retries = retries.saturating_sub(1);
            }
        }
    }

    /// Retry slots held now, leased or not (concurrency budgets; 0 otherwise).
    pub fn retries_in_flight(&self) -> u64 {
        match &self.state {
            Tokens::Concurrency { retries, .. } => *retries,
            _ => 0,
        }
    }

    /// Takes `amount` tokens from a token bucket if it holds that many,
    /// after the time-based refill (smithy-rs `try_acquire_many`, botocore
    /// `RetryQuota.acquire`); returns whether it took them. Counts no
    /// withdrawal or refusal: this is the raw bucket, for callers that
    /// price their own operations.
    ///
    /// # Errors
    /// `invalid_state` for a budget that is not a token bucket.
    pub fn acquire(&mut self, now: u64, amount: u32) -> Result<bool> {
        let now = self.clock(now);
        settle_bucket(&mut self.state, &self.config.kind, now);
        match &mut self.state {
            Tokens::Bucket { tokens, .. } if amount <= *tokens => {
                *tokens -= amount;
                Ok(true)
            }
            Tokens::Bucket { .. } => Ok(false),
            _ => Err(self.not_a_bucket()),
        }
    }

    /// Returns `amount` tokens to a token bucket, up to its capacity
    /// (botocore `RetryQuota.release`).
    ///
    /// # Errors
    /// `invalid_state` for a budget that is not a token bucket.
    pub fn release(&mut self, now: u64, amount: u32) -> Result<()> {
        let now = self.clock(now);
        settle_bucket(&mut self.state, &self.config.kind, now);
        match (&mut self.state, &self.config.kind) {
            (Tokens::Bucket { tokens, .. }, BudgetKind::TokenBucket { capacity, .. }) => {
                *tokens = tokens.saturating_add(amount).min(*capacity);
                Ok(())
            }
            _ => Err(self.not_a_bucket()),
        }
    }

    fn not_a_bucket(&self) -> Error {
        Error::new(
            ErrorCode::InvalidState,
            "kind",
            format!("budget {:?} is a {} budget, not a token bucket", self.config.name, self.config.kind_name()),
        )
    }

    /// Counts a refusal found by [`check`](Self::check).
    pub fn count_refusal(&mut self) {
        self.refusals += 1;
    }

    /// Pays for a retry that [`check`](Self::check) allowed. Returns the
    /// token-bucket cost taken (to refund on success) and whether a
    /// concurrency retry slot was taken.
    pub fn withdraw(
        &mut self,
        now: u64,
        category: Category,
        refused: bool,
        holds_retry_slot: bool,
    ) -> (Option<u32>, bool) {
        let now = self.clock(now);
        self.withdrawals += 1;
        let cost = self.cost(category, refused);
        settle_bucket(&mut self.state, &self.config.kind, now);
        match &mut self.state {
            Tokens::Bucket { tokens, .. } => {
                *tokens = tokens.saturating_sub(cost);
                (Some(cost), false)
            }
            Tokens::Ratio { ring } => {
                if !refused {
                    ring.add(now, 0, 1);
                }
                (None, false)
            }
            Tokens::Finagle { adder, withdrawal, .. } => {
                if !refused {
                    adder.add((now / 1_000_000) as i64, -*withdrawal);
                }
                (None, false)
            }
            Tokens::Concurrency { retries, .. } => {
                if holds_retry_slot {
                    (None, false)
                } else {
                    *retries += 1;
                    (None, true)
                }
            }
            _ => (None, false),
        }
    }
}

/// What a budget needs to know about a failed attempt.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct FailureFacts {
    /// The category.
    pub category: Category,
    /// The category's rule is not `never`: a failure for budgets.
    pub counts: bool,
    /// The attempt reached the backend.
    pub reached_backend: bool,
    /// A gRPC don't-retry pushback.
    pub declined_pushback: bool,
    /// A refused connection (takes no token).
    pub refused: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(c: Category) -> FailureFacts {
        FailureFacts { category: c, counts: true, reached_backend: true, declined_pushback: false, refused: false }
    }

    #[test]
    fn kinds_that_do_not_depend_on_time_ignore_now() {
        let configs =
            [BudgetConfig::token_bucket(), BudgetConfig::grpc(10.0, 0.1).unwrap(), BudgetConfig::concurrency()];
        for config in configs {
            assert!(!config.depends_on_time(), "{}", config.kind_name());
            let (mut a, mut b) = (Budget::new(config.clone()).unwrap(), Budget::new(config).unwrap());
            let cats = [Category::ServerError, Category::Timeout, Category::Overloaded, Category::Connect];
            for i in 0..400u64 {
                let (c, t) = (cats[(i % 4) as usize], i * 7_919_000_000);
                assert_eq!(a.check(0, c, i % 5 == 0, i % 3 == 0), b.check(t, c, i % 5 == 0, i % 3 == 0));
                assert_eq!(a.withdraw(0, c, i % 5 == 0, i % 3 == 0), b.withdraw(t, c, i % 5 == 0, i % 3 == 0));
                if i % 2 == 0 {
                    a.on_operation_start(0);
                    b.on_operation_start(t);
                    a.on_failure(0, facts(c));
                    b.on_failure(t, facts(c));
                } else {
                    a.on_success(0, Some(5));
                    b.on_success(t, Some(5));
                    a.on_operation_end(i % 3 == 0);
                    b.on_operation_end(i % 3 == 0);
                }
                assert_eq!(a.before_attempt(0, 0.5), b.before_attempt(t, 0.5));
                assert_eq!(a.level(0), b.level(t));
                assert_eq!((a.tokens(), a.refusals(), a.withdrawals()), (b.tokens(), b.refusals(), b.withdrawals()));
            }
        }
        for config in [BudgetConfig::ratio(), BudgetConfig::finagle(), BudgetConfig::adaptive()] {
            assert!(config.depends_on_time(), "{}", config.kind_name());
        }
    }

    #[test]
    fn token_bucket_arithmetic() {
        let mut b = Budget::new(BudgetConfig::token_bucket()).unwrap();
        assert!(b.check(0, Category::Timeout, false, false).is_ok());
        assert_eq!(b.withdraw(0, Category::Timeout, false, false).0, Some(10));
        assert_eq!(b.tokens(), Some(490));
        b.on_success(0, Some(10));
        assert_eq!(b.tokens(), Some(500));
        b.on_success(0, None);
        assert_eq!(b.tokens(), Some(500));
        for _ in 0..100 {
            b.withdraw(0, Category::ServerError, false, false);
        }
        assert_eq!(b.tokens(), Some(0));
        assert_eq!(b.check(0, Category::ServerError, false, false).unwrap_err().reason, "insufficient_tokens");
        assert!(b.check(0, Category::Connect, true, false).is_ok());
    }

    #[test]
    fn acquire_and_release_any_amount() {
        // botocore retries/quota.py RetryQuota.acquire / release.
        let mut b = Budget::new(BudgetConfig::token_bucket()).unwrap();
        assert!(b.acquire(0, 498).unwrap());
        assert!(!b.acquire(0, 3).unwrap());
        assert_eq!(b.tokens(), Some(2));
        b.release(0, 1000).unwrap();
        assert_eq!(b.tokens(), Some(500));
        assert!(b.acquire(0, 0).unwrap());
        // With a refill, acquire refills first (smithy-rs TokenBucket::acquire).
        let mut c = BudgetConfig::token_bucket();
        if let BudgetKind::TokenBucket { initial_tokens, refill_rate, .. } = &mut c.kind {
            *initial_tokens = Some(0);
            *refill_rate = 3.0;
        }
        let mut b = Budget::new(c).unwrap();
        assert!(b.config().depends_on_time());
        assert!(!b.acquire(NS_PER_S, 4).unwrap());
        assert!(b.acquire(2 * NS_PER_S, 4).unwrap());
        assert_eq!(b.tokens(), Some(2));
        let mut r = Budget::new(BudgetConfig::ratio()).unwrap();
        assert_eq!(r.acquire(0, 1).unwrap_err().code(), "invalid_state");
        assert_eq!(r.release(0, 1).unwrap_err().code(), "invalid_state");
    }

    #[test]
    fn grpc_threshold() {
        let mut b = Budget::new(BudgetConfig::grpc(10.0, 0.1).unwrap()).unwrap();
        for _ in 0..5 {
            b.on_failure(0, facts(Category::ServerError));
        }
        assert_eq!(b.tokens(), Some(5000));
        assert!(b.check(0, Category::ServerError, false, false).is_err());
        b.on_success(0, None);
        assert_eq!(b.tokens(), Some(5100));
        assert!(b.check(0, Category::ServerError, false, false).is_ok());
        assert!(BudgetConfig::grpc(0.0, 0.1).is_err());
        assert!(BudgetConfig::grpc(1001.0, 0.1).is_err());
        assert!(BudgetConfig::grpc(10.0, 0.0009).is_err());
    }

    #[test]
    fn ratio_budget() {
        let mut b = Budget::new(BudgetConfig::ratio()).unwrap();
        // 10 s window, 1/s minimum: 10 retries with no traffic.
        for _ in 0..10 {
            assert!(b.check(0, Category::ServerError, false, false).is_ok());
            b.withdraw(0, Category::ServerError, false, false);
        }
        assert!(b.check(0, Category::ServerError, false, false).is_err());
        for _ in 0..10 {
            b.on_operation_start(0);
        }
        assert!(b.check(0, Category::ServerError, false, false).is_ok());
        // All of it leaves the window after 10 s.
        assert_eq!(b.level(20 * NS_PER_S), json!({"requests": 0, "retries": 0}));
    }

    #[test]
    fn concurrency_budget() {
        let mut b = Budget::new(BudgetConfig::concurrency()).unwrap();
        for _ in 0..10 {
            b.on_operation_start(0);
        }
        for _ in 0..3 {
            assert!(b.check(0, Category::ServerError, false, false).is_ok());
            assert!(b.withdraw(0, Category::ServerError, false, false).1);
        }
        assert!(b.check(0, Category::ServerError, false, false).is_err());
        assert!(b.check(0, Category::ServerError, false, true).is_ok());
        b.on_operation_end(true);
        assert!(b.check(0, Category::ServerError, false, false).is_ok());
    }

    #[test]
    fn adaptive_throttle() {
        let mut b = Budget::new(BudgetConfig::adaptive()).unwrap();
        // No accepts: p = n/(n+1) grows toward 1.
        assert!(b.before_attempt(0, 0.0).is_none()); // p = 0
        assert!(b.before_attempt(0, 0.6).is_none()); // p = 1/2
        assert!(b.before_attempt(0, 0.6).is_some()); // p = 2/3
        b.on_success(0, None);
        b.on_success(0, None);
        // 3 requests, 2 accepts: p = max(0, (3 - 4)/4) = 0.
        assert!(b.before_attempt(0, 0.0).is_none());
    }
}

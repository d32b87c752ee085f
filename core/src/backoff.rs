//! Backoff: how long to wait before retry `n`.
//!
//! Two numbers are never mixed: `attempt` counts calls (the first call is
//! attempt 1) and `retry` n = attempt − 1 indexes delays (n = 1 is the wait
//! before attempt 2; n = 0 is an error).
//!
//! The base delay b(n) of each [`BackoffKind`] never exceeds `max_delay`;
//! [`Jitter`] then spreads it, and an optional `min_delay` floors the result.
//! All arithmetic is f64 in the written order (no fused multiply-add),
//! integer powers by repeated squaring with saturation, and the result is
//! rounded half to even to whole nanoseconds — so every target, native or
//! wasm, returns the same nanosecond.

use crate::duration::{from_std, to_std};
use crate::{Error, ErrorCode, Result};
use std::time::Duration;

/// How the base delay grows with the retry number.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum BackoffKind {
    /// b(n) = initial.
    Constant,
    /// b(n) = initial + increment · (n − 1).
    Linear,
    /// b(n) = initial · multiplier^(n − 1).
    Exponential,
    /// AWS "Decorrelated Jitter": d(n) = min(max_delay, initial + r · (3 · d(n−1) − initial)), d(0) = initial.
    Decorrelated,
}

impl BackoffKind {
    /// Returns the document name of the kind (`"exponential"`, …).
    pub const fn name(self) -> &'static str {
        match self {
            BackoffKind::Constant => "constant",
            BackoffKind::Linear => "linear",
            BackoffKind::Exponential => "exponential",
            BackoffKind::Decorrelated => "decorrelated",
        }
    }

    /// Parses a document name.
    pub fn from_name(s: &str) -> Option<Self> {
        Some(match s {
            "constant" | "fixed" => BackoffKind::Constant,
            "linear" => BackoffKind::Linear,
            "exponential" => BackoffKind::Exponential,
            "decorrelated" => BackoffKind::Decorrelated,
            _ => return None,
        })
    }
}

/// How a delay is spread around its capped base c = min(b(n), max_delay).
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Jitter {
    /// c.
    None,
    /// AWS "Full Jitter": r · c.
    Full,
    /// AWS "Equal Jitter": c/2 + r · c/2.
    Equal,
    /// c · (1 − f · r), f in [0, 1]: the base reduced by up to f (`base * (1 - f*rand)`).
    Proportional(f64),
    /// c'' + r · j with c'' = min(b(n), max(0, max_delay − j)); j in nanoseconds.
    Additive(u64),
    /// c' · (1 + f · (2r − 1)) with c' = min(b(n), max_delay / (1 + f)), f in [0, 1].
    Symmetric(f64),
}

impl Jitter {
    /// Returns the document name of the jitter (`"full"`, …).
    pub const fn name(self) -> &'static str {
        match self {
            Jitter::None => "none",
            Jitter::Full => "full",
            Jitter::Equal => "equal",
            Jitter::Proportional(_) => "proportional",
            Jitter::Additive(_) => "additive",
            Jitter::Symmetric(_) => "symmetric",
        }
    }
}

/// What a backoff's delay depends on besides its retry number and draw
/// ([`Backoff::history`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum DelayHistory {
    /// Nothing: retry n's delay is a function of n and its draw.
    None,
    /// The previous delay (decorrelated backoff: `prev`).
    PrevDelay,
    /// Every earlier draw (Polly's DecorrelatedJitterV2).
    Draws,
}

impl DelayHistory {
    /// Returns the stable code (`"none"`, `"prev_delay"`, `"draws"`).
    pub const fn code(self) -> &'static str {
        match self {
            DelayHistory::None => "none",
            DelayHistory::PrevDelay => "prev_delay",
            DelayHistory::Draws => "draws",
        }
    }
}

/// A validated backoff: kind, bounds, jitter and floor, all in nanoseconds.
#[derive(Clone, Debug, PartialEq)]
pub struct Backoff {
    profile: Option<crate::profile::Profile>,
    kind: BackoffKind,
    initial: u64,
    max_delay: u64,
    multiplier: f64,
    increment: u64,
    jitter: Jitter,
    min_delay: u64,
    immediate_first_retry: bool,
}

/// The settings of a [`Backoff`] before validation; unset fields take the defaults.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BackoffBuilder {
    /// The kind; default exponential.
    pub kind: Option<BackoffKind>,
    /// The first delay in nanoseconds; default 100 ms.
    pub initial: Option<u64>,
    /// The cap in nanoseconds; default 20 s.
    pub max_delay: Option<u64>,
    /// The exponential growth factor (≥ 1); default 2.
    pub multiplier: Option<f64>,
    /// The linear step in nanoseconds; default `initial`.
    pub increment: Option<u64>,
    /// The jitter; default full (none for decorrelated, which already draws).
    pub jitter: Option<Jitter>,
    /// The floor in nanoseconds; default none.
    pub min_delay: Option<u64>,
    /// The first retry waits 0 and retry n ≥ 2 keeps its delay (urllib3's
    /// `Retry.get_backoff_time`); default false.
    pub immediate_first_retry: Option<bool>,
    /// An anchor whose delay formula replaces retrycore's (see [`crate::profile`]).
    pub profile: Option<crate::profile::Profile>,
}

/// Default first delay: 100 ms.
pub const DEFAULT_INITIAL: u64 = 100_000_000;
/// Default cap: 20 s.
pub const DEFAULT_MAX_DELAY: u64 = 20_000_000_000;
/// Default exponential multiplier.
pub const DEFAULT_MULTIPLIER: f64 = 2.0;

fn check_factor(f: f64, field: &'static str) -> Result<()> {
    if !(0.0..=1.0).contains(&f) {
        return Err(Error::new(ErrorCode::OutOfRange, field, format!("must be in [0, 1], got {f}")));
    }
    Ok(())
}

/// Checks an explicit draw `r` (in [0, 1]; 1 is accepted to replay anchors' vectors).
pub fn check_r(r: f64) -> Result<()> {
    if !(0.0..=1.0).contains(&r) {
        return Err(Error::new(ErrorCode::OutOfRange, "r", format!("must be in [0, 1], got {r}")));
    }
    Ok(())
}

fn check_retry(retry: u32) -> Result<()> {
    if retry == 0 {
        return Err(Error::new(
            ErrorCode::OutOfRange,
            "retry",
            "retry numbers start at 1 (retry 1 is the wait before attempt 2)",
        ));
    }
    Ok(())
}

impl BackoffBuilder {
    /// Validates the settings.
    ///
    /// # Errors
    /// - `out_of_range` for a multiplier below 1 or not finite, a jitter
    ///   factor outside [0, 1], or a decorrelated `initial` of 0;
    /// - `invalid_combination` when `initial` > `max_delay`, `min_delay` >
    ///   `max_delay`, an additive jitter larger than `max_delay`, or a
    ///   decorrelated kind with a jitter other than none.
    pub fn build(&self) -> Result<Backoff> {
        let kind = self.kind.unwrap_or(BackoffKind::Exponential);
        let initial = self.initial.unwrap_or(DEFAULT_INITIAL);
        let max_delay = self.max_delay.unwrap_or(DEFAULT_MAX_DELAY.max(initial));
        let multiplier = self.multiplier.unwrap_or(DEFAULT_MULTIPLIER);
        if !multiplier.is_finite() || multiplier < 1.0 {
            return Err(Error::new(
                ErrorCode::OutOfRange,
                "multiplier",
                format!("must be a finite number ≥ 1, got {multiplier}"),
            ));
        }
        // Anchors that cap after the jitter (Polly's MaxDelay, resilience4j, tenacity)
        // accept a cap below the first delay.
        let caps_after = self.profile.is_some_and(|p| p.caps_after_jitter());
        if initial > max_delay && !caps_after {
            return Err(Error::new(
                ErrorCode::InvalidCombination,
                "initial",
                format!(
                    "must not exceed max_delay ({} > {})",
                    crate::duration::format_duration(initial),
                    crate::duration::format_duration(max_delay)
                ),
            ));
        }
        let jitter = match (kind, self.jitter) {
            (BackoffKind::Decorrelated, None | Some(Jitter::None)) => Jitter::None,
            (BackoffKind::Decorrelated, Some(j)) => {
                return Err(Error::new(
                    ErrorCode::InvalidCombination,
                    "jitter",
                    format!("decorrelated backoff already draws; its jitter must be none, got {}", j.name()),
                ))
            }
            (_, None) => Jitter::Full,
            (_, Some(j)) => j,
        };
        match jitter {
            Jitter::Proportional(f) | Jitter::Symmetric(f) => check_factor(f, "jitter.factor")?,
            Jitter::Additive(j) if j > max_delay => {
                return Err(Error::new(
                    ErrorCode::InvalidCombination,
                    "jitter.amount",
                    "additive jitter must not exceed max_delay",
                ))
            }
            _ => {}
        }
        if kind == BackoffKind::Decorrelated && initial == 0 {
            return Err(Error::new(ErrorCode::OutOfRange, "initial", "decorrelated backoff needs initial > 0"));
        }
        let min_delay = self.min_delay.unwrap_or(0);
        if min_delay > max_delay {
            return Err(Error::new(ErrorCode::InvalidCombination, "min_delay", "must not exceed max_delay"));
        }
        if let Some(p) = self.profile {
            p.check_jitter(kind, jitter)?;
        }
        Ok(Backoff {
            profile: self.profile.filter(|p| p.has_own_formula()),
            kind,
            initial,
            max_delay,
            multiplier,
            increment: self.increment.unwrap_or(initial),
            jitter,
            min_delay,
            immediate_first_retry: self.immediate_first_retry.unwrap_or(false),
        })
    }
}

impl Default for Backoff {
    fn default() -> Self {
        BackoffBuilder::default().build().expect("defaults are valid")
    }
}

/// Returns initial · multiplier^k, saturating at `max` (for the profiles' formulas).
pub(crate) fn exponential_capped(initial: f64, multiplier: f64, k: u32, max: f64) -> f64 {
    exponential(initial, multiplier, k, max)
}

/// Returns initial · multiplier^k, saturating at `max`, without forming ∞ or NaN.
///
/// The power is taken by repeated squaring in a fixed order so that every
/// target computes the same bits.
fn exponential(initial: f64, multiplier: f64, k: u32, max: f64) -> f64 {
    if initial == 0.0 {
        return 0.0;
    }
    if k == 0 || multiplier == 1.0 {
        return initial.min(max);
    }
    // initial ≤ max, so ratio ≥ 1; every factor is ≥ 1, so partial products only grow.
    let ratio = max / initial;
    if multiplier > ratio {
        return max;
    }
    let mut result = 1.0f64;
    let mut base = multiplier;
    let mut k = k;
    loop {
        if k & 1 == 1 {
            result *= base;
            if result > ratio {
                return max;
            }
        }
        k >>= 1;
        if k == 0 {
            break;
        }
        base *= base;
        if base > ratio {
            // A higher bit of k is still set, so the power includes this factor.
            return max;
        }
    }
    (initial * result).min(max)
}

/// Rounds a non-negative delay to whole nanoseconds, half to even, saturating.
#[inline]
fn to_ns(x: f64) -> u64 {
    // Below 2^52, adding and removing 2^52 rounds to an integer with IEEE's
    // default rounding (half to even): exact on every target and without the
    // `roundeven` library call x86-64 makes when SSE4.1 is not assumed.
    // Above it every f64 is already an integer. `as` saturates at u64::MAX.
    const TWO52: f64 = 4_503_599_627_370_496.0;
    if x < TWO52 {
        ((x + TWO52) - TWO52) as u64
    } else {
        x as u64
    }
}

/// One row of a [`Schedule`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScheduleRow {
    /// The retry number n (1 = the wait before attempt 2).
    pub retry: u32,
    /// The attempt that follows this wait (n + 1).
    pub attempt: u32,
    /// The infimum of the delay over r.
    pub low: Duration,
    /// The delay at r = 0.5.
    pub mid: Duration,
    /// The supremum of the delay over r.
    pub high: Duration,
    /// The sum of `low` up to this retry.
    pub cumulative_low: Duration,
    /// The sum of `high` up to this retry: the worst case wait so far.
    pub cumulative_high: Duration,
}

/// The delays a policy can produce, retry by retry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Schedule {
    /// One row per retry.
    pub rows: Vec<ScheduleRow>,
    /// True when the listing stopped at [`Schedule::MAX_ROWS`] rows.
    pub truncated: bool,
    /// The sum of `high` over *every* retry, listed or not, in nanoseconds
    /// (saturating); see [`Schedule::worst_case`].
    pub worst_case_ns: u64,
}

impl Schedule {
    /// The most rows a schedule lists.
    pub const MAX_ROWS: u32 = 1000;

    /// Retries summed one by one for the worst case before the rest is
    /// bounded (100 000).
    pub const EXACT_RETRIES: u32 = 100_000;

    /// Returns the cumulative worst case over *all* retries, not only the
    /// listed rows.
    ///
    /// Exact when the delays reach their cap (they stay there) or when there
    /// are at most [`Schedule::EXACT_RETRIES`] retries; otherwise the retries
    /// past that count are bounded by the largest delay the policy can
    /// give, so the worst case is never understated.
    pub fn worst_case(&self) -> Duration {
        to_std(self.worst_case_ns)
    }
}

impl Backoff {
    /// Returns the kind.
    pub fn kind(&self) -> BackoffKind {
        self.kind
    }
    /// Returns the first delay in nanoseconds.
    pub fn initial_ns(&self) -> u64 {
        self.initial
    }
    /// Returns the cap in nanoseconds.
    pub fn max_delay_ns(&self) -> u64 {
        self.max_delay
    }
    /// Returns the exponential multiplier.
    pub fn multiplier(&self) -> f64 {
        self.multiplier
    }
    /// Returns the linear step in nanoseconds.
    pub fn increment_ns(&self) -> u64 {
        self.increment
    }
    /// Returns the jitter.
    pub fn jitter(&self) -> Jitter {
        self.jitter
    }
    /// Returns the floor in nanoseconds (0 when unset).
    pub fn min_delay_ns(&self) -> u64 {
        self.min_delay
    }

    /// Returns true when the first retry waits 0 (urllib3's backoff).
    pub fn immediate_first_retry(&self) -> bool {
        self.immediate_first_retry
    }

    /// Returns true when a delay takes a random draw (jitter not none, or decorrelated).
    pub fn draws(&self) -> bool {
        self.kind == BackoffKind::Decorrelated || self.jitter != Jitter::None
    }

    /// Returns the base delay b(n) in nanoseconds (as f64, unrounded), never above `max_delay`.
    ///
    /// For the decorrelated kind this is d(n) along the path where every
    /// draw is `r` and the previous delay was `prev`.
    fn base_f64(&self, retry: u32, r: f64, prev: u64) -> f64 {
        let initial = self.initial as f64;
        let max = self.max_delay as f64;
        match self.kind {
            BackoffKind::Constant => initial.min(max),
            BackoffKind::Linear => (initial + self.increment as f64 * (retry - 1) as f64).min(max),
            BackoffKind::Exponential => exponential(initial, self.multiplier, retry - 1, max),
            BackoffKind::Decorrelated => {
                let upper = 3.0 * prev as f64 - initial;
                (initial + r * upper).max(0.0).min(max)
            }
        }
    }

    /// Returns the delay for `retry` given the draw `r` and, for the
    /// decorrelated kind, the previous backoff delay (`None`: `initial`).
    ///
    /// # Errors
    /// `out_of_range` when `retry` is 0 or `r` is outside [0, 1].
    pub fn delay(&self, retry: u32, r: f64, prev: Option<Duration>) -> Result<Duration> {
        self.delay_ns(retry, r, prev.map(from_std)).map(to_std)
    }

    /// Returns what a delay of this backoff depends on besides its retry
    /// number and draw: a host's stand-alone `delay(retry, r, prev)` is a
    /// session's delay only when it gets that history.
    pub fn history(&self) -> DelayHistory {
        match (self.profile, self.kind, self.jitter) {
            (Some(crate::profile::Profile::Polly), BackoffKind::Exponential, j) if j != Jitter::None => {
                DelayHistory::Draws
            }
            (_, BackoffKind::Decorrelated, _) => DelayHistory::PrevDelay,
            _ => DelayHistory::None,
        }
    }

    /// The delay of `retry` as a host's stand-alone `delay(retry, r, prev)`
    /// gives it: [`delay_ns`](Self::delay_ns), refusing a retry after the
    /// first whose delay depends on a history it is not given, rather than
    /// answering a delay no session would wait ([`history`](Self::history)).
    ///
    /// # Errors
    /// `out_of_range` as [`delay_ns`](Self::delay_ns); `missing_field`
    /// naming `prev` for a decorrelated backoff without `prev`;
    /// `invalid_combination` naming `prev` for Polly's DecorrelatedJitterV2,
    /// which depends on every earlier draw (replay the draws instead).
    pub fn delay_alone_ns(&self, retry: u32, r: f64, prev: Option<u64>) -> Result<u64> {
        check_retry(retry)?;
        check_r(r)?;
        if retry > 1 {
            match (self.history(), prev) {
                (DelayHistory::PrevDelay, None) => {
                    return Err(Error::new(
                        ErrorCode::MissingField,
                        "prev",
                        "a decorrelated delay draws from the previous delay: pass prev (or replay the draws)",
                    ))
                }
                (DelayHistory::Draws, _) => return Err(Error::new(
                    ErrorCode::InvalidCombination,
                    "prev",
                    "Polly's DecorrelatedJitterV2 (the polly profile's exponential backoff with jitter) depends on \
                         every earlier draw, not on the previous delay: replay the draws instead",
                )),
                _ => {}
            }
        }
        self.delay_ns(retry, r, prev)
    }

    /// [`delay`](Self::delay) in whole nanoseconds (the bindings' form).
    ///
    /// # Errors
    /// `out_of_range` when `retry` is 0 or `r` is outside [0, 1].
    pub fn delay_ns(&self, retry: u32, r: f64, prev: Option<u64>) -> Result<u64> {
        check_retry(retry)?;
        check_r(r)?;
        Ok(self.delay_unchecked(retry, r, prev.unwrap_or(self.initial)))
    }

    /// Returns the delay for `retry` (≥ 1) and `r` (in [0, 1]) without checking them.
    #[inline]
    pub(crate) fn delay_unchecked(&self, retry: u32, r: f64, prev: u64) -> u64 {
        let mut state =
            crate::profile::DelayState { prev_ns: prev, polly_prev: 0.0, since_pushback: retry.saturating_sub(1) };
        self.delay_with(retry, r, false, &mut state)
    }

    /// The delay for `retry` with a profile's state (decorrelated `prev`,
    /// Polly's formula value, retries since a gRPC pushback) and whether the
    /// failure was a throttle (aws-2026's base). Advances the state.
    #[inline]
    pub(crate) fn delay_with(
        &self,
        retry: u32,
        r: f64,
        throttled: bool,
        state: &mut crate::profile::DelayState,
    ) -> u64 {
        // urllib3 sleeps only from the second consecutive error on
        // (`get_backoff_time` returns 0 while the history holds ≤ 1 error);
        // the draw is taken and the state left as it was.
        if retry == 1 && self.immediate_first_retry {
            return 0;
        }
        if let Some(p) = self.profile {
            return crate::profile::delay(
                p,
                self.kind,
                self.jitter,
                self.initial,
                self.max_delay,
                self.multiplier,
                self.min_delay,
                retry,
                r,
                throttled,
                state,
            );
        }
        let prev = if state.prev_ns == 0 { self.initial } else { state.prev_ns };
        let d = self.standard_delay(retry, r, prev);
        state.prev_ns = d;
        d
    }

    /// retrycore's own formula.
    #[inline]
    fn standard_delay(&self, retry: u32, r: f64, prev: u64) -> u64 {
        let max = self.max_delay as f64;
        let b = self.base_f64(retry, r, prev);
        let x = match self.jitter {
            Jitter::None => b,
            Jitter::Full => r * b,
            Jitter::Equal => b / 2.0 + r * b / 2.0,
            Jitter::Proportional(f) => b * (1.0 - f * r),
            Jitter::Additive(j) => {
                let j = j as f64;
                let c = b.min((max - j).max(0.0));
                c + r * j
            }
            Jitter::Symmetric(f) => {
                let c = b.min(max / (1.0 + f));
                c * (1.0 + f * (2.0 * r - 1.0))
            }
        };
        let x = x.min(max).max(self.min_delay as f64);
        // Bounds past 2^53 are not exact in f64; clamp again in integers.
        to_ns(x).clamp(self.min_delay, self.max_delay)
    }

    /// Returns the delay for `retry`, taking one draw from `rng` iff the delay draws.
    pub fn sample(&self, retry: u32, rng: &mut impl crate::rng::Rng, prev: Option<Duration>) -> Result<Duration> {
        check_retry(retry)?;
        let r = if self.draws() { rng.next_f64() } else { 0.0 };
        Ok(to_std(self.delay_unchecked(retry, r, prev.map_or(self.initial, from_std))))
    }

    /// Returns the delays of retries 1..=`count` drawn from a generator
    /// seeded with `seed`, each decorrelated delay feeding the next.
    pub fn sample_sequence(&self, seed: u64, count: u32) -> Vec<Duration> {
        self.sample_sequence_ns(seed, count).into_iter().map(to_std).collect()
    }

    /// [`sample_sequence`](Self::sample_sequence) in whole nanoseconds.
    pub fn sample_sequence_ns(&self, seed: u64, count: u32) -> Vec<u64> {
        let mut rng = crate::rng::Xoshiro256pp::seed_from_u64(seed);
        let mut state = crate::profile::DelayState::default();
        (1..=count)
            .map(|n| {
                let r = if self.draws() { crate::rng::Rng::next_f64(&mut rng) } else { 0.0 };
                self.delay_with(n, r, false, &mut state)
            })
            .collect()
    }

    /// Returns the delays of retries 1..=`draws.len()` with the given draws
    /// (an anchor's vectors replayed; each delay takes the next draw),
    /// chaining the profile state.
    ///
    /// # Errors
    /// `out_of_range` for a draw outside [0, 1].
    pub fn replay_ns(&self, draws: &[f64]) -> Result<Vec<u64>> {
        let mut state = crate::profile::DelayState::default();
        draws
            .iter()
            .enumerate()
            .map(|(i, &r)| {
                check_r(r)?;
                Ok(self.delay_with(i as u32 + 1, r, false, &mut state))
            })
            .collect()
    }

    /// Returns the profile whose formula this backoff uses, if any.
    pub fn profile(&self) -> Option<crate::profile::Profile> {
        self.profile
    }

    /// Lists low / mid / high per retry for a policy of `max_attempts`
    /// calls (so `max_attempts − 1` retries, at most [`Schedule::MAX_ROWS`]).
    ///
    /// For the decorrelated kind, each column follows the path with every
    /// draw held at 0, 0.5 and 1.
    pub fn schedule(&self, max_attempts: u32) -> Schedule {
        let retries = max_attempts.saturating_sub(1);
        let listed = retries.min(Schedule::MAX_ROWS);
        let mut rows = Vec::with_capacity(listed as usize);
        let (mut s0, mut s5, mut s1) = (
            crate::profile::DelayState::default(),
            crate::profile::DelayState::default(),
            crate::profile::DelayState::default(),
        );
        let (mut cl, mut ch) = (0u64, 0u64);
        let d = to_std;
        for n in 1..=listed {
            let d0 = self.delay_with(n, 0.0, false, &mut s0);
            let d5 = self.delay_with(n, 0.5, false, &mut s5);
            let d1 = self.delay_with(n, 1.0, false, &mut s1);
            let (low, high) = (d0.min(d1), d0.max(d1));
            cl = cl.saturating_add(low);
            ch = ch.saturating_add(high);
            rows.push(ScheduleRow {
                retry: n,
                attempt: n + 1,
                low: d(low),
                mid: d(d5),
                high: d(high),
                cumulative_low: d(cl),
                cumulative_high: d(ch),
            });
        }
        let worst_case_ns = self.worst_beyond(listed, retries, ch, &mut s0, &mut s1);
        Schedule { rows, truncated: listed < retries, worst_case_ns }
    }

    /// Continues the worst-case sum `sum` of the first `done` retries up to
    /// `retries`, with the r = 0 and r = 1 paths' states.
    fn worst_beyond(
        &self,
        done: u32,
        retries: u32,
        mut sum: u64,
        s0: &mut crate::profile::DelayState,
        s1: &mut crate::profile::DelayState,
    ) -> u64 {
        // Once the high delay is at or above the cap and has not moved for
        // this many retries, no later retry can differ: the rest is a product.
        const STABLE: u32 = 64;
        let (mut last, mut same, mut highest) = (u64::MAX, 0u32, 0u64);
        let mut n = done;
        while n < retries && sum < u64::MAX {
            if n >= Schedule::EXACT_RETRIES {
                let bound = highest.max(self.max_delay);
                return sum.saturating_add(bound.saturating_mul(u64::from(retries - n)));
            }
            n += 1;
            let high = self.delay_with(n, 0.0, false, s0).max(self.delay_with(n, 1.0, false, s1));
            sum = sum.saturating_add(high);
            highest = highest.max(high);
            same = if high == last { same + 1 } else { 0 };
            last = high;
            if same >= STABLE && high >= self.max_delay {
                return sum.saturating_add(high.saturating_mul(u64::from(retries - n)));
            }
        }
        sum
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{Rng, Xoshiro256pp};

    fn b(kind: BackoffKind, jitter: Jitter) -> BackoffBuilder {
        BackoffBuilder { kind: Some(kind), jitter: Some(jitter), ..Default::default() }
    }

    #[test]
    fn exponential_doubles_and_caps() {
        let bo = BackoffBuilder { jitter: Some(Jitter::None), ..Default::default() }.build().unwrap();
        let want = [100, 200, 400, 800, 1600, 3200, 6400, 12800, 20000, 20000];
        for (i, w) in want.iter().enumerate() {
            assert_eq!(bo.delay_ns(i as u32 + 1, 0.5, None).unwrap(), w * 1_000_000);
        }
        assert_eq!(bo.delay_ns(u32::MAX, 0.5, None).unwrap(), 20_000_000_000);
    }

    #[test]
    fn huge_multiplier_saturates() {
        let bo =
            BackoffBuilder { multiplier: Some(1e6), jitter: Some(Jitter::None), ..Default::default() }.build().unwrap();
        assert_eq!(bo.delay_ns(2, 0.0, None).unwrap(), 20_000_000_000);
        assert_eq!(bo.delay_ns(u32::MAX, 0.0, None).unwrap(), 20_000_000_000);
        let bo = BackoffBuilder {
            multiplier: Some(1.000_000_1),
            initial: Some(1),
            max_delay: Some(u64::MAX),
            jitter: Some(Jitter::None),
            ..Default::default()
        }
        .build()
        .unwrap();
        let d = bo.delay_ns(u32::MAX, 0.0, None).unwrap();
        assert!(d > 0);
    }

    #[test]
    fn zero_initial_is_zero() {
        let bo = BackoffBuilder { initial: Some(0), max_delay: Some(0), ..Default::default() }.build().unwrap();
        for n in [1, 2, 1000, u32::MAX] {
            assert_eq!(bo.delay_ns(n, 1.0, None).unwrap(), 0);
        }
    }

    #[test]
    fn rounding_is_half_to_even() {
        for (x, want) in [(0.5, 0), (1.5, 2), (2.5, 2), (2.4999999, 2), (3.5000001, 4), (0.0, 0), (1e300, u64::MAX)] {
            assert_eq!(to_ns(x), want, "{x}");
            assert_eq!(to_ns(x), x.round_ties_even() as u64, "{x}");
        }
        let big = 4_503_599_627_370_497.0; // 2^52 + 1, already an integer
        assert_eq!(to_ns(big), 4_503_599_627_370_497);
    }

    #[test]
    fn jitters() {
        let full = b(BackoffKind::Constant, Jitter::Full).build().unwrap();
        assert_eq!(full.delay_ns(1, 0.25, None).unwrap(), 25_000_000);
        let equal = b(BackoffKind::Constant, Jitter::Equal).build().unwrap();
        assert_eq!(equal.delay_ns(1, 0.0, None).unwrap(), 50_000_000);
        assert_eq!(equal.delay_ns(1, 1.0, None).unwrap(), 100_000_000);
        let prop = b(BackoffKind::Constant, Jitter::Proportional(0.5)).build().unwrap();
        assert_eq!(prop.delay_ns(1, 1.0, None).unwrap(), 50_000_000);
        let add = BackoffBuilder {
            kind: Some(BackoffKind::Constant),
            initial: Some(1_000_000_000),
            max_delay: Some(1_000_000_000),
            jitter: Some(Jitter::Additive(200_000_000)),
            ..Default::default()
        }
        .build()
        .unwrap();
        assert_eq!(add.delay_ns(1, 1.0, None).unwrap(), 1_000_000_000);
        assert_eq!(add.delay_ns(1, 0.0, None).unwrap(), 800_000_000);
        let sym = BackoffBuilder {
            kind: Some(BackoffKind::Constant),
            initial: Some(1_000_000_000),
            max_delay: Some(1_000_000_000),
            jitter: Some(Jitter::Symmetric(0.25)),
            ..Default::default()
        }
        .build()
        .unwrap();
        assert_eq!(sym.delay_ns(1, 1.0, None).unwrap(), 1_000_000_000);
        assert_eq!(sym.delay_ns(1, 0.0, None).unwrap(), 600_000_000);
    }

    #[test]
    fn decorrelated_path() {
        let bo = BackoffBuilder { kind: Some(BackoffKind::Decorrelated), ..Default::default() }.build().unwrap();
        assert_eq!(bo.delay_ns(1, 1.0, None).unwrap(), 300_000_000);
        assert_eq!(bo.delay_ns(2, 1.0, Some(300_000_000)).unwrap(), 900_000_000);
        assert_eq!(bo.delay_ns(2, 0.0, Some(300_000_000)).unwrap(), 100_000_000);
        assert!(b(BackoffKind::Decorrelated, Jitter::Full).build().is_err());
    }

    #[test]
    fn rejects_bad_settings() {
        let e = BackoffBuilder { initial: Some(5), max_delay: Some(1), ..Default::default() }.build().unwrap_err();
        assert_eq!(e.code(), "invalid_combination");
        let e = BackoffBuilder { multiplier: Some(0.5), ..Default::default() }.build().unwrap_err();
        assert_eq!(e.field(), "multiplier");
        let e = BackoffBuilder { multiplier: Some(f64::NAN), ..Default::default() }.build().unwrap_err();
        assert_eq!(e.code(), "out_of_range");
        let e = b(BackoffKind::Constant, Jitter::Proportional(1.5)).build().unwrap_err();
        assert_eq!(e.code(), "out_of_range");
        let bo = Backoff::default();
        assert_eq!(bo.delay_ns(0, 0.5, None).unwrap_err().field(), "retry");
        assert_eq!(bo.delay_ns(1, 1.5, None).unwrap_err().field(), "r");
        assert_eq!(bo.delay_ns(1, f64::NAN, None).unwrap_err().field(), "r");
    }

    #[test]
    fn schedule_lists_retries() {
        let s = Backoff::default().schedule(3);
        assert_eq!(s.rows.len(), 2);
        assert_eq!(s.rows[0].low, Duration::ZERO);
        assert_eq!(s.rows[0].mid, Duration::from_millis(50));
        assert_eq!(s.rows[0].high, Duration::from_millis(100));
        assert_eq!(s.rows[1].high, Duration::from_millis(200));
        assert_eq!(s.worst_case(), Duration::from_millis(300));
        assert!(Backoff::default().schedule(u32::MAX).truncated);
    }

    #[test]
    fn worst_case_sums_every_retry_not_only_the_listed_rows() {
        // Default: 100 ms · 2^(n−1) capped at 20 s; 0.1 + 0.2 + … + 12.8 s, then 20 s each.
        let naive = |attempts: u32| -> u64 {
            (1..attempts).map(|n| (100_000_000u64 << (n - 1).min(20)).min(20_000_000_000)).sum()
        };
        for attempts in [3, 1001, 1002, 5000, 200_000] {
            let s = Backoff::default().schedule(attempts);
            assert_eq!(s.worst_case_ns, naive(attempts), "{attempts}");
        }
        let s = Backoff::default().schedule(u32::MAX);
        assert_eq!(s.rows.len(), Schedule::MAX_ROWS as usize);
        assert_eq!(s.worst_case_ns, u64::MAX, "4 billion retries of 20 s saturate");
        let one_s = BackoffBuilder {
            kind: Some(BackoffKind::Constant),
            initial: Some(1_000_000),
            max_delay: Some(1_000_000),
            jitter: Some(Jitter::None),
            ..Default::default()
        };
        let s = one_s.build().unwrap().schedule(u32::MAX);
        assert_eq!(s.worst_case_ns, 1_000_000 * (u64::from(u32::MAX) - 1));
        // A delay that never reaches its cap: past EXACT_RETRIES the rest is bounded by the cap.
        let slow = BackoffBuilder {
            kind: Some(BackoffKind::Linear),
            initial: Some(1),
            increment: Some(1),
            max_delay: Some(10_000_000),
            jitter: Some(Jitter::None),
            ..Default::default()
        };
        let s = slow.build().unwrap().schedule(1_000_001);
        let exact: u64 = (1..=u64::from(Schedule::EXACT_RETRIES)).sum();
        assert_eq!(s.worst_case_ns, exact + 10_000_000 * (1_000_000 - u64::from(Schedule::EXACT_RETRIES)));
    }

    #[test]
    fn sample_takes_one_draw_iff_jitter() {
        let mut g = Xoshiro256pp::seed_from_u64(7);
        let mut h = g.clone();
        let none = BackoffBuilder { jitter: Some(Jitter::None), ..Default::default() }.build().unwrap();
        none.sample(1, &mut g, None).unwrap();
        assert_eq!(g, h);
        Backoff::default().sample(1, &mut g, None).unwrap();
        h.next_u64();
        assert_eq!(g, h);
    }
}

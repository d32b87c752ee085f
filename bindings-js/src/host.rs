//! Numbers across the boundary, and what each host supplies.
//!
//! JavaScript numbers in milliseconds become the core's nanoseconds (round
//! half to even, `duration::from_millis_f64`) and come back with one IEEE
//! division; wall-clock times are whole Unix-epoch milliseconds; 64-bit
//! integers (seeds, entropy) arrive as decimal strings. A monotonic `now` of
//! exactly -1 means "now on the host's clock" (the JS layer passes it when the
//! caller gave no time; callers' negative times are refused before they get
//! here).

use crate::error::{Error, Result};
use retrycore::rng::EntropyPool;
use retrycore::ErrorCode;
use retrycore::{duration, limits};
use std::cell::RefCell;

/// What an FFI crate supplies: its clock and its entropy.
///
/// Implemented by a unit type in each FFI crate and resolved at compile time
/// (every function here that reads the clock or draws entropy is generic
/// over it).
pub trait Host {
    /// Reads the host's monotonic clock (`performance.now()`), in milliseconds.
    fn clock_ms() -> f64;

    /// Fills `out` (at most `EntropyPool::BLOCK` bytes) with bytes from the host's generator.
    fn entropy(out: &mut [u8]) -> Result<()>;
}

/// Draws `N` bytes from the host's entropy.
#[inline]
pub fn draw<H: Host, const N: usize>() -> Result<[u8; N]> {
    let mut b = [0u8; N];
    H::entropy(&mut b)?;
    Ok(b)
}

/// Converts milliseconds from JavaScript to nanoseconds, naming `field` in errors.
#[inline]
pub fn ns(ms: f64, field: &str) -> Result<u64> {
    duration::from_millis_f64(ms, field).map_err(Error::of_config)
}

/// Converts a monotonic `now` in milliseconds; exactly -1 reads the host's clock.
///
/// An instant past 2^64 ns (`1e308`, `Infinity`) is `invalid_time` and never
/// saturates: it would pin the object's clock at the end of time (see
/// `docs/js.md, "Input limits"`).
#[inline]
pub fn now_ns<H: Host>(now: f64, field: &str) -> Result<u64> {
    let now = if now == -1.0 { H::clock_ms() } else { now };
    limits::time_from_host_f64(now, 1e6, field).map_err(Error::of_config)
}

/// Converts a host count or amount (a budget cost, an index, a count) to an
/// integer in `0..=max`: `out_of_range` for NaN, fractions, negative values
/// and values past `max`, never a wrap-around (see `docs/js.md, "Input limits"`).
#[inline]
pub fn count(v: f64, max: u64, field: &str) -> Result<u64> {
    limits::count_from_f64(v, max, field).map_err(Error::of_config)
}

/// Converts nanoseconds to JavaScript milliseconds (one IEEE division).
#[inline(always)]
pub fn ms(ns: u64) -> f64 {
    duration::to_millis_f64(ns)
}

/// Converts a duration to JavaScript milliseconds.
#[inline]
pub(crate) fn ms_of(d: std::time::Duration) -> f64 {
    ms(duration::from_std(d))
}

/// Converts nanoseconds that may mean "not by waiting" (`u64::MAX`) to
/// milliseconds (`Infinity`).
#[inline]
pub fn ms_or_infinity(ns: u64) -> f64 {
    if ns == u64::MAX {
        f64::INFINITY
    } else {
        ms(ns)
    }
}

/// Converts a wall-clock `now` in Unix epoch milliseconds: a whole number,
/// and (like every instant) at most 2^64 ns, else `invalid_time` (see
/// `docs/js.md, "Input limits"`).
pub fn wall_ms(v: f64, field: &str) -> Result<u64> {
    limits::time_from_host_f64(v, 1e6, field).map_err(Error::of_config)?;
    whole_ms(v, field)
}

/// The largest whole number a JavaScript number holds exactly, 2^53 − 1.
pub const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

/// Converts a whole number of milliseconds in [0, 2^53) that is not a clock
/// reading (a date to format, a fence): the core's count rule.
pub fn whole_ms(v: f64, field: &str) -> Result<u64> {
    count(v, MAX_SAFE_INTEGER, field)
}

/// Reads a `u64` given as a decimal string (JavaScript passes seeds and
/// other 64-bit integers as strings or BigInt converted to strings).
pub fn u64_arg(s: &str, field: &str) -> Result<u64> {
    s.trim().parse::<u64>().map_err(|_| {
        Error::config(ErrorCode::OutOfRange, field, format_args!("must be an integer in [0, 2^64), got {:?}", quote(s)))
    })
}

/// How many characters of a refused input an error message quotes at most
/// (a 10 MB input must not become a 10 MB message).
pub const QUOTE_LIMIT: usize = 64;

/// Returns what an error message quotes of a refused input: its first
/// [`QUOTE_LIMIT`] characters.
pub fn quote(s: &str) -> &str {
    s.char_indices().nth(QUOTE_LIMIT).and_then(|(end, _)| s.get(..end)).unwrap_or(s)
}

thread_local! {
    /// This thread's pool: each JS environment (a Node worker, a wasm instance) is one thread.
    static POOL: RefCell<EntropyPool> = const { RefCell::new(EntropyPool::new()) };
}

/// Fills `out` from this thread's [`EntropyPool`] (the core's), refilled by
/// `fill` (the FFI crate's OS source, named `source` in errors); see
/// [`EntropyPool::take`].
pub fn pooled_entropy<E: std::fmt::Display>(
    out: &mut [u8],
    source: &str,
    fill: impl FnOnce(&mut [u8]) -> std::result::Result<(), E>,
) -> Result<()> {
    POOL.with(|p| p.borrow_mut().take(out, source, fill)).map_err(Error::of_config)
}

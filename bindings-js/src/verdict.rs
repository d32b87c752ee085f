//! Classification verdicts packed into one number (`classify`, and
//! `classifyStatus` memoized per classifier): the JS layer unpacks them with
//! the core's tables it already holds, so no object is built per call.

use crate::error::Result;
use crate::failure::{FailureArgs, ReadFailure, StrList};
use crate::host::ms;
use retrycore::classify::{Classifier, Failure, RetryRule, Verdict, CATEGORY_BITS, MAX_STATUS};
use std::cell::Cell;
use std::sync::atomic::{AtomicU16, Ordering};

thread_local! {
    /// The server delay (ms) of the last verdict [`pack_all`] packed on this
    /// thread (one JS environment); NaN when it had none.
    static SERVER_DELAY: Cell<f64> = const { Cell::new(f64::NAN) };
}

/// Packs a whole verdict: [`pack`] | should_retry (0 absent, 1 false, 2 true)
/// << B+5 | refused << B+7 | has a server delay << B+8; the delay itself is
/// what [`server_delay`] answers next.
pub fn pack_all(v: &Verdict, refused: bool) -> u32 {
    const B: u32 = CATEGORY_BITS;
    let delay = v.advice.delay_ns();
    SERVER_DELAY.with(|d| d.set(delay.map_or(f64::NAN, ms)));
    let should_retry = v.advice.should_retry.map_or(0, |s| 1 + u32::from(s));
    pack(v) | should_retry << (B + 5) | u32::from(refused) << (B + 7) | u32::from(delay.is_some()) << (B + 8)
}

/// The server delay (ms) of the verdict packed last (see [`pack_all`]).
pub fn server_delay() -> f64 {
    SERVER_DELAY.with(Cell::get)
}

/// Classifies a failure with `c` (the built-in tables' `Classifier::classify`,
/// or a policy's `PolicyConfig::classify`, which also applies the policy's
/// `idempotent` to a failure that does not say), packed (see [`pack_all`]).
pub fn classify_packed(c: impl Fn(&Failure<'_>) -> Verdict, f: &ReadFailure) -> u32 {
    f.with(|f| pack_all(&c(f), retrycore::classify::is_refused(f.error_names)))
}

/// Classifies a failure with the built-in tables, packed (see [`pack_all`]).
pub fn classify<L: StrList>(f: FailureArgs<L>) -> Result<u32> {
    let c = Classifier::default();
    Ok(classify_packed(|f| c.classify(f), &f.read()?))
}

/// The rules in their packed order (sent to the JS layer as `info().retryRules`).
pub const RULES: [RetryRule; 3] = [RetryRule::Always, RetryRule::IfIdempotent, RetryRule::Never];

fn rule_index(r: RetryRule) -> u32 {
    RULES.iter().position(|x| *x == r).unwrap_or(0) as u32
}

/// Packs a verdict without server advice into one number, with `B` =
/// [`CATEGORY_BITS`] (sent to the JS layer as `info().categoryBits`):
/// category | rule << B | safe << B+2 | retryable << B+3 | declined << B+4.
pub fn pack(v: &Verdict) -> u32 {
    const B: u32 = CATEGORY_BITS;
    const _: () = assert!(B + 5 <= 15, "a packed verdict must fit a u16 memo slot below u16::MAX");
    v.category.index()
        | rule_index(v.retry) << B
        | u32::from(v.safe) << (B + 2)
        | u32::from(v.retryable) << (B + 3)
        | u32::from(v.server_declined) << (B + 4)
}

/// The slots of a memo: (status 0..=[`MAX_STATUS`], flags 0..=7).
const MEMO_LEN: usize = (MAX_STATUS as usize + 1) * 8;

/// Whether (status, flags) has a slot in a memo: status 0..=999, flags 0..=7.
#[inline(always)]
fn memo_index(status: f64, flags: f64) -> Option<usize> {
    let whole = |x: f64, max: f64| x.fract() == 0.0 && (0.0..=max).contains(&x);
    (whole(status, f64::from(MAX_STATUS)) && whole(flags, 7.0)).then(|| status as usize * 8 + flags as usize)
}

/// Classifies a status alone, packed: flags bit 0 = idempotent, bit 1 =
/// declared not idempotent, bit 2 = idempotency key sent.
pub fn classify_status_with(c: impl Fn(&Failure<'_>) -> Verdict, status: f64, flags: f64) -> Result<u32> {
    let status = crate::failure::status_of(status)?;
    let flags = crate::host::count(flags, 7, "flags")? as u32;
    // Neither bit: not said; bit 0 (idempotent) wins over bit 1 (declared not).
    let idempotent = (flags & 3 != 0).then_some(flags & 3 != 2);
    let f = Failure { status: Some(status), idempotent, idempotency_key_sent: flags & 4 != 0, ..Default::default() };
    Ok(pack(&c(&f)))
}

/// Memoized verdicts of one classifier (or one policy) for a status alone: the core's answers
/// for (status 0..=999, flags 0..=7), computed on first use.
#[derive(Default)]
pub struct StatusCache(Vec<u16>);

impl StatusCache {
    /// Classifies a status with `c` (packed; see [`classify_status_with`]).
    #[inline]
    pub fn get(&mut self, c: impl Fn(&Failure<'_>) -> Verdict, status: f64, flags: f64) -> Result<u32> {
        let Some(i) = memo_index(status, flags) else { return classify_status_with(c, status, flags) };
        if self.0.is_empty() {
            self.0 = vec![u16::MAX; MEMO_LEN];
        }
        let Some(slot) = self.0.get_mut(i) else { return classify_status_with(c, status, flags) };
        if *slot == u16::MAX {
            *slot = classify_status_with(c, status, flags)? as u16;
        }
        Ok(u32::from(*slot))
    }
}

/// The built-in tables' verdicts for a status alone, memoized like
/// [`StatusCache`], plus one (0: not asked yet, so the table is zeroed
/// memory, not 16 KB of data). Relaxed atomics: every thread computes the
/// same verdict, so a race stores the same value twice.
static DEFAULT_STATUS: [AtomicU16; MEMO_LEN] = [const { AtomicU16::new(0) }; MEMO_LEN];

/// Classifies a status with the built-in tables (packed; see [`classify_status_with`]).
#[inline]
pub fn classify_status(status: f64, flags: f64) -> Result<u32> {
    let slot = memo_index(status, flags).and_then(|i| DEFAULT_STATUS.get(i));
    if let Some(v) = slot.map(|s| s.load(Ordering::Relaxed)).filter(|v| *v != 0) {
        return Ok(u32::from(v - 1));
    }
    classify_status_slow(slot, status, flags)
}

#[cold]
#[inline(never)]
fn classify_status_slow(slot: Option<&AtomicU16>, status: f64, flags: f64) -> Result<u32> {
    let c = Classifier::default();
    let r = classify_status_with(|f| c.classify(f), status, flags);
    if let (Some(s), Ok(v)) = (slot, &r) {
        s.store((*v as u16).saturating_add(1), Ordering::Relaxed);
    }
    r
}

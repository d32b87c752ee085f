//! Classification verdicts: as JSON, and packed into one number for the hot
//! path (`classifyStatus`), memoized per classifier.

use crate::error::Result;
use crate::failure::{status_of, FailureArgs, StrList};
use crate::host::ms;
use retrycore::classify::{Classifier, Failure, FailureBuf, RetryRule, Verdict, CATEGORY_BITS, STATUS};
use retrycore::policy::PolicyConfig;
use serde_json::{json, Value};
use std::sync::atomic::{AtomicU16, Ordering};

/// Writes a verdict as the surface returns it.
pub fn verdict_json(v: &Verdict, refused: bool) -> Value {
    json!({
        "category": v.category.code(),
        "retry": v.retry.code(),
        "safe": v.safe,
        "retryable": v.retryable,
        "serverDeclined": v.server_declined,
        "serverDelay": v.advice.delay_ns().map(ms),
        "shouldRetry": v.advice.should_retry,
        "refused": refused,
    })
}

/// What classifies: the built-in tables or a policy's rules, the latter with
/// the policy's `idempotent` for a failure that does not say
/// (`PolicyConfig::classify`, as its sessions do).
pub trait Classify {
    /// Classifies `f`.
    fn verdict(&self, f: &Failure<'_>) -> Verdict;
}

impl Classify for Classifier {
    fn verdict(&self, f: &Failure<'_>) -> Verdict {
        self.classify(f)
    }
}

impl Classify for PolicyConfig {
    fn verdict(&self, f: &Failure<'_>) -> Verdict {
        self.classify(f)
    }
}

/// Classifies a failure with `c` and writes the verdict.
pub fn classify_json<C: Classify>(c: &C, f: &FailureBuf) -> Value {
    f.with(|f| verdict_json(&c.verdict(f), retrycore::classify::is_refused(f.error_names)))
}

/// Classifies a failure with the built-in tables and writes the verdict.
pub fn classify<L: StrList>(f: FailureArgs<L>) -> Result<Value> {
    Ok(classify_json(&Classifier::default(), &f.read()?))
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

/// Whether (status, flags) has a slot in a memo: a status the core takes
/// (`classify::STATUS`, 0..=999: 1000 rows), flags 0..=7.
#[inline(always)]
fn memo_index(status: f64, flags: f64) -> Option<usize> {
    const _: () = assert!(STATUS.0 == 0 && STATUS.1 as usize + 1 == 1000, "the memo tables have 1000 rows");
    let statuses = f64::from(STATUS.0)..=f64::from(STATUS.1);
    if status.fract() == 0.0 && statuses.contains(&status) && flags.fract() == 0.0 && (0.0..=7.0).contains(&flags) {
        Some(status as usize * 8 + flags as usize)
    } else {
        None
    }
}

/// Classifies a status alone, packed: flags bit 0 = idempotent, bit 1 =
/// declared not idempotent, bit 2 = idempotency key sent.
pub fn classify_status_with<C: Classify>(c: &C, status: f64, flags: f64) -> Result<u32> {
    let status = status_of(status)?;
    let flags = crate::host::count(flags, 7, "flags")? as u32;
    let idempotent = if flags & 1 != 0 {
        Some(true)
    } else if flags & 2 != 0 {
        Some(false)
    } else {
        None
    };
    let f = Failure { status: Some(status), idempotent, idempotency_key_sent: flags & 4 != 0, ..Default::default() };
    Ok(pack(&c.verdict(&f)))
}

/// Memoized verdicts of one classifier (or one policy) for a status alone: the core's answers
/// for (status 0..=999, flags 0..=7), computed on first use.
#[derive(Default)]
pub struct StatusCache(Vec<u16>);

impl StatusCache {
    /// Classifies a status with `c` (packed; see [`classify_status_with`]).
    #[inline]
    pub fn get<C: Classify>(&mut self, c: &C, status: f64, flags: f64) -> Result<u32> {
        let Some(i) = memo_index(status, flags) else {
            return classify_status_with(c, status, flags);
        };
        if self.0.is_empty() {
            self.0 = vec![u16::MAX; 1000 * 8];
        }
        match self.0.get(i).copied() {
            Some(u16::MAX) | None => {
                let v = classify_status_with(c, status, flags)?;
                if let Some(slot) = self.0.get_mut(i) {
                    *slot = v as u16;
                }
                Ok(v)
            }
            Some(v) => Ok(u32::from(v)),
        }
    }
}

/// The built-in tables' verdicts for a status alone, memoized like
/// [`StatusCache`], plus one (0: not asked yet, so the table is zeroed
/// memory, not 16 KB of data). Relaxed atomics: every thread computes the
/// same verdict, so a race stores the same value twice.
static DEFAULT_STATUS: [AtomicU16; 8000] = [const { AtomicU16::new(0) }; 8000];

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
    let r = classify_status_with(&Classifier::default(), status, flags);
    if let (Some(s), Ok(v)) = (slot, &r) {
        s.store((*v as u16).saturating_add(1), Ordering::Relaxed);
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packed_verdicts_are_memoized_and_checked() {
        let c = Classifier::default();
        let mut cache = StatusCache::default();
        let direct = classify_status_with(&c, 503.0, 1.0).unwrap();
        assert_eq!(cache.get(&c, 503.0, 1.0), Ok(direct));
        assert_eq!(cache.get(&c, 503.0, 1.0), Ok(direct));
        assert_eq!(classify_status(503.0, 1.0), Ok(direct));
        assert_eq!(classify_status(503.0, 1.0), Ok(direct));
        for (s, f) in [(1000.0, 0.0), (-1.0, 0.0), (503.5, 0.0), (f64::NAN, 0.0)] {
            assert_eq!(cache.get(&c, s, f).unwrap_err().field, "status");
            assert_eq!(classify_status(s, f).unwrap_err().field, "status");
        }
        assert_eq!(classify_status(503.0, 8.0).unwrap_err().field, "flags");
    }
}

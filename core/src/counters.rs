//! Counters per policy: attempts, retries by number, give-ups by reason,
//! successes after a retry, budget refusals and operation durations.
//!
//! They are the usual retry metrics (`retry_attempts_total`,
//! `retry_exhausted_total`, `retry_success_after_retry_total`,
//! `operation_duration_seconds`; docs/sessions.md, "Counters and hooks"),
//! kept as atomics so sessions on many threads update them without a lock.

use crate::session::GiveUpReason;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Retry numbers counted one by one; higher ones share the last slot.
pub const RETRY_SLOTS: usize = 10;

/// Live counters (atomics).
#[derive(Debug, Default)]
pub struct Counters {
    attempts: AtomicU64,
    operations: AtomicU64,
    retries: [AtomicU64; RETRY_SLOTS],
    exhausted: [AtomicU64; GiveUpReason::ALL.len()],
    success_first_try: AtomicU64,
    success_after_retry: AtomicU64,
    rejected: AtomicU64,
    budget_refusals: AtomicU64,
    duration_plain_ns: AtomicU64,
    duration_plain_count: AtomicU64,
    duration_retried_ns: AtomicU64,
    duration_retried_count: AtomicU64,
}

/// A copy of the counters at one moment.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CountersSnapshot {
    /// Attempts made (calls that `before_attempt` allowed).
    pub attempts: u64,
    /// Logical operations started.
    pub operations: u64,
    /// Retries by retry number: index 0 is retry 1; the last slot counts retry ≥ 10.
    pub retries: [u64; RETRY_SLOTS],
    /// Give-ups by reason, in [`GiveUpReason::ALL`] order.
    pub exhausted: [u64; GiveUpReason::ALL.len()],
    /// Operations that succeeded on the first attempt.
    pub success_first_try: u64,
    /// Operations that succeeded after at least one retry.
    pub success_after_retry: u64,
    /// Attempts refused before they were made (breaker open, throttled).
    pub rejected: u64,
    /// Retries refused by a budget.
    pub budget_refusals: u64,
    /// Total and count of durations of operations that were not retried, in ns.
    pub duration_plain: (u64, u64),
    /// Total and count of durations of operations that were retried, in ns.
    pub duration_retried: (u64, u64),
}

impl CountersSnapshot {
    /// Returns the total retries.
    pub fn total_retries(&self) -> u64 {
        self.retries.iter().sum()
    }

    /// Returns the give-ups for a reason.
    pub fn exhausted_for(&self, reason: GiveUpReason) -> u64 {
        self.exhausted[reason as usize]
    }

    /// Writes the counters as a JSON object with the usual metric names.
    pub fn to_json_value(&self) -> crate::json::Value {
        let mut exhausted = crate::json::Map::new();
        for r in GiveUpReason::ALL {
            exhausted.insert(r.code().into(), self.exhausted[r as usize].into());
        }
        json!({
            "retry_attempts_total": self.attempts,
            "operations_total": self.operations,
            "retries_by_number": self.retries.to_vec(),
            "retry_exhausted_total": exhausted,
            "success_first_try_total": self.success_first_try,
            "retry_success_after_retry_total": self.success_after_retry,
            "rejected_total": self.rejected,
            "budget_refusals_total": self.budget_refusals,
            "operation_duration_seconds": {
                "plain": {"sum": self.duration_plain.0 as f64 / 1e9, "count": self.duration_plain.1},
                "retried": {"sum": self.duration_retried.0 as f64 / 1e9, "count": self.duration_retried.1},
            },
        })
    }
}

impl Counters {
    /// Copies the counters.
    pub fn snapshot(&self) -> CountersSnapshot {
        let mut s = CountersSnapshot {
            attempts: self.attempts.load(Relaxed),
            operations: self.operations.load(Relaxed),
            success_first_try: self.success_first_try.load(Relaxed),
            success_after_retry: self.success_after_retry.load(Relaxed),
            rejected: self.rejected.load(Relaxed),
            budget_refusals: self.budget_refusals.load(Relaxed),
            duration_plain: (self.duration_plain_ns.load(Relaxed), self.duration_plain_count.load(Relaxed)),
            duration_retried: (self.duration_retried_ns.load(Relaxed), self.duration_retried_count.load(Relaxed)),
            ..Default::default()
        };
        for (i, r) in self.retries.iter().enumerate() {
            s.retries[i] = r.load(Relaxed);
        }
        for (i, r) in self.exhausted.iter().enumerate() {
            s.exhausted[i] = r.load(Relaxed);
        }
        s
    }

    pub(crate) fn operation(&self) {
        self.operations.fetch_add(1, Relaxed);
    }
    pub(crate) fn attempt(&self) {
        self.attempts.fetch_add(1, Relaxed);
    }
    pub(crate) fn rejected(&self) {
        self.rejected.fetch_add(1, Relaxed);
    }
    pub(crate) fn retry(&self, n: u32) {
        let i = (n as usize).clamp(1, RETRY_SLOTS) - 1;
        self.retries[i].fetch_add(1, Relaxed);
    }
    pub(crate) fn give_up(&self, r: GiveUpReason, duration: u64, retried: bool) {
        self.exhausted[r as usize].fetch_add(1, Relaxed);
        if r == GiveUpReason::BudgetExhausted {
            self.budget_refusals.fetch_add(1, Relaxed);
        }
        self.duration(duration, retried);
    }
    pub(crate) fn success(&self, retried: bool, duration: u64) {
        if retried {
            self.success_after_retry.fetch_add(1, Relaxed);
        } else {
            self.success_first_try.fetch_add(1, Relaxed);
        }
        self.duration(duration, retried);
    }
    /// Counts `n` operations that each made one attempt and succeeded,
    /// taking `duration` ns in all.
    pub(crate) fn first_try_successes(&self, n: u64, duration: u64) {
        self.operations.fetch_add(n, Relaxed);
        self.attempts.fetch_add(n, Relaxed);
        self.success_first_try.fetch_add(n, Relaxed);
        self.duration_plain_ns.fetch_add(duration, Relaxed);
        self.duration_plain_count.fetch_add(n, Relaxed);
    }
    fn duration(&self, d: u64, retried: bool) {
        if retried {
            self.duration_retried_ns.fetch_add(d, Relaxed);
            self.duration_retried_count.fetch_add(1, Relaxed);
        } else {
            self.duration_plain_ns.fetch_add(d, Relaxed);
            self.duration_plain_count.fetch_add(1, Relaxed);
        }
    }
}

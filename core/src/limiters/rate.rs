//! A token bucket replenished at period ends: .NET `TokenBucketRateLimiter`
//! (`tokens_per_period` every `period`, up to `token_limit`), and with
//! `tokens_per_period = token_limit` a fixed window: .NET
//! `FixedWindowRateLimiter` and resilience4j's `AtomicRateLimiter`, whose
//! next cycle holds `min(permissions + limitForPeriod, limitForPeriod)`.
//!
//! A call that must wait reserves its permit now, as resilience4j's
//! `reservePermission` does: the tokens go below zero, each negative token
//! is one waiting call, and a later call waits behind them (oldest first,
//! .NET's default order). Periods count from the limiter's creation.

use super::config::Wait;
use super::{refuse_wait, Answer};
use crate::json::Value;

#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Bucket {
    limit: u64,
    per_period: u64,
    period: u64,
    wait: Wait,
    origin: u64,
    /// Tokens after the last refill; below zero, permits reserved by waiters.
    tokens: i64,
    /// The period index of the last refill.
    tick: u64,
    next_ticket: u64,
}

impl Bucket {
    pub(crate) fn new(limit: u64, per_period: u64, period: u64, wait: Wait, now: u64) -> Bucket {
        Bucket { limit, per_period, period, wait, origin: now, tokens: limit as i64, tick: 0, next_ticket: 1 }
    }

    /// Tokens and period index at `now` (no mutation).
    fn at(&self, now: u64) -> (i64, u64) {
        let tick = now.saturating_sub(self.origin) / self.period;
        if tick <= self.tick {
            return (self.tokens, self.tick);
        }
        let added = (tick - self.tick).saturating_mul(self.per_period).min(i64::MAX as u64) as i64;
        (self.tokens.saturating_add(added).min(self.limit as i64), tick)
    }

    fn refill(&mut self, now: u64) {
        (self.tokens, self.tick) = self.at(now);
    }

    /// Permits reserved by callers still waiting at `now`.
    pub(crate) fn reserved(&self, now: u64) -> u64 {
        (-self.at(now).0).max(0) as u64
    }

    pub(crate) fn acquire(&mut self, now: u64, within: Option<u64>) -> Answer {
        self.refill(now);
        if self.tokens >= 1 {
            self.tokens -= 1;
            return Answer::Proceed;
        }
        // This call needs the token after the `-tokens` already promised.
        let needed = (1 - self.tokens) as u64;
        let periods = needed.div_ceil(self.per_period);
        let ready = self.origin.saturating_add(self.tick.saturating_add(periods).saturating_mul(self.period));
        let wait = ready.saturating_sub(now);
        if let Some(refusal) = refuse_wait(wait, (-self.tokens) as u64, self.wait, within) {
            return refusal;
        }
        self.tokens -= 1;
        let ticket = self.next_ticket;
        self.next_ticket += 1;
        Answer::Delay(wait, ticket)
    }

    /// Returns an abandoned reservation's permit (never above the limit).
    pub(crate) fn refund(&mut self, now: u64) -> bool {
        self.refill(now);
        self.tokens = (self.tokens + 1).min(self.limit as i64);
        true
    }

    pub(crate) fn view(&self, now: u64) -> Value {
        let (tokens, _) = self.at(now);
        json!({ "tokens": tokens.max(0), "queued": (-tokens).max(0) })
    }
}

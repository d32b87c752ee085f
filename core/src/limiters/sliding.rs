//! A sliding window: .NET `SlidingWindowRateLimiter`. The window is cut
//! into `segments`; a permit taken in segment s comes back when s slides
//! out of the window, `segments` segments later. Segments count from 0 on
//! the monotonic clock (`now / width`).
//!
//! A call that must wait reserves its permit in the first segment where the
//! window has room, behind every earlier reservation (oldest first); its
//! ticket is that segment, so a cancelled wait returns the permit there.

use super::config::Wait;
use super::{refuse_wait, Answer};
use crate::json::Value;
use std::collections::VecDeque;

#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Sliding {
    limit: u64,
    width: u64,
    segments: u64,
    wait: Wait,
    /// (segment index, permits taken in it), ascending; future segments
    /// hold reservations.
    used: VecDeque<(u64, u64)>,
}

impl Sliding {
    pub(crate) fn new(limit: u64, width: u64, segments: u64, wait: Wait) -> Sliding {
        Sliding { limit, width, segments, wait, used: VecDeque::new() }
    }

    fn prune(&mut self, seg: u64) {
        while self.used.front().is_some_and(|(s, _)| s.saturating_add(self.segments) <= seg) {
            self.used.pop_front();
        }
    }

    /// Permits taken in the window that ends with segment `t`.
    fn in_window(&self, t: u64) -> u64 {
        self.used.iter().filter(|(s, _)| *s <= t && s.saturating_add(self.segments) > t).map(|(_, n)| n).sum()
    }

    /// Permits reserved in segments after `now`'s.
    pub(crate) fn reserved(&self, now: u64) -> u64 {
        let seg = now / self.width;
        self.used.iter().filter(|(s, _)| *s > seg).map(|(_, n)| n).sum()
    }

    pub(crate) fn acquire(&mut self, now: u64, within: Option<u64>) -> Answer {
        let seg = now / self.width;
        self.prune(seg);
        // Behind the last reservation: taking a permit in segment t only
        // touches windows that end at t or later, and no later segment
        // holds anything, so room in t's window is room everywhere.
        let mut t = self.used.back().map_or(seg, |(s, _)| (*s).max(seg));
        while self.in_window(t) >= self.limit {
            // Move to when the oldest permit in t's window slides out.
            let oldest =
                self.used.iter().find(|(s, n)| *n > 0 && s.saturating_add(self.segments) > t).map_or(t, |(s, _)| *s);
            t = oldest.saturating_add(self.segments).max(t + 1);
        }
        if t > seg {
            let wait = t.saturating_mul(self.width).saturating_sub(now);
            if let Some(refusal) = refuse_wait(wait, self.reserved(now), self.wait, within) {
                return refusal;
            }
            self.take(t);
            return Answer::Delay(wait, t);
        }
        self.take(t);
        Answer::Proceed
    }

    fn take(&mut self, t: u64) {
        match self.used.back_mut() {
            Some((s, n)) if *s == t => *n += 1,
            _ => self.used.push_back((t, 1)),
        }
    }

    /// Returns a reservation's permit to its segment.
    pub(crate) fn refund(&mut self, ticket: u64) -> bool {
        match self.used.iter_mut().find(|(s, n)| *s == ticket && *n > 0) {
            Some((_, n)) => {
                *n -= 1;
                true
            }
            None => false,
        }
    }

    pub(crate) fn view(&self, now: u64) -> Value {
        let seg = now / self.width;
        let taken = self.in_window(seg);
        json!({ "available": self.limit.saturating_sub(taken), "queued": self.reserved(now) })
    }
}

//! A bulkhead: at most `max_concurrent` calls in flight, a bounded queue of
//! waiters served oldest first (resilience4j `SemaphoreBulkhead` with a fair
//! semaphore; .NET `ConcurrencyLimiter` with `QueueProcessingOrder.OldestFirst`).

use super::config::Wait;
use super::Answer;
use std::collections::VecDeque;

#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Bulkhead {
    max_concurrent: u64,
    wait: Wait,
    in_flight: u64,
    /// Waiters' tickets, oldest first.
    queue: VecDeque<u64>,
    next_ticket: u64,
}

impl Bulkhead {
    pub(crate) fn new(max_concurrent: u64, wait: Wait) -> Bulkhead {
        Bulkhead { max_concurrent, wait, in_flight: 0, queue: VecDeque::new(), next_ticket: 1 }
    }

    pub(crate) fn in_flight(&self) -> u64 {
        self.in_flight
    }

    pub(crate) fn queued(&self) -> u64 {
        self.queue.len() as u64
    }

    /// A free slot goes to the caller only when nobody waits for it (a
    /// newcomer never overtakes a waiter); else the caller waits, if the
    /// queue has room and a wait is allowed at all.
    pub(crate) fn acquire(&mut self, within: Option<u64>) -> Answer {
        if self.in_flight < self.max_concurrent && self.queue.is_empty() {
            self.in_flight += 1;
            return Answer::Proceed;
        }
        let max_wait = match (self.wait.max_wait, within) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        if max_wait == Some(0) {
            return Answer::Reject("bulkhead_full", None);
        }
        if self.queued() >= self.wait.queue_limit {
            return Answer::Reject("queue_full", None);
        }
        let ticket = self.next_ticket;
        self.next_ticket += 1;
        self.queue.push_back(ticket);
        Answer::Queued(ticket, max_wait)
    }

    /// Frees a slot; the oldest waiter takes it at once (its ticket is
    /// returned for the host to wake it).
    pub(crate) fn release(&mut self) -> Option<u64> {
        self.in_flight = self.in_flight.saturating_sub(1);
        if self.in_flight < self.max_concurrent {
            if let Some(t) = self.queue.pop_front() {
                self.in_flight += 1;
                return Some(t);
            }
        }
        None
    }

    /// Removes a waiter; false when it no longer waits (granted or unknown).
    pub(crate) fn cancel(&mut self, ticket: u64) -> bool {
        match self.queue.iter().position(|t| *t == ticket) {
            Some(i) => {
                self.queue.remove(i);
                true
            }
            None => false,
        }
    }
}

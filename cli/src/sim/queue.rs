//! The event queue: a calendar queue of `(time, id)` events.
//!
//! Time is cut into buckets of 2^20 ns (about 1 ms) on a ring of 2^16
//! buckets (about 69 s ahead); events further out wait in a binary heap
//! until the ring reaches them. The bucket being processed is a small
//! binary heap, so events that land in it while it is processed keep their
//! order. Pops come out in `(time, id)` order, exactly as from one big
//! binary heap, at a fraction of the cost: the heaps stay small and hot in
//! cache. A processed bucket's vector is released (or kept among a few
//! small spares for reuse), so memory follows the events queued and the
//! steady state allocates nothing per event.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

const SHIFT: u32 = 20;
const RING: usize = 1 << 16;

/// Packs an event: the time in the high 64 bits, the id in the low 32.
fn key(t: u64, id: u32) -> u128 {
    (u128::from(t) << 32) | u128::from(id)
}

fn unkey(k: u128) -> (u64, u32) {
    ((k >> 32) as u64, k as u32)
}

/// A priority queue of `(time, id)` pairs, smallest first; times pushed
/// must not precede the last time popped.
pub struct EventQueue {
    ring: Vec<Vec<u128>>,
    /// The bucket being processed (absolute index: time >> SHIFT).
    cur: u64,
    now: BinaryHeap<Reverse<u128>>,
    far: BinaryHeap<Reverse<u128>>,
    /// Events in the ring (not counting `now` and `far`).
    in_ring: usize,
    /// Emptied bucket vectors kept for reuse (a few, of bounded capacity).
    spare: Vec<Vec<u128>>,
}

/// Emptied vectors kept at most, and the largest capacity kept.
const SPARE: usize = 64;
const SPARE_CAPACITY: usize = 1024;

impl EventQueue {
    /// Creates an empty queue starting at time 0.
    pub fn new() -> EventQueue {
        EventQueue {
            ring: (0..RING).map(|_| Vec::new()).collect(),
            cur: 0,
            now: BinaryHeap::new(),
            far: BinaryHeap::new(),
            in_ring: 0,
            spare: Vec::new(),
        }
    }

    /// Adds an event.
    pub fn push(&mut self, t: u64, id: u32) {
        let b = t >> SHIFT;
        if b <= self.cur {
            self.now.push(Reverse(key(t, id)));
        } else if b < self.cur + RING as u64 {
            let bucket = &mut self.ring[(b as usize) & (RING - 1)];
            if bucket.capacity() == 0 {
                if let Some(v) = self.spare.pop() {
                    *bucket = v;
                }
            }
            bucket.push(key(t, id));
            self.in_ring += 1;
        } else {
            self.far.push(Reverse(key(t, id)));
        }
    }

    /// Takes the earliest event.
    pub fn pop(&mut self) -> Option<(u64, u32)> {
        loop {
            if let Some(Reverse(k)) = self.now.pop() {
                return Some(unkey(k));
            }
            if self.in_ring == 0 {
                // Jump straight to the first far event's bucket.
                let Reverse(k) = *self.far.peek()?;
                self.cur = self.cur.max(unkey(k).0 >> SHIFT) - 1;
            }
            self.cur += 1;
            // Take the bucket's vector rather than draining it, so an idle
            // ring holds no memory: the queue's size follows the events in it.
            let mut bucket = std::mem::take(&mut self.ring[(self.cur as usize) & (RING - 1)]);
            self.in_ring -= bucket.len();
            self.now.extend(bucket.drain(..).map(Reverse));
            if bucket.capacity() <= SPARE_CAPACITY && self.spare.len() < SPARE {
                self.spare.push(bucket);
            }
            // Far events that the ring now reaches.
            let limit = self.cur + RING as u64;
            while let Some(&Reverse(k)) = self.far.peek() {
                let b = unkey(k).0 >> SHIFT;
                if b >= limit {
                    break;
                }
                self.far.pop();
                if b <= self.cur {
                    self.now.push(Reverse(k));
                } else {
                    self.ring[(b as usize) & (RING - 1)].push(k);
                    self.in_ring += 1;
                }
            }
        }
    }

    /// Removes and returns every event left, in no particular order.
    pub fn drain_all(&mut self) -> Vec<(u64, u32)> {
        let mut out: Vec<(u64, u32)> = self.now.drain().map(|Reverse(k)| unkey(k)).collect();
        for b in &mut self.ring {
            out.extend(b.drain(..).map(unkey));
        }
        out.extend(self.far.drain().map(|Reverse(k)| unkey(k)));
        self.in_ring = 0;
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use retrycore::rng::{Rng, Xoshiro256pp};

    #[test]
    fn pops_in_the_order_of_a_binary_heap() {
        let mut rng = Xoshiro256pp::seed_from_u64(7);
        let mut q = EventQueue::new();
        let mut reference = BinaryHeap::new();
        let mut now = 0u64;
        let mut id = 0u32;
        let mut popped = 0;
        for round in 0..200_000u32 {
            if round % 3 != 2 || reference.is_empty() {
                // Mostly near, sometimes in the same bucket, sometimes far beyond the ring.
                let r = rng.next_u64();
                let dt = match r % 10 {
                    0 => 0,
                    1 => r % 1000,
                    2 => (r >> 8) % (200u64 << 30),
                    _ => (r >> 8) % 30_000_000_000,
                };
                id = id.wrapping_add(1);
                q.push(now + dt, id);
                reference.push(Reverse((now + dt, id)));
            } else {
                let Reverse(want) = reference.pop().unwrap();
                let got = q.pop().unwrap();
                assert_eq!(got, want);
                now = got.0;
                popped += 1;
            }
        }
        while let Some(Reverse(want)) = reference.pop() {
            assert_eq!(q.pop().unwrap(), want);
        }
        assert_eq!(q.pop(), None);
        assert!(popped > 1000);
    }

    #[test]
    fn drains_what_is_left() {
        let mut q = EventQueue::new();
        for (i, t) in [5u64, 1 << 40, 3 << 20, 0].into_iter().enumerate() {
            q.push(t, i as u32);
        }
        assert_eq!(q.pop(), Some((0, 3)));
        let mut left = q.drain_all();
        left.sort_unstable();
        assert_eq!(left, vec![(5, 0), (3 << 20, 2), (1 << 40, 1)]);
        assert_eq!(q.pop(), None);
    }
}

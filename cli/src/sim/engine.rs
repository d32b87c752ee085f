//! The discrete-event engine: one run of one policy entry over a scenario.
//!
//! Every retry decision is the core's: each layer of each user request is a
//! [`RetrySession`] of a [`RetryPolicy`] built from the entry's policy
//! document, driven with `before_attempt_ns`, `on_failure_ns` and
//! `on_success_ns`. The engine only moves time, models the server, and
//! carries outcomes between layers.
//!
//! Events sit in a calendar queue of `(time, id)` pairs: `id` is a client (its
//! next request) or a request slot with its one pending wake-up (a server
//! answer, the end of a backoff, or an outer layer's timeout). A request
//! has exactly one event in the heap at a time, so nothing is ever
//! cancelled in the queue; `(time, id)` is unique, so the order is total and
//! the run is reproducible. Requests and sessions live in slabs whose slots
//! are reused, so memory follows the requests in flight, not the run's
//! length; the steady state allocates only what the core allocates per
//! session (its idempotency key).

use super::queue::EventQueue;
use super::scenario::{Entry, OutageMode, Scenario};
use super::stats::{Histogram, RunResult};
use retrycore::classify::Failure;
use retrycore::duration::from_std;
use retrycore::limiters::{AttemptKind, Decision as LimiterDecision, Limiter};
use retrycore::policy::RetryPolicy;
use retrycore::rng::{Rng, SplitMix64};
use retrycore::session::{Decision, Gate, GiveUpReason, RejectReason, RetrySession, SessionOptions};

/// Bit of an event id that marks a request wake-up (else: a client arrival).
const WAKE: u32 = 1 << 31;
/// Events between two progress reports.
const PROGRESS_EVERY: u64 = 1 << 14;

/// Why a call failed, as a caller sees it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Fail {
    /// HTTP 503 without Retry-After (shed load, a dead upstream, or an inner
    /// layer's give-up without retrycore's marker).
    Status503,
    /// The caller's timeout fired (`ETIMEDOUT`).
    Timeout,
    /// The connection was reset (`ECONNRESET`): the server restarted.
    Reset,
    /// The connection was refused (`ECONNREFUSED`).
    Refused,
    /// An inner retrycore layer gave up and marked it: `x-retry-exhausted: 1`.
    Exhausted,
}

/// What a call or an attempt ended with.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Outcome {
    Ok,
    Fail(Fail),
}

/// What a request waits for.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Pending {
    /// The server's answer to the innermost layer's call.
    Server(Outcome),
    /// The end of layer `d`'s backoff: its next attempt.
    Retry(u8),
    /// Layer `d`'s attempt timed out.
    Timeout(u8),
}

/// A user request in flight; its layers are `layers[slot * L .. slot * L + L]`.
#[derive(Copy, Clone, Debug)]
struct Req {
    start: u64,
    client: u32,
    /// Live sessions: layers `0..depth`.
    depth: u8,
    pending: Pending,
}

/// One layer of a request in flight (kept next to its siblings for locality).
#[derive(Debug)]
struct Layer {
    session: Option<RetrySession>,
    /// When the layer's attempt in flight times out (`u64::MAX`: never).
    deadline: u64,
    /// The last failure the layer saw (what a layer without the marker passes up).
    last: Fail,
}

/// The server: a FIFO queue served at `capacity` calls per second, shedding
/// with 503 beyond `queue` of waiting, down during the outage.
struct Server {
    free_at: u64,
    service: u64,
    reject: u64,
    latency: u64,
    queue: u64,
    outage: Option<super::scenario::Outage>,
    served: u64,
    late: u64,
    shed: u64,
    down: u64,
}

impl Server {
    fn new(s: &Scenario) -> Server {
        Server {
            free_at: 0,
            service: ((1e9 / s.capacity).round() as u64).max(1),
            reject: ((1e9 / s.capacity) * s.reject_cost).round() as u64,
            latency: s.latency,
            queue: s.queue,
            outage: s.outage,
            served: 0,
            late: 0,
            shed: 0,
            down: 0,
        }
    }

    /// Takes a call at `t` whose caller waits at most `timeout`; returns when
    /// the caller learns the outcome, and the outcome.
    fn call(&mut self, t: u64, timeout: u64) -> (u64, Outcome) {
        let gives_up = t.saturating_add(timeout);
        if let Some(o) = self.outage {
            if t >= o.start && t < o.end {
                self.down += 1;
                return match o.mode {
                    OutageMode::Hang if gives_up < o.end => (gives_up, Outcome::Fail(Fail::Timeout)),
                    OutageMode::Hang => (o.end, Outcome::Fail(Fail::Reset)),
                    OutageMode::Error => (t + self.latency, Outcome::Fail(Fail::Status503)),
                    OutageMode::Refuse => (t + self.latency, Outcome::Fail(Fail::Refused)),
                };
            }
        }
        let start = self.free_at.max(t);
        if start - t > self.queue {
            // Shedding is not free: reading the request and writing the 503
            // takes a share of a call's service time.
            self.free_at = start + self.reject;
            self.shed += 1;
            return (t + self.latency, Outcome::Fail(Fail::Status503));
        }
        let done = start + self.service + self.latency;
        if let Some(o) = self.outage {
            if t < o.start && done > o.start {
                // The server goes down with this call queued or in flight.
                self.down += 1;
                return match o.mode {
                    OutageMode::Hang if gives_up < o.end => (gives_up, Outcome::Fail(Fail::Timeout)),
                    OutageMode::Hang => (o.end, Outcome::Fail(Fail::Reset)),
                    _ if gives_up <= o.start => (gives_up, Outcome::Fail(Fail::Timeout)),
                    _ => (o.start, Outcome::Fail(Fail::Reset)),
                };
            }
        }
        self.free_at = start + self.service;
        if done > gives_up {
            // Served, but after the caller gave up: wasted work.
            self.late += 1;
            (gives_up, Outcome::Fail(Fail::Timeout))
        } else {
            self.served += 1;
            (done, Outcome::Ok)
        }
    }
}

/// Mixes bits (SplitMix64's finaliser).
pub fn mix(x: u64) -> u64 {
    SplitMix64::new(x).next_u64()
}

/// A uniform draw in [0, 1) from a hash of its coordinates.
fn unit(seed: u64, client: u32, t: u64) -> f64 {
    let h = mix(seed ^ mix(u64::from(client).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ t.rotate_left(29)));
    (h >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

const KEY: &str = "sim";

/// One run: one entry over the scenario.
pub struct Run<'a> {
    scn: &'a Scenario,
    layers: usize,
    marker: bool,
    /// `[layer][process]`.
    policies: Vec<Vec<RetryPolicy>>,
    /// One limiter per client process, asked before each call to the server.
    limiters: Vec<Limiter>,
    limiter_rejections: u64,
    heap: EventQueue,
    reqs: Vec<Req>,
    /// `layers` entries per request slot.
    slots: Vec<Layer>,
    free_reqs: Vec<u32>,
    session_count: u64,
    server: Server,
    horizon: u64,
    // Results.
    calls: Vec<u32>,
    answered: Vec<u32>,
    succeeded: Vec<u32>,
    latency: Histogram,
    user_requests: u64,
    user_ok: u64,
    events: u64,
    peak_in_flight: usize,
    last_call: u64,
}

fn failure<'a>(f: Fail, method: &'a str) -> Failure<'a> {
    const TIMEOUT: &[&str] = &["ETIMEDOUT"];
    const RESET: &[&str] = &["ECONNRESET"];
    const REFUSED: &[&str] = &["ECONNREFUSED"];
    const MARKER: &[(&str, &str)] = &[(retrycore::classify::RETRY_EXHAUSTED_HEADER, "1")];
    let base = Failure { method: Some(method), ..Default::default() };
    match f {
        Fail::Status503 => Failure { status: Some(503), ..base },
        Fail::Timeout => Failure { error_names: TIMEOUT, ..base },
        Fail::Reset => Failure { error_names: RESET, ..base },
        Fail::Refused => Failure { error_names: REFUSED, ..base },
        Fail::Exhausted => Failure { status: Some(503), headers: MARKER, ..base },
    }
}

impl<'a> Run<'a> {
    /// Prepares a run: one policy object per layer per client process.
    pub fn new(scn: &'a Scenario, entry: &Entry) -> Result<Run<'a>, String> {
        let mut policies = Vec::with_capacity(entry.layers.len());
        for (l, config) in entry.layers.iter().enumerate() {
            let mut per = Vec::with_capacity(scn.processes as usize);
            for p in 0..scn.processes {
                let entropy = mix(scn.seed ^ mix(((l as u64) << 32) | u64::from(p)));
                per.push(RetryPolicy::new(config.clone(), Some(entropy)).map_err(|e| e.to_string())?);
            }
            policies.push(per);
        }
        let horizon = scn.duration.saturating_add(scn.drain);
        let steps = (horizon / scn.step + 1) as usize;
        let limiters = match &entry.limiter {
            Some(c) => (0..scn.processes).map(|_| Limiter::new(c.clone(), 0)).collect(),
            None => Vec::new(),
        };
        Ok(Run {
            scn,
            layers: entry.layers.len(),
            marker: entry.marker,
            policies,
            limiters,
            limiter_rejections: 0,
            heap: EventQueue::new(),
            reqs: Vec::new(),
            free_reqs: Vec::new(),
            slots: Vec::new(),
            session_count: 0,
            server: Server::new(scn),
            horizon,
            calls: vec![0; steps],
            answered: vec![0; steps],
            succeeded: vec![0; steps],
            latency: Histogram::default(),
            user_requests: 0,
            user_ok: 0,
            events: 0,
            peak_in_flight: 0,
            last_call: 0,
        })
    }

    /// Runs to the end; `progress` receives the simulated time now and then.
    pub fn run(mut self, progress: &mut dyn FnMut(u64)) -> RunResult {
        let scn = self.scn;
        let (lo, hi) = self.gap_range();
        for c in 0..scn.clients {
            let u = unit(scn.seed, c, u64::MAX);
            let t0 = match scn.start_spread {
                Some(spread) => (u * spread as f64) as u64,
                None => {
                    // Steady state of a renewal process: the gap in progress is
                    // length-biased (density ∝ x on [lo, hi]); the client is at a
                    // uniform point of it.
                    let v = unit(scn.seed, c, u64::MAX - 1);
                    let gap = (lo * lo + v * (hi * hi - lo * lo)).sqrt();
                    (u * gap) as u64
                }
            };
            if t0 < scn.duration {
                self.heap.push(t0, c);
            }
        }
        while let Some((t, id)) = self.heap.pop() {
            if t > self.horizon {
                self.heap.push(t, id);
                break;
            }
            self.events += 1;
            if self.events & (PROGRESS_EVERY - 1) == 0 {
                progress(t);
            }
            if id & WAKE != 0 {
                self.wake(id & !WAKE, t);
            } else {
                self.arrive(id, t);
            }
        }
        progress(self.horizon);
        self.finish()
    }

    /// The bounds of the gap between two requests of a client, in ns.
    fn gap_range(&self) -> (f64, f64) {
        let (i, j) = (self.scn.interval as f64, self.scn.interval_jitter);
        (i * (1.0 - j), i * (1.0 + j))
    }

    fn arrive(&mut self, client: u32, t: u64) {
        let scn = self.scn;
        let (lo, hi) = self.gap_range();
        let gap = (lo + (hi - lo) * unit(scn.seed, client, t)) as u64;
        let next = t.saturating_add(gap.max(1));
        if next < scn.duration {
            self.heap.push(next, client);
        }
        self.user_requests += 1;
        let slot = match self.free_reqs.pop() {
            Some(s) => s,
            None => {
                self.reqs.push(Req { start: 0, client: 0, depth: 0, pending: Pending::Retry(0) });
                for _ in 0..self.layers {
                    self.slots.push(Layer { session: None, deadline: u64::MAX, last: Fail::Status503 });
                }
                (self.reqs.len() - 1) as u32
            }
        };
        let in_flight = self.reqs.len() - self.free_reqs.len();
        self.peak_in_flight = self.peak_in_flight.max(in_flight);
        let r = &mut self.reqs[slot as usize];
        r.start = t;
        r.client = client;
        r.depth = 0;
        self.open_session(slot, 0);
        self.attempt(slot, 0, t);
    }

    /// Starts layer `d`'s session for the request.
    fn open_session(&mut self, slot: u32, d: usize) {
        let client = self.reqs[slot as usize].client;
        let process = (client % self.scn.processes) as usize;
        self.session_count += 1;
        let seed = mix(self.scn.seed ^ mix(self.session_count));
        let opts = SessionOptions { key: Some(KEY.to_owned()), seed: Some(seed), ..Default::default() };
        let session = self.policies[d][process].session(opts).expect("a constant valid key and an explicit seed");
        self.layer(slot, d).session = Some(session);
        self.reqs[slot as usize].depth = (d + 1) as u8;
    }

    fn close_session(&mut self, slot: u32, d: usize) {
        self.layer(slot, d).session = None;
    }

    fn layer(&mut self, slot: u32, d: usize) -> &mut Layer {
        &mut self.slots[slot as usize * self.layers + d]
    }

    fn session(&mut self, slot: u32, d: usize) -> &mut RetrySession {
        self.layer(slot, d).session.as_mut().expect("a live session")
    }

    fn step(&self, t: u64) -> usize {
        ((t / self.scn.step) as usize).min(self.calls.len() - 1)
    }

    /// Asks the client process's limiter before a call to the server
    /// (the innermost layer): a rejection ends the request like a local
    /// refusal; a wait the simulation does not model (a delay or a queue)
    /// is a rejection too, so a row's limiter should not queue.
    fn limit(&mut self, slot: u32, d: usize, t: u64) -> Option<Gate> {
        if self.limiters.is_empty() || d + 1 != self.layers {
            return None;
        }
        let process = (self.reqs[slot as usize].client % self.scn.processes) as usize;
        let kind = if self.session(slot, d).attempts() == 0 { AttemptKind::Initial } else { AttemptKind::Retry };
        match self.limiters[process].acquire(t, kind, Some(0)) {
            LimiterDecision::Proceed => None,
            _ => {
                self.limiter_rejections += 1;
                Some(Gate::Reject { reason: RejectReason::ConcurrencyLimited, retry_after: None, budget: None })
            }
        }
    }

    /// Starts layer `d`'s next attempt at `t` and descends to the server.
    fn attempt(&mut self, slot: u32, mut d: usize, t: u64) {
        loop {
            let gate = match self.limit(slot, d, t) {
                Some(refused) => refused,
                None => self.session(slot, d).before_attempt_ns(t).expect("the session is ready"),
            };
            match gate {
                Gate::Proceed { timeout, .. } => {
                    let timeout = timeout.map(from_std);
                    if d + 1 == self.layers {
                        let to = timeout.unwrap_or(self.scn.timeout).max(1);
                        let (at, outcome) = self.server.call(t, to);
                        let step = self.step(t);
                        self.calls[step] += 1;
                        self.last_call = self.last_call.max(t);
                        self.layer(slot, d).deadline = t.saturating_add(to);
                        self.reqs[slot as usize].depth = (d + 1) as u8;
                        self.schedule(slot, Pending::Server(outcome), at);
                        return;
                    }
                    self.layer(slot, d).deadline = timeout.map_or(u64::MAX, |x| t.saturating_add(x));
                    d += 1;
                    self.open_session(slot, d);
                }
                Gate::Reject { .. } => {
                    // Attempt 1 refused locally (breaker open, throttled), or
                    // the session gave up before a later attempt.
                    let last = self.layer(slot, d).last;
                    let made = self.session(slot, d).attempts() > 0;
                    self.close_session(slot, d);
                    self.reqs[slot as usize].depth = d as u8;
                    let up = if self.marker {
                        Fail::Exhausted
                    } else if made {
                        last
                    } else {
                        Fail::Status503
                    };
                    if d == 0 {
                        self.done(slot, t, false);
                    } else {
                        self.complete(slot, d - 1, Outcome::Fail(up), t);
                    }
                    return;
                }
            }
        }
    }

    /// Layer `d`'s attempt in flight ended at `t` with `outcome`: the
    /// session decides, and a give-up or success travels up.
    fn complete(&mut self, slot: u32, mut d: usize, mut outcome: Outcome, t: u64) {
        loop {
            self.reqs[slot as usize].depth = (d + 1) as u8;
            match outcome {
                Outcome::Ok => {
                    self.session(slot, d).on_success_ns(t, None).expect("an attempt in flight");
                    self.close_session(slot, d);
                    if d == 0 {
                        self.done(slot, t, true);
                        return;
                    }
                }
                Outcome::Fail(f) => {
                    let method = self.scn.method.as_str();
                    let layer = &mut self.slots[slot as usize * self.layers + d];
                    layer.last = f;
                    let session = layer.session.as_mut().expect("a live session");
                    let decision = session.on_failure_ns(t, &failure(f, method)).expect("an attempt in flight");
                    match decision {
                        Decision::Retry { delay, .. } => {
                            self.schedule(slot, Pending::Retry(d as u8), t.saturating_add(from_std(delay)));
                            return;
                        }
                        Decision::GiveUp { exhausted, .. } => {
                            self.close_session(slot, d);
                            let up = if self.marker && exhausted { Fail::Exhausted } else { f };
                            if d == 0 {
                                self.done(slot, t, false);
                                return;
                            }
                            outcome = Outcome::Fail(up);
                        }
                    }
                }
            }
            d -= 1;
        }
    }

    /// Puts the request's one pending wake-up in the heap, unless an outer
    /// layer's attempt times out first.
    fn schedule(&mut self, slot: u32, pending: Pending, at: u64) {
        let r = &mut self.reqs[slot as usize];
        // Layers whose attempt is in flight and not already bounded by `at`.
        let outer = match pending {
            Pending::Server(_) => r.depth as usize - 1,
            Pending::Retry(d) | Pending::Timeout(d) => d as usize,
        };
        let mut at = at;
        let mut pending = pending;
        let base = slot as usize * self.layers;
        for (j, l) in self.slots[base..base + outer].iter().enumerate() {
            if l.deadline < at {
                at = l.deadline;
                pending = Pending::Timeout(j as u8);
            }
        }
        r.pending = pending;
        self.heap.push(at, slot | WAKE);
    }

    fn wake(&mut self, slot: u32, t: u64) {
        let (pending, depth) = {
            let r = &self.reqs[slot as usize];
            (r.pending, r.depth as usize)
        };
        match pending {
            Pending::Server(o) => self.complete(slot, depth - 1, o, t),
            Pending::Retry(d) => self.attempt(slot, d as usize, t),
            Pending::Timeout(j) => {
                let j = j as usize;
                for d in (j + 1..depth).rev() {
                    self.session(slot, d).cancel_ns(t);
                    self.close_session(slot, d);
                }
                self.complete(slot, j, Outcome::Fail(Fail::Timeout), t);
            }
        }
    }

    fn done(&mut self, slot: u32, t: u64, ok: bool) {
        let start = self.reqs[slot as usize].start;
        self.latency.record(t - start);
        let step = self.step(t);
        self.answered[step] += 1;
        if ok {
            self.succeeded[step] += 1;
            self.user_ok += 1;
        }
        self.reqs[slot as usize].depth = 0;
        self.free_reqs.push(slot);
    }

    fn finish(mut self) -> RunResult {
        // Requests still in flight at the horizon were never answered.
        let mut unanswered = 0u64;
        let mut live = vec![false; self.reqs.len()];
        for (_, id) in self.heap.drain_all() {
            if id & WAKE != 0 {
                live[(id & !WAKE) as usize] = true;
            }
        }
        for (i, is_live) in live.iter().enumerate() {
            if *is_live {
                unanswered += 1;
                let r = &self.reqs[i];
                self.latency.record(self.horizon - r.start);
            }
        }
        let mut give_ups = [0u64; GiveUpReason::ALL.len()];
        let (mut rejected, mut budget_refusals, mut attempts, mut retries) = (0u64, 0u64, 0u64, 0u64);
        for per in &self.policies {
            for p in per {
                let c = p.counters().snapshot();
                for (i, g) in give_ups.iter_mut().enumerate() {
                    *g += c.exhausted[i];
                }
                rejected += c.rejected;
                budget_refusals += c.budget_refusals;
                attempts += c.attempts;
                retries += c.total_retries();
            }
        }
        let mut breaker_rejections = 0u64;
        let mut breaker_transitions = 0u64;
        for per in &self.policies {
            for p in per {
                if let Some(b) = p.breaker() {
                    let b = b.lock().unwrap_or_else(|e| e.into_inner());
                    breaker_rejections += b.rejections();
                    breaker_transitions += b.transitions();
                }
            }
        }
        let horizon_step = self.step(self.last_call.max(self.scn.duration)) + 1;
        self.calls.truncate(horizon_step);
        RunResult {
            layers: self.layers,
            marker: self.marker,
            calls: self.calls,
            answered: self.answered,
            succeeded: self.succeeded,
            latency: self.latency,
            user_requests: self.user_requests,
            user_ok: self.user_ok,
            unanswered,
            served: self.server.served,
            late: self.server.late,
            shed: self.server.shed,
            down: self.server.down,
            events: self.events,
            peak_in_flight: self.peak_in_flight,
            give_ups,
            rejected: rejected + self.limiter_rejections,
            budget_refusals,
            attempts,
            retries,
            breaker_rejections,
            breaker_transitions,
        }
    }
}

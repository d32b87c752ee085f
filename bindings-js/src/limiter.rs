//! Limiters as the surface drives them: the core's `Limiter` under a lock;
//! decisions come back as the core's JSON in milliseconds.

use crate::error::{Error, Result};
use crate::host::{count, now_ns, Host};
use crate::options::read_object;
use retrycore::json::Value;
use retrycore::limiters::{AttemptKind, Completion, Limiter as CoreLimiter, LimiterConfig, Signal};
use std::marker::PhantomData;
use std::sync::{Mutex, MutexGuard};

/// JavaScript's unit: milliseconds.
const MS: f64 = 1e6;

/// Reads an optional duration in milliseconds (null: none).
fn opt_ms(v: Option<f64>, field: &str) -> Result<Option<u64>> {
    v.map(|v| retrycore::duration::from_millis_f64(v, field).map_err(Error::of_config)).transpose()
}

/// A limiter as the surface drives it.
pub struct Limiter<H> {
    l: Mutex<CoreLimiter>,
    host: PhantomData<fn() -> H>,
}

impl<H: Host> Limiter<H> {
    /// Creates a limiter from a limiter object (JSON text; durations as strings, or ms numbers when `ms_numbers`).
    pub fn new(text: &str, ms_numbers: bool, now: f64) -> Result<Self> {
        let c = read_object(text, ms_numbers, LimiterConfig::from_typed_value, LimiterConfig::from_json_value)?;
        let now = now_ns::<H>(now, "now")?;
        Ok(Limiter { l: Mutex::new(CoreLimiter::new(c, now)), host: PhantomData })
    }

    fn lock(&self) -> MutexGuard<'_, CoreLimiter> {
        self.l.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Returns the limiter's name.
    pub fn name(&self) -> String {
        self.lock().name().to_owned()
    }

    /// Returns the limiter's kind.
    pub fn kind(&self) -> &'static str {
        self.lock().config().kind.code()
    }

    /// Returns the calls in flight.
    pub fn in_flight(&self) -> f64 {
        self.lock().in_flight() as f64
    }

    /// Asks whether an attempt may go: the decision's JSON (durations in ms).
    pub fn acquire(&self, now: f64, attempt: Option<&str>, within: Option<f64>) -> Result<Value> {
        let now = now_ns::<H>(now, "now")?;
        let kind = AttemptKind::from_code(attempt.unwrap_or("initial"), "attempt").map_err(Error::of_config)?;
        let within = opt_ms(within, "within")?;
        Ok(self.lock().acquire(now, kind, within).to_json(MS))
    }

    /// Reports the end of a call: the ticket of the waiter that now holds the slot, or null.
    pub fn release(
        &self,
        now: f64,
        rtt: Option<f64>,
        signal: Option<&str>,
        category: Option<&str>,
    ) -> Result<Option<f64>> {
        let now = now_ns::<H>(now, "now")?;
        let rtt = opt_ms(rtt, "rtt")?.unwrap_or(0);
        let signal = Signal::read(signal, category).map_err(Error::of_config)?;
        Ok(self.lock().release(now, Completion { rtt, signal }).map(|t| t as f64))
    }

    /// Abandons a delay or a queued wait by its ticket.
    pub fn cancel(&self, ticket: f64, now: f64) -> Result<Value> {
        let ticket = count(ticket, 1 << 53, "ticket")?;
        let now = now_ns::<H>(now, "now")?;
        Ok(self.lock().cancel(now, ticket).to_json(MS))
    }

    /// Returns the observable state.
    pub fn state(&self, now: f64) -> Result<Value> {
        let now = now_ns::<H>(now, "now")?;
        Ok(self.lock().state(now))
    }
}

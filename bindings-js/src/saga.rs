//! Compensation runs and dead-letter replays as the surface drives them: the
//! core plans and decides; `lib/saga.ts` runs the callables and reports
//! back. Values cross as the core's JSON.

use crate::error::{Error, Result};
use crate::host::{wall_ms, Host};
use crate::options::parse;
use retrycore::compensation::{CompensationPlan, CompensationRun as CoreRun, Outcome, Planned};
use retrycore::dead_letter_replay::Replay;
use retrycore::idempotency::DeadLetter;
use retrycore::json::Value;
use std::marker::PhantomData;

/// A saga's compensation run as the surface drives it.
pub struct CompensationRun<H> {
    r: CoreRun,
    host: PhantomData<fn() -> H>,
}

impl<H: Host> CompensationRun<H> {
    /// Plans the run of a saga (JSON text).
    pub fn new(saga: &str) -> Result<Self> {
        let plan = CompensationPlan::from_json_value(&parse(saga)?).map_err(Error::of_config)?;
        Ok(CompensationRun { r: CoreRun::new(plan), host: PhantomData })
    }

    /// Returns the next compensation to run, or null.
    pub fn next(&self) -> Value {
        self.r.next().map_or(Value::Null, Planned::to_json_value)
    }

    /// Records the outcome (JSON text) of the compensation `next` gave: the dead letter it became, or null.
    pub fn record(&mut self, outcome: &str) -> Result<Value> {
        let outcome = Outcome::from_json_value(&parse(outcome)?).map_err(Error::of_config)?;
        let letter = self.r.record(outcome).map_err(Error::of_config)?;
        Ok(letter.map_or(Value::Null, DeadLetter::to_value))
    }

    /// Returns the result: every step's outcome and the dead letters.
    pub fn result(&self) -> Value {
        self.r.result()
    }
}

/// A dead-letter replay as the surface drives it.
pub struct DeadLetterReplay<H> {
    r: Replay,
    host: PhantomData<fn() -> H>,
}

impl<H: Host> DeadLetterReplay<H> {
    /// Plans a replay of letters (JSON text, a list) with options (JSON text) at `wall_now_ms`.
    pub fn new(letters: &str, options: &str, wall_now_ms: f64) -> Result<Self> {
        let now = wall_ms(wall_now_ms, "wallNowMs")?;
        let r = Replay::from_json_values(&parse(letters)?, &parse(options)?, now).map_err(Error::of_config)?;
        Ok(DeadLetterReplay { r, host: PhantomData })
    }

    /// Returns the letters grouped by kind of reason and error class.
    pub fn groups(&self) -> Value {
        self.r.groups()
    }

    /// Returns the next batch's letter ids (empty when the replay is over).
    pub fn next_batch(&mut self) -> Result<Value> {
        self.r.next_batch().map(Value::from).map_err(Error::of_config)
    }

    /// Records a letter's replay.
    pub fn record(&mut self, msg_id: &str, ok: bool, wall_now_ms: f64) -> Result<()> {
        let now = wall_ms(wall_now_ms, "wallNowMs")?;
        self.r.record(msg_id, ok, now).map_err(Error::of_config)
    }

    /// Returns the letters, with their statuses as they now stand.
    pub fn letters(&self) -> Value {
        self.r.letters_json()
    }

    /// Returns the audit record.
    pub fn audit(&self) -> Value {
        self.r.audit()
    }
}

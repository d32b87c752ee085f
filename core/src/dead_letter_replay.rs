//! Replaying dead letters: which letters go back, in what batches, and the
//! audit record of who replayed what and when.
//!
//! Replaying a dead-letter queue all at once clogs the target again for
//! the reason it failed the first time; replaying a data error fails again
//! the same way; replaying into a target that does not deduplicate books
//! twice, which is worse than not replaying (docs/dead-letters.md). So the
//! planner
//! - groups letters by kind of reason (`system`: the target failed or was
//!   unreachable, a replay may succeed; `data`: the message itself was
//!   refused; `unknown`) and error class;
//! - refuses, with the reason, every letter that is not pending, whose
//!   target is not idempotent, or (unless asked) whose error is a data error;
//! - hands the rest out in batches that start small and grow while the
//!   batch's failure rate stays at or under a threshold, and stops when it
//!   does not;
//! - writes an audit record with its own versioned schema
//!   (`schema/dead-letter-replay.schema.json`), and marks each replayed
//!   letter `replayed`.
//!
//! Pure: the host replays each letter and reports the outcome; the wall
//! clock comes in as `wall_now_ms`.

use crate::classify::{self, Category, RetryRule};
use crate::doc::Obj;
use crate::idempotency::{format_rfc3339_ms, DeadLetter, DeadLetterStatus};
use crate::json::Value;
use crate::{Error, ErrorCode, Result};

/// The version of the audit record's schema.
pub const AUDIT_VERSION: u32 = 1;

/// The most letters one replay takes.
pub const MAX_LETTERS: usize = 100_000;

/// What kind of failure a letter records, from its error class.
///
/// An HTTP status (`"503"`, `"HTTP 503"`) or an exception name the
/// built-in tables know maps to a category: one retried by default
/// (`always` or `if_idempotent`) is a `system` error, one never retried a
/// `data` error; anything else is `unknown`.
pub fn reason_kind(error_class: &str) -> &'static str {
    let status = error_class.strip_prefix("HTTP").map_or(error_class, str::trim_start);
    let category = match status.parse::<u16>() {
        Ok(code) if status.len() == 3 => classify::status_category(code),
        _ => classify::lookup_name(error_class).map(|(c, _)| c),
    };
    match category {
        None | Some(Category::Unknown) => "unknown",
        Some(c) if c.default_rule() == RetryRule::Never => "data",
        Some(_) => "system",
    }
}

/// How a replay proceeds.
#[derive(Clone, Debug, PartialEq)]
pub struct ReplayOptions {
    /// Who replays (required: the audit names them).
    pub operator: String,
    /// The first batch's size (1).
    pub initial_batch: usize,
    /// What a batch's size is multiplied by after a batch within the threshold (2).
    pub growth: f64,
    /// The largest batch (100).
    pub max_batch: usize,
    /// The failure rate a batch may reach and still let the replay grow (0.1).
    pub max_failure_rate: f64,
    /// Replay data errors too (false: they fail again the same way).
    pub include_data_errors: bool,
}

impl ReplayOptions {
    /// Reads `{"operator", "initial_batch", "growth", "max_batch",
    /// "max_failure_rate", "include_data_errors"}`.
    ///
    /// # Errors
    /// `missing_field` for the operator; `out_of_range` for a batch of 0, a
    /// growth below 1 or a rate outside [0, 1]; `invalid_combination` for
    /// an initial batch above the largest.
    pub fn from_json_value(v: &Value) -> Result<ReplayOptions> {
        let mut o = Obj::new(v, "")?;
        let operator = o
            .str("operator", &["who"])?
            .map(|(s, _)| s.to_owned())
            .filter(|s| !s.is_empty())
            .ok_or_else(|| Error::new(ErrorCode::MissingField, "operator", "the audit names who replays"))?;
        let max = MAX_LETTERS as u64;
        let initial_batch = o.uint("initial_batch", &[], 1, max)?.unwrap_or(1) as usize;
        let max_batch = o.uint("max_batch", &[], 1, max)?.unwrap_or(100) as usize;
        let growth = o.f64("growth", &[])?.unwrap_or(2.0);
        if !(1.0..=1000.0).contains(&growth) {
            return Err(Error::new(ErrorCode::OutOfRange, "growth", "must be in [1, 1000]"));
        }
        let max_failure_rate = o.f64("max_failure_rate", &[])?.unwrap_or(0.1);
        if !(0.0..=1.0).contains(&max_failure_rate) {
            return Err(Error::new(ErrorCode::OutOfRange, "max_failure_rate", "must be in [0, 1]"));
        }
        let include_data_errors = o.bool("include_data_errors", &[])?.unwrap_or(false);
        o.finish()?;
        if initial_batch > max_batch {
            return Err(Error::new(ErrorCode::InvalidCombination, "initial_batch", "must not exceed max_batch"));
        }
        Ok(ReplayOptions { operator, initial_batch, growth, max_batch, max_failure_rate, include_data_errors })
    }
}

/// A replay in progress: the letters, the plan, the outcomes so far.
#[derive(Clone, Debug, PartialEq)]
pub struct Replay {
    options: ReplayOptions,
    letters: Vec<DeadLetter>,
    /// Indexes of the letters to replay, in order.
    queue: Vec<usize>,
    /// (index, reason) of the letters refused.
    skipped: Vec<(usize, &'static str)>,
    /// How far into `queue` the batches handed out reach.
    handed: usize,
    /// The current batch's bounds in `queue` and its failures so far.
    batch: Option<(usize, usize)>,
    batch_size: usize,
    /// Outcomes by letter index: Some(true) replayed, Some(false) failed.
    outcome: Vec<Option<bool>>,
    /// (size, failed) of every finished batch.
    batches: Vec<(usize, usize)>,
    stopped: Option<String>,
    started_ms: u64,
    finished_ms: Option<u64>,
}

impl Replay {
    /// Plans a replay of `letters` at `wall_now_ms`: groups, refusals and
    /// the order (the plan keeps the letters' order within it).
    ///
    /// # Errors
    /// `too_large` past [`MAX_LETTERS`].
    pub fn new(letters: Vec<DeadLetter>, options: ReplayOptions, wall_now_ms: u64) -> Result<Replay> {
        if letters.len() > MAX_LETTERS {
            return Err(Error::new(ErrorCode::TooLarge, "letters", format!("at most {MAX_LETTERS} letters")));
        }
        let mut queue = Vec::new();
        let mut skipped = Vec::new();
        for (i, l) in letters.iter().enumerate() {
            let refusal = if l.status != DeadLetterStatus::Pending {
                Some(if l.status == DeadLetterStatus::Replayed { "already_replayed" } else { "discarded" })
            } else if !l.target_idempotent {
                Some("target_not_idempotent")
            } else if reason_kind(&l.error_class) == "data" && !options.include_data_errors {
                Some("data_error")
            } else {
                None
            };
            match refusal {
                Some(r) => skipped.push((i, r)),
                None => queue.push(i),
            }
        }
        let n = letters.len();
        let batch_size = options.initial_batch;
        // Nothing to replay: the replay is over as it starts.
        let finished_ms = queue.is_empty().then_some(wall_now_ms);
        Ok(Replay {
            options,
            letters,
            queue,
            skipped,
            handed: 0,
            batch: None,
            batch_size,
            outcome: vec![None; n],
            batches: Vec::new(),
            stopped: None,
            started_ms: wall_now_ms,
            finished_ms,
        })
    }

    /// Plans a replay from JSON, as hosts give it: `letters` a list of
    /// dead letters (`DeadLetter::from_value`), `options` as
    /// [`ReplayOptions::from_json_value`] reads them.
    ///
    /// # Errors
    /// `invalid_type` on `letters` for anything but a list; a letter's
    /// error under `letters[i]`; an option's error under `options`.
    pub fn from_json_values(letters: &Value, options: &Value, wall_now_ms: u64) -> Result<Replay> {
        let items = letters.as_array().ok_or_else(|| {
            Error::new(
                ErrorCode::InvalidType,
                "letters",
                format!("must be a list, got {}", crate::doc::type_name(letters)),
            )
        })?;
        if items.len() > MAX_LETTERS {
            return Err(Error::new(ErrorCode::TooLarge, "letters", format!("at most {MAX_LETTERS} letters")));
        }
        let letters = items
            .iter()
            .enumerate()
            .map(|(i, l)| DeadLetter::from_value(l).map_err(|e| e.within(&format!("letters[{i}]"))))
            .collect::<Result<Vec<_>>>()?;
        let options = ReplayOptions::from_json_value(options).map_err(|e| e.within("options"))?;
        Replay::new(letters, options, wall_now_ms)
    }

    /// The letters as JSON, with their statuses as they now stand.
    pub fn letters_json(&self) -> Value {
        Value::from(self.letters.iter().map(DeadLetter::to_value).collect::<Vec<_>>())
    }

    /// The letters grouped by kind of reason and error class:
    /// `[{"kind", "error_class", "msg_ids": [...]}]`, sorted by kind, then class.
    pub fn groups(&self) -> Value {
        let mut groups: Vec<(&'static str, &str, Vec<&str>)> = Vec::new();
        for l in &self.letters {
            let kind = reason_kind(&l.error_class);
            match groups.iter_mut().find(|(k, c, _)| *k == kind && *c == l.error_class) {
                Some(g) => g.2.push(&l.msg_id),
                None => groups.push((kind, &l.error_class, vec![&l.msg_id])),
            }
        }
        groups.sort_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)));
        Value::from(
            groups
                .into_iter()
                .map(|(k, c, ids)| json!({ "kind": k, "error_class": c, "msg_ids": ids }))
                .collect::<Vec<_>>(),
        )
    }

    /// The next batch's letter ids, or an empty list when the replay is
    /// over (every letter handed out, or stopped). A batch is handed out
    /// once: the next call after it waits for every outcome.
    ///
    /// # Errors
    /// `invalid_state` while the current batch still misses outcomes.
    pub fn next_batch(&mut self) -> Result<Vec<String>> {
        if let Some((from, to)) = self.batch {
            if self.queue[from..to].iter().any(|i| self.outcome[*i].is_none()) {
                return Err(Error::new(ErrorCode::InvalidState, "", "the current batch still misses outcomes"));
            }
        }
        if self.stopped.is_some() || self.handed >= self.queue.len() {
            self.batch = None;
            return Ok(Vec::new());
        }
        let to = (self.handed + self.batch_size).min(self.queue.len());
        self.batch = Some((self.handed, to));
        let ids = self.queue[self.handed..to].iter().map(|i| self.letters[*i].msg_id.clone()).collect();
        self.handed = to;
        Ok(ids)
    }

    /// Records a letter's replay: a success marks it `replayed`. When the
    /// batch is complete, its failure rate decides: at or under the
    /// threshold the next batch grows (× `growth`, up to `max_batch`); over
    /// it the replay stops and the rest stays pending.
    ///
    /// # Errors
    /// `invalid_value` on `msg_id` for a letter not in the current batch or
    /// already reported.
    pub fn record(&mut self, msg_id: &str, ok: bool, wall_now_ms: u64) -> Result<()> {
        let (from, to) = self.batch.ok_or_else(|| not_in_batch(msg_id))?;
        let i = self.queue[from..to]
            .iter()
            .copied()
            .find(|i| self.letters[*i].msg_id == msg_id && self.outcome[*i].is_none())
            .ok_or_else(|| not_in_batch(msg_id))?;
        if ok {
            let l = &mut self.letters[i];
            l.mark_replayable()?;
            l.mark_replayed()?;
        }
        self.outcome[i] = Some(ok);
        if self.queue[from..to].iter().all(|i| self.outcome[*i].is_some()) {
            let size = to - from;
            let failed = self.queue[from..to].iter().filter(|i| self.outcome[**i] == Some(false)).count();
            self.batches.push((size, failed));
            let rate = failed as f64 / size as f64;
            if rate > self.options.max_failure_rate {
                self.stopped =
                    Some(format!("failure rate {rate} over {} in a batch of {size}", self.options.max_failure_rate));
            } else {
                let grown = libm::ceil(self.batch_size as f64 * self.options.growth) as usize;
                self.batch_size = grown.clamp(1, self.options.max_batch);
            }
            if self.stopped.is_some() || self.handed >= self.queue.len() {
                self.finished_ms = Some(wall_now_ms);
            }
        }
        Ok(())
    }

    /// The letters, with their statuses as they now stand.
    pub fn letters(&self) -> &[DeadLetter] {
        &self.letters
    }

    /// The audit record (schema `schema/dead-letter-replay.schema.json`,
    /// `version` [`AUDIT_VERSION`]): who, when (RFC 3339), the ids replayed,
    /// failed, skipped (with the reason) and not attempted, the batches,
    /// and why it stopped, if it did.
    pub fn audit(&self) -> Value {
        let ids = |want: Option<bool>| -> Vec<&str> {
            self.queue.iter().filter(|i| self.outcome[**i] == want).map(|i| self.letters[*i].msg_id.as_str()).collect()
        };
        let time = |ms: u64| format_rfc3339_ms(ms).unwrap_or_default();
        json!({
            "version": AUDIT_VERSION,
            "kind": "dead_letter_replay",
            "operator": self.options.operator,
            "started_at": time(self.started_ms),
            "finished_at": self.finished_ms.map(time),
            "replayed": ids(Some(true)),
            "failed": ids(Some(false)),
            "skipped": self.skipped.iter().map(|(i, r)| json!({ "msg_id": self.letters[*i].msg_id, "reason": r })).collect::<Vec<_>>(),
            "not_attempted": ids(None),
            "batches": self.batches.iter().map(|(s, f)| json!({ "size": s, "failed": f })).collect::<Vec<_>>(),
            "stopped": self.stopped,
        })
    }
}

fn not_in_batch(msg_id: &str) -> Error {
    Error::new(ErrorCode::InvalidValue, "msg_id", format!("{msg_id:?} is not awaiting an outcome in the current batch"))
}

//! Dead letters: the envelope of a message whose retries ran out.
//!
//! A dead-letter queue that nobody can act on is data loss, only later
//! (docs/idempotency.md, "Dead letters"). The envelope therefore carries
//! what a person needs weeks later to decide whether the message may
//! safely go back: the original message, why it failed and how often, since when, where it came from,
//! the trace to follow, and whether its target deduplicates (reprocessing
//! into one that does not books twice).

use super::rfc3339::{format_rfc3339_ms, parse_instant};
use crate::json::{Map, ToJson, Value};
use crate::{Error, ErrorCode, Result};

/// Where a dead letter stands.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
#[cfg_attr(any(test, feature = "serde"), derive(serde::Serialize))]
#[cfg_attr(any(test, feature = "serde"), serde(rename_all = "snake_case"))]
pub enum DeadLetterStatus {
    /// Waiting for a person or a job to decide.
    #[default]
    Pending,
    /// Sent back to its target.
    Replayed,
    /// Dropped on purpose.
    Discarded,
}

impl DeadLetterStatus {
    /// Returns the snake_case name.
    pub const fn as_str(self) -> &'static str {
        match self {
            DeadLetterStatus::Pending => "pending",
            DeadLetterStatus::Replayed => "replayed",
            DeadLetterStatus::Discarded => "discarded",
        }
    }

    fn parse(s: &str) -> Option<Self> {
        match s {
            "pending" => Some(DeadLetterStatus::Pending),
            "replayed" => Some(DeadLetterStatus::Replayed),
            "discarded" => Some(DeadLetterStatus::Discarded),
            _ => None,
        }
    }
}

impl ToJson for DeadLetterStatus {
    fn to_value(&self) -> Value {
        self.as_str().to_value()
    }
}

/// The envelope of a message that exhausted its retries; JSON with snake_case keys.
///
/// Build one with [`DeadLetter::builder`] or read one with
/// [`DeadLetter::from_json`]; both validate (see [`DeadLetter::validate`]).
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(any(test, feature = "serde"), derive(serde::Serialize))]
pub struct DeadLetter {
    /// The message's id (required, not empty).
    pub msg_id: String,
    /// The original message, as it was received (required, not `null`): it
    /// is what gets reprocessed. Read also from the key `original`.
    pub message: Value,
    /// Why it was dead-lettered, `"upstream 503 after 5 attempts"` (required, not empty).
    pub reason: String,
    /// The class or code of the last error, `"ConnectionResetError"` (required, not empty).
    pub error_class: String,
    /// The last error's message (required, may be empty).
    pub error_message: String,
    /// The calls made, at least 1.
    pub attempts: u32,
    /// The first failure, RFC 3339 (read also from `first_failed_at`).
    pub first_failure_at: String,
    /// The last failure, RFC 3339, not before the first (read also from `last_failed_at`).
    pub last_failure_at: String,
    /// The trace to follow, if any (not empty when present).
    pub trace_id: Option<String>,
    /// The source topic or queue, if any.
    pub topic: Option<String>,
    /// The source partition; requires `topic`.
    pub partition: Option<u32>,
    /// The source offset; requires `topic`.
    pub offset: Option<u64>,
    /// Pending, replayed or discarded (default pending).
    pub status: DeadLetterStatus,
    /// Whether the target deduplicates (an idempotency key, a unique index),
    /// so that a replay cannot apply the message twice (default false).
    pub target_idempotent: bool,
    /// Whether someone marked it for replay ([`DeadLetter::mark_replayable`]; default false).
    pub replayable: bool,
}

// Every key present, `null` when absent.
json_struct!(DeadLetter {
    msg_id,
    message,
    reason,
    error_class,
    error_message,
    attempts,
    first_failure_at,
    last_failure_at,
    trace_id,
    topic,
    partition,
    offset,
    status,
    target_idempotent,
    replayable,
});

const KEYS: &[&str] = &[
    "msg_id",
    "message",
    "reason",
    "error_class",
    "error_message",
    "attempts",
    "first_failure_at",
    "last_failure_at",
    "trace_id",
    "topic",
    "partition",
    "offset",
    "status",
    "target_idempotent",
    "replayable",
];

const ALIASES: &[(&str, &str)] =
    &[("original", "message"), ("first_failed_at", "first_failure_at"), ("last_failed_at", "last_failure_at")];

fn invalid(field: &'static str, why: impl Into<String>) -> Error {
    Error::new(ErrorCode::InvalidDeadLetter, field, why)
}

fn state(field: &'static str, why: impl Into<String>) -> Error {
    Error::new(ErrorCode::InvalidState, field, why)
}

impl DeadLetter {
    /// Starts a dead letter for message `msg_id` with its original content.
    pub fn builder(msg_id: impl Into<String>, message: Value) -> DeadLetterBuilder {
        DeadLetterBuilder { msg_id: msg_id.into(), message, ..DeadLetterBuilder::default() }
    }

    /// Checks every rule of the envelope.
    ///
    /// # Errors
    /// `invalid_dead_letter`, naming the field, when `msg_id`, `reason` or
    /// `error_class` is empty, `message` is `null`, `attempts` is 0, a
    /// timestamp is not RFC 3339 or the first failure is after the last,
    /// `trace_id` or `topic` is present but empty, `partition` or `offset` is
    /// given without `topic`, or the letter is marked replayable although its
    /// target is not idempotent or it is no longer pending.
    pub fn validate(&self) -> Result<()> {
        if self.msg_id.is_empty() {
            return Err(invalid("msg_id", "is empty"));
        }
        if self.message.is_null() {
            return Err(invalid("message", "is null; the original message is needed to reprocess it"));
        }
        if self.reason.is_empty() {
            return Err(invalid("reason", "is empty"));
        }
        if self.error_class.is_empty() {
            return Err(invalid("error_class", "is empty"));
        }
        if self.attempts == 0 {
            return Err(invalid("attempts", "is 0; a dead letter follows at least one call"));
        }
        let first = parse_instant(&self.first_failure_at, ErrorCode::InvalidDeadLetter, "first_failure_at")?;
        let last = parse_instant(&self.last_failure_at, ErrorCode::InvalidDeadLetter, "last_failure_at")?;
        if first > last {
            return Err(invalid(
                "last_failure_at",
                format!("{} is before first_failure_at {}", self.last_failure_at, self.first_failure_at),
            ));
        }
        if self.trace_id.as_deref() == Some("") {
            return Err(invalid("trace_id", "is empty"));
        }
        if self.topic.as_deref() == Some("") {
            return Err(invalid("topic", "is empty"));
        }
        if self.topic.is_none() {
            if self.partition.is_some() {
                return Err(invalid("partition", "is given without a topic"));
            }
            if self.offset.is_some() {
                return Err(invalid("offset", "is given without a topic"));
            }
        }
        if self.replayable && !self.target_idempotent {
            return Err(invalid("replayable", "is true but the target is not idempotent"));
        }
        if self.replayable && self.status == DeadLetterStatus::Discarded {
            return Err(invalid("replayable", "is true but the letter was discarded"));
        }
        Ok(())
    }

    /// Marks the letter for replay, only if its target is idempotent.
    ///
    /// Replaying into a target that does not deduplicate can book a payment
    /// or an order twice, which is worse than not replaying.
    ///
    /// # Errors
    /// `invalid_state` (field `target_idempotent`) when the target is not
    /// idempotent, or (field `status`) when the letter is not pending.
    pub fn mark_replayable(&mut self) -> Result<()> {
        if self.status != DeadLetterStatus::Pending {
            return Err(state("status", format!("is {}, not pending", self.status.as_str())));
        }
        if !self.target_idempotent {
            return Err(state("target_idempotent", "is false; replaying could apply the message twice"));
        }
        self.replayable = true;
        Ok(())
    }

    /// Records that the letter was replayed.
    ///
    /// # Errors
    /// `invalid_state` when the letter is not pending or was not marked replayable.
    pub fn mark_replayed(&mut self) -> Result<()> {
        if self.status != DeadLetterStatus::Pending {
            return Err(state("status", format!("is {}, not pending", self.status.as_str())));
        }
        if !self.replayable {
            return Err(state("replayable", "is false; mark the letter replayable first"));
        }
        self.status = DeadLetterStatus::Replayed;
        Ok(())
    }

    /// Records that the letter was discarded on purpose.
    ///
    /// # Errors
    /// `invalid_state` when the letter is not pending.
    pub fn discard(&mut self) -> Result<()> {
        if self.status != DeadLetterStatus::Pending {
            return Err(state("status", format!("is {}, not pending", self.status.as_str())));
        }
        self.status = DeadLetterStatus::Discarded;
        self.replayable = false;
        Ok(())
    }

    /// Serialises the letter as compact JSON, every key present (`null` when absent).
    pub fn to_json(&self) -> String {
        self.to_json_text()
    }

    /// Returns the letter as a JSON value, every key present.
    pub fn to_value(&self) -> Value {
        ToJson::to_value(self)
    }

    /// Reads and validates a letter from JSON text.
    ///
    /// # Errors
    /// `invalid_json` for malformed text; otherwise as [`DeadLetter::from_value`].
    pub fn from_json(text: &str) -> Result<Self> {
        let v = crate::doc::parse_any_size(text)
            .map_err(|e| Error::new(ErrorCode::InvalidJson, "dead_letter", e.reason()))?;
        Self::from_value(&v)
    }

    /// Reads and validates a letter from a JSON value.
    ///
    /// The common alternative names `original`, `first_failed_at` and `last_failed_at`
    /// are read as `message`, `first_failure_at` and `last_failure_at`.
    ///
    /// # Errors
    /// - `invalid_type` when the value is not an object or a field has the
    ///   wrong JSON type (`attempts` must be an integer, …);
    /// - `unknown_key` for a key the format does not define;
    /// - `missing_field` for an absent required field (`msg_id`, `message`,
    ///   `reason`, `error_class`, `error_message`, `attempts`,
    ///   `first_failure_at`, `last_failure_at`);
    /// - `invalid_dead_letter` when a field is given twice (under its name
    ///   and an alias), `status` is not `pending`, `replayed` or
    ///   `discarded`, or any rule of [`DeadLetter::validate`] fails.
    pub fn from_value(value: &Value) -> Result<Self> {
        let Value::Object(obj) = value else {
            return Err(Error::new(ErrorCode::InvalidType, "dead_letter", "must be a json object"));
        };
        let mut fields: Map<String, Value> = Map::new();
        for (k, v) in obj {
            let name = match ALIASES.iter().find(|(alias, _)| alias == k) {
                Some((_, name)) => *name,
                None if KEYS.contains(&k.as_str()) => k.as_str(),
                None => {
                    return Err(Error::new(ErrorCode::UnknownKey, "dead_letter", format!("unknown key {k:?}")));
                }
            };
            if fields.insert(name.to_owned(), v.clone()).is_some() {
                let field = KEYS.iter().find(|x| **x == name).copied().unwrap_or("dead_letter");
                return Err(invalid(field, "is given twice, under its name and an alias"));
            }
        }
        let get = |name: &'static str| fields.get(name).filter(|v| !v.is_null());
        let required =
            |name: &'static str| get(name).ok_or_else(|| Error::new(ErrorCode::MissingField, name, "is required"));
        let string = |name: &'static str, v: &Value| -> Result<String> {
            v.as_str().map(str::to_owned).ok_or_else(|| Error::new(ErrorCode::InvalidType, name, "must be a string"))
        };
        let uint = |name: &'static str, v: &Value, max: u64| -> Result<u64> {
            v.as_u64()
                .filter(|n| *n <= max)
                .ok_or_else(|| Error::new(ErrorCode::InvalidType, name, format!("must be an integer from 0 to {max}")))
        };
        let boolean = |name: &'static str| -> Result<bool> {
            match get(name) {
                None => Ok(false),
                Some(v) => v.as_bool().ok_or_else(|| Error::new(ErrorCode::InvalidType, name, "must be a boolean")),
            }
        };
        let opt_string = |name: &'static str| get(name).map(|v| string(name, v)).transpose();
        let letter = DeadLetter {
            msg_id: string("msg_id", required("msg_id")?)?,
            message: required("message")?.clone(),
            reason: string("reason", required("reason")?)?,
            error_class: string("error_class", required("error_class")?)?,
            error_message: string("error_message", required("error_message")?)?,
            attempts: uint("attempts", required("attempts")?, u32::MAX as u64)? as u32,
            first_failure_at: string("first_failure_at", required("first_failure_at")?)?,
            last_failure_at: string("last_failure_at", required("last_failure_at")?)?,
            trace_id: opt_string("trace_id")?,
            topic: opt_string("topic")?,
            partition: get("partition").map(|v| uint("partition", v, u32::MAX as u64)).transpose()?.map(|n| n as u32),
            offset: get("offset").map(|v| uint("offset", v, u64::MAX)).transpose()?,
            status: match get("status") {
                None => DeadLetterStatus::Pending,
                Some(v) => {
                    let s = string("status", v)?;
                    DeadLetterStatus::parse(&s).ok_or_else(|| {
                        invalid("status", format!("is {s:?}, not one of pending, replayed, discarded"))
                    })?
                }
            },
            target_idempotent: boolean("target_idempotent")?,
            replayable: boolean("replayable")?,
        };
        letter.validate()?;
        Ok(letter)
    }
}

/// A builder for a [`DeadLetter`]; [`build`](DeadLetterBuilder::build) validates.
#[derive(Clone, Debug, Default)]
pub struct DeadLetterBuilder {
    msg_id: String,
    message: Value,
    reason: Option<String>,
    error_class: Option<String>,
    error_message: Option<String>,
    attempts: Option<u32>,
    first_failure_at: Option<String>,
    last_failure_at: Option<String>,
    first_failure_ms: Option<u64>,
    last_failure_ms: Option<u64>,
    trace_id: Option<String>,
    topic: Option<String>,
    partition: Option<u32>,
    offset: Option<u64>,
    target_idempotent: bool,
}

impl DeadLetterBuilder {
    /// Sets why the message was dead-lettered.
    pub fn reason(mut self, reason: impl Into<String>) -> Self {
        self.reason = Some(reason.into());
        self
    }

    /// Sets the last error's class (or code) and message.
    pub fn error(mut self, class: impl Into<String>, message: impl Into<String>) -> Self {
        self.error_class = Some(class.into());
        self.error_message = Some(message.into());
        self
    }

    /// Sets the number of calls made.
    pub fn attempts(mut self, attempts: u32) -> Self {
        self.attempts = Some(attempts);
        self
    }

    /// Sets the first failure time as RFC 3339 text.
    pub fn first_failure_at(mut self, at: impl Into<String>) -> Self {
        self.first_failure_at = Some(at.into());
        self
    }

    /// Sets the last failure time as RFC 3339 text.
    pub fn last_failure_at(mut self, at: impl Into<String>) -> Self {
        self.last_failure_at = Some(at.into());
        self
    }

    /// Sets the first failure time in Unix epoch milliseconds (written as RFC 3339 UTC).
    pub fn first_failure_ms(mut self, unix_ms: u64) -> Self {
        self.first_failure_ms = Some(unix_ms);
        self
    }

    /// Sets the last failure time in Unix epoch milliseconds (written as RFC 3339 UTC).
    pub fn last_failure_ms(mut self, unix_ms: u64) -> Self {
        self.last_failure_ms = Some(unix_ms);
        self
    }

    /// Sets the trace id.
    pub fn trace_id(mut self, trace_id: impl Into<String>) -> Self {
        self.trace_id = Some(trace_id.into());
        self
    }

    /// Sets the source coordinates: topic (or queue), partition and offset.
    pub fn source(mut self, topic: impl Into<String>, partition: Option<u32>, offset: Option<u64>) -> Self {
        self.topic = Some(topic.into());
        self.partition = partition;
        self.offset = offset;
        self
    }

    /// Declares whether the target deduplicates, which a replay requires.
    pub fn target_idempotent(mut self, idempotent: bool) -> Self {
        self.target_idempotent = idempotent;
        self
    }

    /// Builds and validates the letter, status pending.
    ///
    /// # Errors
    /// `missing_field` when the reason, error, attempts or either failure
    /// time was not set; `out_of_range` for a time in milliseconds after
    /// year 9999; then any error of [`DeadLetter::validate`].
    pub fn build(self) -> Result<DeadLetter> {
        let missing = |name: &'static str| Error::new(ErrorCode::MissingField, name, "is required");
        let time = |text: Option<String>, ms: Option<u64>, name: &'static str| -> Result<String> {
            match (text, ms) {
                (Some(t), _) => Ok(t),
                (None, Some(ms)) => {
                    format_rfc3339_ms(ms).map_err(|e| Error::new(e.kind(), name, e.reason().to_owned()))
                }
                (None, None) => Err(missing(name)),
            }
        };
        let letter = DeadLetter {
            msg_id: self.msg_id,
            message: self.message,
            reason: self.reason.ok_or_else(|| missing("reason"))?,
            error_class: self.error_class.ok_or_else(|| missing("error_class"))?,
            error_message: self.error_message.ok_or_else(|| missing("error_message"))?,
            attempts: self.attempts.ok_or_else(|| missing("attempts"))?,
            first_failure_at: time(self.first_failure_at, self.first_failure_ms, "first_failure_at")?,
            last_failure_at: time(self.last_failure_at, self.last_failure_ms, "last_failure_at")?,
            trace_id: self.trace_id,
            topic: self.topic,
            partition: self.partition,
            offset: self.offset,
            status: DeadLetterStatus::Pending,
            target_idempotent: self.target_idempotent,
            replayable: false,
        };
        letter.validate()?;
        Ok(letter)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn letter() -> DeadLetterBuilder {
        DeadLetter::builder("M-20260819-000123", json!({"order": 1001}))
            .reason("upstream 503 after 5 attempts")
            .error("HTTPError", "503 Service Unavailable")
            .attempts(5)
            .first_failure_at("2026-08-19T02:11:03+09:00")
            .last_failure_at("2026-08-19T02:12:47+09:00")
            .trace_id("a1b2c3d4")
            .source("orders", Some(3), Some(42))
    }

    #[test]
    fn builds_validates_and_round_trips() {
        let l = letter().build().unwrap();
        let back = DeadLetter::from_json(&l.to_json()).unwrap();
        assert_eq!(back, l);
        assert_eq!(l.to_value()["status"], "pending");
        // Written as serde's derive wrote it: with every optional field, without, in every status.
        let bare = DeadLetter::builder("m", json!([1]))
            .reason("r")
            .error("E", "")
            .attempts(1)
            .first_failure_at("2026-08-19T02:11:03Z")
            .last_failure_at("2026-08-19T02:11:03Z")
            .build()
            .unwrap();
        for mut x in [l.clone(), bare] {
            for st in [DeadLetterStatus::Pending, DeadLetterStatus::Replayed, DeadLetterStatus::Discarded] {
                (x.status, x.replayable, x.target_idempotent) = (st, st == DeadLetterStatus::Pending, true);
                assert_eq!(x.to_value(), crate::json::Value::from(serde_json::to_value(&x).unwrap()));
                assert_eq!(x.to_json(), serde_json::to_string(&x).unwrap());
            }
        }
        let ms = DeadLetter::builder("m", json!(1))
            .reason("r")
            .error("E", "")
            .attempts(1)
            .first_failure_ms(0)
            .last_failure_ms(1)
            .build()
            .unwrap();
        assert_eq!(ms.first_failure_at, "1970-01-01T00:00:00.000Z");
    }

    #[test]
    fn refuses_bad_letters() {
        assert_eq!(letter().attempts(0).build().unwrap_err().code(), "invalid_dead_letter");
        let e = letter().last_failure_at("2026-08-19T02:11:02+09:00").build().unwrap_err();
        assert_eq!((e.code(), e.field()), ("invalid_dead_letter", "last_failure_at"));
        let e = DeadLetter::builder("m", json!(1)).build().unwrap_err();
        assert_eq!((e.code(), e.field()), ("missing_field", "reason"));
        let mut v = letter().build().unwrap().to_value();
        v["extra"] = json!(1);
        assert_eq!(DeadLetter::from_value(&v).unwrap_err().code(), "unknown_key");
        let mut v = letter().build().unwrap().to_value();
        v.as_object_mut().unwrap().remove("error_class");
        let e = DeadLetter::from_value(&v).unwrap_err();
        assert_eq!((e.code(), e.field()), ("missing_field", "error_class"));
        let mut v = letter().build().unwrap().to_value();
        v["attempts"] = json!("5");
        assert_eq!(DeadLetter::from_value(&v).unwrap_err().code(), "invalid_type");
        let mut v = letter().build().unwrap().to_value();
        v["original"] = json!(1);
        assert_eq!(DeadLetter::from_value(&v).unwrap_err().code(), "invalid_dead_letter");
    }

    #[test]
    fn replay_needs_an_idempotent_target() {
        let mut l = letter().build().unwrap();
        assert_eq!(l.mark_replayable().unwrap_err().code(), "invalid_state");
        assert_eq!(l.mark_replayed().unwrap_err().code(), "invalid_state");
        let mut l = letter().target_idempotent(true).build().unwrap();
        l.mark_replayable().unwrap();
        l.mark_replayed().unwrap();
        assert_eq!(l.status, DeadLetterStatus::Replayed);
        assert_eq!(l.discard().unwrap_err().code(), "invalid_state");
    }
}

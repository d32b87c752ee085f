//! The structured retry log: one record per retry and per give-up, the
//! same fields and message in every host (docs/observability.md, "The retry
//! log").
//!
//! Metrics say how often retries happen; when one operation misbehaves you
//! want its chain: which attempt failed with what, how long the retry
//! waited, and one id that strings the attempts together. A host calls
//! [`record`] with what its `on_retry` / `on_give_up` hook carries (the
//! [`RetryEvent`](crate::surface::RetryEvent) or
//! [`GiveUpEvent`](crate::surface::GiveUpEvent)) plus the error's type name
//! and the key, and hands the record to the user's logger (Python `logging`
//! with `extra`, a JS `logger` option). Nothing is logged unless a logger is
//! given.
//!
//! Every record has every field of [`FIELDS`], `null` where it does not
//! apply, so a log query or a format string can name any of them. The
//! correlation id is the caller's when one is given, else the session's
//! idempotency key: every attempt of one operation carries that key, and
//! the server that deduplicates on it logs it too.

use crate::alerts::EXHAUSTION_REASONS;
use crate::doc::{uint, Obj};
use crate::duration::format_duration;
use crate::error::{Error, ErrorCode, Result};
use crate::json::{Map, Value};
use crate::session::GiveUpReason;

/// How severe a record is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum LogLevel {
    /// A give-up nothing would have retried (a 404, a server's "do not
    /// retry", a cancellation): the caller sees the error anyway.
    Info,
    /// A retry is scheduled.
    Warn,
    /// A retry limit ran out (the give-ups the exhausted-rate alert counts)
    /// or a breaker refused: the operation failed for its caller.
    Error,
}

impl LogLevel {
    /// Returns the stable code (`"info"`, `"warn"`, `"error"`): the method
    /// name of pino, bunyan and `console` loggers.
    pub const fn code(self) -> &'static str {
        match self {
            LogLevel::Info => "info",
            LogLevel::Warn => "warn",
            LogLevel::Error => "error",
        }
    }
}

/// Every field of a record, in order: the names of Python's `extra` keys
/// and of the JS record's `fields` (snake_case in both, so one log query
/// finds both hosts' records).
pub const FIELDS: [&str; 11] = [
    "event",
    "attempt",
    "max_attempts",
    "retry",
    "category",
    "error",
    "delay_ms",
    "reason",
    "budget",
    "idempotency_key",
    "correlation_id",
];

/// What a host hands over for one record: a hook's event with the error's
/// type name, the key and the caller's correlation id.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LogEvent<'a> {
    /// A retry (`true`: `on_retry`) or a give-up (`on_give_up`).
    pub retry: Option<u32>,
    /// The call that failed (retry), or the calls made (give-up).
    pub attempt: u32,
    /// The policy's `max_attempts`.
    pub max_attempts: u32,
    /// The failure's category.
    pub category: Option<&'a str>,
    /// The decided delay in ns (a retry).
    pub delay: Option<u64>,
    /// The give-up reason.
    pub reason: Option<&'a str>,
    /// The budget that refused.
    pub budget: Option<&'a str>,
    /// The error's type name as the host names it (Python
    /// `module.qualname`, bare for builtins; JS the error's `name`); `None`
    /// for a returned response.
    pub error: Option<&'a str>,
    /// The session's idempotency key.
    pub key: &'a str,
    /// The caller's correlation id; `None`: the key.
    pub correlation_id: Option<&'a str>,
}

/// One log record: its level, its message and its fields ([`FIELDS`], in order).
#[derive(Clone, Debug, PartialEq)]
pub struct LogRecord {
    /// How severe it is.
    pub level: LogLevel,
    /// One line for people.
    pub message: String,
    /// The structured fields.
    pub fields: Map<String, Value>,
}

impl LogRecord {
    /// Writes the record as `{"level": "warn", "message": "…", "fields": {…}}`.
    pub fn to_json_value(&self) -> Value {
        let mut m = Map::new();
        m.insert("level".into(), self.level.code().into());
        m.insert("message".into(), self.message.clone().into());
        m.insert("fields".into(), Value::Object(self.fields.clone()));
        Value::Object(m)
    }
}

fn level_of(reason: &str) -> LogLevel {
    let failed = EXHAUSTION_REASONS.iter().any(|r| r.code() == reason) || reason == GiveUpReason::BreakerOpen.code();
    if failed {
        LogLevel::Error
    } else {
        LogLevel::Info
    }
}

fn failure_text(category: Option<&str>, error: Option<&str>) -> String {
    match (category, error) {
        (Some(c), Some(e)) => format!("{c}: {e}"),
        (Some(c), None) => c.to_owned(),
        (None, Some(e)) => e.to_owned(),
        (None, None) => "unknown".to_owned(),
    }
}

/// Returns the record of a retry or a give-up.
///
/// - a retry (`warn`): `attempt 1 of 3 failed (server_error:
///   httpx.ConnectTimeout); retry 1 in 100ms`;
/// - a give-up (`error` when a retry limit ran out or a breaker refused,
///   else `info`): `gave up after 3 attempts: attempts_exhausted (last
///   failure: server_error: TimeoutError)`, a budget's refusal adding
///   `(budget "b")`.
pub fn record(ev: &LogEvent<'_>) -> LogRecord {
    let opt = |s: Option<&str>| s.map_or(Value::Null, |s| Value::from(s.to_owned()));
    let (level, message) = match ev.retry {
        Some(n) => (
            LogLevel::Warn,
            format!(
                "attempt {} of {} failed ({}); retry {n} in {}",
                ev.attempt,
                ev.max_attempts,
                failure_text(ev.category, ev.error),
                format_duration(ev.delay.unwrap_or(0)),
            ),
        ),
        None => {
            let reason = ev.reason.unwrap_or("unknown");
            let mut m = match ev.attempt {
                1 => format!("gave up after 1 attempt: {reason}"),
                n => format!("gave up after {n} attempts: {reason}"),
            };
            m.push_str(&format!(" (last failure: {})", failure_text(ev.category, ev.error)));
            if let Some(b) = ev.budget {
                m.push_str(&format!(" (budget {b:?})"));
            }
            (level_of(reason), m)
        }
    };
    let mut f = Map::new();
    f.insert("event".into(), if ev.retry.is_some() { "retry" } else { "give_up" }.into());
    f.insert("attempt".into(), ev.attempt.into());
    f.insert("max_attempts".into(), ev.max_attempts.into());
    f.insert("retry".into(), ev.retry.map_or(Value::Null, Value::from));
    f.insert("category".into(), opt(ev.category));
    f.insert("error".into(), opt(ev.error));
    let delay_ms = ev.retry.and(ev.delay).map(|ns| ns as f64 / 1e6);
    f.insert("delay_ms".into(), delay_ms.map_or(Value::Null, Value::from));
    f.insert("reason".into(), if ev.retry.is_some() { Value::Null } else { opt(ev.reason) });
    f.insert("budget".into(), opt(ev.budget));
    f.insert("idempotency_key".into(), ev.key.to_owned().into());
    f.insert("correlation_id".into(), ev.correlation_id.unwrap_or(ev.key).to_owned().into());
    LogRecord { level, message, fields: f }
}

/// Reads an event as hosts send it and returns its record: `{"event":
/// "retry" | "give_up", "attempt", "max_attempts", "retry", "category",
/// "delay" (ns), "reason", "budget", "error", "idempotency_key",
/// "correlation_id"}` (`null` or absent where it does not apply).
///
/// # Errors
/// `missing_field` (`event`, `attempt`, `idempotency_key`; a retry's
/// `retry`), `invalid_value` (an unknown `event`), `invalid_type`,
/// `out_of_range`, `unknown_key`, naming the field.
pub fn record_of(v: &Value) -> Result<LogRecord> {
    let mut o = Obj::new(v, "")?;
    let missing = |o: &Obj<'_>, k: &str| Error::new(ErrorCode::MissingField, o.field(k), "is required");
    let (kind, kind_field) = o.str("event", &[])?.ok_or_else(|| missing(&o, "event"))?;
    let is_retry = match kind {
        "retry" => true,
        "give_up" => false,
        other => {
            return Err(Error::new(
                ErrorCode::InvalidValue,
                kind_field,
                format!("must be \"retry\" or \"give_up\", got {other:?}"),
            ))
        }
    };
    let attempt = small(&mut o, "attempt")?.ok_or_else(|| missing(&o, "attempt"))?;
    let max_attempts = small(&mut o, "max_attempts")?.unwrap_or(0);
    let retry = small(&mut o, "retry")?;
    if is_retry && retry.is_none() {
        return Err(missing(&o, "retry"));
    }
    let delay = match o.take("delay", &[])? {
        Some((d, f)) => Some(uint(d, &f, 0, u64::MAX)?),
        None => None,
    };
    let category = text(&mut o, "category")?;
    let reason = text(&mut o, "reason")?;
    let budget = text(&mut o, "budget")?;
    let error = text(&mut o, "error")?;
    let key = text(&mut o, "idempotency_key")?.ok_or_else(|| missing(&o, "idempotency_key"))?;
    let correlation_id = text(&mut o, "correlation_id")?;
    o.finish()?;
    Ok(record(&LogEvent {
        retry: if is_retry { retry } else { None },
        attempt,
        max_attempts,
        category: category.as_deref(),
        delay,
        reason: reason.as_deref(),
        budget: budget.as_deref(),
        error: error.as_deref(),
        key: &key,
        correlation_id: correlation_id.as_deref(),
    }))
}

fn small(o: &mut Obj<'_>, k: &'static str) -> Result<Option<u32>> {
    Ok(o.uint(k, &[], 0, u64::from(u32::MAX))?.map(|n| n as u32))
}

fn text(o: &mut Obj<'_>, k: &'static str) -> Result<Option<String>> {
    Ok(o.str(k, &[])?.map(|(s, _)| s.to_owned()))
}

/// Reads an event's JSON text and returns its record as JSON (the hosts' entry).
///
/// # Errors
/// `invalid_json` and every error of [`record_of`].
pub fn record_json(text: &str) -> Result<Value> {
    let v = crate::doc::parse_json(text)?;
    record_of(&v).map(|r| r.to_json_value())
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn a_retry_is_a_warning_with_every_field() {
        let r = record(&LogEvent {
            retry: Some(1),
            attempt: 1,
            max_attempts: 3,
            category: Some("server_error"),
            delay: Some(100 * MS),
            error: Some("httpx.ConnectTimeout"),
            key: "k-1",
            ..Default::default()
        });
        assert_eq!(r.level, LogLevel::Warn);
        assert_eq!(r.message, "attempt 1 of 3 failed (server_error: httpx.ConnectTimeout); retry 1 in 100ms");
        let keys: Vec<_> = r.fields.keys().map(String::as_str).collect();
        let mut want = FIELDS.to_vec();
        want.sort_unstable();
        assert_eq!(keys, want, "every field, always");
        assert_eq!(r.fields["delay_ms"], json!(100.0));
        assert_eq!(r.fields["reason"], Value::Null);
        assert_eq!(r.fields["correlation_id"], json!("k-1"), "the key when the caller gives none");
    }

    #[test]
    fn give_ups_are_errors_only_when_a_limit_ran_out() {
        let ev = |reason| LogEvent {
            attempt: 2,
            max_attempts: 2,
            category: Some("client_error"),
            reason: Some(reason),
            key: "k",
            correlation_id: Some("req-7"),
            ..Default::default()
        };
        let r = record(&ev("attempts_exhausted"));
        assert_eq!(r.level, LogLevel::Error);
        assert_eq!(r.message, "gave up after 2 attempts: attempts_exhausted (last failure: client_error)");
        assert_eq!((r.fields["retry"].clone(), r.fields["delay_ms"].clone()), (Value::Null, Value::Null));
        assert_eq!(r.fields["correlation_id"], json!("req-7"));
        for reason in ["not_retryable", "server_declined", "cancelled"] {
            assert_eq!(record(&ev(reason)).level, LogLevel::Info, "{reason}");
        }
        for reason in EXHAUSTION_REASONS.iter().map(|r| r.code()).chain(["breaker_open"]) {
            assert_eq!(record(&ev(reason)).level, LogLevel::Error, "{reason}");
        }
        let b = record(&LogEvent { budget: Some("b"), attempt: 1, ..ev("budget_exhausted") });
        assert_eq!(b.message, "gave up after 1 attempt: budget_exhausted (last failure: client_error) (budget \"b\")");
    }

    #[test]
    fn hosts_send_events_as_json() {
        let r = record_json(
            r#"{"event": "retry", "attempt": 2, "retry": 2, "max_attempts": 4, "category": "timeout",
                "delay": 250000000, "error": "TimeoutError", "idempotency_key": "k", "reason": null}"#,
        )
        .unwrap();
        assert_eq!(r["level"], "warn");
        assert_eq!(r["message"], "attempt 2 of 4 failed (timeout: TimeoutError); retry 2 in 250ms");
        assert_eq!(r["fields"]["delay_ms"], json!(250.0));
        let bad = [
            (r#"{"attempt": 1, "idempotency_key": "k"}"#, "missing_field", "event"),
            (r#"{"event": "sleep", "attempt": 1, "idempotency_key": "k"}"#, "invalid_value", "event"),
            (r#"{"event": "retry", "attempt": 1, "idempotency_key": "k"}"#, "missing_field", "retry"),
            (r#"{"event": "give_up", "attempt": -1, "idempotency_key": "k"}"#, "out_of_range", "attempt"),
            (r#"{"event": "give_up", "attempt": 1}"#, "missing_field", "idempotency_key"),
            (r#"{"event": "give_up", "attempt": 1, "idempotency_key": "k", "wait": 1}"#, "unknown_key", "wait"),
        ];
        for (text, code, field) in bad {
            let e = record_json(text).unwrap_err();
            assert_eq!((e.code(), e.field()), (code, field), "{text}");
        }
    }
}

//! The storage protocol of idempotency records, as data: the schema and the
//! atomic statements of each SQL dialect, the Redis scripts, the row codec
//! and the stored-response format. Hosts execute these texts with their own
//! drivers and keep no SQL of their own (docs/idempotency.md, "Stores").
//!
//! Every text is written once with `{name}` markers (in `store_sql.rs`) and
//! rendered here in each placeholder style its drivers take, with the
//! parameter order:
//!
//! - `qmark`: `?` per occurrence (SQLite drivers, mysql2, the `mariadb`
//!   connector); a name used twice is bound twice;
//! - `numbered`: `$1`, `$2`, … numbered by first occurrence (PostgreSQL:
//!   node `pg`, psycopg 3's raw cursors); a name used twice keeps its number;
//! - `format`: `%s` per occurrence (PyMySQL, mysqlclient).
//!
//! The document is [`store_protocol`]; hosts read it from the core's tables
//! (`host_tables()["store_protocol"]`), so every runtime runs the same bytes.

use super::store_sql as sql;
use super::{IdempotencyRecord, RecordConfig, RecordState, StoredResponse};
use crate::json::{Map, Value};
use crate::{Error, ErrorCode, Result};

/// The version of the store protocol: the schema, the statements and the
/// codec. A change to any of them that a stored row or a running peer would
/// notice gets a new version.
pub const STORE_PROTOCOL_VERSION: u32 = 1;

/// The longest `storage_key` every store indexes (ASCII bytes): pass it to
/// [`storage_key`](super::storage_key).
pub const STORE_KEY_MAX_LEN: usize = 255;

/// How long a Redis record outlives its logical expiry before its TTL drops
/// it, absorbing ordinary clock skew between the application and Redis.
pub const REDIS_SLACK_MS: u64 = 60_000;

/// The response headers a store keeps for replay (lowercase); others are dropped.
pub const REPLAYED_HEADERS: [&str; 10] = [
    "cache-control",
    "content-language",
    "content-location",
    "content-type",
    "etag",
    "expires",
    "last-modified",
    "link",
    "location",
    "vary",
];

/// The placeholder styles a statement is rendered in.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Placeholder {
    /// `?` per occurrence.
    Qmark,
    /// `$n` numbered by first occurrence.
    Numbered,
    /// `%s` per occurrence.
    Format,
}

impl Placeholder {
    /// The style's name in the document.
    pub const fn code(self) -> &'static str {
        match self {
            Placeholder::Qmark => "qmark",
            Placeholder::Numbered => "numbered",
            Placeholder::Format => "format",
        }
    }
}

/// Renders a `{name}` template in a placeholder style: the text and the
/// names to bind, in order.
pub fn render(template: &str, style: Placeholder) -> (String, Vec<&str>) {
    let mut text = String::with_capacity(template.len());
    let mut params: Vec<&str> = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        text.push_str(&rest[..open]);
        let close = rest[open..].find('}').map(|c| open + c).unwrap_or(rest.len());
        let name = &rest[open + 1..close.min(rest.len())];
        match style {
            Placeholder::Qmark => {
                text.push('?');
                params.push(name);
            }
            Placeholder::Format => {
                text.push_str("%s");
                params.push(name);
            }
            Placeholder::Numbered => {
                let n = match params.iter().position(|p| *p == name) {
                    Some(i) => i + 1,
                    None => {
                        params.push(name);
                        params.len()
                    }
                };
                text.push('$');
                text.push_str(&n.to_string());
            }
        }
        rest = rest.get(close + 1..).unwrap_or("");
    }
    text.push_str(rest);
    (text, params)
}

/// A SQL dialect of the protocol.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Dialect {
    /// SQLite 3.35 or later (RETURNING, upsert).
    Sqlite,
    /// PostgreSQL 10 or later.
    Postgresql,
    /// MariaDB 10.2+ or MySQL 8.0.16+ (enforced CHECK constraints), InnoDB.
    Mysql,
}

impl Dialect {
    /// Every dialect, in the document's order.
    pub const ALL: [Dialect; 3] = [Dialect::Sqlite, Dialect::Postgresql, Dialect::Mysql];

    /// The dialect's name in the document.
    pub const fn code(self) -> &'static str {
        match self {
            Dialect::Sqlite => "sqlite",
            Dialect::Postgresql => "postgresql",
            Dialect::Mysql => "mysql",
        }
    }

    /// The placeholder styles its drivers take.
    pub const fn styles(self) -> &'static [Placeholder] {
        match self {
            Dialect::Sqlite => &[Placeholder::Qmark],
            Dialect::Postgresql => &[Placeholder::Numbered],
            Dialect::Mysql => &[Placeholder::Qmark, Placeholder::Format],
        }
    }

    /// The schema statements, to run in order.
    pub fn schema(self) -> &'static [&'static str] {
        match self {
            Dialect::Sqlite => &sql::SQLITE_SCHEMA,
            Dialect::Postgresql => &sql::POSTGRESQL_SCHEMA,
            Dialect::Mysql => &sql::MYSQL_SCHEMA,
        }
    }

    /// The operations and their templates.
    pub fn statements(self) -> Vec<(&'static str, &'static str)> {
        let claim: &[(&str, &str)] = match self {
            Dialect::Sqlite => &[("claim", sql::SQLITE_CLAIM)],
            Dialect::Postgresql => &[("claim", sql::POSTGRESQL_CLAIM)],
            Dialect::Mysql => &[("claim_insert", sql::MYSQL_CLAIM_INSERT), ("claim_update", sql::MYSQL_CLAIM_UPDATE)],
        };
        let (renew, release, cleanup) = match self {
            Dialect::Sqlite => (sql::SQLITE_RENEW, sql::SQLITE_RELEASE, sql::SQLITE_CLEANUP),
            Dialect::Postgresql => (sql::RENEW, sql::RELEASE, sql::POSTGRESQL_CLEANUP),
            Dialect::Mysql => (sql::RENEW, sql::RELEASE, sql::MYSQL_CLEANUP),
        };
        let mut out = claim.to_vec();
        out.extend([
            ("read", sql::READ),
            ("complete", sql::COMPLETE),
            ("renew", renew),
            ("release", release),
            ("cleanup", cleanup),
        ]);
        out
    }

    /// How this dialect claims, for the document.
    const fn claim_steps(self) -> &'static str {
        match self {
            Dialect::Sqlite | Dialect::Postgresql => {
                "Run `claim` in its own short transaction and commit: a returned row \
                 (fence, created_ms) means claimed; no row means not claimed: `read` the row and \
                 decide() on it."
            }
            Dialect::Mysql => {
                "Run `claim_insert` in autocommit: success means claimed (fence 1, created_ms = now). \
                 On a duplicate key (error 1062), run `claim_update` and, when it changed one row, \
                 `read` in the same short transaction for the fence and created_ms, then commit; \
                 zero rows means not claimed: `read` the row and decide() on it. A deadlock (1213) \
                 or lock wait timeout (1205) retries the claim."
            }
        }
    }
}

fn statement(template: &str, styles: &[Placeholder]) -> Value {
    let forms: Map<String, Value> = styles
        .iter()
        .map(|s| {
            let (text, params) = render(template, *s);
            (s.code().to_owned(), json!({"text": text, "params": params}))
        })
        .collect();
    json!(forms)
}

const LUA: [(&str, &str, &[&str]); 4] = [
    (
        "claim",
        sql::LUA_CLAIM,
        &[
            "key",
            "fingerprint",
            "now",
            "lease_until_ms",
            "expires_at_ms",
            "failure_handling",
            "release_categories",
            "slack_ms",
        ],
    ),
    (
        "complete",
        sql::LUA_COMPLETE,
        &[
            "fence",
            "created_ms",
            "state",
            "lease_until_ms",
            "completed_ms",
            "expires_at_ms",
            "response",
            "failure_category",
            "slack_ms",
        ],
    ),
    ("renew", sql::LUA_RENEW, &["fence", "created_ms", "lease_until_ms", "expires_at_ms", "slack_ms"]),
    ("release", sql::LUA_RELEASE, &["fence", "created_ms", "now"]),
];

/// The type of each column in the row codec: `text`, `integer`, or `json`
/// (the canonical JSON text of a [`StoredResponse`]), and whether it may be null.
const COLUMN_TYPES: [(&str, &str, Option<&str>, bool); 11] = [
    ("storage_key", "text", None, false),
    ("idem_key", "text", Some("key"), false),
    ("fingerprint", "text", Some("fingerprint"), false),
    ("state", "text", Some("state"), false),
    ("fence", "integer", Some("fence"), false),
    ("created_ms", "integer", Some("created_ms"), false),
    ("lease_until_ms", "integer", Some("lease_until_ms"), false),
    ("completed_ms", "integer", Some("completed_ms"), true),
    ("expires_at_ms", "integer", Some("expires_at_ms"), false),
    ("response", "json", Some("response"), true),
    ("failure_category", "text", Some("failure_category"), true),
];

/// Where each statement parameter's value comes from.
const PARAMS: [(&str, &str); 15] = [
    ("storage_key", "storage_key(key, key_max_len)"),
    ("key", "the request's idempotency key"),
    ("fingerprint", "the request's fingerprint"),
    ("now", "the caller's wall clock, Unix epoch ms"),
    ("lease_until_ms", "claim: the Claim of decide(None, key, fingerprint, now, config); complete and renew: the record complete() or renew_lease() returns"),
    ("expires_at_ms", "as lease_until_ms"),
    ("failure_handling", "the config's failure handling: by_category, replay or execute"),
    ("release_categories", "the config's release categories joined with ','"),
    ("state", "the record complete() returns"),
    ("completed_ms", "the record complete() returns"),
    ("response", "the record complete() returns, in the response format (null for none)"),
    ("failure_category", "the record complete() returns"),
    ("fence", "the holder's claim"),
    ("created_ms", "the holder's claim"),
    ("limit", "the cleanup batch size: repeat until fewer rows are deleted"),
];

/// Returns the store protocol document: the schema and statements of each
/// SQL dialect in each placeholder style with their parameter order, the
/// Redis scripts with their arguments, the row codec's columns and the
/// stored-response format. The same document in every runtime; its
/// canonical JSON's SHA-256 is pinned by the shared vectors.
pub fn store_protocol() -> Value {
    let dialects: Map<String, Value> = Dialect::ALL
        .iter()
        .map(|d| {
            let statements: Map<String, Value> =
                d.statements().into_iter().map(|(op, t)| (op.to_owned(), statement(t, d.styles()))).collect();
            let doc = json!({
                "schema": d.schema(),
                "styles": d.styles().iter().map(|s| s.code()).collect::<Vec<_>>(),
                "claim_steps": d.claim_steps(),
                "statements": statements,
            });
            (d.code().to_owned(), doc)
        })
        .collect();
    let scripts: Map<String, Value> =
        LUA.iter().map(|(op, lua, args)| ((*op).to_owned(), json!({"lua": lua, "args": args}))).collect();
    json!({
        "version": STORE_PROTOCOL_VERSION,
        "table": sql::TABLE,
        "key_max_len": STORE_KEY_MAX_LEN,
        "defaults": {
            "failure_handling": RecordConfig::default().failure_handling().code(),
            "release_categories": RecordConfig::default().release_categories(),
            "lease_ms": RecordConfig::default().lease_ms(),
            "retention_ms": RecordConfig::default().retention_ms(),
        },
        "columns": COLUMN_TYPES.iter().map(|(name, ty, field, nullable)| json!({
            "name": name, "type": ty, "field": field, "nullable": nullable,
        })).collect::<Vec<_>>(),
        "params": PARAMS.iter().map(|(name, source)| json!({"name": name, "source": source})).collect::<Vec<_>>(),
        "dialects": dialects,
        "redis": {
            "key": "<prefix>:<storage_key>",
            "fields": "the columns but storage_key, as decimal strings; null columns are absent",
            "slack_ms": REDIS_SLACK_MS,
            "maxmemory_policy": "noeviction",
            "scripts": scripts,
        },
        "response": {
            "format": "the RFC 8785 canonical JSON of {status, headers: [[name, value], ...], body}",
            "http_body": "HTTP middleware: the body as a JSON string when it is UTF-8 text, else {\"base64\": the bytes in standard base64}; null when empty",
            "replayed_headers": REPLAYED_HEADERS,
            "replay_header": ["idempotent-replayed", "true"],
        },
    })
}

/// The value of one column of a record row.
#[derive(Clone, Debug, PartialEq)]
pub enum ColumnValue {
    /// SQL NULL.
    Null,
    /// An integer column.
    Integer(u64),
    /// A text column (including the response's canonical JSON).
    Text(String),
}

impl ColumnValue {
    fn to_json(&self) -> Value {
        match self {
            ColumnValue::Null => Value::Null,
            ColumnValue::Integer(n) => json!(n),
            ColumnValue::Text(s) => json!(s),
        }
    }
}

/// Writes a stored response in its stored form: canonical JSON.
///
/// # Errors
/// The canonicalisation errors of [`canonicalize`](super::canonicalize)
/// (a number a double cannot hold).
pub fn encode_response(response: &StoredResponse) -> Result<String> {
    super::canonicalize(&crate::json::ToJson::to_value(response))
}

/// Returns a record's row: each column of the protocol with its value, in order.
///
/// # Errors
/// `out_of_range` (field the column) for an integer past 2^63 − 1, which
/// PostgreSQL and MySQL BIGINT cannot hold; the errors of [`encode_response`].
pub fn record_to_row(record: &IdempotencyRecord, storage_key: &str) -> Result<Vec<(&'static str, ColumnValue)>> {
    let int = |name: &'static str, v: u64| {
        if v > i64::MAX as u64 {
            return Err(Error::new(ErrorCode::OutOfRange, name, "is past 2^63 - 1"));
        }
        Ok((name, ColumnValue::Integer(v)))
    };
    let text = |name: &'static str, v: &str| (name, ColumnValue::Text(v.to_owned()));
    let opt_text = |name: &'static str, v: Option<String>| (name, v.map_or(ColumnValue::Null, ColumnValue::Text));
    Ok(vec![
        text("storage_key", storage_key),
        text("idem_key", &record.key),
        text("fingerprint", &record.fingerprint),
        text("state", record.state.as_str()),
        int("fence", record.fence)?,
        int("created_ms", record.created_ms)?,
        int("lease_until_ms", record.lease_until_ms)?,
        match record.completed_ms {
            Some(v) => int("completed_ms", v)?,
            None => ("completed_ms", ColumnValue::Null),
        },
        int("expires_at_ms", record.expires_at_ms)?,
        opt_text("response", record.response.as_ref().map(encode_response).transpose()?),
        opt_text("failure_category", record.failure_category.clone()),
    ])
}

/// Returns a record's row as a JSON object (column → value).
///
/// # Errors
/// As [`record_to_row`].
pub fn record_to_row_json(record: &IdempotencyRecord, storage_key: &str) -> Result<Value> {
    let row = record_to_row(record, storage_key)?;
    Ok(Value::Object(row.iter().map(|(k, v)| ((*k).to_owned(), v.to_json())).collect()))
}

/// Reads a record from a row given as a JSON object (column → value);
/// integers may be numbers or decimal strings (node `pg` returns BIGINT as
/// a string). Returns the record and its storage key.
///
/// # Errors
/// `missing_field` for an absent non-null column, `invalid_type` for a value
/// of the wrong type, an unknown state or an unreadable response.
pub fn record_from_row(row: &Value) -> Result<(IdempotencyRecord, String)> {
    let get = |name: &str| row.get(name).filter(|v| !v.is_null());
    let need =
        |name: &str| get(name).ok_or_else(|| Error::new(ErrorCode::MissingField, name.to_owned(), "is required"));
    let bad = |name: &str, why: &str| Error::new(ErrorCode::InvalidType, name.to_owned(), why.to_owned());
    let text = |name: &str| need(name)?.as_str().map(str::to_owned).ok_or_else(|| bad(name, "must be text"));
    let int_of = |name: &str, v: &Value| {
        match v {
            Value::Number(n) => n.as_u64(),
            Value::String(s) => s.parse().ok(),
            _ => None,
        }
        .ok_or_else(|| bad(name, "must be a non-negative integer"))
    };
    let int = |name: &str| int_of(name, need(name)?);
    let opt_int = |name: &str| get(name).map(|v| int_of(name, v)).transpose();
    let state = match text("state")?.as_str() {
        "processing" => RecordState::Processing,
        "succeeded" => RecordState::Succeeded,
        "failed" => RecordState::Failed,
        _ => return Err(bad("state", "must be processing, succeeded or failed")),
    };
    let response = match get("response") {
        None => None,
        Some(Value::String(s)) => {
            let r = crate::doc::parse_any_size(s).and_then(|r| StoredResponse::from_value(r, "response"));
            Some(r.map_err(|e| bad("response", e.reason()))?)
        }
        Some(_) => return Err(bad("response", "must be text")),
    };
    let failure_category = match get("failure_category") {
        None => None,
        Some(v) => Some(v.as_str().map(str::to_owned).ok_or_else(|| bad("failure_category", "must be text"))?),
    };
    let record = IdempotencyRecord {
        key: text("idem_key")?,
        fingerprint: text("fingerprint")?,
        state,
        fence: int("fence")?,
        created_ms: int("created_ms")?,
        lease_until_ms: int("lease_until_ms")?,
        completed_ms: opt_int("completed_ms")?,
        expires_at_ms: int("expires_at_ms")?,
        response,
        failure_category,
    };
    Ok((record, text("storage_key")?))
}

/// The failure-handling and release-category parameters of a claim, as the
/// statements take them.
pub fn claim_release_params(config: &RecordConfig) -> (&'static str, String) {
    (config.failure_handling().code(), config.release_categories().join(","))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_each_style() {
        let t = "a = {x} AND b = {y} OR c = {x}";
        assert_eq!(render(t, Placeholder::Qmark), ("a = ? AND b = ? OR c = ?".into(), vec!["x", "y", "x"]));
        assert_eq!(render(t, Placeholder::Numbered), ("a = $1 AND b = $2 OR c = $1".into(), vec!["x", "y"]));
        assert_eq!(render(t, Placeholder::Format), ("a = %s AND b = %s OR c = %s".into(), vec!["x", "y", "x"]));
        assert_eq!(render("no params", Placeholder::Numbered), ("no params".into(), vec![]));
    }

    #[test]
    fn texts_have_no_percent_no_double_quotes_and_known_params() {
        let known = [
            "storage_key",
            "key",
            "fingerprint",
            "now",
            "lease_until_ms",
            "expires_at_ms",
            "failure_handling",
            "release_categories",
            "state",
            "completed_ms",
            "response",
            "failure_category",
            "fence",
            "created_ms",
            "limit",
        ];
        for d in Dialect::ALL {
            for (op, t) in d.statements() {
                assert!(!t.contains('%') && !t.contains('"'), "{} {op}", d.code());
                for p in render(t, Placeholder::Qmark).1 {
                    assert!(known.contains(&p), "{} {op}: {p}", d.code());
                }
            }
        }
    }

    #[test]
    fn release_params_follow_the_config() {
        use super::super::FailureHandling;
        let d = RecordConfig::default();
        assert_eq!(
            claim_release_params(&d),
            ("by_category", "connect,not_processed,overloaded,resource_exhausted".into())
        );
        let c = d.with_failure_handling(FailureHandling::Execute).with_release_categories(["timeout"]);
        assert_eq!(claim_release_params(&c), ("execute", "timeout".into()));
    }

    #[test]
    fn unreadable_rows_are_typed_errors() {
        let r = IdempotencyRecord {
            key: "k".into(),
            fingerprint: "f".into(),
            state: RecordState::Processing,
            fence: 1,
            created_ms: 1,
            lease_until_ms: 2,
            completed_ms: None,
            expires_at_ms: 9,
            response: None,
            failure_category: None,
        };
        let row = record_to_row_json(&r, "k").unwrap();
        let with = |k: &str, v: Value| {
            let mut x = row.clone();
            x[k] = v;
            record_from_row(&x).unwrap_err()
        };
        let e = with("state", json!("running"));
        assert_eq!((e.code(), e.field()), ("invalid_type", "state"));
        let e = with("fence", Value::Null);
        assert_eq!((e.code(), e.field()), ("missing_field", "fence"));
        assert_eq!(with("fence", json!(-1)).code(), "invalid_type");
        assert_eq!(with("response", json!("{")).code(), "invalid_type");
    }

    #[test]
    fn rows_round_trip() {
        let r = IdempotencyRecord {
            key: "k".into(),
            fingerprint: "f".into(),
            state: RecordState::Failed,
            fence: 3,
            created_ms: 1,
            lease_until_ms: 2,
            completed_ms: Some(2),
            expires_at_ms: 9,
            response: Some(StoredResponse { status: Some(503), headers: vec![], body: Some(json!({"b": 1, "a": 2})) }),
            failure_category: Some("connect".into()),
        };
        let row = record_to_row_json(&r, "k").unwrap();
        assert_eq!(row["response"], json!(r#"{"body":{"a":2,"b":1},"headers":[],"status":503}"#));
        assert_eq!(record_from_row(&row).unwrap(), (r.clone(), "k".to_owned()));
        let mut as_strings = row.clone();
        as_strings["fence"] = json!("3");
        assert_eq!(record_from_row(&as_strings).unwrap().0, r);
        let big = IdempotencyRecord { fence: u64::MAX, ..r };
        assert_eq!(record_to_row(&big, "k").unwrap_err().code(), "out_of_range");
    }
}

//! Classification: what a failed attempt was, and whether it may be retried.
//!
//! The input is what the host saw of one failed attempt ([`Failure`]): an
//! HTTP status, a gRPC code, the flattened cause chain of error names, the
//! method, the caller's declarations and the response headers. The output
//! is a [`Verdict`]: a [`Category`], a [`RetryRule`], whether the request is
//! safe to repeat, and the server's delay and hints.
//!
//! It is an allow-list: what nothing knows is `unknown`, never retried.
//! Precedence (docs/classification-rules.md, "Precedence"): the retry-exhausted marker, `cancelled` names and
//! open-breaker names decide first wherever they stand in the chain; then
//! the user's rules, first match wins; then the built-in tables — Smithy's
//! `@retryable` trait, a gRPC code (not OK), then an HTTP status the table knows, then the names in chain
//! order (the first name any table knows decides; wrappers that defer to
//! their cause decide only when nothing else does).

use crate::doc::{self, Obj};
use crate::json::Value;
use crate::retry_after::{read_headers, ServerAdvice};
use crate::{Error, ErrorCode, Result};

/// The name a binding puts in the cause chain for retrycore's own give-up
/// error (a `GiveUp` marked exhausted), so outer layers see `retry_exhausted`.
pub const RETRY_EXHAUSTED_NAME: &str = "retrycore:retry_exhausted";

/// The statuses a host takes from an error's attributes (`status`,
/// `statusCode`, `response.status`, botocore's `HTTPStatusCode`, …): the
/// three-digit codes, 100–999 ([RFC 9110 §15](https://www.rfc-editor.org/rfc/rfc9110#section-15)).
/// Any other value there is not an HTTP status, and the error is
/// classified by its names; see [`seen_status`].
pub const SEEN_STATUS: (u16, u16) = (100, 999);

/// Returns the HTTP status an integer found on an error's attributes
/// stands for: `Some` in [`SEEN_STATUS`], else `None` (the attribute is
/// ignored). Every host applies this one rule.
pub const fn seen_status(n: i128) -> Option<u16> {
    if n >= SEEN_STATUS.0 as i128 && n <= SEEN_STATUS.1 as i128 {
        Some(n as u16)
    } else {
        None
    }
}

/// The name a binding puts in the cause chain for retrycore's own
/// open-breaker rejection.
pub const BREAKER_OPEN_NAME: &str = "retrycore:breaker_open";

/// The prefix of a browser `DOMException`'s name in a cause chain: a
/// `DOMException` named `N` is `DOMException:N` (`core/data/names.tsv`).
pub const DOM_EXCEPTION_PREFIX: &str = "DOMException:";

/// The name a JS binding appends after the cause chain of a fetch network
/// `TypeError` (see [`FETCH_FAILURE_MESSAGES`]; a row of `core/data/names.tsv`).
pub const FETCH_NETWORK_NAME: &str = "FetchNetworkError";

/// The name a host adds to a cause chain when the error itself says the
/// request was never sent ([`Reads::connect_phase`]; a row of
/// `core/data/names.tsv` with the `connecting` flag): a timeout in that
/// chain is a connect timeout ([`Category::Connect`]).
pub const CONNECTING_NAME: &str = "retrycore:connecting";

/// Where a host reads a response: the attribute paths (dotted) of its
/// status, headers and method, and the attribute that must be present for
/// a value to be taken as this shape (`guard`; empty: the status alone).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct ResponseShape {
    /// The clients that return it, for documentation.
    pub clients: &'static str,
    /// The integer status.
    pub status: &'static str,
    /// The headers (a mapping, or pairs).
    pub headers: &'static str,
    /// The request's method (empty: the shape does not carry it).
    pub method: &'static str,
    /// An attribute the shape must have (empty: none).
    pub guard: &'static str,
}

/// What a host reads from an error or a returned value beyond its names:
/// the one list of attribute paths per ecosystem, so every host reads the
/// same clients the same way (docs/classification-rules.md, "What is read").
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Reads {
    /// Paths of an error's HTTP method, tried in order on each error of the
    /// chain, outermost first; the first string found is the failure's
    /// method unless the caller or the session gives one.
    pub error_method: &'static [&'static str],
    /// The response shapes, tried in order: on a value a call returns (a
    /// non-2xx one is a failure), and on a value given where a failure is.
    pub responses: &'static [ResponseShape],
    /// An error attribute and the values by which it says the request was
    /// never sent: the host then adds [`CONNECTING_NAME`] to the chain.
    pub connect_phase: &'static [(&'static str, &'static [&'static str])],
}

/// What the Python host reads: requests and httpx errors carry the
/// request (`e.request.method`), aiohttp's `ClientResponseError` its
/// `request_info`; `requests.Response` and `httpx.Response` have
/// `status_code`, aiohttp's `ClientResponse` `status` beside its
/// `request_info`, urllib3's `HTTPResponse` and `http.client`'s `status`
/// beside `getheader`. (aiohttp's deprecated `code` property is never read.)
pub const PYTHON_READS: Reads = Reads {
    error_method: &["request.method", "request_info.method"],
    responses: &[
        ResponseShape {
            clients: "requests, httpx",
            status: "status_code",
            headers: "headers",
            method: "request.method",
            guard: "",
        },
        ResponseShape {
            clients: "aiohttp",
            status: "status",
            headers: "headers",
            method: "method",
            guard: "request_info",
        },
        ResponseShape {
            clients: "urllib3, http.client",
            status: "status",
            headers: "headers",
            method: "",
            guard: "getheader",
        },
    ],
    connect_phase: &[],
};

/// What the JS hosts read: axios errors carry `config.method` (lower
/// case), got's `options.method`, ky's `request.method`; got's
/// `TimeoutError` names the phase that timed out in `event`. Responses: a
/// fetch `Response` (`ok` beside `status`), an axios response (`config`),
/// undici's `request()` result (`statusCode`, `body`) and node:http's
/// `IncomingMessage` (`statusCode`, `httpVersion`).
pub const NODE_READS: Reads = Reads {
    error_method: &["config.method", "options.method", "request.method"],
    responses: &[
        ResponseShape { clients: "fetch, ky", status: "status", headers: "headers", method: "", guard: "ok" },
        ResponseShape {
            clients: "axios",
            status: "status",
            headers: "headers",
            method: "config.method",
            guard: "config",
        },
        ResponseShape { clients: "undici", status: "statusCode", headers: "headers", method: "", guard: "body" },
        ResponseShape {
            clients: "node:http",
            status: "statusCode",
            headers: "headers",
            method: "req.method",
            guard: "httpVersion",
        },
    ],
    connect_phase: &[("event", &["lookup", "connect", "secureConnect"])],
};

impl Reads {
    /// The table as JSON, for [`host_tables`](crate::tables::host_tables).
    pub fn to_json_value(&self) -> Value {
        let responses: Vec<Value> = self
            .responses
            .iter()
            .map(|r| {
                json!({"clients": r.clients, "status": r.status, "headers": r.headers,
                    "method": r.method, "guard": r.guard})
            })
            .collect();
        let phase: Vec<Value> = self.connect_phase.iter().map(|(a, v)| json!({"attribute": a, "values": v})).collect();
        json!({"error_method": self.error_method, "responses": responses, "connect_phase": phase})
    }
}

/// The response header a service sets when it gave up retrying, so its
/// callers do not retry again (`x-retry-exhausted: 1`).
pub const RETRY_EXHAUSTED_HEADER: &str = "x-retry-exhausted";

/// What kind of failure an attempt met.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Category {
    /// The request never left: connection refused, DNS failure, connect timeout.
    Connect,
    /// The server says it did not process the request (408, 425).
    NotProcessed,
    /// The server is overloaded and says so (429, 503 with Retry-After, RESOURCE_EXHAUSTED, a pushback).
    Overloaded,
    /// The connection dropped after the request may have been sent.
    ConnectionLost,
    /// The outcome is unknown: the request may or may not have run.
    Timeout,
    /// The server failed (500, 502, 503 without Retry-After, other 5xx, INTERNAL, UNKNOWN).
    ServerError,
    /// A local resource ran out (pool timeout, rejected execution).
    ResourceExhausted,
    /// 409 (with an idempotency key: the original is still in progress).
    Conflict,
    /// The request is wrong and will stay wrong (400, 405, 413, 422, 501, …).
    InvalidRequest,
    /// Not authenticated or not allowed (401, 403, 407, 511).
    Auth,
    /// 404, 410.
    NotFound,
    /// A local circuit breaker refused the call.
    OpenBreaker,
    /// An inner layer already retried and gave up.
    RetryExhausted,
    /// The caller cancelled.
    Cancelled,
    /// A bug in the calling code (TypeError, NullPointerException, …).
    ProgrammingError,
    /// Nothing knows it; never retried.
    Unknown,
}

/// The messages of the engines' fetch network failures: a JS `TypeError`
/// with one of these messages (or whose cause chain holds a network code,
/// [`is_network_code`]) is a fetch network error, named
/// `FetchNetworkError` after its cause chain (`docs/classification-rules.md`).
/// Node's undici, Chromium, Firefox and Safari, in that order.
pub const FETCH_FAILURE_MESSAGES: &[&str] =
    &["fetch failed", "Failed to fetch", "NetworkError when attempting to fetch resource.", "Load failed"];

/// Returns true for a system or undici network code (`ECONNRESET`,
/// `EAI_AGAIN`, `UND_ERR_SOCKET`): `E` and upper-case letters or digits,
/// or `UND_ERR_` and upper-case letters or underscores.
pub fn is_network_code(code: &str) -> bool {
    let b = code.as_bytes();
    if let Some(rest) = code.strip_prefix("UND_ERR_") {
        return !rest.is_empty() && rest.bytes().all(|c| c.is_ascii_uppercase() || c == b'_');
    }
    if let Some(rest) = code.strip_prefix("EAI_") {
        return !rest.is_empty() && rest.bytes().all(|c| c.is_ascii_uppercase());
    }
    b.len() > 1 && b[0] == b'E' && b[1..].iter().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
}

/// [`is_network_code`] as a regular expression, for hosts that test codes
/// with their own regex engine (the JS layer reads it from
/// [`host_tables`](crate::tables::host_tables)).
pub const NETWORK_CODE_PATTERN: &str = "^(E[A-Z0-9]+|EAI_[A-Z]+|UND_ERR_[A-Z_]+)$";

/// How many bits a category's index ([`Category::index`]) needs when a host
/// packs a verdict into one number: the packing width comes from here, and
/// the build fails if the categories outgrow it.
pub const CATEGORY_BITS: u32 = 5;

const _: () = assert!(Category::ALL.len() <= 1 << CATEGORY_BITS, "categories outgrew CATEGORY_BITS");

impl Category {
    /// Every category, in table order.
    pub const ALL: [Category; 16] = [
        Category::Connect,
        Category::NotProcessed,
        Category::Overloaded,
        Category::ConnectionLost,
        Category::Timeout,
        Category::ServerError,
        Category::ResourceExhausted,
        Category::Conflict,
        Category::InvalidRequest,
        Category::Auth,
        Category::NotFound,
        Category::OpenBreaker,
        Category::RetryExhausted,
        Category::Cancelled,
        Category::ProgrammingError,
        Category::Unknown,
    ];

    /// Returns the category's position in [`Category::ALL`].
    pub const fn index(self) -> u32 {
        self as u32
    }

    /// Returns the stable snake_case code (`"connection_lost"`, …).
    pub const fn code(self) -> &'static str {
        match self {
            Category::Connect => "connect",
            Category::NotProcessed => "not_processed",
            Category::Overloaded => "overloaded",
            Category::ConnectionLost => "connection_lost",
            Category::Timeout => "timeout",
            Category::ServerError => "server_error",
            Category::ResourceExhausted => "resource_exhausted",
            Category::Conflict => "conflict",
            Category::InvalidRequest => "invalid_request",
            Category::Auth => "auth",
            Category::NotFound => "not_found",
            Category::OpenBreaker => "open_breaker",
            Category::RetryExhausted => "retry_exhausted",
            Category::Cancelled => "cancelled",
            Category::ProgrammingError => "programming_error",
            Category::Unknown => "unknown",
        }
    }

    /// Parses a code.
    pub fn from_code(s: &str) -> Option<Category> {
        Category::ALL.iter().copied().find(|c| c.code() == s)
    }

    /// Returns the built-in retry rule of the category (docs/classification.md, "Categories").
    pub const fn default_rule(self) -> RetryRule {
        match self {
            Category::Connect | Category::NotProcessed | Category::Overloaded | Category::ResourceExhausted => {
                RetryRule::Always
            }
            Category::ConnectionLost | Category::Timeout | Category::ServerError => RetryRule::IfIdempotent,
            _ => RetryRule::Never,
        }
    }

    /// Returns true for the client errors a breaker counts as successes
    /// (invalid request, auth, not found, conflict).
    pub const fn is_client_error(self) -> bool {
        matches!(self, Category::InvalidRequest | Category::Auth | Category::NotFound | Category::Conflict)
    }

    /// Returns true for categories whose names decide before user rules.
    const fn is_priority(self) -> bool {
        matches!(self, Category::RetryExhausted | Category::Cancelled | Category::OpenBreaker)
    }
}

/// Whether a category may be retried.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum RetryRule {
    /// Retry whatever the method: nothing ran, or the server asks for it.
    Always,
    /// Retry only when repeating the request is safe (docs/classification-rules.md, "Idempotency gating").
    IfIdempotent,
    /// Never retry.
    Never,
}

impl RetryRule {
    /// Returns the stable code (`"if_idempotent"`, …).
    pub const fn code(self) -> &'static str {
        match self {
            RetryRule::Always => "always",
            RetryRule::IfIdempotent => "if_idempotent",
            RetryRule::Never => "never",
        }
    }

    /// Parses a code.
    pub fn from_code(s: &str) -> Option<RetryRule> {
        match s {
            "always" => Some(RetryRule::Always),
            "if_idempotent" => Some(RetryRule::IfIdempotent),
            "never" => Some(RetryRule::Never),
            _ => None,
        }
    }
}

/// A gRPC status code, 0 (OK) to 16 (UNAUTHENTICATED).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct GrpcCode(u8);

impl GrpcCode {
    /// OK.
    pub const OK: GrpcCode = GrpcCode(0);
    /// CANCELLED.
    pub const CANCELLED: GrpcCode = GrpcCode(1);
    /// UNAVAILABLE.
    pub const UNAVAILABLE: GrpcCode = GrpcCode(14);

    /// Creates a code from its number; `None` past 16.
    pub const fn new(code: u8) -> Option<GrpcCode> {
        if code <= 16 {
            Some(GrpcCode(code))
        } else {
            None
        }
    }

    /// Parses a number (`"14"`) or a name (`"UNAVAILABLE"`, any case).
    pub fn parse(s: &str) -> Option<GrpcCode> {
        if let Ok(n) = s.parse::<u8>() {
            return GrpcCode::new(n);
        }
        tables::GRPC_NAMES.iter().position(|n| n.eq_ignore_ascii_case(s)).map(|i| GrpcCode(i as u8))
    }

    /// Reads a code a caller gives as a number's decimal text or a name
    /// (`"14"`, `"UNAVAILABLE"`): the one rule every host applies to a
    /// failure's gRPC code.
    ///
    /// # Errors
    /// `invalid_value` naming `field` for anything else (`"17"`, `"NOPE"`).
    pub fn read(text: &str, field: &str) -> Result<GrpcCode> {
        GrpcCode::parse(text).ok_or_else(|| {
            let shown: String = text.chars().take(64).collect();
            Error::new(ErrorCode::InvalidValue, field.to_owned(), format!("not a gRPC status code: {shown:?}"))
        })
    }

    /// Returns the number.
    pub const fn number(self) -> u8 {
        self.0
    }

    /// Returns the upper-case name.
    pub fn name(self) -> &'static str {
        tables::GRPC_NAMES[self.0 as usize]
    }
}

/// The compiled classification tables (see `core/data/`).
#[allow(missing_docs)]
mod tables {
    use super::Category;
    include!(concat!(env!("OUT_DIR"), "/tables.rs"));
}

/// One row of a built-in table, for documentation.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct TableRow {
    /// The name, status or code.
    pub key: &'static str,
    /// The status or code number (0 for names).
    pub number: u16,
    /// The category code.
    pub category: &'static str,
    /// Flags (`qualified`, `defer`) for names.
    pub flags: &'static str,
    /// The ecosystem (`java`, `python`, `node`, `browser`, `dotnet`, `grpc`, `http`, …).
    pub ecosystem: &'static str,
    /// Source or reason.
    pub note: &'static str,
}

/// Every built-in name with its category, without the tables' notes (which
/// only documentation needs: `builtin_tables`, kept out of the wasm module).
pub fn builtin_names() -> impl Iterator<Item = (&'static str, Category)> {
    tables::EXACT.iter().map(|(name, c, _)| (*name, *c))
}

/// Returns every row of the built-in tables (names, HTTP statuses, gRPC codes).
pub fn builtin_tables() -> Vec<TableRow> {
    let mut rows = Vec::new();
    for (s, c, n) in tables::HTTP_ROWS {
        rows.push(TableRow { key: "", number: *s, category: c, flags: "", ecosystem: "http", note: n });
    }
    for (code, name, c, n) in tables::GRPC_ROWS {
        rows.push(TableRow { key: name, number: u16::from(*code), category: c, flags: "", ecosystem: "grpc", note: n });
    }
    for (name, c, f, e, n) in tables::NAME_ROWS {
        rows.push(TableRow { key: name, number: 0, category: c, flags: f, ecosystem: e, note: n });
    }
    rows
}

/// Flags of a built-in name.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct NameFlags(u8);

impl NameFlags {
    /// A wrapper that decides only when nothing else in the chain does.
    pub const fn defers(self) -> bool {
        self.0 & 1 != 0
    }
    /// A refused connection (counts as an attempt, takes no budget token).
    pub const fn refused(self) -> bool {
        self.0 & 2 != 0
    }
    /// Raised only while connecting, before the request was sent: a
    /// timeout the chain decides is a connect timeout ([`Category::Connect`]).
    pub const fn connecting(self) -> bool {
        self.0 & 4 != 0
    }
}

include!("name_hash.rs");

/// Finds a key through the table's hash index (built by `build.rs`): one
/// hash and usually one comparison, where a binary search took nine.
fn find(
    table: &'static [(&'static str, Category, u8)],
    index: &'static [u16],
    key: &str,
) -> Option<(Category, NameFlags)> {
    find_hashed(table, index, key, name_hash(key.as_bytes()))
}

/// [`find`] with the key's `name_hash` given (a name without a dot is its own simple name).
fn find_hashed(
    table: &'static [(&'static str, Category, u8)],
    index: &'static [u16],
    key: &str,
    hash: u64,
) -> Option<(Category, NameFlags)> {
    let mask = index.len() - 1;
    let mut i = (hash as usize) & mask;
    loop {
        let slot = index[i];
        if slot == 0 {
            return None;
        }
        let (k, c, fl) = table[usize::from(slot) - 1];
        if k == key {
            return Some((c, NameFlags(fl)));
        }
        i = (i + 1) & mask;
    }
}

/// The part of `name` after the last `sep` (an ASCII byte, so a char boundary), or all of it.
fn after_last(name: &str, sep: u8) -> &str {
    match name.bytes().rposition(|b| b == sep) {
        Some(i) => name.get(i + 1..).unwrap_or(""),
        None => name,
    }
}

fn simple_name(name: &str) -> &str {
    after_last(name, b'.')
}

/// Looks a chain name up in the built-in names: full name, then simple name,
/// then the part after the last `$` (Java nested classes).
pub fn lookup_name(name: &str) -> Option<(Category, NameFlags)> {
    let hash = name_hash(name.as_bytes());
    if let Some(hit) = find_hashed(tables::EXACT, &tables::EXACT_INDEX, name, hash) {
        return Some(hit);
    }
    let simple = simple_name(name);
    let simple_hash = if simple.len() == name.len() { hash } else { name_hash(simple.as_bytes()) };
    if let Some(hit) = find_hashed(tables::SIMPLE, &tables::SIMPLE_INDEX, simple, simple_hash) {
        return Some(hit);
    }
    let nested = after_last(simple, b'$');
    if nested.len() == simple.len() {
        return None;
    }
    find(tables::SIMPLE, &tables::SIMPLE_INDEX, nested)
}

/// Returns the built-in category of an HTTP status, if the table knows it
/// (any other 5xx but 501, 505 and 511 is a server error).
#[inline]
pub fn status_category(status: u16) -> Option<Category> {
    tables::http_table(status).or(if (500..=599).contains(&status) { Some(Category::ServerError) } else { None })
}

/// Returns the built-in category of a gRPC code (`None` for OK).
pub fn grpc_category(code: GrpcCode) -> Option<Category> {
    tables::GRPC_TABLE[code.0 as usize]
}

/// Returns true for the methods RFC 9110 makes idempotent (GET, HEAD,
/// OPTIONS, TRACE, PUT, DELETE), compared ASCII case-insensitively.
#[inline]
pub fn is_idempotent_method(method: &str) -> bool {
    let is = |m: &str| method.eq_ignore_ascii_case(m);
    match method.len() {
        3 => is("GET") || is("PUT"),
        4 => is("HEAD"),
        5 => is("TRACE"),
        6 => is("DELETE"),
        7 => is("OPTIONS"),
        _ => false,
    }
}

/// What the host saw of one failed attempt. Every field is optional.
#[derive(Copy, Clone, Debug, Default)]
pub struct Failure<'a> {
    /// The HTTP status.
    pub status: Option<u16>,
    /// The gRPC status code.
    pub grpc_code: Option<GrpcCode>,
    /// The flattened cause chain, outermost error first: for each error its
    /// code, its name, its class names most specific first; then its cause.
    pub error_names: &'a [&'a str],
    /// The HTTP method.
    pub method: Option<&'a str>,
    /// The caller declares the request idempotent.
    pub idempotent: Option<bool>,
    /// The caller sent an idempotency key the server deduplicates on.
    pub idempotency_key_sent: bool,
    /// Response headers (names match case-insensitively).
    pub headers: &'a [(&'a str, &'a str)],
    /// How long the attempt took (for slow-call accounting; default: since `before_attempt`).
    pub elapsed: Option<std::time::Duration>,
    /// Wall-clock Unix epoch milliseconds, to resolve HTTP-dates.
    pub wall_now_ms: Option<u64>,
    /// The error's message, for rules that match messages. A host sends it
    /// only when the policy has such a rule ([`Classifier::needs_message`]).
    pub message: Option<&'a str>,
    /// The error is modelled retryable (Smithy's `@retryable` trait).
    pub retryable: Option<RetryableTrait>,
    /// The error's own verdict on a retry (Stripe's `should_retry` on its
    /// connection errors): `Some(false)` declines, `Some(true)` vouches, as
    /// the `Stripe-Should-Retry` header does.
    pub should_retry: Option<bool>,
    /// The verdict of the caller's own predicate, evaluated in the host
    /// (Python's `retry_if_exception` / `retry_if_result`, JS's
    /// `retryIfError` / `retryIfResult`): it decides after the markers and
    /// before the user rules, like a rule that matched
    /// (docs/classification-rules.md, "Host predicates").
    pub host: Option<HostVerdict>,
}

/// What the caller's own predicate said of a failure (a thrown error, or a
/// returned value it declared a failure): a retry rule, a category, or
/// both. `None` (the predicate had no opinion) is the absence of a verdict.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct HostVerdict {
    /// The retry rule (`None`: the rule the policy gives the category).
    pub retry: Option<RetryRule>,
    /// The category (`None`: the one the built-in tables give).
    pub category: Option<Category>,
}

impl HostVerdict {
    /// The verdict of a predicate that answered a boolean (tenacity's
    /// `retry_if_exception`, axios-retry's `retryCondition`): `true`
    /// retries `always` — the caller vouches for repeating the call —
    /// `false` retries `never`; either keeps the tables' category.
    pub const fn of_bool(retry: bool) -> HostVerdict {
        HostVerdict { retry: Some(if retry { RetryRule::Always } else { RetryRule::Never }), category: None }
    }

    /// Reads a verdict written as text: a retry rule (`always`,
    /// `if_idempotent`, `never`), a category (`overloaded`, `server_error`,
    /// …: the policy's rule for that category applies), or both as
    /// `category:rule` (`"overloaded:always"`).
    ///
    /// # Errors
    /// `invalid_value` naming `field` for anything else.
    pub fn parse(text: &str, field: &str) -> Result<HostVerdict> {
        let bad = || {
            Error::new(
                ErrorCode::InvalidValue,
                field.to_owned(),
                format!("is not a retry rule, a category or category:rule: {text:?}"),
            )
        };
        if let Some((c, r)) = text.split_once(':') {
            let category = Category::from_code(c).ok_or_else(bad)?;
            let retry = RetryRule::from_code(r).ok_or_else(bad)?;
            return Ok(HostVerdict { retry: Some(retry), category: Some(category) });
        }
        if let Some(r) = RetryRule::from_code(text) {
            return Ok(HostVerdict { retry: Some(r), category: None });
        }
        Category::from_code(text).map(|c| HostVerdict { retry: None, category: Some(c) }).ok_or_else(bad)
    }

    /// Reads a verdict as every host hands it over: `null` (no opinion), a
    /// boolean ([`of_bool`](Self::of_bool)) or a string ([`parse`](Self::parse)).
    ///
    /// # Errors
    /// `invalid_type` naming `field` for another type; see [`parse`](Self::parse).
    pub fn from_json(v: &Value, field: &str) -> Result<Option<HostVerdict>> {
        match v {
            Value::Null => Ok(None),
            Value::Bool(b) => Ok(Some(HostVerdict::of_bool(*b))),
            Value::String(s) => HostVerdict::parse(s, field).map(Some),
            _ => Err(Error::new(
                ErrorCode::InvalidType,
                field.to_owned(),
                "must be null, a boolean, a retry rule, a category or category:rule",
            )),
        }
    }

    /// The verdict as text ([`parse`](Self::parse) reads it back).
    pub fn code(&self) -> String {
        match (self.category, self.retry) {
            (Some(c), Some(r)) => format!("{}:{}", c.code(), r.code()),
            (Some(c), None) => c.code().to_owned(),
            (None, Some(r)) => r.code().to_owned(),
            (None, None) => String::new(),
        }
    }
}

/// Smithy's `@retryable` trait on an error shape: the service models the
/// error as retryable, and `throttling` marks it a throttle.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct RetryableTrait {
    /// The trait's `throttling` flag.
    pub throttling: bool,
}

impl RetryableTrait {
    /// Reads the trait as every host accepts it (a failure document's
    /// `retryable`, a keyword argument): `true` is the trait,
    /// `{"throttling": bool}` the trait with its flag, `false` and null
    /// no trait.
    ///
    /// # Errors
    /// `invalid_type` naming `field` for any other value or a `throttling`
    /// that is not a boolean; `unknown_key` for another key in the object.
    pub fn from_json(v: &Value, field: &str) -> Result<Option<RetryableTrait>> {
        match v {
            Value::Null | Value::Bool(false) => Ok(None),
            Value::Bool(true) => Ok(Some(RetryableTrait::default())),
            Value::Object(o) => {
                let mut t = RetryableTrait::default();
                for (k, x) in o {
                    match (k.as_str(), x) {
                        ("throttling", Value::Bool(b)) => t.throttling = *b,
                        ("throttling", _) => {
                            return Err(Error::new(
                                ErrorCode::InvalidType,
                                format!("{field}.throttling"),
                                "must be a boolean",
                            ))
                        }
                        (k, _) => {
                            return Err(Error::new(
                                ErrorCode::UnknownKey,
                                format!("{field}.{k}"),
                                "is not a key of the retryable trait (throttling)",
                            ))
                        }
                    }
                }
                Ok(Some(t))
            }
            _ => {
                Err(Error::new(ErrorCode::InvalidType, field.to_owned(), "must be a boolean or {\"throttling\": bool}"))
            }
        }
    }
}

impl Failure<'_> {
    /// Returns true when repeating the request is safe: an idempotent
    /// method, or the caller's declaration (docs/classification-rules.md,
    /// "Idempotency gating"). A key the session
    /// minted by itself does not count. RFC 9110's methods only: a policy's
    /// `allowed_methods` is applied by [`Classifier::is_safe`].
    pub fn is_safe(&self) -> bool {
        self.idempotent == Some(true)
            || self.idempotency_key_sent
            || (self.idempotent != Some(false) && self.method.is_some_and(is_idempotent_method))
    }
}

/// A [`Failure`] that owns its strings: what a binding or a test runner
/// builds from host values before classifying. `S` is any owned string
/// (`String`, `Arc<str>`, an interned name).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FailureBuf<S = String> {
    /// The HTTP status.
    pub status: Option<u16>,
    /// The gRPC status code.
    pub grpc_code: Option<GrpcCode>,
    /// The flattened cause chain, outermost first.
    pub error_names: Vec<S>,
    /// The HTTP method.
    pub method: Option<S>,
    /// The caller declares the request idempotent.
    pub idempotent: Option<bool>,
    /// The caller sent an idempotency key the server deduplicates on.
    pub idempotency_key_sent: bool,
    /// Response headers, (name, value).
    pub headers: Vec<(S, S)>,
    /// How long the attempt took.
    pub elapsed: Option<std::time::Duration>,
    /// Wall-clock Unix epoch milliseconds, to resolve HTTP-dates.
    pub wall_now_ms: Option<u64>,
    /// The error's message (see [`Failure::message`]).
    pub message: Option<S>,
    /// Smithy's `@retryable` trait (see [`Failure::retryable`]).
    pub retryable: Option<RetryableTrait>,
    /// The error's own `should_retry` (see [`Failure::should_retry`]).
    pub should_retry: Option<bool>,
    /// The host predicate's verdict (see [`Failure::host`]).
    pub host: Option<HostVerdict>,
}

impl<S: AsRef<str>> FailureBuf<S> {
    /// Lends the failure as a [`Failure`] (names and headers borrowed on
    /// the stack for the common short chains).
    pub fn with<R>(&self, f: impl FnOnce(&Failure<'_>) -> R) -> R {
        const N: usize = 16;
        const H: usize = 8;
        let mut names_small = [""; N];
        let names_heap: Vec<&str>;
        let names: &[&str] = if self.error_names.len() <= N {
            for (d, s) in names_small.iter_mut().zip(&self.error_names) {
                *d = s.as_ref();
            }
            &names_small[..self.error_names.len()]
        } else {
            names_heap = self.error_names.iter().map(AsRef::as_ref).collect();
            &names_heap
        };
        let mut headers_small = [("", ""); H];
        let headers_heap: Vec<(&str, &str)>;
        let headers: &[(&str, &str)] = if self.headers.len() <= H {
            for (d, (a, b)) in headers_small.iter_mut().zip(&self.headers) {
                *d = (a.as_ref(), b.as_ref());
            }
            &headers_small[..self.headers.len()]
        } else {
            headers_heap = self.headers.iter().map(|(a, b)| (a.as_ref(), b.as_ref())).collect();
            &headers_heap
        };
        f(&Failure {
            status: self.status,
            grpc_code: self.grpc_code,
            error_names: names,
            method: self.method.as_ref().map(AsRef::as_ref),
            idempotent: self.idempotent,
            idempotency_key_sent: self.idempotency_key_sent,
            headers,
            elapsed: self.elapsed,
            wall_now_ms: self.wall_now_ms,
            message: self.message.as_ref().map(AsRef::as_ref),
            retryable: self.retryable,
            should_retry: self.should_retry,
            host: self.host,
        })
    }
}

/// What decided a verdict.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum DecidedBy {
    /// A retry-exhausted, cancelled or open-breaker name (index in the chain), or the
    /// `x-retry-exhausted` header (`None`).
    Marker(Option<usize>),
    /// The user rule at this index.
    Rule(usize),
    /// The host predicate's verdict ([`Failure::host`]).
    Host,
    /// Smithy's `@retryable` trait on the error.
    RetryableTrait,
    /// The gRPC code.
    GrpcCode,
    /// The HTTP status.
    Status,
    /// The chain name at this index.
    Name(usize),
    /// A wrapper at this index that defers to its cause; nothing else decided.
    Wrapper(usize),
    /// Nothing: the verdict is `unknown`.
    Nothing,
}

/// The outcome of classifying one failure.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Verdict {
    /// The category.
    pub category: Category,
    /// The retry rule after user rules and server hints.
    pub retry: RetryRule,
    /// Repeating the request is safe (method or declaration).
    pub safe: bool,
    /// The rule allows a retry given `safe`, and the server did not decline.
    pub retryable: bool,
    /// The server declined a retry (`x-should-retry: false`, a bad pushback).
    pub server_declined: bool,
    /// What the headers said.
    pub advice: ServerAdvice,
    /// What decided.
    pub decided_by: DecidedBy,
}

/// A pattern over statuses (0 to 999): one status, a class (`"5xx"`) or a range (`"500-504"`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct StatusRange {
    /// Lowest status matched.
    pub lo: u16,
    /// Highest status matched.
    pub hi: u16,
}

/// What a rule matches: every matcher given must match (none given matches all).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Matcher {
    /// Statuses (any may match).
    pub status: Vec<StatusRange>,
    /// gRPC codes (any may match).
    pub grpc_code: Vec<GrpcCode>,
    /// Name patterns (exact, qualified or `*` glob; any may match any chain name).
    pub name: Vec<String>,
    /// Built-in categories (any may match the category the tables give).
    pub category: Vec<Category>,
    /// Message patterns: a substring, or with `*` a glob over the whole
    /// message (any may match the failure's message).
    pub message: Vec<String>,
    /// HTTP methods, upper case (any may match the method, ASCII case-insensitively).
    pub method: Vec<String>,
    /// Header names, lower case: matches when any is present with a non-empty value.
    pub header: Vec<String>,
}

/// One user classification rule: a matcher, the retry rule to apply and
/// optionally the category to report.
#[derive(Clone, Debug, PartialEq)]
pub struct Rule {
    /// What the rule matches.
    pub when: Matcher,
    /// The retry rule to apply.
    pub retry: RetryRule,
    /// The category to report instead (`as` in documents).
    pub set_category: Option<Category>,
}

/// Matches `text` against a glob where `*` matches any run of characters.
pub fn glob(pattern: &str, text: &str) -> bool {
    let (p, t) = (pattern.as_bytes(), text.as_bytes());
    let (mut pi, mut ti) = (0usize, 0usize);
    let (mut star, mut mark) = (None::<usize>, 0usize);
    while ti < t.len() {
        if pi < p.len() && p[pi] == b'*' {
            star = Some(pi);
            pi += 1;
            mark = ti;
        } else if pi < p.len() && p[pi] == t[ti] {
            pi += 1;
            ti += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ti = mark;
        } else {
            return false;
        }
    }
    while pi < p.len() && p[pi] == b'*' {
        pi += 1;
    }
    pi == p.len()
}

/// Returns true when a message pattern matches a message: a pattern with
/// `*` is a glob over the whole message, any other pattern a substring
/// (case-sensitive, like the anchors' string tests).
pub fn message_matches(pattern: &str, message: &str) -> bool {
    if pattern.contains('*') {
        glob(pattern, message)
    } else {
        message.contains(pattern)
    }
}

/// Returns true when one of `names` is among the headers with a non-empty
/// value (names compared ASCII case-insensitively; urllib3 tests
/// `bool(response.headers.get("Retry-After"))`).
pub fn has_header(headers: &[(&str, &str)], names: &[String]) -> bool {
    headers.iter().any(|(n, v)| {
        !v.trim_matches(|c| c == ' ' || c == '\t').is_empty() && names.iter().any(|x| x.eq_ignore_ascii_case(n))
    })
}

/// Returns true when a chain holds a refused connection (ECONNREFUSED and
/// its equivalents; not a connect timeout).
pub fn is_refused(names: &[&str]) -> bool {
    names.iter().any(|n| lookup_name(n).is_some_and(|(_, f)| f.refused()))
}

/// Returns true when a user name pattern matches a chain name: the full
/// name, its simple name, or the part after the last `$`.
pub fn name_matches(pattern: &str, name: &str) -> bool {
    let simple = simple_name(name);
    let dollar = simple.rfind('$').map(|i| &simple[i + 1..]);
    let test = |cand: &str| if pattern.contains('*') { glob(pattern, cand) } else { pattern == cand };
    test(name) || (simple.len() != name.len() && test(simple)) || dollar.is_some_and(test)
}

impl Matcher {
    /// Returns true when the failure matches; `builtin` gives the category
    /// the built-in tables assign (computed only if a category matcher needs it).
    pub fn matches(&self, f: &Failure<'_>, builtin: &mut dyn FnMut() -> Category) -> bool {
        if !self.status.is_empty() && !f.status.is_some_and(|s| self.status.iter().any(|r| (r.lo..=r.hi).contains(&s)))
        {
            return false;
        }
        if !self.grpc_code.is_empty() && !f.grpc_code.is_some_and(|c| self.grpc_code.contains(&c)) {
            return false;
        }
        if !self.name.is_empty() && !f.error_names.iter().any(|n| self.name.iter().any(|p| name_matches(p, n))) {
            return false;
        }
        if !self.message.is_empty() && !f.message.is_some_and(|m| self.message.iter().any(|p| message_matches(p, m))) {
            return false;
        }
        if !self.method.is_empty() && !f.method.is_some_and(|m| self.method.iter().any(|x| x.eq_ignore_ascii_case(m))) {
            return false;
        }
        if !self.header.is_empty() && !has_header(f.headers, &self.header) {
            return false;
        }
        if !self.category.is_empty() && !self.category.contains(&builtin()) {
            return false;
        }
        true
    }

    /// Returns true when no matcher is given.
    pub fn is_empty(&self) -> bool {
        self.status.is_empty()
            && self.grpc_code.is_empty()
            && self.name.is_empty()
            && self.category.is_empty()
            && self.message.is_empty()
            && self.method.is_empty()
            && self.header.is_empty()
    }

    /// Returns true when the matcher matches by category alone.
    fn only_category(&self) -> bool {
        Matcher { category: Vec::new(), ..self.clone() }.is_empty()
    }
}

/// The classification settings of a policy: user rules over the built-in tables.
#[derive(Clone, Debug, PartialEq)]
pub struct Classifier {
    /// Use the built-in tables (default true). The retry-exhausted,
    /// cancelled and open-breaker names apply even when false.
    pub defaults: bool,
    /// User rules, first match wins.
    pub rules: Vec<Rule>,
    /// Also know AWS's throttling and transient error codes (the aws profiles).
    pub aws_codes: bool,
    /// The methods safe to repeat (urllib3's `allowed_methods`, upper case):
    /// `None` is RFC 9110's idempotent methods. A method of that set left
    /// out is no longer safe; a method added beyond it is the caller's
    /// declaration that its requests are idempotent.
    pub allowed_methods: Option<Vec<String>>,
    /// The statuses whose server delay is honoured (urllib3's
    /// `RETRY_AFTER_STATUS_CODES`); `None`: any. gRPC pushbacks are not
    /// HTTP delays and always count.
    pub retry_after_statuses: Option<Vec<u16>>,
}

impl Default for Classifier {
    fn default() -> Self {
        Classifier {
            defaults: true,
            rules: Vec::new(),
            aws_codes: false,
            allowed_methods: None,
            retry_after_statuses: None,
        }
    }
}

/// What decides the rule a whole category gets ([`Classifier::rule_for_category`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CategoryDecidedBy {
    /// A marker that decides before any rule: retry exhausted, cancelled, open breaker.
    Marker,
    /// The user rule at this index (it matches by category alone).
    Rule(usize),
    /// The built-in default of the category.
    Default,
    /// `defaults: false` and no rule: never retried.
    TablesOff,
}

/// The rule a whole category gets under a classifier, for explanations.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CategoryRule {
    /// The retry rule.
    pub retry: RetryRule,
    /// What decided it.
    pub decided_by: CategoryDecidedBy,
    /// The category the deciding rule reports instead, if any.
    pub reported_as: Option<Category>,
    /// Earlier rules that name the category with other matchers too: they
    /// decide for *some* failures of the category first.
    pub partial: Vec<usize>,
}

impl Classifier {
    /// Returns the rule a whole category gets, in the order classification
    /// consults them (`docs/classification-rules.md`, "Precedence"):
    /// the markers first, then the first user rule that matches by category
    /// alone, then the built-in default (or never, with the tables off).
    pub fn rule_for_category(&self, cat: Category) -> CategoryRule {
        if matches!(cat, Category::RetryExhausted | Category::Cancelled | Category::OpenBreaker) {
            return CategoryRule {
                retry: RetryRule::Never,
                decided_by: CategoryDecidedBy::Marker,
                reported_as: None,
                partial: Vec::new(),
            };
        }
        let mut partial = Vec::new();
        for (i, r) in self.rules.iter().enumerate() {
            if !r.when.category.contains(&cat) {
                continue;
            }
            if r.when.only_category() {
                return CategoryRule {
                    retry: r.retry,
                    decided_by: CategoryDecidedBy::Rule(i),
                    reported_as: r.set_category,
                    partial,
                };
            }
            partial.push(i);
        }
        let (retry, decided_by) = if self.defaults {
            (cat.default_rule(), CategoryDecidedBy::Default)
        } else {
            (RetryRule::Never, CategoryDecidedBy::TablesOff)
        };
        CategoryRule { retry, decided_by, reported_as: None, partial }
    }

    /// Returns true when a rule matches messages: only then does a host
    /// need to send an error's message ([`Failure::message`]).
    pub fn needs_message(&self) -> bool {
        self.rules.iter().any(|r| !r.when.message.is_empty())
    }

    /// Returns true when a method is safe to repeat under this classifier:
    /// listed in `allowed_methods`, or RFC 9110 idempotent when there is no list.
    pub fn method_is_safe(&self, method: &str) -> bool {
        match &self.allowed_methods {
            Some(list) => list.iter().any(|m| m.eq_ignore_ascii_case(method)),
            None => is_idempotent_method(method),
        }
    }

    /// Returns true when repeating the request is safe: the caller's
    /// declaration, else its method ([`method_is_safe`](Self::method_is_safe)).
    pub fn is_safe(&self, f: &Failure<'_>) -> bool {
        f.idempotent == Some(true)
            || f.idempotency_key_sent
            || (f.idempotent != Some(false) && f.method.is_some_and(|m| self.method_is_safe(m)))
    }

    /// Classifies a failure with the built-in tables and the user rules.
    pub fn classify(&self, f: &Failure<'_>) -> Verdict {
        let advice = read_headers(f.headers.iter().copied(), f.wall_now_ms);
        self.classify_with(f, advice)
    }

    /// Classifies a failure whose headers were already read.
    pub fn classify_with(&self, f: &Failure<'_>, mut advice: ServerAdvice) -> Verdict {
        let safe = self.is_safe(f);
        if let Some(listed) = &self.retry_after_statuses {
            let pushback = advice.has_pushback();
            if !pushback && !f.status.is_some_and(|s| listed.contains(&s)) {
                advice.delay = None;
            }
        }
        if let Some(own) = f.should_retry {
            advice.should_retry = Some(own && advice.should_retry != Some(false));
        }
        // Each name is looked up once.
        // On the stack for chains of up to 16 names (the common case).
        let mut small = [None; 16];
        let heap: Vec<Option<(Category, NameFlags)>>;
        let hits: &[Option<(Category, NameFlags)>] = if f.error_names.len() <= small.len() {
            for (h, n) in small.iter_mut().zip(f.error_names) {
                *h = lookup_name(n);
            }
            &small[..f.error_names.len()]
        } else {
            heap = f.error_names.iter().map(|n| lookup_name(n)).collect();
            &heap
        };
        // 1. Markers decide first, wherever they stand.
        // A cancellation whose chain also holds a timeout is the timeout's
        // (asyncio.timeout raises TimeoutError from CancelledError; .NET's
        // HttpClient raises TaskCanceledException around a TimeoutException).
        let timed_out = hits.iter().any(|h| matches!(h, Some((Category::Timeout, _))));
        let marker = hits.iter().enumerate().find_map(|(i, h)| match *h {
            Some((Category::Cancelled, _)) if timed_out => None,
            Some((c, _)) if c.is_priority() => Some((c, i)),
            _ => None,
        });
        let (category, rule, decided_by) = if let Some((c, i)) = marker {
            (c, RetryRule::Never, DecidedBy::Marker(Some(i)))
        } else if advice.retry_exhausted {
            (Category::RetryExhausted, RetryRule::Never, DecidedBy::Marker(None))
        } else if let Some(h) = f.host {
            // 2. The caller's own predicate, as a rule that matched first.
            let aws = self.aws_codes;
            let tables =
                || if self.defaults { builtin_category(f, hits, &advice, timed_out, aws).0 } else { Category::Unknown };
            let cat = h.category.unwrap_or_else(tables);
            let retry = h.retry.unwrap_or_else(|| {
                let r = self.rule_for_category(cat);
                if r.decided_by == CategoryDecidedBy::Default {
                    default_rule(cat, f)
                } else {
                    r.retry
                }
            });
            (cat, retry, DecidedBy::Host)
        } else if self.rules.is_empty() {
            // No user rules: the tables alone (the common, hot case).
            if self.defaults {
                let (c, by) = builtin_category(f, hits, &advice, timed_out, self.aws_codes);
                (c, default_rule(c, f), by)
            } else {
                (Category::Unknown, RetryRule::Never, DecidedBy::Nothing)
            }
        } else {
            let mut cached: Option<(Category, DecidedBy)> = None;
            let aws = self.aws_codes;
            let mut builtin = || *cached.get_or_insert_with(|| builtin_category(f, hits, &advice, timed_out, aws));
            let mut hit = None;
            for (i, r) in self.rules.iter().enumerate() {
                if r.when.matches(f, &mut || builtin().0) {
                    hit = Some((i, r));
                    break;
                }
            }
            match hit {
                Some((i, r)) => {
                    let cat = r.set_category.unwrap_or_else(|| builtin().0);
                    (cat, r.retry, DecidedBy::Rule(i))
                }
                None if self.defaults => {
                    let (c, by) = builtin();
                    (c, default_rule(c, f), by)
                }
                None => (Category::Unknown, RetryRule::Never, DecidedBy::Nothing),
            }
        };
        let mut retry = rule;
        let mut server_declined = false;
        if !matches!(decided_by, DecidedBy::Marker(_)) {
            match advice.should_retry {
                Some(false) => server_declined = true,
                Some(true) if retry == RetryRule::IfIdempotent => retry = RetryRule::Always,
                _ => {}
            }
            if advice.declined_by_pushback {
                server_declined = true;
            }
        }
        let retryable = !server_declined
            && match retry {
                RetryRule::Always => true,
                RetryRule::IfIdempotent => safe,
                RetryRule::Never => false,
            };
        Verdict { category, retry, safe, retryable, server_declined, advice, decided_by }
    }
}

/// The rule a category gets by default, with conflict lifted by a sent key.
fn default_rule(c: Category, f: &Failure<'_>) -> RetryRule {
    // The tables' category came from the trait, which decides first: the
    // service models the error as safe to retry.
    if f.retryable.is_some() {
        return RetryRule::Always;
    }
    if c == Category::Conflict && f.idempotency_key_sent {
        RetryRule::Always
    } else {
        c.default_rule()
    }
}

/// The built-in tables alone: gRPC code, status, then names.
/// `skip_cancelled`: the chain also holds a timeout, so its cancellation was the timeout's.
/// `hits`: `lookup_name` of each of `f.error_names`.
#[inline]
fn builtin_category(
    f: &Failure<'_>,
    hits: &[Option<(Category, NameFlags)>],
    advice: &ServerAdvice,
    skip_cancelled: bool,
    aws: bool,
) -> (Category, DecidedBy) {
    if let Some(t) = f.retryable {
        let c = if t.throttling { Category::Overloaded } else { Category::ServerError };
        return (c, DecidedBy::RetryableTrait);
    }
    if let Some(code) = f.grpc_code {
        if let Some(c) = grpc_category(code) {
            let c = if code == GrpcCode::UNAVAILABLE && advice.has_pushback() { Category::Overloaded } else { c };
            return (c, DecidedBy::GrpcCode);
        }
    }
    if aws {
        // AWS reports throttling as a 400 with an error code: under the aws
        // profiles the anchor's codes decide before the status.
        if let Some((i, c)) =
            f.error_names.iter().enumerate().find_map(|(i, n)| crate::profile::aws_code(n).map(|c| (i, c)))
        {
            return (c, DecidedBy::Name(i));
        }
    }
    if let Some(s) = f.status {
        if let Some(c) = status_category(s) {
            let c = if s == 503 && advice.delay.is_some() { Category::Overloaded } else { c };
            return (c, DecidedBy::Status);
        }
    }
    let mut wrapper = None;
    let mut decided = None;
    for (i, n) in f.error_names.iter().enumerate() {
        let hit = hits[i].or_else(|| if aws { crate::profile::aws_code(n).map(|c| (c, NameFlags(0))) } else { None });
        match hit {
            Some((Category::Cancelled, _)) if skip_cancelled => {}
            Some((c, fl)) if !fl.defers() => {
                decided = Some((c, DecidedBy::Name(i)));
                break;
            }
            Some((c, _)) if wrapper.is_none() => wrapper = Some((c, i)),
            _ => {}
        }
    }
    let decided = decided.or(wrapper.map(|(c, i)| (c, DecidedBy::Wrapper(i))));
    match decided {
        // A timeout under an error raised only while connecting: the request
        // never left (docs/classification-rules.md, "Connect timeouts").
        Some((Category::Timeout, by)) if hits.iter().any(|h| h.is_some_and(|(_, fl)| fl.connecting())) => {
            (Category::Connect, by)
        }
        Some(d) => d,
        None => (Category::Unknown, DecidedBy::Nothing),
    }
}

/// Classifies a failure with the built-in tables only.
pub fn classify(f: &Failure<'_>) -> Verdict {
    Classifier::default().classify(f)
}

// ---------------------------------------------------------------- documents

fn status_range(v: &Value, field: &str) -> Result<StatusRange> {
    let bad = |why: String| Error::new(ErrorCode::InvalidValue, field.to_owned(), why);
    match v {
        Value::Number(_) => {
            let s = status_value(v, field)?;
            Ok(StatusRange { lo: s, hi: s })
        }
        Value::String(s) => {
            let b = s.as_bytes();
            if b.len() == 3 && b[0].is_ascii_digit() && (b[1] | 0x20) == b'x' && (b[2] | 0x20) == b'x' {
                let c = u16::from(b[0] - b'0');
                if (1..=5).contains(&c) {
                    return Ok(StatusRange { lo: c * 100, hi: c * 100 + 99 });
                }
            }
            let parse = |t: &str| {
                (!t.is_empty() && t.len() <= 3 && t.bytes().all(|b| b.is_ascii_digit()))
                    .then(|| t.parse::<u16>().ok())
                    .flatten()
            };
            if let Some((lo, hi)) = s.split_once('-') {
                if let (Some(lo), Some(hi)) = (parse(lo), parse(hi)) {
                    if lo <= hi {
                        return Ok(StatusRange { lo, hi });
                    }
                }
            } else if let Some(x) = parse(s) {
                return Ok(StatusRange { lo: x, hi: x });
            }
            Err(bad(format!(
                "must be a status 0 to 999 (429), a class 1xx to 5xx (\"5xx\") or a range (\"500-504\"), got {s:?}"
            )))
        }
        other => Err(Error::new(
            ErrorCode::InvalidType,
            field.to_owned(),
            format!("must be a status number or string, got {}", doc::type_name(other)),
        )),
    }
}

fn one_or_many<'v, T>(v: &'v Value, field: &str, mut each: impl FnMut(&'v Value, &str) -> Result<T>) -> Result<Vec<T>> {
    match v {
        Value::Array(items) => {
            if items.is_empty() {
                return Err(Error::new(ErrorCode::InvalidValue, field.to_owned(), "must not be an empty list"));
            }
            items.iter().enumerate().map(|(i, x)| each(x, &format!("{field}[{i}]"))).collect()
        }
        _ => Ok(vec![each(v, field)?]),
    }
}

fn grpc_value(v: &Value, field: &str) -> Result<GrpcCode> {
    match v {
        Value::Number(_) => Ok(GrpcCode(doc::uint(v, field, 0, 16)? as u8)),
        Value::String(s) => GrpcCode::parse(s).ok_or_else(|| {
            Error::new(ErrorCode::InvalidValue, field.to_owned(), format!("is not a grpc status code: {s:?}"))
        }),
        other => Err(Error::new(
            ErrorCode::InvalidType,
            field.to_owned(),
            format!("must be a grpc code name or number, got {}", doc::type_name(other)),
        )),
    }
}

fn category_value(v: &Value, field: &str) -> Result<Category> {
    match v {
        Value::String(s) => Category::from_code(s)
            .ok_or_else(|| Error::new(ErrorCode::InvalidValue, field.to_owned(), format!("is not a category: {s:?}"))),
        other => Err(Error::new(
            ErrorCode::InvalidType,
            field.to_owned(),
            format!("must be a category name, got {}", doc::type_name(other)),
        )),
    }
}

fn name_value(v: &Value, field: &str) -> Result<String> {
    match v {
        Value::String(s) if !s.is_empty() && s.len() <= 512 => Ok(s.clone()),
        Value::String(_) => Err(Error::new(ErrorCode::InvalidValue, field.to_owned(), "must be 1 to 512 characters")),
        other => Err(Error::new(
            ErrorCode::InvalidType,
            field.to_owned(),
            format!("must be a name string, got {}", doc::type_name(other)),
        )),
    }
}

fn retry_value(v: &Value, field: &str) -> Result<RetryRule> {
    match v {
        Value::String(s) => RetryRule::from_code(s).ok_or_else(|| {
            Error::new(
                ErrorCode::InvalidValue,
                field.to_owned(),
                format!("must be \"always\", \"if_idempotent\" or \"never\", got {s:?}"),
            )
        }),
        Value::Bool(b) => Ok(if *b { RetryRule::Always } else { RetryRule::Never }),
        other => Err(Error::new(
            ErrorCode::InvalidType,
            field.to_owned(),
            format!("must be \"always\", \"if_idempotent\" or \"never\", got {}", doc::type_name(other)),
        )),
    }
}

fn message_value(v: &Value, field: &str) -> Result<String> {
    match v {
        Value::String(s) if !s.is_empty() && s.len() <= 512 => Ok(s.clone()),
        Value::String(_) => Err(Error::new(ErrorCode::InvalidValue, field.to_owned(), "must be 1 to 512 characters")),
        other => Err(Error::new(
            ErrorCode::InvalidType,
            field.to_owned(),
            format!("must be a message pattern string, got {}", doc::type_name(other)),
        )),
    }
}

/// Returns true for an RFC 9110 token (a method or a header name).
fn is_token(s: &str) -> bool {
    !s.is_empty() && s.len() <= 64 && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

fn token_value(v: &Value, field: &str, what: &str) -> Result<String> {
    match v {
        Value::String(s) if is_token(s) => Ok(s.clone()),
        Value::String(s) => Err(Error::new(
            ErrorCode::InvalidValue,
            field.to_owned(),
            format!("must be {what} (an RFC 9110 token of 1 to 64 characters), got {s:?}"),
        )),
        other => Err(Error::new(
            ErrorCode::InvalidType,
            field.to_owned(),
            format!("must be {what} string, got {}", doc::type_name(other)),
        )),
    }
}

/// Reads a method (`"get"` is `"GET"`).
pub(crate) fn method_value(v: &Value, field: &str) -> Result<String> {
    token_value(v, field, "an HTTP method").map(|m| m.to_ascii_uppercase())
}

/// The largest HTTP status a rule or a failure names: a status is 0 to 999.
pub const MAX_STATUS: u16 = 999;

/// Reads a status the way a rule does, as one number 0 to [`MAX_STATUS`].
pub(crate) fn status_value(v: &Value, field: &str) -> Result<u16> {
    Ok(doc::uint(v, field, 0, MAX_STATUS.into())? as u16)
}

/// Checks an HTTP status a caller gives as a host number (a JS number, a
/// Python int as the nearest double): a whole number 0 to [`MAX_STATUS`]
/// (three digits; 0 for "no valid response", as go-retryablehttp retries
/// it). Every host takes a failure's status through this one rule, as a
/// rule's `status` is read by the document reader.
///
/// # Errors
/// `out_of_range` naming `field`: not a whole number, or outside 0–999.
pub fn check_status(value: f64, field: &str) -> Result<u16> {
    crate::limits::count_from_f64(value, MAX_STATUS.into(), field).map(|n| n as u16)
}

/// Reads a list (or one item) of methods, without repeats.
pub(crate) fn parse_methods(v: &Value, field: &str) -> Result<Vec<String>> {
    let mut out: Vec<String> = Vec::new();
    for m in one_or_many(v, field, method_value)? {
        if !out.contains(&m) {
            out.push(m);
        }
    }
    Ok(out)
}

/// Reads a list (or one) of statuses 0 to 999, without repeats.
pub(crate) fn parse_statuses(v: &Value, field: &str) -> Result<Vec<u16>> {
    let mut out: Vec<u16> = Vec::new();
    for s in one_or_many(v, field, status_value)? {
        if !out.contains(&s) {
            out.push(s);
        }
    }
    Ok(out)
}

/// Reads the matcher keys (`status`, `grpc_code`, `name`, `category`,
/// `message`, `method`, `header`) of a rule object.
pub(crate) fn parse_matcher(o: &mut Obj<'_>) -> Result<Matcher> {
    let mut m = Matcher::default();
    if let Some((v, f)) = o.take("status", &[])? {
        m.status = one_or_many(v, &f, status_range)?;
    }
    if let Some((v, f)) = o.take("grpc_code", &["grpc"])? {
        m.grpc_code = one_or_many(v, &f, grpc_value)?;
    }
    if let Some((v, f)) = o.take("name", &["names", "exception"])? {
        m.name = one_or_many(v, &f, name_value)?;
    }
    if let Some((v, f)) = o.take("category", &[])? {
        m.category = one_or_many(v, &f, category_value)?;
    }
    if let Some((v, f)) = o.take("message", &["messages"])? {
        m.message = one_or_many(v, &f, message_value)?;
    }
    if let Some((v, f)) = o.take("method", &["methods"])? {
        m.method = parse_methods(v, &f)?;
    }
    if let Some((v, f)) = o.take("header", &["headers"])? {
        m.header = one_or_many(v, &f, |v, f| token_value(v, f, "a header name").map(|h| h.to_ascii_lowercase()))?;
    }
    Ok(m)
}

/// Reads one rule object (the matcher keys, `retry`, `as`).
pub(crate) fn parse_rule(v: &Value, path: &str) -> Result<Rule> {
    let mut o = Obj::new(v, path)?;
    let when = parse_matcher(&mut o)?;
    let retry = match o.take("retry", &[])? {
        Some((v, f)) => retry_value(v, &f)?,
        None => return Err(Error::new(ErrorCode::MissingField, o.field("retry"), "every rule sets retry")),
    };
    let set_category = match o.take("as", &["set_category"])? {
        Some((v, f)) => Some(category_value(v, &f)?),
        None => None,
    };
    o.finish()?;
    Ok(Rule { when, retry, set_category })
}

/// Reads a list of names (`non_retryable: [...]`) into one rule.
pub(crate) fn parse_name_list(v: &Value, field: &str, retry: RetryRule) -> Result<Rule> {
    let names = one_or_many(v, field, name_value)?;
    Ok(Rule { when: Matcher { name: names, ..Default::default() }, retry, set_category: None })
}

/// Writes a matcher's keys into a document object.
pub(crate) fn matcher_to_json(r: &Matcher, m: &mut crate::json::Map<String, Value>) {
    let many = |xs: Vec<Value>| {
        if xs.len() == 1 {
            xs.into_iter().next().unwrap_or(Value::Null)
        } else {
            Value::Array(xs)
        }
    };
    if !r.status.is_empty() {
        let xs = r
            .status
            .iter()
            .map(|s| if s.lo == s.hi { Value::from(s.lo) } else { Value::from(format!("{}-{}", s.lo, s.hi)) })
            .collect();
        m.insert("status".into(), many(xs));
    }
    if !r.grpc_code.is_empty() {
        m.insert("grpc_code".into(), many(r.grpc_code.iter().map(|c| Value::from(c.name())).collect()));
    }
    if !r.name.is_empty() {
        m.insert("name".into(), many(r.name.iter().map(|n| Value::from(n.as_str())).collect()));
    }
    if !r.category.is_empty() {
        m.insert("category".into(), many(r.category.iter().map(|c| Value::from(c.code())).collect()));
    }
    if !r.message.is_empty() {
        m.insert("message".into(), many(r.message.iter().map(|x| Value::from(x.as_str())).collect()));
    }
    if !r.method.is_empty() {
        m.insert("method".into(), many(r.method.iter().map(|x| Value::from(x.as_str())).collect()));
    }
    if !r.header.is_empty() {
        m.insert("header".into(), many(r.header.iter().map(|x| Value::from(x.as_str())).collect()));
    }
}

/// Writes a rule back as a document object.
pub fn rule_to_json(r: &Rule) -> Value {
    let mut m = crate::json::Map::new();
    matcher_to_json(&r.when, &mut m);
    m.insert("retry".into(), Value::from(r.retry.code()));
    if let Some(c) = r.set_category {
        m.insert("as".into(), Value::from(c.code()));
    }
    Value::Object(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_names_are_the_name_rows_of_the_tables() {
        // lint reads builtin_names (no notes); docs read builtin_tables: one list.
        let mut rows: Vec<(&str, Category)> = builtin_tables()
            .iter()
            .filter(|r| r.number == 0 && r.ecosystem != "grpc")
            .map(|r| (r.key, Category::from_code(r.category).unwrap()))
            .collect();
        rows.sort_unstable();
        let mut names: Vec<(&str, Category)> = builtin_names().collect();
        names.sort_unstable();
        assert!(names.len() > 300);
        assert_eq!(names, rows);
    }

    fn names<'a>(n: &'a [&'a str]) -> Failure<'a> {
        Failure { error_names: n, ..Default::default() }
    }

    #[test]
    fn a_given_status_is_a_whole_number_0_to_999_as_a_rule_reads_it() {
        assert_eq!(check_status(0.0, "status").unwrap(), 0);
        assert_eq!(check_status(999.0, "status").unwrap(), 999);
        for bad in [-1.0, 1000.0, 503.5, f64::NAN, f64::INFINITY] {
            let e = check_status(bad, "status").unwrap_err();
            assert_eq!((e.code(), e.field()), ("out_of_range", "status"), "{bad}");
        }
        // The rule reader's range is the same one.
        assert!(status_value(&json!(999), "s").is_ok());
        assert_eq!(status_value(&json!(1000), "s").unwrap_err().code(), "out_of_range");
    }

    #[test]
    fn network_codes() {
        for ok in ["ECONNRESET", "EAI_AGAIN", "UND_ERR_SOCKET", "EPIPE", "E2BIG"] {
            assert!(is_network_code(ok), "{ok}");
        }
        for bad in ["E", "econnreset", "UND_ERR_", "EAI_", "ERR_SSL_WRONG_VERSION_NUMBER", "ABORT_ERR", "EAI_again"] {
            assert!(!is_network_code(bad), "{bad}");
        }
    }

    #[test]
    fn category_index_is_its_place_in_all() {
        for (i, c) in Category::ALL.iter().enumerate() {
            assert_eq!(c.index() as usize, i, "{c:?}");
        }
    }

    #[test]
    fn the_hash_index_finds_every_row_and_nothing_else() {
        for table in [(tables::EXACT, &tables::EXACT_INDEX[..]), (tables::SIMPLE, &tables::SIMPLE_INDEX[..])] {
            for (k, c, fl) in table.0 {
                assert_eq!(find(table.0, table.1, k), Some((*c, NameFlags(*fl))), "{k}");
                let binary = table.0.binary_search_by(|(x, _, _)| x.cmp(k)).ok();
                assert_eq!(binary.map(|i| table.0[i].0), Some(*k));
            }
            for k in ["", "builtins.ValueError", "ECONNRESE", "ECONNRESETX", "x".repeat(100).as_str()] {
                assert_eq!(
                    find(table.0, table.1, k),
                    table
                        .0
                        .binary_search_by(|(x, _, _)| (*x).cmp(k))
                        .ok()
                        .map(|i| (table.0[i].1, NameFlags(table.0[i].2)))
                );
            }
        }
    }

    #[test]
    fn glob_matches() {
        assert!(glob("*", ""));
        assert!(glob("com.acme.*", "com.acme.PaymentDeclined"));
        assert!(glob("*Timeout*", "ReadTimeoutError"));
        assert!(!glob("*Timeout", "TimeoutError"));
        assert!(glob("a*b*c", "aXbYbZc"));
        assert!(!glob("a*b*c", "aXbYbZ"));
    }

    #[test]
    fn names_walk_in_order() {
        let v = classify(&names(&["builtins.ConnectionResetError", "builtins.ConnectionError", "builtins.OSError"]));
        assert_eq!(v.category, Category::ConnectionLost);
        assert_eq!(v.decided_by, DecidedBy::Name(0));
        let v = classify(&names(&["com.acme.Weird"]));
        assert_eq!(v.category, Category::Unknown);
        assert!(!v.retryable);
    }

    #[test]
    fn post_timeout_needs_declaration() {
        let f = Failure { status: Some(504), method: Some("POST"), ..Default::default() };
        let v = classify(&f);
        assert_eq!(v.category, Category::Timeout);
        assert!(!v.retryable);
        let v = classify(&Failure { idempotency_key_sent: true, ..f });
        assert!(v.retryable);
        let v = classify(&Failure { method: Some("get"), ..f });
        assert!(v.retryable);
    }

    #[test]
    fn marker_beats_rules() {
        let c = Classifier {
            defaults: true,
            rules: vec![Rule {
                when: Matcher { name: vec!["*".into()], ..Default::default() },
                retry: RetryRule::Always,
                set_category: None,
            }],
            ..Default::default()
        };
        let v = c.classify(&names(&["retrycore:retry_exhausted"]));
        assert_eq!(v.category, Category::RetryExhausted);
        assert!(!v.retryable);
    }

    fn rules(doc: crate::json::Value) -> Classifier {
        crate::policy::PolicyConfig::from_json_value(&doc).unwrap().classifier
    }

    #[test]
    fn message_rules_match_substrings_and_globs() {
        // go-retryablehttp client.go baseRetryPolicy: redirect-limit, scheme,
        // invalid-header and certificate messages are not retried.
        let c = rules(json!({"classification": {"rules": [
            {"message": ["*stopped after * redirects", "unsupported protocol scheme", "invalid header",
                         "certificate is not trusted"], "retry": "never"},
            {"name": "*", "retry": "always"}]}}));
        assert!(c.needs_message());
        assert!(!Classifier::default().needs_message());
        let f = |m: Option<&'static str>| Failure { error_names: &["url.Error"], message: m, ..Default::default() };
        let never = |m| c.classify(&f(Some(m))).retry == RetryRule::Never;
        assert!(never("Get \"http://x\": stopped after 10 redirects"));
        assert!(!never("Get \"http://x\": stopped after 10 redirects, then more"));
        assert!(never("Get \"ftp://x\": unsupported protocol scheme \"ftp\""));
        assert!(never("net/http: invalid header field value for \"X\""));
        assert!(never("x509: certificate is not trusted"));
        assert!(!never("connection reset by peer"));
        // Case-sensitive, like the anchors' regexps.
        assert!(!never("UNSUPPORTED PROTOCOL SCHEME"));
        // A host that sent no message matches no message rule.
        assert_eq!(c.classify(&f(None)).retry, RetryRule::Always);
    }

    #[test]
    fn retryable_trait_reads_true_an_object_and_refuses_the_rest() {
        let r = |v: Value| RetryableTrait::from_json(&v, "retryable");
        assert_eq!(r(json!(true)).unwrap(), Some(RetryableTrait { throttling: false }));
        assert_eq!(r(json!(false)).unwrap(), None);
        assert_eq!(r(Value::Null).unwrap(), None);
        assert_eq!(r(json!({"throttling": true})).unwrap(), Some(RetryableTrait { throttling: true }));
        assert_eq!(r(json!({})).unwrap(), Some(RetryableTrait { throttling: false }));
        let e = r(json!({"throttle": true})).unwrap_err();
        assert_eq!((e.code(), e.field()), ("unknown_key", "retryable.throttle"));
        let e = r(json!({"throttling": 1})).unwrap_err();
        assert_eq!((e.code(), e.field()), ("invalid_type", "retryable.throttling"));
        assert_eq!(r(json!(1)).unwrap_err().code(), "invalid_type");
    }

    #[test]
    fn smithy_retryable_trait_decides_in_the_tables() {
        let t = |throttling| Some(RetryableTrait { throttling });
        let v =
            classify(&Failure { status: Some(400), retryable: t(true), method: Some("POST"), ..Default::default() });
        assert_eq!((v.category, v.retry, v.retryable), (Category::Overloaded, RetryRule::Always, true));
        assert_eq!(v.decided_by, DecidedBy::RetryableTrait);
        let v =
            classify(&Failure { status: Some(500), retryable: t(false), method: Some("POST"), ..Default::default() });
        assert_eq!((v.category, v.retry, v.retryable), (Category::ServerError, RetryRule::Always, true));
        // Markers and user rules still come first.
        let v = classify(&Failure { error_names: &[RETRY_EXHAUSTED_NAME], retryable: t(true), ..Default::default() });
        assert_eq!(v.category, Category::RetryExhausted);
        let c = rules(json!({"classification": {"rules": [{"status": 400, "retry": "never"}]}}));
        assert!(!c.classify(&Failure { status: Some(400), retryable: t(true), ..Default::default() }).retryable);
        // With the tables off the trait is not read.
        let c = rules(json!({"classification": {"defaults": false}}));
        assert!(!c.classify(&Failure { retryable: t(true), ..Default::default() }).retryable);
    }

    #[test]
    fn a_failure_should_retry_acts_like_the_header() {
        // Stripe's APIConnectionError.should_retry (stripe-python _http_client.py, _should_retry).
        let lost = Failure { error_names: &["ECONNRESET"], method: Some("POST"), ..Default::default() };
        assert!(!classify(&lost).retryable);
        let v = classify(&Failure { should_retry: Some(true), ..lost });
        assert!(v.retryable && !v.server_declined);
        let v = classify(&Failure { should_retry: Some(false), method: Some("GET"), ..lost });
        assert!(!v.retryable && v.server_declined);
        // The header's false wins over the error's true; the error's false over the header's true.
        let no = [("Stripe-Should-Retry", "false")];
        let yes = [("Stripe-Should-Retry", "true")];
        assert!(classify(&Failure { should_retry: Some(true), headers: &no, ..lost }).server_declined);
        assert!(classify(&Failure { should_retry: Some(false), headers: &yes, ..lost }).server_declined);
    }

    #[test]
    fn status_lifts() {
        let h = [("Retry-After", "3")];
        let v = classify(&Failure { status: Some(503), headers: &h, ..Default::default() });
        assert_eq!(v.category, Category::Overloaded);
        let v = classify(&Failure { status: Some(503), ..Default::default() });
        assert_eq!(v.category, Category::ServerError);
        let v = classify(&Failure { status: Some(599), ..Default::default() });
        assert_eq!(v.category, Category::ServerError);
        let v = classify(&Failure { status: Some(409), method: Some("POST"), ..Default::default() });
        assert_eq!(v.retry, RetryRule::Never);
        let v = classify(&Failure { status: Some(409), idempotency_key_sent: true, ..Default::default() });
        assert_eq!(v.retry, RetryRule::Always);
    }

    #[test]
    fn host_verdicts_read_as_every_host_hands_them_over() {
        let r = |v: Value| HostVerdict::from_json(&v, "verdict");
        assert_eq!(r(json!(null)).unwrap(), None);
        assert_eq!(r(json!(true)).unwrap(), Some(HostVerdict::of_bool(true)));
        assert_eq!(r(json!("never")).unwrap().unwrap().retry, Some(RetryRule::Never));
        let both = r(json!("overloaded:always")).unwrap().unwrap();
        assert_eq!((both.category, both.retry), (Some(Category::Overloaded), Some(RetryRule::Always)));
        assert_eq!(HostVerdict::parse(&both.code(), "v").unwrap(), both);
        for bad in [json!("sometimes"), json!("overloaded:maybe"), json!(":always")] {
            assert_eq!(r(bad).unwrap_err().code(), "invalid_value");
        }
        assert_eq!(r(json!(1)).unwrap_err().code(), "invalid_type");
    }

    #[test]
    fn a_host_verdict_decides_after_the_markers_and_before_the_rules() {
        let c = Classifier {
            rules: vec![Rule { when: Matcher::default(), retry: RetryRule::Never, set_category: None }],
            ..Classifier::default()
        };
        let f = Failure { status: Some(500), host: Some(HostVerdict::of_bool(true)), ..Default::default() };
        let v = c.classify(&f);
        assert_eq!((v.category, v.retry, v.decided_by), (Category::ServerError, RetryRule::Always, DecidedBy::Host));
        let marked = Failure { error_names: &[RETRY_EXHAUSTED_NAME], ..f };
        assert_eq!(c.classify(&marked).category, Category::RetryExhausted);
    }
}

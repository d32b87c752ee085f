//! Lint: findings about a policy (and the service around it) that a
//! reviewer would flag, each with a stable code, a severity and one line of
//! reason.
//!
//! The checks encode the usual retry pitfalls (listed with their reasons in
//! docs/cli.md, "Findings"): no jitter (synchronised retries),
//! no deadline, more than 5 attempts, retrying client errors, overriding the
//! idempotency gate, retrying at several layers (4 × 4 × 4 = 64 calls per
//! click), inner timeouts not smaller than outer ones, attempts that cannot
//! fit the deadline, idempotency retention shorter than twice the retry
//! window, a lease shorter than the work's p99 or a heartbeat not well
//! inside it, a half-open breaker that may wait forever, a capped server
//! delay, and a `seed` in a deployed policy.

use crate::backoff::{BackoffKind, Jitter};
use crate::classify::{self, Category, GrpcCode, RetryRule, Rule};
use crate::doc::{self, Obj};
use crate::duration::{format_duration, human};
use crate::json::Value;
use crate::policy::{LongServerDelay, PolicyConfig, Purpose};
use crate::{Error, ErrorCode, Result};

/// How serious a finding is.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// Worth knowing.
    Info,
    /// Likely a mistake.
    Warning,
    /// A mistake: fails `retrycore lint`.
    Error,
}

impl Severity {
    /// Returns the stable code.
    pub const fn code(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// One finding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// A stable snake_case code (`no_jitter`, …).
    pub code: &'static str,
    /// How serious.
    pub severity: Severity,
    /// The field concerned (`jitter`, `layers[1].timeout`, …), or `""`.
    pub field: String,
    /// One line of reason.
    pub message: String,
}

/// Every finding code with its severity and a one-line description (for docs).
pub const CODES: &[(&str, Severity, &str)] = &[
    ("no_jitter", Severity::Warning, "retries without jitter hit a recovering server in lock-step"),
    ("no_deadline", Severity::Warning, "without a deadline an operation may retry far past its caller's patience"),
    (
        "too_many_attempts",
        Severity::Warning,
        "more than 5 attempts rarely help and multiply load (compensations exempt)",
    ),
    ("retries_client_error", Severity::Error, "a 4xx other than 408, 425, 429 and keyed 409 fails again the same way"),
    ("overrides_idempotency", Severity::Warning, "an if_idempotent category retried always may repeat a side effect"),
    ("multi_layer_retries", Severity::Error, "retrying at several layers multiplies calls; retry at one layer only"),
    ("inner_timeout_not_smaller", Severity::Error, "an inner layer's timeout must be smaller than its caller's"),
    ("attempts_exceed_deadline", Severity::Warning, "attempt_timeout × attempts + delays exceed the deadline"),
    ("no_room_for_retry", Severity::Warning, "the attempt timeout leaves no room for a retry before the deadline"),
    ("retention_too_short", Severity::Error, "idempotency records must outlive twice the retry window"),
    ("lease_shorter_than_p99", Severity::Error, "a lease shorter than the work's p99 lets a second worker run it"),
    ("heartbeat_outside_lease", Severity::Warning, "a heartbeat must renew well inside the lease"),
    ("half_open_waits_forever", Severity::Warning, "half-open max wait 0 can leave a breaker stuck half-open"),
    ("capped_server_delay", Severity::Warning, "capping the server's Retry-After retries before the server is ready"),
    ("seed_in_policy", Severity::Error, "a fixed seed makes every instance retry in lock-step"),
    (
        "non_idempotent_allowed_method",
        Severity::Warning,
        "allowed_methods lists POST or PATCH: every such request is declared safe to repeat",
    ),
    (
        "stacked_client_retry",
        Severity::Error,
        "the HTTP client retries by itself under a retrying policy: attempts multiply; turn the client's retry off",
    ),
    (
        "compensation_without_key",
        Severity::Error,
        "a compensation is retried leniently, so it must be idempotent: the service must send an idempotency key",
    ),
];

fn severity_of(code: &str) -> Severity {
    CODES.iter().find(|(c, _, _)| *c == code).map_or(Severity::Warning, |(_, s, _)| *s)
}

/// One layer of a service's call path (outermost first).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layer {
    /// The layer's name.
    pub name: String,
    /// Calls it makes per request, retries included.
    pub attempts: u32,
    /// Its timeout, in nanoseconds.
    pub timeout: Option<u64>,
}

/// The service around a policy, for the checks that need it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Service {
    /// The call path, outermost first.
    pub layers: Vec<Layer>,
    /// How long idempotency records are kept.
    pub retention: Option<u64>,
    /// The processing lease.
    pub lease: Option<u64>,
    /// The lease heartbeat interval.
    pub heartbeat: Option<u64>,
    /// The work's p99 duration.
    pub p99: Option<u64>,
    /// The policy is for tests or simulations (a seed is then fine).
    pub testing: bool,
    /// The service sends an idempotency key the downstream deduplicates by
    /// (`idempotency.key_sent`; a compensation needs it).
    pub key_sent: Option<bool>,
    /// The HTTP client the policy's calls go through, and its own retries.
    pub client: Option<Client>,
}

/// The HTTP client under a policy (`client` in a service description): its
/// own retries stack under the policy's attempts (urllib3's default
/// `Retry(3)` under 4 attempts makes 16 connections; got and ky retry twice
/// by default).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Client {
    /// The client's name (`urllib3`, `got`, …), for the message.
    pub name: Option<String>,
    /// The retries the client makes by itself after a failed request (0: off).
    pub retries: u32,
}

impl Service {
    /// Reads a service description: `layers` (`name`, `max_attempts`,
    /// `timeout`), `idempotency` (`retention`, `lease`, `key_sent`),
    /// `client` (`name`, `retries`: the HTTP client's own retries),
    /// `heartbeat`, `p99` and `environment` (`"test"` allows a seed).
    ///
    /// # Errors
    /// The usual document errors, naming the field; `invalid_combination`
    /// for two layers with one name (a cycle in the call path).
    pub fn from_json_value(v: &Value) -> Result<Service> {
        let mut o = Obj::new(v, "")?;
        let mut s = Service::default();
        if let Some((lv, lf)) = o.take("layers", &[])? {
            let items = lv.as_array().ok_or_else(|| {
                Error::new(
                    ErrorCode::InvalidType,
                    lf.clone(),
                    format!("must be a list of layers, got {}", doc::type_name(lv)),
                )
            })?;
            if items.len() > 64 {
                return Err(Error::new(ErrorCode::TooLarge, lf, "at most 64 layers"));
            }
            for (i, item) in items.iter().enumerate() {
                let p = format!("{lf}[{i}]");
                let mut lo = Obj::new(item, &p)?;
                let name = lo.str("name", &[])?.map_or_else(|| format!("layer {}", i + 1), |(n, _)| n.to_owned());
                let attempts = lo.uint("max_attempts", &["attempts"], 1, u64::from(u32::MAX))?.unwrap_or(1) as u32;
                let timeout = lo.duration("timeout", &[])?;
                lo.finish()?;
                if s.layers.iter().any(|l: &Layer| l.name == name) {
                    return Err(Error::new(
                        ErrorCode::InvalidCombination,
                        format!("{p}.name"),
                        format!("layer {name:?} appears twice: the call path has a cycle"),
                    ));
                }
                s.layers.push(Layer { name, attempts, timeout });
            }
        }
        if let Some((iv, f)) = o.take("idempotency", &[])? {
            let mut io = Obj::new(iv, &f)?;
            s.retention = io.duration("retention", &[])?;
            s.lease = io.duration("lease", &[])?;
            s.key_sent = io.bool("key_sent", &[])?;
            io.finish()?;
        }
        if let Some((cv, f)) = o.take("client", &[])? {
            let mut co = Obj::new(cv, &f)?;
            let name = co.str("name", &[])?.map(|(n, _)| n.to_owned());
            let retries = co.uint("retries", &["max_retries"], 0, u64::from(u32::MAX))?.unwrap_or(0) as u32;
            co.finish()?;
            s.client = Some(Client { name, retries });
        }
        s.heartbeat = o.duration("heartbeat", &[])?;
        s.p99 = o.duration("p99", &["work_p99"])?;
        if let Some((e, f)) = o.str("environment", &[])? {
            s.testing = match e {
                "test" | "testing" | "simulation" => true,
                "production" | "staging" | "deployed" => false,
                other => {
                    return Err(Error::new(
                        ErrorCode::InvalidValue,
                        f,
                        format!("must be test or production, got {other:?}"),
                    ))
                }
            };
        }
        o.finish()?;
        Ok(s)
    }

    /// Parses a service description from JSON text.
    pub fn from_json(text: &str) -> Result<Service> {
        if text.len() > crate::policy::MAX_DOCUMENT {
            return Err(Error::new(ErrorCode::TooLarge, "", "a service description is at most 1 MiB"));
        }
        Self::from_json_value(&doc::parse_json(text)?)
    }
}

const ALLOWED_4XX: [u16; 3] = [408, 425, 429];

/// Returns true when a rule's matchers can reach a category whose default rule is if_idempotent.
fn reaches_if_idempotent(r: &Rule) -> bool {
    let gated = |c: Category| c.default_rule() == RetryRule::IfIdempotent;
    if r.when.category.iter().any(|c| gated(*c)) {
        return true;
    }
    if r.when.status.iter().any(|s| (s.lo..=s.hi).any(|x| classify::status_category(x).is_some_and(gated))) {
        return true;
    }
    if r.when.grpc_code.iter().any(|g| classify::grpc_category(*g).is_some_and(gated)) {
        return true;
    }
    r.when.name.iter().any(|p| classify::builtin_names().any(|(name, c)| gated(c) && classify::name_matches(p, name)))
        || (r.when.is_empty())
}

/// Lints a policy, optionally with its service description.
pub fn lint(policy: &PolicyConfig, service: Option<&Service>) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut add = |code: &'static str, field: &str, message: String| {
        out.push(Finding { code, severity: severity_of(code), field: field.to_owned(), message });
    };
    let b = &policy.backoff;
    let retries = policy.max_attempts > 1;
    if retries && b.jitter() == Jitter::None && b.kind() != BackoffKind::Decorrelated && b.max_delay_ns() > 0 {
        add("no_jitter", "jitter", "no jitter: clients that failed together retry together".into());
    }
    if retries && policy.deadline.is_none() {
        add("no_deadline", "deadline", "no deadline: set the total time the caller can wait".into());
    }
    if policy.max_attempts > 5 && policy.purpose != Purpose::Compensation {
        add(
            "too_many_attempts",
            "max_attempts",
            format!(
                "{} attempts: past 3 to 5 retries add load, not success (Google SRE book, \"Handling Overload\": 3 per request)",
                policy.max_attempts
            ),
        );
    }
    // A compensation is retried more leniently than the step it undoes, so
    // it must be safe to repeat (docs/compensation.md); with a service
    // description at hand, lint asks that its calls carry an idempotency key.
    if policy.purpose == Purpose::Compensation && service.is_some_and(|s| s.key_sent != Some(true)) {
        add(
            "compensation_without_key",
            "purpose",
            "a compensation is retried until it succeeds: send an idempotency key (idempotency.key_sent: true) so a repeat undoes nothing twice".into(),
        );
    }
    for (i, r) in policy.classifier.rules.iter().enumerate() {
        if r.retry == RetryRule::Never {
            continue;
        }
        let field = format!("classification.rules[{i}]");
        let bad_4xx: Vec<u16> = r
            .when
            .status
            .iter()
            .flat_map(|s| s.lo..=s.hi)
            .filter(|x| (400..500).contains(x) && !ALLOWED_4XX.contains(x))
            .filter(|x| !(*x == 409 && policy.idempotent == Some(true)))
            .collect();
        let bad_cat = r.when.category.iter().find(|c| c.is_client_error() && **c != Category::Conflict);
        if !bad_4xx.is_empty() || bad_cat.is_some() {
            let what = match (bad_4xx.first(), bad_cat) {
                (Some(s), _) if bad_4xx.len() == 1 => format!("status {s}"),
                (Some(s), _) => format!("statuses {s}…{}", bad_4xx[bad_4xx.len() - 1]),
                (None, Some(c)) => format!("category {}", c.code()),
                (None, None) => String::new(),
            };
            add("retries_client_error", &field, format!("retries {what}: a client error fails again the same way"));
        }
        if r.retry == RetryRule::Always && reaches_if_idempotent(r) {
            add(
                "overrides_idempotency",
                &field,
                "retries a may-have-run failure (timeout, reset, 5xx) always: a POST may run twice".into(),
            );
        }
    }
    if let Some(ms) = &policy.classifier.allowed_methods {
        let risky: Vec<&str> = ms.iter().map(String::as_str).filter(|m| *m == "POST" || *m == "PATCH").collect();
        if !risky.is_empty() {
            add(
                "non_idempotent_allowed_method",
                "allowed_methods",
                format!(
                    "{} listed: every such request counts as idempotent and a may-have-run failure repeats it (RFC 9110 §9.2.2)",
                    risky.join(" and ")
                ),
            );
        }
    }
    if let Some(br) = &policy.breaker {
        if br.max_wait_duration_in_half_open_state == 0 {
            add(
                "half_open_waits_forever",
                "breaker.max_wait_duration_in_half_open_state",
                "0 waits forever: trials that never report leave the breaker half-open (resilience4j #903)".into(),
            );
        }
    }
    if policy.on_long_retry_after == LongServerDelay::Cap && policy.honor_retry_after {
        add(
            "capped_server_delay",
            "cap_retry_after",
            format!(
                "server delays over {} are cut short: the retry comes before the server asked",
                human(policy.max_retry_after)
            ),
        );
    }
    let schedule = policy.backoff.schedule(policy.max_attempts);
    let delays = crate::duration::from_std(schedule.worst_case());
    if let (Some(deadline), Some(t)) = (policy.deadline, policy.attempt_timeout) {
        let total = t.saturating_mul(u64::from(policy.max_attempts)).saturating_add(delays);
        if retries
            && t.saturating_add(schedule.rows.first().map_or(0, |r| crate::duration::from_std(r.low))).saturating_add(t)
                > deadline
        {
            add(
                "no_room_for_retry",
                "attempt_timeout",
                format!(
                    "an attempt may take {} of a {} deadline: a timed-out first attempt leaves no room for a retry",
                    human(t),
                    human(deadline)
                ),
            );
        } else if total > deadline {
            add(
                "attempts_exceed_deadline",
                "deadline",
                format!(
                    "{} attempts × {} + up to {} of waits = {} > the {} deadline: later attempts never run",
                    policy.max_attempts,
                    human(t),
                    human(delays),
                    human(total),
                    human(deadline)
                ),
            );
        }
    }
    let testing = service.is_some_and(|s| s.testing);
    if policy.seed.is_some() && !testing {
        add(
            "seed_in_policy",
            "seed",
            "a fixed seed gives every instance the same delays: remove it outside tests and simulations".into(),
        );
    }
    let Some(svc) = service else { return out };
    let retrying: Vec<&Layer> = svc.layers.iter().filter(|l| l.attempts > 1).collect();
    if retrying.len() > 1 {
        let product = svc.layers.iter().fold(1u128, |p, l| p.saturating_mul(u128::from(l.attempts)));
        let factors: Vec<String> = svc.layers.iter().map(|l| l.attempts.to_string()).collect();
        add(
            "multi_layer_retries",
            "layers",
            format!(
                "{} layers retry: {} = {} calls per request at the bottom; retry at one layer only (Google SRE book, \"Addressing Cascading Failures\")",
                retrying.len(),
                factors.join(" × "),
                product
            ),
        );
    }
    if let Some(c) = svc.client.as_ref().filter(|c| c.retries > 0 && retries) {
        let per = u128::from(c.retries) + 1;
        add(
            "stacked_client_retry",
            "client.retries",
            format!(
                "{} retries {} time{} by itself under {} attempts: up to {} × {} = {} requests per call; set the client's own retries to 0 (retrycore's integrations do)",
                c.name.as_deref().unwrap_or("the HTTP client"),
                c.retries,
                if c.retries == 1 { "" } else { "s" },
                policy.max_attempts,
                policy.max_attempts,
                per,
                per * u128::from(policy.max_attempts)
            ),
        );
    }
    for (i, pair) in svc.layers.windows(2).enumerate() {
        if let (Some(outer), Some(inner)) = (pair[0].timeout, pair[1].timeout) {
            if inner >= outer {
                add(
                    "inner_timeout_not_smaller",
                    &format!("layers[{}].timeout", i + 1),
                    format!(
                        "{} waits {} but its caller {} gives up after {}: the inner call outlives the outer, working for nobody",
                        pair[1].name,
                        human(inner),
                        pair[0].name,
                        human(outer)
                    ),
                );
            }
        }
    }
    let window = policy.deadline.unwrap_or_else(|| {
        policy.attempt_timeout.unwrap_or(0).saturating_mul(u64::from(policy.max_attempts)).saturating_add(delays)
    });
    if let Some(ret) = svc.retention {
        if ret < window.saturating_mul(2) {
            add(
                "retention_too_short",
                "idempotency.retention",
                format!(
                    "records kept {} but retries may arrive for {}: keep them at least {}, or a late retry runs again",
                    human(ret),
                    human(window),
                    format_duration(window.saturating_mul(2))
                ),
            );
        }
    }
    if let (Some(lease), Some(p99)) = (svc.lease, svc.p99) {
        if lease < p99 {
            add(
                "lease_shorter_than_p99",
                "idempotency.lease",
                format!(
                    "a {} lease is shorter than the work's p99 of {}: another worker takes over and it runs twice",
                    human(lease),
                    human(p99)
                ),
            );
        }
    }
    if let (Some(lease), Some(hb)) = (svc.lease, svc.heartbeat) {
        if hb.saturating_mul(2) > lease {
            add(
                "heartbeat_outside_lease",
                "heartbeat",
                format!(
                    "a heartbeat every {} renews a {} lease too late; renew at most every {}",
                    human(hb),
                    human(lease),
                    human(lease / 2)
                ),
            );
        }
    }
    out
}

/// Returns the gRPC code names a lint message may mention (kept for the docs).
pub fn grpc_if_idempotent() -> Vec<&'static str> {
    (0..=16u8)
        .filter_map(GrpcCode::new)
        .filter(|g| classify::grpc_category(*g).is_some_and(|c| c.default_rule() == RetryRule::IfIdempotent))
        .map(GrpcCode::name)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codes(policy: &str, service: Option<&str>) -> Vec<&'static str> {
        let p = PolicyConfig::from_json(policy).unwrap();
        let s = service.map(|s| Service::from_json(s).unwrap());
        lint(&p, s.as_ref()).into_iter().map(|f| f.code).collect()
    }

    #[test]
    fn clean_policy_has_no_findings() {
        assert!(codes(r#"{"version": 1, "deadline": "10s"}"#, None).is_empty());
    }

    #[test]
    fn finds_the_seed_pitfalls() {
        let c = codes(
            r#"{"max_attempts": 6, "jitter": "none", "seed": "7",
                "classification": {"rules": [{"status": 400, "retry": "always"}, {"category": "timeout", "retry": "always"}]}}"#,
            Some(
                r#"{"layers": [{"name": "gw", "max_attempts": 4, "timeout": "5s"}, {"name": "a", "max_attempts": 4, "timeout": "5s"},
                    {"name": "b", "max_attempts": 4}], "idempotency": {"retention": "1s", "lease": "1s"}, "p99": "2s", "heartbeat": "1s"}"#,
            ),
        );
        for want in [
            "no_jitter",
            "no_deadline",
            "too_many_attempts",
            "retries_client_error",
            "overrides_idempotency",
            "seed_in_policy",
            "multi_layer_retries",
            "inner_timeout_not_smaller",
            "retention_too_short",
            "lease_shorter_than_p99",
            "heartbeat_outside_lease",
        ] {
            assert!(c.contains(&want), "{want} missing from {c:?}");
        }
    }

    #[test]
    fn flags_post_and_patch_in_allowed_methods() {
        let c = codes(r#"{"deadline": "10s", "allowed_methods": ["GET", "post"]}"#, None);
        assert!(c.contains(&"non_idempotent_allowed_method"), "{c:?}");
        let c = codes(r#"{"deadline": "10s", "allowed_methods": ["GET", "PUT"]}"#, None);
        assert!(!c.contains(&"non_idempotent_allowed_method"), "{c:?}");
    }

    #[test]
    fn compensation_needs_a_key_when_the_service_is_described() {
        let policy = r#"{"purpose": "compensation", "deadline": "1h"}"#;
        let without = r#"{"idempotency": {"retention": "24h"}}"#;
        assert!(codes(policy, Some(without)).contains(&"compensation_without_key"));
        let with = r#"{"idempotency": {"key_sent": true}}"#;
        assert!(!codes(policy, Some(with)).contains(&"compensation_without_key"));
        assert!(!codes(r#"{"deadline": "1h"}"#, Some(without)).contains(&"compensation_without_key"));
        assert!(!codes(policy, None).contains(&"compensation_without_key"));
    }

    #[test]
    fn compensation_may_retry_more() {
        let c = codes(r#"{"max_attempts": 8, "purpose": "compensation", "deadline": "1h"}"#, None);
        assert!(!c.contains(&"too_many_attempts"));
    }
}

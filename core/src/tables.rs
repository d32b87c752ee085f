//! Every list and table a host shows, emitted from the core in one value.
//!
//! A host that needs a kind list (for its type unions), the error family of
//! a code (for its exception classes), a default or a limit reads it from
//! [`host_tables`] — at build time for generated typings, at run time for
//! checks — and a drift test in each host compares its view with this one.
//! A copied table is a bug waiting to happen: a hand copy of the duration
//! keys once missed `sampling_duration`, and TypeScript's breaker kinds
//! missed `sampling`.

use crate::backoff::{BackoffKind, Jitter};
use crate::breaker::{BreakerConfig, BreakerKind, Counted, State};
use crate::budget::BudgetConfig;
use crate::classify::{
    Category, BREAKER_OPEN_NAME, CATEGORY_BITS, CONNECTING_NAME, DOM_EXCEPTION_PREFIX, FETCH_FAILURE_MESSAGES,
    FETCH_NETWORK_NAME, NETWORK_CODE_PATTERN, NODE_READS, PYTHON_READS, RETRY_EXHAUSTED_NAME,
};
use crate::error::{ErrorClass, ErrorCode, ErrorDomain};
use crate::json::{Map, Value};
use crate::policy::PolicyConfig;
use crate::profile::Profile;
use crate::session::{GiveUpReason, RejectReason};

impl BackoffKind {
    /// Every kind, in document order.
    pub const ALL: [BackoffKind; 4] =
        [BackoffKind::Constant, BackoffKind::Linear, BackoffKind::Exponential, BackoffKind::Decorrelated];
}

impl BreakerKind {
    /// Every kind, in document order.
    pub const ALL: [BreakerKind; 4] =
        [BreakerKind::CountBased, BreakerKind::TimeBased, BreakerKind::Consecutive, BreakerKind::Sampling];
}

impl Jitter {
    /// Every jitter name a document accepts (as a string or an object's `kind`).
    pub const NAMES: [&'static str; 6] = ["none", "full", "equal", "proportional", "additive", "symmetric"];
}

impl RejectReason {
    /// Every reason, in order.
    pub const ALL: [RejectReason; 5] = [
        RejectReason::BreakerOpen,
        RejectReason::Throttled,
        RejectReason::DeadlineExceeded,
        RejectReason::ConcurrencyLimited,
        RejectReason::LimiterRejected,
    ];
}

/// The budget kinds a document accepts, each with its default configuration
/// (the gRPC throttle has none: `max_tokens` and `token_ratio` are required).
pub fn budget_kinds() -> Vec<(&'static str, Option<BudgetConfig>)> {
    vec![
        ("token_bucket", Some(BudgetConfig::token_bucket())),
        ("grpc", None),
        ("ratio", Some(BudgetConfig::ratio())),
        ("concurrency", Some(BudgetConfig::concurrency())),
        ("finagle", Some(BudgetConfig::finagle())),
        ("adaptive", Some(BudgetConfig::adaptive())),
    ]
}

/// Returns every table hosts show, as one JSON object:
/// `backoff_kinds`, `jitters`, `breaker_kinds`, `breaker_states`,
/// `breaker_outcomes` (in the order of their JS numbers), `budget_kinds`,
/// `categories` (with their default rule), `category_bits`,
/// `give_up_reasons` (with their marker), `reject_reasons`, `error_codes`
/// (with family, type-error and config flags, and `classes`: the
/// [`ErrorClass`] of the code in each [`ErrorDomain`]), `error_classes` (the
/// closed list of class names every host maps to its idiom), `profiles`, `limits`,
/// `fetch_failure_messages`, `network_code_pattern`, `error_markers`, `reads` (where each
/// host reads a failure's method, a response's status and headers, and a connect phase), `max_key_length`, `seen_status` (the status range taken from an error's attributes), `metrics` (every name map's instruments, [`crate::metrics::tables`]) and `defaults` (the default policy, breaker and
/// budgets in their normalized document form).
pub fn host_tables() -> Value {
    let names = |it: &mut dyn Iterator<Item = &'static str>| Value::from(it.map(Value::from).collect::<Vec<_>>());
    let mut limits = Map::new();
    for (name, value) in crate::limits::ALL {
        limits.insert((*name).into(), json!(value));
    }
    let mut budget_defaults = Map::new();
    for (name, cfg) in budget_kinds() {
        budget_defaults.insert(name.into(), cfg.map_or(Value::Null, |c| c.to_json_value()));
    }
    json!({
        "backoff_kinds": names(&mut BackoffKind::ALL.iter().map(|k| k.name())),
        "jitters": names(&mut Jitter::NAMES.iter().copied()),
        "breaker_kinds": names(&mut BreakerKind::ALL.iter().map(|k| k.name())),
        "breaker_states": names(&mut State::ALL.iter().map(|s| s.code())),
        "breaker_outcomes": names(&mut Counted::ALL.iter().map(|c| c.code())),
        "budget_kinds": names(&mut budget_kinds().into_iter().map(|(n, _)| n)),
        "categories": Category::ALL.iter().map(|c| json!({"code": c.code(), "retry": c.default_rule().code()})).collect::<Vec<_>>(),
        "category_bits": CATEGORY_BITS,
        "give_up_reasons": GiveUpReason::ALL.iter().map(|r| json!({"code": r.code(), "marked": r.marks_exhausted()})).collect::<Vec<_>>(),
        "reject_reasons": names(&mut RejectReason::ALL.iter().map(|r| r.code())),
        "error_codes": ErrorCode::ALL.iter().map(|c| json!({
            "code": c.code(), "family": c.family().code(), "type_error": c.is_type_error(), "config": c.is_config(),
            "classes": ErrorDomain::ALL.iter().map(|d| (d.code().to_owned(), Value::from(c.class(*d).code()))).collect::<Map<_, _>>(),
        })).collect::<Vec<_>>(),
        "error_classes": names(&mut ErrorClass::ALL.iter().map(|c| c.code())),
        "profiles": names(&mut Profile::ALL.iter().map(|p| p.name())),
        "limits": limits,
        "fetch_failure_messages": FETCH_FAILURE_MESSAGES,
        "network_code_pattern": NETWORK_CODE_PATTERN,
        "error_markers": {
            "retry_exhausted": RETRY_EXHAUSTED_NAME,
            "breaker_open": BREAKER_OPEN_NAME,
            "dom_exception_prefix": DOM_EXCEPTION_PREFIX,
            "fetch_network": FETCH_NETWORK_NAME,
            "connecting": CONNECTING_NAME,
        },
        "reads": {"python": PYTHON_READS.to_json_value(), "node": NODE_READS.to_json_value()},
        "max_key_length": crate::idempotency::DEFAULT_MAX_KEY_LEN,
        "seen_status": [crate::classify::SEEN_STATUS.0, crate::classify::SEEN_STATUS.1],
        "store_protocol": crate::idempotency::store_protocol(),
        "metrics": crate::metrics::tables(),
        "defaults": {
            "policy": PolicyConfig::default().to_json_value(),
            "breaker": BreakerConfig::default().to_json_value(),
            "budgets": budget_defaults,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_name_is_one_the_document_reader_accepts() {
        for k in BackoffKind::ALL {
            let doc = json!({"backoff": k.name(), "jitter": "none", "initial": "1s"});
            assert!(PolicyConfig::from_json_value(&doc).is_ok(), "{}", k.name());
        }
        for k in BreakerKind::ALL {
            let c = BreakerConfig::from_json_value(&json!({"kind": k.name()}), "").unwrap();
            assert_eq!(c.kind, k);
        }
        for (name, cfg) in budget_kinds() {
            let doc = match name {
                "grpc" => json!({"kind": "grpc", "max_tokens": 10, "token_ratio": 0.1}),
                _ => json!({"kind": name}),
            };
            let c = BudgetConfig::from_json_value(&doc, "").unwrap();
            assert_eq!(c.kind_name(), name);
            if let Some(d) = cfg {
                assert_eq!(d.kind_name(), name);
            }
        }
        for j in Jitter::NAMES {
            let doc = match j {
                "none" | "full" | "equal" => json!({"jitter": j}),
                "additive" => json!({"jitter": {"kind": j, "amount": "10ms"}}),
                _ => json!({"jitter": {"kind": j, "factor": 0.5}}),
            };
            assert!(PolicyConfig::from_json_value(&doc).is_ok(), "{j}");
        }
        // And a name outside the lists is refused.
        assert!(BreakerConfig::from_json_value(&json!({"kind": "rolling"}), "").is_err());
        assert!(BudgetConfig::from_json_value(&json!({"kind": "leaky_bucket"}), "").is_err());
    }

    #[test]
    fn tables_hold_every_list() {
        let t = host_tables();
        assert_eq!(t["breaker_kinds"].as_array().unwrap().len(), 4);
        assert_eq!(t["breaker_states"][2], "half_open");
        assert_eq!(t["breaker_outcomes"], json!(["success", "failure", "ignored"]));
        assert_eq!(t["categories"].as_array().unwrap().len(), Category::ALL.len());
        assert_eq!(t["error_codes"].as_array().unwrap().len(), ErrorCode::ALL.len());
        assert_eq!(t["category_bits"], 5);
        assert!(t["defaults"]["policy"]["max_attempts"].is_number());
        assert!(t["defaults"]["budgets"]["grpc"].is_null());
        assert_eq!(t["limits"]["max_items"], 65_536);
        assert_eq!(t["seen_status"], json!([100, 999]));
        // The markers a JS host writes into a cause chain are names the core's table reads.
        let m = &t["error_markers"];
        assert_eq!(m["retry_exhausted"], "retrycore:retry_exhausted");
        assert_eq!(m["breaker_open"], "retrycore:breaker_open");
        let fetch = crate::classify::lookup_name(m["fetch_network"].as_str().unwrap());
        assert_eq!(fetch.map(|(c, _)| c), Some(Category::ConnectionLost));
        let dom = format!("{}TimeoutError", m["dom_exception_prefix"].as_str().unwrap());
        assert_eq!(crate::classify::lookup_name(&dom).map(|(c, _)| c), Some(Category::Timeout));
        let connecting = crate::classify::lookup_name(m["connecting"].as_str().unwrap()).unwrap();
        assert!(connecting.1.connecting());
        assert_eq!(t["reads"]["python"]["error_method"][0], "request.method");
        assert_eq!(t["reads"]["node"]["connect_phase"][0]["values"][1], "connect");
    }
}

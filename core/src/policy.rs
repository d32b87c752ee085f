//! The retry policy: its document, its settings and the shared objects its
//! sessions use.
//!
//! A policy document is JSON with snake_case keys and `"version": 1`; the
//! same document gives the same decisions in every runtime. Durations are
//! strings with a unit (`"250ms"`); unknown keys are errors; other
//! libraries' key names (`initial_interval`, `max_interval`, …) are accepted
//! as aliases (docs/policy.md).
//! The JSON Schema is `schema/policy.schema.json`.

use crate::backoff::{Backoff, BackoffBuilder, BackoffKind, Jitter, Schedule};
use crate::breaker::{BreakerConfig, CircuitBreaker, SharedBreaker};
use crate::budget::{Budget, BudgetConfig, SharedBudget};
use crate::classify::{self, Classifier, RetryRule};
use crate::counters::Counters;
use crate::doc::{self, Obj};
use crate::duration::format_duration;
use crate::json::{Map, Value};
use crate::limiters::{Limiter, LimiterConfig, SharedLimiter};
use crate::profile::Profile;
use crate::rng::{Rng, Xoshiro256pp};
use crate::session::{Gate, RetrySession, SessionOptions};
use crate::{Error, ErrorCode, Result};
use std::sync::{Arc, Mutex};

/// The document format version this build reads.
pub const VERSION: u64 = 1;

/// Default `max_retry_after`: 60 s.
pub const DEFAULT_MAX_RETRY_AFTER: u64 = 60_000_000_000;

/// What a policy is for.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
pub enum Purpose {
    /// An ordinary call.
    #[default]
    Default,
    /// A compensation, which must eventually succeed, so lint allows it more attempts.
    Compensation,
}

impl Purpose {
    /// Returns the document name.
    pub const fn name(self) -> &'static str {
        match self {
            Purpose::Default => "default",
            Purpose::Compensation => "compensation",
        }
    }
}

/// What to do with a server delay longer than `max_retry_after`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
pub enum LongServerDelay {
    /// Give up with `retry_after_too_long` (the default).
    #[default]
    GiveUp,
    /// Wait `max_retry_after` instead, and report the delay as capped.
    Cap,
}

/// The settings of a retry policy (plain data; see [`RetryPolicy`] for the
/// live object with its generator, breaker and budgets).
#[derive(Clone, Debug, PartialEq)]
pub struct PolicyConfig {
    /// A name for counters and messages.
    pub name: Option<String>,
    /// What the policy is for.
    pub purpose: Purpose,
    /// Calls at most, the first included (default 3).
    pub max_attempts: u32,
    /// Total time since the first attempt began, in nanoseconds.
    pub deadline: Option<u64>,
    /// Time each attempt may take, in nanoseconds.
    pub attempt_timeout: Option<u64>,
    /// How long to wait between attempts.
    pub backoff: Backoff,
    /// How failures are classified.
    pub classifier: Classifier,
    /// The default declaration of the calls this policy guards (§4.2).
    pub idempotent: Option<bool>,
    /// Honour server delays (default true).
    pub honor_retry_after: bool,
    /// The longest server delay accepted (default 60 s).
    pub max_retry_after: u64,
    /// What a longer server delay does.
    pub on_long_retry_after: LongServerDelay,
    /// The generator's seed (tests and simulations only; lint flags it).
    pub seed: Option<u64>,
    /// The breaker this policy's sessions share.
    pub breaker: Option<BreakerConfig>,
    /// The budgets this policy's sessions share.
    pub budgets: Vec<BudgetConfig>,
    /// The limiter every attempt of this policy's sessions passes
    /// (docs/limiters.md, "In a policy").
    pub limiter: Option<LimiterConfig>,
    /// The anchor whose arithmetic and defaults the policy reproduces.
    pub profile: Option<Profile>,
}

impl Default for PolicyConfig {
    fn default() -> Self {
        PolicyConfig {
            name: None,
            purpose: Purpose::Default,
            max_attempts: 3,
            deadline: None,
            attempt_timeout: None,
            backoff: Backoff::default(),
            classifier: Classifier::default(),
            idempotent: None,
            honor_retry_after: true,
            max_retry_after: DEFAULT_MAX_RETRY_AFTER,
            on_long_retry_after: LongServerDelay::GiveUp,
            seed: None,
            breaker: None,
            budgets: Vec::new(),
            limiter: None,
            profile: None,
        }
    }
}

/// Longest policy document accepted.
pub const MAX_DOCUMENT: usize = crate::limits::MAX_DOCUMENT_BYTES;

fn jitter_value(v: &Value, field: &str, unit: Option<f64>) -> Result<Jitter> {
    let factor = |x: f64, f: &str| -> Result<f64> {
        if (0.0..=1.0).contains(&x) {
            Ok(x)
        } else {
            Err(Error::new(ErrorCode::OutOfRange, f.to_owned(), format!("must be in [0, 1], got {x}")))
        }
    };
    match v {
        Value::String(s) => match s.as_str() {
            "none" => Ok(Jitter::None),
            "full" => Ok(Jitter::Full),
            "equal" => Ok(Jitter::Equal),
            other => Err(Error::new(
                ErrorCode::InvalidValue,
                field.to_owned(),
                format!(
                    "must be \"none\", \"full\", \"equal\", a factor in [0, 1], or an object with kind proportional, additive or symmetric; got {other:?}"
                ),
            )),
        },
        Value::Number(_) => Ok(Jitter::Proportional(factor(doc::number(v, field)?, field)?)),
        Value::Object(_) => {
            let mut o = Obj::typed(v, field, unit)?;
            let (kind, kf) = o
                .str("kind", &[])?
                .ok_or_else(|| Error::new(ErrorCode::MissingField, doc::join(field, "kind"), "a jitter object names its kind"))?;
            let j = match kind {
                "none" => Jitter::None,
                "full" => Jitter::Full,
                "equal" => Jitter::Equal,
                "proportional" | "symmetric" => {
                    let f = o.f64("factor", &[])?.ok_or_else(|| {
                        Error::new(ErrorCode::MissingField, doc::join(field, "factor"), format!("{kind} jitter needs a factor"))
                    })?;
                    let f = factor(f, &doc::join(field, "factor"))?;
                    if kind == "proportional" {
                        Jitter::Proportional(f)
                    } else {
                        Jitter::Symmetric(f)
                    }
                }
                "additive" => Jitter::Additive(o.duration("amount", &["jitter"])?.ok_or_else(|| {
                    Error::new(ErrorCode::MissingField, doc::join(field, "amount"), "additive jitter needs an amount")
                })?),
                other => {
                    return Err(Error::new(
                        ErrorCode::InvalidValue,
                        kf,
                        format!("must be none, full, equal, proportional, additive or symmetric, got {other:?}"),
                    ))
                }
            };
            o.finish()?;
            Ok(j)
        }
        other => Err(Error::new(
            ErrorCode::InvalidType,
            field.to_owned(),
            format!("must be a jitter name, a factor or an object, got {}", doc::type_name(other)),
        )),
    }
}

fn jitter_to_json(j: Jitter) -> Value {
    match j {
        Jitter::None | Jitter::Full | Jitter::Equal => Value::from(j.name()),
        Jitter::Proportional(f) | Jitter::Symmetric(f) => json!({"kind": j.name(), "factor": f}),
        Jitter::Additive(a) => json!({"kind": "additive", "amount": format_duration(a)}),
    }
}

impl PolicyConfig {
    /// Classifies a failure as a session of this policy does: the failure's
    /// own `idempotent`, else the policy's declaration ([`idempotent`](Self::idempotent)),
    /// then the policy's classifier. A host's `classify(failure, policy)` calls this.
    pub fn classify(&self, f: &classify::Failure<'_>) -> classify::Verdict {
        match (f.idempotent, self.idempotent) {
            (None, Some(_)) => self.classifier.classify(&classify::Failure { idempotent: self.idempotent, ..*f }),
            _ => self.classifier.classify(f),
        }
    }

    /// Parses a policy document.
    ///
    /// # Errors
    /// `invalid_json`, `invalid_type`, `unknown_key`, `unknown_version`,
    /// `invalid_duration`, `out_of_range`, `invalid_value`,
    /// `invalid_combination` or `missing_field`, naming the field.
    pub fn from_json(text: &str) -> Result<PolicyConfig> {
        if text.len() > MAX_DOCUMENT {
            return Err(Error::new(ErrorCode::TooLarge, "", "a policy document is at most 1 MiB"));
        }
        Self::from_json_value(&doc::parse_json(text)?)
    }

    /// Reads a policy document already parsed as JSON.
    ///
    /// A `profile` supplies its anchor's defaults for the keys the document
    /// does not give (see [`Profile::defaults`]).
    pub fn from_json_value(v: &Value) -> Result<PolicyConfig> {
        Self::from_value_in(v, None)
    }

    /// Reads typed options: a policy object whose durations may also be
    /// bare numbers of `unit_ns` nanoseconds (1e6 for JavaScript
    /// milliseconds, 1e9 for Python seconds), anywhere a document takes a
    /// duration string — the breaker's and budgets' included. Which fields
    /// are durations is the document reader's knowledge, so no host keeps
    /// a list of duration keys.
    ///
    /// A `null` anywhere in typed options is refused (leaving a key out
    /// gives its default; see `doc::refuse_null`).
    ///
    /// # Errors
    /// As [`from_json_value`](Self::from_json_value); a numeric duration
    /// that is NaN, infinite or negative is `out_of_range`; a `null` is
    /// `invalid_type` naming its field.
    pub fn from_typed_value(v: &Value, unit_ns: f64) -> Result<PolicyConfig> {
        crate::doc::refuse_null(v, "")?;
        Self::from_value_in(v, Some(unit_ns))
    }

    fn from_value_in(v: &Value, unit: Option<f64>) -> Result<PolicyConfig> {
        let profile = match v.get("profile") {
            Some(Value::String(s)) => Some(Profile::parse(s, "profile")?),
            Some(Value::Null) | None => None,
            Some(other) => {
                return Err(Error::new(
                    ErrorCode::InvalidType,
                    "profile",
                    format!("must be a profile name, got {}", doc::type_name(other)),
                ))
            }
        };
        let merged;
        let v = match (profile, v) {
            (Some(p), Value::Object(m)) => {
                merged = Value::Object(crate::profile::merge_defaults(m, p));
                &merged
            }
            _ => v,
        };
        let mut o = Obj::typed(v, "", unit)?;
        let mut c = PolicyConfig { profile, ..PolicyConfig::default() };
        o.take("profile", &[])?;
        if let Some((v, f)) = o.take("version", &[])? {
            let n = doc::uint(v, &f, 0, u64::MAX)
                .map_err(|_| Error::new(ErrorCode::UnknownVersion, f.clone(), "must be the integer 1"))?;
            if n != VERSION {
                return Err(Error::new(
                    ErrorCode::UnknownVersion,
                    f,
                    format!("version {n} is not known; this build reads version 1"),
                ));
            }
        }
        if let Some((s, _)) = o.str("name", &[])? {
            c.name = Some(s.to_owned());
        }
        if let Some((s, f)) = o.str("purpose", &[])? {
            c.purpose = match s {
                "default" => Purpose::Default,
                "compensation" => Purpose::Compensation,
                _ => {
                    return Err(Error::new(
                        ErrorCode::InvalidValue,
                        f,
                        format!("must be default or compensation, got {s:?}"),
                    ))
                }
            };
        }
        if let Some(n) = o.uint("max_attempts", &["attempts"], 1, u64::from(u32::MAX))? {
            c.max_attempts = n as u32;
        }
        if let Some(cap) = profile.and_then(Profile::max_attempts_cap) {
            // gRFC A6: maxAttempts above 5 are treated as 5.
            c.max_attempts = c.max_attempts.min(cap);
        }
        c.deadline = o.duration("deadline", &["total_timeout"])?;
        c.attempt_timeout = o.duration("attempt_timeout", &["per_attempt_timeout"])?;
        let mut b = BackoffBuilder { profile, ..BackoffBuilder::default() };
        if let Some((s, f)) = o.str("backoff", &["backoff_kind"])? {
            b.kind = Some(BackoffKind::from_name(s).ok_or_else(|| {
                Error::new(
                    ErrorCode::InvalidValue,
                    f,
                    format!("must be constant, linear, exponential or decorrelated, got {s:?}"),
                )
            })?);
        }
        b.initial = o.duration("initial", &["initial_interval", "initial_delay", "base_delay"])?;
        b.max_delay = o.duration("max_delay", &["max_interval", "max_backoff"])?;
        b.multiplier = o.f64("multiplier", &["backoff_multiplier"])?;
        b.increment = o.duration("increment", &[])?;
        b.min_delay = o.duration("min_delay", &[])?;
        b.immediate_first_retry = o.bool("immediate_first_retry", &[])?;
        if let Some((v, f)) = o.take("jitter", &[])? {
            b.jitter = Some(jitter_value(v, &f, unit)?);
        }
        c.backoff = b.build()?;
        c.classifier.aws_codes = matches!(profile, Some(Profile::AwsStandard | Profile::Aws2026));
        if let Some((v, f)) = o.take("classification", &["classify"])? {
            let mut co = Obj::new(v, &f)?;
            if let Some(d) = co.bool("defaults", &[])? {
                c.classifier.defaults = d;
            }
            if let Some((rv, rf)) = co.take("rules", &[])? {
                let items = rv.as_array().ok_or_else(|| {
                    Error::new(
                        ErrorCode::InvalidType,
                        rf.clone(),
                        format!("must be a list of rules, got {}", doc::type_name(rv)),
                    )
                })?;
                for (i, item) in items.iter().enumerate() {
                    c.classifier.rules.push(classify::parse_rule(item, &format!("{rf}[{i}]"))?);
                }
            }
            co.finish()?;
        }
        if let Some((v, f)) = o.take("non_retryable", &[])? {
            c.classifier.rules.push(classify::parse_name_list(v, &f, RetryRule::Never)?);
        }
        if let Some((v, f)) = o.take("retryable", &[])? {
            c.classifier.rules.push(classify::parse_name_list(v, &f, RetryRule::Always)?);
        }
        c.idempotent = o.bool("idempotent", &[])?;
        if let Some((v, f)) = o.take("allowed_methods", &[])? {
            c.classifier.allowed_methods = Some(classify::parse_methods(v, &f)?);
        }
        if let Some(h) = o.bool("honor_retry_after", &["honour_retry_after"])? {
            c.honor_retry_after = h;
        }
        if let Some((v, f)) = o.take("retry_after_statuses", &["retry_after_status_codes"])? {
            c.classifier.retry_after_statuses = Some(classify::parse_statuses(v, &f)?);
        }
        if let Some(m) = o.duration("max_retry_after", &[])? {
            c.max_retry_after = m;
        }
        if let Some(cap) = o.bool("cap_retry_after", &[])? {
            c.on_long_retry_after = if cap { LongServerDelay::Cap } else { LongServerDelay::GiveUp };
        }
        if let Some((v, f)) = o.take("seed", &[])? {
            c.seed = Some(doc::u64_string(v, &f)?);
        }
        if let Some((v, f)) = o.take("breaker", &["circuit_breaker"])? {
            // The polly profile's breaker is Polly's (sampling) unless the document names a kind.
            let polly;
            let v = match (profile, v) {
                (Some(Profile::Polly), Value::Object(m)) if !m.contains_key("kind") => {
                    let mut m = m.clone();
                    m.insert("kind".into(), "sampling".into());
                    polly = Value::Object(m);
                    &polly
                }
                _ => v,
            };
            c.breaker = Some(BreakerConfig::from_value_in(v, &f, unit)?);
        }
        let one = o.take("budget", &["retry_budget"])?;
        let many = o.take("budgets", &[])?;
        match (one, many) {
            (Some(_), Some((_, f))) => {
                return Err(Error::new(ErrorCode::InvalidCombination, f, "give budget or budgets, not both"))
            }
            (Some((v, f)), None) => c.budgets.push(BudgetConfig::from_value_in(v, &f, unit)?),
            (None, Some((v, f))) => {
                let items = v.as_array().ok_or_else(|| {
                    Error::new(
                        ErrorCode::InvalidType,
                        f.clone(),
                        format!("must be a list of budgets, got {}", doc::type_name(v)),
                    )
                })?;
                for (i, item) in items.iter().enumerate() {
                    c.budgets.push(BudgetConfig::from_value_in(item, &format!("{f}[{i}]"), unit)?);
                }
            }
            (None, None) => {}
        }
        if let Some((v, f)) = o.take("limiter", &["rate_limiter"])? {
            c.limiter = Some(LimiterConfig::from_value_in(v, &f, unit)?);
        }
        for (i, b) in c.budgets.iter().enumerate() {
            if c.budgets[..i].iter().any(|x| x.name == b.name) {
                return Err(Error::new(
                    ErrorCode::InvalidCombination,
                    format!("budgets[{i}].name"),
                    format!("two budgets are named {:?}", b.name),
                ));
            }
        }
        o.finish()?;
        Ok(c)
    }

    /// Returns the settings of a profile (`"aws-standard"`, `"polly"`, …)
    /// with its anchor's defaults (see [`crate::profile`]).
    ///
    /// # Errors
    /// `invalid_value` for an unknown profile name.
    pub fn for_profile(name: &str) -> Result<PolicyConfig> {
        let p = Profile::parse(name, "profile")?;
        Self::from_json_value(&json!({ "version": 1, "profile": p.name() }))
    }

    /// Writes the policy as a document, every setting spelled out.
    pub fn to_json_value(&self) -> Value {
        let mut m = Map::new();
        m.insert("version".into(), VERSION.into());
        if let Some(p) = self.profile {
            m.insert("profile".into(), p.name().into());
        }
        if let Some(n) = &self.name {
            m.insert("name".into(), n.as_str().into());
        }
        if self.purpose != Purpose::Default {
            m.insert("purpose".into(), self.purpose.name().into());
        }
        m.insert("max_attempts".into(), self.max_attempts.into());
        if let Some(d) = self.deadline {
            m.insert("deadline".into(), format_duration(d).into());
        }
        if let Some(d) = self.attempt_timeout {
            m.insert("attempt_timeout".into(), format_duration(d).into());
        }
        let b = &self.backoff;
        m.insert("backoff".into(), b.kind().name().into());
        m.insert("initial".into(), format_duration(b.initial_ns()).into());
        m.insert("max_delay".into(), format_duration(b.max_delay_ns()).into());
        // Lossless: a multiplier or increment the kind does not use is still
        // written when it was set, so the form parses back to equal settings.
        if b.kind() == BackoffKind::Exponential || b.multiplier() != crate::backoff::DEFAULT_MULTIPLIER {
            m.insert("multiplier".into(), b.multiplier().into());
        }
        if b.kind() == BackoffKind::Linear || b.increment_ns() != b.initial_ns() {
            m.insert("increment".into(), format_duration(b.increment_ns()).into());
        }
        if b.min_delay_ns() > 0 {
            m.insert("min_delay".into(), format_duration(b.min_delay_ns()).into());
        }
        if b.immediate_first_retry() {
            m.insert("immediate_first_retry".into(), true.into());
        }
        m.insert("jitter".into(), jitter_to_json(b.jitter()));
        if !self.classifier.defaults || !self.classifier.rules.is_empty() {
            let mut co = Map::new();
            co.insert("defaults".into(), self.classifier.defaults.into());
            co.insert("rules".into(), Value::Array(self.classifier.rules.iter().map(classify::rule_to_json).collect()));
            m.insert("classification".into(), Value::Object(co));
        }
        if let Some(i) = self.idempotent {
            m.insert("idempotent".into(), i.into());
        }
        if let Some(ms) = &self.classifier.allowed_methods {
            m.insert("allowed_methods".into(), ms.iter().map(|x| Value::from(x.as_str())).collect());
        }
        m.insert("honor_retry_after".into(), self.honor_retry_after.into());
        if let Some(ss) = &self.classifier.retry_after_statuses {
            m.insert("retry_after_statuses".into(), ss.iter().map(|&x| Value::from(x)).collect());
        }
        m.insert("max_retry_after".into(), format_duration(self.max_retry_after).into());
        m.insert("cap_retry_after".into(), (self.on_long_retry_after == LongServerDelay::Cap).into());
        if let Some(s) = self.seed {
            m.insert("seed".into(), s.to_string().into());
        }
        if let Some(b) = &self.breaker {
            m.insert("breaker".into(), b.to_json_value());
        }
        // An empty list is written when the profile would supply a budget:
        // `"budgets": []` switches it off, and leaving the key out would
        // bring it back when the form is read again.
        let profile_budget = self.profile.is_some_and(|p| p.defaults().get("budget").is_some());
        if !self.budgets.is_empty() || profile_budget {
            m.insert("budgets".into(), Value::Array(self.budgets.iter().map(BudgetConfig::to_json_value).collect()));
        }
        if let Some(l) = &self.limiter {
            m.insert("limiter".into(), l.to_json_value());
        }
        Value::Object(m)
    }

    /// Writes the policy as a JSON document.
    pub fn to_json(&self) -> String {
        self.to_json_value().to_string()
    }
}

/// A first attempt begun without a session ([`RetryPolicy::begin_first`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FirstAttempt {
    seed: u64,
    start: u64,
}

impl FirstAttempt {
    /// Returns when the attempt began, in nanoseconds on the caller's clock.
    pub fn started_ns(&self) -> u64 {
        self.start
    }
}

/// The shared parts of a policy.
#[derive(Debug)]
pub(crate) struct PolicyInner {
    pub(crate) config: PolicyConfig,
    pub(crate) rng: Mutex<Xoshiro256pp>,
    pub(crate) breaker: Option<SharedBreaker>,
    pub(crate) budgets: Vec<SharedBudget>,
    pub(crate) limiter: Option<SharedLimiter>,
    pub(crate) counters: Counters,
}

/// A live retry policy: settings plus the generator, breaker, budgets and
/// counters its sessions share. Cloning is cheap and shares them.
#[derive(Clone, Debug)]
pub struct RetryPolicy {
    pub(crate) inner: Arc<PolicyInner>,
}

/// Draws a seed from the operating system.
#[cfg(feature = "os-rng")]
pub fn os_seed() -> Result<u64> {
    let mut b = [0u8; 8];
    getrandom::fill(&mut b).map_err(|e| {
        Error::new(ErrorCode::InvalidState, "seed", format!("the operating system gave no entropy: {e}"))
    })?;
    Ok(u64::from_le_bytes(b))
}

impl RetryPolicy {
    /// Creates a live policy. Its generator is seeded from `config.seed`,
    /// else from `entropy` (a binding passes OS entropy), else — with the
    /// `os-rng` feature — from the operating system.
    ///
    /// Inline breaker and budget settings become new objects owned by this
    /// policy and shared by its sessions; attach existing shared ones with
    /// [`with_breaker`](Self::with_breaker) / [`with_budgets`](Self::with_budgets).
    ///
    /// # Errors
    /// `missing_field` (`seed`) when no seed or entropy is available;
    /// breaker and budget validation errors.
    pub fn new(config: PolicyConfig, entropy: Option<u64>) -> Result<RetryPolicy> {
        let seed = match (config.seed, entropy) {
            (Some(s), _) => s,
            (None, Some(e)) => e,
            (None, None) => Self::fallback_seed()?,
        };
        let breaker = match &config.breaker {
            Some(b) => Some(CircuitBreaker::new(b.clone()).map_err(|e| e.within("breaker"))?.shared()),
            None => None,
        };
        let budgets = config
            .budgets
            .iter()
            .enumerate()
            .map(|(i, b)| Budget::new(b.clone()).map(Budget::shared).map_err(|e| e.within(&format!("budgets[{i}]"))))
            .collect::<Result<Vec<_>>>()?;
        // Created at time 0 of the sessions' clock (AWS's adaptive limiter
        // measures its rate from there; the others only start windows).
        let limiter = config.limiter.as_ref().map(|l| Limiter::new(l.clone(), 0).shared());
        Ok(RetryPolicy {
            inner: Arc::new(PolicyInner {
                config,
                rng: Mutex::new(Xoshiro256pp::seed_from_u64(seed)),
                breaker,
                budgets,
                limiter,
                counters: Counters::default(),
            }),
        })
    }

    #[cfg(feature = "os-rng")]
    fn fallback_seed() -> Result<u64> {
        os_seed()
    }

    #[cfg(not(feature = "os-rng"))]
    fn fallback_seed() -> Result<u64> {
        Err(Error::new(
            ErrorCode::MissingField,
            "seed",
            "no seed and no entropy: pass entropy, or enable the os-rng feature",
        ))
    }

    /// Parses a document and creates the policy (see [`new`](Self::new)).
    pub fn from_json(text: &str, entropy: Option<u64>) -> Result<RetryPolicy> {
        RetryPolicy::new(PolicyConfig::from_json(text)?, entropy)
    }

    /// Returns a policy with the same settings whose sessions share `breaker`.
    pub fn with_breaker(&self, breaker: Option<SharedBreaker>) -> RetryPolicy {
        self.rebuild(|i| PolicyInner { breaker, ..i })
    }

    /// Returns a policy with the same settings whose sessions share `budgets`.
    pub fn with_budgets(&self, budgets: Vec<SharedBudget>) -> RetryPolicy {
        self.rebuild(|i| PolicyInner { budgets, ..i })
    }

    /// Returns a policy with the same settings whose sessions pass
    /// `limiter` (one limiter per downstream, shared by every policy that
    /// calls it).
    pub fn with_limiter(&self, limiter: Option<SharedLimiter>) -> RetryPolicy {
        self.rebuild(|i| PolicyInner { limiter, ..i })
    }

    /// Returns the shared limiter, if any.
    pub fn limiter(&self) -> Option<&SharedLimiter> {
        self.inner.limiter.as_ref()
    }

    fn rebuild(&self, f: impl FnOnce(PolicyInner) -> PolicyInner) -> RetryPolicy {
        let state = self.inner.rng.lock().map(|g| g.clone()).unwrap_or_else(|p| p.into_inner().clone());
        let inner = PolicyInner {
            config: self.inner.config.clone(),
            rng: Mutex::new(state),
            breaker: self.inner.breaker.clone(),
            budgets: self.inner.budgets.clone(),
            limiter: self.inner.limiter.clone(),
            counters: Counters::default(),
        };
        RetryPolicy { inner: Arc::new(f(inner)) }
    }

    /// Returns the settings.
    pub fn config(&self) -> &PolicyConfig {
        &self.inner.config
    }

    /// Returns the shared breaker, if any.
    pub fn breaker(&self) -> Option<&SharedBreaker> {
        self.inner.breaker.as_ref()
    }

    /// Returns true when a session of this policy reads an error's message
    /// ([`Failure::message`](crate::classify::Failure::message)): a
    /// classification rule or the shared breaker's counting rule matches
    /// messages. A host reads and sends a message only then.
    pub fn needs_message(&self) -> bool {
        self.inner.config.classifier.needs_message()
            || self.inner.breaker.as_ref().is_some_and(|b| crate::session::lock(b).config().needs_message())
    }

    /// Returns the shared budgets.
    pub fn budgets(&self) -> &[SharedBudget] {
        &self.inner.budgets
    }

    /// Returns the counters of all sessions of this policy.
    pub fn counters(&self) -> &Counters {
        &self.inner.counters
    }

    /// Lists low / mid / high delays per retry and the cumulative worst case.
    pub fn schedule(&self) -> Schedule {
        self.inner.config.backoff.schedule(self.inner.config.max_attempts)
    }

    /// Takes the next u64 of the policy's generator (a new session's seed).
    pub(crate) fn next_seed(&self) -> u64 {
        match self.inner.rng.lock() {
            Ok(mut g) => g.next_u64(),
            Err(p) => p.into_inner().next_u64(),
        }
    }

    /// Starts one logical operation.
    ///
    /// # Errors
    /// `invalid_key` for a caller key that breaks the key rules;
    /// `missing_field` when no key is given and none can be minted (no
    /// `key_entropy` and no `os-rng` feature).
    pub fn session(&self, opts: SessionOptions) -> Result<RetrySession> {
        RetrySession::new(self.clone(), opts)
    }

    /// Begins a call's first attempt at `now` (ns) without a session, when
    /// its attempts pass no gate (no breaker, budgets or limiter; else None): takes
    /// the session's seed from the generator and counts the operation and
    /// the attempt, as [`session`](Self::session) and `before_attempt` do.
    /// A host's fast path for the common call that succeeds first time:
    /// [`first_succeeded`](Self::first_succeeded) ends it with the counts
    /// `on_success` makes; [`resume`](Self::resume) gives its session (a
    /// failure, or a caller reading the session), which counts nothing twice.
    pub fn begin_first(&self, now: u64) -> Option<FirstAttempt> {
        if self.inner.breaker.is_some() || !self.inner.budgets.is_empty() || self.inner.limiter.is_some() {
            return None;
        }
        let seed = self.next_seed();
        self.inner.counters.operation();
        self.inner.counters.attempt();
        Some(FirstAttempt { seed, start: now })
    }

    /// Ends a [`begin_first`](Self::begin_first) attempt that succeeded at
    /// `now`: the operation succeeded first time and took `now - start`.
    pub fn first_succeeded(&self, a: FirstAttempt, now: u64) {
        self.inner.counters.success(false, now.saturating_sub(a.start));
    }

    /// The session of a [`begin_first`](Self::begin_first) attempt, in flight
    /// (its seed, gated at its start), with the gate that let it through.
    ///
    /// # Errors
    /// As [`session`](Self::session); `opts.seed` is the attempt's.
    pub fn resume(&self, a: FirstAttempt, opts: SessionOptions) -> Result<(RetrySession, Gate)> {
        let mut s = RetrySession::new(self.clone(), SessionOptions { seed: Some(a.seed), ..opts })?;
        let g = s.gate(a.start, false)?;
        Ok((s, g))
    }

    /// Returns a policy for users' test suites (stamina's `set_testing`):
    /// at most `attempts` calls, every delay capped at `max_delay`
    /// nanoseconds (0: no waiting at all), server delays capped likewise.
    /// Breakers and budgets are shared with this policy.
    ///
    /// # Errors
    /// `out_of_range` when `attempts` is 0.
    pub fn testing(&self, attempts: u32, max_delay: u64) -> Result<RetryPolicy> {
        if attempts == 0 {
            return Err(Error::new(ErrorCode::OutOfRange, "attempts", "must be at least 1"));
        }
        let mut c = self.inner.config.clone();
        c.max_attempts = attempts;
        let b = &c.backoff;
        let builder = BackoffBuilder {
            kind: Some(b.kind()),
            initial: Some(b.initial_ns().min(max_delay)),
            max_delay: Some(max_delay),
            multiplier: Some(b.multiplier()),
            increment: Some(b.increment_ns()),
            jitter: Some(match b.jitter() {
                Jitter::Additive(j) => Jitter::Additive(j.min(max_delay)),
                j => j,
            }),
            min_delay: Some(b.min_delay_ns().min(max_delay)),
            immediate_first_retry: Some(b.immediate_first_retry()),
            profile: None,
        };
        c.backoff = if b.kind() == BackoffKind::Decorrelated && max_delay == 0 {
            BackoffBuilder {
                kind: Some(BackoffKind::Constant),
                initial: Some(0),
                max_delay: Some(0),
                jitter: Some(Jitter::None),
                ..Default::default()
            }
            .build()?
        } else {
            builder.build()?
        };
        c.max_retry_after = max_delay;
        c.on_long_retry_after = LongServerDelay::Cap;
        c.deadline = None;
        Ok(self.rebuild(|i| PolicyInner { config: c, ..i }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_first_attempt_without_a_session_draws_and_counts_as_a_session() {
        let doc = r#"{"seed": 9, "attempt_timeout": "1s", "deadline": "5s"}"#;
        let (a, b) = (RetryPolicy::from_json(doc, None).unwrap(), RetryPolicy::from_json(doc, None).unwrap());
        let opts = || SessionOptions { key: Some("k".into()), ..Default::default() };
        let f = classify::Failure { status: Some(503), method: Some("GET"), ..Default::default() };
        let mut delays = (Vec::new(), Vec::new());
        for (i, now) in [10u64, 20, 30, 40].into_iter().enumerate() {
            let fails = i % 2 == 1;
            // Through a session.
            let mut s = a.session(opts()).unwrap();
            let ga = s.before_attempt_ns(now).unwrap();
            // Without one, resumed when the attempt fails.
            let first = b.begin_first(now).unwrap();
            if fails {
                let (mut r, gb) = b.resume(first, opts()).unwrap();
                assert_eq!(format!("{ga:?}"), format!("{gb:?}"));
                assert_eq!(r.attempts(), 1);
                delays.0.push(s.on_failure_ns(now + 5, &f).unwrap().delay());
                delays.1.push(r.on_failure_ns(now + 5, &f).unwrap().delay());
                let g2 = r.before_attempt_ns(now + 6);
                assert!(matches!(g2, Ok(Gate::Proceed { attempt: 2, .. })), "{g2:?}");
                r.on_success_ns(now + 7, None).unwrap();
                s.before_attempt_ns(now + 6).unwrap();
                s.on_success_ns(now + 7, None).unwrap();
            } else {
                s.on_success_ns(now + 3, None).unwrap();
                b.first_succeeded(first, now + 3);
            }
        }
        assert_eq!(delays.0, delays.1);
        assert!(delays.0.iter().all(|d| d.is_some()));
        assert_eq!(a.counters().snapshot(), b.counters().snapshot());
        assert_eq!(a.next_seed(), b.next_seed(), "both generators took the same draws");
        let gated = RetryPolicy::from_json(r#"{"seed": 1, "breaker": {}}"#, None).unwrap();
        assert_eq!(gated.begin_first(0), None, "a breaker gates every attempt");
    }

    #[test]
    fn a_stand_alone_delay_refuses_a_history_it_is_not_given() {
        use crate::backoff::DelayHistory;
        let b = |doc: &str| PolicyConfig::from_json(doc).unwrap().backoff;
        let polly = b(r#"{"profile": "polly", "backoff": "exponential", "initial": "1s", "jitter": "full"}"#);
        assert_eq!(polly.history(), DelayHistory::Draws);
        // Retry 1 has no history: the same as a session's (replayed) first delay.
        assert_eq!(polly.delay_alone_ns(1, 0.5, None).unwrap(), polly.replay_ns(&[0.5]).unwrap()[0]);
        for prev in [None, Some(1_000_000_000)] {
            let e = polly.delay_alone_ns(2, 0.5, prev).unwrap_err();
            assert_eq!((e.code(), e.field()), ("invalid_combination", "prev"));
        }
        let dec = b(r#"{"backoff": "decorrelated", "initial": "100ms", "max_delay": "10s"}"#);
        assert_eq!(dec.history(), DelayHistory::PrevDelay);
        let e = dec.delay_alone_ns(2, 0.5, None).unwrap_err();
        assert_eq!((e.code(), e.field()), ("missing_field", "prev"));
        assert_eq!(
            dec.delay_alone_ns(2, 0.5, Some(300_000_000)).unwrap(),
            dec.delay_ns(2, 0.5, Some(300_000_000)).unwrap()
        );
        let plain = b(r#"{"backoff": "exponential", "jitter": "full"}"#);
        assert_eq!(plain.history(), DelayHistory::None);
        assert_eq!(plain.delay_alone_ns(3, 0.5, None).unwrap(), plain.delay_ns(3, 0.5, None).unwrap());
        let polly_plain = b(r#"{"profile": "polly", "backoff": "exponential", "jitter": "none"}"#);
        assert_eq!(polly_plain.history(), DelayHistory::None);
    }

    #[test]
    fn classify_applies_the_policys_idempotent_declaration() {
        let names = ["ECONNRESET"];
        let post = classify::Failure { error_names: &names, method: Some("POST"), ..Default::default() };
        let plain = PolicyConfig::from_json(r#"{}"#).unwrap();
        assert!(!plain.classify(&post).retryable, "POST after a lost connection is not safe");
        let declared = PolicyConfig::from_json(r#"{"idempotent": true}"#).unwrap();
        assert!(declared.classify(&post).safe && declared.classify(&post).retryable);
        // The failure's own declaration wins over the policy's.
        let undeclared = classify::Failure { idempotent: Some(false), ..post };
        assert!(!declared.classify(&undeclared).retryable);
        let refused = PolicyConfig::from_json(r#"{"idempotent": false}"#).unwrap();
        let get = classify::Failure { method: Some("GET"), ..post };
        assert!(!refused.classify(&get).safe, "a policy declaring non-idempotent calls makes GET unsafe too");
    }

    #[test]
    fn typed_options_take_bare_durations_wherever_a_document_takes_a_duration() {
        // Every duration field, nested ones included, as strings and as host numbers.
        let doc = |d: &dyn Fn(&str) -> crate::json::Value| {
            json!({
                "initial": d("250ms"), "max_delay": d("20000ms"), "min_delay": d("1ms"),
                "deadline": d("30000ms"), "attempt_timeout": d("2000ms"), "max_retry_after": d("60000ms"),
                "jitter": {"kind": "additive", "amount": d("100ms")},
                "breaker": {"kind": "sampling", "sampling_duration": d("30000ms"),
                            "wait_duration_in_open_state": d("5000ms"), "max_wait_duration_in_open_state": d("9000ms"),
                            "slow_call_duration_threshold": d("700ms"), "max_wait_duration_in_half_open_state": d("1500ms")},
                "budgets": [{"kind": "ratio", "window": d("10000ms")}, {"kind": "adaptive", "window": d("120000ms")}]
            })
        };
        let strings = doc(&|s| crate::json::Value::from(s));
        let ms = doc(&|s| crate::json::Value::from(s.trim_end_matches("ms").parse::<f64>().unwrap()));
        let secs = doc(&|s| crate::json::Value::from(s.trim_end_matches("ms").parse::<f64>().unwrap() / 1000.0));
        let want = PolicyConfig::from_json_value(&strings).unwrap();
        assert_eq!(PolicyConfig::from_typed_value(&ms, 1e6).unwrap(), want);
        assert_eq!(PolicyConfig::from_typed_value(&secs, 1e9).unwrap(), want);
        // A document still refuses bare numbers, and typed options refuse bad ones with the field.
        let e = PolicyConfig::from_json_value(&ms).unwrap_err();
        assert_eq!((e.code(), e.field()), ("invalid_duration", "deadline"));
        let e = PolicyConfig::from_typed_value(&json!({"breaker": {"kind": "sampling", "sampling_duration": -1}}), 1e6)
            .unwrap_err();
        assert_eq!((e.code(), e.field()), ("out_of_range", "breaker.sampling_duration"));
        // A jitter factor is not a duration.
        let c = PolicyConfig::from_typed_value(&json!({"jitter": 0.5}), 1e6).unwrap();
        assert_eq!(c.backoff.jitter(), crate::backoff::Jitter::Proportional(0.5));
    }

    #[test]
    fn typed_options_refuse_null_where_a_document_reads_it_as_not_given() {
        use crate::breaker::BreakerConfig;
        use crate::budget::BudgetConfig;
        let field = |r: Result<()>| r.map_err(|e| (e.code(), e.field().to_owned(), e.reason().to_owned()));
        let refused = |f: &str| Err(("invalid_type", f.to_owned(), crate::doc::NULL_OPTION.to_owned()));
        assert!(PolicyConfig::from_json_value(&json!({"max_attempts": null})).is_ok());
        let p = |v| field(PolicyConfig::from_typed_value(&v, 1e9).map(drop));
        assert_eq!(p(json!({"max_attempts": null})), refused("max_attempts"));
        assert_eq!(p(json!({"breaker": {"kind": "consecutive", "name": null}})), refused("breaker.name"));
        assert_eq!(p(json!({"budgets": [{"kind": "ratio", "window": null}]})), refused("budgets[0].window"));
        assert_eq!(p(json!({"budget": null})), refused("budget"));
        let b = |v| field(BreakerConfig::from_typed_value(&v, 1e6).map(drop));
        assert_eq!(b(json!({"wait_duration_in_open_state": null})), refused("wait_duration_in_open_state"));
        let over = |t| field(BreakerConfig::from_typed_over(&json!({"name": null}), &t, 1e9).map(drop));
        assert_eq!(over(json!({})), Ok(()), "the document's null is not given");
        assert_eq!(over(json!({"name": null})), refused("name"));
        let g = |v| field(BudgetConfig::from_typed_value(&v, 1e6).map(drop));
        assert_eq!(g(json!({"kind": "ratio", "window": null})), refused("window"));
        let g2 = |t| field(BudgetConfig::from_typed_over(&crate::json::Value::Null, &t, 1e9).map(drop));
        assert_eq!(g2(json!({"kind": "token_bucket", "capacity": null})), refused("capacity"));
    }

    #[test]
    fn defaults_round_trip() {
        let c = PolicyConfig::from_json(r#"{"version": 1}"#).unwrap();
        assert_eq!(c, PolicyConfig::default());
        let back = PolicyConfig::from_json(&c.to_json()).unwrap();
        assert_eq!(back, c);
    }

    #[test]
    fn seed_yaml_aliases() {
        let c = PolicyConfig::from_json(
            r#"{"max_attempts": 5, "initial_interval": "1s", "max_interval": "30s", "multiplier": 2.0, "jitter": 0.5,
                "non_retryable": ["InvalidArgumentException", "InsufficientBalanceException"]}"#,
        )
        .unwrap();
        assert_eq!(c.backoff.initial_ns(), 1_000_000_000);
        assert_eq!(c.backoff.jitter(), Jitter::Proportional(0.5));
        assert_eq!(c.classifier.rules.len(), 1);
    }

    #[test]
    fn errors_name_fields() {
        let cases = [
            (r#"{"version": 2}"#, "unknown_version", "version"),
            (r#"{"deadline": 30}"#, "invalid_duration", "deadline"),
            (r#"{"initial": "5s", "max_delay": "1s"}"#, "invalid_combination", "initial"),
            (r#"{"max_attempts": 0}"#, "out_of_range", "max_attempts"),
            (r#"{"retries": 3}"#, "unknown_key", "retries"),
            (r#"{"jitter": 1.5}"#, "out_of_range", "jitter"),
            (r#"{"breaker": {"failure_rate_threshold": 0}}"#, "out_of_range", "breaker.failure_rate_threshold"),
            (
                r#"{"budget": {"kind": "grpc", "max_tokens": 1001, "token_ratio": 0.1}}"#,
                "out_of_range",
                "budget.max_tokens",
            ),
            (
                r#"{"classification": {"rules": [{"status": "6xx", "retry": "always"}]}}"#,
                "invalid_value",
                "classification.rules[0].status",
            ),
            (r#"{"initial_interval": "1s", "initial": "1s"}"#, "invalid_combination", "initial_interval"),
            (r#"[1]"#, "invalid_type", ""),
            (r#"{"#, "invalid_json", ""),
        ];
        for (doc, code, field) in cases {
            let e = PolicyConfig::from_json(doc).unwrap_err();
            assert_eq!((e.code(), e.field()), (code, field), "{doc}: {e}");
        }
    }
}

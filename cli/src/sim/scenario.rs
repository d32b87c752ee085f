//! The scenario: clients, server, outage and the policies to compare.
//!
//! A scenario file is JSON (every key optional but `policies` when it is
//! given; durations are strings with a unit, as in policy documents):
//!
//! ```json
//! {
//!   "clients": 10000, "duration": "60s", "interval": "10s", "interval_jitter": 0.5,
//!   "capacity": 2000, "reject_cost": 0.1, "latency": "20ms", "queue": "5s", "timeout": "2s",
//!   "outage": {"start": "10s", "end": "20s", "mode": "hang"},
//!   "processes": 20, "layers": 1, "method": "GET", "step": "100ms", "drain": "15s", "seed": "1",
//!   "policies": [{"name": "full jitter", "policy": {"version": 1, "jitter": "full"}}]
//! }
//! ```

use crate::error::CliError;
use crate::input::core_error;
use retrycore::duration::{format_duration, parse_duration};
use retrycore::policy::PolicyConfig;
use retrycore::{json, json::Value};
use serde::Deserialize;

/// The built-in default scenario (also printed by `--print-scenario`).
pub const DEFAULT_SCENARIO: &str = include_str!("default_scenario.json");

/// The most layers a policy entry may stack.
pub const MAX_LAYERS: usize = 8;

/// What the server does while it is down.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum OutageMode {
    /// Calls hang: each ends at the caller's timeout, and the calls still
    /// hanging when the outage ends are reset (a restart drops its connections).
    Hang,
    /// Calls fail fast with 503 (a load balancer with no healthy upstream).
    Error,
    /// Connections are refused (the process is gone).
    Refuse,
}

impl OutageMode {
    /// Returns the scenario name.
    pub fn name(self) -> &'static str {
        match self {
            OutageMode::Hang => "hang",
            OutageMode::Error => "error",
            OutageMode::Refuse => "refuse",
        }
    }
}

/// When and how the server is down.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Outage {
    /// Start, ns since the run began.
    pub start: u64,
    /// End (exclusive), ns.
    pub end: u64,
    /// What calls see meanwhile.
    pub mode: OutageMode,
}

/// One policy to compare: a policy per layer (outermost first).
#[derive(Clone, Debug)]
pub struct Entry {
    /// The name shown in the table and the chart.
    pub name: String,
    /// One policy per layer, outermost first.
    pub layers: Vec<PolicyConfig>,
    /// The policy documents as given (for `--print-scenario` and JSON output).
    pub docs: Vec<Value>,
    /// Inner give-ups carry retrycore's `x-retry-exhausted: 1` marker.
    pub marker: bool,
    /// A limiter each client process asks before every call to the server
    /// (docs/limiters.md); its rejection ends the request, as a host's
    /// rejection error would.
    pub limiter: Option<retrycore::limiters::LimiterConfig>,
    /// The limiter object as written.
    pub limiter_doc: Option<Value>,
}

/// A resolved scenario (durations in nanoseconds).
#[derive(Clone, Debug)]
pub struct Scenario {
    /// Clients issuing requests.
    pub clients: u32,
    /// Simulated time during which clients issue requests.
    pub duration: u64,
    /// Mean time between two requests of one client.
    pub interval: u64,
    /// Each gap is uniform in `interval · [1 − j, 1 + j]`.
    pub interval_jitter: f64,
    /// First requests are uniform in `[0, start_spread)`; `None`: each
    /// client starts in its steady state (the load is flat from t = 0).
    pub start_spread: Option<u64>,
    /// Calls the server completes per second.
    pub capacity: f64,
    /// Share of a call's service time that shedding it with a 503 takes.
    pub reject_cost: f64,
    /// Time a served call takes on top of queueing.
    pub latency: u64,
    /// Longest queueing the server accepts; beyond it, it sheds with 503.
    pub queue: u64,
    /// The client's own timeout for a server call when the policy gives none.
    pub timeout: u64,
    /// The outage, if any.
    pub outage: Option<Outage>,
    /// Client processes; each has its own breaker and budgets per layer.
    pub processes: u32,
    /// Layers of an entry that gives one policy and no count (and of `--policy` files).
    pub layers: u32,
    /// The HTTP method of every request (GET retries timeouts, POST does not).
    pub method: String,
    /// Width of a chart and success-rate time step.
    pub step: u64,
    /// How long in-flight requests may finish after `duration`.
    pub drain: u64,
    /// The simulation's seed.
    pub seed: u64,
    /// The policies to compare.
    pub entries: Vec<Entry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScenario {
    clients: Option<u32>,
    duration: Option<String>,
    interval: Option<String>,
    interval_jitter: Option<f64>,
    start_spread: Option<String>,
    capacity: Option<f64>,
    reject_cost: Option<f64>,
    latency: Option<String>,
    queue: Option<String>,
    timeout: Option<String>,
    #[serde(default, deserialize_with = "some")]
    outage: Option<Option<RawOutage>>,
    processes: Option<u32>,
    layers: Option<u32>,
    method: Option<String>,
    step: Option<String>,
    drain: Option<String>,
    seed: Option<Value>,
    policies: Option<Vec<RawEntry>>,
    #[serde(rename = "_comment")]
    _comment: Option<Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawOutage {
    start: String,
    end: String,
    mode: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEntry {
    name: String,
    policy: Option<Value>,
    layers: Option<RawLayers>,
    marker: Option<bool>,
    limiter: Option<Value>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum RawLayers {
    Count(u32),
    Docs(Vec<Value>),
}

/// Keeps an explicit `null` apart from a missing key.
fn some<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(d).map(Some)
}

fn dur(v: Option<&String>, field: &str, default: u64) -> Result<u64, CliError> {
    match v {
        None => Ok(default),
        Some(s) => parse_duration(s, field).map_err(|e| CliError::input(format!("scenario {}", core_error(&e)))),
    }
}

fn bad(field: &str, why: impl std::fmt::Display) -> CliError {
    CliError::input(format!("scenario {field}: {why}"))
}

const S: u64 = 1_000_000_000;
const MS: u64 = 1_000_000;

/// Parses a policy document for an entry, naming the entry in errors.
pub fn policy_from_value(v: &Value, label: &str) -> Result<PolicyConfig, CliError> {
    PolicyConfig::from_json_value(v).map_err(|e| CliError::input(format!("invalid policy {label}: {}", core_error(&e))))
}

impl Scenario {
    /// Parses scenario text; `source` names it in errors.
    pub fn from_json(text: &str, source: &str) -> Result<Scenario, CliError> {
        let raw: RawScenario =
            serde_json::from_str(text).map_err(|e| CliError::input(format!("scenario {source} is not valid: {e}")))?;
        let fallback: Option<RawScenario> = if raw.policies.is_none() {
            Some(
                serde_json::from_str(DEFAULT_SCENARIO)
                    .map_err(|e| CliError::input(format!("default scenario: {e}")))?,
            )
        } else {
            None
        };
        Self::resolve(raw, fallback)
    }

    /// Returns the built-in default scenario.
    pub fn default_scenario() -> Result<Scenario, CliError> {
        Self::from_json(DEFAULT_SCENARIO, "(built-in)")
    }

    fn resolve(raw: RawScenario, fallback: Option<RawScenario>) -> Result<Scenario, CliError> {
        let clients = raw.clients.unwrap_or(10_000);
        if clients == 0 || clients > 100_000_000 {
            return Err(bad("clients", format!("must be in [1, 100000000], got {clients}")));
        }
        let duration = dur(raw.duration.as_ref(), "duration", 60 * S)?;
        if duration == 0 || duration > 24 * 3600 * S {
            return Err(bad("duration", "must be more than 0 and at most 24h"));
        }
        let interval = dur(raw.interval.as_ref(), "interval", 10 * S)?;
        if interval == 0 {
            return Err(bad("interval", "must be more than 0"));
        }
        let interval_jitter = raw.interval_jitter.unwrap_or(0.5);
        if !(0.0..=1.0).contains(&interval_jitter) {
            return Err(bad("interval_jitter", format!("must be in [0, 1], got {interval_jitter}")));
        }
        let start_spread = match &raw.start_spread {
            None => None,
            Some(v) => Some(dur(Some(v), "start_spread", 0)?),
        };
        let capacity = raw.capacity.unwrap_or(2000.0);
        if !(capacity.is_finite() && capacity > 0.0 && capacity <= 1e9) {
            return Err(bad("capacity", format!("must be calls per second in (0, 1e9], got {capacity}")));
        }
        let reject_cost = raw.reject_cost.unwrap_or(0.1);
        if !(0.0..=1.0).contains(&reject_cost) {
            return Err(bad("reject_cost", format!("must be in [0, 1], got {reject_cost}")));
        }
        let latency = dur(raw.latency.as_ref(), "latency", 20 * MS)?;
        let queue = dur(raw.queue.as_ref(), "queue", 5 * S)?;
        let timeout = dur(raw.timeout.as_ref(), "timeout", 2 * S)?;
        if timeout == 0 {
            return Err(bad("timeout", "must be more than 0"));
        }
        let outage = match raw.outage {
            None => Some(Outage { start: 10 * S, end: 20 * S, mode: OutageMode::Hang }),
            Some(None) => None,
            Some(Some(o)) => {
                let start = dur(Some(&o.start), "outage.start", 0)?;
                let end = dur(Some(&o.end), "outage.end", 0)?;
                if end <= start {
                    return Err(bad("outage.end", "must be after outage.start"));
                }
                let mode = match o.mode.as_deref().unwrap_or("hang") {
                    "hang" => OutageMode::Hang,
                    "error" => OutageMode::Error,
                    "refuse" => OutageMode::Refuse,
                    other => return Err(bad("outage.mode", format!("must be hang, error or refuse, got {other:?}"))),
                };
                Some(Outage { start, end, mode })
            }
        };
        let processes = raw.processes.unwrap_or(20);
        if processes == 0 || processes > clients {
            return Err(bad("processes", format!("must be in [1, clients = {clients}], got {processes}")));
        }
        let default_layers = raw.layers.unwrap_or(1);
        if default_layers == 0 || default_layers as usize > MAX_LAYERS {
            return Err(bad("layers", format!("must be in [1, {MAX_LAYERS}], got {default_layers}")));
        }
        let method = raw.method.unwrap_or_else(|| "GET".to_owned());
        if method.is_empty() || !method.bytes().all(|b| b.is_ascii_alphabetic()) {
            return Err(bad("method", format!("must be an HTTP method, got {method:?}")));
        }
        let step = dur(raw.step.as_ref(), "step", 100 * MS)?;
        if !(MS..=S).contains(&step) {
            return Err(bad("step", "must be between 1ms and 1s"));
        }
        if duration / step > 10_000_000 {
            return Err(bad("step", "gives more than 10 million steps: take a longer step"));
        }
        let drain = dur(raw.drain.as_ref(), "drain", 15 * S)?;
        let seed = match &raw.seed {
            None => 1,
            Some(Value::String(s)) => s.parse::<u64>().map_err(|_| bad("seed", format!("must be a u64, got {s:?}")))?,
            Some(Value::Number(n)) => n.as_u64().ok_or_else(|| bad("seed", format!("must be a u64, got {n}")))?,
            Some(other) => return Err(bad("seed", format!("must be a decimal string, got {other}"))),
        };
        let raw_entries = match (raw.policies, fallback) {
            (Some(p), _) => p,
            (None, Some(f)) => f.policies.unwrap_or_default(),
            (None, None) => Vec::new(),
        };
        let mut entries = Vec::new();
        for (i, e) in raw_entries.into_iter().enumerate() {
            let label = format!("policies[{i}] ({:?})", e.name);
            if entries.iter().any(|x: &Entry| x.name == e.name) {
                return Err(bad(&format!("policies[{i}].name"), format!("{:?} appears twice", e.name)));
            }
            let docs = match (e.layers, e.policy) {
                (Some(RawLayers::Docs(_)), Some(_)) => {
                    return Err(bad(&format!("policies[{i}]"), "give policy or a list of layers, not both"))
                }
                (Some(RawLayers::Docs(d)), None) => d,
                (count, Some(p)) => {
                    let n = match count {
                        Some(RawLayers::Count(n)) => n,
                        _ => default_layers,
                    };
                    vec![p; n as usize]
                }
                (_, None) => return Err(bad(&format!("policies[{i}]"), "needs a policy document or layers")),
            };
            if docs.is_empty() || docs.len() > MAX_LAYERS {
                return Err(bad(&format!("policies[{i}].layers"), format!("must be 1 to {MAX_LAYERS} layers")));
            }
            let layers = docs
                .iter()
                .enumerate()
                .map(|(l, d)| {
                    let lab = if docs.len() > 1 { format!("{label} layer {l}") } else { label.clone() };
                    policy_from_value(d, &lab)
                })
                .collect::<Result<Vec<_>, _>>()?;
            let limiter = match &e.limiter {
                Some(v) => Some(
                    retrycore::limiters::LimiterConfig::from_json_value(v, &format!("policies[{i}].limiter"))
                        .map_err(|err| bad(err.field(), err.reason().to_owned()))?,
                ),
                None => None,
            };
            entries.push(Entry {
                name: e.name,
                layers,
                docs,
                marker: e.marker.unwrap_or(true),
                limiter,
                limiter_doc: e.limiter,
            });
        }
        Ok(Scenario {
            clients,
            duration,
            interval,
            interval_jitter,
            start_spread,
            capacity,
            reject_cost,
            latency,
            queue,
            timeout,
            outage,
            processes,
            layers: default_layers,
            method,
            step,
            drain,
            seed,
            entries,
        })
    }

    /// Multiplies clients, capacity and processes by `factor` (keeping the load ratio).
    pub fn scale(&mut self, factor: f64) -> Result<(), CliError> {
        if !(factor.is_finite() && factor > 0.0) {
            return Err(CliError::input(format!("--scale must be a positive number, got {factor}")));
        }
        let clients = (f64::from(self.clients) * factor).round();
        if !(1.0..=1e8).contains(&clients) {
            return Err(CliError::input(format!("--scale {factor} gives {clients} clients: must be 1 to 100000000")));
        }
        self.clients = clients as u32;
        self.capacity *= factor;
        self.processes = ((f64::from(self.processes) * factor).round() as u32).clamp(1, self.clients);
        Ok(())
    }

    /// Writes the scenario back as JSON (policies as given).
    pub fn to_json_value(&self) -> Value {
        let outage = self
            .outage
            .map(|o| json!({"start": format_duration(o.start), "end": format_duration(o.end), "mode": o.mode.name()}));
        json!({
            "clients": self.clients,
            "duration": format_duration(self.duration),
            "interval": format_duration(self.interval),
            "interval_jitter": self.interval_jitter,
            "start_spread": self.start_spread.map(format_duration),
            "capacity": self.capacity,
            "reject_cost": self.reject_cost,
            "latency": format_duration(self.latency),
            "queue": format_duration(self.queue),
            "timeout": format_duration(self.timeout),
            "outage": outage,
            "processes": self.processes,
            "layers": self.layers,
            "method": self.method,
            "step": format_duration(self.step),
            "drain": format_duration(self.drain),
            "seed": self.seed.to_string(),
            "policies": self.entries.iter().map(|e| {
                let mut v = if e.docs.iter().all(|d| d == &e.docs[0]) {
                    json!({"name": e.name, "layers": e.docs.len(), "marker": e.marker, "policy": e.docs[0]})
                } else {
                    json!({"name": e.name, "layers": e.docs, "marker": e.marker})
                };
                if let Some(l) = &e.limiter_doc {
                    v["limiter"] = l.clone();
                }
                v
            }).collect::<Vec<_>>(),
        })
    }
}

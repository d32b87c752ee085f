//! Compensations: undoing a saga's completed steps, newest first.
//!
//! When step n of a saga fails, the steps before it have already changed
//! the world; each is undone by its compensation (a refund for a charge, a
//! release for a reservation), in reverse order, each retried on its own,
//! more lenient policy (`purpose: compensation`, which lint lets retry more
//! and asks to send an idempotency key: a compensation must be safe to
//! repeat). A compensation that exhausts its policy does not stop the
//! others: it becomes a dead letter for a person to act on, and the run goes
//! on (docs/compensation.md).
//!
//! This module is the pure part: [`CompensationPlan::from_json_value`]
//! reads the saga and orders the compensations; a [`CompensationRun`] hands
//! them out one by one, takes each outcome the host reports (the host runs
//! the compensation under its policy with its own retry loop), and builds
//! the result: every step's outcome and the dead letters.

use crate::doc::{self, Obj};
use crate::idempotency::DeadLetter;
use crate::json::Value;
use crate::policy::{PolicyConfig, Purpose};
use crate::{Error, ErrorCode, Result};

/// The most steps a saga may have.
pub const MAX_STEPS: usize = 1024;

/// One compensation to run, in the order the plan gives.
#[derive(Clone, Debug, PartialEq)]
pub struct Planned {
    /// The step's index in the saga.
    pub index: usize,
    /// The step's name.
    pub step: String,
    /// The compensation's name (what the host runs).
    pub compensate: String,
    /// Its policy (`purpose: compensation`).
    pub policy: PolicyConfig,
}

impl Planned {
    /// The compensation as hosts read it: `{"index", "step", "compensate",
    /// "policy"}`, the policy as its normalized document.
    pub fn to_json_value(&self) -> Value {
        json!({
            "index": self.index,
            "step": self.step,
            "compensate": self.compensate,
            "policy": self.policy.to_json_value(),
        })
    }
}

/// A saga's compensations, newest completed step first.
#[derive(Clone, Debug, PartialEq)]
pub struct CompensationPlan {
    /// The saga's id (dead letters are named after it).
    pub saga: String,
    /// Every step's name, in saga order.
    pub steps: Vec<String>,
    /// What each step needs: `compensate` (planned), `not_completed`,
    /// `no_compensation` (a completed step that changes nothing to undo).
    pub needs: Vec<&'static str>,
    /// The compensations to run, in order.
    pub planned: Vec<Planned>,
}

impl CompensationPlan {
    /// Reads a saga: `{"saga": id, "steps": [{"name", "completed",
    /// "compensate", "policy"}, …]}` in the order the steps ran.
    ///
    /// # Errors
    /// `missing_field` for a saga id, a step's name, or the policy of a step
    /// that names a compensation; `invalid_combination` for two steps of one
    /// name; `invalid_value` on `steps[i].policy.purpose` for a policy that
    /// is not `purpose: compensation`; `too_large` past [`MAX_STEPS`];
    /// any policy error, under `steps[i].policy`.
    pub fn from_json_value(v: &Value) -> Result<CompensationPlan> {
        let mut o = Obj::new(v, "")?;
        let saga = o
            .str("saga", &["saga_id"])?
            .map(|(s, _)| s.to_owned())
            .filter(|s| !s.is_empty())
            .ok_or_else(|| Error::new(ErrorCode::MissingField, "saga", "a saga names its id"))?;
        let (sv, sf) =
            o.take("steps", &[])?.ok_or_else(|| Error::new(ErrorCode::MissingField, "steps", "is required"))?;
        o.finish()?;
        let items = sv.as_array().ok_or_else(|| {
            Error::new(
                ErrorCode::InvalidType,
                sf.clone(),
                format!("must be a list of steps, got {}", doc::type_name(sv)),
            )
        })?;
        if items.len() > MAX_STEPS {
            return Err(Error::new(ErrorCode::TooLarge, sf, format!("at most {MAX_STEPS} steps")));
        }
        let mut plan = CompensationPlan { saga, steps: Vec::new(), needs: Vec::new(), planned: Vec::new() };
        for (i, item) in items.iter().enumerate() {
            let p = format!("steps[{i}]");
            let mut so = Obj::new(item, &p)?;
            let name = so
                .str("name", &[])?
                .map(|(s, _)| s.to_owned())
                .filter(|s| !s.is_empty())
                .ok_or_else(|| Error::new(ErrorCode::MissingField, format!("{p}.name"), "a step has a name"))?;
            if plan.steps.contains(&name) {
                return Err(Error::new(
                    ErrorCode::InvalidCombination,
                    format!("{p}.name"),
                    format!("two steps are named {name:?}"),
                ));
            }
            let completed = so.bool("completed", &[])?.unwrap_or(false);
            let compensate = so.str("compensate", &["compensation"])?.map(|(s, _)| s.to_owned());
            let policy = match so.take("policy", &[])? {
                Some((pv, pf)) => Some(compensation_policy(pv, &pf)?),
                None => None,
            };
            so.finish()?;
            let need = match (completed, compensate) {
                (false, _) => "not_completed",
                (true, None) => "no_compensation",
                (true, Some(compensate)) => {
                    let policy = policy.ok_or_else(|| {
                        Error::new(
                            ErrorCode::MissingField,
                            format!("{p}.policy"),
                            "a compensation runs under its own policy (purpose: compensation)",
                        )
                    })?;
                    plan.planned.push(Planned { index: i, step: name.clone(), compensate, policy });
                    "compensate"
                }
            };
            plan.steps.push(name);
            plan.needs.push(need);
        }
        plan.planned.reverse();
        Ok(plan)
    }
}

/// Reads a compensation's policy, which must say `purpose: compensation`.
fn compensation_policy(v: &Value, field: &str) -> Result<PolicyConfig> {
    let p = PolicyConfig::from_json_value(v).map_err(|e| e.within(field))?;
    if p.purpose != Purpose::Compensation {
        return Err(Error::new(
            ErrorCode::InvalidValue,
            format!("{field}.purpose"),
            "a compensation's policy says purpose: compensation",
        ));
    }
    Ok(p)
}

/// How one compensation ended, as the host reports it.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// It succeeded after `attempts` calls.
    Compensated {
        /// Calls made.
        attempts: u32,
    },
    /// Its policy gave up: the step becomes a dead letter.
    Exhausted {
        /// Calls made.
        attempts: u32,
        /// The last error's class or code.
        error_class: String,
        /// The last error's message.
        error_message: String,
        /// The first failure, Unix ms.
        first_failure_ms: u64,
        /// The last failure, Unix ms.
        last_failure_ms: u64,
    },
}

impl Outcome {
    /// Reads an outcome as a host reports it: `{"outcome": "compensated",
    /// "attempts"}` or `{"outcome": "exhausted", "attempts", "error_class",
    /// "error_message", "first_failure_ms", "last_failure_ms"}` (an absent
    /// error is empty, an absent last failure is the first).
    ///
    /// # Errors
    /// `missing_field` for the outcome or its attempts; `invalid_value` on
    /// `outcome` for another word; `unknown_key` for a key the outcome
    /// does not take; `out_of_range` for attempts past `u32`.
    pub fn from_json_value(v: &Value) -> Result<Outcome> {
        let mut o = Obj::new(v, "")?;
        let outcome = o
            .str("outcome", &[])?
            .map(|(s, _)| s.to_owned())
            .ok_or_else(|| Error::new(ErrorCode::MissingField, "outcome", "compensated or exhausted"))?;
        let attempts =
            o.uint("attempts", &[], 0, u64::from(u32::MAX))?
                .ok_or_else(|| Error::new(ErrorCode::MissingField, "attempts", "the calls made"))? as u32;
        let outcome = match outcome.as_str() {
            "compensated" => Outcome::Compensated { attempts },
            "exhausted" => {
                let text = |o: &mut Obj, k| o.str(k, &[]).map(|s| s.map(|(s, _)| s.to_owned()).unwrap_or_default());
                let error_class = text(&mut o, "error_class")?;
                let error_message = text(&mut o, "error_message")?;
                let first_failure_ms = o.uint("first_failure_ms", &[], 0, u64::MAX)?.unwrap_or(0);
                let last_failure_ms = o.uint("last_failure_ms", &[], 0, u64::MAX)?.unwrap_or(first_failure_ms);
                Outcome::Exhausted { attempts, error_class, error_message, first_failure_ms, last_failure_ms }
            }
            other => {
                return Err(Error::new(
                    ErrorCode::InvalidValue,
                    "outcome",
                    format!("compensated or exhausted, got {other:?}"),
                ))
            }
        };
        o.finish()?;
        Ok(outcome)
    }
}

/// A saga's compensation run: hands out the planned compensations in order
/// and collects their outcomes.
#[derive(Clone, Debug, PartialEq)]
pub struct CompensationRun {
    plan: CompensationPlan,
    /// Outcomes of the compensations run so far, in plan order.
    done: Vec<(Outcome, Option<DeadLetter>)>,
}

impl CompensationRun {
    /// Starts a run of `plan`.
    pub fn new(plan: CompensationPlan) -> CompensationRun {
        CompensationRun { plan, done: Vec::new() }
    }

    /// The next compensation to run, or `None` when every one has an outcome.
    pub fn next(&self) -> Option<&Planned> {
        self.plan.planned.get(self.done.len())
    }

    /// Records the outcome of the compensation [`next`](Self::next) gave;
    /// an exhausted one becomes a dead letter (reason
    /// `compensation_exhausted`, message `{saga, step, compensate}`, target
    /// idempotent as every compensation must be) and the run goes on.
    ///
    /// # Errors
    /// `invalid_state` when every compensation already has an outcome; any
    /// dead-letter error (`attempts` 0, a last failure before the first).
    pub fn record(&mut self, outcome: Outcome) -> Result<Option<&DeadLetter>> {
        let Some(p) = self.next() else {
            return Err(Error::new(ErrorCode::InvalidState, "", "every compensation already has an outcome"));
        };
        let letter = match &outcome {
            Outcome::Compensated { .. } => None,
            Outcome::Exhausted { attempts, error_class, error_message, first_failure_ms, last_failure_ms } => {
                let msg_id = format!("{}:{}:compensation", self.plan.saga, p.step);
                let message = json!({ "saga": self.plan.saga, "step": p.step, "compensate": p.compensate });
                let class = if error_class.is_empty() { "unknown" } else { error_class.as_str() };
                Some(
                    DeadLetter::builder(msg_id, message)
                        .reason("compensation_exhausted")
                        .error(class, error_message.clone())
                        .attempts(*attempts)
                        .first_failure_ms(*first_failure_ms)
                        .last_failure_ms(*last_failure_ms)
                        .target_idempotent(true)
                        .build()?,
                )
            }
        };
        self.done.push((outcome, letter));
        Ok(self.done.last().and_then(|(_, l)| l.as_ref()))
    }

    /// True when every planned compensation has an outcome.
    pub fn is_finished(&self) -> bool {
        self.next().is_none()
    }

    /// The result: `{"saga", "finished", "compensated" (every planned one
    /// succeeded), "steps": [{"name", "outcome", "attempts"?, "msg_id"?}],
    /// "dead_letters": [...]}` with steps in saga order; a step's outcome is
    /// `compensated`, `dead_lettered`, `pending` (not run yet),
    /// `not_completed` or `no_compensation`.
    pub fn result(&self) -> Value {
        let mut steps: Vec<Value> = self
            .plan
            .steps
            .iter()
            .zip(&self.plan.needs)
            .map(|(n, need)| json!({ "name": n, "outcome": need }))
            .collect();
        for (k, p) in self.plan.planned.iter().enumerate() {
            steps[p.index] = match self.done.get(k) {
                None => json!({ "name": p.step, "outcome": "pending", "compensate": p.compensate }),
                Some((Outcome::Compensated { attempts }, _)) => {
                    json!({ "name": p.step, "outcome": "compensated", "compensate": p.compensate, "attempts": attempts })
                }
                Some((Outcome::Exhausted { attempts, .. }, letter)) => json!({
                    "name": p.step,
                    "outcome": "dead_lettered",
                    "compensate": p.compensate,
                    "attempts": attempts,
                    "msg_id": letter.as_ref().map(|l| l.msg_id.clone()),
                }),
            };
        }
        let letters: Vec<Value> = self.done.iter().filter_map(|(_, l)| l.as_ref().map(DeadLetter::to_value)).collect();
        let compensated = self.is_finished() && letters.is_empty();
        json!({
            "saga": self.plan.saga,
            "finished": self.is_finished(),
            "compensated": compensated,
            "steps": steps,
            "dead_letters": letters,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn saga() -> Value {
        let policy = json!({"purpose": "compensation", "max_attempts": 10, "deadline": "1h"});
        json!({"saga": "order-7", "steps": [
            {"name": "reserve", "completed": true, "compensate": "release", "policy": policy},
            {"name": "audit", "completed": true},
            {"name": "charge", "completed": true, "compensate": "refund", "policy": policy},
            {"name": "ship", "completed": false, "compensate": "cancel", "policy": policy},
        ]})
    }

    #[test]
    fn runs_in_reverse_and_goes_on_past_an_exhausted_compensation() {
        let mut run = CompensationRun::new(CompensationPlan::from_json_value(&saga()).unwrap());
        assert_eq!(run.next().unwrap().compensate, "refund");
        let letter = run
            .record(Outcome::Exhausted {
                attempts: 10,
                error_class: "HTTPError".into(),
                error_message: "503".into(),
                first_failure_ms: 1_000,
                last_failure_ms: 9_000,
            })
            .unwrap()
            .unwrap()
            .clone();
        assert_eq!(letter.msg_id, "order-7:charge:compensation");
        assert!(letter.target_idempotent);
        assert_eq!(run.next().unwrap().compensate, "release");
        assert!(run.record(Outcome::Compensated { attempts: 2 }).unwrap().is_none());
        assert!(run.is_finished());
        assert_eq!(run.record(Outcome::Compensated { attempts: 1 }).unwrap_err().code(), "invalid_state");
        let r = run.result();
        let outcomes: Vec<&str> =
            r["steps"].as_array().unwrap().iter().map(|s| s["outcome"].as_str().unwrap()).collect();
        assert_eq!(outcomes, ["compensated", "no_compensation", "dead_lettered", "not_completed"]);
        assert_eq!(r["compensated"], false);
        assert_eq!(r["dead_letters"].as_array().unwrap().len(), 1);
        assert_eq!(r["steps"][2]["msg_id"], "order-7:charge:compensation");
    }

    #[test]
    fn a_result_before_the_end_shows_what_is_pending() {
        let run = CompensationRun::new(CompensationPlan::from_json_value(&saga()).unwrap());
        let r = run.result();
        assert_eq!(r["finished"], false);
        assert_eq!(r["steps"][0]["outcome"], "pending");
    }

    #[test]
    fn refuses_bad_sagas_with_code_and_field() {
        let err = |v: Value| {
            let e = CompensationPlan::from_json_value(&v).unwrap_err();
            (e.code(), e.field().to_owned())
        };
        let default_policy = json!({"saga": "s", "steps": [{"name": "a", "completed": true, "compensate": "undo", "policy": {"max_attempts": 3}}]});
        assert_eq!(err(default_policy), ("invalid_value", "steps[0].policy.purpose".to_owned()));
        let no_policy = json!({"saga": "s", "steps": [{"name": "a", "completed": true, "compensate": "undo"}]});
        assert_eq!(err(no_policy), ("missing_field", "steps[0].policy".to_owned()));
        let twice = json!({"saga": "s", "steps": [{"name": "a"}, {"name": "a"}]});
        assert_eq!(err(twice), ("invalid_combination", "steps[1].name".to_owned()));
        assert_eq!(err(json!({"steps": []})), ("missing_field", "saga".to_owned()));
        let bad = json!({"saga": "s", "steps": [{"name": "a", "completed": true, "compensate": "u", "policy": {"purpose": "compensation", "deadline": 3}}]});
        assert_eq!(err(bad), ("invalid_duration", "steps[0].policy.deadline".to_owned()));
    }
}

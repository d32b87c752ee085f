//! Circuit breakers and retry budgets, shared across threads
//! (`Arc<Mutex<…>>` in the core; frozen pyclasses here).
//!
//! The GIL stays held while a lock is free: every operation is a few
//! hundred nanoseconds of arithmetic, cheaper than releasing the GIL; a
//! thread that finds the lock taken waits with the GIL released
//! ([`crate::locks`]). No Python code runs while a core lock is held, and a
//! hook runs after the state changed: an exception it raises is a
//! `RuntimeWarning`, never a lost permit (docs/python.md, "Hooks").

use crate::conv::{self, err, now_or_clock, to_json_over, to_secs, to_str, CoreResult, Mode, Obj};
use crate::failure::OwnedFailure;
use crate::locks::with;
use pyo3::exceptions::PyBaseException;
use pyo3::exceptions::{PyException, PyRuntimeWarning};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{IntoPyDict, PyDict, PyString};
use retrycore::breaker::{
    Acquire, BreakerConfig, BreakerSnapshot, CircuitBreaker, Counted, Permit, SharedBreaker, State, Transition,
};
use retrycore::budget::{Budget, BudgetConfig, FailureFacts, Refusal, SharedBudget};
use retrycore::classify::Category;
use retrycore::surface::{self, Ended, Ending};
use retrycore::ErrorCode;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

/// Describes an exception for a warning, even one whose `__str__` raises.
fn describe(py: Python<'_>, e: &PyErr) -> String {
    let v = e.value(py);
    let name = v.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "an exception".into());
    match v.str() {
        Ok(s) => match s.to_cow() {
            Ok(t) if !t.is_empty() => format!("{name}: {t}"),
            _ => name,
        },
        Err(_) => name,
    }
}

/// Answers a hook's result: an `Exception` it raised becomes a
/// `RuntimeWarning` (or, when warnings are errors, an unraisable
/// exception) and the call goes on; a `BaseException` such as
/// `KeyboardInterrupt` propagates.
pub fn hook_done(py: Python<'_>, name: &str, r: PyResult<Py<PyAny>>) -> PyResult<()> {
    let Err(e) = r else { return Ok(()) };
    if !e.value(py).is_instance_of::<PyException>() {
        return Err(e);
    }
    let msg = format!("retrycore: the {name} hook raised {}; the call went on", describe(py, &e));
    let msg = std::ffi::CString::new(msg.replace('\0', " ")).unwrap_or_default();
    if let Err(w) = PyErr::warn(py, &py.get_type::<PyRuntimeWarning>(), &msg, 1) {
        w.write_unraisable(py, None);
    }
    Ok(())
}

/// The exception `_errors._ending` makes of the core's end of a call
/// (None: the ending raises none of ours): the facts and message the core
/// composed (`surface::Ended`, the same in JS), with `cause` (the last
/// exception or response, when the ending has one) and the session's key
/// (read only for an exception).
pub fn ending_error(
    py: Python<'_>,
    ended: &Ended,
    cause: Option<&Obj>,
    key: impl FnOnce() -> Option<Py<PyString>>,
) -> PyResult<Option<PyErr>> {
    let Ending::Raise { class, code, reason, marked, has_cause } = ended.ending else { return Ok(None) };
    let kw = PyDict::new(py);
    kw.set_item("message", ended.message.as_deref().unwrap_or_default())?;
    kw.set_item("marked", marked)?;
    if let Some(l) = &ended.limiter {
        kw.set_item("limiter", l)?;
    }
    let args = (
        class.code(),
        code,
        reason,
        ended.attempts,
        ended.category,
        ended.budget.as_deref(),
        ended.budget_reason,
        ended.retry_after.map(to_secs),
        if has_cause { cause } else { None },
        key(),
        ended.state,
        ended.breaker.as_deref(),
    );
    let e = conv::errors_module(py)?.getattr("_ending")?.call(args, Some(&kw))?;
    Ok(Some(PyErr::from_value(e)))
}

/// Calls each hook with each transition (after the state changed; see [`hook_done`]).
pub fn fire(py: Python<'_>, hooks: &[Option<&Py<PyAny>>], ts: &[Transition]) -> PyResult<()> {
    if ts.is_empty() {
        return Ok(());
    }
    for h in hooks.iter().flatten() {
        for t in ts {
            hook_done(py, "on_state_change", h.call1(py, (PyTransition::from(t),)))?;
        }
    }
    Ok(())
}

fn state_of(s: &Obj) -> PyResult<State> {
    let name = to_str(s, "state")?;
    State::from_code(&name)
        .ok_or_else(|| err(s.py(), ErrorCode::InvalidValue, "state", format!("is not a breaker state: {name:?}")))
}

/// A budget call's category; left out (None), `server_error` — the documented
/// default of `check`, `withdraw`, `try_withdraw` and `on_failure`.
pub fn category_of(o: Option<&Obj>) -> PyResult<Category> {
    let read = |c: &Obj| {
        let name = to_str(c, "category")?;
        Category::from_code(&name)
            .ok_or_else(|| err(c.py(), ErrorCode::InvalidValue, "category", format!("is not a category: {name:?}")))
    };
    Ok(conv::opt(o, read)?.unwrap_or(Category::ServerError))
}

/// A breaker's or budget's configuration: the mapping is a document (a
/// bare number in a duration is `invalid_duration`, as in
/// `RetryPolicy.from_dict`), and with `kwargs=True` the keyword options laid
/// over it (`overrides`: durations also float seconds or `timedelta`s).
fn config_parts(
    config: Option<&Obj>,
    kwargs: Option<&Obj>,
    overrides: Option<&Obj>,
) -> PyResult<(retrycore::json::Value, Option<retrycore::json::Value>)> {
    let overrides = conv::opt_class_arg::<PyDict>(overrides, "overrides", "a dict")?;
    Ok(match Mode::of(kwargs)? {
        Mode::Document => (to_json_over(config, overrides, Mode::Document)?, None),
        Mode::Kwargs => {
            (to_json_over(config, None, Mode::Document)?, Some(to_json_over(None, overrides, Mode::Kwargs)?))
        }
    })
}

/// A wait in nanoseconds as seconds (None: `u64::MAX`, not by waiting).
fn wait_secs(ns: u64) -> Option<f64> {
    (ns != u64::MAX).then(|| to_secs(ns))
}

/// The breaker's counting of an exception (default classification, then the breaker's rules).
fn counted_exc(cfg: &BreakerConfig, e: &Obj) -> PyResult<Counted> {
    if !e.is_instance_of::<PyException>() {
        // KeyboardInterrupt, SystemExit, CancelledError: neither success nor failure.
        return Ok(Counted::Ignored);
    }
    let f = OwnedFailure::from_exception(e, cfg.needs_message())?;
    Ok(f.with(|x| cfg.count(x, &retrycore::classify::classify(x))))
}

/// A permit's parts, rewritten in place only when its object is reused
/// unseen ([`Breaker::reuse`]); atomics, since a frozen class is shared.
pub struct PermitCell {
    epoch: AtomicU64,
    started: AtomicU64,
    trial: AtomicBool,
}

impl PermitCell {
    pub fn new(p: Permit) -> PermitCell {
        PermitCell { epoch: p.epoch().into(), started: p.started().into(), trial: p.is_trial().into() }
    }

    pub fn get(&self) -> Permit {
        let (epoch, started) = (self.epoch.load(Ordering::Relaxed), self.started.load(Ordering::Relaxed));
        Permit::from_parts(epoch, self.trial.load(Ordering::Relaxed), started)
    }

    fn set(&self, p: Permit) {
        self.epoch.store(p.epoch(), Ordering::Relaxed);
        self.started.store(p.started(), Ordering::Relaxed);
        self.trial.store(p.is_trial(), Ordering::Relaxed);
    }
}

/// The transition a breaker call caused, fired to the hook (None: none).
type Fired = PyResult<Option<Py<PyTransition>>>;

impl Breaker {
    pub fn wrap(py: Python<'_>, shared: SharedBreaker) -> Breaker {
        let config = with(py, &shared, |b| b.config().clone());
        Breaker { shared, config, on_state_change: None, last: Mutex::default() }
    }

    /// Runs `f` on the core breaker (see [`crate::locks::with`]).
    fn with<R: Send>(&self, py: Python<'_>, f: impl FnOnce(&mut CircuitBreaker) -> R + Send) -> R {
        with(py, &self.shared, f)
    }

    fn fire(&self, py: Python<'_>, t: Option<Transition>) -> Fired {
        let Some(t) = t else { return Ok(None) };
        fire(py, &[self.on_state_change.as_ref()], &[t])?;
        Ok(Some(Py::new(py, PyTransition::from(&t))?))
    }

    /// Runs `f` on the core breaker, then fires the transition it caused.
    fn step(&self, py: Python<'_>, f: impl FnOnce(&mut CircuitBreaker) -> Option<Transition> + Send) -> Fired {
        let t = self.with(py, f);
        self.fire(py, t)
    }

    /// A transition by hand: the core's refusal becomes an exception after the lock is released.
    fn manual(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut CircuitBreaker) -> retrycore::Result<Transition> + Send,
    ) -> PyResult<Py<PyTransition>> {
        let t = self.with(py, f).py(py)?;
        fire(py, &[self.on_state_change.as_ref()], &[t])?;
        Py::new(py, PyTransition::from(&t))
    }

    /// The `Acquired` of the last permitted call (with no transition), when
    /// nothing but this breaker holds it or its permit: its permit is rewritten
    /// to `p` and it is returned again, one allocation fewer per call that no
    /// caller can tell from a new one (None: a new one is needed).
    fn reuse(&self, py: Python<'_>, p: Permit, state: State) -> Option<Py<Acquired>> {
        let last = crate::locks::lock(&self.last);
        let a = last.as_ref()?;
        let permit = a.get().permit.as_ref()?;
        // The GIL is held: no other thread can take a reference meanwhile.
        let alone = a.get_refcnt(py) == 1 && permit.get_refcnt(py) == 1;
        if !alone || a.get().trial != p.is_trial() || a.get().state != state.code() {
            return None;
        }
        permit.get().p.set(p);
        Some(a.clone_ref(py))
    }

    /// Takes a permit at `now`, or returns the `CircuitOpenError` to raise.
    fn permit(&self, py: Python<'_>, now: u64) -> PyResult<Permit> {
        let (a, t) = self.with(py, |b| b.try_acquire(now));
        // The hook only: nothing returns the transition here.
        fire(py, &[self.on_state_change.as_ref()], t.as_slice())?;
        match a {
            Acquire::Permitted(p) => Ok(p),
            Acquire::Rejected { state, retry_after } => Err(self.open_error(py, state, retry_after)),
        }
    }

    /// Reads an outcome: `"success"` (the default),
    /// `"failure"`, `"ignored"` (read by the core's [`Counted::parse`]), or an
    /// exception the breaker's rules count.
    fn outcome(&self, o: Option<&Obj>) -> PyResult<Counted> {
        match o.filter(|o| !o.is_none()) {
            None => Ok(Counted::Success),
            Some(o) if o.is_instance_of::<PyBaseException>() => counted_exc(&self.config, o),
            // The literals a caller writes are interned: most outcomes are found by identity.
            Some(o) if o.is(intern!(o.py(), "success")) => Ok(Counted::Success),
            Some(o) if o.is(intern!(o.py(), "failure")) => Ok(Counted::Failure),
            Some(o) => Counted::parse(&to_str(o, "outcome")?, "outcome").py(o.py()),
        }
    }

    fn open_error(&self, py: Python<'_>, state: State, retry_after: u64) -> PyErr {
        // A refused call of the breaker's own: the first attempt refused.
        let ended = surface::breaker_refusal(self.config.name.as_deref(), state, retry_after);
        match ending_error(py, &ended, None, || None) {
            Ok(Some(e)) | Err(e) => e,
            Ok(None) => PyException::new_err("breaker_open"),
        }
    }
}

impl PyBudget {
    /// `Budget(config=None, *, kwargs=None, share=None, overrides=None)`.
    fn create(
        py: Python<'_>,
        config: Option<&Obj>,
        kwargs: Option<&Obj>,
        share: Option<&Bound<'_, PyBudget>>,
        overrides: Option<&Obj>,
    ) -> PyResult<PyBudget> {
        if let Some(b) = share {
            return Ok(PyBudget { shared: b.get().shared.clone(), config: b.get().config.clone() });
        }
        let (doc, typed) = config_parts(config, kwargs, overrides)?;
        let cfg = match &typed {
            Some(t) => BudgetConfig::from_typed_over(&doc, t, conv::UNIT_NS),
            None => BudgetConfig::from_json_value(&doc, ""),
        }
        .py(py)?;
        let b = Budget::new(cfg.clone()).py(py)?;
        Ok(PyBudget { shared: b.shared(), config: cfg })
    }

    pub fn wrap(py: Python<'_>, shared: SharedBudget) -> PyBudget {
        let config = with(py, &shared, |b| b.config().clone());
        PyBudget { shared, config }
    }

    /// A new budget from its configuration in the keyword-argument form.
    pub fn from_kwargs(py: Python<'_>, doc: &retrycore::json::Value) -> PyResult<PyBudget> {
        let cfg = BudgetConfig::from_typed_value(doc, conv::UNIT_NS).py(py)?;
        let b = Budget::new(cfg.clone()).py(py)?;
        Ok(PyBudget { shared: b.shared(), config: cfg })
    }

    /// Runs `f` on the core budget (see [`crate::locks::with`]).
    fn with<R: Send>(&self, py: Python<'_>, f: impl FnOnce(&mut Budget) -> R + Send) -> R {
        with(py, &self.shared, f)
    }

    /// `now` given as float seconds, else the monotonic clock — read only
    /// when the kind's answers depend on time (the core ignores `now` otherwise).
    fn now(&self, now: Option<&Obj>) -> PyResult<u64> {
        match now {
            Some(x) if !x.is_none() => conv::instant(x, "now"),
            _ if self.config.depends_on_time() => Ok(conv::mono_ns()),
            _ => Ok(0),
        }
    }
}

// The classes this module declares in `src/surface.rs`, expanded by `build.rs`.
include!(concat!(env!("OUT_DIR"), "/breaker.rs"));

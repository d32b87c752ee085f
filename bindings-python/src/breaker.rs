//! Circuit breakers and retry budgets, shared across threads
//! (`Arc<Mutex<…>>` in the core; frozen pyclasses here).
//!
//! The GIL stays held while a lock is free: every operation is a few
//! hundred nanoseconds of arithmetic, cheaper than releasing the GIL; a
//! thread that finds the lock taken waits with the GIL released
//! ([`crate::locks`]). No Python code runs while a core lock is held, and a
//! hook runs after the state changed: an exception it raises is a
//! `RuntimeWarning`, never a lost permit (docs/python.md, "Hooks").

use crate::conv::{self, err, now_or_clock, opt_secs, to_json_over, to_secs, to_str, CoreResult, Mode, Obj};
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
use retrycore::session::RejectReason;
use retrycore::surface::Ending;
use retrycore::ErrorCode;

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

pub fn transition(t: &Transition) -> PyTransition {
    PyTransition { from_state: t.from.code(), to_state: t.to.code(), reason: t.reason.code(), at: to_secs(t.at) }
}

/// Calls each hook with each transition (after the state changed; see [`hook_done`]).
pub fn fire(py: Python<'_>, hooks: &[Option<&Py<PyAny>>], ts: &[Transition]) -> PyResult<()> {
    if ts.is_empty() {
        return Ok(());
    }
    for h in hooks.iter().flatten() {
        for t in ts {
            hook_done(py, "on_state_change", h.call1(py, (transition(t),)))?;
        }
    }
    Ok(())
}

/// A permission to make one call.
#[pyclass(frozen, name = "Permit", module = "retrycore._native")]
pub struct PyPermit {
    pub p: Permit,
}

#[pymethods]
impl PyPermit {
    /// True for a half-open trial call.
    #[getter]
    fn trial(&self) -> bool {
        self.p.is_trial()
    }
    /// When the permit was taken, in monotonic seconds.
    #[getter]
    fn started(&self) -> f64 {
        to_secs(self.p.started())
    }
}

fn permit_of(o: &Obj) -> PyResult<Permit> {
    Ok(conv::class_arg::<PyPermit>(o, "permit", "a Permit")?.get().p)
}

fn state_of(py: Python<'_>, s: &Obj) -> PyResult<State> {
    let name = to_str(s, "state")?;
    State::from_code(&name)
        .ok_or_else(|| err(py, ErrorCode::InvalidValue, "state", format!("is not a breaker state: {name:?}")))
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
) -> PyResult<(serde_json::Value, Option<serde_json::Value>)> {
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

/// A circuit breaker shared by reference.
#[pyclass(frozen, subclass, name = "CircuitBreaker", module = "retrycore._native")]
pub struct Breaker {
    pub shared: SharedBreaker,
    pub config: BreakerConfig,
    pub on_state_change: Option<Py<PyAny>>,
}

impl Breaker {
    pub fn wrap(py: Python<'_>, shared: SharedBreaker) -> Breaker {
        let config = with(py, &shared, |b| b.config().clone());
        Breaker { shared, config, on_state_change: None }
    }

    /// Runs `f` on the core breaker (see [`crate::locks::with`]).
    fn with<R: Send>(&self, py: Python<'_>, f: impl FnOnce(&mut CircuitBreaker) -> R + Send) -> R {
        with(py, &self.shared, f)
    }

    fn fire(&self, py: Python<'_>, t: Option<Transition>) -> PyResult<Option<Py<PyTransition>>> {
        match t {
            None => Ok(None),
            Some(t) => {
                fire(py, &[self.on_state_change.as_ref()], &[t])?;
                Ok(Some(Py::new(py, transition(&t))?))
            }
        }
    }

    fn open_error(&self, py: Python<'_>, state: State, retry_after: u64) -> PyErr {
        let ra = wait_secs(retry_after);
        let make = || -> PyResult<PyErr> {
            // A refused call of the breaker's own: the first attempt refused.
            let Ending::Raise { class, code, reason, .. } = Ending::of_reject(RejectReason::BreakerOpen, 0, None)
            else {
                return Err(PyException::new_err("breaker_open"));
            };
            let (state, name) = (state.code(), self.config.name.as_deref());
            let none = None::<&str>;
            let args = (class.code(), code, reason, 0, none, none, none, ra, none, none, state, name);
            let exc = conv::errors_module(py)?.getattr("_ending")?.call1(args)?;
            Ok(PyErr::from_value(exc))
        };
        make().unwrap_or_else(|e| e)
    }
}

#[pymethods]
impl Breaker {
    #[new]
    #[pyo3(signature = (config=None, *, kwargs=None, on_state_change=None, share=None, overrides=None))]
    fn new(
        py: Python<'_>,
        config: Option<&Obj>,
        kwargs: Option<&Obj>,
        on_state_change: Option<Py<PyAny>>,
        share: Option<&Obj>,
        overrides: Option<&Obj>,
    ) -> PyResult<Breaker> {
        let on_state_change = crate::policy::hook(py, on_state_change, "on_state_change")?;
        if let Some(b) = conv::opt_class_arg::<Breaker>(share, "share", "a CircuitBreaker")? {
            let b = b.get();
            return Ok(Breaker { shared: b.shared.clone(), config: b.config.clone(), on_state_change });
        }
        let (doc, typed) = config_parts(config, kwargs, overrides)?;
        let cfg = match &typed {
            Some(t) => BreakerConfig::from_typed_over(&doc, t, conv::UNIT_NS),
            None => BreakerConfig::from_json_value(&doc, ""),
        }
        .py(py)?;
        let b = CircuitBreaker::new(cfg.clone()).py(py)?;
        Ok(Breaker { shared: b.shared(), config: cfg, on_state_change })
    }

    /// The settings as a document.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Obj<'py>> {
        conv::from_json(py, &self.config.to_json_value())
    }

    #[getter]
    fn name(&self) -> Option<String> {
        self.config.name.clone()
    }

    #[getter]
    fn on_state_change(&self, py: Python<'_>) -> Option<Py<PyAny>> {
        self.on_state_change.as_ref().map(|h| h.clone_ref(py))
    }

    /// The current state (`closed`, `open`, `half_open`, `disabled`, `forced_open`, `metrics_only`).
    #[getter]
    fn state(&self, py: Python<'_>) -> &'static str {
        self.with(py, |b| b.state().code())
    }

    /// Calls refused so far.
    #[getter]
    fn rejections(&self, py: Python<'_>) -> u64 {
        self.with(py, |b| b.rejections())
    }

    /// The window's totals: calls, failures, slow.
    fn totals<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let t = self.with(py, |b| b.totals());
        [("calls", t.calls), ("failures", t.failures), ("slow", t.slow)].into_py_dict(py)
    }

    /// Asks to make one call.
    #[pyo3(signature = (now=None))]
    fn try_acquire(&self, py: Python<'_>, now: Option<&Obj>) -> PyResult<Acquired> {
        let now = now_or_clock(now)?;
        let (a, t, state) = self.with(py, |b| {
            let (a, t) = b.try_acquire(now);
            (a, t, b.state())
        });
        let transition = self.fire(py, t)?;
        let (p, state, retry_after) = match a {
            Acquire::Permitted(p) => (Some(p), state, None),
            Acquire::Rejected { state, retry_after } => (None, state, wait_secs(retry_after)),
        };
        let (permitted, trial) = (p.is_some(), p.is_some_and(|p| p.is_trial()));
        let permit = p.map(|p| Py::new(py, PyPermit { p })).transpose()?;
        Ok(Acquired { permitted, permit, trial, state: state.code(), retry_after, transition })
    }

    /// Takes a permit, or raises `CircuitOpenError`.
    #[pyo3(signature = (now=None))]
    fn acquire(&self, py: Python<'_>, now: Option<&Obj>) -> PyResult<PyPermit> {
        let now = now_or_clock(now)?;
        let (a, t) = self.with(py, |b| b.try_acquire(now));
        self.fire(py, t)?;
        match a {
            Acquire::Permitted(p) => Ok(PyPermit { p }),
            Acquire::Rejected { state, retry_after } => Err(self.open_error(py, state, retry_after)),
        }
    }

    /// Records a permitted call's outcome: `"success"`, `"failure"`,
    /// `"ignored"`, or an exception (classified; cancellations are ignored).
    #[pyo3(signature = (permit, outcome=None, now=None, duration=None))]
    fn record(
        &self,
        py: Python<'_>,
        permit: &Obj,
        outcome: Option<&Obj>,
        now: Option<&Obj>,
        duration: Option<&Obj>,
    ) -> PyResult<Option<Py<PyTransition>>> {
        let p = permit_of(permit)?;
        let counted = match outcome.filter(|o| !o.is_none()) {
            None => Counted::Success,
            Some(o) if o.is_instance_of::<PyBaseException>() => counted_exc(&self.config, o)?,
            // The literals a caller writes are interned: most outcomes are found by identity.
            Some(o) if o.is(intern!(py, "success")) => Counted::Success,
            Some(o) if o.is(intern!(py, "failure")) => Counted::Failure,
            Some(o) => Counted::parse(&to_str(o, "outcome")?, "outcome").py(py)?,
        };
        let now = now_or_clock(now)?;
        let duration = opt_secs(duration, "duration")?.unwrap_or_else(|| now.saturating_sub(p.started()));
        let t = self.with(py, |b| b.on_result(p, now, counted, duration));
        self.fire(py, t)
    }

    /// Gives a permit back without an outcome.
    #[pyo3(signature = (permit, now=None))]
    fn release(&self, py: Python<'_>, permit: &Obj, now: Option<&Obj>) -> PyResult<Option<Py<PyTransition>>> {
        let p = permit_of(permit)?;
        let now = now_or_clock(now)?;
        let t = self.with(py, |b| b.release(p, now));
        self.fire(py, t)
    }

    /// Calls `fn(*args, **kwargs)` through the breaker.
    #[pyo3(signature = (func, args, kwargs=None))]
    fn call(&self, py: Python<'_>, func: &Obj, args: &Obj, kwargs: Option<&Obj>) -> PyResult<Py<PyAny>> {
        let (args, kwargs) = crate::policy::call_args(func, args, kwargs)?;
        let now = conv::mono_ns();
        let (a, t) = self.with(py, |b| b.try_acquire(now));
        self.fire(py, t)?;
        let p = match a {
            Acquire::Permitted(p) => p,
            Acquire::Rejected { state, retry_after } => return Err(self.open_error(py, state, retry_after)),
        };
        let r = func.call(args, kwargs);
        let end = conv::mono_ns();
        let counted = match &r {
            Ok(_) => Ok(Counted::Success),
            Err(e) => counted_exc(&self.config, e.value(py).as_any()),
        };
        let counted = match counted {
            Ok(c) => c,
            Err(e) => {
                // The exception could not be read: give the permit back, then raise.
                let t = self.with(py, |b| b.release(p, end));
                self.fire(py, t)?;
                return Err(e);
            }
        };
        let t = self.with(py, |b| b.on_result(p, end, counted, end.saturating_sub(p.started())));
        self.fire(py, t)?;
        r.map(Bound::unbind)
    }

    /// Moves to `state` by hand.
    #[pyo3(signature = (state, now=None))]
    fn transition_to(&self, py: Python<'_>, state: &Obj, now: Option<&Obj>) -> PyResult<Py<PyTransition>> {
        let to = state_of(py, state)?;
        let now = now_or_clock(now)?;
        // The refusal becomes an exception after the lock is released.
        let t = self.with(py, |b| b.transition_to(to, now)).py(py)?;
        self.fire(py, Some(t))?;
        Py::new(py, transition(&t))
    }

    /// Returns to closed with an empty window.
    #[pyo3(signature = (now=None))]
    fn reset(&self, py: Python<'_>, now: Option<&Obj>) -> PyResult<Option<Py<PyTransition>>> {
        let now = now_or_clock(now)?;
        let t = self.with(py, |b| b.reset(now));
        self.fire(py, t)
    }

    /// Seconds until a call could be admitted (0.0 if now; inf when forced open).
    #[pyo3(signature = (now=None))]
    fn remaining_open(&self, py: Python<'_>, now: Option<&Obj>) -> PyResult<f64> {
        let now = now_or_clock(now)?;
        Ok(wait_secs(self.with(py, |b| b.remaining_open(now))).unwrap_or(f64::INFINITY))
    }

    /// Captures the state as a JSON-ready dict.
    #[pyo3(signature = (now=None, wall_now_ms=None))]
    fn snapshot<'py>(
        &self,
        py: Python<'py>,
        now: Option<&Obj<'py>>,
        wall_now_ms: Option<&Obj<'py>>,
    ) -> PyResult<Obj<'py>> {
        let now = now_or_clock(now)?;
        let wall = conv::wall_or_clock(wall_now_ms)?;
        let text = self.with(py, |b| b.snapshot(now, wall).to_json());
        let v: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
        conv::from_json(py, &v)
    }

    /// Replaces the state with a snapshot (a dict or JSON text) taken with the same settings.
    #[pyo3(signature = (snapshot, now=None, wall_now_ms=None))]
    fn restore(&self, py: Python<'_>, snapshot: &Obj, now: Option<&Obj>, wall_now_ms: Option<&Obj>) -> PyResult<()> {
        let text = if snapshot.is_instance_of::<PyString>() {
            to_str(snapshot, "snapshot")?
        } else {
            conv::to_json(snapshot, Mode::Document)?.to_string()
        };
        let now = now_or_clock(now)?;
        let wall = conv::wall_or_clock(wall_now_ms)?;
        let snap = BreakerSnapshot::from_json(&text).py(py)?;
        let b = CircuitBreaker::restore(self.config.clone(), &snap, now, wall).py(py)?;
        let old = self.with(py, |cur| std::mem::replace(cur, b));
        drop(old);
        Ok(())
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        let state = self.with(py, |b| b.state().code());
        format!("CircuitBreaker(name={:?}, state={:?})", self.config.name, state)
    }

    /// The current state's metrics (resilience4j's `CircuitBreaker.Metrics`):
    /// rates in percent (-1.0 below the minimum number of calls) and counts,
    /// `not_permitted_calls` included (per state; `rejections` is the running total).
    #[pyo3(signature = (now=None))]
    fn state_metrics<'py>(&self, py: Python<'py>, now: Option<&Bound<'py, PyAny>>) -> PyResult<Bound<'py, PyAny>> {
        let now = now_or_clock(now)?;
        let m = self.with(py, |b| b.metrics(now));
        conv::from_json(py, &serde_json::to_value(m).unwrap_or_default())
    }

    /// Records an outcome without a permit (resilience4j's `onError` /
    /// `onSuccess` without `tryAcquirePermission`): it counts in the current
    /// state's metrics and cannot be voided by a transition.
    #[pyo3(signature = (outcome=None, now=None, duration=None))]
    fn record_without_permit(
        &self,
        py: Python<'_>,
        outcome: Option<&Bound<'_, PyAny>>,
        now: Option<&Bound<'_, PyAny>>,
        duration: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Option<Py<PyTransition>>> {
        let counted = outcome_of(py, &self.config, outcome)?;
        let now = now_or_clock(now)?;
        let duration = opt_secs(duration, "duration")?.unwrap_or(0);
        let t = self.with(py, |b| b.record(now, counted, duration));
        self.fire(py, t)
    }

    /// Opens for `duration` seconds by hand (resilience4j's `transitionToOpenStateFor`).
    #[pyo3(signature = (duration, now=None))]
    fn transition_to_open_for(
        &self,
        py: Python<'_>,
        duration: &Bound<'_, PyAny>,
        now: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyTransition>> {
        let d = conv::secs(duration, "duration")?;
        let now = now_or_clock(now)?;
        let t = self.with(py, |b| b.transition_to_open_for(d, now)).py(py)?;
        self.fire(py, Some(t))?;
        Py::new(py, transition(&t))
    }

    /// Opens until `until`, in seconds on the clock `now` uses
    /// (resilience4j's `transitionToOpenStateUntil`).
    #[pyo3(signature = (until, now=None))]
    fn transition_to_open_until(
        &self,
        py: Python<'_>,
        until: &Bound<'_, PyAny>,
        now: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyTransition>> {
        let until = conv::instant(until, "until")?;
        let now = now_or_clock(now)?;
        let t = self.with(py, |b| b.transition_to_open_until(until, now)).py(py)?;
        self.fire(py, Some(t))?;
        Py::new(py, transition(&t))
    }

    /// What a break-duration generator sees now (Polly's
    /// `BreakDurationGeneratorArguments`): `failure_rate` (0-1),
    /// `failure_count`, `half_open_attempts`.
    #[pyo3(signature = (now=None))]
    fn break_arguments<'py>(&self, py: Python<'py>, now: Option<&Bound<'py, PyAny>>) -> PyResult<Bound<'py, PyAny>> {
        let now = now_or_clock(now)?;
        let a = self.with(py, |b| b.break_arguments(now));
        conv::from_json(py, &serde_json::to_value(a).unwrap_or_default())
    }

    /// Replaces the current open period's wait with `duration` seconds,
    /// counted from when it opened (a host-computed break duration).
    fn set_break_duration(&self, py: Python<'_>, duration: &Bound<'_, PyAny>) -> PyResult<()> {
        let d = conv::secs(duration, "duration")?;
        self.with(py, |b| b.set_break_duration(d)).py(py)
    }
}

pub fn refusal(r: Refusal) -> PyRefusal {
    PyRefusal { budget: r.budget, reason: r.reason, detail: r.detail.to_string() }
}

/// A retry budget shared by reference.
#[pyclass(frozen, subclass, name = "Budget", module = "retrycore._native")]
pub struct PyBudget {
    pub shared: SharedBudget,
    pub config: BudgetConfig,
}

impl PyBudget {
    pub fn wrap(py: Python<'_>, shared: SharedBudget) -> PyBudget {
        let config = with(py, &shared, |b| b.config().clone());
        PyBudget { shared, config }
    }

    /// A new budget from its configuration document.
    pub fn from_doc(py: Python<'_>, doc: &serde_json::Value, mode: Mode) -> PyResult<PyBudget> {
        let cfg = match mode {
            Mode::Kwargs => BudgetConfig::from_typed_value(doc, conv::UNIT_NS),
            Mode::Document => BudgetConfig::from_json_value(doc, ""),
        }
        .py(py)?;
        let b = Budget::new(cfg.clone()).py(py)?;
        Ok(PyBudget { shared: b.shared(), config: cfg })
    }

    /// Runs `f` on the core budget (see [`crate::locks::with`]).
    fn with<R: Send>(&self, py: Python<'_>, f: impl FnOnce(&mut Budget) -> R + Send) -> R {
        with(py, &self.shared, f)
    }

    /// `now` given as float seconds, else the monotonic clock — read only
    /// when the kind's answers depend on time (the core ignores `now` otherwise).
    /// The arguments shared by `check`, `withdraw` and `try_withdraw`.
    fn flags(
        &self,
        category: Option<&Obj>,
        now: Option<&Obj>,
        refused: Option<&Obj>,
        holds_retry_slot: Option<&Obj>,
    ) -> PyResult<(Category, u64, bool, bool)> {
        let c = category_of(category)?;
        let refused = conv::bool_or(refused, "refused", false)?;
        let holds = conv::bool_or(holds_retry_slot, "holds_retry_slot", false)?;
        Ok((c, self.now(now)?, refused, holds))
    }

    fn now(&self, now: Option<&Obj>) -> PyResult<u64> {
        match now {
            Some(x) if !x.is_none() => conv::instant(x, "now"),
            _ if self.config.depends_on_time() => Ok(conv::mono_ns()),
            _ => Ok(0),
        }
    }
}

#[pymethods]
impl PyBudget {
    #[new]
    #[pyo3(signature = (config=None, *, kwargs=None, share=None, overrides=None))]
    fn new(
        py: Python<'_>,
        config: Option<&Obj>,
        kwargs: Option<&Obj>,
        share: Option<&Obj>,
        overrides: Option<&Obj>,
    ) -> PyResult<PyBudget> {
        if let Some(b) = conv::opt_class_arg::<PyBudget>(share, "share", "a Budget")? {
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

    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Obj<'py>> {
        conv::from_json(py, &self.config.to_json_value())
    }

    #[getter]
    fn name(&self) -> String {
        self.config.name.clone()
    }

    #[getter]
    fn kind(&self) -> &'static str {
        self.config.kind_name()
    }

    #[getter]
    fn refusals(&self, py: Python<'_>) -> u64 {
        self.with(py, |b| b.refusals())
    }

    #[getter]
    fn withdrawals(&self, py: Python<'_>) -> u64 {
        self.with(py, |b| b.withdrawals())
    }

    /// The level: tokens, or window counts, as a dict.
    #[pyo3(signature = (now=None))]
    fn level<'py>(&self, py: Python<'py>, now: Option<&Obj<'py>>) -> PyResult<Obj<'py>> {
        let now = self.now(now)?;
        let v = self.with(py, |b| b.level(now));
        conv::from_json(py, &v)
    }

    /// A logical operation starts (ratio deposit, concurrency call).
    #[pyo3(signature = (now=None))]
    fn on_operation_start(&self, py: Python<'_>, now: Option<&Obj>) -> PyResult<()> {
        let now = self.now(now)?;
        self.with(py, |b| b.on_operation_start(now));
        Ok(())
    }

    /// A logical operation ends.
    #[pyo3(signature = (held_retry_slot=None))]
    fn on_operation_end(&self, py: Python<'_>, held_retry_slot: Option<&Obj>) -> PyResult<()> {
        let held = conv::bool_or(held_retry_slot, "held_retry_slot", false)?;
        self.with(py, |b| b.on_operation_end(held));
        Ok(())
    }

    /// Checks whether a retry after `category` is affordable: a `Refusal` or None.
    /// `category` left out (None) is `"server_error"`, as in the shared vectors.
    #[pyo3(signature = (category=None, now=None, refused=None, holds_retry_slot=None))]
    fn check(
        &self,
        py: Python<'_>,
        category: Option<&Obj>,
        now: Option<&Obj>,
        refused: Option<&Obj>,
        holds_retry_slot: Option<&Obj>,
    ) -> PyResult<Option<PyRefusal>> {
        let (c, now, refused, holds) = self.flags(category, now, refused, holds_retry_slot)?;
        Ok(self.with(py, |b| b.check(now, c, refused, holds)).err().map(refusal))
    }

    /// Pays for a retry that `check` allowed: (token cost or None, took a concurrency slot).
    /// `category` left out (None) is `"server_error"`.
    #[pyo3(signature = (category=None, now=None, refused=None, holds_retry_slot=None))]
    fn withdraw(
        &self,
        py: Python<'_>,
        category: Option<&Obj>,
        now: Option<&Obj>,
        refused: Option<&Obj>,
        holds_retry_slot: Option<&Obj>,
    ) -> PyResult<(Option<u32>, bool)> {
        let (c, now, refused, holds) = self.flags(category, now, refused, holds_retry_slot)?;
        Ok(self.with(py, |b| b.withdraw(now, c, refused, holds)))
    }

    /// Checks and pays in one step under one lock: None when paid, else the `Refusal`.
    /// `category` left out (None) is `"server_error"`.
    #[pyo3(signature = (category=None, now=None, refused=None, holds_retry_slot=None))]
    fn try_withdraw(
        &self,
        py: Python<'_>,
        category: Option<&Obj>,
        now: Option<&Obj>,
        refused: Option<&Obj>,
        holds_retry_slot: Option<&Obj>,
    ) -> PyResult<Option<PyRefusal>> {
        let (c, now, refused, holds) = self.flags(category, now, refused, holds_retry_slot)?;
        Ok(self.with(py, |b| b.try_withdraw(now, c, refused, holds)).err().map(refusal))
    }

    /// Takes `n` tokens from a token bucket if it holds that many, after its
    /// refill (smithy-rs `try_acquire_many`, botocore `RetryQuota.acquire`):
    /// True when taken. Counts no withdrawal or refusal. Another kind of
    /// budget raises `invalid_state`.
    #[pyo3(signature = (n, now=None))]
    fn acquire(&self, py: Python<'_>, n: &Obj, now: Option<&Obj>) -> PyResult<bool> {
        let n = conv::to_u32(n, "n")?;
        let now = self.now(now)?;
        self.with(py, |b| b.acquire(now, n)).py(py)
    }

    /// Gives `n` tokens back to a token bucket, up to its capacity (botocore
    /// `RetryQuota.release`). Another kind of budget raises `invalid_state`.
    #[pyo3(signature = (n, now=None))]
    fn release(&self, py: Python<'_>, n: &Obj, now: Option<&Obj>) -> PyResult<()> {
        let n = conv::to_u32(n, "n")?;
        let now = self.now(now)?;
        self.with(py, |b| b.release(now, n)).py(py)
    }

    /// Records a failed attempt; `category` left out (None) is `"server_error"`.
    #[pyo3(signature = (category=None, now=None, counts=None, reached_backend=None, declined_pushback=None, refused=None))]
    #[allow(clippy::too_many_arguments)]
    fn on_failure(
        &self,
        py: Python<'_>,
        category: Option<&Obj>,
        now: Option<&Obj>,
        counts: Option<&Obj>,
        reached_backend: Option<&Obj>,
        declined_pushback: Option<&Obj>,
        refused: Option<&Obj>,
    ) -> PyResult<()> {
        let c = category_of(category)?;
        let facts = FailureFacts {
            category: c,
            counts: conv::bool_or(counts, "counts", true)?,
            reached_backend: conv::bool_or(reached_backend, "reached_backend", true)?,
            declined_pushback: conv::bool_or(declined_pushback, "declined_pushback", false)?,
            refused: conv::bool_or(refused, "refused", false)?,
        };
        let now = self.now(now)?;
        self.with(py, |b| b.on_failure(now, facts));
        Ok(())
    }

    /// Records a success; `retry_cost` is what the token bucket took for the retry that led to it.
    #[pyo3(signature = (now=None, retry_cost=None))]
    fn on_success(&self, py: Python<'_>, now: Option<&Obj>, retry_cost: Option<&Obj>) -> PyResult<()> {
        let now = self.now(now)?;
        let cost = conv::opt(retry_cost, |c| conv::to_u32(c, "retry_cost"))?;
        self.with(py, |b| b.on_success(now, cost));
        Ok(())
    }

    /// The adaptive throttle before an attempt: a `Refusal` or None. `r`
    /// is the draw in [0, 1) (default: from the OS).
    #[pyo3(signature = (now=None, r=None))]
    fn before_attempt(&self, py: Python<'_>, now: Option<&Obj>, r: Option<&Obj>) -> PyResult<Option<PyRefusal>> {
        let now = self.now(now)?;
        let r = conv::opt(r, |x| {
            let v = conv::to_f64(x, "r")?;
            retrycore::backoff::check_r(v).py(py).map(|()| v)
        })?
        .unwrap_or_else(crate::entropy::draw);
        Ok(self.with(py, |b| b.before_attempt(now, r)).map(refusal))
    }

    fn __repr__(&self) -> String {
        format!("Budget(kind={:?}, name={:?})", self.config.kind_name(), self.config.name)
    }
}

/// Reads an outcome without a permit: `"success"` (the default),
/// `"failure"`, `"ignored"` (read by the core's [`Counted::parse`]), or an
/// exception the breaker's rules count.
fn outcome_of(py: Python<'_>, cfg: &BreakerConfig, o: Option<&Bound<'_, PyAny>>) -> PyResult<Counted> {
    match o.filter(|o| !o.is_none()) {
        None => Ok(Counted::Success),
        Some(o) if o.is_instance_of::<PyBaseException>() => counted_exc(cfg, o),
        Some(o) => Counted::parse(&to_str(o, "outcome")?, "outcome").py(py),
    }
}

// The classes this module declares in `src/surface.rs`, expanded by `build.rs`.
include!(concat!(env!("OUT_DIR"), "/breaker.rs"));

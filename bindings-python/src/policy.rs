//! Retry policies, sessions and the retry loop.
//!
//! The loop only owns what the core leaves to the host — the clock, the
//! sleep, calling the function, seeing its exception, hooks — and asks the
//! session for every decision.

use crate::breaker::{fire, lock, Breaker, PyBudget, PyTransition};
use crate::conv::{self, err, now_or_clock, opt_bool, opt_str, opt_uint, to_json, to_secs, to_str, CoreResult, Mode};
use crate::failure::{Fields, OwnedFailure};
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::sync::GILOnceCell;
use pyo3::types::{PyDict, PyString, PyTuple};
use retrycore::breaker::Transition;
use retrycore::policy::{PolicyConfig, RetryPolicy};
use retrycore::session::{Decision, Gate, RetrySession, SessionOptions};
use retrycore::ErrorCode;
use std::sync::{Mutex, OnceLock};

/// A live retry policy.
#[pyclass(frozen, name = "Policy", module = "retrycore._native")]
pub struct Policy {
    pub inner: RetryPolicy,
    pub breaker: Option<Py<Breaker>>,
    pub budgets: Vec<Py<PyBudget>>,
}

pub fn native_policy<'py>(o: &Bound<'py, PyAny>) -> PyResult<Bound<'py, Policy>> {
    if let Ok(p) = o.downcast::<Policy>() {
        return Ok(p.clone());
    }
    // The facade's RetryPolicy keeps the native object in `_p`.
    if let Ok(inner) = o.getattr("_p") {
        if let Ok(p) = inner.downcast_into::<Policy>() {
            return Ok(p);
        }
    }
    Err(err(o.py(), ErrorCode::InvalidType, "policy", format!("must be a RetryPolicy, got {}", conv::type_name(o))))
}

fn floats(o: &Bound<'_, PyAny>, field: &str) -> PyResult<Vec<f64>> {
    if !(o.is_instance_of::<pyo3::types::PyList>() || o.is_instance_of::<PyTuple>()) {
        return Err(err(o.py(), ErrorCode::InvalidType, field, "must be a list of floats"));
    }
    o.try_iter()?.map(|x| conv::to_f64(&x?, field)).collect()
}

fn entropy_arg(e: Option<&Bound<'_, PyAny>>) -> PyResult<Option<u64>> {
    opt_uint(e, "entropy", 0, u64::MAX)
}

impl Policy {
    fn build(py: Python<'_>, config: PolicyConfig, entropy: Option<u64>) -> PyResult<Policy> {
        let inner = RetryPolicy::new(config, entropy).py(py)?;
        Policy::around(py, inner)
    }

    fn around(py: Python<'_>, inner: RetryPolicy) -> PyResult<Policy> {
        let breaker = match inner.breaker() {
            Some(b) => Some(Py::new(py, Breaker::wrap(b.clone()))?),
            None => None,
        };
        let budgets =
            inner.budgets().iter().map(|b| Py::new(py, PyBudget::wrap(b.clone()))).collect::<PyResult<_>>()?;
        Ok(Policy { inner, breaker, budgets })
    }
}

/// One row of a schedule, in seconds.
#[pyclass(frozen, get_all, name = "ScheduleRow", module = "retrycore._native")]
pub struct ScheduleRow {
    pub retry: u32,
    pub attempt: u32,
    pub low: f64,
    pub mid: f64,
    pub high: f64,
    pub cumulative_low: f64,
    pub cumulative_high: f64,
}

#[pymethods]
impl ScheduleRow {
    fn __repr__(&self) -> String {
        format!(
            "ScheduleRow(retry={}, attempt={}, low={}, mid={}, high={}, cumulative_high={})",
            self.retry, self.attempt, self.low, self.mid, self.high, self.cumulative_high
        )
    }
}

#[pymethods]
impl Policy {
    /// Parses a policy document (JSON text).
    #[staticmethod]
    #[pyo3(signature = (text, entropy=None))]
    fn from_json(py: Python<'_>, text: &Bound<'_, PyAny>, entropy: Option<&Bound<'_, PyAny>>) -> PyResult<Policy> {
        let text = to_str(text, "text")?;
        Policy::build(py, PolicyConfig::from_json(&text).py(py)?, entropy_arg(entropy)?)
    }

    /// Reads a policy document given as a dict (`kwargs=True`: float seconds in duration keys).
    #[staticmethod]
    #[pyo3(signature = (doc, kwargs=false, entropy=None))]
    fn from_dict(
        py: Python<'_>,
        doc: &Bound<'_, PyAny>,
        kwargs: bool,
        entropy: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Policy> {
        let v = to_json(doc, if kwargs { Mode::Kwargs } else { Mode::Document })?;
        Policy::build(py, PolicyConfig::from_json_value(&v).py(py)?, entropy_arg(entropy)?)
    }

    /// The normalized document, every setting spelled out.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        conv::from_json(py, &self.inner.config().to_json_value())
    }

    fn to_json(&self) -> String {
        self.inner.config().to_json()
    }

    #[getter]
    fn max_attempts(&self) -> u32 {
        self.inner.config().max_attempts
    }

    #[getter]
    fn name(&self) -> Option<String> {
        self.inner.config().name.clone()
    }

    #[getter]
    fn breaker(&self, py: Python<'_>) -> Option<Py<Breaker>> {
        self.breaker.as_ref().map(|b| b.clone_ref(py))
    }

    #[getter]
    fn budgets(&self, py: Python<'_>) -> Vec<Py<PyBudget>> {
        self.budgets.iter().map(|b| b.clone_ref(py)).collect()
    }

    /// A policy with the same settings whose sessions share `breaker`.
    #[pyo3(signature = (breaker))]
    fn with_breaker(&self, py: Python<'_>, breaker: Option<Py<Breaker>>) -> Policy {
        let inner = self.inner.with_breaker(breaker.as_ref().map(|b| b.get().shared.clone()));
        Policy { inner, breaker, budgets: self.budgets.iter().map(|b| b.clone_ref(py)).collect() }
    }

    /// A policy with the same settings whose sessions share `budgets`.
    fn with_budgets(&self, py: Python<'_>, budgets: Vec<Py<PyBudget>>) -> Policy {
        let inner = self.inner.with_budgets(budgets.iter().map(|b| b.get().shared.clone()).collect());
        Policy { inner, breaker: self.breaker.as_ref().map(|b| b.clone_ref(py)), budgets }
    }

    /// Low / mid / high delay per retry, in seconds.
    fn schedule(&self) -> Vec<ScheduleRow> {
        self.inner
            .schedule()
            .rows
            .iter()
            .map(|r| ScheduleRow {
                retry: r.retry,
                attempt: r.attempt,
                low: dur_secs(r.low),
                mid: dur_secs(r.mid),
                high: dur_secs(r.high),
                cumulative_low: dur_secs(r.cumulative_low),
                cumulative_high: dur_secs(r.cumulative_high),
            })
            .collect()
    }

    /// The cumulative worst-case wait, in seconds.
    fn worst_case(&self) -> f64 {
        to_secs(retrycore::duration::from_std(self.inner.schedule().worst_case()))
    }

    /// The delay before `retry` (≥ 1) for the draw `r` in [0, 1]; `prev`
    /// is the previous decorrelated delay in seconds.
    #[pyo3(signature = (retry, r, prev=None))]
    fn delay(
        &self,
        py: Python<'_>,
        retry: &Bound<'_, PyAny>,
        r: &Bound<'_, PyAny>,
        prev: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<f64> {
        let retry = conv::to_uint(retry, "retry", 0, u64::from(u32::MAX))? as u32;
        let r = conv::to_f64(r, "r")?;
        let prev = conv::opt_secs(prev, "prev")?;
        self.inner.config().backoff.delay_ns(retry, r, prev).map(to_secs).py(py)
    }

    /// The delays of retries 1..=count drawn from a generator seeded with `seed`.
    fn sample_delays(&self, seed: &Bound<'_, PyAny>, count: &Bound<'_, PyAny>) -> PyResult<Vec<f64>> {
        let seed = conv::to_uint(seed, "seed", 0, u64::MAX)?;
        let count = conv::to_uint(count, "count", 0, 1_000_000)? as u32;
        Ok(self.inner.config().backoff.sample_sequence_ns(seed, count).into_iter().map(to_secs).collect())
    }

    /// The delays of retries 1..=len(draws), retry n taking draw n (anchors' vectors).
    fn replay_delays(&self, py: Python<'_>, draws: &Bound<'_, PyAny>) -> PyResult<Vec<f64>> {
        let draws = floats(draws, "draws")?;
        Ok(self.inner.config().backoff.replay_ns(&draws).py(py)?.into_iter().map(to_secs).collect())
    }

    /// Starts one logical operation.
    #[pyo3(signature = (key=None, seed=None, idempotent=None, idempotency_key_sent=None, method=None, draws=None))]
    #[allow(clippy::too_many_arguments)]
    fn session(
        &self,
        py: Python<'_>,
        key: Option<&Bound<'_, PyAny>>,
        seed: Option<&Bound<'_, PyAny>>,
        idempotent: Option<&Bound<'_, PyAny>>,
        idempotency_key_sent: Option<&Bound<'_, PyAny>>,
        method: Option<&Bound<'_, PyAny>>,
        draws: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Session> {
        let draws = match draws.filter(|d| !d.is_none()) {
            None => None,
            Some(d) => Some(floats(d, "draws")?),
        };
        let opts = SessionOptions {
            key: opt_str(key, "key")?,
            key_entropy: crate::entropy::bytes::<16>(),
            seed: opt_uint(seed, "seed", 0, u64::MAX)?,
            idempotent: opt_bool(idempotent, "idempotent")?,
            idempotency_key_sent: opt_bool(idempotency_key_sent, "idempotency_key_sent")?,
            method: opt_str(method, "method")?,
            draws,
        };
        Session::new(py, &self.inner, opts)
    }

    /// A policy for test suites: at most `attempts` calls, every delay capped at `max_delay` seconds.
    #[pyo3(signature = (attempts, max_delay=None))]
    fn testing(
        &self,
        py: Python<'_>,
        attempts: &Bound<'_, PyAny>,
        max_delay: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Policy> {
        let attempts = conv::to_uint(attempts, "attempts", 0, u64::from(u32::MAX))? as u32;
        let max = conv::opt_secs(max_delay, "max_delay")?.unwrap_or(0);
        let inner = self.inner.testing(attempts, max).py(py)?;
        Ok(Policy {
            inner,
            breaker: self.breaker.as_ref().map(|b| b.clone_ref(py)),
            budgets: self.budgets.iter().map(|b| b.clone_ref(py)).collect(),
        })
    }

    /// The counters of all sessions, with the seeds' metric names.
    fn counters<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        conv::from_json(py, &self.inner.counters().snapshot().to_json_value())
    }

    fn __repr__(&self) -> String {
        format!("Policy({})", self.inner.config().to_json())
    }
}

// ---------------------------------------------------------------- decisions

#[pyclass(frozen, get_all, module = "retrycore._native")]
pub struct Proceed {
    pub attempt: u32,
    pub max_attempts: u32,
    /// Seconds the call may take (None: unbounded).
    pub timeout: Option<f64>,
}

#[pyclass(frozen, get_all, module = "retrycore._native")]
pub struct Reject {
    pub reason: &'static str,
    /// Seconds until the call could be admitted (None: not by waiting).
    pub retry_after: Option<f64>,
    pub budget: Option<String>,
}

#[pyclass(frozen, get_all, module = "retrycore._native")]
pub struct Retry {
    pub retry: u32,
    pub attempt: u32,
    pub delay: f64,
    pub backoff: f64,
    pub server_delay: Option<f64>,
    pub capped: bool,
    pub category: &'static str,
}

#[pyclass(frozen, get_all, module = "retrycore._native")]
pub struct GiveUp {
    pub reason: &'static str,
    pub category: &'static str,
    pub exhausted: bool,
    pub attempts: u32,
    pub budget: Option<String>,
    pub budget_reason: Option<&'static str>,
}

#[pymethods]
impl Proceed {
    fn __repr__(&self) -> String {
        format!("Proceed(attempt={}, max_attempts={}, timeout={:?})", self.attempt, self.max_attempts, self.timeout)
    }
}
#[pymethods]
impl Reject {
    fn __repr__(&self) -> String {
        format!("Reject(reason={:?}, retry_after={:?}, budget={:?})", self.reason, self.retry_after, self.budget)
    }
}
#[pymethods]
impl Retry {
    fn __repr__(&self) -> String {
        format!(
            "Retry(retry={}, attempt={}, delay={}, category={:?})",
            self.retry, self.attempt, self.delay, self.category
        )
    }
}
#[pymethods]
impl GiveUp {
    fn __repr__(&self) -> String {
        format!("GiveUp(reason={:?}, category={:?}, attempts={})", self.reason, self.category, self.attempts)
    }
}

fn dur_secs(d: std::time::Duration) -> f64 {
    to_secs(retrycore::duration::from_std(d))
}

fn gate_obj(py: Python<'_>, g: &Gate) -> PyResult<Py<PyAny>> {
    Ok(match g {
        Gate::Proceed { attempt, max_attempts, timeout } => {
            Py::new(py, Proceed { attempt: *attempt, max_attempts: *max_attempts, timeout: timeout.map(dur_secs) })?
                .into_any()
        }
        Gate::Reject { reason, retry_after, budget } => Py::new(
            py,
            Reject { reason: reason.code(), retry_after: retry_after.map(dur_secs), budget: budget.clone() },
        )?
        .into_any(),
    })
}

fn decision_obj(py: Python<'_>, d: &Decision) -> PyResult<Py<PyAny>> {
    Ok(match d {
        Decision::Retry { retry, attempt, delay, backoff, server_delay, capped, category } => Py::new(
            py,
            Retry {
                retry: *retry,
                attempt: *attempt,
                delay: dur_secs(*delay),
                backoff: dur_secs(*backoff),
                server_delay: server_delay.map(dur_secs),
                capped: *capped,
                category: category.code(),
            },
        )?
        .into_any(),
        Decision::GiveUp { reason, category, exhausted, refusal, attempts } => Py::new(
            py,
            GiveUp {
                reason: reason.code(),
                category: category.code(),
                exhausted: *exhausted,
                attempts: *attempts,
                budget: refusal.as_ref().map(|r| r.budget.clone()),
                budget_reason: refusal.as_ref().map(|r| r.reason),
            },
        )?
        .into_any(),
    })
}

// ---------------------------------------------------------------- sessions

struct State {
    s: RetrySession,
    timeout: Option<u64>,
    last_exc: Option<Py<PyAny>>,
}

/// One logical operation (also what `retrycore.current_attempt()` returns
/// inside a decorated call).
#[pyclass(frozen, name = "RetrySession", module = "retrycore._native")]
pub struct Session {
    st: Mutex<State>,
    /// The key as a Python string, made on first read (the core formats a
    /// minted key only then too): a call whose key nobody reads mints nothing.
    key: OnceLock<Py<PyString>>,
    max_attempts: u32,
}

impl Session {
    fn new(py: Python<'_>, policy: &RetryPolicy, opts: SessionOptions) -> PyResult<Session> {
        let s = policy.session(opts).py(py)?;
        Ok(Session {
            max_attempts: policy.config().max_attempts,
            key: OnceLock::new(),
            st: Mutex::new(State { s, timeout: None, last_exc: None }),
        })
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        lock(&self.st)
    }

    /// The key (never call it with the state locked).
    fn key_str(&self, py: Python<'_>) -> Py<PyString> {
        self.key.get_or_init(|| PyString::new(py, self.state().s.key()).unbind()).clone_ref(py)
    }
}

#[pymethods]
impl Session {
    /// The idempotency key every attempt carries.
    #[getter]
    fn key(&self, py: Python<'_>) -> Py<PyString> {
        self.key_str(py)
    }

    /// True when the session minted the key itself (it then does not make a request safe to repeat).
    #[getter]
    fn key_minted(&self) -> bool {
        self.state().s.key_minted()
    }

    /// The number of the current (or last) attempt; 0 before the first.
    #[getter]
    fn attempt(&self) -> u32 {
        self.state().s.attempts()
    }

    #[getter]
    fn max_attempts(&self) -> u32 {
        self.max_attempts
    }

    /// Seconds the current attempt may take (min of `attempt_timeout` and the time left), or None.
    #[getter]
    fn timeout(&self) -> Option<f64> {
        self.state().timeout.map(to_secs)
    }

    #[getter]
    fn done(&self) -> bool {
        self.state().s.is_done()
    }

    #[getter]
    fn give_up_reason(&self) -> Option<&'static str> {
        self.state().s.give_up_reason().map(|r| r.code())
    }

    /// Gates the next attempt: a `Proceed` or a `Reject`.
    #[pyo3(signature = (now=None))]
    fn before_attempt(&self, py: Python<'_>, now: Option<&Bound<'_, PyAny>>) -> PyResult<Py<PyAny>> {
        let now = now_or_clock(now)?;
        let g = {
            let mut st = self.state();
            let g = st.s.before_attempt_ns(now).py(py)?;
            if let Gate::Proceed { timeout, .. } = &g {
                st.timeout = timeout.map(retrycore::duration::from_std);
            }
            g
        };
        gate_obj(py, &g)
    }

    /// Answers a failed attempt — an exception, a dict of failure fields, or
    /// keyword fields — with a `Retry` or a `GiveUp`.
    #[pyo3(signature = (failure=None, now=None, *, status=None, grpc_code=None, error_names=None, method=None,
        idempotent=None, idempotency_key_sent=None, headers=None, elapsed=None, wall_now_ms=None))]
    #[allow(clippy::too_many_arguments)]
    fn on_failure(
        &self,
        py: Python<'_>,
        failure: Option<&Bound<'_, PyAny>>,
        now: Option<&Bound<'_, PyAny>>,
        status: Option<&Bound<'_, PyAny>>,
        grpc_code: Option<&Bound<'_, PyAny>>,
        error_names: Option<&Bound<'_, PyAny>>,
        method: Option<&Bound<'_, PyAny>>,
        idempotent: Option<&Bound<'_, PyAny>>,
        idempotency_key_sent: Option<&Bound<'_, PyAny>>,
        headers: Option<&Bound<'_, PyAny>>,
        elapsed: Option<&Bound<'_, PyAny>>,
        wall_now_ms: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let fields = Fields {
            status,
            grpc_code,
            error_names,
            method,
            idempotent,
            idempotency_key_sent,
            headers,
            elapsed,
            wall_now_ms,
        };
        let f = OwnedFailure::read(failure, &fields)?;
        let now = now_or_clock(now)?;
        let d = f.with(|x| self.state().s.on_failure_ns(now, x)).py(py)?;
        decision_obj(py, &d)
    }

    /// Records a successful attempt and finishes the session.
    #[pyo3(signature = (now=None, elapsed=None))]
    fn on_success(
        &self,
        py: Python<'_>,
        now: Option<&Bound<'_, PyAny>>,
        elapsed: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let now = now_or_clock(now)?;
        let elapsed = conv::opt_secs(elapsed, "elapsed")?;
        self.state().s.on_success_ns(now, elapsed).py(py)
    }

    /// Ends the session as cancelled (does nothing once done).
    #[pyo3(signature = (now=None))]
    fn cancel(&self, now: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        let now = now_or_clock(now)?;
        self.state().s.cancel_ns(now);
        Ok(())
    }

    /// Gives back a permit and slots without counting anything.
    fn release(&self) {
        self.state().s.release();
    }

    /// The breaker transitions this session's calls caused since the last call.
    fn take_transitions(&self, py: Python<'_>) -> PyResult<Vec<Py<PyTransition>>> {
        let ts = self.state().s.take_transitions();
        ts.iter().map(|t| Py::new(py, crate::breaker::transition(t))).collect()
    }

    fn __repr__(&self) -> String {
        let st = self.state();
        format!("RetrySession(key={:?}, attempt={}, done={})", st.s.key(), st.s.attempts(), st.s.is_done())
    }
}

// ---------------------------------------------------------------- the loop

/// What a hook receives.
#[pyclass(frozen, get_all, name = "RetryEvent", module = "retrycore._native")]
pub struct RetryEvent {
    /// The attempt that failed (or was refused).
    pub attempt: u32,
    /// The retry number about to happen (on_retry), else None.
    pub retry: Option<u32>,
    pub max_attempts: u32,
    pub category: Option<&'static str>,
    /// The decided delay in seconds (on_retry).
    pub delay: Option<f64>,
    /// The give-up reason (on_give_up).
    pub reason: Option<&'static str>,
    pub budget: Option<String>,
    pub exception: Option<Py<PyAny>>,
    pub key: Py<PyString>,
}

#[pymethods]
impl RetryEvent {
    fn __repr__(&self) -> String {
        format!(
            "RetryEvent(attempt={}, retry={:?}, category={:?}, delay={:?}, reason={:?})",
            self.attempt, self.retry, self.category, self.delay, self.reason
        )
    }
}

/// The bound `set` and `reset` methods of `retrycore._context.CURRENT` (looked up once).
struct CurrentVar {
    set: Py<PyAny>,
    reset: Py<PyAny>,
}

static CURRENT: GILOnceCell<CurrentVar> = GILOnceCell::new();
static TIME_SLEEP: GILOnceCell<Py<PyAny>> = GILOnceCell::new();

fn current_var(py: Python<'_>) -> PyResult<&CurrentVar> {
    CURRENT.get_or_try_init(py, || {
        let var = py.import("retrycore._context")?.getattr("CURRENT")?;
        Ok::<_, PyErr>(CurrentVar { set: var.getattr("set")?.unbind(), reset: var.getattr("reset")?.unbind() })
    })
}

fn time_sleep(py: Python<'_>) -> PyResult<&Bound<'_, PyAny>> {
    TIME_SLEEP.get_or_try_init(py, || Ok::<_, PyErr>(py.import("time")?.getattr("sleep")?.unbind())).map(|v| v.bind(py))
}

/// The retry loop of one decorator (or `policy.call`): its policy, sleep,
/// clock, hooks and declarations.
#[pyclass(frozen, module = "retrycore._native")]
pub struct Runner {
    policy: Py<Policy>,
    sleep: Option<Py<PyAny>>,
    clock: Option<Py<PyAny>>,
    on_retry: Option<Py<PyAny>>,
    on_give_up: Option<Py<PyAny>>,
    on_state_change: Option<Py<PyAny>>,
    key_fn: Option<Py<PyAny>>,
    idempotent: Option<bool>,
    key_sent: Option<bool>,
    method: Option<String>,
}

fn hook(py: Python<'_>, h: Option<Py<PyAny>>) -> PyResult<Option<Py<PyAny>>> {
    match h {
        Some(h) if h.is_none(py) => Ok(None),
        Some(h) if !h.bind(py).is_callable() => Err(err(py, ErrorCode::InvalidType, "hook", "must be callable")),
        other => Ok(other),
    }
}

impl Runner {
    fn now(&self, py: Python<'_>) -> PyResult<u64> {
        match &self.clock {
            None => Ok(conv::mono_ns()),
            Some(c) => conv::secs(c.bind(py).call0()?.as_any(), "clock()"),
        }
    }

    fn new_session(
        &self,
        py: Python<'_>,
        args: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Py<Session>> {
        let key = match &self.key_fn {
            None => None,
            Some(f) => Some(to_str(&f.bind(py).call(args, kwargs)?, "key")?),
        };
        let opts = SessionOptions {
            key,
            key_entropy: crate::entropy::bytes::<16>(),
            seed: None,
            idempotent: self.idempotent,
            idempotency_key_sent: self.key_sent,
            method: self.method.clone(),
            ..Default::default()
        };
        Py::new(py, Session::new(py, &self.policy.get().inner, opts)?)
    }

    fn transitions(&self, py: Python<'_>, ts: Vec<Transition>) -> PyResult<()> {
        if ts.is_empty() {
            return Ok(());
        }
        let b = self.policy.get().breaker.as_ref().and_then(|b| b.get().on_state_change.as_ref());
        fire(py, &[self.on_state_change.as_ref(), b], &ts)
    }

    #[allow(clippy::too_many_arguments)]
    fn event(
        &self,
        py: Python<'_>,
        s: &Session,
        attempt: u32,
        retry: Option<u32>,
        category: Option<&'static str>,
        delay: Option<f64>,
        reason: Option<&'static str>,
        budget: Option<String>,
        exc: Option<&Bound<'_, PyAny>>,
    ) -> RetryEvent {
        RetryEvent {
            attempt,
            retry,
            max_attempts: s.max_attempts,
            category,
            delay,
            reason,
            budget,
            exception: exc.map(|e| e.clone().unbind()),
            key: s.key_str(py),
        }
    }

    /// Gates an attempt: Ok(timeout ns) to proceed, or the error to raise.
    fn gate(&self, py: Python<'_>, s: &Session) -> PyResult<Option<u64>> {
        let now = self.now(py)?;
        let (g, ts, attempts, last) = {
            let mut st = s.state();
            let g = st.s.before_attempt_ns(now).py(py)?;
            let ts = st.s.take_transitions();
            if let Gate::Proceed { timeout, .. } = &g {
                st.timeout = timeout.map(retrycore::duration::from_std);
            }
            let last = if matches!(g, Gate::Reject { .. }) { st.last_exc.take() } else { None };
            (g, ts, st.s.attempts(), last)
        };
        self.transitions(py, ts)?;
        match g {
            Gate::Proceed { timeout, .. } => Ok(timeout.map(retrycore::duration::from_std)),
            Gate::Reject { reason, retry_after, budget } => {
                let errors = conv::errors_module(py)?;
                let ra = retry_after.map(dur_secs);
                if attempts == 0 {
                    // The first attempt was refused: the local rejection error.
                    let name = self.policy.get().inner.config().breaker.as_ref().and_then(|b| b.name.clone());
                    let state = self.policy.get().breaker.as_ref().map(|b| lock(&b.get().shared).state().code());
                    let exc = errors.getattr("_rejected")?.call1((reason.code(), ra, state, name, budget))?;
                    return Err(PyErr::from_value(exc));
                }
                // A later attempt was refused: the session gave up.
                let give_up = s.state().s.give_up_reason().map_or(reason.code(), |r| r.code());
                if let Some(h) = &self.on_give_up {
                    let ev = self.event(
                        py,
                        s,
                        attempts,
                        None,
                        None,
                        None,
                        Some(give_up),
                        budget.clone(),
                        last.as_ref().map(|e| e.bind(py)),
                    );
                    h.call1(py, (ev,))?;
                }
                let exc = errors.getattr("_give_up")?.call1((
                    give_up,
                    attempts,
                    py.None(),
                    budget,
                    py.None(),
                    ra,
                    last,
                    s.key_str(py),
                ))?;
                Err(PyErr::from_value(exc))
            }
        }
    }

    /// Answers a failed attempt: Ok(delay ns) to retry, or the error to raise.
    fn failed(&self, py: Python<'_>, s: &Session, exc: &Bound<'_, PyAny>) -> PyResult<u64> {
        let f = OwnedFailure::from_exception(exc)?;
        let now = self.now(py)?;
        let (d, ts) = {
            let mut st = s.state();
            let d = f.with(|x| st.s.on_failure_ns(now, x));
            st.last_exc = Some(exc.clone().unbind());
            (d, st.s.take_transitions())
        };
        let d = d.py(py)?;
        self.transitions(py, ts)?;
        match d {
            Decision::Retry { retry, delay, category, .. } => {
                let delay = retrycore::duration::from_std(delay);
                if let Some(h) = &self.on_retry {
                    let ev = self.event(
                        py,
                        s,
                        retry,
                        Some(retry),
                        Some(category.code()),
                        Some(to_secs(delay)),
                        None,
                        None,
                        Some(exc),
                    );
                    h.call1(py, (ev,))?;
                }
                Ok(delay)
            }
            Decision::GiveUp { reason, category, exhausted, refusal, attempts } => {
                if let Some(h) = &self.on_give_up {
                    let budget = refusal.as_ref().map(|r| r.budget.clone());
                    let ev = self.event(
                        py,
                        s,
                        attempts,
                        None,
                        Some(category.code()),
                        None,
                        Some(reason.code()),
                        budget,
                        Some(exc),
                    );
                    h.call1(py, (ev,))?;
                }
                if !exhausted {
                    // Not retryable, declined or cancelled: the error itself.
                    return Err(PyErr::from_value(exc.clone()));
                }
                let e = conv::errors_module(py)?.getattr("_give_up")?.call1((
                    reason.code(),
                    attempts,
                    category.code(),
                    refusal.as_ref().map(|r| r.budget.clone()),
                    refusal.as_ref().map(|r| r.reason),
                    py.None(),
                    exc,
                    s.key_str(py),
                ))?;
                Err(PyErr::from_value(e))
            }
        }
    }

    fn succeeded(&self, py: Python<'_>, s: &Session) -> PyResult<()> {
        let now = self.now(py)?;
        let ts = {
            let mut st = s.state();
            st.s.on_success_ns(now, None).py(py)?;
            st.last_exc = None;
            st.s.take_transitions()
        };
        self.transitions(py, ts)
    }

    fn cancelled(&self, py: Python<'_>, s: &Session) -> PyResult<()> {
        let now = self.now(py)?;
        let ts = {
            let mut st = s.state();
            st.s.cancel_ns(now);
            st.last_exc = None;
            st.s.take_transitions()
        };
        self.transitions(py, ts)
    }

    fn run(
        &self,
        py: Python<'_>,
        s: &Session,
        func: &Bound<'_, PyAny>,
        args: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Py<PyAny>> {
        loop {
            self.gate(py, s)?;
            match func.call(args, kwargs) {
                Ok(v) => {
                    self.succeeded(py, s)?;
                    return Ok(v.unbind());
                }
                Err(e) => {
                    let exc = e.value(py).clone().into_any();
                    if !exc.is_instance_of::<PyException>() {
                        // KeyboardInterrupt, SystemExit, GeneratorExit: cancel, re-raise.
                        self.cancelled(py, s)?;
                        return Err(e);
                    }
                    let delay = self.failed(py, s, &exc)?;
                    if delay > 0 {
                        let sleep = match &self.sleep {
                            Some(f) => f.bind(py).clone(),
                            None => time_sleep(py)?.clone(),
                        };
                        if let Err(e) = sleep.call1((to_secs(delay),)) {
                            self.cancelled(py, s)?;
                            return Err(e);
                        }
                    }
                }
            }
        }
    }
}

#[pymethods]
impl Runner {
    #[new]
    #[pyo3(signature = (policy, *, sleep=None, clock=None, on_retry=None, on_give_up=None, on_state_change=None,
        key=None, idempotent=None, idempotency_key_sent=None, method=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        policy: &Bound<'_, PyAny>,
        sleep: Option<Py<PyAny>>,
        clock: Option<Py<PyAny>>,
        on_retry: Option<Py<PyAny>>,
        on_give_up: Option<Py<PyAny>>,
        on_state_change: Option<Py<PyAny>>,
        key: Option<Py<PyAny>>,
        idempotent: Option<&Bound<'_, PyAny>>,
        idempotency_key_sent: Option<&Bound<'_, PyAny>>,
        method: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Runner> {
        Ok(Runner {
            policy: native_policy(policy)?.unbind(),
            sleep: hook(py, sleep)?,
            clock: hook(py, clock)?,
            on_retry: hook(py, on_retry)?,
            on_give_up: hook(py, on_give_up)?,
            on_state_change: hook(py, on_state_change)?,
            key_fn: hook(py, key)?,
            idempotent: opt_bool(idempotent, "idempotent")?,
            key_sent: opt_bool(idempotency_key_sent, "idempotency_key_sent")?,
            method: opt_str(method, "method")?,
        })
    }

    /// Calls `func(*args, **kwargs)` with retries (synchronous; sleeps with `sleep`, default `time.sleep`).
    #[pyo3(signature = (func, args, kwargs=None))]
    fn call(
        &self,
        py: Python<'_>,
        func: &Bound<'_, PyAny>,
        args: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Py<PyAny>> {
        let s = self.new_session(py, args, kwargs)?;
        let var = current_var(py)?;
        let token = var.set.call1(py, (s.clone_ref(py),))?;
        let r = self.run(py, s.get(), func, args, kwargs);
        var.reset.call1(py, (token,))?;
        r
    }

    /// Starts a session for one call (the async loop's first step).
    #[pyo3(signature = (args, kwargs=None))]
    fn start(
        &self,
        py: Python<'_>,
        args: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Py<Session>> {
        self.new_session(py, args, kwargs)
    }

    /// Gates an attempt: the timeout in seconds (or None), or raises the local rejection / `RetryError`.
    fn before(&self, py: Python<'_>, session: &Bound<'_, Session>) -> PyResult<Option<f64>> {
        Ok(self.gate(py, session.get())?.map(to_secs))
    }

    /// Answers a failed attempt: the delay in seconds, or raises (`RetryError`, or the error itself).
    fn failed_attempt(&self, py: Python<'_>, session: &Bound<'_, Session>, exc: &Bound<'_, PyAny>) -> PyResult<f64> {
        Ok(to_secs(self.failed(py, session.get(), exc)?))
    }

    /// Records the successful attempt.
    fn succeeded_attempt(&self, py: Python<'_>, session: &Bound<'_, Session>) -> PyResult<()> {
        self.succeeded(py, session.get())
    }

    /// Cancels the session (no-op once done).
    fn cancel(&self, py: Python<'_>, session: &Bound<'_, Session>) -> PyResult<()> {
        self.cancelled(py, session.get())
    }

    #[getter]
    fn sleep(&self, py: Python<'_>) -> Option<Py<PyAny>> {
        self.sleep.as_ref().map(|s| s.clone_ref(py))
    }
}

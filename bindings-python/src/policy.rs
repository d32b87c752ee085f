//! Retry policies, sessions and the retry loop.
//!
//! The loop only owns what the core leaves to the host — the clock, the
//! sleep, calling the function, seeing its exception, hooks — and asks the
//! session for every decision.

use crate::breaker::{fire, hook_done, Breaker, PyBudget, PyTransition};
use crate::conv::{
    self, err, now_or_clock, opt_bool, opt_count, opt_str, to_json, to_secs, to_str, CoreResult, Mode, Obj,
};
use crate::failure::{Fields, OwnedFailure};
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::sync::GILOnceCell;
use pyo3::types::{PyBytes, PyDict, PyString, PyTuple};
use retrycore::breaker::Transition;
use retrycore::policy::{FirstAttempt, PolicyConfig, RetryPolicy};
use retrycore::session::{Decision, Gate, RetrySession, SessionOptions};
use retrycore::surface::{self, Ended, Observed};
use retrycore::ErrorCode;
use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

pub fn native_policy<'py>(o: &Obj<'py>) -> PyResult<Bound<'py, Policy>> {
    o.downcast::<Policy>().cloned().map_err(|_| conv::wrong_type(o, "policy", "a RetryPolicy"))
}

fn floats(o: &Obj, field: &str) -> PyResult<Vec<f64>> {
    conv::list_arg(o, field, "a list of floats")?.iter().map(|x| conv::to_f64(x, field)).collect()
}

/// The positional and keyword arguments of a call: a tuple and a dict (or None).
type CallArgs<'a, 'py> = (&'a Bound<'py, PyTuple>, Option<&'a Bound<'py, PyDict>>);

/// [`args_of`] for a call of `func`, which must be callable.
pub fn call_args<'a, 'py>(
    func: &Obj<'py>,
    args: &'a Obj<'py>,
    kwargs: Option<&'a Obj<'py>>,
) -> PyResult<CallArgs<'a, 'py>> {
    if !func.is_callable() {
        return Err(conv::wrong_type(func, "func", "callable"));
    }
    args_of(args, kwargs)
}

fn args_of<'a, 'py>(args: &'a Obj<'py>, kwargs: Option<&'a Obj<'py>>) -> PyResult<CallArgs<'a, 'py>> {
    if let Some(d) = kwargs.and_then(|k| k.downcast::<PyDict>().ok()) {
        if !d.is_empty() && d.keys().iter().any(|k| !k.is_instance_of::<PyString>()) {
            return Err(err(d.py(), ErrorCode::InvalidType, "kwargs", "keyword names must be str"));
        }
    }
    Ok((
        conv::class_arg::<PyTuple>(args, "args", "a tuple")?,
        conv::opt_class_arg::<PyDict>(kwargs, "kwargs", "a dict")?,
    ))
}

impl Policy {
    fn build(py: Python<'_>, config: PolicyConfig, entropy: Option<u64>) -> PyResult<Policy> {
        let inner = RetryPolicy::new(config, entropy).py(py)?;
        let breaker = inner.breaker().map(|b| Py::new(py, Breaker::wrap(py, b.clone()))).transpose()?;
        let budgets =
            inner.budgets().iter().map(|b| Py::new(py, PyBudget::wrap(py, b.clone()))).collect::<PyResult<_>>()?;
        Ok(Policy::of(py, inner, breaker, budgets))
    }

    fn of(py: Python<'_>, inner: RetryPolicy, breaker: Option<Py<Breaker>>, budgets: Vec<Py<PyBudget>>) -> Policy {
        // It may lock the shared breaker: without the GIL, like every breaker lock.
        let needs_message = py.allow_threads(|| inner.needs_message());
        Policy { inner, breaker, budgets, needs_message }
    }
}

// ---------------------------------------------------------------- decisions

pyo3::create_exception!(
    retrycore._native,
    Fallback,
    pyo3::exceptions::PyBaseException,
    "Carries a give-up fallback's value out of the retry loop (args[0]); never seen by callers."
);

fn dur_secs(d: std::time::Duration) -> f64 {
    to_secs(retrycore::duration::from_std(d))
}

// ---------------------------------------------------------------- sessions

pub struct State {
    s: RetrySession,
    timeout: Option<u64>,
    /// The wait the policy's limiter reserved before the attempt the last
    /// gate let through (ns), until the runner sleeps it.
    wait: Option<u64>,
    last_exc: Option<Py<PyAny>>,
}

/// A first attempt begun without a session (`RetryPolicy::begin_first`), and what its session is made of.
pub type Pending = (RetryPolicy, FirstAttempt, SessionOptions);

impl Session {
    fn new(py: Python<'_>, policy: &Policy, opts: SessionOptions) -> PyResult<Session> {
        let s = policy.inner.session(opts).py(py)?;
        let st = OnceLock::from(Mutex::new(State { s, timeout: None, wait: None, last_exc: None }));
        Ok(Session::of(policy, st, None))
    }

    fn of(policy: &Policy, st: OnceLock<Mutex<State>>, pending: Option<Pending>) -> Session {
        let (max_attempts, needs_message) = (policy.inner.config().max_attempts, policy.needs_message);
        Session { st, pending, key: GILOnceCell::new(), max_attempts, needs_message }
    }

    /// The state; for a call begun without a session, made now: the first
    /// attempt in flight, counted once (`RetryPolicy::resume`).
    fn state(&self, py: Python<'_>) -> PyResult<&Mutex<State>> {
        if let Some(st) = self.st.get() {
            return Ok(st);
        }
        let (policy, first, opts) = self.pending.as_ref().ok_or_else(|| PyException::new_err("no session"))?;
        let opts = SessionOptions { key_entropy: crate::entropy::bytes::<16>(), ..opts.clone() };
        let (s, g) = policy.resume(*first, opts).py(py)?;
        let timeout =
            if let Gate::Proceed { timeout, .. } = g { timeout.map(retrycore::duration::from_std) } else { None };
        Ok(self.st.get_or_init(|| Mutex::new(State { s, timeout, wait: None, last_exc: None })))
    }

    /// Runs `f` on the session's state (see [`crate::locks::with`]): plain
    /// Rust only; what it returns becomes Python objects after the lock is released.
    fn with<R: Send>(&self, py: Python<'_>, f: impl FnOnce(&mut State) -> R + Send) -> PyResult<R> {
        Ok(crate::locks::with(py, self.state(py)?, f))
    }

    /// The key as a Python string.
    fn key_str(&self, py: Python<'_>) -> PyResult<Py<PyString>> {
        let make = || self.with(py, |st| st.s.key().to_owned()).map(|k| PyString::new(py, &k).unbind());
        Ok(self.key.get_or_try_init(py, make)?.clone_ref(py))
    }
}

// ---------------------------------------------------------------- the loop

fn session_of<'a, 'py>(o: &'a Obj<'py>) -> PyResult<&'a Bound<'py, Session>> {
    conv::class_arg::<Session>(o, "session", "a RetrySession")
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

// The sync decorated calls running on this thread, innermost last, each
// with its number (from `NEXT_CALL`, increasing across threads). Setting the
// ContextVar costs a tuple, a token and a context copy per call; this costs a
// push. A greenlet shares its thread with others, so while the `greenlet`
// module is loaded the ContextVar is set instead (docs/python.md, "Retrying").
thread_local! {
    static RUNNING: RefCell<Vec<(u64, Py<Session>)>> = const { RefCell::new(Vec::new()) };
}
static NEXT_CALL: AtomicU64 = AtomicU64::new(1);
static SYS_MODULES: GILOnceCell<Py<PyDict>> = GILOnceCell::new();

/// The innermost sync call running on this thread: its number and session.
fn innermost(py: Python<'_>) -> Option<(u64, Py<Session>)> {
    RUNNING.with(|r| r.borrow().last().map(|(n, s)| (*n, s.clone_ref(py))))
}

/// Whether greenlets may be switching on this thread (`greenlet` is in `sys.modules`).
fn greenlets(py: Python<'_>) -> PyResult<bool> {
    let modules = SYS_MODULES.get_or_try_init(py, || {
        Ok::<_, PyErr>(py.import("sys")?.getattr("modules")?.downcast_into::<PyDict>()?.unbind())
    })?;
    modules.bind(py).contains(pyo3::intern!(py, "greenlet"))
}

/// Pops the entry a sync call pushed, however the call ends.
struct Running;

impl Drop for Running {
    fn drop(&mut self) {
        // Dropped with the GIL held (the call's scope): the session's reference goes at once.
        drop(RUNNING.with(|r| r.borrow_mut().pop()));
    }
}

/// Runs `f` as the sync call of session `s`: meanwhile `current_attempt()`
/// answers `s` on this thread (see [`current`]).
fn running<R>(py: Python<'_>, s: &Py<Session>, f: impl FnOnce() -> PyResult<R>) -> PyResult<R> {
    if !greenlets(py)? {
        let n = NEXT_CALL.fetch_add(1, Ordering::Relaxed);
        RUNNING.with(|r| r.borrow_mut().push((n, s.clone_ref(py))));
        let _pop = Running;
        return f();
    }
    let var = current_var(py)?;
    let token = var.set.call1(py, ((s.clone_ref(py), mark(py)),))?;
    let r = f();
    var.reset.call1(py, (token,))?;
    r
}

#[doc = stub_doc!("mark")]
#[pyfunction]
pub fn mark(py: Python<'_>) -> u64 {
    innermost(py).map_or(0, |(n, _)| n)
}

#[doc = stub_doc!("current")]
#[pyfunction]
pub fn current(py: Python<'_>, var: &Obj) -> PyResult<Option<Py<PyAny>>> {
    let top = innermost(py);
    if var.is_none() {
        return Ok(top.map(|(_, s)| s.into_any()));
    }
    let want = "a (RetrySession, int) pair";
    let pair = conv::class_arg::<PyTuple>(var, "var", want)?;
    if pair.len() != 2 {
        return Err(conv::wrong_type(var, "var", want));
    }
    let session = conv::class_arg::<Session>(&pair.get_item(0)?, "var", want)?.clone().into_any().unbind();
    let mark = pair.get_item(1)?.extract::<u64>().map_err(|_| conv::wrong_type(var, "var", want))?;
    // A sync call begun after the ContextVar was set runs inside that call.
    Ok(Some(match top {
        Some((n, s)) if n > mark => s.into_any(),
        _ => session,
    }))
}

fn time_sleep(py: Python<'_>) -> PyResult<&Obj<'_>> {
    TIME_SLEEP.get_or_try_init(py, || Ok::<_, PyErr>(py.import("time")?.getattr("sleep")?.unbind())).map(|v| v.bind(py))
}

/// Reads a callable argument (None: not given).
pub fn hook(py: Python<'_>, h: Option<Py<PyAny>>, field: &str) -> PyResult<Option<Py<PyAny>>> {
    match h {
        Some(h) if h.is_none(py) => Ok(None),
        Some(h) if !h.bind(py).is_callable() => Err(err(py, ErrorCode::InvalidType, field, "must be callable")),
        other => Ok(other),
    }
}

/// The durations a hook's event carries, in seconds: since the call's
/// first attempt began, and of the attempt that just ended (`None` when the
/// end came at a gate, before an attempt).
#[derive(Clone, Copy)]
struct Timing {
    elapsed: Option<f64>,
    attempt_duration: Option<f64>,
}

impl Timing {
    /// At `now`, right after an attempt of `s` ended.
    fn of(s: &RetrySession, now: u64) -> Timing {
        Timing {
            elapsed: Some(to_secs(now.saturating_sub(s.started_ns()))),
            attempt_duration: Some(to_secs(now.saturating_sub(s.attempt_started_ns()))),
        }
    }
}

/// The longest single call of the default sleep, in nanoseconds (a day):
/// a longer delay is slept in parts, since `time.sleep` refuses values past
/// its platform's range with `OverflowError` (docs/python.md, "Sleeping").
const SLEEP_CHUNK_NS: u64 = 86_400 * 1_000_000_000;

impl Runner {
    /// Runs a sync call: its session, then its attempts.
    fn call_sync(&self, py: Python<'_>, func: &Obj, call: CallArgs) -> PyResult<Py<PyAny>> {
        let s = self.new_session(py, call, true)?;
        running(py, &s, || self.run(py, s.get(), func, call))
    }

    fn now(&self, py: Python<'_>) -> PyResult<u64> {
        match &self.clock {
            None => Ok(conv::mono_ns()),
            Some(c) => conv::instant(c.bind(py).call0()?.as_any(), "clock()"),
        }
    }

    /// A session for a call; `begin`: its first attempt begins now (see [`Runner::run`]).
    fn new_session(&self, py: Python<'_>, (args, kwargs): CallArgs, begin: bool) -> PyResult<Py<Session>> {
        let policy = self.policy.get();
        let opts = |key, key_entropy| SessionOptions {
            key,
            key_entropy,
            idempotent: self.idempotent,
            idempotency_key_sent: self.key_sent,
            method: self.method.clone(),
            ..Default::default()
        };
        // A call whose first attempt nothing gates (default clock, minted key): a session only when needed.
        // `on_success` carries the session's key and timings: it needs the session.
        let plain = begin
            && self.clock.is_none()
            && self.key_fn.is_none()
            && self.on_success.is_none()
            && self.on_refused.is_none()
            && self.plain();
        if let Some(first) = plain.then(|| policy.inner.begin_first(conv::mono_ns())).flatten() {
            let pending = (policy.inner.clone(), first, opts(None, None));
            return Py::new(py, Session::of(policy, OnceLock::new(), Some(pending)));
        }
        let key = match &self.key_fn {
            None => None,
            Some(f) => Some(to_str(&f.bind(py).call(args, kwargs)?, "key")?),
        };
        Py::new(py, Session::new(py, policy, opts(key, crate::entropy::bytes::<16>()))?)
    }

    /// No predicate, `before`/`after` hook or fallback: nothing to call around a first try.
    fn plain(&self) -> bool {
        self.if_result.is_none()
            && self.if_exception.is_none()
            && self.before_hook.is_none()
            && self.after_hook.is_none()
            && self.fallback.is_none()
    }

    fn transitions(&self, py: Python<'_>, ts: Vec<Transition>) -> PyResult<()> {
        if ts.is_empty() {
            return Ok(());
        }
        let b = self.policy.get().breaker.as_ref().and_then(|b| b.get().on_state_change.as_ref());
        fire(py, &[self.on_state_change.as_ref(), b], &ts)
    }

    /// The event of `attempt` of session `s` (every optional field None).
    fn event(&self, py: Python<'_>, s: &Session, attempt: u32, exc: Option<&Obj>) -> PyResult<RetryEvent> {
        Ok(RetryEvent {
            attempt,
            retry: None,
            max_attempts: s.max_attempts,
            category: None,
            delay: None,
            reason: None,
            budget: None,
            exception: exc.map(|e| e.clone().unbind()),
            key: s.key_str(py)?,
            elapsed: None,
            attempt_duration: None,
        })
    }

    /// Gates an attempt: Ok(timeout ns) to proceed, or the error to raise.
    fn gate(&self, py: Python<'_>, s: &Session) -> PyResult<Option<u64>> {
        let now = self.now(py)?;
        let (step, ts, last, started, attempt) = s.with(py, |st| {
            let g = st.s.before_attempt_ns(now);
            let mut attempt = 0;
            if let Ok(Gate::Proceed { timeout, wait, attempt: a, .. }) = &g {
                st.timeout = timeout.map(retrycore::duration::from_std);
                st.wait = wait.map(retrycore::duration::from_std);
                attempt = *a;
            }
            // Ok(timeout) to proceed, Err(the end of the call) when refused.
            let step = g.map(|g| surface::after_gate(&st.s, &g).map(Box::new).map_or(Ok(st.timeout), Err));
            let last = if matches!(step, Ok(Err(_))) { st.last_exc.take() } else { None };
            (step, st.s.take_transitions(), last, st.s.started_ns(), attempt)
        })?;
        self.transitions(py, ts)?;
        let ended = match step.py(py)? {
            Ok(timeout) => {
                if let Some(h) = &self.before_hook {
                    let ev = self.event(py, s, attempt, None)?;
                    hook_done(py, "before", h.call1(py, (ev,)))?;
                }
                return Ok(timeout);
            }
            Err(ended) => ended,
        };
        let last = last.as_ref().map(|e| e.bind(py));
        // An ending that is not an error of ours gives the last error back.
        // Refused at the gate: no attempt ended here (`attempt_duration` None).
        let timing = Timing { elapsed: Some(to_secs(now.saturating_sub(started))), attempt_duration: None };
        Err(match (self.end(py, s, &ended, last, last, timing)?, last) {
            (Some(e), _) => e,
            (None, Some(l)) => PyErr::from_value(l.clone()),
            (None, None) => PyException::new_err(ended.reason),
        })
    }

    /// Shows the end of a call that gave up, as the core composed it: fires
    /// `on_give_up` when it fires, then returns the error to raise (None:
    /// the last error or response goes back as is).
    fn end(
        &self,
        py: Python<'_>,
        s: &Session,
        ended: &Ended,
        exc: Option<&Obj>,
        last: Option<&Obj>,
        timing: Timing,
    ) -> PyResult<Option<PyErr>> {
        if let (Some(h), Some(g)) = (&self.on_give_up, ended.on_give_up()) {
            let ev = RetryEvent {
                category: g.category,
                reason: Some(g.reason),
                budget: g.budget.map(str::to_owned),
                max_attempts: g.max_attempts,
                elapsed: timing.elapsed,
                attempt_duration: timing.attempt_duration,
                ..self.event(py, s, g.attempt, exc)?
            };
            hook_done(py, "on_give_up", h.call1(py, (ev,)))?;
        }
        // A first attempt refused before anything ran: no on_give_up (nothing was
        // tried), but the exporters count the refusal.
        if let (Some(h), 0, false) = (&self.on_refused, ended.attempts, ended.fires_on_give_up) {
            let ev = RetryEvent {
                reason: Some(ended.reason),
                budget: ended.budget.clone(),
                max_attempts: ended.max_attempts,
                elapsed: timing.elapsed,
                ..self.event(py, s, 0, exc)?
            };
            hook_done(py, "on_refused", h.call1(py, (ev,)))?;
        }
        let e = crate::breaker::ending_error(py, ended, last, || s.key_str(py).ok())?;
        // A give-up fallback answers every ending that raises (`Ending::falls_back`).
        let response = last.is_some_and(|l| !l.is_instance_of::<pyo3::exceptions::PyBaseException>());
        let Some(fb) = self.fallback.as_ref().filter(|_| ended.ending.falls_back(response)) else { return Ok(e) };
        let raised = match &e {
            Some(e) => e.value(py).clone().into_any(),
            None => match last {
                Some(l) => l.clone(),
                None => return Ok(e),
            },
        };
        let ev = RetryEvent {
            category: ended.category,
            reason: Some(ended.reason),
            budget: ended.budget.clone(),
            max_attempts: ended.max_attempts,
            ..self.event(py, s, ended.attempts, Some(&raised))?
        };
        let value = fb.call1(py, (ev,))?;
        Ok(Some(PyErr::new::<Fallback, _>((value,))))
    }

    /// The `after` hook of a failed attempt (before `on_retry` / `on_give_up`).
    fn after_hook(&self, py: Python<'_>, ev: impl FnOnce() -> PyResult<RetryEvent>) -> PyResult<()> {
        match &self.after_hook {
            Some(h) => hook_done(py, "after", h.call1(py, (ev()?,))),
            None => Ok(()),
        }
    }

    /// Answers an attempt's outcome, the exception it raised (`failed`) or
    /// the value it returned: Ok(None) to return the value (a success, or a
    /// non-ok response that nothing retries), Ok(Some(delay ns)) to retry (a
    /// non-ok response is retried like a failure, docs/sessions.md), or the
    /// error to raise (`RetryError`, or the exception itself when nothing retries it).
    fn after(&self, py: Python<'_>, s: &Session, outcome: &Obj, failed: bool) -> PyResult<Option<u64>> {
        if failed {
            let mut f = OwnedFailure::from_exception(outcome, s.needs_message)?;
            if let Some(p) = &self.if_exception {
                // The caller's predicate: its verdict goes to the core like a rule's.
                f.host = crate::failure::host_verdict(&p.bind(py).call1((outcome,))?, "retry_if_exception")?;
            }
            return match self.answer(py, s, f, outcome, false)? {
                None => Err(PyErr::from_value(outcome.clone())),
                delay => Ok(delay),
            };
        }
        let mut seen = crate::see::response_failure(outcome);
        if let Some(p) = &self.if_result {
            // A truthy answer makes the value a failure with that verdict; a falsy one leaves it as it is.
            let v = p.bind(py).call1((outcome,))?;
            if v.is_truthy()? {
                let mut f = seen.take().or_else(|| crate::see::response(outcome)).unwrap_or_default();
                f.host = crate::failure::host_verdict(&v, "retry_if_result")?;
                seen = Some(f);
            }
        }
        match seen {
            None => self.succeeded(py, s).map(|()| None),
            Some(f) => self.answer(py, s, f, outcome, true),
        }
    }

    /// Decides a failure (an exception, or a non-ok `response`): Some(delay ns)
    /// to retry, None when it goes back to the caller as is, or the error to raise.
    fn answer(
        &self,
        py: Python<'_>,
        s: &Session,
        mut f: OwnedFailure,
        last: &Obj,
        response: bool,
    ) -> PyResult<Option<u64>> {
        if let (Some(w), false) = (&self.wall_clock, f.headers.is_empty()) {
            f.wall_now_ms = Some(conv::wall_arg(w.bind(py).call0()?.as_any(), "wall_clock()")?);
        }
        let exc = (!response).then_some(last);
        let now = self.now(py)?;
        let last_ref = last.clone().unbind();
        let (observed, ts, old, timing) = s.with(py, |st| {
            let timing = Timing::of(&st.s, now);
            let d = f.with_session(st.s.method().is_some(), |x| st.s.on_failure_ns(now, x));
            let observed = d.map(|d| surface::after_decision(&st.s, &d));
            let old = st.last_exc.replace(last_ref);
            (observed, st.s.take_transitions(), old, timing)
        })?;
        // Dropped with the lock released: freeing an exception can run finalizers.
        drop(old);
        self.transitions(py, ts)?;
        match observed.py(py)? {
            Observed::Retry(r) => {
                let ev = || {
                    Ok(RetryEvent {
                        retry: Some(r.retry),
                        category: Some(r.category),
                        delay: Some(to_secs(r.delay)),
                        max_attempts: r.max_attempts,
                        elapsed: timing.elapsed,
                        attempt_duration: timing.attempt_duration,
                        ..self.event(py, s, r.attempt, exc)?
                    })
                };
                self.after_hook(py, ev)?;
                if let Some(h) = &self.on_retry {
                    hook_done(py, "on_retry", h.call1(py, (ev()?,)))?;
                }
                Ok(Some(r.delay))
            }
            Observed::End(ended) => {
                self.after_hook(py, || {
                    Ok(RetryEvent {
                        category: ended.category,
                        reason: Some(ended.reason),
                        budget: ended.budget.clone(),
                        max_attempts: ended.max_attempts,
                        elapsed: timing.elapsed,
                        attempt_duration: timing.attempt_duration,
                        ..self.event(py, s, ended.attempts, exc)?
                    })
                })?;
                match self.end(py, s, &ended, exc, Some(last), timing)? {
                    Some(e) => Err(e),
                    None => Ok(None),
                }
            }
        }
    }

    fn succeeded(&self, py: Python<'_>, s: &Session) -> PyResult<()> {
        let now = self.now(py)?;
        let (r, old, ts, timing, attempts) = s.with(py, |st| {
            let timing = Timing::of(&st.s, now);
            (st.s.on_success_ns(now, None), st.last_exc.take(), st.s.take_transitions(), timing, st.s.attempts())
        })?;
        drop(old);
        self.transitions(py, ts)?;
        r.py(py)?;
        self.fire_success(py, s, attempts, timing)
    }

    /// Fires `on_success` (when set) for a call that succeeded on attempt `attempt`.
    fn fire_success(&self, py: Python<'_>, s: &Session, attempt: u32, timing: Timing) -> PyResult<()> {
        if let Some(h) = &self.on_success {
            let ev = RetryEvent {
                elapsed: timing.elapsed,
                attempt_duration: timing.attempt_duration,
                ..self.event(py, s, attempt, None)?
            };
            hook_done(py, "on_success", h.call1(py, (ev,)))?;
        }
        Ok(())
    }

    fn cancelled(&self, py: Python<'_>, s: &Session) -> PyResult<()> {
        if s.with(py, |st| st.s.is_done())? {
            return Ok(());
        }
        let now = self.now(py).unwrap_or_else(|_| conv::mono_ns());
        let (old, ts) = s.with(py, |st| {
            st.s.cancel_ns(now);
            (st.last_exc.take(), st.s.take_transitions())
        })?;
        drop(old);
        self.transitions(py, ts)
    }

    /// Sleeps `delay` ns (0: not at all): the caller's `sleep` gets the whole
    /// delay, the default `time.sleep` gets it in parts of at most [`SLEEP_CHUNK_NS`].
    fn wait(&self, py: Python<'_>, delay: u64) -> PyResult<()> {
        if delay == 0 {
            return Ok(());
        }
        if let Some(f) = &self.sleep {
            return f.bind(py).call1((to_secs(delay),)).map(drop);
        }
        let sleep = time_sleep(py)?;
        let mut left = delay;
        while left > 0 {
            let part = left.min(SLEEP_CHUNK_NS);
            sleep.call1((to_secs(part),))?;
            left -= part;
        }
        Ok(())
    }

    /// Runs the attempts; whatever ends the loop with an error leaves the
    /// session done (cancelled if the error came from the host side: a
    /// clock, a sleep, an exception that could not be read).
    fn run(&self, py: Python<'_>, s: &Session, func: &Obj, (args, kwargs): CallArgs) -> PyResult<Py<PyAny>> {
        let attempts = || -> PyResult<Py<PyAny>> {
            // A call begun without a session: its first attempt is under way.
            let mut begun = s.pending.is_some();
            loop {
                if !std::mem::take(&mut begun) {
                    self.gate(py, s)?;
                    // The limiter's reserved wait: slept here, cancellably
                    // (an exception out of the sleep cancels the session,
                    // which gives the permit back).
                    if self.limited {
                        if let Some(w) = s.with(py, |st| st.wait.take())? {
                            self.wait(py, w)?;
                        }
                    }
                }
                let (outcome, failed) = match func.call(args, kwargs) {
                    Ok(v) => (v, false),
                    // KeyboardInterrupt, SystemExit, GeneratorExit: cancel, re-raise.
                    Err(e) if !e.value(py).is_instance_of::<PyException>() => return Err(e),
                    Err(e) => (e.into_value(py).into_bound(py).into_any(), true),
                };
                // Its success, with no session asked for, ends it without one.
                if let (Some((policy, first, _)), false, None) = (&s.pending, failed, s.st.get()) {
                    if crate::see::response_failure(&outcome).is_none() {
                        policy.first_succeeded(*first, conv::mono_ns());
                        return Ok(outcome.unbind());
                    }
                }
                match self.after(py, s, &outcome, failed)? {
                    None => return Ok(outcome.unbind()),
                    Some(delay) => self.wait(py, delay)?,
                }
            }
        };
        match self.or_cancel(py, s, attempts()) {
            // A give-up fallback's value is the call's.
            Err(e) if e.is_instance_of::<Fallback>(py) => e.value(py).getattr("args")?.get_item(0).map(Bound::unbind),
            r => r,
        }
    }

    /// [`Runner::after`] as a step of the async loop: an error leaves the session cancelled.
    fn step(&self, py: Python<'_>, s: &Session, outcome: &Obj, failed: bool) -> PyResult<Option<u64>> {
        self.or_cancel(py, s, self.after(py, s, outcome, failed))
    }

    /// Passes `r` on, cancelling the session first when it is an error.
    fn or_cancel<T>(&self, py: Python<'_>, s: &Session, r: PyResult<T>) -> PyResult<T> {
        if r.is_err() {
            self.cancelled(py, s)?;
        }
        r
    }
}

#[doc = stub_doc!("run")]
#[pyfunction]
#[pyo3(signature = (runner, func, /, *args, **kwargs))]
pub fn run(runner: &Obj, func: &Obj, args: &Obj, kwargs: Option<&Obj>) -> PyResult<Py<PyAny>> {
    conv::class_arg::<Runner>(runner, "runner", "a Runner")?.get().call(runner.py(), func, args, kwargs)
}

// The classes this module declares in `src/surface.rs`, expanded by `build.rs`.
include!(concat!(env!("OUT_DIR"), "/policy.rs"));

//! The Python surface, declared once ([`DECLARATIONS`]): `build.rs` reads
//! this file and expands each `module` section into `$OUT_DIR/<module>.rs`,
//! which that module of the crate includes at its end. The declaration
//! language is described in `build.rs`. This file is not compiled into the
//! extension module; it is the generator's input.

/// The declared items, by the module they belong to.
pub const DECLARATIONS: &str = r#"
module policy

class Policy { priv inner: RetryPolicy, priv breaker: Option<Py<Breaker>>, priv budgets: Vec<Py<PyBudget>>
    /// A failure's message is read (`RetryPolicy::needs_message`), decided once.
    priv needs_message: bool
}
    subclass

class Session = RetrySession {
    /// The state: made with the session, or on first use ([`Session::state`]) after `pending`.
    priv st: OnceLock<Mutex<State>>, priv pending: Option<Pending>
    /// The key as a Python string, made on first read (the core formats a
    /// minted key only then too): a call whose key nobody reads mints nothing.
    priv key: GILOnceCell<Py<PyString>>
    max_attempts: u32
    /// The policy reads a failure's message (`Policy::needs_message`).
    priv needs_message: bool
}

class Runner {
    priv policy: Py<Policy>, priv sleep: Option<Py<PyAny>>, priv clock: Option<Py<PyAny>>
    priv on_retry: Option<Py<PyAny>>, priv on_give_up: Option<Py<PyAny>>, priv on_state_change: Option<Py<PyAny>>
    priv on_success: Option<Py<PyAny>>, priv on_refused: Option<Py<PyAny>>, priv key_fn: Option<Py<PyAny>>, priv wall_clock: Option<Py<PyAny>>, priv idempotent: Option<bool>
    priv key_sent: Option<bool>, priv method: Option<String>
    /// The policy has a limiter: a gate may answer with a wait.
    priv limited: bool
    priv if_result: Option<Py<PyAny>>, priv if_exception: Option<Py<PyAny>>, priv before_hook: Option<Py<PyAny>>
    priv after_hook: Option<Py<PyAny>>, priv fallback: Option<Py<PyAny>>
}

class ScheduleRow from retrycore::backoff::ScheduleRow {
    retry: u32, attempt: u32, low: f64 = secs(low), mid: f64 = secs(mid), high: f64 = secs(high)
    cumulative_low: f64 = secs(cumulative_low), cumulative_high: f64 = secs(cumulative_high)
}
    repr "ScheduleRow(retry={retry}, attempt={attempt}, low={low}, mid={mid}, high={high}, "
    repr "cumulative_high={cumulative_high})"

class Proceed from Gate::Proceed {
    attempt: u32, max_attempts: u32, timeout: Option<f64> = secs?(timeout), wait: Option<f64> = secs?(wait)
}
    repr "Proceed(attempt={attempt}, max_attempts={max_attempts}, timeout={timeout:?}, wait={wait:?})"

class Reject from Gate::Reject {
    reason: &'static str = code(reason), retry_after: Option<f64> = secs?(retry_after), budget: Option<String>
}
    repr "Reject(reason={reason:?}, retry_after={retry_after:?}, budget={budget:?})"

class Retry from Decision::Retry {
    retry: u32, attempt: u32, delay: f64 = secs(delay), backoff: f64 = secs(backoff)
    server_delay: Option<f64> = secs?(server_delay), capped: bool, category: &'static str = code(category)
}
    repr "Retry(retry={retry}, attempt={attempt}, delay={delay}, category={category:?})"

class GiveUp from Decision::GiveUp {
    reason: &'static str = code(reason), category: &'static str = code(category), exhausted: bool, attempts: u32
    budget: Option<String> = refusal.as_ref().map(|r| r.budget.clone())
    budget_reason: Option<&'static str> = refusal.as_ref().map(|r| r.reason)
}
    repr "GiveUp(reason={reason:?}, category={category:?}, attempts={attempts})"

class RetryEvent {
    attempt: u32, retry: Option<u32>, max_attempts: u32, category: Option<&'static str>, delay: Option<f64>
    reason: Option<&'static str>, budget: Option<String>, exception: Option<Py<PyAny>>, key: Py<PyString>
    elapsed: Option<f64>, attempt_duration: Option<f64>
}
    repr "RetryEvent(attempt={attempt}, retry={retry:?}, category={category:?}, delay={delay:?}, reason={reason:?})"

methods Policy
    new new(share: =native_policy) -> Self =
        let (p, needs_message) = (share.get(), share.get().needs_message);
        Policy { inner: p.inner.clone(), breaker: p.breaker(py), budgets: p.budgets(py), needs_message }
    static from_json(text: obj, entropy: obj?) -> try Policy =
        let text = match text.downcast::<PyBytes>() {
            Ok(b) => {
                let b = b.as_bytes();
                retrycore::limits::check_bytes(b.len(), retrycore::limits::MAX_DOCUMENT_BYTES, "text").py(py)?;
                std::str::from_utf8(b)
                    .map_err(|e| err(py, ErrorCode::InvalidJson, "text", format!("is not UTF-8: {e}")))?
                    .to_owned()
            }
            Err(_) => to_str(text, "text")?,
        };
        Policy::build(py, PolicyConfig::from_json(&text).py(py)?, opt_count(entropy, "entropy", u64::MAX)?)
    static from_dict(doc: obj, kwargs: obj?, entropy: obj?) -> try Policy =
        let mode = Mode::of(kwargs)?;
        let v = to_json(doc, mode)?;
        let cfg = match mode {
            Mode::Kwargs => PolicyConfig::from_typed_value(&v, conv::UNIT_NS),
            Mode::Document => PolicyConfig::from_json_value(&v),
        };
        Policy::build(py, cfg.py(py)?, opt_count(entropy, "entropy", u64::MAX)?)
    to_dict() -> try Obj<'py> = conv::from_json(py, &self.inner.config().to_json_value())
    to_json() -> String = self.inner.config().to_json()
    get max_attempts -> u32 = self.inner.config().max_attempts
    get name -> Option<String> = self.inner.config().name.clone()
    get breaker -> Option<Py<Breaker>> = self.breaker.as_ref().map(|b| b.clone_ref(py))
    get budgets -> Vec<Py<PyBudget>> = self.budgets.iter().map(|b| b.clone_ref(py)).collect()
    _with_breaker(breaker: nullable class<Breaker>) -> try Policy =
        let breaker = breaker.map(|b| b.clone().unbind());
        let inner = self.inner.with_breaker(breaker.as_ref().map(|b| b.get().shared.clone()));
        Ok(Policy::of(py, inner, breaker, self.budgets(py)))
    _with_budgets(budgets: obj) -> try Policy =
        let budgets = conv::list_arg(budgets, "budgets", "a list of Budget objects")?
            .iter()
            .enumerate()
            .map(|(i, b)| {
                if let Ok(b) = b.downcast::<PyBudget>() {
                    return Ok(b.clone().unbind());
                }
                if b.is_instance_of::<PyDict>() {
                    // A configuration (keyword-argument form): a budget of its own.
                    let doc = to_json(b, Mode::Kwargs)?;
                    return Py::new(py, PyBudget::from_kwargs(py, &doc)?);
                }
                Err(conv::wrong_type(b, &format!("budgets[{i}]"), "a Budget or a dict"))
            })
            .collect::<PyResult<Vec<_>>>()?;
        let inner = self.inner.with_budgets(budgets.iter().map(|b| b.get().shared.clone()).collect());
        Ok(Policy::of(py, inner, self.breaker(py), budgets))
    schedule() -> Vec<ScheduleRow> =
        self.inner
            .schedule()
            .rows
            .iter()
            .map(ScheduleRow::from)
            .collect()
    worst_case() -> f64 = to_secs(retrycore::duration::from_std(self.inner.schedule().worst_case()))
    delay(retry: u32, r: f64, prev: secs?) -> try f64 =
        self.inner.config().backoff.delay_alone_ns(retry, r, prev).map(to_secs).py(py)
    sample_delays(seed: count, count: obj) -> Vec<f64> =
        let count = conv::to_count(count, "count", retrycore::limits::MAX_ITEMS as u64)? as u32;
        self.inner.config().backoff.sample_sequence_ns(seed, count).into_iter().map(to_secs).collect()
    replay_delays(draws: obj) -> try Vec<f64> =
        let draws = floats(draws, "draws")?;
        Ok(self.inner.config().backoff.replay_ns(&draws).py(py)?.into_iter().map(to_secs).collect())
    session(key: str?, seed: count?, idempotent: bool?, idempotency_key_sent: bool?, method: str?, draws: obj?)
            -> try Session =
        let draws = conv::opt(draws, |d| floats(d, "draws"))?;
        let key_entropy = crate::entropy::bytes::<16>();
        let opts = SessionOptions { key, key_entropy, seed, idempotent, idempotency_key_sent, method, draws };
        Session::new(py, self, opts)
    testing(attempts: u32, max_delay: secs?) -> try Policy =
        let inner = self.inner.testing(attempts, max_delay.unwrap_or(0)).py(py)?;
        Ok(Policy::of(py, inner, self.breaker(py), self.budgets(py)))
    counters() -> try Obj<'py> = conv::from_json(py, &self.inner.counters().snapshot().to_json_value())
    __repr__() -> String = format!("Policy({})", self.inner.config().to_json())

methods Session
    get key -> try Py<PyString> = self.key_str(py)
    get key_minted -> try bool = self.with(py, |st| st.s.key_minted())
    get attempt -> try u32 = self.with(py, |st| st.s.attempts())
    get timeout -> try Option<f64> = Ok(self.with(py, |st| st.timeout)?.map(to_secs))
    get done -> try bool = self.with(py, |st| st.s.is_done())
    get give_up_reason -> try Option<&'static str> = Ok(self.with(py, |st| st.s.give_up_reason())?.map(|r| r.code()))
    get limiter_rejection -> try Option<Obj<'py>> =
        match self.with(py, |st| st.s.limiter_rejection().map(|r| r.to_json(conv::UNIT_NS)))? {
            Some(v) => Ok(Some(conv::from_json(py, &v)?)),
            None => Ok(None),
        }
    before_attempt(now: now?) -> try Py<PyAny> =
        let g = self.with(py, |st| {
            let g = st.s.before_attempt_ns(now);
            if let Ok(Gate::Proceed { timeout, .. }) = &g {
                st.timeout = timeout.map(retrycore::duration::from_std);
            }
            g
        })?;
        gate_obj(py, &g.py(py)?)
    on_failure(failure: obj?, now: obj?, *, fields: ..Fields) -> try Py<PyAny> =
        let f = OwnedFailure::read(failure, &fields, self.needs_message)?;
        let now = now_or_clock(now)?;
        let d = self.with(py, |st| f.with_session(st.s.method().is_some(), |x| st.s.on_failure_ns(now, x)))?;
        decision_obj(py, &d.py(py)?)
    on_success(now: now?, elapsed: secs?) -> try () =
        // The refusal (a session not in flight) becomes an exception after the lock is released.
        self.with(py, |st| st.s.on_success_ns(now, elapsed))?.py(py)
    cancel(now: now?) -> try () = self.with(py, |st| st.s.cancel_ns(now))
    release() -> try () = self.with(py, |st| st.s.release())
    take_transitions() -> try Vec<Py<PyTransition>> =
        let ts = self.with(py, |st| st.s.take_transitions())?;
        ts.iter().map(|t| Py::new(py, PyTransition::from(t))).collect()
    __repr__() -> try String =
        self.with(py, |st| {
            format!("RetrySession(key={:?}, attempt={}, done={})", st.s.key(), st.s.attempts(), st.s.is_done())
        })

methods Runner
    new new(policy: =native_policy, *, sleep: hook?, clock: hook?, on_retry: hook?, on_give_up: hook?,
            on_state_change: hook?, key: hook?, idempotent: obj?, idempotency_key_sent: obj?, method: obj?,
            wall_clock: hook?, on_success: hook?, on_refused: hook?, retry_if_result: hook?, retry_if_exception: hook?, before: hook?,
            after: hook?, fallback: hook?) -> try Runner =
        let (policy, key_fn, idempotent) = (policy.unbind(), key, opt_bool(idempotent, "idempotent")?);
        let (key_sent, method) = (opt_bool(idempotency_key_sent, "idempotency_key_sent")?, opt_str(method, "method")?);
        let limited = policy.get().inner.limiter().is_some();
        let (if_result, if_exception, before_hook, after_hook) = (retry_if_result, retry_if_exception, before, after);
        Ok(Runner {
            policy, sleep, clock, on_retry, on_give_up, on_state_change, on_success, on_refused, key_fn, wall_clock, idempotent,
            key_sent, method, limited, if_result, if_exception, before_hook, after_hook, fallback,
        })
    call(func: obj, args: obj, kwargs: obj?) -> try Py<PyAny> =
        self.call_sync(py, func, call_args(func, args, kwargs)?)
    start(args: obj, kwargs: obj?) -> try Py<Session> = self.new_session(py, args_of(args, kwargs)?, false)
    before(session: =session_of) -> Option<f64> = self.gate(py, session.get())?.map(to_secs)
    failed_attempt(session: =session_of, exc: obj) -> try f64 =
        if !exc.is_instance_of::<pyo3::exceptions::PyBaseException>() {
            return Err(err(py, ErrorCode::InvalidType, "exc", "must be an exception"));
        }
        Ok(self.step(py, session.get(), exc, true)?.map_or(0.0, to_secs))
    returned_attempt(session: =session_of, value: obj) -> try Option<f64> =
        Ok(self.step(py, session.get(), value, false)?.map(to_secs))
    cancel(session: =session_of) -> try () = self.cancelled(py, session.get())
    get limited -> bool = self.limited
    take_wait(session: =session_of) -> try f64 = Ok(session.get().with(py, |st| st.wait.take())?.map_or(0.0, to_secs))

functions
    error(code: str, field: str, why: str, domain: str?) -> try Py<PyAny> =
        let kind = ErrorCode::ALL.iter().find(|c| c.code() == code);
        let kind = *kind.ok_or_else(|| err(py, ErrorCode::InvalidValue, "code", format!("is unknown: {code:?}")))?;
        let e = err(py, kind, &field, why);
        let e = match domain.as_deref() {
            None | Some("config") => e,
            Some("idempotency") => conv::as_idempotency(py, e),
            Some(d) => return Err(err(py, ErrorCode::InvalidValue, "domain", format!("is unknown: {d:?}"))),
        };
        Ok(e.into_value(py).into_any())

module breaker

class PyPermit = Permit { priv p: PermitCell }

class Breaker = CircuitBreaker {
    priv shared: SharedBreaker, priv config: BreakerConfig, priv on_state_change: Option<Py<PyAny>>
    priv last: Mutex<Option<Py<Acquired>>>
}
    subclass

class PyBudget = Budget { priv shared: SharedBudget, priv config: BudgetConfig }
    subclass

class PyTransition = Transition from Transition {
    from_state: &'static str = code(from), to_state: &'static str = code(to), reason: &'static str = code(reason)
    at: f64 = ns(at)
}
    repr "Transition({from_state} -> {to_state}, reason={reason:?}, at={at})"

class Acquired {
    permitted: bool, permit: Option<Py<PyPermit>>, trial: bool, state: &'static str, retry_after: Option<f64>
    transition: Option<Py<PyTransition>>
}

class PyRefusal = Refusal from Refusal { budget: String, reason: &'static str, detail: String = detail.to_string() }
    repr "Refusal(budget={budget:?}, reason={reason:?})"
    truthy

methods PyPermit
    get trial -> bool = self.p.get().is_trial()
    get started -> f64 = to_secs(self.p.get().started())

methods Breaker
    new new(config: obj?, *, kwargs: obj?, on_state_change: hook?, share: class<Breaker>?, overrides: obj?) -> try Self =
        if let Some(b) = share {
            let b = b.get();
            return Ok(Breaker { shared: b.shared.clone(), config: b.config.clone(), on_state_change, last: Mutex::default() });
        }
        let (doc, typed) = config_parts(config, kwargs, overrides)?;
        let cfg = match &typed {
            Some(t) => BreakerConfig::from_typed_over(&doc, t, conv::UNIT_NS),
            None => BreakerConfig::from_json_value(&doc, ""),
        }
        .py(py)?;
        let b = CircuitBreaker::new(cfg.clone()).py(py)?;
        Ok(Breaker { shared: b.shared(), config: cfg, on_state_change, last: Mutex::default() })
    to_dict() -> try Obj<'py> = conv::from_json(py, &self.config.to_json_value())
    get name -> Option<String> = self.config.name.clone()
    get on_state_change -> Option<Py<PyAny>> = self.on_state_change.as_ref().map(|h| h.clone_ref(py))
    get state -> &'static str = self.with(py, |b| b.state().code())
    get rejections -> u64 = self.with(py, |b| b.rejections())
    totals() -> try Bound<'py, PyDict> =
        let t = self.with(py, |b| b.totals());
        [("calls", t.calls), ("failures", t.failures), ("slow", t.slow)].into_py_dict(py)
    try_acquire(now: now?) -> try Py<Acquired> =
        let (a, t, state) = self.with(py, |b| {
            let (a, t) = b.try_acquire(now);
            (a, t, b.state())
        });
        let transition = self.fire(py, t)?;
        let (p, state, retry_after) = match a {
            Acquire::Permitted(p) => (Some(p), state, None),
            Acquire::Rejected { state, retry_after } => (None, state, wait_secs(retry_after)),
        };
        if let (Some(p), None) = (p, &transition) {
            if let Some(a) = self.reuse(py, p, state) {
                return Ok(a);
            }
        }
        let (permitted, trial) = (p.is_some(), p.is_some_and(|p| p.is_trial()));
        let permit = p.map(|p| Py::new(py, PyPermit { p: PermitCell::new(p) })).transpose()?;
        let reusable = permitted && transition.is_none();
        let a = Py::new(py, Acquired { permitted, permit, trial, state: state.code(), retry_after, transition })?;
        if reusable {
            // The one it replaces is dropped after the lock is released.
            let old = crate::locks::lock(&self.last).replace(a.clone_ref(py));
            drop(old);
        }
        Ok(a)
    acquire(now: now?) -> try PyPermit = Ok(PyPermit { p: PermitCell::new(self.permit(py, now)?) })
    record(permit: class<PyPermit>, outcome: ~self.outcome, now: now?, duration: secs?) -> try Option<Py<PyTransition>> =
        let permit = permit.get().p.get();
        let duration = duration.unwrap_or_else(|| now.saturating_sub(permit.started()));
        self.step(py, |b| b.on_result(permit, now, outcome, duration))
    release(permit: class<PyPermit>, now: now?) -> try Option<Py<PyTransition>> =
        let permit = permit.get().p.get();
        self.step(py, |b| b.release(permit, now))
    call(func: obj, args: obj, kwargs: obj?) -> try Py<PyAny> =
        let (args, kwargs) = crate::policy::call_args(func, args, kwargs)?;
        let p = self.permit(py, conv::mono_ns())?;
        let r = func.call(args, kwargs);
        let end = conv::mono_ns();
        let counted = match &r {
            Ok(_) => Counted::Success,
            Err(e) => counted_exc(&self.config, e.value(py).as_any()).or_else(|e| {
                // The exception could not be read: give the permit back, then raise.
                self.step(py, |b| b.release(p, end))?;
                Err(e)
            })?,
        };
        self.step(py, |b| b.on_result(p, end, counted, end.saturating_sub(p.started())))?;
        r.map(Bound::unbind)
    transition_to(state: =state_of, now: now?) -> try Py<PyTransition> =
        self.manual(py, |b| b.transition_to(state, now))
    reset(now: now?) -> try Option<Py<PyTransition>> = self.step(py, |b| b.reset(now))
    remaining_open(now: now?) -> f64 = wait_secs(self.with(py, |b| b.remaining_open(now))).unwrap_or(f64::INFINITY)
    snapshot(now: now?, wall_now_ms: ~conv::wall_or_clock) -> try Obj<'py> =
        let v = self.with(py, |b| retrycore::json::ToJson::to_value(&b.snapshot(now, wall_now_ms)));
        conv::from_json(py, &v)
    restore(snapshot: obj, now: obj?, wall_now_ms: obj?) -> try () =
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
    __repr__() -> String =
        let state = self.with(py, |b| b.state().code());
        format!("CircuitBreaker(name={:?}, state={:?})", self.config.name, state)
    state_metrics(now: now?) -> try Obj<'py> =
        let m = self.with(py, |b| b.metrics(now));
        conv::from_json(py, &retrycore::json::ToJson::to_value(&m))
    record_without_permit(outcome: ~self.outcome, now: now?, duration: secs?) -> try Option<Py<PyTransition>> =
        self.step(py, |b| b.record(now, outcome, duration.unwrap_or(0)))
    transition_to_open_for(duration: secs, now: now?) -> try Py<PyTransition> =
        self.manual(py, |b| b.transition_to_open_for(duration, now))
    transition_to_open_until(until: instant, now: now?) -> try Py<PyTransition> =
        self.manual(py, |b| b.transition_to_open_until(until, now))
    break_arguments(now: now?) -> try Obj<'py> =
        let a = self.with(py, |b| b.break_arguments(now));
        conv::from_json(py, &retrycore::json::ToJson::to_value(&a))
    set_break_duration(duration: secs) -> try () = self.with(py, |b| b.set_break_duration(duration)).py(py)

methods PyBudget
    new new(config: obj?, *, kwargs: obj?, share: class<PyBudget>?, overrides: obj?) -> try Self =
        Self::create(py, config, kwargs, share, overrides)
    to_dict() -> try Obj<'py> = conv::from_json(py, &self.config.to_json_value())
    get name -> String = self.config.name.clone()
    get kind -> &'static str = self.config.kind_name()
    get refusals -> u64 = self.with(py, |b| b.refusals())
    get withdrawals -> u64 = self.with(py, |b| b.withdrawals())
    level(now: ~self.now) -> try Obj<'py> = conv::from_json(py, &self.with(py, |b| b.level(now)))
    on_operation_start(now: ~self.now) -> () = self.with(py, |b| b.on_operation_start(now));
    on_operation_end(held_retry_slot: bool = false) -> () = self.with(py, |b| b.on_operation_end(held_retry_slot));
    # `now` is read after the flags, as it always was (which error two bad arguments get).
    check(category: ~category_of, now: obj?, refused: bool = false, holds_retry_slot: bool = false) -> try Option<PyRefusal> =
        let now = self.now(now)?;
        Ok(self.with(py, |b| b.check(now, category, refused, holds_retry_slot)).err().as_ref().map(PyRefusal::from))
    withdraw(category: ~category_of, now: obj?, refused: bool = false, holds_retry_slot: bool = false) -> try (Option<u32>, bool) =
        let now = self.now(now)?;
        Ok(self.with(py, |b| b.withdraw(now, category, refused, holds_retry_slot)))
    try_withdraw(category: ~category_of, now: obj?, refused: bool = false, holds_retry_slot: bool = false)
            -> try Option<PyRefusal> =
        let now = self.now(now)?;
        let r = self.with(py, |b| b.try_withdraw(now, category, refused, holds_retry_slot));
        Ok(r.err().as_ref().map(PyRefusal::from))
    acquire(n: u32, now: ~self.now) -> try bool = self.with(py, |b| b.acquire(now, n)).py(py)
    release(n: u32, now: ~self.now) -> try () = self.with(py, |b| b.release(now, n)).py(py)
    on_failure(category: ~category_of, now: obj?, counts: bool = true, reached_backend: bool = true, declined_pushback: bool = false,
            refused: bool = false) -> () =
        let facts = FailureFacts { category, counts, reached_backend, declined_pushback, refused };
        let now = self.now(now)?;
        self.with(py, |b| b.on_failure(now, facts));
    on_success(now: ~self.now, retry_cost: u32?) -> () = self.with(py, |b| b.on_success(now, retry_cost));
    before_attempt(now: ~self.now, r: f64?) -> try Option<PyRefusal> =
        let r = r.map(|v| retrycore::backoff::check_r(v).py(py).map(|()| v)).transpose()?;
        let r = r.unwrap_or_else(crate::entropy::draw);
        Ok(self.with(py, |b| b.before_attempt(now, r)).as_ref().map(PyRefusal::from))
    __repr__() -> String = format!("Budget(kind={:?}, name={:?})", self.config.kind_name(), self.config.name)

module idem

functions
    validate_key(key: istr, max_len: count?) -> try () reads max_len =
        let max = max_len.map_or(idem::DEFAULT_MAX_KEY_LEN, |m| usize::try_from(m).unwrap_or(usize::MAX));
        idem::validate_key(&key, max).py_in(py, I)
    scoped_key(tenant: istr, key: istr) -> try String = idem::scoped_key(&tenant, &key).py_in(py, I)
    storage_key(key: istr, max_len: count) -> try String reads max_len =
        idem::storage_key(&key, usize::try_from(max_len).unwrap_or(usize::MAX)).py_in(py, I)
    mint_key(entropy: obj?) -> try String =
        let bytes = match entropy.filter(|e| !e.is_none()) {
            None => crate::entropy::bytes::<16>()
                .ok_or((ErrorCode::InvalidState, "the operating system gave no entropy")),
            Some(e) => match e.downcast::<PyBytes>() {
                Ok(b) => b.as_bytes().try_into().map_err(|_| (ErrorCode::InvalidValue, "must be exactly 16 bytes")),
                Err(_) => Err((ErrorCode::InvalidType, "must be 16 bytes")),
            },
        };
        Ok(idem::mint_key(bytes.map_err(|(code, why)| err_in(py, I, code, "entropy", why))?))
    format_header(key: istr) -> try String = idem::format_header(&key).py_in(py, I)
    parse_header(value: istr, allow_token: bool = false) -> try String reads allow_token =
        let form = if allow_token { idem::HeaderForm::SfStringOrToken } else { idem::HeaderForm::SfString };
        idem::parse_header(&value, form).py_in(py, I)
    canonicalize(value: obj) -> try String = idem::canonicalize(&to_host_json(value)?).py_in(py, I)
    canonicalize_json(text: istr) -> try String = py.allow_threads(|| idem::canonicalize_json(&text)).py_in(py, I)
    format_number(x: obj) -> try String = idem::format_number(conv::to_f64(x, "value")?).py_in(py, I)
    fingerprint(body: host?, *, method: istr?, path: istr?, operation: istr?, selected: obj?, canonical: bool = false)
            -> try String reads canonical =
        fp(py, Body::Value(body.unwrap_or(Value::Null)), method, path, operation, selected, canonical)
    fingerprint_json(text: istr, *, method: istr?, path: istr?, operation: istr?, selected: obj?,
            canonical: bool = false) -> try String reads canonical =
        fp(py, Body::Text(text), method, path, operation, selected, canonical)
    decide(record: nullable, key: nullable istr, fingerprint: obj, wall_now_ms: obj?, config: class<RecordConfig>?)
            -> try Obj<'py> reads config, key =
        let cfg = config_or_default(config);
        let Some(key) = key else {
            let http = http_json(Some(idem::missing_key_answer(&cfg)));
            return conv::from_json(py, &json!({"decision": "missing_key", "http": http}));
        };
        let fpr = s(fingerprint, "fingerprint")?;
        let rec = conv::opt(record, record_of)?;
        let now = conv::wall_or_clock(wall_now_ms)?;
        let d = idem::decide(rec.as_ref(), &key, &fpr, now, &cfg).py_in(py, I)?;
        let mut v = to_value(&d);
        v["http"] = http_json(d.http(&cfg));
        if let idem::RecordDecision::Execute(c) = &d {
            v["record"] = to_value(&c.to_record(&key, &fpr));
        }
        conv::from_json(py, &v)
    complete(record: =record_of, fence: obj, outcome: obj, wall_now_ms: obj?, config: class<RecordConfig>?)
            -> try Obj<'py> reads config, record =
        let o = outcome.downcast::<PyDict>();
        let o = o.map_err(|_| err_in(py, I, ErrorCode::InvalidType, "outcome", "must be a dict"))?;
        let response = response_of(py, o.get_item("response")?)?;
        let state = o.get_item("state")?.map(|x| s(&x, "outcome.state")).transpose()?;
        let category = conv::opt(o.get_item("category")?.as_ref(), |c| s(c, "outcome.category"))?;
        let out = idem::Outcome::read(state.as_deref(), category, response, "outcome").py_in(py, I)?;
        let now = conv::wall_or_clock(wall_now_ms)?;
        let fence = conv::to_count(fence, "fence", u64::MAX)?;
        let r = idem::complete(&record, fence, out, now, &config_or_default(config)).py_in(py, I)?;
        conv::from_json(py, &to_value(&r))
    renew_lease(record: =record_of, fence: count, wall_now_ms: ~conv::wall_or_clock, config: class<RecordConfig>?)
            -> try Obj<'py> reads config, record, wall_now_ms =
        let r = idem::renew_lease(&record, fence, wall_now_ms, &config_or_default(config)).py_in(py, I)?;
        conv::from_json(py, &to_value(&r))
    format_rfc3339_ms(unix_ms: count) -> try String = idem::format_rfc3339_ms(unix_ms).py_in(py, I)
    parse_rfc3339_ms(text: istr) -> try i64 = idem::parse_rfc3339_ms(&text).py_in(py, I)

methods RecordConfig
    new new(*, lease: secs?, retention: secs?, stripe: bool = false, failure_handling: obj?,
            release_categories: list<str>?) -> try Self reads stripe, release_categories =
        let d = idem::RecordConfig::default();
        let time = |ns: Option<u64>, ms| ns.map_or(Duration::from_millis(ms), Duration::from_nanos);
        let (lease, retention) = (time(lease, d.lease_ms()), time(retention, d.retention_ms()));
        let mut c = idem::RecordConfig::new(lease, retention).py_in(py, I)?.with_stripe(stripe);
        if let Some(h) = conv::opt_str(failure_handling, "failure_handling")? {
            c = c.with_failure_handling(idem::FailureHandling::parse(&h, "failure_handling").py_in(py, I)?);
        }
        Ok(RecordConfig { c: release_categories.into_iter().fold(c, |c, cats| c.with_release_categories(cats)) })
    get lease -> f64 = self.c.lease_ms() as f64 / 1e3
    get retention -> f64 = self.c.retention_ms() as f64 / 1e3

methods PyDeadLetter
    new new(msg_id: istr, message: json, *, reason: istr, attempts: u32, error: obj?, error_class: str?,
            error_message: str?, first_failure_ms: obj?, last_failure_ms: obj?, first_failure_at: obj?,
            last_failure_at: obj?, trace_id: obj?, topic: obj?, partition: obj?, offset: obj?,
            target_idempotent: bool = false) -> try Self reads target_idempotent =
        let b = idem::DeadLetter::builder(msg_id, message).reason(reason).attempts(attempts);
        let mut b = b.target_idempotent(target_idempotent);
        let (mut class, mut text) = (error_class, error_message);
        if let Some(e) = error.filter(|e| !e.is_none()) {
            if !e.is_instance_of::<PyBaseException>() {
                return Err(err_in(py, I, ErrorCode::InvalidType, "error", "must be an exception"));
            }
            class = class.or_else(|| Some(class_name(e)));
            text = text.or_else(|| e.str().ok().map(|x| x.to_string()));
        }
        // Each optional field is set when given (and not None), read in this order.
        if let Some(c) = class { b = b.error(c, text.unwrap_or_default()) }
        if let Some(t) = conv::opt_str(first_failure_at, "first_failure_at")? { b = b.first_failure_at(t) }
        if let Some(t) = conv::opt_str(last_failure_at, "last_failure_at")? { b = b.last_failure_at(t) }
        let ms = |o, field| conv::opt_count(o, field, u64::MAX);
        if let Some(ms) = ms(first_failure_ms, "first_failure_ms")? { b = b.first_failure_ms(ms) }
        if let Some(ms) = ms(last_failure_ms, "last_failure_ms")? { b = b.last_failure_ms(ms) }
        if let Some(t) = conv::opt_str(trace_id, "trace_id")? { b = b.trace_id(t) }
        if let Some(t) = conv::opt_str(topic, "topic")? {
            // Partition and offset are read only beside a topic.
            let p = conv::opt_count(partition, "partition", u64::from(u32::MAX))?.map(|p| p as u32);
            b = b.source(t, p, conv::opt_count(offset, "offset", u64::MAX)?);
        }
        Ok(PyDeadLetter { l: Mutex::new(b.build().py_in(py, I)?) })
    static from_dict(d: json) -> try Self =
        Ok(PyDeadLetter { l: Mutex::new(idem::DeadLetter::from_value(&d).py_in(py, I)?) })
    static from_json(text: istr) -> try Self =
        Ok(PyDeadLetter { l: Mutex::new(idem::DeadLetter::from_json(&text).py_in(py, I)?) })
    to_dict() -> try Obj<'py> = conv::from_json(py, &self.with(py, |l| l.to_value()))
    to_json() -> String = self.with(py, |l| l.to_json())
    mark_replayable() -> try () = self.with(py, |l| l.mark_replayable()).py_in(py, I)
    mark_replayed() -> try () = self.with(py, |l| l.mark_replayed()).py_in(py, I)
    discard() -> try () = self.with(py, |l| l.discard()).py_in(py, I)
    get msg_id -> String = self.with(py, |l| l.msg_id.clone())
    get status -> &'static str = self.with(py, |l| l.status.as_str())
    get replayable -> bool = self.with(py, |l| l.replayable)
    __repr__() -> String =
        self.with(py, |l| format!("DeadLetter(msg_id={:?}, status={:?})", l.msg_id, l.status.as_str()))

module failure

class Verdict_ = Verdict {
    category: &'static str, retry: &'static str, safe: bool, retryable: bool, server_declined: bool
    server_delay: Option<f64>, server_delay_source: Option<&'static str>, status: Option<u16>
    /// The classified names, turned into Python strings only when asked for.
    priv names: Vec<Name>
}
    repr "Verdict(category={category:?}, retry={retry:?}, safe={safe}, retryable={retryable}, "
    repr "server_delay={server_delay:?})"

/// The keyword fields of a failure ([`Fields`]).
group Fields of failure {
    status, grpc_code, error_names, method, idempotent, idempotency_key_sent, headers, elapsed, wall_now_ms, message,
    retryable, should_retry, verdict
}

functions
    classify(failure: obj?, *, policy: obj?, fields: ..Fields) -> try Verdict_ =
        let Some(p) = conv::opt(policy, crate::policy::native_policy)? else {
            let c = Classifier::default();
            let f = OwnedFailure::read(failure, &fields, c.needs_message())?;
            let v = f.with(|x| c.classify(x));
            return Ok(verdict_of(f, &v));
        };
        // As a session of the policy: its `idempotent` applies (`PolicyConfig::classify`).
        let p = p.get();
        let f = OwnedFailure::read(failure, &fields, p.needs_message)?;
        let v = f.with(|x| p.inner.config().classify(x));
        Ok(verdict_of(f, &v))
    error_names(e: obj) -> try Bound<'py, PyList> =
        if !e.is_instance_of::<PyBaseException>() {
            return Err(err(e.py(), ErrorCode::InvalidType, "exception", "must be an exception"));
        }
        PyList::new(e.py(), OwnedFailure::from_exception(e, false)?.names.iter().map(|n| &**n))

methods Verdict_
    get error_names -> Vec<&str> = self.names.iter().map(|n| &**n).collect()
    get refused -> bool =
        let names: Vec<&str> = self.names.iter().map(|n| &**n).collect();
        retrycore::classify::is_refused(&names)

module limiter

class Limiter { priv l: Mutex<retrycore::limiters::Limiter> }
    subclass

methods Limiter
    new new(config: json, now: now?) -> try Self =
        let c = LimiterConfig::from_json_value(&config, "").py(py)?;
        Ok(Limiter { l: Mutex::new(retrycore::limiters::Limiter::new(c, now)) })
    get name -> String = self.with(py, |l| l.name().to_owned())
    get kind -> &'static str = self.with(py, |l| l.config().kind.code())
    get in_flight -> u64 = self.with(py, |l| l.in_flight())
    acquire(now: now?, attempt: str?, within: secs?) -> try Obj<'py> =
        let kind = AttemptKind::from_code(attempt.as_deref().unwrap_or("initial"), "attempt").py(py)?;
        conv::from_json(py, &self.with(py, |l| l.acquire(now, kind, within)).to_json(SECS))
    release(now: now?, rtt: secs?, signal: str?, category: str?) -> try Option<u64> =
        let signal = Signal::read(signal.as_deref(), category.as_deref()).py(py)?;
        Ok(self.with(py, |l| l.release(now, Completion { rtt: rtt.unwrap_or(0), signal })))
    cancel(ticket: count, now: now?) -> try Obj<'py> =
        conv::from_json(py, &self.with(py, |l| l.cancel(now, ticket)).to_json(SECS))
    state(now: now?) -> try Obj<'py> = conv::from_json(py, &self.with(py, |l| l.state(now)))
    __repr__() -> String = self.with(py, |l| format!("Limiter(kind={:?}, name={:?})", l.config().kind.code(), l.name()))

module saga

class CompensationRun { priv r: Mutex<retrycore::compensation::CompensationRun> }

methods CompensationRun
    new new(saga: json) -> try Self =
        let plan = CompensationPlan::from_json_value(&saga).py(py)?;
        Ok(CompensationRun { r: Mutex::new(retrycore::compensation::CompensationRun::new(plan)) })
    next() -> try Obj<'py> = conv::from_json(py, &self.with(py, |r| r.next().map_or(Value::Null, Planned::to_json_value)))
    record(outcome: json) -> try Obj<'py> =
        let outcome = Outcome::from_json_value(&outcome).py(py)?;
        let letter = self.with(py, |r| r.record(outcome).map(|l| l.map_or(Value::Null, DeadLetter::to_value)));
        conv::from_json(py, &letter.py(py)?)
    result() -> try Obj<'py> = conv::from_json(py, &self.with(py, |r| r.result()))
    __repr__() -> String = self.with(py, |r| format!("CompensationRun(finished={})", if r.is_finished() { "True" } else { "False" }))

class DeadLetterReplay { priv r: Mutex<Replay> }

methods DeadLetterReplay
    new new(letters: json, options: json, wall_now_ms: wall) -> try Self =
        let r = Replay::from_json_values(&letters, &options, wall_now_ms).py(py)?;
        Ok(DeadLetterReplay { r: Mutex::new(r) })
    groups() -> try Obj<'py> = conv::from_json(py, &self.with(py, |r| r.groups()))
    next_batch() -> try Vec<String> = self.with(py, |r| r.next_batch()).py(py)
    record(msg_id: str, ok: bool, wall_now_ms: wall) -> try () = self.with(py, |r| r.record(&msg_id, ok, wall_now_ms)).py(py)
    letters() -> try Obj<'py> = conv::from_json(py, &self.with(py, |r| r.letters_json()))
    audit() -> try Obj<'py> = conv::from_json(py, &self.with(py, |r| r.audit()))
    __repr__() -> String = "DeadLetterReplay()".to_owned()

module misc

class ServerAdvice {
    delay: Option<f64>, source: Option<&'static str>, declined: bool, should_retry: Option<bool>, retry_exhausted: bool
}

class Finding { code: &'static str, severity: &'static str, field: String, message: String }
    repr "Finding({code:?}, {severity:?}, field={field:?})"
functions
    parse_duration(text: obj) -> try f64 =
        retrycore::duration::parse_duration(&to_str(text, "duration")?, "duration").map(to_secs).py(py)
    format_duration(seconds: secs) -> String = retrycore::duration::format_duration(seconds)
    server_advice(headers: obj, wall_now_ms: obj?) -> try ServerAdvice =
        let fields = Fields { headers: Some(headers.clone()), wall_now_ms: wall_now_ms.cloned(), ..Default::default() };
        let f = OwnedFailure::read(None, &fields, false)?;
        // Pure, like the core: without `wall_now_ms` an HTTP-date is ignored.
        let headers = f.headers.iter().map(|(a, b)| (a.as_str(), b.as_str()));
        let a = retrycore::retry_after::read_headers(headers, f.wall_now_ms);
        Ok(ServerAdvice {
            delay: a.delay_ns().map(to_secs),
            source: a.delay.map(|(_, s)| s.name()),
            declined: a.declined_by_pushback,
            should_retry: a.should_retry,
            retry_exhausted: a.retry_exhausted,
        })
    parse_http_date(value: str, wall_now_ms: wall) -> Option<i64> =
        retrycore::retry_after::parse_http_date(&value, wall_now_ms)
    retry_log_record(event: json) -> try Obj<'py> =
        conv::from_json(py, &retrycore::retry_log::record_of(&event).py(py)?.to_json_value())
    lint(policy: =crate::policy::native_policy, service: json?) -> try Vec<Finding> =
        let service = service.map(|s| Service::from_json_value(&s).py(py)).transpose()?;
        Ok(retrycore::lint::lint(policy.get().inner.config(), service.as_ref())
            .into_iter()
            .map(|f| Finding { code: f.code, severity: f.severity.code(), field: f.field, message: f.message })
            .collect())
    host_tables() -> try Obj<'py> = conv::from_json(py, &retrycore::tables::host_tables())
    metric_samples(document: json) -> try Obj<'py> =
        conv::from_json(py, &retrycore::metrics::samples_value(&document).py(py)?)
    evaluate_alerts(document: json) -> try Obj<'py> =
        conv::from_json(py, &retrycore::alerts::evaluate_value(&document, None).py(py)?.to_json_value())

methods Random
    new new(seed: count) -> Random = Random { g: std::sync::Mutex::new(Xoshiro256pp::seed_from_u64(seed)) }
    next_u64() -> u64 = crate::locks::with(py, &self.g, |g| g.next_u64())
    random() -> f64 = crate::locks::with(py, &self.g, |g| g.next_f64())
"#;

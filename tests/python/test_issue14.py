"""One regression test per drift of issue 14 ("One behaviour everywhere, at the surface
too") that concerns the Python binding. What the caller observes at the end of a call is
pinned by the execute vectors (test_vectors.py runs them through @retry and policy.call);
the tables by test_tables.py."""

from __future__ import annotations

from typing import Any, List

import pytest

import retrycore
from retrycore import _native


def code_of(f: Any) -> Any:
    try:
        f()
    except retrycore.RetrycoreError as e:
        return (type(e).__name__, e.code, e.field)
    return None


def test_sampling_duration_in_float_seconds() -> None:
    # The binding kept its own list of duration keys and missed this one.
    b = retrycore.CircuitBreaker(kind="sampling", sampling_duration=30.0)
    assert b.to_dict()["sampling_duration"] == "30s"
    # Every duration key takes seconds: the core's typed reader knows which keys they are.
    p = retrycore.RetryPolicy(breaker={"kind": "sampling", "sampling_duration": 1.5}, budget={"kind": "ratio", "window": 2})
    assert p.to_dict()["breaker"]["sampling_duration"] == "1.5s"
    assert p.to_dict()["budgets"][0]["window"] == "2s"


def test_a_document_still_refuses_bare_numbers() -> None:
    assert code_of(lambda: retrycore.RetryPolicy.from_dict({"initial": 1.0})) == ("ConfigError", "invalid_duration", "initial")
    doc = '{"breaker": {"kind": "sampling", "sampling_duration": 30}}'
    assert code_of(lambda: retrycore.RetryPolicy.from_json(doc)) == ("ConfigError", "invalid_duration", "breaker.sampling_duration")
    assert code_of(lambda: _native.CircuitBreaker({"kind": "sampling", "sampling_duration": 30})) == (
        "ConfigError", "invalid_duration", "sampling_duration")


@pytest.mark.parametrize(
    "make",
    [
        lambda **kw: retrycore.RetryPolicy(**kw),
        lambda **kw: retrycore.CircuitBreaker(**kw),
        lambda **kw: retrycore.Budget(kind="token_bucket", **kw),
    ],
)
@pytest.mark.parametrize("key", ["max_attempts", "initial", "deadline", "jitter", "name", "failure_threshold", "max_tokens"])
def test_none_is_not_the_default(make: Any, key: str) -> None:
    # RetryPolicy(max_attempts=None) silently became 3: None is refused, leaving the key out is the default.
    assert code_of(lambda: make(**{key: None})) == ("ConfigTypeError", "invalid_type", key)


@pytest.mark.parametrize("key", ["breaker", "budget", "budgets"])
def test_none_is_refused_for_shared_objects_too(key: str) -> None:
    assert code_of(lambda: retrycore.RetryPolicy(**{key: None})) == ("ConfigTypeError", "invalid_type", key)
    assert code_of(lambda: retrycore.RetryPolicy(breaker={"kind": "consecutive", "name": None})) == (
        "ConfigTypeError", "invalid_type", "breaker.name")


def test_policy_profile_builds_the_profile() -> None:
    # Documented in docs/profiles.md for every binding; it existed in none.
    p = retrycore.RetryPolicy.profile("polly")
    assert p.to_dict() == retrycore.RetryPolicy.from_dict({"profile": "polly"}).to_dict()
    q = retrycore.RetryPolicy.profile("stamina", max_attempts=5, on_retry=print)
    assert q.max_attempts == 5 and q.on_retry is print and q.to_dict()["profile"] == "stamina"
    assert code_of(lambda: retrycore.RetryPolicy.profile("nope"))[1:] == ("invalid_value", "profile")


def test_budget_helpers_take_the_core_defaults() -> None:
    defaults = _native.host_tables()["defaults"]["budgets"]
    assert retrycore.Budget.token_bucket().to_dict() == defaults["token_bucket"]
    assert retrycore.Budget.finagle().to_dict() == defaults["finagle"]  # the helper was missing
    assert retrycore.Budget.grpc(max_tokens=10, token_ratio=0.1).kind == "grpc"


def test_on_retry_carries_the_failed_call_and_a_budget_give_up_is_budget_exhausted() -> None:
    # For the same failure JS reported the coming call, Python the failed one (docs/sessions.md).
    events: List[Any] = []
    budget = retrycore.Budget.token_bucket(capacity=10, retry_cost=5)
    p = retrycore.RetryPolicy(max_attempts=5, initial=0.0, jitter="none", budget=budget, on_retry=events.append)

    @retrycore.retry(p, idempotent=True)
    def fail() -> None:
        raise ConnectionResetError()

    with pytest.raises(retrycore.BudgetExhaustedError) as ei:
        fail()
    assert [(e.attempt, e.retry) for e in events] == [(1, 1), (2, 2)]
    assert (ei.value.code, ei.value.reason, ei.value.attempts) == ("budget_exhausted", "budget_exhausted", 3)
    assert isinstance(ei.value.__cause__, ConnectionResetError)


def test_a_failure_nothing_retries_propagates_unchanged() -> None:
    @retrycore.retry(retrycore.RetryPolicy(initial=0.0))
    def typo() -> None:
        raise NameError("nme")

    with pytest.raises(NameError) as ei:
        typo()
    assert ei.value.__cause__ is None and "retrycore:retry_exhausted" not in retrycore.error_names(ei.value)


def test_a_too_deep_document_is_still_a_config_error() -> None:
    # too_deep is in the core's fingerprint family; read from a policy document it is a ConfigError.
    d: Any = {}
    x = d
    for _ in range(200):
        x["a"] = {}
        x = x["a"]
    assert code_of(lambda: retrycore.RetryPolicy.from_dict(d))[:2] == ("ConfigError", "too_deep")
    assert code_of(lambda: retrycore.canonicalize(d))[:2] == ("FingerprintError", "too_deep")


@pytest.mark.parametrize("one", ["budget", "retry_budget"])
def test_budget_beside_budgets_is_the_cores_refusal(one: str) -> None:
    # __init__.py kept its own "budget or budgets" check, which missed the retry_budget alias
    # when the budgets were shared objects (the alias was then dropped silently).
    doc = {"kind": "token_bucket"}
    shared = retrycore.Budget.token_bucket()
    for budgets in ([doc], [shared]):
        assert code_of(lambda: retrycore.RetryPolicy(**{one: doc, "budgets": budgets})) == (
            "ConfigError", "invalid_combination", "budgets")
    assert len(retrycore.RetryPolicy(budgets=[shared]).budgets) == 1
    assert len(retrycore.RetryPolicy(budget=shared).budgets) == 1


def test_grpc_code_17_is_the_cores_invalid_value_as_in_js() -> None:
    # failure.rs bounded the number at 16 itself (out_of_range); the core's reader says invalid_value.
    for v in (17, 255, 1000, "17", "NOPE"):
        assert code_of(lambda: retrycore.classify(grpc_code=v)) == ("ConfigError", "invalid_value", "grpc_code")
    assert retrycore.classify(grpc_code=14).category == retrycore.classify(grpc_code="UNAVAILABLE").category


def test_a_record_outcome_is_read_by_the_core() -> None:
    a = retrycore.fingerprint({"amount": 1}, operation="pay")
    d = retrycore.decide(None, "k1", a, 1000)
    for outcome, code in (({}, "missing_field"), ({"category": "timeout"}, "missing_field"), ({"state": "done"}, "invalid_value")):
        got = code_of(lambda: retrycore.complete(d["record"], d["fence"], outcome, 2000))
        assert got is not None and got[1:] == (code, "outcome.state"), outcome
    assert retrycore.complete(d["record"], d["fence"], {"state": "failed", "category": "timeout"}, 2000)["state"] == "failed"


def test_a_maximum_key_length_takes_any_whole_number() -> None:
    assert code_of(lambda: retrycore.validate_key("k-1", 2 * 10**9)) is None
    assert retrycore.storage_key("k-1", 10**12) == "k-1"


@pytest.mark.parametrize("status", [42, 1200, 65535])
def test_a_status_attribute_outside_the_cores_range_is_ignored(status: int) -> None:
    # Python took any 16-bit int from an error's attributes, JS 100-999 (classify::SEEN_STATUS).
    class Refused(ConnectionRefusedError):
        pass

    e = Refused()
    e.status = status  # type: ignore[attr-defined]
    assert retrycore.classify(e).category == retrycore.classify(Refused()).category == "connect"
    e.status = 503  # type: ignore[attr-defined]
    assert retrycore.classify(e).category != "connect"
    assert _native.host_tables()["seen_status"] == [100, 999]


# The class of an error is the core's (`ErrorCode::class`: the code's family and the
# domain it is raised in), each host mapping the core's class to its idiom. The same
# call, with the same arguments, in tests/js/issue14.test.cjs gives the same code and the
# same core class. Before, the hosts decided alone: Python raised a type error of
# fingerprint()'s options as a ConfigTypeError (its `selected` as an IdempotencyTypeError)
# and JS a record's invalid_state as an IdempotencyError where Python had a StateError.
def _complete(done: bool, fence: Any, outcome: Any) -> Any:
    d = retrycore.decide(None, "k1", retrycore.fingerprint({"amount": 1}, operation="pay"), 1000)
    record = d["record"]
    if done:
        record = retrycore.complete(record, d["fence"], {"state": "succeeded"}, 2000)
    return retrycore.complete(record, d["fence"] if fence is None else fence, outcome, 3000)


def _deep() -> Any:
    d: Any = {}
    x = d
    for _ in range(200):
        x["a"] = {}
        x = x["a"]
    return d


SAME_CALLS = [
    # (what, call, code, domain, the core's class)
    ("complete a completed record", lambda: _complete(True, None, {"state": "failed"}), "invalid_state", "idempotency", "state"),
    ("complete with a stale fence", lambda: _complete(True, 0, {"state": "failed"}), "stale_fence", "idempotency", "fence"),
    ("complete without a state", lambda: _complete(False, None, {}), "missing_field", "idempotency", "idempotency_type"),
    ("fingerprint with a number as operation", lambda: retrycore.fingerprint({"a": 1}, operation=5),  # type: ignore[arg-type]
     "invalid_type", "idempotency", "idempotency_type"),
    ("fingerprint with operation and method", lambda: retrycore.fingerprint({"a": 1}, operation="op", method="POST", path="/x"),
     "invalid_value", "idempotency", "idempotency"),
    ("canonical JSON of NaN", lambda: retrycore.canonicalize(float("nan")), "invalid_number", "idempotency", "fingerprint"),
    ("a policy document too deep", lambda: retrycore.RetryPolicy.from_dict(_deep()), "too_deep", "config", "config"),
    ("validate an empty key", lambda: retrycore.validate_key(""), "invalid_key", "idempotency", "key"),
]

# The Python class of each core class (docs/python.md, "Errors").
PY_CLASS = {
    "config": retrycore.ConfigError,
    "config_type": retrycore.ConfigTypeError,
    "idempotency": retrycore.IdempotencyError,
    "idempotency_type": retrycore.IdempotencyTypeError,
    "state": retrycore.StateError,
    "snapshot": retrycore.SnapshotError,
    "key": retrycore.InvalidKeyError,
    "fingerprint": retrycore.FingerprintError,
    "fence": retrycore.FenceError,
    "dead_letter": retrycore.DeadLetterError,
}


@pytest.mark.parametrize("what, call, code, domain, cls", SAME_CALLS, ids=[c[0] for c in SAME_CALLS])
def test_the_class_of_an_error_is_the_cores(what: str, call: Any, code: str, domain: str, cls: str) -> None:
    classes = {c["code"]: c["classes"] for c in _native.host_tables()["error_codes"]}
    assert classes[code][domain] == cls, what
    with pytest.raises(retrycore.RetrycoreError) as ei:
        call()
    assert (ei.value.code, type(ei.value)) == (code, PY_CLASS[cls]), what
    # The idiom both hosts share: a wrong type is a TypeError, any other bad argument a
    # ValueError (JS RangeError), a refused state neither.
    assert isinstance(ei.value, TypeError) == cls.endswith("_type"), what
    assert isinstance(ei.value, ValueError) == (cls not in ("state",)), what


# ---- issue 14, second part: rules both hosts wrote (docs/hosts.md, "Moved into the core").
# tests/js/issue14.test.cjs makes the same calls.


def test_a_null_option_is_refused_by_the_cores_typed_reader() -> None:
    # The hosts refused None/null themselves, each with its own text; now the core does.
    for call, field in (
        (lambda: retrycore.RetryPolicy(max_attempts=None), "max_attempts"),
        (lambda: retrycore.RetryPolicy(budgets=[{"kind": "ratio", "window": None}]), "budgets[0].window"),
        (lambda: retrycore.CircuitBreaker(wait_duration_in_open_state=None), "wait_duration_in_open_state"),
        (lambda: retrycore.Budget(kind="ratio", window=None), "window"),
    ):
        with pytest.raises(retrycore.ConfigTypeError) as ei:
            call()
        assert (ei.value.code, ei.value.field) == ("invalid_type", field)
        assert "must not be null or None (leave it out for the default)" in str(ei.value)
    # A document still reads null as "not given".
    assert retrycore.RetryPolicy.from_dict({"max_attempts": None}).max_attempts == retrycore.RetryPolicy().max_attempts


@pytest.mark.parametrize("status", [-1, 1000, 2**70])
def test_a_given_status_is_0_to_999_by_the_cores_check(status: int) -> None:
    with pytest.raises(retrycore.ConfigError) as ei:
        retrycore.classify(status=status)
    assert (ei.value.code, ei.value.field) == ("out_of_range", "status")
    assert "must be a whole number from 0 to 999" in str(ei.value)
    assert retrycore.classify(status=0).category == retrycore.classify(status=999).category == "unknown"


FINGERPRINT_MIXES = [
    # (options, code, field): the core's FingerprintOf::read; the vectors pin the same mixes.
    ({"method": "POST"}, "missing_field", "path"),
    ({"path": "/v1/charges"}, "missing_field", "method"),
    ({}, "missing_field", "operation"),
    ({"operation": "op", "method": "POST"}, "invalid_value", "operation"),
]


@pytest.mark.parametrize("options, code, field", FINGERPRINT_MIXES)
def test_the_options_of_a_fingerprint_are_read_by_the_core(options: Any, code: str, field: str) -> None:
    # Python said invalid_value on operation for a method without a path, JS invalid_type on path.
    assert code_of(lambda: retrycore.fingerprint({"a": 1}, **options))[1:] == (code, field)


def test_a_cyclic_body_is_invalid_type_as_in_js() -> None:
    # Python said too_deep (it recursed to the depth limit), JS invalid_type.
    a: List[Any] = []
    a.append(a)
    d: Any = {"a": 1}
    d["self"] = d
    for body in (a, d):
        with pytest.raises(retrycore.IdempotencyTypeError) as ei:
            retrycore.fingerprint(body, operation="op")
        assert ei.value.code == "invalid_type" and "a cyclic structure is not JSON" in str(ei.value)
    with pytest.raises(retrycore.ConfigTypeError) as ci:
        retrycore.RetryPolicy(classification=d)
    assert ci.value.code == "invalid_type"


def test_the_message_of_an_ending_is_the_cores() -> None:
    # Python and JS wrote their own texts; codes stay the contract, the text is Ending::message.
    p = retrycore.RetryPolicy(max_attempts=2, initial=0.0, jitter="none")

    def fail() -> None:
        raise ConnectionResetError("reset")

    with pytest.raises(retrycore.RetryError) as ei:
        retrycore.retry(p, idempotent=True)(fail)()
    assert str(ei.value) == f"gave up after 2 attempts: attempts_exhausted (last failure: {ei.value.category})"
    assert isinstance(ei.value.__cause__, ConnectionResetError)
    b = retrycore.CircuitBreaker(name="payments")
    b.transition_to("forced_open")
    with pytest.raises(retrycore.CircuitOpenError) as bi:
        retrycore.RetryPolicy(breaker=b).call(fail)
    assert str(bi.value) == 'circuit breaker "payments" is forced_open'
    # The breaker on its own says the same (JS's CircuitBreaker.execute wrote its own text).
    with pytest.raises(retrycore.CircuitOpenError) as oi:
        with b:
            pass
    assert str(oi.value) == 'circuit breaker "payments" is forced_open'


def test_a_refused_first_attempts_circuit_open_error_has_the_state_its_message_names() -> None:
    b = retrycore.CircuitBreaker(name="payments")
    b.transition_to("forced_open")
    with pytest.raises(retrycore.CircuitOpenError) as fi:
        retrycore.RetryPolicy(breaker=b).call(lambda: "never")
    assert (fi.value.state, fi.value.breaker, fi.value.retry_after) == ("forced_open", "payments", None)
    b.transition_to("open")
    with pytest.raises(retrycore.CircuitOpenError) as oi:
        retrycore.RetryPolicy(breaker=b).call(lambda: "never")
    assert oi.value.state == "open"
    assert str(oi.value).startswith('circuit breaker "payments" is open; retry after '), str(oi.value)


def test_a_value_that_raises_while_read_is_named_and_quoted() -> None:
    # Python named the exception's class, JS quoted its message; the core's text has both.
    class Exploding(list):  # type: ignore[type-arg]
        def __iter__(self) -> Any:
            raise ValueError("boom")

    with pytest.raises(retrycore.RetrycoreError) as ei:
        retrycore.fingerprint(Exploding([1]), operation="op")
    assert ei.value.code == "invalid_type"
    assert "could not be read: ValueError: boom" in str(ei.value)


def test_only_an_exhausted_retry_error_is_marked_in_a_cause_chain() -> None:
    # Python marked every RetryError retrycore:retry_exhausted, JS only one whose exhausted is true.
    marked = retrycore.RetryError("gave up", reason="attempts_exhausted")
    assert marked.exhausted and "retrycore:retry_exhausted" in retrycore.error_names(marked)
    plain = retrycore.RetryError("not retried", reason="not_retryable", exhausted=False)
    plain.__cause__ = ConnectionResetError()
    assert "retrycore:retry_exhausted" not in retrycore.error_names(plain)
    assert retrycore.classify(plain).category == retrycore.classify(ConnectionResetError()).category
    # Every give-up retrycore raises is marked by the core's Ending.
    def fail() -> None:
        raise ConnectionResetError()

    with pytest.raises(retrycore.RetryError) as ei:
        retrycore.retry(retrycore.RetryPolicy(max_attempts=1), idempotent=True)(fail)()
    assert ei.value.exhausted and "retrycore:retry_exhausted" in retrycore.error_names(ei.value)


def test_hook_events_carry_max_attempts_and_the_refusing_budget() -> None:
    # JS's HookInfo had neither; both come from the core's decision (tests/js/issue14.test.cjs).
    events: List[Any] = []
    budget = retrycore.Budget.token_bucket(capacity=10, retry_cost=5, name="b")
    p = retrycore.RetryPolicy(
        max_attempts=5, initial=0.0, jitter="none", budget=budget,
        on_retry=lambda e: events.append(("retry", e.attempt, e.max_attempts, e.budget)),
        on_give_up=lambda e: events.append(("give_up", e.attempt, e.max_attempts, e.budget, e.reason)),
    )

    @retrycore.retry(p, idempotent=True)
    def fail() -> None:
        raise ConnectionResetError()

    with pytest.raises(retrycore.BudgetExhaustedError):
        fail()
    assert events == [("retry", 1, 5, None), ("retry", 2, 5, None), ("give_up", 3, 5, "b", "budget_exhausted")]


# docs/hosts.md, "Copies to remove", items 2 and 4: the facade picked exception classes
# and HTTP statuses by hand. Its own checks now raise through the core's class table
# (`_native.error`, `ErrorCode::class` in the check's domain), and a refused record
# decision carries the status of the core's HTTP answer.
def test_raise_for_decision_takes_the_class_and_the_status_from_the_core() -> None:
    fp = retrycore.fingerprint({"amount": 1}, operation="pay")
    # missing_field raised by an idempotency function: the core names idempotency_type (it was InvalidKeyError).
    missing = retrycore.decide(None, None, fp, 1000)
    assert code_of(lambda: retrycore.raise_for_decision(missing)) == ("IdempotencyTypeError", "missing_field", "key")
    for stripe, status in ((False, 422), (True, 400)):
        cfg = retrycore.RecordConfig(stripe=stripe)
        d = retrycore.decide(None, "k1", fp, 1000, cfg)
        done = retrycore.complete(d["record"], d["fence"], {"state": "succeeded"}, 2000, cfg)
        mismatch = retrycore.decide(done, "k1", "0" * 64, 3000, cfg)
        with pytest.raises(retrycore.IdempotencyMismatchError) as em:
            retrycore.raise_for_decision(mismatch)
        assert em.value.status == mismatch["http"]["status"] == status
    running = retrycore.decide(d["record"], "k1", fp, 1500)
    with pytest.raises(retrycore.IdempotencyInProgressError) as ei:
        retrycore.raise_for_decision(running)
    assert ei.value.status == running["http"]["status"] == 409 and ei.value.retry_after > 0
    # A refused decision without its HTTP answer is refused, never given a status of the facade's.
    assert code_of(lambda: retrycore.raise_for_decision({"decision": "mismatch"})) == (
        "IdempotencyTypeError", "missing_field", "http.status")
    assert code_of(lambda: retrycore.raise_for_decision([])) == ("IdempotencyTypeError", "invalid_type", "decision")
    assert retrycore.raise_for_decision(retrycore.decide(None, "k2", fp, 1000))["decision"] == "execute"


def test_the_facades_own_checks_raise_the_class_the_core_names() -> None:
    def nowhere() -> Any:
        return retrycore.RetryPolicy.from_file("\ud800")

    cases = [
        (lambda: retrycore.RetryPolicy.from_json("{}", on_retyr=print), "unknown_key", "on_retyr"),
        (lambda: retrycore.RetryPolicy.from_file(5), "invalid_type", "path"),  # type: ignore[arg-type]
        (nowhere, "invalid_string", "path"),
        (lambda: retrycore.retry(5), "invalid_type", "policy"),  # type: ignore[call-overload]
        (lambda: retrycore.CircuitBreaker()(5), "invalid_type", "fn"),  # type: ignore[type-var]
    ]
    classes = {c["code"]: c["classes"]["config"] for c in _native.host_tables()["error_codes"]}
    for call, code, field in cases:
        with pytest.raises(retrycore.RetrycoreError) as ei:
            call()
        assert (ei.value.code, ei.value.field) == (code, field)
        assert type(ei.value) is _native.error(code, field, "why").__class__ is PY_CLASS[classes[code]]
    assert type(_native.error("missing_field", "key", "why", "idempotency")) is retrycore.IdempotencyTypeError
    assert code_of(lambda: _native.error("nope", "f", "why")) == ("ConfigError", "invalid_value", "code")

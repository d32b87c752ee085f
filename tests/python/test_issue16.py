"""Issue 16 in the Python binding: the new failure inputs (message, Smithy's retryable
trait, a per-error should_retry), the token bucket's acquire/release, and the API
traps the issue lists."""

from __future__ import annotations

from typing import Any, List

import pytest

import retrycore

GO_RULES = {
    "classification": {
        "rules": [
            {"message": ["*stopped after * redirects", "unsupported protocol scheme"], "retry": "never"},
            {"name": "*", "retry": "always"},
        ]
    }
}


def code_of(f: Any) -> Any:
    try:
        f()
    except retrycore.RetrycoreError as e:
        return (e.code, e.field)
    return None


class Counting(Exception):
    """An exception that counts how often its message is read."""

    reads: List[int] = []

    def __str__(self) -> str:
        Counting.reads.append(1)
        return 'Get "http://a": stopped after 10 redirects'


# ---------------------------------------------------------------- message


def test_message_is_read_from_the_exception_when_a_rule_needs_it() -> None:
    p = retrycore.RetryPolicy.from_dict(GO_RULES)
    Counting.reads.clear()
    v = retrycore.classify(Counting(), policy=p)
    assert (v.retry, v.retryable) == ("never", False)
    assert len(Counting.reads) == 1


def test_message_is_not_read_without_a_message_rule() -> None:
    Counting.reads.clear()
    retrycore.classify(Counting())
    retrycore.classify(Counting(), policy=retrycore.RetryPolicy.from_dict({"classification": {"rules": []}}))
    s = retrycore.RetryPolicy.from_dict({}).session()
    s.before_attempt(now=0.0)
    s.on_failure(Counting(), now=0.0)
    assert Counting.reads == []


def test_session_reads_the_message_for_its_rules() -> None:
    s = retrycore.RetryPolicy.from_dict(dict(GO_RULES, max_attempts=3)).session(draws=[0.5, 0.5])
    s.before_attempt(now=0.0)
    d = s.on_failure(Counting(), now=0.0)
    assert isinstance(d, retrycore.GiveUp) and d.reason == "not_retryable"


def test_a_given_message_keyword_is_used_and_clipped() -> None:
    p = retrycore.RetryPolicy.from_dict(GO_RULES)
    assert retrycore.classify(policy=p, error_names=["url.Error"], message="x: unsupported protocol scheme").retry == (
        "never"
    )
    limit = retrycore.LIMITS["max_message_bytes"]
    assert limit == 8192
    # Past the limit the message is cut: a substring beyond it no longer matches.
    tail = "a" * limit + " unsupported protocol scheme"
    assert retrycore.classify(policy=p, error_names=["url.Error"], message=tail).retry == "always"
    assert code_of(lambda: retrycore.classify(message=3)) == ("invalid_type", "message")


def test_a_message_that_cannot_be_read_is_no_message() -> None:
    class Broken(Exception):
        def __str__(self) -> str:
            raise RuntimeError("no")

    p = retrycore.RetryPolicy.from_dict(GO_RULES)
    assert retrycore.classify(Broken(), policy=p).retry == "always"


def test_breaker_counting_rules_read_the_message() -> None:
    b = retrycore.CircuitBreaker(
        {"minimum_number_of_calls": 1, "sliding_window_size": 1, "count": [{"message": "quota", "count": "ignored"}]}
    )

    class Quota(Exception):
        def __str__(self) -> str:
            return "daily quota reached"

    b.record_without_permit(Quota(), now=0.0)
    assert b.state == "closed"
    b.record_without_permit(RuntimeError("boom"), now=0.0)
    assert b.state == "open"


# ---------------------------------------------------------------- retryable / should_retry


def test_retryable_keyword_true_or_throttling() -> None:
    v = retrycore.classify(status=400, method="POST", retryable={"throttling": True})
    assert (v.category, v.retry, v.retryable) == ("overloaded", "always", True)
    v = retrycore.classify(status=400, retryable=True)
    assert (v.category, v.retryable) == ("server_error", True)
    assert retrycore.classify(status=400, retryable=False).retryable is False
    assert retrycore.classify({"status": 400, "retryable": {"throttling": False}}).category == "server_error"


def test_retryable_refuses_other_shapes() -> None:
    assert code_of(lambda: retrycore.classify(retryable=1)) == ("invalid_type", "retryable")
    assert code_of(lambda: retrycore.classify(retryable={"throttle": True})) == ("unknown_key", "retryable.throttle")
    assert code_of(lambda: retrycore.classify(retryable={"throttling": "yes"})) == (
        "invalid_type",
        "retryable.throttling",
    )


def test_should_retry_keyword() -> None:
    v = retrycore.classify(error_names=["ECONNRESET"], method="POST", should_retry=True)
    assert (v.retry, v.retryable) == ("always", True)
    v = retrycore.classify(error_names=["ECONNRESET"], method="GET", should_retry=False)
    assert (v.retryable, v.server_declined) == (False, True)
    assert code_of(lambda: retrycore.classify(should_retry=1)) == ("invalid_type", "should_retry")


def test_session_on_failure_takes_the_new_keywords() -> None:
    s = retrycore.RetryPolicy.from_dict({"max_attempts": 3}).session(draws=[0.5, 0.5])
    s.before_attempt(now=0.0)
    d = s.on_failure(now=0.0, error_names=["ECONNRESET"], method="GET", should_retry=False)
    assert isinstance(d, retrycore.GiveUp) and d.reason == "server_declined"


class APIConnectionError(Exception):
    """stripe-python's shape: `should_retry` set by the constructor."""

    def __init__(self, message: str, should_retry: bool = False) -> None:
        super().__init__(message)
        self.should_retry = should_retry


class CallError(Exception):
    """smithy-python's shape: dataclass fields with class-level defaults."""

    is_retry_safe: Any = None
    is_throttling_error = False


def test_stripe_should_retry_attribute() -> None:
    e = ConnectionResetError(104, "reset")
    try:
        raise APIConnectionError("conn", should_retry=True) from e
    except APIConnectionError as x:
        v = retrycore.classify(x, method="POST")
    assert (v.category, v.retryable) == ("connection_lost", True)
    v = retrycore.classify(APIConnectionError("conn", should_retry=False), error_names=["ECONNRESET"], method="GET")
    assert (v.retryable, v.server_declined) == (False, True)
    # A keyword given beside the exception wins.
    v = retrycore.classify(APIConnectionError("c"), error_names=["ECONNRESET"], method="GET", should_retry=True)
    assert v.retryable is True


def test_smithy_python_call_error_attributes() -> None:
    class Throttled(CallError):
        is_retry_safe = True
        is_throttling_error = True

    class Safe(CallError):
        def __init__(self) -> None:
            super().__init__()
            self.is_retry_safe = True

    assert retrycore.classify(Throttled(), status=400, method="POST").category == "overloaded"
    v = retrycore.classify(Safe(), status=400, method="POST")
    assert (v.category, v.retryable) == ("server_error", True)
    # Not a bool, or not safe: no trait.
    e = CallError()
    e.is_retry_safe = 1
    assert retrycore.classify(e, status=400).retryable is False
    e.is_retry_safe = False
    assert retrycore.classify(e, status=400).retryable is False


# ---------------------------------------------------------------- budget acquire / release


def test_token_bucket_acquire_and_release() -> None:
    b = retrycore.Budget.token_bucket(capacity=10)
    assert b.acquire(4, now=0.0) is True
    assert b.level(now=0.0)["tokens"] == 6
    assert b.acquire(7, now=0.0) is False  # not enough: nothing taken
    assert b.level(now=0.0)["tokens"] == 6
    b.release(100, now=0.0)  # up to the capacity
    assert b.level(now=0.0)["tokens"] == 10
    # The raw bucket counts no withdrawal and no refusal.
    assert (b.withdrawals, b.refusals) == (0, 0)


def test_token_bucket_acquire_after_refill() -> None:
    # smithy-rs TokenBucket: tokens refill with time (here 2 per second from 0).
    b = retrycore.Budget.token_bucket(capacity=10, initial_tokens=0, refill_rate=2.0)
    assert b.acquire(2, now=0.0) is False
    assert b.acquire(2, now=1.0) is True


def test_acquire_and_release_refuse_other_kinds_and_bad_amounts() -> None:
    r = retrycore.Budget.ratio()
    assert code_of(lambda: r.acquire(1, now=0.0)) == ("invalid_state", "kind")
    assert code_of(lambda: r.release(1, now=0.0)) == ("invalid_state", "kind")
    b = retrycore.Budget.token_bucket()
    assert code_of(lambda: b.acquire(-1)) == ("out_of_range", "n")
    assert code_of(lambda: b.release(1.5)) is not None
    assert code_of(lambda: b.acquire(2**32)) == ("out_of_range", "n")


# ---------------------------------------------------------------- a mapping is a document


def test_a_bare_number_in_a_breaker_or_budget_mapping_is_refused() -> None:
    assert code_of(lambda: retrycore.CircuitBreaker({"wait_duration_in_open_state": 10})) == (
        "invalid_duration",
        "wait_duration_in_open_state",
    )
    assert code_of(lambda: retrycore.Budget({"kind": "ratio", "window": 10})) == ("invalid_duration", "window")
    # With keywords beside it, the mapping's numbers are still refused...
    assert code_of(lambda: retrycore.CircuitBreaker({"wait_duration": 10}, minimum_number_of_calls=5)) == (
        "invalid_duration",
        "wait_duration",
    )
    # ...while keyword arguments keep float seconds, and a keyword wins over the mapping's key.
    b = retrycore.CircuitBreaker({"wait_duration_in_open_state": "30s"}, wait_duration_in_open_state=2.5)
    assert b.to_dict()["wait_duration_in_open_state"] == "2.5s"
    assert retrycore.Budget({"kind": "ratio"}, window=10.0).to_dict()["window"] == "10s"
    assert retrycore.Budget({"kind": "ratio", "window": "10s"}).to_dict()["window"] == "10s"


# ---------------------------------------------------------------- the API traps


def test_delay_refuses_a_history_it_is_not_given() -> None:
    # The numbers: polly exponential with jitter, draws 0.5, 0.5.
    p = retrycore.RetryPolicy.profile("polly", backoff="exponential", initial=1.0, jitter="full")
    replayed = p.replay_delays([0.5, 0.5])
    assert p.delay(1, 0.5) == replayed[0]
    assert code_of(lambda: p.delay(2, 0.5)) == ("invalid_combination", "prev")
    assert code_of(lambda: p.delay(2, 0.5, prev=replayed[0])) == ("invalid_combination", "prev")
    d = retrycore.RetryPolicy(backoff="decorrelated", initial=0.1, max_delay=10.0)
    assert code_of(lambda: d.delay(2, 0.5)) == ("missing_field", "prev")
    assert d.delay(2, 0.5, prev=0.3) > 0
    assert d.delay(1, 0.5) > 0
    # Stateless backoffs are unchanged.
    assert retrycore.RetryPolicy(jitter="none", initial=0.1).delay(3, 0.5) == pytest.approx(0.4)


def test_session_draws_never_cycle() -> None:
    s = retrycore.RetryPolicy(max_attempts=4, initial=0.1, jitter="full").session(draws=[0.5])
    s.before_attempt(now=0.0)
    assert isinstance(s.on_failure(now=0.0, status=503, method="GET"), retrycore.Retry)
    s.before_attempt(now=1.0)
    assert code_of(lambda: s.on_failure(now=1.0, status=503, method="GET")) == ("invalid_state", "draws")
    # The session is still in flight: it can be cancelled.
    s.cancel(now=1.0)
    assert s.done


def test_classify_with_a_policy_honours_its_idempotent() -> None:
    e = ConnectionResetError(104, "reset")
    assert retrycore.classify(e, method="POST").retryable is False
    p = retrycore.RetryPolicy(idempotent=True)
    v = retrycore.classify(e, policy=p, method="POST")
    assert (v.safe, v.retryable) == (True, True)
    # The failure's own declaration wins.
    assert retrycore.classify(e, policy=p, method="POST", idempotent=False).retryable is False
    # A policy declaring its calls non-idempotent makes GET unsafe too, as its sessions do.
    assert retrycore.classify(e, policy=retrycore.RetryPolicy(idempotent=False), method="GET").safe is False

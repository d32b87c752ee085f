"""The knobs tenacity users set (issue 15, item 3): ``retry_if_result`` / ``retry_if_exception``
(host predicates whose verdict the core decides on), ``before`` / ``after`` hooks and the give-up
``fallback``. The shared behaviour is in tests/vectors/execute/predicates.json; these are the
Python idioms around it (real functions, async, errors a predicate raises)."""

from __future__ import annotations

import asyncio
from typing import Any, List

import pytest

import retrycore

NO_SLEEP = {"sleep": lambda s: None}


def policy(**kw: Any) -> retrycore.RetryPolicy:
    return retrycore.RetryPolicy(max_attempts=3, initial=0.001, jitter="none", **kw)


def test_retry_if_result_reads_like_tenacity() -> None:
    results = iter([None, None, 42])

    @retrycore.retry(policy(), retry_if_result=lambda r: r is None, **NO_SLEEP)
    def poll() -> Any:
        return next(results)

    assert poll() == 42


def test_retry_if_result_exhausted_raises_retry_error_with_the_value() -> None:
    @retrycore.retry(policy(), retry_if_result=lambda r: r == "pending", **NO_SLEEP)
    def poll() -> str:
        return "pending"

    with pytest.raises(retrycore.RetryError) as e:
        poll()
    assert (e.value.reason, e.value.attempts, e.value.category) == ("attempts_exhausted", 3, "unknown")
    assert e.value.response == "pending"


def test_retry_if_result_with_a_category_keeps_idempotency_gating() -> None:
    calls: List[int] = []

    @retrycore.retry(policy(), method="POST", retry_if_result=lambda r: "server_error", **NO_SLEEP)
    def post() -> str:
        calls.append(1)
        return "half done"

    # server_error waits for idempotency: a POST's value goes back as is, after one call.
    assert post() == "half done" and len(calls) == 1


def test_retry_if_exception_hands_its_verdict_to_the_core() -> None:
    class QuotaError(Exception):
        pass

    seen: List[BaseException] = []
    outcomes = iter([QuotaError("slow down"), "ok"])

    def flaky() -> Any:
        o = next(outcomes)
        if isinstance(o, BaseException):
            raise o
        return o

    def pred(e: BaseException) -> Any:
        seen.append(e)
        return "overloaded" if isinstance(e, QuotaError) else None

    events: List[Any] = []
    f = retrycore.retry(policy(), method="POST", retry_if_exception=pred, on_retry=events.append, **NO_SLEEP)(flaky)
    assert f() == "ok"
    assert [e.category for e in events] == ["overloaded"] and len(seen) == 1


def test_a_predicate_false_stops_retrying_and_the_error_propagates() -> None:
    err = ConnectionResetError("reset")

    @retrycore.retry(policy(), method="GET", retry_if_exception=lambda e: False, **NO_SLEEP)
    def get() -> None:
        raise err

    with pytest.raises(ConnectionResetError) as e:
        get()
    assert e.value is err


def test_an_error_a_predicate_raises_reaches_the_caller() -> None:
    def pred(e: BaseException) -> bool:
        raise LookupError("predicate broke")

    @retrycore.retry(policy(), retry_if_exception=pred, **NO_SLEEP)
    def f() -> None:
        raise ValueError("x")

    with pytest.raises(LookupError, match="predicate broke"):
        f()


def test_a_bad_verdict_is_a_config_error_naming_the_predicate() -> None:
    @retrycore.retry(policy(), retry_if_exception=lambda e: "sometimes", **NO_SLEEP)
    def f() -> None:
        raise ValueError("x")

    with pytest.raises(retrycore.ConfigError) as e:
        f()
    assert (e.value.code, e.value.field) == ("invalid_value", "retry_if_exception")


def test_classify_takes_a_verdict() -> None:
    v = retrycore.classify(status=500, method="POST", verdict=True)
    assert (v.category, v.retry, v.retryable) == ("server_error", "always", True)
    assert retrycore.classify(status=500, method="GET", verdict="never").retryable is False
    with pytest.raises(retrycore.ConfigTypeError) as e:
        retrycore.classify(status=500, verdict=3.5)
    assert (e.value.code, e.value.field) == ("invalid_type", "verdict")


def test_fallback_gets_the_error_it_replaces() -> None:
    got: List[Any] = []

    def fallback(ev: retrycore.RetryEvent) -> str:
        got.append(ev)
        return "cached"

    @retrycore.retry(policy(), method="GET", fallback=fallback, **NO_SLEEP)
    def get() -> None:
        raise TimeoutError("slow")

    assert get() == "cached"
    (ev,) = got
    assert (ev.attempt, ev.reason, ev.category) == (3, "attempts_exhausted", "timeout")
    assert isinstance(ev.exception, retrycore.RetryError) and isinstance(ev.exception.__cause__, TimeoutError)


def test_fallback_answers_a_refused_first_attempt() -> None:
    breaker = retrycore.CircuitBreaker(kind="consecutive", failure_threshold=1)
    p = policy(breaker=breaker)

    @retrycore.retry(p, method="POST", **NO_SLEEP)
    def boom() -> None:
        raise ConnectionResetError("reset")  # a failure for the breaker, never retried on a POST

    with pytest.raises(ConnectionResetError):
        boom()
    assert breaker.state == "open"
    f = retrycore.retry(p, method="GET", fallback=lambda ev: ("stale", ev.attempt, type(ev.exception).__name__), **NO_SLEEP)(
        lambda: "fresh"
    )
    assert f() == ("stale", 0, "CircuitOpenError")


def test_fallback_is_not_called_for_a_cancellation() -> None:
    @retrycore.retry(policy(), fallback=lambda ev: "never", **NO_SLEEP)
    def f() -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        f()


def test_before_and_after_hooks_in_order_sync_and_async() -> None:
    log: List[Any] = []
    hooks = dict(
        before=lambda e: log.append(("before", e.attempt)),
        after=lambda e: log.append(("after", e.attempt, e.category)),
        on_retry=lambda e: log.append(("on_retry", e.retry)),
    )
    outcomes = [ConnectionResetError("x"), "ok"]

    def f() -> Any:
        o = outcomes[sum(1 for x in log if x[0] == "before") - 1]
        if isinstance(o, BaseException):
            raise o
        return o

    want = [("before", 1), ("after", 1, "connection_lost"), ("on_retry", 1), ("before", 2)]
    assert retrycore.retry(policy(), method="GET", **hooks, **NO_SLEEP)(f)() == "ok"
    assert log == want
    log.clear()

    async def g() -> Any:
        return f()

    async def nap(s: float) -> None:
        pass

    assert asyncio.run(retrycore.retry(policy(), method="GET", sleep=nap, **hooks)(g)()) == "ok"
    assert log == want


def test_async_fallback_and_result_predicate() -> None:
    async def poll() -> str:
        return "pending"

    async def nap(s: float) -> None:
        pass

    f = retrycore.retry(policy(), sleep=nap, retry_if_result=lambda r: r == "pending", fallback=lambda ev: ev.reason)(poll)
    # The value is returned as a response would be: retrying ran out, so the fallback answers.
    assert asyncio.run(f()) == "attempts_exhausted"


def test_the_docs_snippet_is_this_tested_file_and_runs() -> None:
    import re
    import runpy
    import textwrap
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    text = (root / "docs/python.md").read_text()
    blocks = [textwrap.dedent(b) for b in re.findall(r"```python\n(.*?)```", text, re.S) if "retry_if_result" in b]
    example = Path(__file__).with_name("knobs_example.py")
    code = example.read_text()
    assert blocks == [code.split("\n", 2)[2]]
    runpy.run_path(str(example))


def test_a_policy_carries_the_knobs_for_call_and_retry() -> None:
    log: List[Any] = []
    p = retrycore.RetryPolicy(
        max_attempts=3, initial=0.001, jitter="none", retry_if_result=lambda r: r == "pending",
        before=lambda e: log.append(e.attempt), fallback=lambda e: "gave up",
    )
    results = iter(["pending", "done"])
    assert p.testing(3).call(lambda: next(results)) == "done"
    assert log == [1, 2]
    assert p.testing(3).call(lambda: "pending") == "gave up"
    # One given to retry() wins over the policy's.
    assert retrycore.retry(p.testing(3), fallback=lambda e: "mine")(lambda: "pending")() == "mine"
    # A reset without a method is not retried by the tables; the policy's predicate vouches for it.
    q = retrycore.RetryPolicy.from_dict({"max_attempts": 2, "initial": "1ms"}, retry_if_exception=lambda e: True)
    calls: List[int] = []

    def reset() -> None:
        calls.append(1)
        raise ConnectionResetError("reset")

    with pytest.raises(retrycore.RetryError):
        q.call(reset)
    assert len(calls) == 2
    with pytest.raises(retrycore.ConfigTypeError):
        retrycore.RetryPolicy(fallback="cached")

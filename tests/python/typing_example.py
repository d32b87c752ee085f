"""A typed use of the retrycore API, checked by `mypy --strict` (make -C bindings-python test)
and run by test_api.py: decorators keep the wrapped signatures, and what the API returns
has precise types."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Dict, List, Optional, Union

import retrycore
from retrycore import CircuitBreaker, RetryPolicy

if TYPE_CHECKING:
    from typing_extensions import assert_type
else:

    def assert_type(value: object, _type: object) -> object:
        return value


policy = RetryPolicy(max_attempts=3, initial=0.0, jitter="none", seed=1)
calls: List[int] = []


@retrycore.retry(policy, idempotent=True, sleep=lambda _s: None)
def fetch(item: str, *, times: int = 1) -> Dict[str, float]:
    session = retrycore.current_attempt()
    assert session is not None
    assert_type(session.key, str)
    calls.append(session.attempt)
    if session.attempt < 2:
        raise ConnectionResetError(104, "reset")
    return {item: 9.99 * times}


price = fetch("book", times=2)
assert_type(price, Dict[str, float])
assert price == {"book": 19.98} and calls == [1, 2]


@retrycore.retry(policy.testing(3))
async def fetch_async(n: int) -> int:
    return n + 1


assert_type(asyncio.run(fetch_async(1)), int)

verdict = retrycore.classify(TimeoutError("slow"), method="GET", headers={"Retry-After": "2"})
category: str = verdict.category  # a Literal union of the core's categories, usable as a str
assert_type(verdict.server_delay, Optional[float])
assert verdict.retryable and verdict.category == "timeout"

breaker = CircuitBreaker(kind="consecutive", failure_threshold=5)


@breaker
def guarded(x: int) -> str:
    return str(x)


assert_type(guarded(3), str)
with breaker:
    pass
acquired = breaker.try_acquire()
if acquired.permit is not None:
    breaker.record(acquired.permit, "success")

budget = retrycore.Budget.token_bucket()
refusal = budget.try_withdraw(category="timeout")
assert_type(refusal, Optional[retrycore.Refusal])
assert refusal is None

session = policy.session(idempotent=True, seed=3)
gate = session.before_attempt(now=0.0)
assert_type(gate, Union[retrycore.Proceed, retrycore.Reject])
decision = session.on_failure(ConnectionResetError(104, "reset"), now=0.1)
if isinstance(decision, retrycore.Retry):
    assert_type(decision.delay, float)

key = retrycore.fingerprint({"order": 1, "items": ["a", "b"]}, method="POST", path="/orders")
assert_type(key, str)
findings = retrycore.lint(policy)
assert_type(findings, List[retrycore.Finding])


@retrycore.retry(policy, sleep=lambda _s: None, method="GET")
def always_slow() -> None:
    raise TimeoutError("slow")


try:
    always_slow()
except retrycore.RetryError as e:
    assert_type(e.reason, str)
    assert_type(e.attempts, int)
    assert e.reason == "attempts_exhausted" and e.attempts == 3
print("typing example ok")

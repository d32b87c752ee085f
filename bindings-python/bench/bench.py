"""Benchmarks of the Python binding against tenacity, stamina, backoff and pybreaker.

Each figure is the median over REPEATS timeit runs, in nanoseconds per call.
Run with `make -C bindings-python bench` (BENCH_ARGS=--quick for a short run).
"""

from __future__ import annotations

import platform
import statistics
import sys
import timeit
from typing import Callable, List, Tuple

import retrycore
from retrycore import _native

QUICK = "--quick" in sys.argv
REPEATS = 5 if QUICK else 15
NUMBER = 20_000 if QUICK else 100_000


def ns(fn: Callable[[], object], number: int = NUMBER) -> float:
    runs = timeit.repeat(fn, number=number, repeat=REPEATS)
    return statistics.median(runs) / number * 1e9


rows: List[Tuple[str, str, float]] = []


def add(group: str, name: str, fn: Callable[[], object], number: int = NUMBER) -> None:
    rows.append((group, name, ns(fn, number)))


# ---------------------------------------------------------------- floors and decisions
policy = retrycore.RetryPolicy(max_attempts=3, seed=1)
native = policy._p
exc = ConnectionResetError(104, "reset")
add("floor", "pyo3 no-op (int, float)", lambda: _native.noop(1, 0.5))
add("floor", "pyo3 no-op (exception)", lambda: _native.noop_obj(exc))
add("decision", "retrycore policy.delay(1, 0.5)", lambda: native.delay(1, 0.5))
exc = ConnectionResetError(104, "reset")
add("decision", "retrycore classify(exception)", lambda: retrycore.classify(exc))
breaker = retrycore.CircuitBreaker()
acquire, record = breaker.try_acquire, breaker.record


def breaker_cycle() -> None:
    a = acquire()
    record(a.permit, "success")


add("decision", "retrycore breaker try_acquire+record", breaker_cycle)
budget = retrycore.Budget.token_bucket(capacity=10**9, retry_cost=0)
add("decision", "retrycore budget try_withdraw", budget.try_withdraw)
body = {"order": 1001, "amount": 12.5, "currency": "EUR", "items": ["a", "b"]}
add("decision", "retrycore fingerprint(small dict)", lambda: retrycore.fingerprint(body, method="POST", path="/charges"))


def ok() -> int:
    return 1


decorated = retrycore.retry(policy)(ok)
add("call ok", "retrycore @retry", decorated)
guarded = breaker(ok)
add("call ok", "retrycore @breaker", guarded)

zero = retrycore.RetryPolicy(max_attempts=3, seed=1).testing(3)
state = {"n": 0}


def flaky() -> int:
    state["n"] += 1
    if state["n"] % 3:
        raise ConnectionResetError(104, "reset")
    return 1


retry_flaky = retrycore.retry(zero, idempotent=True)(flaky)
add("call fails twice", "retrycore @retry (zero sleep)", retry_flaky, NUMBER // 10)

# ---------------------------------------------------------------- peers
try:
    import tenacity

    t_retry = tenacity.Retrying(stop=tenacity.stop_after_attempt(3), wait=tenacity.wait_exponential_jitter())
    rs = tenacity.RetryCallState(t_retry, None, (), {})
    rs.attempt_number = 1
    wait = tenacity.wait_exponential_jitter()
    add("decision", "tenacity wait_exponential_jitter(state)", lambda: wait(rs))
    add("call ok", "tenacity @retry", tenacity.retry(stop=tenacity.stop_after_attempt(3))(ok))
    add("call fails twice", "tenacity @retry (no wait)", tenacity.retry(stop=tenacity.stop_after_attempt(3), wait=tenacity.wait_none())(flaky), NUMBER // 10)
except ImportError:
    pass
try:
    import stamina

    stamina.set_testing(False)
    add("call ok", "stamina @retry", stamina.retry(on=ConnectionResetError, attempts=3)(ok))
    stamina.set_testing(True, attempts=3)
    add("call fails twice", "stamina @retry (testing)", stamina.retry(on=ConnectionResetError, attempts=3)(flaky), NUMBER // 10)
    stamina.set_testing(False)
except ImportError:
    pass
try:
    import backoff

    add("call ok", "backoff @on_exception", backoff.on_exception(backoff.expo, ConnectionResetError, max_tries=3)(ok))
    add("call fails twice", "backoff @on_exception (no wait)",
        backoff.on_exception(backoff.constant, ConnectionResetError, max_tries=3, interval=0, jitter=None)(flaky), NUMBER // 10)
except ImportError:
    pass
try:
    import pybreaker

    pb = pybreaker.CircuitBreaker()
    add("call ok", "pybreaker @breaker", pb(ok))
except ImportError:
    pass

print(f"# {platform.processor() or platform.machine()}, {platform.python_implementation()} {platform.python_version()}, "
      f"{platform.system()} {platform.release()}; median of {REPEATS} runs")
print("| group | what | ns/call |")
print("| --- | --- | ---: |")
for g, name, v in rows:
    print(f"| {g} | {name} | {v:,.0f} |")

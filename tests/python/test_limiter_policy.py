"""A limiter in a policy (docs/limiters.md, "In a policy"): many threads or tasks
through one policy with a bulkhead never run more calls at once than its limit;
a call refused at its first attempt raises LimiterRejectedError; a wait the
limiter reserved is slept before the call, and a cancelled wait gives the
permit back (the next caller waits one period, not two)."""

from __future__ import annotations

import asyncio
import runpy
import threading
import time
from pathlib import Path
from typing import Any, List

import pytest

import retrycore

ROOT = Path(__file__).resolve().parents[2]


def _bulkhead_policy(limit: int) -> retrycore.RetryPolicy:
    return retrycore.RetryPolicy(limiter={"kind": "bulkhead", "max_concurrent": limit}, jitter="none")


def test_many_threads_through_one_policy_never_exceed_its_bulkhead() -> None:
    policy = _bulkhead_policy(3)
    lock = threading.Lock()
    active, peak, done, refused = [0], [0], [], []

    def work() -> str:
        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
        time.sleep(0.002)
        with lock:
            active[0] -= 1
        return "ok"

    decorated = retrycore.retry(policy)(work)

    def call(i: int) -> None:
        try:
            done.append(policy.call(work) if i % 2 else decorated())
        except retrycore.LimiterRejectedError as e:
            assert (e.code, e.reason, e.limiter, e.retry_after) == ("limiter_rejected", "bulkhead_full", "bulkhead", None)
            refused.append(i)

    threads = [threading.Thread(target=call, args=(i,)) for i in range(40)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(done) + len(refused) == 40
    assert 1 <= peak[0] <= 3
    assert done
    # Every slot came back: three calls in a row still pass.
    assert [policy.call(work) for _ in range(3)] == ["ok"] * 3
    c = policy.counters()
    assert c["rejected_total"] == len(refused)
    assert c["retry_exhausted_total"]["limiter_rejected"] == len(refused)


def test_many_tasks_through_one_policy_never_exceed_its_bulkhead() -> None:
    policy = _bulkhead_policy(3)
    active, peak = [0], [0]

    @retrycore.retry(policy)
    async def work(i: int) -> int:
        active[0] += 1
        peak[0] = max(peak[0], active[0])
        await asyncio.sleep(0.001 * (i % 3))
        active[0] -= 1
        return i

    async def main() -> List[Any]:
        return await asyncio.gather(*(work(i) for i in range(100)), return_exceptions=True)

    out = asyncio.run(main())
    passed = [x for x in out if isinstance(x, int)]
    refused = [x for x in out if isinstance(x, retrycore.LimiterRejectedError)]
    assert len(passed) + len(refused) == 100
    assert peak[0] == 3
    assert all(e.reason == "bulkhead_full" for e in refused)

    async def again() -> List[int]:
        return [await work(i) for i in range(3)]

    assert asyncio.run(again()) == [0, 1, 2]


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


_BUCKET = {"kind": "token_bucket", "token_limit": 1, "tokens_per_period": 1, "period": 0.2, "queue_limit": 5}


def test_a_cancelled_task_gives_its_reserved_wait_back() -> None:
    policy = retrycore.RetryPolicy(limiter=_BUCKET)
    clock = _Clock()
    waits: List[float] = []
    parked = asyncio.Event()

    async def sleep(s: float) -> None:
        waits.append(s)
        parked.set()
        await asyncio.Event().wait()  # until cancelled

    @retrycore.retry(policy, clock=clock, sleep=sleep)
    async def call() -> str:
        return "ok"

    async def main() -> None:
        assert await call() == "ok"  # takes the only token
        waiter = asyncio.ensure_future(call())
        await parked.wait()
        assert waits == [pytest.approx(0.2)]
        waiter.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiter
        parked.clear()
        third = asyncio.ensure_future(call())
        await parked.wait()
        third.cancel()
        with pytest.raises(asyncio.CancelledError):
            await third

    asyncio.run(main())
    # The cancelled wait's token came back: the third call waits for the same period, not the next.
    assert waits == [pytest.approx(0.2), pytest.approx(0.2)]


def test_an_interrupted_sleep_gives_its_reserved_wait_back() -> None:
    policy = retrycore.RetryPolicy(limiter=_BUCKET)
    clock = _Clock()
    waits: List[float] = []

    class Stop(BaseException):
        pass

    def sleep(s: float) -> None:
        waits.append(s)
        raise Stop()

    call = retrycore.retry(policy, clock=clock, sleep=sleep)(lambda: "ok")
    assert call() == "ok"
    for _ in range(2):
        with pytest.raises(Stop):
            call()
    assert waits == [pytest.approx(0.2), pytest.approx(0.2)]
    assert policy.counters()["retry_exhausted_total"]["cancelled"] == 2


def test_the_wait_is_slept_before_the_call_and_a_refusal_is_typed() -> None:
    clock = _Clock()
    waits: List[float] = []

    def sleep(s: float) -> None:
        waits.append(s)
        clock.now += s

    policy = retrycore.RetryPolicy(limiter={**_BUCKET, "queue_limit": 1})
    call = retrycore.retry(policy, clock=clock, sleep=sleep)(lambda: clock.now)
    assert call() == 0.0
    assert call() == pytest.approx(0.2)
    assert waits == [pytest.approx(0.2)]
    refusing = retrycore.RetryPolicy(limiter={"kind": "fixed_window", "permit_limit": 1, "window": 1.0})
    once = retrycore.retry(refusing, clock=clock)(lambda: "ok")
    clock.now = 0.25
    assert once() == "ok"
    with pytest.raises(retrycore.LimiterRejectedError) as e:
        once()
    assert (e.value.code, e.value.reason, e.value.limiter) == ("limiter_rejected", "queue_full", "fixed_window")
    assert e.value.retry_after == pytest.approx(0.75)
    assert 'limiter "fixed_window" rejected the call: queue_full; retry after 750ms' == str(e.value)


def test_docs_snippet_runs_and_is_the_docs_text() -> None:
    path = ROOT / "examples" / "limiters" / "policy.py"
    runpy.run_path(str(path), run_name="__main__")
    doc = (ROOT / "docs" / "limiters.md").read_text(encoding="utf-8")
    assert f"```python\n{path.read_text(encoding='utf-8')}```" in doc

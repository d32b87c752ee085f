"""Limiters under concurrency (docs/limiters.md): many threads or tasks on one
bulkhead never exceed its limit; a cancelled wait leaves the queue and gives
its permit back; a wait that runs out raises LimiterRejectedError."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import List

import pytest

import retrycore


def test_many_threads_on_one_bulkhead_never_exceed_its_limit() -> None:
    lim = retrycore.Limiter(kind="bulkhead", max_concurrent=3, max_wait="10s")
    lock = threading.Lock()
    active, peak, done = [0], [0], []

    def work(i: int) -> None:
        with lim.permit():
            with lock:
                active[0] += 1
                peak[0] = max(peak[0], active[0])
            assert lim.in_flight <= 3
            time.sleep(0.001 * (i % 3))
            with lock:
                active[0] -= 1
        done.append(i)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(40)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(done) == 40
    assert peak[0] == 3
    assert lim.state() == {"kind": "bulkhead", "in_flight": 0, "queued": 0}


def test_many_tasks_on_one_bulkhead_never_exceed_its_limit() -> None:
    lim = retrycore.Limiter({"kind": "bulkhead", "max_concurrent": 3, "max_wait": "10s"})
    active, peak = [0], [0]

    async def work(i: int) -> int:
        active[0] += 1
        peak[0] = max(peak[0], active[0])
        await asyncio.sleep(0.001 * (i % 3))
        active[0] -= 1
        return i

    async def main() -> List[int]:
        return await asyncio.gather(*(lim.call_async(work, i) for i in range(100)))

    assert asyncio.run(main()) == list(range(100))
    assert peak[0] == 3
    assert lim.in_flight == 0


def test_a_cancelled_task_leaves_the_queue_and_takes_no_slot() -> None:
    lim = retrycore.Limiter(kind="bulkhead", max_concurrent=1, max_wait="10s")

    async def main() -> None:
        await lim.wait_async()
        waiter = asyncio.ensure_future(lim.wait_async())
        await asyncio.sleep(0)
        assert lim.state()["queued"] == 1
        waiter.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiter
        assert lim.state()["queued"] == 0
        assert lim.release() is None
        assert lim.in_flight == 0

    asyncio.run(main())


def test_a_cancelled_delay_gives_its_token_back() -> None:
    lim = retrycore.Limiter(kind="token_bucket", token_limit=1, tokens_per_period=1, period="60s", queue_limit=5)

    async def main() -> None:
        await lim.wait_async()
        waiter = asyncio.ensure_future(lim.wait_async())
        await asyncio.sleep(0)
        assert lim.state()["queued"] == 1
        waiter.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiter
        assert lim.state()["queued"] == 0

    asyncio.run(main())


def test_a_wait_that_runs_out_raises_limiter_rejected() -> None:
    lim = retrycore.Limiter(kind="bulkhead", max_concurrent=1, max_wait="20ms")
    lim.wait()
    with pytest.raises(retrycore.LimiterRejectedError) as e:
        lim.wait()
    assert isinstance(e.value, retrycore.RetrycoreError)
    assert (e.value.code, e.value.reason, e.value.retry_after) == ("limiter_rejected", "max_wait_exceeded", None)
    assert lim.state()["queued"] == 0
    rate = retrycore.Limiter(kind="fixed_window", permit_limit=1, window="1s")
    rate.wait()
    with pytest.raises(retrycore.LimiterRejectedError) as e:
        rate.wait()
    assert e.value.reason == "queue_full"
    assert e.value.retry_after is not None and 0 < e.value.retry_after <= 1.0


def test_a_release_from_another_thread_wakes_the_oldest_waiter() -> None:
    lim = retrycore.Limiter(kind="bulkhead", max_concurrent=1, max_wait="10s")
    lim.wait()
    order: List[str] = []

    def waiter(name: str) -> None:
        lim.wait()
        order.append(name)

    a = threading.Thread(target=waiter, args=("a",))
    a.start()
    while lim.state()["queued"] < 1:
        time.sleep(0.001)
    b = threading.Thread(target=waiter, args=("b",))
    b.start()
    while lim.state()["queued"] < 2:
        time.sleep(0.001)
    lim.release()
    a.join()
    lim.release()
    b.join()
    assert order == ["a", "b"]

"""Threads sharing one breaker, one budget and one policy (issue 10, item 4).

tests/python/test_api.py already runs 8 threads × 100 000 calls against a
shared *forced-open* breaker and a withdraw-only token bucket (exact rejection
and withdrawal counts). This file covers what that one cannot see: a breaker
that really moves (closed → open → half_open → closed/open, many times over)
while 8 threads acquire and record on it, with no transition lost between the
hook and the breaker; a budget that is withdrawn from and refunded
concurrently, ending exactly where it began; and retries through a shared
policy with exact counters.
"""

from __future__ import annotations

import sys
import threading
import time
from collections import Counter
from typing import Iterator, List, Tuple

import pytest

import retrycore

THREADS, N = 8, 100_000
VALID = {("closed", "open"), ("open", "half_open"), ("half_open", "closed"), ("half_open", "open")}


@pytest.fixture
def busy_switching() -> Iterator[None]:
    """Switch threads every 50 µs instead of 5 ms, so threads interleave between calls."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(5e-5)
    try:
        yield
    finally:
        sys.setswitchinterval(old)


def run(threads: List[threading.Thread], limit: float = 120.0) -> None:
    for t in threads:
        t.start()
    deadline = time.monotonic() + limit
    for t in threads:
        t.join(max(0.0, deadline - time.monotonic()))
    assert not any(t.is_alive() for t in threads), "deadlock: a thread did not finish"


def conserved(transitions: List[Tuple[str, str]], initial: str, final: str) -> bool:
    """No lost transition: per state, entries − exits = [final] − [initial], whatever the order
    in which the hooks of different threads ran."""
    flow: Counter[str] = Counter()
    for a, b in transitions:
        flow[a] -= 1
        flow[b] += 1
    flow[final] -= 1
    flow[initial] += 1
    return all(v == 0 for v in flow.values())


def test_eight_threads_share_a_moving_breaker_and_a_refunded_budget(
    busy_switching: None, capsys: pytest.CaptureFixture[str]
) -> None:
    hooked: List[Tuple[str, str]] = []
    breaker = retrycore.CircuitBreaker(
        kind="count_based",
        minimum_number_of_calls=10,
        sliding_window_size=20,
        failure_rate_threshold=50,
        wait_duration_in_open_state=0.001,
        permitted_number_of_calls_in_half_open_state=3,
        on_state_change=lambda t: hooked.append((t.from_state, t.to_state)),  # list.append: atomic
    )
    budget = retrycore.Budget.token_bucket()  # 500 tokens, a server_error retry costs 5
    capacity = budget.level()["tokens"]
    results: List[Tuple[int, int, int, int, int]] = []
    lock = threading.Lock()

    def work(seed: int) -> None:
        acquire, record, withdraw, refund = breaker.try_acquire, breaker.record, budget.try_withdraw, budget.on_success
        permitted = rejected = returned = withdrawn = refused = 0
        for i in range(N):
            a = acquire()
            if a.transition is not None:
                returned += 1
            if a.permit is not None:
                permitted += 1
                # Outages of 300 calls every 1000: the breaker opens, probes and closes again.
                failing = (i + seed * 137) % 1000 < 300
                if record(a.permit, "failure" if failing else "success") is not None:
                    returned += 1
            else:
                rejected += 1
            if withdraw("server_error") is None:
                withdrawn += 1
                refund(retry_cost=5)  # the retry succeeded: its cost comes back
            else:
                refused += 1
        with lock:
            results.append((permitted, rejected, returned, withdrawn, refused))

    run([threading.Thread(target=work, args=(k,)) for k in range(THREADS)])
    permitted, rejected, returned, withdrawn, refused = (sum(r[i] for r in results) for i in range(5))
    # Exact counts: every call was admitted or refused, and the breaker counted the same refusals.
    assert permitted + rejected == THREADS * N
    assert breaker.rejections == rejected
    assert rejected > 0
    # No transition lost: each one seen by the hook is a valid step, the flow is conserved
    # from `closed` to the final state, and the calls' own return values saw the same number
    # (here a call causes at most one transition: no half-open time limit is reached).
    assert len(hooked) >= 10, hooked[:5]
    assert set(hooked) <= VALID, set(hooked) - VALID
    assert conserved(hooked, "closed", breaker.state), Counter(hooked)
    assert returned == len(hooked)
    assert {("closed", "open"), ("open", "half_open"), ("half_open", "closed")} <= set(hooked)
    # The budget: at most 8 × 5 tokens out at once, so never refused, and back to full.
    assert refused == 0 and budget.refusals == 0
    assert withdrawn == budget.withdrawals == THREADS * N
    assert budget.level()["tokens"] == capacity
    with capsys.disabled():
        print(
            f"\n[concurrency python] {THREADS} threads x {N}: permitted {permitted}, rejected {rejected}, "
            f"transitions {len(hooked)} {dict(Counter(f'{a}->{b}' for a, b in hooked))}, "
            f"budget withdrawals {withdrawn}, refusals {refused}, tokens {budget.level()['tokens']:g}/{capacity:g}"
        )


def test_eight_threads_retry_through_one_policy_with_exact_counters(busy_switching: None) -> None:
    ops = 5_000
    # Every operation fails once (a reset, retried: idempotent) and then succeeds. The
    # failure rate of any window stays ≤ 54 % (each thread alternates), so the breaker
    # (threshold 75 %) stays closed and every count is exact.
    policy = retrycore.RetryPolicy(
        max_attempts=3,
        breaker={"kind": "count_based", "failure_rate_threshold": 75},
        budget={"kind": "token_bucket"},
    ).testing(3)
    transitions: List[object] = []

    @retrycore.retry(policy, idempotent=True, on_state_change=transitions.append)
    def call(state: List[int]) -> int:
        state[0] += 1
        if state[0] % 2 == 1:
            raise ConnectionResetError(104, "reset")
        return 1

    def work() -> None:
        state = [0]
        for _ in range(ops):
            assert call(state) == 1

    run([threading.Thread(target=work) for _ in range(THREADS)])
    total = THREADS * ops
    c = policy.counters()
    assert c["operations_total"] == total
    assert c["retry_attempts_total"] == 2 * total
    assert c["retry_success_after_retry_total"] == total
    assert c["retries_by_number"][0] == total
    assert c["success_first_try_total"] == 0
    assert sum(c["retry_exhausted_total"].values()) == 0
    assert policy.breaker is not None and policy.breaker.state == "closed" and transitions == []
    assert policy.breaker.totals()["calls"] <= 100  # the window, bounded
    budget = policy.budgets[0]
    assert budget.withdrawals == total and budget.refusals == 0
    assert budget.level()["tokens"] == 500  # every retry's cost refunded by its success

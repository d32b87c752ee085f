"""Issue 17: a decorated call whose first attempt nothing gates (no breaker, no
budgets; the default clock, a minted key) begins without a session and makes
one only when needed (a failure, a non-ok response, a cancellation, or a
caller reading ``current_attempt()``). Seeded runs must draw and count exactly
as calls that go through a session from the start: here the same sequence of
calls runs on two policies with one seed, one through the fast path and one
through the session path (an injected clock takes it), and their sleeps,
sessions and counters must agree."""

from __future__ import annotations

import asyncio
import contextvars
import pickle
import sys
import threading
import time
import types
from typing import Any, Callable, Dict, List, Optional

import pytest

import retrycore
from retrycore import _context

DOC = {"max_attempts": 3, "jitter": "full", "seed": 7, "attempt_timeout": "2s"}


class Response:
    """A non-ok response (retried like a failure, docs/sessions.md)."""

    status_code = 503
    headers: Dict[str, str] = {}


def reset() -> object:
    raise ConnectionResetError(104, "reset")


def interrupt() -> object:
    raise KeyboardInterrupt


# Each call is a list of attempt outcomes: "ok", "read" (ok after reading the
# session), a callable that raises, or a response object returned.
CALLS: List[List[Any]] = [
    ["ok"],
    [reset, "ok"],
    ["ok"],
    ["read"],
    [Response(), "ok"],
    ["ok"],
    [reset, reset, reset],
    [interrupt],
    ["read", "ok"],
    [reset, "read"],
    ["ok"],
]


def run(fast: bool) -> Dict[str, Any]:
    policy = retrycore.RetryPolicy(**DOC)
    sleeps: List[float] = []
    seen: List[Any] = []
    clock: Optional[Callable[[], float]] = None if fast else time.monotonic
    for outcomes in CALLS:
        script = iter(outcomes)

        def attempt() -> object:
            o = next(script)
            counters = policy.counters()
            seen.append((counters["operations_total"], counters["retry_attempts_total"]))
            if o in ("ok", "read"):
                if o == "read":
                    s = retrycore.current_attempt()
                    assert s is not None and s is retrycore.current_attempt()
                    seen.append((s.attempt, s.max_attempts, s.timeout, s.done, s.key_minted, len(s.key)))
                return "done"
            if callable(o):
                return o()
            return o

        wrapped = retrycore.retry(policy, sleep=sleeps.append, clock=clock, idempotent=True)(attempt)
        try:
            seen.append(wrapped())
        except (retrycore.RetryError, KeyboardInterrupt) as e:
            seen.append(type(e).__name__)
        assert retrycore.current_attempt() is None
    counters = policy.counters()
    durations = counters.pop("operation_duration_seconds")
    return {
        "sleeps": sleeps,
        "seen": seen,
        "counters": counters,
        "counts": {k: v["count"] for k, v in durations.items()},
        "next_delays": policy.sample_delays(1, 1),
    }


def test_a_first_attempt_without_a_session_draws_and_counts_as_one_with_a_session() -> None:
    fast, slow = run(fast=True), run(fast=False)
    assert fast == slow
    assert len(fast["sleeps"]) == 5 and all(s > 0 for s in fast["sleeps"])
    assert fast["counters"]["success_first_try_total"] == 6
    assert fast["counters"]["retry_exhausted_total"]["cancelled"] == 1


def test_the_generator_takes_one_draw_per_call_first_try_successes_included() -> None:
    # Two policies with one seed: n fast first-try successes, then a retried call, against
    # the same through sessions taken by hand (one u64 of the generator each).
    def delay_after(successes: int, fast: bool) -> float:
        policy = retrycore.RetryPolicy(**DOC)
        sleeps: List[float] = []
        for _ in range(successes):
            if fast:
                retrycore.retry(policy)(lambda: 1)()
            else:
                policy.session()
        state = {"n": 0}

        def flaky() -> int:
            state["n"] += 1
            if state["n"] == 1:
                raise ConnectionResetError(104, "reset")
            return 1

        retrycore.retry(policy, sleep=sleeps.append, idempotent=True)(flaky)()
        return sleeps[0]

    got = [delay_after(n, True) for n in range(4)]
    assert got == [delay_after(n, False) for n in range(4)]
    assert len(set(got)) == 4


def test_a_session_read_during_the_call_is_the_one_that_goes_on() -> None:
    policy = retrycore.RetryPolicy(**DOC)
    sessions: List[Any] = []

    def attempt() -> int:
        s = retrycore.current_attempt()
        sessions.append((s, s.key if s is not None else None))
        if len(sessions) == 1:
            raise ConnectionResetError(104, "reset")
        return 1

    assert retrycore.retry(policy, sleep=lambda _: None, idempotent=True)(attempt)() == 1
    (first, key1), (second, key2) = sessions
    assert first is second and key1 == key2
    assert second.attempt == 2 and second.done


@pytest.mark.parametrize("fast", [True, False])
def test_a_breaker_or_budget_still_gates_the_first_attempt(fast: bool) -> None:
    breaker = retrycore.CircuitBreaker(kind="consecutive", failure_threshold=1)
    breaker.transition_to("open")
    policy = retrycore.RetryPolicy(max_attempts=2, seed=1, breaker=breaker)
    with pytest.raises(retrycore.CircuitOpenError):
        retrycore.retry(policy, clock=None if fast else time.monotonic)(lambda: 1)()
    assert policy.counters()["rejected_total"] == 1


@retrycore.retry
def module_level(x: int) -> int:
    """Doc."""
    return x + 1


class Holder:
    @retrycore.retry
    def method(self, k: int) -> Any:
        return (self, k)


def test_a_decorated_function_is_called_without_a_python_frame_yet_behaves_as_one() -> None:
    # `functools.partial(_native.run, runner, fn)`: bound as a method, pickled by name, wrapped.
    h = Holder()
    assert h.method(1) == (h, 1) and Holder.method(h, 2) == (h, 2)
    assert pickle.loads(pickle.dumps(module_level)) is module_level
    assert (module_level.__name__, module_level.__doc__, module_level.__wrapped__(1), module_level(1)) == (
        "module_level", "Doc.", 2, 2)


# current_attempt(): a sync call keeps its session per thread in the native module (no
# ContextVar set, unless greenlets may switch); an async call sets the ContextVar. Both
# are read, and the innermost call wins (docs/python.md, "Retrying").


def sessions_of(fn: Callable[[], Any]) -> Callable[[], Any]:
    """`fn` decorated; it returns (its own session, what `fn` returned)."""

    def attempt() -> Any:
        return retrycore.current_attempt(), fn()

    return retrycore.retry(retrycore.RetryPolicy(max_attempts=2))(attempt)


def test_nested_sync_calls_each_see_their_own_session() -> None:
    seen: List[Any] = []
    inner = sessions_of(lambda: None)

    def outer_body() -> Any:
        got = inner()
        seen.append(retrycore.current_attempt())
        return got

    outer_session, (inner_session, _) = sessions_of(outer_body)()
    assert outer_session is not None and inner_session is not None and outer_session is not inner_session
    assert seen == [outer_session]
    assert retrycore.current_attempt() is None
    # The sync path sets no ContextVar (greenlet is not loaded here).
    assert "greenlet" not in sys.modules
    assert sessions_of(_context.CURRENT.get)()[1] is None


def test_an_exception_leaves_no_session_behind() -> None:
    def boom() -> Any:
        raise ValueError("not retried")

    with pytest.raises(ValueError):
        sessions_of(boom)()
    assert retrycore.current_attempt() is None


def test_threads_each_see_their_own_call_and_a_new_thread_none() -> None:
    barrier = threading.Barrier(2)
    got: Dict[str, Any] = {}

    def in_thread(name: str) -> None:
        def body() -> Any:
            barrier.wait(5)  # both calls running at once
            inside: List[Any] = []
            t = threading.Thread(target=lambda: inside.append(retrycore.current_attempt()))
            t.start()
            t.join()
            return retrycore.current_attempt(), inside[0]

        got[name] = sessions_of(body)()

    threads = [threading.Thread(target=in_thread, args=(n,)) for n in "ab"]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    (sa, (sa2, none_a)), (sb, (sb2, none_b)) = got["a"], got["b"]
    assert sa is sa2 and sb is sb2 and sa is not sb and none_a is None and none_b is None


def test_async_calls_and_sync_calls_inside_them() -> None:
    policy = retrycore.RetryPolicy(max_attempts=2)

    async def body() -> Any:
        mine = retrycore.current_attempt()
        sync_session, _ = sessions_of(lambda: None)()  # a sync call inside the async one
        await asyncio.sleep(0)
        return mine, sync_session, retrycore.current_attempt()

    async def main() -> Any:
        return await asyncio.gather(retrycore.retry(policy)(body)(), retrycore.retry(policy)(body)())

    (a, a_sync, a_after), (b, b_sync, b_after) = asyncio.run(main())
    assert a is not None and b is not None and a is not b
    assert a_after is a and b_after is b
    assert a_sync not in (None, a, b) and b_sync not in (None, a, b, a_sync)


def test_an_async_call_in_a_loop_run_inside_a_sync_call() -> None:
    async def body() -> Any:
        mine = retrycore.current_attempt()
        # A thread the async call's context is copied into sees the async call.
        return mine, await asyncio.to_thread(retrycore.current_attempt)

    def sync_body() -> Any:
        got = asyncio.run(retrycore.retry(retrycore.RetryPolicy(max_attempts=2))(body)())
        return got, retrycore.current_attempt()

    outer, ((inner, in_thread), after) = sessions_of(sync_body)()
    assert inner is not None and inner is not outer and in_thread is inner and after is outer


def test_a_context_copied_into_another_thread_no_longer_sees_a_sync_call() -> None:
    # The documented change (docs/python.md, "Retrying"): a sync call's session is the
    # thread's, not the context's.
    def body() -> Any:
        ctx = contextvars.copy_context()
        out: List[Any] = []
        t = threading.Thread(target=lambda: out.append(ctx.run(retrycore.current_attempt)))
        t.start()
        t.join()

        async def nested() -> Any:
            return await asyncio.to_thread(retrycore.current_attempt)

        return out[0], asyncio.run(nested())

    session, (copied, to_thread) = sessions_of(body)()
    assert session is not None and copied is None and to_thread is None


def test_with_greenlet_loaded_a_sync_call_sets_the_context_var(monkeypatch: pytest.MonkeyPatch) -> None:
    # greenlet is not in the test venv: a module of that name in sys.modules stands for it.
    monkeypatch.setitem(sys.modules, "greenlet", types.ModuleType("greenlet"))
    seen: List[Any] = []

    def body() -> Any:
        seen.append(_context.CURRENT.get())
        ctx = contextvars.copy_context()
        out: List[Any] = []
        t = threading.Thread(target=lambda: out.append(ctx.run(retrycore.current_attempt)))
        t.start()
        t.join()
        return out[0]

    inner = sessions_of(lambda: retrycore.current_attempt())
    session, copied = sessions_of(body)()
    assert seen[0] is not None and seen[0][0] is session
    assert copied is session  # the ContextVar path: the copied context sees the call
    (s, got) = inner()
    assert got is s
    assert _context.CURRENT.get() is None and retrycore.current_attempt() is None


def test_a_reused_acquired_is_never_one_a_caller_still_holds() -> None:
    # try_acquire() hands the last Acquired back, its permit rewritten, only when nothing
    # else holds it or its permit: what a caller keeps never changes.
    b = retrycore.CircuitBreaker()
    kept = b.try_acquire(1.0)
    again = b.try_acquire(2.0)
    assert again is not kept and (kept.permit.started, again.permit.started) == (1.0, 2.0)
    permit = b.try_acquire(3.0).permit
    other = b.try_acquire(4.0)
    assert other.permit is not permit and (permit.started, other.permit.started) == (3.0, 4.0)
    # Nothing held: the same object comes back, with the new permit's parts.
    first_id = id(b.try_acquire(5.0))
    a = b.try_acquire(6.0)
    assert id(a) == first_id and a.permit.started == 6.0 and not a.permit.trial and a.state == "closed"
    assert b.record(a.permit, "success", 6.5) is None and b.totals()["calls"] == 1


def test_a_trial_permit_is_never_a_reused_closed_one() -> None:
    b = retrycore.CircuitBreaker(kind="consecutive", failure_threshold=1, wait_duration_in_open_state="1s")
    b.record(b.try_acquire(0.0).permit, "failure", 0.0)
    assert b.state == "open"
    a = b.try_acquire(10.0)
    assert a.permitted and a.trial and a.permit.trial and a.state == "half_open" and a.transition is not None
    assert b.record(a.permit, "success", 10.5) is not None and b.state == "closed"
    c = b.try_acquire(11.0)
    assert c.permitted and not c.trial and not c.permit.trial and c.state == "closed"

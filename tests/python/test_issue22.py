"""One regression test per item of issue 22 ("No hang, no leak, no wrong wait") that
concerns the Python binding, each named after its item. Cases that crashed or hung the
process before the fix run in a child process (_isolated.py)."""

from __future__ import annotations

import asyncio
import os
import types
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Any, Iterator, List

import pytest

import _isolated
import retrycore
from retrycore import _native

MAX_ITEMS = retrycore.LIMITS["max_items"]


def code_of(f: Any) -> Any:
    try:
        f()
    except retrycore.RetrycoreError as e:
        return (e.code, e.field)
    return None


# ---------------------------------------------------------------- item 1


def test_item1_error_built_under_a_lock_does_not_hang_other_threads() -> None:
    """The issue's reproducer: one thread calls on_success() on a session not in flight (and
    a refused transition) in a loop; others read session.attempt and call try_acquire()."""
    got = _isolated.run(
        """
        import sys, threading, time
        sys.setswitchinterval(1e-6)
        import retrycore
        s = retrycore.RetryPolicy().session()
        b = retrycore.CircuitBreaker(kind="consecutive")
        stop = time.monotonic() + 1.0
        n = [0, 0]
        def provoke():
            while time.monotonic() < stop:
                for f in (s.on_success, lambda: b.transition_to("half_open")):
                    try:
                        f()
                    except retrycore.StateError:
                        n[0] += 1
        def read():
            while time.monotonic() < stop:
                s.attempt; b.try_acquire(); n[1] += 1
        ts = [threading.Thread(target=provoke)] + [threading.Thread(target=read) for _ in range(3)]
        for t in ts: t.start()
        for t in ts: t.join()
        report(n)
        """,
        timeout=20,
    )
    assert got[0] > 0 and got[1] > 0


# ---------------------------------------------------------------- item 3


class Endless(list):  # type: ignore[type-arg]
    def __iter__(self) -> Iterator[Any]:
        while True:
            yield 0.5


def test_item3_endless_iterables_are_too_large_not_an_abort() -> None:
    got = _isolated.run(
        """
        import collections.abc
        import retrycore
        class Endless(list):
            def __iter__(self):
                while True:
                    yield 0.5
        class EndlessMapping(collections.abc.Mapping):
            def __getitem__(self, k):
                return 1
            def __len__(self):
                return 1
            def __iter__(self):
                n = 0
                while True:
                    n += 1
                    yield f"k{n}"
        p = retrycore.RetryPolicy()
        out = []
        for f in (lambda: p.replay_delays(Endless()), lambda: p.session(draws=Endless()),
                  lambda: retrycore.fingerprint({"a": Endless()}, operation="op"),
                  lambda: retrycore.canonicalize(Endless()),
                  lambda: retrycore.classify(error_names=Endless()), lambda: retrycore.classify(headers=Endless()),
                  lambda: retrycore.RetryPolicy(budgets=Endless()),
                  lambda: retrycore.RecordConfig(release_categories=Endless()),
                  lambda: retrycore.CircuitBreaker(EndlessMapping()),
                  lambda: retrycore.Budget({"kind": "ratio"}, labels=EndlessMapping()),
                  lambda: retrycore.RetryPolicy.from_dict({"classification": {"rules": Endless()}})):
            try:
                f()
                out.append(None)
            except retrycore.RetrycoreError as e:
                out.append(e.code)
        report(out)
        """,
        timeout=60,
    )
    assert got == ["too_large"] * len(got), got
    # A plain list past the limit is refused before it is walked; at the limit it is taken.
    p = retrycore.RetryPolicy(initial=0.0, jitter="none")
    assert code_of(lambda: p.replay_delays([0.5] * (MAX_ITEMS + 1))) == ("too_large", "draws")
    assert len(p.replay_delays([0.5] * MAX_ITEMS)) == MAX_ITEMS
    # A mapping that is not a dict is read through its items(), like a dict.
    b = retrycore.CircuitBreaker(types.MappingProxyType({"kind": "consecutive", "failure_threshold": 3}))
    assert b.to_dict()["failure_threshold"] == 3


# ---------------------------------------------------------------- item 4


def test_item4_a_dict_mutated_during_conversion_gives_no_panic() -> None:
    d: dict = {}

    class Mutating(int):
        def __float__(self) -> float:  # called for ints past 2**53 before the fix
            d.clear()
            d.update({str(i): i for i in range(64)})
            return 1.0

    class MutList(list):  # type: ignore[type-arg]
        def __iter__(self) -> Iterator[Any]:
            d.clear()
            d.update({str(i): i for i in range(64)})
            return iter([1])

    for value in (Mutating(2**60), MutList()):
        d.clear()
        d.update({"a": value, "b": 1, "c": 2})
        try:
            retrycore.fingerprint(d, operation="op")
            retrycore.canonicalize(d)
            d.update({"a": value})
            retrycore.RetryPolicy.from_dict({"name": "x", "labels": d})
        except retrycore.RetrycoreError:
            pass
        except BaseException as e:  # PanicException is a BaseException
            pytest.fail(f"{type(e).__module__}.{type(e).__name__}: {e}")
    # The int subclass's own methods are never called: its value is read as is.
    assert retrycore.canonicalize([Mutating(2**60)]) == retrycore.canonicalize([2**60])


# ---------------------------------------------------------------- item 5


def test_item5_delay_past_time_sleep_range_is_slept_in_parts() -> None:
    # The default sleep: time.sleep, replaced in a child before the first retry looks it up.
    got = _isolated.run(
        """
        import time
        calls = []
        real = time.sleep
        def fake(s):
            if s > 86_400:
                real(s)  # before the fix: one call of 1e10 s, which time.sleep refuses (OverflowError)
            calls.append(s)
        time.sleep = fake
        import retrycore
        p = retrycore.RetryPolicy(max_attempts=2, initial=1e10, max_delay=1e10, jitter="none")
        n = [0]
        @retrycore.retry(p, idempotent=True)
        def f():
            n[0] += 1
            if n[0] == 1:
                raise ConnectionResetError()
            return "ok"
        report([f(), len(calls), max(calls), sum(calls)])
        """,
        timeout=30,
    )
    assert got[0] == "ok"
    assert got[2] <= 86_400.0 and got[1] >= 1e10 / 86_400
    assert got[3] == pytest.approx(1e10)


def test_item5_async_delay_past_sleep_range_is_slept_in_parts(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: List[float] = []

    async def fake(s: float) -> None:
        calls.append(s)

    monkeypatch.setattr(asyncio, "sleep", fake)
    p = retrycore.RetryPolicy(max_attempts=2, initial=1e10, max_delay=1e10, jitter="none")
    n = [0]

    @retrycore.retry(p, idempotent=True)
    async def f() -> str:
        n[0] += 1
        if n[0] == 1:
            raise ConnectionResetError()
        return "ok"

    assert asyncio.run(f()) == "ok"
    assert max(calls) <= 86_400.0 and sum(calls) == pytest.approx(1e10)


def test_item5_a_real_long_sleep_waits_instead_of_raising_overflow() -> None:
    code = (
        "import retrycore\n"
        "p = retrycore.RetryPolicy(max_attempts=2, initial=1e10, max_delay=1e10, jitter='none')\n"
        "@retrycore.retry(p, idempotent=True)\n"
        "def f():\n"
        "    raise ConnectionResetError()\n"
        "print('sleeping', flush=True)\n"
        "f()\n"
    )
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "sleeping"
        time.sleep(0.5)
        assert child.poll() is None, child.stderr.read() if child.stderr else ""  # still sleeping: no OverflowError
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()


def test_item5_a_custom_sleep_gets_the_whole_delay() -> None:
    slept: List[float] = []
    p = retrycore.RetryPolicy(max_attempts=2, initial=1e10, max_delay=1e10, jitter="none")
    n = [0]

    @retrycore.retry(p, idempotent=True, sleep=slept.append)
    def f() -> int:
        n[0] += 1
        if n[0] == 1:
            raise ConnectionResetError()
        return 1

    assert f() == 1 and slept == [1e10]


# ---------------------------------------------------------------- item 6


def test_item6_a_raising_state_hook_warns_and_loses_no_trial_permit() -> None:
    def hook(t: Any) -> None:
        raise ValueError(f"hook failed on {t.from_state}->{t.to_state}")

    b = retrycore.CircuitBreaker(
        kind="consecutive",
        failure_threshold=1,
        wait_duration_in_open_state=0.0,
        max_wait_duration_in_half_open_state=0.0,
        permitted_number_of_calls_in_half_open_state=1,
        on_state_change=hook,
    )
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        a = b.try_acquire(now=1.0)
        assert a.permit is not None
        b.record(a.permit, "failure", now=1.0)  # closed -> open: the hook raises
        assert b.state == "open"
        a = b.try_acquire(now=2.0)  # open -> half_open: the hook raises again
        assert a.permitted and a.trial and a.permit is not None, a
        assert b.record(a.permit, "success", now=2.0) is not None  # half_open -> closed
        assert b.state == "closed"
    assert {type(x.message) for x in w} == {RuntimeWarning} and len(w) == 3
    assert "on_state_change" in str(w[0].message) and "ValueError" in str(w[0].message)


def test_item6_raising_retry_hooks_change_nothing() -> None:
    def run(hook: Any) -> Any:
        budget = retrycore.Budget.token_bucket()
        p = retrycore.RetryPolicy(max_attempts=3, initial=0.0, jitter="none", budget=budget)
        n = [0]

        @retrycore.retry(p, idempotent=True, on_retry=hook, on_give_up=hook)
        def f() -> int:
            n[0] += 1
            if n[0] < 3:
                raise ConnectionResetError()
            return n[0]

        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            out = f()
        return out, budget.level(), budget.withdrawals, len(w)

    def bad(ev: Any) -> None:
        raise RuntimeError("hook")

    good = run(lambda ev: None)
    assert run(bad)[:3] == good[:3] and run(bad)[3] == 2


# ---------------------------------------------------------------- item 12


def test_item12_from_json_never_opens_a_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "policy.json").write_text('{"max_attempts": 2}')
    for text in ("policy.json", str(tmp_path / "policy.json"), "  policy.json"):
        assert code_of(lambda: retrycore.RetryPolicy.from_json(text))[0] == "invalid_json"
    assert retrycore.RetryPolicy.from_file("policy.json").max_attempts == 2
    assert retrycore.RetryPolicy.from_file(tmp_path / "policy.json").max_attempts == 2
    assert retrycore.RetryPolicy.from_json(b'{"max_attempts": 2}').max_attempts == 2
    assert code_of(lambda: retrycore.RetryPolicy.from_json(b"\xff")) == ("invalid_json", "text")
    assert code_of(lambda: retrycore.RetryPolicy.from_json(tmp_path / "policy.json")) == ("invalid_type", "text")
    (tmp_path / "big.json").write_text(" " * (retrycore.LIMITS["max_document_bytes"] + 10) + "{}")
    assert code_of(lambda: retrycore.RetryPolicy.from_file("big.json"))[0] == "too_large"
    with pytest.raises(FileNotFoundError):
        retrycore.RetryPolicy.from_file("missing.json")


# ---------------------------------------------------------------- item 13


@pytest.mark.parametrize("bad", [-1, 2**32, 2**64, 2**1000, -(2**1000)])
def test_item13_counts_are_range_checked_never_wrapped(bad: int) -> None:
    budget = retrycore.Budget.token_bucket()
    before = budget.level()
    assert code_of(lambda: budget.on_success(retry_cost=bad)) == ("out_of_range", "retry_cost")
    assert budget.level() == before
    p = retrycore.RetryPolicy()
    assert code_of(lambda: p.sample_delays(1, bad))[0] == "out_of_range"
    assert code_of(lambda: p.delay(bad, 0.5))[0] == "out_of_range"
    assert code_of(lambda: p.testing(bad))[0] == "out_of_range"
    assert code_of(lambda: retrycore.classify(status=bad))[0] == "out_of_range"
    if bad < 0 or bad >= 2**64:
        assert code_of(lambda: retrycore.Random(bad)) == ("out_of_range", "seed")
        assert code_of(lambda: p.session(seed=bad)) == ("out_of_range", "seed")
    for f in (lambda: budget.on_success(retry_cost=1.0), lambda: budget.on_success(retry_cost=True)):
        assert code_of(f) == ("invalid_type", "retry_cost")


# ---------------------------------------------------------------- item 15


def test_item15_pyo3_converted_arguments_raise_config_type_errors() -> None:
    b = retrycore.CircuitBreaker()
    budget = retrycore.Budget.token_bucket()
    runner = _native.Runner(retrycore.RetryPolicy())
    cases = [
        (lambda: b.record("not a permit"), "permit"),
        (lambda: b.release(5), "permit"),
        (lambda: b.call(lambda: 1, [1]), "args"),
        (lambda: b.call(lambda: 1, (), {1: 2}), "kwargs"),
        (lambda: budget.check(refused=1), "refused"),
        (lambda: budget.on_failure(counts="yes"), "counts"),
        (lambda: budget.on_operation_end(held_retry_slot=0), "held_retry_slot"),
        (lambda: runner.before(5), "session"),
        (lambda: runner.call(5, ()), "func"),
        (lambda: retrycore.fingerprint({}, operation="op", canonical=1), "canonical"),
        (lambda: retrycore.parse_header('"k"', allow_token="no"), "allow_token"),
        (lambda: retrycore.RecordConfig(stripe=1), "stripe"),
        (lambda: retrycore.RecordConfig(release_categories=[1]), "release_categories"),
        (lambda: retrycore.decide(None, "k", "f" * 64, config=5), "config"),
        (lambda: retrycore.RetryPolicy().session(seed="1"), "seed"),
        (lambda: retrycore.RetryPolicy(breaker=5), "breaker"),
        (lambda: retrycore.RetryPolicy(budgets=5), "budgets"),
        (lambda: retrycore.RetryPolicy(budgets=[5]), "budgets[0]"),
        (lambda: retrycore.CircuitBreaker(on_state_change=5), "on_state_change"),
        (lambda: _native.Policy.from_dict({}, kwargs=1), "kwargs"),
        (lambda: retrycore.retry(retrycore.RetryPolicy())(5), "fn"),
    ]
    for f, field in cases:
        with pytest.raises(retrycore.ConfigTypeError) as ei:
            f()
        assert (ei.value.code, ei.value.field) == ("invalid_type", field), (field, ei.value)


def test_item15_an_exception_whose_str_raises_still_gives_retry_error() -> None:
    class Unprintable(ConnectionResetError):
        def __str__(self) -> str:
            raise RuntimeError("no str")

    p = retrycore.RetryPolicy(max_attempts=2, initial=0.0, jitter="none")

    @retrycore.retry(p, idempotent=True)
    def f() -> None:
        raise Unprintable()

    with pytest.raises(retrycore.RetryError) as ei:
        f()
    assert ei.value.reason == "attempts_exhausted" and isinstance(ei.value.__cause__, Unprintable)


# ---------------------------------------------------------------- item 17


@pytest.mark.parametrize("now", [1e308, 2**64, float(2**64), 18_446_744_074.0, float("inf")])
def test_item17_now_past_the_clock_range_is_invalid_time(now: Any) -> None:
    b = retrycore.CircuitBreaker()
    s = retrycore.RetryPolicy().session()
    budget = retrycore.Budget.ratio()
    for f in (lambda: b.try_acquire(now=now), lambda: b.remaining_open(now=now), lambda: s.before_attempt(now=now),
              lambda: budget.level(now=now), lambda: b.snapshot(now=now)):
        assert code_of(f) == ("invalid_time", "now")
    assert b.state == "closed" and b.try_acquire(now=1.0).permitted
    wall = now * 1000 if isinstance(now, float) else now * 10**6
    assert code_of(lambda: b.snapshot(now=1.0, wall_now_ms=wall)) == ("invalid_time", "wall_now_ms")
    assert code_of(lambda: retrycore.classify(headers={"retry-after": "1"}, wall_now_ms=wall))[0] == "invalid_time"

    @retrycore.retry(retrycore.RetryPolicy(), clock=lambda: now)
    def f() -> int:
        return 1

    assert code_of(f) == ("invalid_time", "clock()")


# ---------------------------------------------------------------- item 19


@pytest.mark.parametrize("whole", [2**70, 10**400, -1, -(2**70), 2**34, 18_446_744_074])
def test_item19_bare_number_durations_follow_the_core_rule_as_ints_and_floats(whole: int) -> None:
    """A duration keyword given as an int behaves like the same amount as a float: the
    binding converts both through the core's rule (retrycore::duration::from_secs_f64)."""
    as_float = float(whole) if abs(whole) < 1e308 else (float("inf") if whole > 0 else float("-inf"))

    def outcome(v: Any) -> Any:
        try:
            return retrycore.RetryPolicy(max_delay=v, initial=0.0).to_dict()
        except retrycore.RetrycoreError as e:
            return (e.code, e.field)

    assert outcome(whole) == outcome(as_float)


# ---------------------------------------------------------------- the limits


def test_limits_are_the_cores_table_read_only() -> None:
    assert dict(retrycore.LIMITS) == _native.host_tables()["limits"]
    assert retrycore.LIMITS["max_items"] == 65_536 and retrycore.LIMITS["max_depth"] == 128
    with pytest.raises(TypeError):
        retrycore.LIMITS["max_items"] = 1  # type: ignore[index]

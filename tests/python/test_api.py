"""The Python API: decorators (sync and async, fake sleep), exception mapping,
hooks, breakers, budgets, idempotency helpers, hostile inputs and threads."""

from __future__ import annotations

import asyncio
import errno
import math
import runpy
import socket
import ssl
import threading
import urllib.error
from email.message import Message
from pathlib import Path
from typing import Any, List

import pytest

import retrycore
from retrycore import RetryPolicy

HERE = Path(__file__).resolve().parent


def policy(**kw: Any) -> RetryPolicy:
    kw.setdefault("jitter", "none")
    kw.setdefault("seed", 7)
    return RetryPolicy(**kw)


class FakeSleep:
    def __init__(self) -> None:
        self.calls: List[float] = []

    def __call__(self, s: float) -> None:
        self.calls.append(s)


# ---------------------------------------------------------------- decorator (sync)

def test_retries_with_backoff_then_succeeds_same_key() -> None:
    sleep, keys = FakeSleep(), []

    @retrycore.retry(policy(max_attempts=4, initial=0.1), sleep=sleep, idempotent=True)
    def f(x: int) -> int:
        a = retrycore.current_attempt()
        assert a is not None and a.max_attempts == 4
        keys.append((a.attempt, a.key))
        if a.attempt < 3:
            raise ConnectionResetError(errno.ECONNRESET, "reset")
        return x * 2

    assert f(21) == 42
    assert sleep.calls == [0.1, 0.2]
    assert [k[0] for k in keys] == [1, 2, 3] and len({k[1] for k in keys}) == 1
    assert retrycore.current_attempt() is None
    assert f.__name__ == "f"


def test_gives_up_with_retry_error_and_cause() -> None:
    sleep = FakeSleep()
    p = policy(max_attempts=3, initial=0.01)

    @retrycore.retry(p, sleep=sleep, method="GET")
    def f() -> None:
        raise TimeoutError("slow")

    with pytest.raises(retrycore.RetryError) as ei:
        f()
    e = ei.value
    assert e.reason == "attempts_exhausted" and e.attempts == 3 and e.category == "timeout"
    assert isinstance(e.__cause__, TimeoutError)
    assert e.code == "retry_exhausted"
    # An outer layer never retries it again.
    assert retrycore.classify(e).category == "retry_exhausted"
    assert p.counters()["retry_exhausted_total"]["attempts_exhausted"] == 1


def test_not_retryable_propagates_unchanged() -> None:
    sleep, calls = FakeSleep(), []

    @retrycore.retry(policy(), sleep=sleep)
    def f() -> None:
        calls.append(1)
        raise KeyError("bug")

    with pytest.raises(KeyError):
        f()
    assert calls == [1] and sleep.calls == []


def test_post_timeout_needs_declaration() -> None:
    for kw, attempts in (({}, 1), ({"idempotency_key_sent": True}, 3), ({"idempotent": True}, 3)):
        calls: List[int] = []

        @retrycore.retry(policy(), sleep=FakeSleep(), method="POST", **kw)
        def f() -> None:
            calls.append(1)
            raise TimeoutError()

        with pytest.raises((TimeoutError, retrycore.RetryError)):
            f()
        assert len(calls) == attempts, kw


def test_testing_policy_never_sleeps() -> None:
    sleep = FakeSleep()
    p = RetryPolicy(max_attempts=10, initial=1.0).testing(3)

    @retrycore.retry(p, sleep=sleep, idempotent=True)
    def f() -> None:
        raise ConnectionRefusedError(errno.ECONNREFUSED, "refused")

    with pytest.raises(retrycore.RetryError) as ei:
        f()
    assert ei.value.attempts == 3 and sleep.calls == []


def test_key_function_and_hooks() -> None:
    events: List[Any] = []
    p = policy(max_attempts=2, initial=0.5)

    @retrycore.retry(p, sleep=FakeSleep(), key=lambda order: retrycore.derive_key(order, "charge", "v1"),
                     idempotency_key_sent=True, on_retry=events.append, on_give_up=events.append)
    def charge(order: str) -> None:
        assert retrycore.current_attempt().key == "order-1:charge:v1"  # type: ignore[union-attr]
        raise ConnectionResetError()

    with pytest.raises(retrycore.RetryError):
        charge("order-1")
    assert [(e.retry, e.reason, e.delay) for e in events] == [(1, None, 0.5), (None, "attempts_exhausted", None)]
    assert events[0].key == "order-1:charge:v1" and isinstance(events[0].exception, ConnectionResetError)


class Resp:
    def __init__(self, status: int, headers: Any) -> None:
        self.status_code = status
        self.headers = headers


class HTTPStatusError(Exception):  # httpx / requests shape
    def __init__(self, status: int, headers: Any = None) -> None:
        super().__init__(f"status {status}")
        self.response = Resp(status, headers or {})


def test_retry_after_is_honoured() -> None:
    sleep = FakeSleep()
    n: List[int] = []

    @retrycore.retry(policy(initial=0.1), sleep=sleep)
    def f() -> str:
        n.append(1)
        if len(n) == 1:
            raise HTTPStatusError(429, {"Retry-After": "3"})
        return "ok"

    assert f() == "ok" and sleep.calls == [3.0]


def test_policy_call_and_from_json(tmp_path: Path) -> None:
    doc = '{"version": 1, "max_attempts": 2, "initial": "10ms", "jitter": "none"}'
    path = tmp_path / "p.json"
    path.write_text(doc)
    for p in (RetryPolicy.from_json(doc), RetryPolicy.from_file(path), RetryPolicy.from_dict({"max_attempts": 2})):
        assert p.max_attempts == 2
    p = RetryPolicy.from_json(doc)
    assert p.call(lambda a, b=0: a + b, 1, b=2) == 3
    assert [r.high for r in p.schedule()] == [0.01]
    with pytest.raises(retrycore.ConfigError) as ei:
        RetryPolicy.from_dict({"deadline": 30})
    assert (ei.value.code, ei.value.field) == ("invalid_duration", "deadline")
    with pytest.raises(TypeError) as te:
        RetryPolicy(retries=3)
    assert te.value.code == "unknown_key"  # type: ignore[attr-defined]
    # Float seconds round half to even into nanoseconds.
    assert RetryPolicy(initial=1.5e-9, max_delay=1.0).to_dict()["initial"] == "2ns"
    assert RetryPolicy(initial=2.5e-9, max_delay=1.0).to_dict()["initial"] == "2ns"


# ---------------------------------------------------------------- async

def test_async_retries_and_zero_delay_never_sleeps() -> None:
    slept: List[float] = []

    async def fake_sleep(s: float) -> None:
        slept.append(s)

    n: List[int] = []

    @retrycore.retry(policy(max_attempts=3, initial=0.2), sleep=fake_sleep, idempotent=True)
    async def f() -> str:
        n.append(retrycore.current_attempt().attempt)  # type: ignore[union-attr]
        if len(n) < 3:
            raise ConnectionResetError()
        return "ok"

    assert asyncio.run(f()) == "ok" and slept == [0.2, 0.4] and n == [1, 2, 3]

    slept.clear()

    @retrycore.retry(RetryPolicy(max_attempts=3).testing(3), sleep=fake_sleep, idempotent=True)
    async def g() -> None:
        raise ConnectionResetError()

    with pytest.raises(retrycore.RetryError):
        asyncio.run(g())
    assert slept == []


def test_async_cancellation_propagates_and_cancels_session() -> None:
    p = policy(max_attempts=5, initial=10.0)

    @retrycore.retry(p, idempotent=True)
    async def f() -> None:
        raise ConnectionResetError()

    async def main() -> None:
        t = asyncio.ensure_future(f())
        await asyncio.sleep(0.01)  # the task now sleeps its 10 s backoff
        t.cancel()
        with pytest.raises(asyncio.CancelledError):
            await t

    asyncio.run(main())
    assert p.counters()["retry_exhausted_total"]["cancelled"] == 1


def test_async_attempt_timeout_is_enforced() -> None:
    p = policy(max_attempts=2, initial=0.0, max_delay=0.0, attempt_timeout=0.01)

    @retrycore.retry(p, idempotent=True)
    async def f() -> None:
        await asyncio.sleep(5)

    with pytest.raises(retrycore.RetryError) as ei:
        asyncio.run(f())
    assert ei.value.category == "timeout"


# ---------------------------------------------------------------- exception mapping

def test_names_errno_mro_and_chain() -> None:
    try:
        try:
            raise ConnectionResetError(errno.ECONNRESET, "reset")
        except OSError as inner:
            raise RuntimeError("wrapped") from inner
    except RuntimeError as e:
        names = retrycore.error_names(e)
    assert names == [
        "builtins.RuntimeError", "builtins.Exception", "builtins.BaseException",
        "ECONNRESET", "builtins.ConnectionResetError", "builtins.ConnectionError", "builtins.OSError",
        "builtins.Exception", "builtins.BaseException",
    ]
    # __context__ is followed unless suppressed.
    try:
        try:
            raise ValueError("a")
        except ValueError:
            raise KeyError("b") from None
    except KeyError as e:
        assert "builtins.ValueError" not in retrycore.error_names(e)


def test_errno_only_for_real_positive_oserrors() -> None:
    assert retrycore.error_names(socket.gaierror(-3, "again"))[0] == "socket.gaierror"
    assert retrycore.error_names(ssl.SSLError(1, "bad"))[0].startswith("ssl.")
    assert retrycore.classify(socket.gaierror(-3, "x")).category == "connect"
    assert retrycore.classify(ConnectionRefusedError(errno.ECONNREFUSED, "x")).refused


def test_cycles_are_safe() -> None:
    a, b = ValueError("a"), ValueError("b")
    a.__context__, b.__context__ = b, a
    assert len(retrycore.error_names(a)) < 20


def test_per_class_caches_never_hide_what_an_instance_carries() -> None:
    # What a class contributes is remembered per class; instances are read every time.
    assert retrycore.classify(ValueError("plain")).status is None
    e = ValueError("with a status")
    e.status = 503  # type: ignore[attr-defined]
    assert retrycore.classify(e).status == 503
    assert retrycore.classify(e).category == retrycore.classify(status=503).category
    assert retrycore.classify(ValueError("plain again")).status is None
    # errno names are remembered per value.
    assert retrycore.error_names(OSError(errno.ECONNREFUSED, "x"))[0] == "ECONNREFUSED"
    assert retrycore.error_names(OSError(errno.ECONNRESET, "x"))[0] == "ECONNRESET"
    assert retrycore.error_names(OSError(99999, "x"))[0] == "builtins.OSError"
    # More classes than the cache holds: each is still named by its own MRO.
    for i in range(5000):
        cls = type(f"E{i}", (ConnectionError,), {"__module__": "m"})
        assert retrycore.error_names(cls())[:2] == [f"m.E{i}", "builtins.ConnectionError"]
    # The verdict's names and refusal flag come from the same chain.
    v = retrycore.classify(ConnectionRefusedError(errno.ECONNREFUSED, "x"))
    assert v.error_names[:2] == ["ECONNREFUSED", "builtins.ConnectionRefusedError"] and v.refused
    assert not retrycore.classify(ConnectionResetError(errno.ECONNRESET, "x")).refused


def test_names_stop_at_the_limit() -> None:
    deep: type = Exception
    for i in range(40):
        deep = type(f"D{i}", (deep,), {})
    e: BaseException = deep()
    for _ in range(15):
        outer = deep()
        outer.__cause__ = e
        e = outer
    names = retrycore.error_names(e)
    assert len(names) == 256 and names[0].endswith("D39")
    assert retrycore.classify(e, error_names=["ECONNRESET"]).error_names[0] == "ECONNRESET"


def test_markers() -> None:
    assert retrycore.error_names(retrycore.CircuitOpenError())[0] == "retrycore:breaker_open"
    assert retrycore.classify(retrycore.CircuitOpenError()).category == "open_breaker"
    assert retrycore.classify(asyncio.CancelledError()).category == "cancelled"


def test_http_shapes_by_duck_typing() -> None:
    # requests / httpx: e.response.status_code and .headers
    v = retrycore.classify(HTTPStatusError(503, {"Retry-After": "2"}))
    assert (v.status, v.category, v.server_delay) == (503, "overloaded", 2.0)
    # urllib.error.HTTPError: .code and .headers
    h = Message()
    h["Retry-After"] = "4"
    v = retrycore.classify(urllib.error.HTTPError("http://x", 429, "slow", h, None))
    assert (v.status, v.category, v.server_delay) == (429, "overloaded", 4.0)

    # aiohttp ClientResponseError: .status and .headers
    class ClientResponseError(Exception):
        def __init__(self) -> None:
            self.status = 404
            self.headers = {"x": "y"}

    assert retrycore.classify(ClientResponseError()).category == "not_found"

    # botocore ClientError: a dict response with an error code
    class ClientError(Exception):
        def __init__(self) -> None:
            self.response = {"Error": {"Code": "ThrottlingException"},
                             "ResponseMetadata": {"HTTPStatusCode": 400, "HTTPHeaders": {}}}

    names = retrycore.error_names(ClientError())
    assert names[0] == "ThrottlingException"

    # gRPC: e.code() returning a StatusCode-like enum, pushback in trailing metadata
    class StatusCode:
        name = "UNAVAILABLE"
        value = (14, "unavailable")

    class RpcError(Exception):
        def code(self) -> Any:
            return StatusCode()

        def trailing_metadata(self) -> Any:
            return (("grpc-retry-pushback-ms", "250"),)

    v = retrycore.classify(RpcError())
    assert (v.category, v.server_delay) == ("overloaded", 0.25)


# ---------------------------------------------------------------- breakers and budgets

def test_breaker_decorator_and_context_manager() -> None:
    transitions: List[Any] = []
    b = retrycore.CircuitBreaker(kind="consecutive", failure_threshold=2, wait_duration_in_open_state=60.0,
                                 on_state_change=transitions.append)

    @b
    def boom() -> None:
        raise ConnectionResetError()

    for _ in range(2):
        with pytest.raises(ConnectionResetError):
            boom()
    assert b.state == "open" and transitions[-1].to_state == "open"
    with pytest.raises(retrycore.CircuitOpenError) as ei:
        boom()
    assert 59 < ei.value.retry_after <= 60  # type: ignore[operator]
    with pytest.raises(retrycore.CircuitOpenError):
        with b:
            pass
    b.reset()
    with b:
        pass
    assert b.state == "closed"
    snap = b.snapshot()
    b.restore(snap)
    b.transition_to("forced_open")
    assert not b.try_acquire().permitted


def test_policy_with_shared_breaker_and_budget() -> None:
    br = retrycore.CircuitBreaker(failure_rate_threshold=50, minimum_number_of_calls=2, sliding_window_size=2)
    bud = retrycore.Budget.token_bucket(capacity=10)
    p = policy(breaker=br, budget=bud, max_attempts=3)
    assert p.breaker is br and p.budgets == [bud]

    @retrycore.retry(p, sleep=FakeSleep(), idempotent=True)
    def f() -> None:
        raise ConnectionResetError()

    with pytest.raises(retrycore.RetryError) as ei:
        f()
    assert ei.value.reason == "breaker_open"
    with pytest.raises(retrycore.CircuitOpenError):
        f()
    inline = policy(breaker={"kind": "consecutive"}, budgets=[{"kind": "ratio"}])
    assert isinstance(inline.breaker, retrycore.CircuitBreaker) and isinstance(inline.budgets[0], retrycore.Budget)


def test_every_budget_kind() -> None:
    for b in (retrycore.Budget.token_bucket(), retrycore.Budget.grpc(10, 0.1), retrycore.Budget.ratio(window=10.0),
              retrycore.Budget.concurrency(), retrycore.Budget.adaptive(), retrycore.Budget(kind="ratio")):
        assert b.level() is not None
    b = retrycore.Budget.token_bucket(capacity=5, retry_cost=5)
    assert b.try_withdraw("server_error") is None
    r = b.try_withdraw("server_error")
    assert r is not None and r.reason == "insufficient_tokens"


def test_threads_share_breaker_and_budget_exactly() -> None:
    threads, n = 8, 100_000
    budget = retrycore.Budget.token_bucket(capacity=threads * n + 1000, retry_cost=1)
    breaker = retrycore.CircuitBreaker(initial_state="forced_open")

    def work() -> None:
        tw, ta = budget.try_withdraw, breaker.try_acquire
        for _ in range(n):
            tw()
            ta()

    ts = [threading.Thread(target=work) for _ in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert budget.withdrawals == threads * n
    assert budget.level()["tokens"] == 1000
    assert breaker.rejections == threads * n


def test_threads_share_a_policy() -> None:
    p = policy(breaker={"kind": "count_based", "minimum_number_of_calls": 100}, budget={"kind": "concurrency"})
    ok = p.call

    def work() -> None:
        for _ in range(20_000):
            ok(int)

    ts = [threading.Thread(target=work) for _ in range(8)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    c = p.counters()
    assert c["operations_total"] == c["success_first_try_total"] == 160_000
    assert p.budgets[0].level() == {"calls": 0, "retries": 0}


# ---------------------------------------------------------------- idempotency

def test_keys_fingerprints_records_letters() -> None:
    assert retrycore.derive_key("order-1001", "charge", "v1") == "order-1001:charge:v1"
    with pytest.raises(retrycore.InvalidKeyError) as ei:
        retrycore.validate_key("bad key")
    assert ei.value.code == "invalid_key"
    assert retrycore.parse_header(retrycore.format_header("k-1")) == "k-1"
    a = retrycore.fingerprint({"b": 1, "a": [1.0, None]}, method="POST", path="/p")
    assert a == retrycore.fingerprint({"a": [1, None], "b": 1.0}, method="POST", path="/p")
    assert a == retrycore.fingerprint_json('{"b":1,"a":[1e0,null]}', method="POST", path="/p")
    d = retrycore.decide(None, "k", a, 1000)
    assert d["decision"] == "execute" and d["record"]["state"] == "processing"
    rec = retrycore.complete(d["record"], d["fence"], {"state": "succeeded", "response": {"status": 201}}, 2000)
    assert retrycore.decide(rec, "k", a, 3000)["decision"] == "replay"
    with pytest.raises(retrycore.IdempotencyMismatchError):
        retrycore.raise_for_decision(retrycore.decide(rec, "k", "other", 3000))
    with pytest.raises(retrycore.FenceError):
        retrycore.complete(d["record"], 0, {"state": "succeeded"}, 2000)
    letter = retrycore.DeadLetter("m-1", {"x": 1}, reason="gave up", attempts=3, error=TimeoutError("t"),
                                  first_failure_ms=1000, last_failure_ms=2000, target_idempotent=True)
    letter.mark_replayable()
    assert letter.to_dict()["error_class"] == "TimeoutError" and letter.replayable


def test_lint() -> None:
    codes = {f.code for f in retrycore.lint(RetryPolicy(jitter="none", max_attempts=8))}
    assert {"no_jitter", "too_many_attempts", "no_deadline"} <= codes


# ---------------------------------------------------------------- hostile inputs

HOSTILE: List[Any] = [
    math.nan, math.inf, -math.inf, 2**64, -(2**64), -1, True, None, "x" * (10 * 1024 * 1024), b"bytes",
    object(), [1, 2], {"k": 1}, {1: 2}, 1e308, -0.0, "\ud800",
]


def _deep(n: int, dict_: bool) -> Any:
    v: Any = 1
    for _ in range(n):
        v = {"a": v} if dict_ else [v]
    return v


def _cyclic() -> Any:
    x: List[Any] = []
    x.append(x)
    return x


def check_raises_ok(fn: Any, *args: Any, **kwargs: Any) -> None:
    """Either returns, or raises a ValueError/TypeError subclass with a `.code` — never a panic."""
    try:
        fn(*args, **kwargs)
    except (ValueError, TypeError) as e:
        if isinstance(e, retrycore.RetrycoreError):
            assert isinstance(e.code, str) and e.code
        else:
            # Only pyo3's own signature errors (wrong number of arguments) lack a code.
            assert "argument" in str(e), repr(e)
    except retrycore.RetrycoreError as e:
        assert isinstance(e.code, str)


def test_hostile_inputs_never_crash() -> None:
    p = RetryPolicy()
    s = p.session()
    b = retrycore.CircuitBreaker()
    bud = retrycore.Budget.token_bucket()
    targets = [
        lambda v: RetryPolicy(initial=v), lambda v: RetryPolicy(max_attempts=v), lambda v: RetryPolicy(jitter=v),
        lambda v: RetryPolicy(seed=v), lambda v: RetryPolicy.from_dict({"deadline": v}), lambda v: RetryPolicy.from_dict(v),
        lambda v: p.delay(v, 0.5), lambda v: p.delay(1, v), lambda v: p.delay(1, 0.5, v), lambda v: p.sample_delays(v, 3),
        lambda v: p.session(key=v), lambda v: p.session(seed=v), lambda v: s.before_attempt(v),
        lambda v: s.on_failure(status=v), lambda v: s.on_failure(headers=v), lambda v: s.on_failure(error_names=v),
        lambda v: s.on_failure(v), lambda v: retrycore.classify(grpc_code=v), lambda v: retrycore.classify(v),
        lambda v: b.try_acquire(v), lambda v: b.transition_to(v), lambda v: b.restore(v),
        lambda v: bud.try_withdraw(v), lambda v: bud.before_attempt(r=v), lambda v: bud.on_success(retry_cost=v),
        lambda v: retrycore.fingerprint(v, operation="op"), lambda v: retrycore.canonicalize(v),
        lambda v: retrycore.fingerprint({"a": 1}, method=v, path="/"), lambda v: retrycore.canonicalize_json(v),
        lambda v: retrycore.validate_key(v), lambda v: retrycore.storage_key("k", v), lambda v: retrycore.derive_key(v, "b"),
        lambda v: retrycore.parse_header(v), lambda v: retrycore.format_rfc3339_ms(v), lambda v: retrycore.mint_key(v),
        lambda v: retrycore.decide(v, "k", "f"), lambda v: retrycore.DeadLetter.from_dict(v),
        lambda v: retrycore.parse_duration(v), lambda v: retrycore.format_duration(v), lambda v: p.testing(v),
        lambda v: retrycore.Budget(kind="ratio", window=v), lambda v: retrycore.CircuitBreaker(failure_rate_threshold=v),
        lambda v: retrycore.lint(p, v), lambda v: retrycore.server_advice(v), lambda v: retrycore.Random(v),
    ]
    for t in targets:
        for v in HOSTILE + [_deep(100_000, True), _deep(100_000, False), _cyclic()]:
            check_raises_ok(t, v)


def test_hostile_inputs_give_codes() -> None:
    cases = [
        (lambda: RetryPolicy(initial=math.nan), ValueError, "out_of_range"),
        (lambda: RetryPolicy(initial=math.inf), ValueError, "out_of_range"),
        (lambda: RetryPolicy(max_attempts=2**64), ValueError, "out_of_range"),
        (lambda: RetryPolicy(max_attempts="3"), TypeError, "invalid_type"),
        (lambda: retrycore.fingerprint(_deep(100_000, True), operation="op"), ValueError, "too_deep"),
        (lambda: retrycore.fingerprint(_deep(100_000, False), operation="op"), ValueError, "too_deep"),
        (lambda: retrycore.fingerprint(_cyclic(), operation="op"), TypeError, "invalid_type"),
        (lambda: retrycore.fingerprint({1: 2}, operation="op"), TypeError, "invalid_type"),
        (lambda: retrycore.fingerprint(2**53 + 1, operation="op"), ValueError, "invalid_number"),
        (lambda: retrycore.fingerprint(2**1100, operation="op"), ValueError, "invalid_number"),
        (lambda: retrycore.fingerprint(math.nan, operation="op"), ValueError, "invalid_number"),
        (lambda: retrycore.fingerprint("\ud800", operation="op"), ValueError, "invalid_string"),
        (lambda: retrycore.fingerprint({1}, operation="op"), TypeError, "invalid_type"),
        (lambda: RetryPolicy.from_dict(_deep(100_000, True)), ValueError, "too_deep"),
        (lambda: RetryPolicy.from_json("[" * 100_000), ValueError, "invalid_json"),
        (lambda: RetryPolicy.from_json("{" + " " * (10 * 1024 * 1024) + "}"), ValueError, "too_large"),
        (lambda: retrycore.validate_key("k" * (10 * 1024 * 1024)), ValueError, "invalid_key"),
    ]
    for fn, cls, code in cases:
        with pytest.raises(cls) as ei:
            fn()
        assert isinstance(ei.value, retrycore.RetrycoreError) and ei.value.code == code, (code, ei.value)
    # Big inputs are fine where they are valid.
    assert len(retrycore.fingerprint("x" * (10 * 1024 * 1024), operation="op")) == 64
    assert retrycore.fingerprint(2**60, operation="op")


def test_error_classes() -> None:
    assert issubclass(retrycore.ConfigError, ValueError) and issubclass(retrycore.ConfigTypeError, TypeError)
    assert issubclass(retrycore.BudgetExhaustedError, retrycore.RetryError)
    assert set(retrycore.error_codes()) >= {"invalid_duration", "too_deep", "stale_fence"}


def test_quickstart_runs() -> None:
    runpy.run_path(str(HERE / "quickstart.py"), run_name="__main__")


def test_typing_example_runs() -> None:
    # mypy --strict checks it in `make test`; here it runs.
    runpy.run_path(str(HERE / "typing_example.py"), run_name="__main__")

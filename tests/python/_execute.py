"""The runner of `execute` vectors (tests/vectors/README.md): whole calls replayed through
the Python retry loop — ``@retry`` on a plain function, ``@retry`` on an ``async def`` and
``policy.call`` — with an injected clock and a recording sleep, so no real time passes."""

from __future__ import annotations

import asyncio
import errno as _errno
import importlib
import threading
from decimal import Decimal
from typing import Any, Callable, Dict, List, Optional, Tuple

import retrycore


def ns(ms: Any) -> int:
    """Milliseconds as written in a vector (an int, or the exact decimal ns / 10^6) as ns."""
    return int(Decimal(repr(ms)) * 1_000_000) if isinstance(ms, float) else int(ms) * 1_000_000


def _resolve(name: str) -> Optional[type]:
    mod, _, qual = name.rpartition(".")
    if not mod:
        return None
    try:
        obj: Any = importlib.import_module(mod)
        for part in qual.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError):
        return None
    return obj if isinstance(obj, type) and issubclass(obj, BaseException) else None


def _class(names: List[str], base: type) -> type:
    """A class whose MRO has exactly `names` (most specific first) above `base`."""
    cls = base
    for name in reversed(names):
        real = _resolve(name)
        if real is not None and issubclass(real, cls):
            cls = real
            continue
        mod, _, qual = name.rpartition(".")
        cls = type(qual, (cls,), {"__qualname__": qual})
        # A bare name (a JS or .NET class name) has no module: read as the name alone.
        cls.__module__ = mod or None  # type: ignore[assignment]
    return cls


def build_error(t: Dict[str, Any]) -> BaseException:
    """An exception as a vector describes it (see the `throw` outcome)."""
    marker = t.get("retrycore")
    if marker == "retry_exhausted":
        e: BaseException = retrycore.RetryError("inner retries ran out")
    elif marker == "breaker_open":
        e = retrycore.CircuitOpenError()
    else:
        code = t.get("code")
        errno_value = getattr(_errno, code, None) if isinstance(code, str) and code.startswith("E") else None
        cls = _class(t.get("names") or [], OSError if errno_value is not None else Exception)
        e = cls(errno_value, code) if errno_value is not None else cls("scripted failure")
        if code is not None and errno_value is None:
            e.response = {"Error": {"Code": code}}  # type: ignore[attr-defined]  # botocore's shape
    headers = [tuple(h) for h in t.get("headers") or []]
    if "status" in t:
        e.status = t["status"]  # type: ignore[attr-defined]  # aiohttp's shape
        e.headers = headers  # type: ignore[attr-defined]
    if "grpc_code" in t:
        g = t["grpc_code"]
        e.code = lambda: g  # type: ignore[attr-defined]  # grpc.RpcError's shape
        e.trailing_metadata = lambda: headers  # type: ignore[attr-defined]
    elif headers and "status" not in t:
        e.headers = headers  # type: ignore[attr-defined]
    if "cause" in t:
        e.__cause__ = build_error(t["cause"])
    if "verdict" in t:
        e._verdict = t["verdict"]  # type: ignore[attr-defined]  # what retry_if_exception answers
    return e


class FellBack:
    """What the give-up fallback of a vector returns: its value, recognisable as the fallback's."""

    def __init__(self, value: Any) -> None:
        self.value = value


class Response:
    """A returned HTTP response (requests / httpx shape)."""

    def __init__(self, status: int, headers: List[Tuple[str, str]]) -> None:
        self.status_code = status
        self.headers = dict(headers)


class Call:
    """One scripted call: its function, sleep and record."""

    def __init__(self, world: "World", spec: Dict[str, Any]) -> None:
        self.world, self.spec = world, spec
        self.calls = 0
        self.attempts = 0
        self.sleeps: List[int] = []
        self.events: List[Dict[str, Any]] = []
        #: The retry log's records (`retry_log` cases): what the policy's logger got.
        self.records: List[Dict[str, Any]] = []
        self.last: Any = None
        self.suspend_at = spec.get("suspend_at_sleep")

    def outcome(self) -> Any:
        script = self.spec["script"]
        assert self.calls < len(script), "more attempts than scripted"
        o = script[self.calls]
        self.calls += 1
        s = retrycore.current_attempt()
        self.attempts = s.attempt if s is not None else self.calls
        self.world.now += ns(o["ms"])
        if "return" in o:
            # The last outcome: a value retry_if_result made a failure is RetryError.response.
            self.last = o["return"]
            return o["return"]
        if "respond" in o:
            r = Response(o["respond"]["status"], o["respond"].get("headers") or [])
            self.last = r
            return r
        if o.get("timeout"):
            self.last = TimeoutError("attempt timed out")
        elif o.get("cancel"):
            self.last = self.world.cancellation()
        else:
            self.last = build_error(o["throw"])
        raise self.last

    def slept(self, seconds: float) -> None:
        d = round(seconds * 1e9)
        self.sleeps.append(d)
        wake = self.world.now + d
        if self.suspend_at is not None and len(self.sleeps) == self.suspend_at:
            self.world.suspend(self, wake)
        self.world.now = max(self.world.now, wake)

    def hooks(self) -> Dict[str, Any]:
        ev = self.events
        return {
            "on_retry": lambda e: ev.append({"hook": "on_retry", "attempt": e.attempt, "retry": e.retry,
                                             "delay": round(e.delay * 1e9), "category": e.category}),
            "on_give_up": lambda e: ev.append({"hook": "on_give_up", "attempts": e.attempt, "reason": e.reason}),
            "on_state_change": lambda t: ev.append({"hook": "on_state_change", "from": t.from_state,
                                                    "to": t.to_state, "reason": t.reason}),
        }


class World:
    """The shared clock and, for calls that suspend, the baton handed between threads."""

    def __init__(self, case: Dict[str, Any], mode: str) -> None:
        self.start = self.now = ns(case["clock"]["start_ms"])
        self.wall_start_ms = case["clock"].get("wall_start_ms")
        self.mode = mode
        self.baton = threading.Condition()
        self.turn: Optional[Call] = None
        self.suspended: List[Tuple[Call, int]] = []

    def clock(self) -> float:
        return self.now / 1e9

    def wall(self) -> int:
        """The wall clock advances with the monotonic one, floored to whole ms."""
        return int(self.wall_start_ms) + (self.now - self.start) // 1_000_000

    def cancellation(self) -> BaseException:
        return asyncio.CancelledError() if self.mode == "async" else KeyboardInterrupt()

    def suspend(self, call: Call, wake: int) -> None:
        with self.baton:
            self.suspended.append((call, wake))
            self.turn = None
            self.baton.notify_all()
            self.baton.wait_for(lambda: self.turn is call)


def ending(call: Call, result: Any, error: Optional[BaseException]) -> Dict[str, Any]:
    got: Dict[str, Any] = {"attempts": call.attempts, "calls": call.calls,
                           "sleeps": call.sleeps, "events": call.events, "records": call.records}
    if error is None:
        if isinstance(result, FellBack):
            got["ending"], got["value"] = "fallback", result.value
        else:
            got["ending"] = "return"
        return got
    if isinstance(error, (KeyboardInterrupt, asyncio.CancelledError)):
        got["ending"] = "cancelled"
        return got
    if error is call.last:
        # The callee's own error, unchanged: a cancellation error is the `cancelled` ending.
        got["ending"] = "cancelled" if retrycore.classify(error).category == "cancelled" else "propagate"
        return got
    got["ending"] = "raise"
    if isinstance(error, retrycore.BudgetExhaustedError):
        got["class"] = "budget_exhausted"
    elif isinstance(error, retrycore.RetryError):
        got["class"] = "retry_error"
    elif isinstance(error, retrycore.CircuitOpenError):
        got["class"] = "circuit_open"
    elif isinstance(error, retrycore.LimiterRejectedError):
        got["class"] = "limiter_rejected"
        got["limiter"] = error.limiter
    else:
        got["class"] = f"{type(error).__module__}.{type(error).__qualname__}: {error}"
    got["code"] = getattr(error, "code", None)
    got["reason"] = getattr(error, "reason", getattr(error, "code", None))
    got["marked"] = "retrycore:retry_exhausted" in retrycore.error_names(error)
    # The last error is the cause; a last response is `RetryError.response` (not an exception).
    got["cause"] = call.last is not None and (error.__cause__ is call.last or getattr(error, "response", None) is call.last)
    got["category"] = getattr(error, "category", None)
    got["budget"] = getattr(error, "budget", None)
    ra = getattr(error, "retry_after", None)
    got["retry_after"] = None if ra is None else round(ra * 1e9)
    if isinstance(error, retrycore.RetryError):
        got["attempts"] = error.attempts
    return got


def expected(e: Dict[str, Any]) -> Dict[str, Any]:
    out = dict(e)
    out["sleeps"] = [ns(x) for x in e.get("sleeps", [])]
    out["events"] = [dict(x, delay=ns(x["delay"])) if "delay" in x else x for x in e.get("events", [])]
    if out.get("retry_after") is not None:
        out["retry_after"] = ns(out["retry_after"])
    return out


def run(case: Dict[str, Any], mode: str, log: bool = False) -> List[Tuple[Dict[str, Any], Dict[str, Any]]]:
    """Runs every call of `case` in `mode` (``sync``, ``async`` or ``call``); (got, want) per call.
    With `log` (the `retry_log` kind) each call's policy logs to the call's records."""
    world = World(case, mode)
    shared = retrycore.RetryPolicy.from_dict(case["policy"])
    calls = [Call(world, spec) for spec in case["calls"]]
    results: Dict[int, Tuple[Any, Optional[BaseException]]] = {}

    def one(i: int, c: Call) -> None:
        policy = shared
        if log:
            # The same native policy (generator, breaker, budgets), with this call's logger.
            policy = retrycore.RetryPolicy._wrap(shared._p, logger=c.records.append,
                                                 correlation_id=lambda: c.spec.get("correlation_id"))
        world.now += ns(c.spec.get("advance_ms", 0))
        opts = dict(c.spec.get("options") or {})
        key = opts.pop("key", None)
        hooks = c.hooks()
        ev = c.events
        if "retry_if_result" in opts:
            verdicts = opts.pop("retry_if_result")
            opts["retry_if_result"] = lambda v: verdicts.get(v) if isinstance(v, str) else None
        if opts.pop("retry_if_error", False):
            opts["retry_if_exception"] = lambda e: getattr(e, "_verdict", None)
        if "fallback" in opts:
            value = opts.pop("fallback")

            def fallback(e: Any) -> FellBack:
                ev.append({"hook": "fallback", "attempts": e.attempt, "reason": e.reason})
                return FellBack(value)

            opts["fallback"] = fallback
        if opts.pop("before_after", False):
            opts["before"] = lambda e: ev.append({"hook": "before", "attempt": e.attempt})
            opts["after"] = lambda e: ev.append({"hook": "after", "attempt": e.attempt, "category": e.category})
        if world.wall_start_ms is not None:
            opts["wall_clock"] = world.wall
        try:
            if mode == "call":
                p = retrycore.RetryPolicy._wrap(policy._p, **hooks, logger=policy.logger, correlation_id=policy.correlation_id)
                r = retrycore.retry(p, clock=world.clock, sleep=c.slept, key=(lambda: key) if key else None, **opts)(c.outcome)()
            elif mode == "async":
                async def fn() -> Any:
                    return c.outcome()

                async def sleep(s: float) -> None:
                    c.slept(s)

                wrapped = retrycore.retry(policy, clock=world.clock, sleep=sleep,
                                          key=(lambda: key) if key else None, **opts, **hooks)(fn)
                r = asyncio.run(wrapped())
            else:
                wrapped = retrycore.retry(policy, clock=world.clock, sleep=c.slept,
                                          key=(lambda: key) if key else None, **opts, **hooks)(c.outcome)
                r = wrapped()
            results[i] = (r, None)
        except BaseException as e:  # noqa: B902 — cancellations are endings too
            results[i] = (None, e)

    if not any(c.suspend_at for c in calls):
        for i, c in enumerate(calls):
            one(i, c)
    else:
        # A thread per call, one running at a time (the baton): calls start in order, each
        # runs until it ends or suspends; then the suspended ones resume in order.
        done = set()

        def body(i: int, c: Call) -> None:
            with world.baton:
                world.baton.wait_for(lambda: world.turn is c)
            one(i, c)
            with world.baton:
                done.add(i)
                world.turn = None
                world.baton.notify_all()

        threads = [threading.Thread(target=body, args=(i, c), daemon=True) for i, c in enumerate(calls)]
        for t in threads:
            t.start()
        for i, c in enumerate(calls):
            with world.baton:
                world.turn = c
                world.baton.notify_all()
                assert world.baton.wait_for(lambda: world.turn is None, timeout=10), "a call never yielded"
        while world.suspended:
            with world.baton:
                c, wake = world.suspended.pop(0)
                world.now = max(world.now, wake)
                world.turn = c
                world.baton.notify_all()
                assert world.baton.wait_for(lambda: world.turn is None, timeout=10), "a call never yielded"
        for t in threads:
            t.join(10)
    out = []
    for i, c in enumerate(calls):
        r, e = results[i]
        got = ending(c, r, e)
        want = expected(c.spec["expect"])
        out.append(({k: got.get(k) for k in want}, want))
    return out

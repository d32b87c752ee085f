# The facade of the native module. Its public contract, types and docs, is __init__.pyi;
# the docstrings are set at import time from _docs.py, generated from the stubs by
# scripts/gen-py-docs.py (see the end of this file).

from __future__ import annotations

import asyncio
import functools
import inspect
import logging as _logging
import os
import sys as _sys
import types as _types
from contextvars import ContextVar
from typing import Any, Awaitable, Callable, Dict, List, Mapping, Optional, Tuple, TypeVar, Union, cast

from . import _native
from ._context import CURRENT as _CURRENT
from ._docs import DOCS as _DOCS
from ._errors import _TABLES
from ._limiters import Limiter, LimiterRejectedError
from . import _log
from ._errors import (
    BudgetExhaustedError, CircuitOpenError, ConfigError, ConfigTypeError, DeadLetterError, FenceError,
    FingerprintError, IdempotencyError, IdempotencyInProgressError, IdempotencyMismatchError, IdempotencyTypeError,
    InvalidKeyError, RetrycoreError, RetryError, SnapshotError, StateError,
)
from ._native import (
    Acquired, DeadLetter, Finding, GiveUp, Permit, Proceed, Random, RecordConfig, Refusal, Reject, Retry, RetryEvent,
    RetrySession, ScheduleRow, ServerAdvice, Transition, Verdict, canonicalize, canonicalize_json, classify, complete,
    decide, derive_key, error_names, fingerprint, fingerprint_json, format_duration, format_header, format_number,
    format_rfc3339_ms, mint_key, parse_duration, parse_header, parse_http_date, parse_rfc3339_ms, renew_lease,
    scoped_key, server_advice, storage_key, validate_key,
)

__version__: str = _native.__version__

__all__ = [
    "Acquired", "alerts", "Budget", "BudgetExhaustedError", "CircuitBreaker", "CircuitOpenError", "ConfigError",
    "ConfigTypeError", "DeadLetter", "DeadLetterError", "FenceError", "Finding", "FingerprintError", "GiveUp",
    "IdempotencyError", "IdempotencyInProgressError", "IdempotencyMismatchError", "IdempotencyTypeError",
    "InvalidKeyError", "Limiter", "LimiterRejectedError", "Permit", "Proceed", "Random", "RecordConfig", "Refusal", "Reject", "Retry", "RetryError",
    "RetryEvent", "RetryPolicy", "RetrySession", "RetrycoreError", "ScheduleRow", "ServerAdvice", "SnapshotError",
    "StateError", "Transition", "Verdict", "canonicalize", "canonicalize_json", "categories", "classify", "complete",
    "current_attempt", "decide", "derive_key", "error_codes", "error_names", "fingerprint", "fingerprint_json",
    "format_duration", "format_header", "format_number", "format_rfc3339_ms", "give_up_reasons", "LIMITS", "lint",
    "mint_key", "parse_duration", "parse_header", "parse_http_date", "parse_rfc3339_ms", "raise_for_decision",
    "renew_lease", "retry", "scoped_key", "server_advice", "storage_key", "validate_key",
]

F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")
Hook = Optional[Callable[[RetryEvent], object]]
StateHook = Optional[Callable[[Transition], object]]
RetryLogger = Union[None, _logging.Logger, "_logging.LoggerAdapter[Any]", Callable[[Dict[str, Any]], object]]


def current_attempt() -> Optional[RetrySession]:
    return _native.current(_CURRENT.get())



LIMITS: Mapping[str, int] = _types.MappingProxyType(dict(_TABLES["limits"]))


def error_codes() -> List[str]:
    return [c["code"] for c in _TABLES["error_codes"]]


def categories() -> List[str]:
    return [c["code"] for c in _TABLES["categories"]]


def give_up_reasons() -> List[str]:
    return [c["code"] for c in _TABLES["give_up_reasons"]]


#: The longest single ``time.sleep`` / ``asyncio.sleep`` call of the default sleep, in
#: seconds: a longer delay is slept in parts (``time.sleep`` raises ``OverflowError``
#: past its platform's range).
_SLEEP_CHUNK = 86_400.0


async def _default_async_sleep(delay: float) -> None:
    """``asyncio.sleep`` in parts of at most a day (any valid delay, however long)."""
    while delay > _SLEEP_CHUNK:
        await asyncio.sleep(_SLEEP_CHUNK)
        delay -= _SLEEP_CHUNK
    await asyncio.sleep(delay)


def _callable(fn: Any, field: str) -> None:
    if not callable(fn):
        raise _native.error("invalid_type", field, f"must be callable, got {type(fn).__name__}")


#: The permits of the ``with breaker:`` blocks open in this context, innermost last.
_BREAKER_PERMITS: "ContextVar[Tuple[Permit, ...]]" = ContextVar("retrycore_breaker_permits", default=())


class CircuitBreaker(_native.CircuitBreaker):
    def __new__(cls, config: Optional[Mapping[str, Any]] = None, *, on_state_change: StateHook = None, **kwargs: Any) -> "CircuitBreaker":
        # The native module reads `config` and the keywords (bounded, `timedelta`s included).
        return super().__new__(cls, config, kwargs=True, on_state_change=on_state_change, overrides=kwargs)

    @classmethod
    def _share(cls, native: _native.CircuitBreaker, on_state_change: StateHook = None) -> "CircuitBreaker":
        return _native.CircuitBreaker.__new__(cls, None, share=native, on_state_change=on_state_change)

    def __call__(self, fn: F) -> F:
        _callable(fn, "fn")
        if inspect.iscoroutinefunction(fn):

            @functools.wraps(fn)
            async def guarded(*args: Any, **kwargs: Any) -> Any:
                async with self:
                    return await fn(*args, **kwargs)

            return cast(F, guarded)
        call = self.call
        return cast(F, functools.wraps(fn)(lambda *args, **kwargs: call(fn, args, kwargs)))

    def __enter__(self) -> "CircuitBreaker":
        _BREAKER_PERMITS.set(_BREAKER_PERMITS.get() + (self.acquire(),))
        return self

    def __exit__(self, exc_type: Any, exc: Optional[BaseException], tb: Any) -> None:
        *outer, permit = _BREAKER_PERMITS.get()
        _BREAKER_PERMITS.set(tuple(outer))
        self.record(permit, exc if exc is not None else "success")

    async def __aenter__(self) -> "CircuitBreaker":
        return self.__enter__()

    async def __aexit__(self, exc_type: Any, exc: Optional[BaseException], tb: Any) -> None:
        self.__exit__(exc_type, exc, tb)


class Budget(_native.Budget):
    def __new__(cls, config: Optional[Mapping[str, Any]] = None, **kwargs: Any) -> "Budget":
        return super().__new__(cls, config, kwargs=True, overrides=kwargs)

    @classmethod
    def _share(cls, native: _native.Budget) -> "Budget":
        return _native.Budget.__new__(cls, None, share=native)

    # One helper per kind the core lists (`host_tables()["budget_kinds"]`, checked by
    # tests/python/test_tables.py); the defaults are the core's, never written here.
    # grpc's has required arguments; the others are made below, one per kind.
    @classmethod
    def grpc(cls, max_tokens: float, token_ratio: float, **kwargs: Any) -> "Budget":
        return cls(kind="grpc", max_tokens=max_tokens, token_ratio=token_ratio, **kwargs)


def _budget_helper(kind: str) -> "classmethod[Budget, ..., Budget]":
    def helper(cls: "type[Budget]", **kwargs: Any) -> Budget:
        return cls(kind=kind, **kwargs)

    helper.__name__, helper.__qualname__ = kind, f"Budget.{kind}"
    return classmethod(helper)


for _kind in _TABLES["budget_kinds"]:
    if _kind not in vars(Budget):
        setattr(Budget, _kind, _budget_helper(_kind))


_HOOK_KEYS = ("on_retry", "on_give_up", "on_state_change", "logger", "correlation_id")
#: The caller's own predicates, hooks and fallback a policy may carry for `call` and `retry`.
_KNOB_KEYS = ("retry_if_result", "retry_if_exception", "before", "after", "fallback")


class RetryPolicy(_native.Policy):
    __slots__ = ("on_retry", "on_give_up", "on_state_change", "logger", "correlation_id", "_runner", "_metrics", "_knobs")
    on_retry: Hook
    on_give_up: Hook
    on_state_change: StateHook
    logger: RetryLogger
    correlation_id: Optional[Callable[[], Optional[str]]]
    _runner: Optional[_native.Runner]
    # The exporters' hooks (`with_metrics`), composed with the user's at each Runner.
    _metrics: Any
    _knobs: Mapping[str, Any]

    def __new__(cls, *, on_retry: Hook = None, on_give_up: Hook = None, on_state_change: StateHook = None, logger: RetryLogger = None,
                correlation_id: Optional[Callable[[], Optional[str]]] = None, **kwargs: Any) -> "RetryPolicy":
        knobs = {k: kwargs.pop(k) for k in _KNOB_KEYS if k in kwargs}
        # Only exact types are looked at here (no caller code runs); the native module
        # converts everything else, bounded, and refuses what is not a document.
        # A None stays in the document: the core's typed reader refuses it (invalid_type).
        if kwargs.get("budget") is not None and "budgets" not in kwargs:
            # Both (or an alias of budget with budgets): the core's reader refuses the pair.
            kwargs["budgets"] = [kwargs.pop("budget")]
        breaker: Any = kwargs.pop("breaker") if kwargs.get("breaker") is not None else None
        if breaker is not None and type(breaker) is dict:
            kwargs["breaker"], breaker = breaker, None
        budgets: Any = kwargs.pop("budgets") if kwargs.get("budgets") is not None else None
        if type(budgets) in (list, tuple) and all(type(b) is dict for b in budgets):
            kwargs["budgets"], budgets = budgets, None
        elif budgets is not None:
            # Shared objects join after the core read the document; it still sees the key,
            # and refuses it beside budget or its alias retry_budget (invalid_combination).
            kwargs["budgets"] = []
        p = _native.Policy.from_dict(kwargs, kwargs=True)
        if breaker is not None:
            p = p._with_breaker(breaker)
        if budgets is not None:
            p = p._with_budgets(budgets)
        return cls._wrap(p, on_retry, on_give_up, on_state_change, knobs=knobs, logger=logger, correlation_id=correlation_id)

    @classmethod
    def _wrap(
        cls, p: _native.Policy, on_retry: Hook = None, on_give_up: Hook = None, on_state_change: StateHook = None,
        metrics: Any = None, knobs: Optional[Mapping[str, Any]] = None, logger: RetryLogger = None,
        correlation_id: Optional[Callable[[], Optional[str]]] = None,
    ) -> "RetryPolicy":
        _log._check(logger, correlation_id)
        # Inline breakers and budgets become facade objects (decorators, context managers).
        b = p.breaker
        if b is not None and not isinstance(b, CircuitBreaker):
            p = p._with_breaker(CircuitBreaker._share(b))
        if any(not isinstance(x, Budget) for x in p.budgets):
            p = p._with_budgets([x if isinstance(x, Budget) else Budget._share(x) for x in p.budgets])
        self = _native.Policy.__new__(cls, p)
        self.on_retry, self.on_give_up, self.on_state_change = on_retry, on_give_up, on_state_change
        self.logger, self.correlation_id = logger, correlation_id
        self._knobs = dict(knobs or {})
        for k, f in self._knobs.items():
            if f is not None:
                _callable(f, k)
        self._runner = None
        self._metrics = metrics
        return self

    @property
    def _p(self) -> _native.Policy:
        """The native policy (itself: kept for the callers that unwrap a facade policy)."""
        return self

    @classmethod
    def profile(cls, name: str, **kwargs: Any) -> "RetryPolicy":
        return cls(profile=name, **kwargs)

    @classmethod
    def from_dict(cls, document: Mapping[str, Any], **hooks: Any) -> "RetryPolicy":  # type: ignore[override]
        knobs = _check_hooks(hooks)
        return cls._wrap(_native.Policy.from_dict(document), **hooks, knobs=knobs)

    @classmethod
    def from_json(cls, text: Union[str, bytes], **hooks: Any) -> "RetryPolicy":  # type: ignore[override]
        knobs = _check_hooks(hooks)
        return cls._wrap(_native.Policy.from_json(text), **hooks, knobs=knobs)

    @classmethod
    def from_file(cls, path: Union[str, "os.PathLike[str]"], **hooks: Any) -> "RetryPolicy":
        knobs = _check_hooks(hooks)
        if not isinstance(path, (str, os.PathLike)):
            raise _native.error("invalid_type", "path", f"must be a path, got {type(path).__name__}")
        try:
            f = open(path, "rb")
        except UnicodeError as e:  # a name with a lone surrogate has no bytes
            raise _native.error("invalid_string", "path", f"has no file-system form: {e}") from e
        with f:
            data = f.read(LIMITS["max_document_bytes"] + 1)
        return cls._wrap(_native.Policy.from_json(data), **hooks, knobs=knobs)

    def testing(self, attempts: int, max_delay: float = 0.0) -> "RetryPolicy":  # type: ignore[override]
        return self._again(super().testing(attempts, max_delay))

    def _again(self, p: _native.Policy, metrics: Any = None) -> "RetryPolicy":
        """``p`` with this policy's hooks, logger, exporters (or ``metrics``) and knobs."""
        return RetryPolicy._wrap(
            p, self.on_retry, self.on_give_up, self.on_state_change, self._metrics if metrics is None else metrics,
            self._knobs, self.logger, self.correlation_id,
        )

    def call(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
        _callable(fn, "fn")
        if inspect.iscoroutinefunction(fn):
            return cast(T, retry(self)(fn)(*args, **kwargs))
        runner = self._runner
        if runner is None:
            runner = self._runner = _native.Runner(self, **_runner_hooks(self), **self._knobs)
        return runner.call(fn, args, kwargs)

    def __repr__(self) -> str:
        return f"RetryPolicy.from_json({self.to_json()!r})"

    def __copy__(self) -> "RetryPolicy":
        return self._again(self)

    def with_metrics(self, *exporters: Any, operation: Optional[str] = None) -> "RetryPolicy":
        from .exporters.metrics import _PolicyHooks

        return self._again(self, _PolicyHooks.attach(self, exporters, operation))


def _runner_hooks(
    pol: RetryPolicy, on_retry: Hook = None, on_give_up: Hook = None, on_state_change: StateHook = None
) -> Dict[str, Any]:
    """The hooks of a ``Runner`` of ``pol``: the ones given, else the policy's, with its retry
    log (``logger``) and composed with its exporters' (``with_metrics``), and ``on_success``
    when it has exporters."""
    retried, gave_up = _log.hooks(on_retry if on_retry is not None else pol.on_retry,
                                  on_give_up if on_give_up is not None else pol.on_give_up, pol.logger, pol.correlation_id)
    hooks: Dict[str, Any] = {
        "on_retry": retried,
        "on_give_up": gave_up,
        "on_state_change": on_state_change if on_state_change is not None else pol.on_state_change,
    }
    m = pol._metrics
    return hooks if m is None else m.compose(hooks)


class _Call(functools.partial):  # type: ignore[type-arg]
    """A decorated function (``_native.run``): bound as a method and pickled by name, as a function is."""

    def __get__(self, obj: Any, cls: Any = None) -> Any:
        return self if obj is None else _types.MethodType(self, obj)

    def __reduce__(self) -> str:
        return cast(str, getattr(self, "__qualname__"))


def _check_hooks(hooks: Dict[str, Any]) -> Dict[str, Any]:
    """Checks the keywords of `from_dict` / `from_json` / `from_file`; takes the knobs out of `hooks` and returns them."""
    for k in hooks:
        if k not in _HOOK_KEYS and k not in _KNOB_KEYS:
            raise _native.error("unknown_key", k, f"unexpected keyword argument {k!r}")
    return {k: hooks.pop(k) for k in _KNOB_KEYS if k in hooks}


def retry(
    policy: Any = None,
    *,
    sleep: Optional[Callable[[float], Any]] = None,
    clock: Optional[Callable[[], float]] = None,
    on_retry: Hook = None,
    on_give_up: Hook = None,
    on_state_change: StateHook = None,
    key: Optional[Callable[..., str]] = None,
    idempotent: Optional[bool] = None,
    idempotency_key_sent: Optional[bool] = None,
    method: Optional[str] = None,
    wall_clock: Optional[Callable[[], float]] = None,
    retry_if_result: Optional[Callable[[Any], object]] = None,
    retry_if_exception: Optional[Callable[[BaseException], object]] = None,
    before: Hook = None,
    after: Hook = None,
    fallback: Optional[Callable[[RetryEvent], Any]] = None,
) -> Any:
    if callable(policy) and not isinstance(policy, RetryPolicy):
        return retry()(policy)
    pol: RetryPolicy = policy if policy is not None else RetryPolicy()
    if not isinstance(pol, RetryPolicy):
        raise _native.error("invalid_type", "policy", f"must be a RetryPolicy, got {type(pol).__name__}")

    # A knob given here wins over the policy's.
    given: Dict[str, Any] = dict(retry_if_result=retry_if_result, retry_if_exception=retry_if_exception, before=before,
                                 after=after, fallback=fallback)
    knobs: Dict[str, Any] = {k: v if v is not None else pol._knobs.get(k) for k, v in given.items()}

    def options(sync_sleep: Optional[Callable[[float], Any]]) -> _native.Runner:
        return _native.Runner(
            pol, sleep=sync_sleep, clock=clock, **_runner_hooks(pol, on_retry, on_give_up, on_state_change), key=key,
            idempotent=idempotent, idempotency_key_sent=idempotency_key_sent, method=method, wall_clock=wall_clock,
            **knobs,
        )

    def decorate(fn: F) -> F:
        _callable(fn, "fn")
        if inspect.iscoroutinefunction(fn):
            return cast(F, _async_wrapper(fn, options(None), sleep))
        return cast(F, functools.wraps(fn)(_Call(_native.run, options(sleep), fn)))

    return decorate


def _async_wrapper(
    fn: Callable[..., Awaitable[Any]], runner: _native.Runner, sleep: Optional[Callable[[float], Awaitable[Any]]]
) -> Callable[..., Awaitable[Any]]:
    """The loop of ``Runner.call`` with the callee and the sleep awaited: every step is the runner's."""

    limited = runner.limited

    @functools.wraps(fn)
    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        session = runner.start(args, kwargs)
        token = _CURRENT.set((session, _native.mark()))
        try:
            while True:
                timeout = runner.before(session)
                if limited:
                    # The limiter's reserved wait (docs/limiters.md, "In a policy"); a
                    # cancellation here cancels the session, which gives the permit back.
                    wait = runner.take_wait(session)
                    if wait > 0:
                        await (sleep or _default_async_sleep)(wait)
                try:
                    result = await asyncio.wait_for(fn(*args, **kwargs), timeout)
                except Exception as e:
                    delay = runner.failed_attempt(session, e)
                else:
                    again = runner.returned_attempt(session, result)
                    if again is None:
                        return result
                    delay = again
                if delay > 0:
                    await (sleep or _default_async_sleep)(delay)
        except _native._Fallback as f:
            # The give-up fallback's value (the session has ended).
            return f.args[0]
        except BaseException:
            # CancelledError, KeyboardInterrupt: the session ends as cancelled (no-op once done).
            runner.cancel(session)
            raise
        finally:
            _CURRENT.reset(token)

    return wrapper


def lint(policy: RetryPolicy, service: Optional[Mapping[str, Any]] = None) -> List[Finding]:
    return _native.lint(policy, service)


def alerts(
    before: Mapping[str, Any], after: Mapping[str, Any], interval: Any, thresholds: Optional[Mapping[str, Any]] = None
) -> Dict[str, Any]:
    # The core reads the document (the CLI's `retrycore alerts` format) and evaluates it.
    doc: Dict[str, Any] = {
        "interval": interval if isinstance(interval, str) else format_duration(interval),
        "before": before,
        "after": after,
    }
    if thresholds is not None:
        doc["thresholds"] = thresholds
    return _native.evaluate_alerts(doc)


def raise_for_decision(decision: Mapping[str, Any]) -> Mapping[str, Any]:
    if not isinstance(decision, dict):
        raise _native.error("invalid_type", "decision", f"must be a decision dict, got {type(decision).__name__}", "idempotency")
    kind = decision.get("decision")
    if kind == "missing_key":
        raise _native.error("missing_field", "key", "the request has no Idempotency-Key", "idempotency")
    if kind not in ("mismatch", "in_progress"):
        return decision
    http = decision.get("http")
    status = http.get("status") if isinstance(http, dict) else None
    if type(status) is not int:
        code = "missing_field" if status is None else "invalid_type"
        raise _native.error(code, "http.status", "a refused decision carries the status of its HTTP answer", "idempotency")
    if kind == "mismatch":
        raise IdempotencyMismatchError(status=status)
    ms = decision.get("retry_after_ms", 0)
    raise IdempotencyInProgressError(retry_after=ms / 1000.0 if type(ms) in (int, float) else 0.0, status=status)


def _document() -> None:
    """Sets the docstrings written in the stubs (``"module:qualname"`` in ``_docs.DOCS``)."""
    for key, text in _DOCS.items():
        module, _, path = key.partition(":")
        obj: Any = _sys.modules[module]
        for part in filter(None, path.split(".")):
            obj = inspect.getattr_static(obj, part)
        for target in (obj, getattr(obj, "__func__", None)):  # a classmethod and its function
            if target is not None:
                target.__doc__ = text


_document()

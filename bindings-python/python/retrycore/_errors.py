"""Exceptions of retrycore.

Every exception carries the core's stable snake_case ``code`` (compare codes,
never messages) and the ``field`` it concerns (``"backoff.initial"``, or
``""``). Configuration errors are ``ValueError``s; those about a wrong type or
shape (``invalid_type``, ``invalid_json``, ``unknown_key``,
``missing_field``) are also ``TypeError``s.
"""

from __future__ import annotations

from typing import Dict, Optional, Type

from . import _native


class RetrycoreError(Exception):
    """Base class of every retrycore exception, with a stable ``code`` and a ``field``."""

    def __init__(self, message: str = "", code: str = "error", field: str = "") -> None:
        super().__init__(message)
        self.code = code
        self.field = field


class ConfigError(RetrycoreError, ValueError):
    """A configuration, document or argument is invalid."""


class ConfigTypeError(ConfigError, TypeError):
    """A configuration value has the wrong type or shape (also a ``TypeError``)."""


class StateError(RetrycoreError, RuntimeError):
    """A call that the object's current state does not allow (``invalid_state``, ``invalid_transition``)."""


class SnapshotError(RetrycoreError, ValueError):
    """A breaker snapshot that is corrupt, of an unknown version, or from other settings."""


class RetryError(RetrycoreError):
    """Retrying stopped: attempts, deadline, breaker or budget ran out.

    ``reason`` is the give-up reason (``attempts_exhausted``,
    ``deadline_exceeded``, ``breaker_open``, ``budget_exhausted``,
    ``retry_after_too_long``, ``throttled``); ``attempts`` the calls made;
    ``__cause__`` the last exception, or ``response`` the last non-ok response
    when the function returned one (``status_code`` not 2xx). Classified again by an outer layer, it
    is ``retry_exhausted`` when ``exhausted`` is true (every give-up retrycore raises:
    the core's ``Ending`` marks it), so it is never retried twice; one made with
    ``exhausted=False`` is transparent and its cause decides, as in JS.
    """

    reason: str
    attempts: int
    category: Optional[str]
    key: Optional[str]
    retry_after: Optional[float]
    response: Optional[object]
    exhausted: bool

    def __init__(
        self,
        message: str = "",
        *,
        reason: str = "attempts_exhausted",
        attempts: int = 0,
        category: Optional[str] = None,
        key: Optional[str] = None,
        retry_after: Optional[float] = None,
        exhausted: bool = True,
    ) -> None:
        super().__init__(message, "retry_exhausted", "")
        self.reason = reason
        self.attempts = attempts
        self.category = category
        self.key = key
        self.retry_after = retry_after
        self.response = None
        self.exhausted = exhausted


class BudgetExhaustedError(RetryError):
    """A retry budget refused the retry (or the adaptive throttle the call)."""

    def __init__(self, message: str = "", *, budget: Optional[str] = None, budget_reason: Optional[str] = None, **kwargs: object) -> None:
        super().__init__(message, **kwargs)  # type: ignore[arg-type]
        self.code, self.budget, self.budget_reason = "budget_exhausted", budget, budget_reason


class CircuitOpenError(RetrycoreError):
    """The circuit breaker refused the call.

    ``retry_after`` is the remaining wait in seconds (``None``: not by waiting,
    e.g. forced open); ``state`` the state that refused; ``breaker`` its name.
    """

    def __init__(self, message: str = "circuit breaker is open", *, retry_after: Optional[float] = None, state: Optional[str] = "open",
                 breaker: Optional[str] = None) -> None:
        super().__init__(message, "breaker_open", "")
        self.retry_after, self.state, self.breaker = retry_after, state, breaker


class IdempotencyError(RetrycoreError, ValueError):
    """An idempotency key, header, canonical JSON, fingerprint, record or dead letter is invalid."""


class IdempotencyTypeError(IdempotencyError, TypeError):
    """A value of the wrong type for canonical JSON (a non-``str`` key, a ``set``, …)."""


class InvalidKeyError(IdempotencyError):
    """An idempotency key (or ``Idempotency-Key`` header) that breaks the key rules."""


class FingerprintError(IdempotencyError):
    """A value that has no canonical JSON: non-finite or inexact numbers, lone surrogates, too deep."""


class FenceError(IdempotencyError):
    """A completion or renewal with a stale (or future) fencing token."""


class DeadLetterError(IdempotencyError):
    """A dead letter that misses a required field or has an invalid one."""


class IdempotencyMismatchError(IdempotencyError):
    """The key was used for a different request; ``status`` is the decision's HTTP status (422, or 400 Stripe-style)."""

    def __init__(self, message: str = "the idempotency key was used for another request", status: Optional[int] = None) -> None:
        super().__init__(message, "mismatch", "")
        self.status = status


class IdempotencyInProgressError(IdempotencyError):
    """The first request with this key still runs; retry after ``retry_after`` seconds.
    ``status`` is the decision's HTTP status (409)."""

    def __init__(self, message: str = "a request with this key is in progress", retry_after: float = 0.0, status: Optional[int] = None) -> None:
        super().__init__(message, "in_progress", "")
        self.retry_after, self.status = retry_after, status


#: The class of each error class the core names, in the core's order (``host_tables()["error_classes"]``,
#: ``retrycore::ErrorClass::ALL``; which class a code raised in a domain is, is the core's
#: ``ErrorCode::class``, never a rule here). tests/python/test_tables.py checks the pairing.
_BY_CLASS: Dict[str, Type[RetrycoreError]] = dict(zip(_native.host_tables()["error_classes"], (
    ConfigError, ConfigTypeError, IdempotencyError, IdempotencyTypeError, StateError, SnapshotError, InvalidKeyError,
    FingerprintError, FenceError, DeadLetterError,
)))


def _from_core(code: str, field: str, message: str, cls: str) -> RetrycoreError:
    """Builds the exception of the core's error class ``cls`` (called by the native module)."""
    return _BY_CLASS[cls](message, code, field)


def _ending(
    kind: str,
    code: str,
    reason: str,
    attempts: int,
    category: Optional[str],
    budget: Optional[str],
    budget_reason: Optional[str],
    retry_after: Optional[float],
    cause: Optional[object],
    key: Optional[str],
    state: Optional[str],
    breaker: Optional[str],
    *,
    message: str,
    marked: bool,
) -> RetrycoreError:
    """Builds the error the core's ``surface::Ending`` names: ``kind`` is its class
    (``retry_error``, ``budget_exhausted``, ``circuit_open``); ``code``, ``reason``,
    ``message`` (``Ending::message``, the same text in JS) and ``marked`` are the
    core's (called by the native module)."""
    if kind == "circuit_open":
        return CircuitOpenError(message, retry_after=retry_after, state=state, breaker=breaker)
    fields = dict(reason=reason, attempts=attempts, category=category, key=key, retry_after=retry_after, exhausted=marked)
    exc: RetryError
    if kind == "budget_exhausted":
        exc = BudgetExhaustedError(message, budget=budget, budget_reason=budget_reason or reason, **fields)
    else:
        exc = RetryError(message, **fields)  # type: ignore[arg-type]
    exc.code = code
    if isinstance(cause, BaseException):
        exc.__cause__ = cause
    elif cause is not None:
        exc.response = cause
    return exc

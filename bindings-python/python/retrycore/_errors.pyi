"""Exceptions of retrycore.

Every exception carries the core's stable snake_case ``code`` (compare codes,
never messages) and the ``field`` it concerns (``"backoff.initial"``, or
``""``). Configuration errors are ``ValueError``s; those about a wrong type or
shape (``invalid_type``, ``invalid_json``, ``unknown_key``,
``missing_field``) are also ``TypeError``s.
"""

# The public contract of _errors.py: its types and its docs (copied into _docs.py by
# scripts/gen-py-docs.py; see __init__.pyi).

from typing import Dict, Optional, Type

class RetrycoreError(Exception):
    """Base class of every retrycore exception, with a stable ``code`` and a ``field``."""

    code: str
    field: str
    def __init__(self, message: str = "", code: str = "error", field: str = "") -> None: ...

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
    ) -> None: ...

class BudgetExhaustedError(RetryError):
    """A retry budget refused the retry (or the adaptive throttle the call)."""

    budget: Optional[str]
    budget_reason: Optional[str]
    def __init__(self, message: str = "", *, budget: Optional[str] = None, budget_reason: Optional[str] = None, **kwargs: object) -> None: ...

class CircuitOpenError(RetrycoreError):
    """The circuit breaker refused the call.

    ``retry_after`` is the remaining wait in seconds (``None``: not by waiting,
    e.g. forced open); ``state`` the state that refused; ``breaker`` its name.
    """

    retry_after: Optional[float]
    state: Optional[str]
    breaker: Optional[str]
    def __init__(
        self, message: str = "circuit breaker is open", *, retry_after: Optional[float] = None, state: Optional[str] = "open",
        breaker: Optional[str] = None,
    ) -> None: ...

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

    status: Optional[int]
    def __init__(self, message: str = "the idempotency key was used for another request", status: Optional[int] = None) -> None: ...

class IdempotencyInProgressError(IdempotencyError):
    """The first request with this key still runs; retry after ``retry_after`` seconds.
    ``status`` is the decision's HTTP status (409)."""

    retry_after: float
    status: Optional[int]
    def __init__(self, message: str = "a request with this key is in progress", retry_after: float = 0.0, status: Optional[int] = None) -> None: ...

_BY_CLASS: Dict[str, Type[RetrycoreError]]

def _from_core(code: str, field: str, message: str, cls: str) -> RetrycoreError: ...
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
    limiter: Optional[str] = None,
) -> RetrycoreError: ...

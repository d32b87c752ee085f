# The exceptions of retrycore. Their public contract, types and docs, is _errors.pyi; the
# docstrings are set when the package is imported (retrycore/__init__.py, from _docs.py).

from __future__ import annotations

from typing import Dict, Optional, Type

from . import _native


class RetrycoreError(Exception):
    def __init__(self, message: str = "", code: str = "error", field: str = "") -> None:
        super().__init__(message)
        self.code = code
        self.field = field


class ConfigError(RetrycoreError, ValueError):
    pass


class ConfigTypeError(ConfigError, TypeError):
    pass


class StateError(RetrycoreError, RuntimeError):
    pass


class SnapshotError(RetrycoreError, ValueError):
    pass


class RetryError(RetrycoreError):
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
        self.response: Optional[object] = None
        self.exhausted = exhausted


class BudgetExhaustedError(RetryError):
    def __init__(self, message: str = "", *, budget: Optional[str] = None, budget_reason: Optional[str] = None, **kwargs: object) -> None:
        super().__init__(message, **kwargs)  # type: ignore[arg-type]
        self.code, self.budget, self.budget_reason = "budget_exhausted", budget, budget_reason


class CircuitOpenError(RetrycoreError):
    def __init__(self, message: str = "circuit breaker is open", *, retry_after: Optional[float] = None, state: Optional[str] = "open",
                 breaker: Optional[str] = None) -> None:
        super().__init__(message, "breaker_open", "")
        self.retry_after, self.state, self.breaker = retry_after, state, breaker


class IdempotencyError(RetrycoreError, ValueError):
    pass


class IdempotencyTypeError(IdempotencyError, TypeError):
    pass


class InvalidKeyError(IdempotencyError):
    pass


class FingerprintError(IdempotencyError):
    pass


class FenceError(IdempotencyError):
    pass


class DeadLetterError(IdempotencyError):
    pass


class IdempotencyMismatchError(IdempotencyError):
    def __init__(self, message: str = "the idempotency key was used for another request", status: Optional[int] = None) -> None:
        super().__init__(message, "mismatch", "")
        self.status = status


class IdempotencyInProgressError(IdempotencyError):
    def __init__(self, message: str = "a request with this key is in progress", retry_after: float = 0.0, status: Optional[int] = None) -> None:
        super().__init__(message, "in_progress", "")
        self.retry_after, self.status = retry_after, status


#: The core's tables (``retrycore::tables::host_tables()``), read once; the package reads them from here too.
_TABLES = _native.host_tables()

#: The class of each error class the core names, in the core's order (``host_tables()["error_classes"]``,
#: ``retrycore::ErrorClass::ALL``; which class a code raised in a domain is, is the core's
#: ``ErrorCode::class``, never a rule here). tests/python/test_tables.py checks the pairing.
_BY_CLASS: Dict[str, Type[RetrycoreError]] = dict(zip(_TABLES["error_classes"], (
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
    limiter: Optional[str] = None,
) -> RetrycoreError:
    """Builds the error the core's ``surface::Ending`` names: ``kind`` is its class
    (``retry_error``, ``budget_exhausted``, ``circuit_open``, ``limiter_rejected``);
    ``code``, ``reason``, ``message`` (``Ending::message``, the same text in JS) and
    ``marked`` are the core's (called by the native module)."""
    if kind == "circuit_open":
        return CircuitOpenError(message, retry_after=retry_after, state=state, breaker=breaker)
    if kind == "limiter_rejected":
        from ._limiters import LimiterRejectedError

        return LimiterRejectedError(message, limiter=limiter or "", reason=reason, retry_after=retry_after)
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

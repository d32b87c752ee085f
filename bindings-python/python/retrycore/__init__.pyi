"""retrycore: one retry-policy engine for every runtime, in Python.

Backoff with jitter, failure classification, Retry-After, retry budgets,
circuit breakers and idempotency keys, decided by the same Rust core as the
Node, wasm and Rust users of the same policy document. Durations are float
seconds, like ``time.sleep``.

    import retrycore

    policy = retrycore.RetryPolicy(max_attempts=4, initial=0.2, deadline=10.0)

    @retrycore.retry(policy, idempotent=True)
    def fetch(url):
        ...
"""

# The public contract of the facade (__init__.py): its types and its docs. The docstrings
# here are the facade's; scripts/gen-py-docs.py copies them into _docs.py, which __init__.py
# applies at import time, and tests/python/test_docs_facade.py fails when they drift.
# mypy.stubtest (make -C bindings-python test) holds this file to the runtime module.

import logging
import os
from datetime import timedelta
from typing import Any, Callable, Dict, List, Mapping, Optional, TypeVar, Union, overload

from . import _native
from ._errors import (
    BudgetExhaustedError, CircuitOpenError, ConfigError, ConfigTypeError, DeadLetterError, FenceError,
    FingerprintError, IdempotencyError, IdempotencyInProgressError, IdempotencyMismatchError, IdempotencyTypeError,
    InvalidKeyError, RetrycoreError, RetryError, SnapshotError, StateError,
)
from ._limiters import Limiter as Limiter, LimiterRejectedError as LimiterRejectedError
from ._native import (
    Acquired, DeadLetter, Finding, GiveUp, Permit, Proceed, Random, RecordConfig, Refusal, Reject, Retry, RetryEvent,
    RetrySession, ScheduleRow, ServerAdvice, Transition, Verdict, canonicalize, canonicalize_json, classify, complete,
    decide, derive_key, error_names, fingerprint, fingerprint_json, format_duration, format_header, format_number,
    format_rfc3339_ms, mint_key, parse_duration, parse_header, parse_http_date, parse_rfc3339_ms, renew_lease,
    scoped_key, server_advice, storage_key, validate_key,
)

__version__: str

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
RetryLogger = Union[None, logging.Logger, logging.LoggerAdapter[Any], Callable[[Dict[str, Any]], object]]

def current_attempt() -> Optional[RetrySession]:
    """Returns the session of the decorated call running in this context, or ``None``.

    Inside a function wrapped by :func:`retry` (or run by
    :meth:`RetryPolicy.call`) it gives the idempotency ``key`` (the same for
    every attempt), the ``attempt`` number, ``max_attempts`` and the
    ``timeout`` left for this attempt.
    """

#: The input limits every entry point applies (``retrycore::limits`` of the core, by name):
#: ``max_items`` elements per list, ``max_depth`` levels of nesting, ``max_document_bytes``
#: per document, ``max_headers`` per failure, ``max_chain`` exceptions per cause chain, …
LIMITS: Mapping[str, int]

def error_codes() -> List[str]:
    """Every error code the core can raise."""

def categories() -> List[str]:
    """Every failure category."""

def give_up_reasons() -> List[str]:
    """Every give-up reason."""

class CircuitBreaker(_native.CircuitBreaker):
    """A circuit breaker shared by reference (resilience4j's model, docs/breakers-and-budgets.md).

    ``CircuitBreaker(failure_rate_threshold=50, minimum_number_of_calls=20,
    wait_duration_in_open_state=30.0)`` takes the document's keys (durations
    as float seconds); ``CircuitBreaker({"kind": "consecutive"})`` a document
    dict. Use it as a decorator (sync and ``async def``), as a context manager
    (``with breaker:`` / ``async with breaker:``), or call
    ``try_acquire``/``record`` yourself. Share it among policies with
    ``RetryPolicy(breaker=breaker)``.
    """

    def __new__(cls, config: Optional[Mapping[str, Any]] = None, *, on_state_change: StateHook = None, **kwargs: Any) -> CircuitBreaker: ...
    @classmethod
    def _share(cls, native: _native.CircuitBreaker, on_state_change: StateHook = None) -> CircuitBreaker: ...
    def __call__(self, fn: F) -> F:
        """Guards a function (sync or ``async def``) with the breaker."""
    def __enter__(self) -> CircuitBreaker: ...
    def __exit__(self, exc_type: Any, exc: Optional[BaseException], tb: Any) -> None: ...
    async def __aenter__(self) -> CircuitBreaker: ...
    async def __aexit__(self, exc_type: Any, exc: Optional[BaseException], tb: Any) -> None: ...

class Budget(_native.Budget):
    """A retry budget shared by reference (docs/breakers-and-budgets.md).

    ``Budget.token_bucket()``, ``Budget.grpc(max_tokens=10, token_ratio=0.1)``,
    ``Budget.ratio(ratio=0.2)``, ``Budget.concurrency()``, ``Budget.finagle()``, ``Budget.adaptive()``,
    or ``Budget(kind="ratio", window=10.0)`` / ``Budget({"kind": ...})``.
    """

    def __new__(cls, config: Optional[Mapping[str, Any]] = None, **kwargs: Any) -> Budget: ...
    @classmethod
    def _share(cls, native: _native.Budget) -> Budget: ...
    @classmethod
    def token_bucket(cls, **kwargs: Any) -> Budget:
        """AWS SDK standard mode (a token bucket)."""
    @classmethod
    def grpc(cls, max_tokens: float, token_ratio: float, **kwargs: Any) -> Budget:
        """gRFC A6 retry throttling (no defaults: both numbers are required)."""
    @classmethod
    def ratio(cls, **kwargs: Any) -> Budget:
        """Retries ≤ ratio × first attempts + a minimum per second."""
    @classmethod
    def concurrency(cls, **kwargs: Any) -> Budget:
        """Envoy's budget: retries in flight < max(ratio × calls in flight, minimum)."""
    @classmethod
    def finagle(cls, **kwargs: Any) -> Budget:
        """Finagle's RetryBudget."""
    @classmethod
    def adaptive(cls, **kwargs: Any) -> Budget:
        """Google SRE client-side throttling."""

class RetryPolicy(_native.Policy):
    """A retry policy: the policy document's settings plus its shared
    generator, breaker, budgets and counters.

    Keyword arguments are the document's keys (``max_attempts``,
    ``initial``, ``max_delay``, ``jitter``, ``deadline``, ``breaker``,
    ``budget``, …) with durations as float seconds (or duration strings, or
    ``timedelta``); ``breaker`` and ``budget``/``budgets`` may also be shared
    :class:`CircuitBreaker`/:class:`Budget` objects. ``limiter`` (a
    limiter's keys as a dict, or a profile's name such as
    ``"aws-adaptive"``) puts a limiter in front of every attempt
    (docs/limiters.md, "In a policy"): its waits are slept before the call,
    a refused first attempt raises :class:`LimiterRejectedError`.
    ``on_retry``, ``on_give_up`` and ``on_state_change`` are hooks used by
    :meth:`call` and :func:`retry`; so are ``retry_if_result``,
    ``retry_if_exception``, ``before``, ``after`` and ``fallback`` (see
    :func:`retry`; one given to :func:`retry` wins), which :meth:`from_dict`,
    :meth:`from_json` and :meth:`from_file` take too.

    ``logger`` writes a record of each retry (``WARNING``) and give-up
    (``ERROR`` when a retry limit ran out or a breaker refused, else
    ``INFO``) to a ``logging.Logger`` (``logging.getLogger("retrycore")``)
    or ``LoggerAdapter``, its fields as ``extra`` (``attempt``,
    ``category``, ``error``, ``delay_ms``, ``idempotency_key``,
    ``correlation_id``, …: docs/observability.md, "The retry log"); a
    callable gets the record dict instead. None (the default): silent.
    ``correlation_id`` is called for each record (a request id from a
    ``ContextVar``); without it the record's is the idempotency key.
    """

    on_retry: Hook
    on_give_up: Hook
    on_state_change: StateHook
    logger: RetryLogger
    correlation_id: Optional[Callable[[], Optional[str]]]
    _runner: Optional[_native.Runner]
    _knobs: Mapping[str, Any]
    def __new__(cls, *, on_retry: Hook = None, on_give_up: Hook = None, on_state_change: StateHook = None,
                logger: RetryLogger = None, correlation_id: Optional[Callable[[], Optional[str]]] = None,
                **kwargs: Any) -> RetryPolicy: ...
    @classmethod
    def _wrap(
        cls, p: _native.Policy, on_retry: Hook = None, on_give_up: Hook = None, on_state_change: StateHook = None,
        metrics: Any = None, knobs: Optional[Mapping[str, Any]] = None, logger: RetryLogger = None,
        correlation_id: Optional[Callable[[], Optional[str]]] = None,
    ) -> RetryPolicy: ...
    def _again(self, p: _native.Policy, metrics: Any = None) -> RetryPolicy: ...
    @property
    def _p(self) -> _native.Policy: ...
    @classmethod
    def profile(cls, name: str, **kwargs: Any) -> RetryPolicy:
        """The policy of the compatibility profile ``name`` (docs/profiles.md), ``kwargs`` (keys
        and hooks, as for the constructor) laid over its defaults."""
    @classmethod
    def from_dict(cls, document: Mapping[str, Any], **hooks: Any) -> RetryPolicy:  # type: ignore[override]
        """Reads a policy document given as a dict (the same JSON as every runtime: durations as strings)."""
    @classmethod
    def from_json(cls, text: Union[str, bytes], **hooks: Any) -> RetryPolicy:  # type: ignore[override]
        """Reads a policy document from JSON text (a ``str``, or UTF-8 ``bytes``).

        The text is never taken for a file name, whatever its shape: use
        :meth:`from_file` to read a file.
        """
    @classmethod
    def from_file(cls, path: Union[str, os.PathLike[str]], **hooks: Any) -> RetryPolicy:
        """Reads a policy document from the JSON file at ``path``.

        Reads at most ``LIMITS["max_document_bytes"]`` + 1 bytes (a longer file is
        ``too_large``); an unreadable file raises the ``OSError`` of ``open()``.
        """
    @property
    def breaker(self) -> Optional[CircuitBreaker]: ...
    @property
    def budgets(self) -> List[Budget]: ...  # type: ignore[override]
    def testing(self, attempts: int, max_delay: float = 0.0) -> RetryPolicy:  # type: ignore[override]
        """A policy for your test suite: at most ``attempts`` calls, delays capped at ``max_delay`` (0: no sleep)."""
    def call(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
        """Calls ``fn(*args, **kwargs)`` with retries; ``async`` functions return an awaitable."""
    def __repr__(self) -> str: ...
    def __copy__(self) -> RetryPolicy: ...
    def with_metrics(self, *exporters: Any, operation: Optional[str] = None) -> RetryPolicy:
        """This policy (sharing its generator, breaker, budgets and counters) with
        metrics exporters (``retrycore.metrics.PrometheusExporter``,
        ``OpenTelemetryExporter``) recording what its calls do, under the name
        ``operation`` (default: the policy's ``name``, else ``"default"``): each
        retry, each success or give-up with its durations, each breaker transition.
        The core decides the samples (docs/observability.md, "Exporters"); your own
        hooks still run, after the exporters.
        """

@overload
def retry(policy: F) -> F:
    """Retries a function (plain or ``async def``) under a policy.

    - ``sleep``: how to wait (default ``time.sleep``; ``asyncio.sleep`` for
      coroutines); never called when the delay is 0.
    - ``clock``: monotonic float seconds (default: the ``time.monotonic`` clock);
      ``wall_clock``: Unix epoch milliseconds, for HTTP-date ``Retry-After``
      values (default: the system clock).
    - ``idempotent`` / ``idempotency_key_sent``: the caller's declarations
      (docs/classification-rules.md); ``method``: the HTTP method when exceptions do not carry it.
    - ``key``: ``key(*args, **kwargs) -> str`` gives the idempotency key
      (default: a minted UUID); the same key is used for every attempt and
      is readable through :func:`current_attempt`.
    - ``on_retry`` / ``on_give_up`` / ``on_state_change``: hooks (default:
      the policy's). ``before`` is called before each attempt and ``after``
      after each failed attempt (before ``on_retry`` / ``on_give_up``), as
      tenacity's ``before`` / ``after``, with a :class:`RetryEvent`.
    - ``retry_if_exception`` / ``retry_if_result``: your own predicates
      (tenacity's names), called with each exception / each returned value.
      Their answer goes to the core like a rule's verdict
      (docs/classification-rules.md, "Host predicates"): ``True`` retries
      always, ``False`` never (an exception), a category (``"overloaded"``,
      ``"server_error"``: the policy's rule for it, idempotency gating
      included), a retry rule or ``"category:rule"``; ``None`` is no opinion.
      A truthy answer for a value makes it a failure; a falsy one leaves it
      as it is.
    - ``fallback``: called when the call gives up with an error (retrying
      ran out, a failure nothing retries, a refused first attempt), with the
      give-up :class:`RetryEvent` (``exception``: the error it would raise);
      its return value is returned instead (tenacity's
      ``retry_error_callback``, Polly's Fallback).

    Giving up raises :class:`RetryError` (``__cause__`` = the last error)
    when retrying ran out; an error that is not retryable propagates as is.
    A returned response (``requests.Response``, ``httpx.Response``, aiohttp's
    ``ClientResponse``, urllib3's ``HTTPResponse``: the shapes the core lists)
    that is not 2xx is answered like a failure: retried when its status is,
    else returned as is (``RetryError.response`` when retrying ran out). The
    request's method is read from the response or the error
    (``e.request.method``, aiohttp's ``e.request_info.method``) unless
    ``method`` is given.
    """
@overload
def retry(
    policy: Optional[RetryPolicy] = None,
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
) -> Callable[[F], F]: ...
def lint(policy: RetryPolicy, service: Optional[Mapping[str, Any]] = None) -> List[Finding]:
    """Findings about a policy (and its service description), each with a stable code."""

def _runner_hooks(
    pol: RetryPolicy, on_retry: Optional[Callable[[RetryEvent], object]] = None,
    on_give_up: Optional[Callable[[RetryEvent], object]] = None,
    on_state_change: Optional[Callable[[Transition], object]] = None,
) -> Dict[str, Any]: ...

def alerts(
    before: Mapping[str, Any], after: Mapping[str, Any], interval: Union[float, str, timedelta],
    thresholds: Optional[Mapping[str, Any]] = None,
) -> Dict[str, Any]:
    """Checks the alert rules over two counter snapshots ``interval`` apart (seconds,
    a ``timedelta`` or a duration string), as ``retrycore alerts`` does: each snapshot
    is ``{"policies": {name: policy.counters()}, "breakers": {name: state},
    "idempotency": {endpoint: {outcome: count}}}`` (every part optional);
    ``thresholds`` replaces the defaults per rule (``{"retry_rate": {"above": 0.2,
    "min_volume": 50}}``). Returns ``{"interval", "alerts": n, "checks": [...]}``,
    firing checks first, each with its ``rule``, ``level``, ``subject``, ``status``
    (``firing``, ``ok``, ``low_volume``), ``value``, ``count``, ``volume``, ``above``
    and ``message`` (docs/observability.md, "Alerts").
    """

def raise_for_decision(decision: Mapping[str, Any]) -> Mapping[str, Any]:
    """Raises for a refused record decision from :func:`decide`, else returns it.

    ``mismatch`` → :class:`IdempotencyMismatchError`, ``in_progress`` →
    :class:`IdempotencyInProgressError` (``.retry_after`` seconds), each with the
    ``.status`` of the decision's ``http`` answer (422, or 400 Stripe-style; 409);
    ``missing_key`` → :class:`IdempotencyTypeError` (``missing_field``, ``key``).
    """

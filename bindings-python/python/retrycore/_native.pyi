"""Type stubs of the native module `retrycore._native` (checked by `mypy.stubtest`).

Durations are float seconds (an int is taken too); `now` arguments are seconds on the
`time.monotonic()` clock (omitted: read from it); wall-clock times are Unix epoch
milliseconds. Documents (policies, breakers, budgets, records, letters) are JSON-shaped
dicts; the native module checks every value itself and raises a `retrycore` error with
a `.code` for anything else, so these types describe what is accepted, not more.
"""

import sys
from typing import (
    Any,
    Callable,
    Dict,
    Iterable,
    List,
    Literal,
    Mapping,
    Optional,
    Protocol,
    Sequence,
    Tuple,
    TypeVar,
    Union,
    final,
)

from typing_extensions import disjoint_base

from ._errors import RetrycoreError

if sys.version_info >= (3, 11):
    from typing import Self
else:
    from typing_extensions import Self

_T = TypeVar("_T")

# A JSON value as Python gives it: dict with str keys, list or tuple, str, int, float, bool, None.
_Json = Union[None, bool, int, float, str, Sequence["_Json"], Mapping[str, "_Json"]]
_Document = Mapping[str, Any]
_Strs = Union[List[str], Tuple[str, ...]]
#: Smithy's ``@retryable`` trait with its flag: ``{"throttling": True}``.
_RetryableTrait = Mapping[str, bool]
_Floats = Union[List[float], Tuple[float, ...]]

class _SupportsItems(Protocol):
    def items(self) -> Iterable[Tuple[Any, Any]]: ...

# Headers: a mapping (or anything with `items()`, like `email.message.Message`) or (name, value) pairs.
_Headers = Union[_SupportsItems, Iterable[Tuple[str, str]]]

# A response read like a failure, at the core's paths (`host_tables()["reads"]["python"]`):
# `requests.Response` / `httpx.Response` (`status_code`), aiohttp's `ClientResponse` and
# urllib3's `HTTPResponse` (`status`).
class _StatusCodeResponse(Protocol):
    @property
    def status_code(self) -> int: ...

class _StatusResponse(Protocol):
    @property
    def status(self) -> int: ...

_Response = Union[_StatusCodeResponse, _StatusResponse]

# The core's lists (`retrycore::tables::host_tables()`); tests/python/test_tables.py fails
# when one of these unions differs from the core's.
_Category = Literal[
    "connect", "not_processed", "overloaded", "connection_lost", "timeout", "server_error",
    "resource_exhausted", "conflict", "invalid_request", "auth", "not_found", "open_breaker",
    "retry_exhausted", "cancelled", "programming_error", "unknown",
]
_GiveUpReason = Literal[
    "cancelled", "not_retryable", "server_declined", "attempts_exhausted", "breaker_open",
    "budget_exhausted", "retry_after_too_long", "deadline_exceeded", "throttled", "limiter_rejected",
]
_RejectReason = Literal["breaker_open", "throttled", "deadline_exceeded", "concurrency_limited", "limiter_rejected"]
_BackoffKind = Literal["constant", "linear", "exponential", "decorrelated"]
_Jitter = Literal["none", "full", "equal", "proportional", "additive", "symmetric"]
_BreakerKind = Literal["count_based", "time_based", "consecutive", "sampling"]
_BudgetKind = Literal["token_bucket", "grpc", "ratio", "concurrency", "finagle", "adaptive"]
_Profile = Literal["aws-standard", "aws-2026", "grpc", "polly", "resilience4j", "finagle", "tenacity", "stamina", "envoy"]

_PolicyLike = Policy  # the facade's RetryPolicy is one
_RetryHook = Callable[[RetryEvent], object]
_StateHook = Callable[[Transition], object]

__all__ = [
    "__version__",
    "_Fallback",
    "Policy",
    "RetrySession",
    "Runner",
    "error",
    "Proceed",
    "Reject",
    "Retry",
    "GiveUp",
    "RetryEvent",
    "ScheduleRow",
    "CircuitBreaker",
    "Permit",
    "Acquired",
    "Transition",
    "Budget",
    "Refusal",
    "Verdict",
    "ServerAdvice",
    "Finding",
    "Random",
    "RecordConfig",
    "DeadLetter",
    "Limiter",
    "CompensationRun",
    "DeadLetterReplay",
    "classify",
    "error_names",
    "parse_duration",
    "format_duration",
    "server_advice",
    "parse_http_date",
    "lint",
    "retry_log_record",
    "host_tables",
    "metric_samples",
    "evaluate_alerts",
    "derive_key",
    "run",
    "mark",
    "current",
    "validate_key",
    "scoped_key",
    "storage_key",
    "mint_key",
    "format_header",
    "parse_header",
    "canonicalize",
    "canonicalize_json",
    "format_number",
    "fingerprint",
    "fingerprint_json",
    "decide",
    "complete",
    "renew_lease",
    "format_rfc3339_ms",
    "parse_rfc3339_ms",
    "noop",
    "noop_obj",
]

__version__: str

# ---------------------------------------------------------------- policies and sessions

@disjoint_base
class Policy:
    """A live retry policy (the facade's `RetryPolicy` subclasses it, adding hooks)."""
    def __new__(cls, share: _PolicyLike) -> Self:
        """A policy that shares `share`'s settings, generator, breaker, budgets and counters."""
    @staticmethod
    def from_dict(doc: _Document, kwargs: Optional[bool] = None, entropy: Optional[int] = None) -> Policy:
        """Reads a policy document given as a dict (`kwargs=True`: typed options, durations also float seconds)."""
    @staticmethod
    def from_json(text: Union[str, bytes], entropy: Optional[int] = None) -> Policy:
        """Parses a policy document (JSON text, as a str or UTF-8 bytes); never reads a file."""
    def to_dict(self) -> Dict[str, Any]:
        """The normalized document, every setting spelled out."""
    def to_json(self) -> str:
        """The normalized document as JSON text."""
    @property
    def max_attempts(self) -> int:
        """Calls at most, the first included."""
    @property
    def name(self) -> Optional[str]:
        """The policy's name, if it has one."""
    @property
    def breaker(self) -> Optional[CircuitBreaker]:
        """The circuit breaker the policy's sessions share, if any."""
    @property
    def budgets(self) -> List[Budget]:
        """The retry budgets the policy's sessions share."""
    def _with_breaker(self, breaker: Optional[CircuitBreaker]) -> Policy:
        """A policy with the same settings whose sessions share `breaker`."""
    def _with_budgets(self, budgets: Sequence[Union[Budget, _Document]]) -> Policy:
        """A policy with the same settings whose sessions share `budgets`."""
    def schedule(self) -> List[ScheduleRow]:
        """Low / mid / high delay per retry, in seconds, and the cumulative worst case."""
    def worst_case(self) -> float:
        """The cumulative worst-case wait, in seconds."""
    def delay(self, retry: int, r: float, prev: Optional[float] = None) -> float:
        """The delay in seconds before retry `retry` (≥ 1) for the draw `r` in [0, 1].

        A delay that depends on earlier retries is refused rather than guessed: a
        decorrelated retry after the first needs `prev` (`missing_field`), and the
        `polly` profile's exponential backoff with jitter is refused after the first
        retry (`invalid_combination`): use `replay_delays`.
        """
    def sample_delays(self, seed: int, count: int) -> List[float]:
        """Delays of retries 1..count from a generator seeded with `seed`."""
    def replay_delays(self, draws: _Floats) -> List[float]:
        """Delays of retries 1..len(draws), retry n taking draw n."""
    def session(
        self,
        key: Optional[str] = None,
        seed: Optional[int] = None,
        idempotent: Optional[bool] = None,
        idempotency_key_sent: Optional[bool] = None,
        method: Optional[str] = None,
        draws: Optional[_Floats] = None,
    ) -> RetrySession:
        """Starts one logical operation that you drive yourself.

        `draws` replays these draws instead of the generator, retry n taking draw n;
        they never cycle: a retry past the last one raises `invalid_state` (`draws`).
        """
    def testing(self, attempts: int, max_delay: Optional[float] = None) -> Policy:
        """A policy for test suites: at most `attempts` calls, every delay capped at `max_delay` seconds."""
    def counters(self) -> Dict[str, Any]:
        """The counters of every session of this policy (the `retry_attempts_total` family of metric names)."""

@final
class ScheduleRow:
    """One row of a schedule, in seconds."""
    @property
    def retry(self) -> int:
        """The retry number n (1 = the wait before attempt 2)."""
    @property
    def attempt(self) -> int:
        """The attempt that follows this wait (`retry` + 1)."""
    @property
    def low(self) -> float:
        """The infimum of the delay over r."""
    @property
    def mid(self) -> float:
        """The delay at r = 0.5."""
    @property
    def high(self) -> float:
        """The supremum of the delay over r."""
    @property
    def cumulative_low(self) -> float:
        """The sum of `low` up to this retry."""
    @property
    def cumulative_high(self) -> float:
        """The sum of `high` up to this retry: the worst case wait so far."""

@final
class Proceed:
    """The answer of `before_attempt` when the call may be made."""
    @property
    def attempt(self) -> int:
        """The number of this call (1 = first)."""
    @property
    def max_attempts(self) -> int:
        """The policy's `max_attempts` (for headers such as `amz-sdk-request`)."""
    @property
    def timeout(self) -> Optional[float]:
        """Seconds the call may take (None: unbounded)."""
    @property
    def wait(self) -> Optional[float]:
        """Seconds to sleep before the call: the policy's limiter reserved a
        permit for then (None: go now). Sleep cancellably; a cancelled wait
        calls `cancel`, which gives the permit back (docs/limiters.md, "In a policy")."""

@final
class Reject:
    """The answer of `before_attempt` when the call may not be made."""
    @property
    def reason(self) -> _RejectReason:
        """Why (`breaker_open`, `throttled`, `deadline_exceeded`, `concurrency_limited`,
        `limiter_rejected`: read `RetrySession.limiter_rejection`)."""
    @property
    def retry_after(self) -> Optional[float]:
        """Seconds until the call could be admitted (None: not by waiting)."""
    @property
    def budget(self) -> Optional[str]:
        """The budget that refused (throttled), if any."""

@final
class Retry:
    """The answer to a failed attempt when the session calls again after `delay`."""
    @property
    def retry(self) -> int:
        """The retry number n (1 = the first retry)."""
    @property
    def attempt(self) -> int:
        """The number of the coming call (`retry` + 1)."""
    @property
    def delay(self) -> float:
        """Seconds to wait before the coming call."""
    @property
    def backoff(self) -> float:
        """The backoff part of the delay, in seconds."""
    @property
    def server_delay(self) -> Optional[float]:
        """The server's delay in seconds, if present and honoured."""
    @property
    def capped(self) -> bool:
        """The server delay was longer than `max_retry_after` and was capped."""
    @property
    def category(self) -> _Category:
        """The failure's category."""

@final
class GiveUp:
    """The answer to a failed attempt when the session stops."""
    @property
    def reason(self) -> _GiveUpReason:
        """Why the session gave up (`not_retryable`, `attempts_exhausted`, …)."""
    @property
    def category(self) -> _Category:
        """The failure's category (its underlying one when marked exhausted)."""
    @property
    def exhausted(self) -> bool:
        """The surfaced error is marked `retry_exhausted` for outer layers."""
    @property
    def attempts(self) -> int:
        """Attempts made."""
    @property
    def budget(self) -> Optional[str]:
        """The budget that refused the retry, if one did."""
    @property
    def budget_reason(self) -> Optional[str]:
        """Why that budget refused, if one did."""

@final
class RetrySession:
    """One logical operation (also what `retrycore.current_attempt()` returns
    inside a decorated call).
    """
    @property
    def key(self) -> str:
        """The idempotency key every attempt carries."""
    @property
    def key_minted(self) -> bool:
        """True when the session minted the key itself (it then does not make a request safe to repeat)."""
    @property
    def attempt(self) -> int:
        """The number of the current (or last) attempt; 0 before the first."""
    @property
    def max_attempts(self) -> int:
        """The policy's `max_attempts`."""
    @property
    def timeout(self) -> Optional[float]:
        """Seconds the current attempt may take (min of `attempt_timeout` and the time left), or None."""
    @property
    def done(self) -> bool:
        """True once the session has ended."""
    @property
    def give_up_reason(self) -> Optional[str]:
        """Why the session gave up, or None."""
    @property
    def limiter_rejection(self) -> Optional[Dict[str, Any]]:
        """The policy's limiter's refusal when it refused an attempt
        (`limiter_rejected`): ``{"decision": "reject", "limiter", "reason",
        "retry_after"}`` (seconds or None), else None."""
    def before_attempt(self, now: Optional[float] = None) -> Union[Proceed, Reject]:
        """Gates the next attempt: a `Proceed` or a `Reject`."""
    def on_failure(
        self,
        failure: Union[BaseException, _Response, _Document, None] = None,
        now: Optional[float] = None,
        *,
        status: Optional[int] = None,
        grpc_code: Union[int, str, None] = None,
        error_names: Optional[_Strs] = None,
        method: Optional[str] = None,
        idempotent: Optional[bool] = None,
        idempotency_key_sent: Optional[bool] = None,
        headers: Optional[_Headers] = None,
        elapsed: Optional[float] = None,
        wall_now_ms: Optional[int] = None,
        message: Optional[str] = None,
    retryable: Union[bool, _RetryableTrait, None] = None,
        should_retry: Optional[bool] = None,
        verdict: Union[bool, str, None] = None,
    ) -> Union[Retry, GiveUp]:
        """Answers a failed attempt — an exception, a response, a dict of failure
        fields, or keyword fields — with a `Retry` or a `GiveUp`.

        The method read from an exception or a response (`e.request.method`,
        aiohttp's `e.request_info.method`) yields to the session's `method`.
        """
    def on_success(self, now: Optional[float] = None, elapsed: Optional[float] = None) -> None:
        """Records a successful attempt and finishes the session."""
    def cancel(self, now: Optional[float] = None) -> None:
        """Ends the session as cancelled (does nothing once done)."""
    def release(self) -> None:
        """Gives back a permit and slots without counting anything."""
    def take_transitions(self) -> List[Transition]:
        """The breaker transitions this session's calls caused since the last call."""

@final
class RetryEvent:
    """What a hook receives."""
    @property
    def attempt(self) -> int:
        """The attempt that failed (or was refused)."""
    @property
    def retry(self) -> Optional[int]:
        """The retry number about to happen (on_retry), else None."""
    @property
    def max_attempts(self) -> int:
        """The policy's `max_attempts`."""
    @property
    def category(self) -> Optional[_Category]:
        """The failure's category, if there was a failure."""
    @property
    def delay(self) -> Optional[float]:
        """The decided delay in seconds (on_retry)."""
    @property
    def reason(self) -> Optional[_GiveUpReason]:
        """The give-up reason (on_give_up)."""
    @property
    def budget(self) -> Optional[str]:
        """The budget that refused, if one did."""
    @property
    def exception(self) -> Optional[BaseException]:
        """The exception of the failed attempt, if any."""
    @property
    def key(self) -> str:
        """The session's idempotency key."""
    @property
    def elapsed(self) -> Optional[float]:
        """Seconds since the call's first attempt began (on_retry, on_give_up, on_success)."""
    @property
    def attempt_duration(self) -> Optional[float]:
        """Seconds the attempt that just ended took; None when the call ended at a
        gate that refused the next attempt (on_give_up).
        """

class _Fallback(BaseException):
    """Carries a give-up fallback's value out of the retry loop (args[0]); never seen by callers."""

@final
class Runner:
    """The retry loop of one decorator (or `policy.call`): its policy, sleep,
    clock, hooks and declarations.
    """
    def __new__(
        cls,
        policy: _PolicyLike,
        *,
        sleep: Optional[Callable[[float], object]] = None,
        clock: Optional[Callable[[], float]] = None,
        on_retry: Optional[_RetryHook] = None,
        on_give_up: Optional[_RetryHook] = None,
        on_state_change: Optional[_StateHook] = None,
        key: Optional[Callable[..., str]] = None,
        idempotent: Optional[bool] = None,
        idempotency_key_sent: Optional[bool] = None,
        method: Optional[str] = None,
        wall_clock: Optional[Callable[[], float]] = None,
        on_success: Optional[_RetryHook] = None,
        on_refused: Optional[_RetryHook] = None,
        retry_if_result: Optional[Callable[[Any], object]] = None,
        retry_if_exception: Optional[Callable[[BaseException], object]] = None,
        before: Optional[_RetryHook] = None,
        after: Optional[_RetryHook] = None,
        fallback: Optional[Callable[[RetryEvent], Any]] = None,
    ) -> Self: ...
    def call(self, func: Callable[..., _T], args: Tuple[Any, ...], kwargs: Optional[Dict[str, Any]] = None) -> _T:
        """Calls `func(*args, **kwargs)` with retries (synchronous; sleeps with `sleep`, default `time.sleep`)."""
    def start(self, args: Tuple[Any, ...], kwargs: Optional[Dict[str, Any]] = None) -> RetrySession:
        """Starts a session for one call (the async loop's first step)."""
    def before(self, session: RetrySession) -> Optional[float]:
        """Gates an attempt: the timeout in seconds (or None), or raises the local rejection / `RetryError`."""
    def failed_attempt(self, session: RetrySession, exc: BaseException) -> float:
        """Answers a failed attempt: the delay in seconds, or raises (`RetryError`, or the error itself)."""
    def returned_attempt(self, session: RetrySession, value: object) -> Optional[float]:
        """Answers a returned value: None to return it (recorded as a success, or
        a non-ok response nothing retries), the delay in seconds to retry a
        non-ok response, or raises `RetryError`.
        """
    def cancel(self, session: RetrySession) -> None:
        """Cancels the session (no-op once done)."""
    @property
    def limited(self) -> bool:
        """True when the policy has a limiter (then `take_wait` after each `before`)."""
    def take_wait(self, session: RetrySession) -> float:
        """The wait in seconds (0.0: none) the policy's limiter reserved before
        the attempt `before` let through: the async loop sleeps it, then calls."""

def error(code: str, field: str, why: str, domain: Optional[Literal["config", "idempotency"]] = None) -> RetrycoreError:
    """The exception of the class the core names for `code` raised in `domain`
    (`config`, the default, or `idempotency`; `ErrorCode::class`): the facade's own checks raise it.
    """

# ---------------------------------------------------------------- breakers and budgets

@disjoint_base
class CircuitBreaker:
    """A circuit breaker shared by reference."""
    def __new__(
        cls,
        config: Optional[_Document] = None,
        *,
        kwargs: Optional[bool] = None,
        on_state_change: Optional[_StateHook] = None,
        share: Optional[CircuitBreaker] = None,
        overrides: Optional[Dict[str, Any]] = None,
    ) -> Self: ...
    def to_dict(self) -> Dict[str, Any]:
        """The settings as a document."""
    @property
    def name(self) -> Optional[str]:
        """The breaker's name, if it has one."""
    @property
    def on_state_change(self) -> Optional[_StateHook]:
        """The hook called with each `Transition`, if any."""
    @property
    def state(self) -> str:
        """The current state (`closed`, `open`, `half_open`, `disabled`, `forced_open`, `metrics_only`)."""
    @property
    def rejections(self) -> int:
        """Calls refused so far."""
    def totals(self) -> Dict[str, int]:
        """The window's totals: calls, failures, slow."""
    def try_acquire(self, now: Optional[float] = None) -> Acquired:
        """Asks to make one call."""
    def acquire(self, now: Optional[float] = None) -> Permit:
        """Takes a permit, or raises `CircuitOpenError`."""
    def record(
        self,
        permit: Permit,
        outcome: Union[str, BaseException, None] = None,
        now: Optional[float] = None,
        duration: Optional[float] = None,
    ) -> Optional[Transition]:
        """Records a permitted call's outcome: `"success"`, `"failure"`,
        `"ignored"`, or an exception (classified; cancellations are ignored).
        """
    def release(self, permit: Permit, now: Optional[float] = None) -> Optional[Transition]:
        """Gives a permit back without an outcome."""
    def call(self, func: Callable[..., _T], args: Tuple[Any, ...], kwargs: Optional[Dict[str, Any]] = None) -> _T:
        """Calls `fn(*args, **kwargs)` through the breaker."""
    def transition_to(self, state: str, now: Optional[float] = None) -> Transition:
        """Moves to `state` by hand."""
    def reset(self, now: Optional[float] = None) -> Optional[Transition]:
        """Returns to closed with an empty window."""
    def remaining_open(self, now: Optional[float] = None) -> float:
        """Seconds until a call could be admitted (0.0 if now; inf when forced open)."""
    def snapshot(self, now: Optional[float] = None, wall_now_ms: Optional[int] = None) -> Dict[str, Any]:
        """Captures the state as a JSON-ready dict."""
    def restore(
        self, snapshot: Union[str, _Document], now: Optional[float] = None, wall_now_ms: Optional[int] = None
    ) -> None:
        """Replaces the state with a snapshot (a dict or JSON text) taken with the same settings."""
    def state_metrics(self, now: Optional[float] = None) -> Dict[str, Union[int, float]]:
        """The current state's metrics (resilience4j's `CircuitBreaker.Metrics`):
        rates in percent (-1.0 below the minimum number of calls) and counts,
        `not_permitted_calls` included (per state; `rejections` is the running total).
        """
    def record_without_permit(
        self,
        outcome: Union[str, BaseException, None] = None,
        now: Optional[float] = None,
        duration: Optional[float] = None,
    ) -> Optional[Transition]:
        """Records an outcome without a permit (resilience4j's `onError` /
        `onSuccess` without `tryAcquirePermission`): it counts in the current
        state's metrics and cannot be voided by a transition.
        """
    def transition_to_open_for(self, duration: float, now: Optional[float] = None) -> Transition:
        """Opens for `duration` seconds by hand (resilience4j's `transitionToOpenStateFor`)."""
    def transition_to_open_until(self, until: float, now: Optional[float] = None) -> Transition:
        """Opens until `until`, in seconds on the clock `now` uses
        (resilience4j's `transitionToOpenStateUntil`).
        """
    def break_arguments(self, now: Optional[float] = None) -> Dict[str, Union[int, float]]:
        """What a break-duration generator sees now (Polly's
        `BreakDurationGeneratorArguments`): `failure_rate` (0-1),
        `failure_count`, `half_open_attempts`.
        """
    def set_break_duration(self, duration: float) -> None:
        """Replaces the current open period's wait with `duration` seconds,
        counted from when it opened (a host-computed break duration).
        """

@final
class Permit:
    """A permission to make one call."""
    @property
    def trial(self) -> bool:
        """True for a half-open trial call."""
    @property
    def started(self) -> float:
        """When the permit was taken, in monotonic seconds."""

@final
class Acquired:
    """The answer of `try_acquire`."""
    @property
    def permitted(self) -> bool:
        """True when the call may go ahead."""
    @property
    def permit(self) -> Optional[Permit]:
        """The permit when the call may go ahead, else None."""
    @property
    def trial(self) -> bool:
        """True for a half-open trial call."""
    @property
    def state(self) -> str:
        """The breaker's state after the request (`closed`, `open`, `half_open`, …)."""
    @property
    def retry_after(self) -> Optional[float]:
        """Seconds until a trial call would be admitted (None: not by waiting)."""
    @property
    def transition(self) -> Optional[Transition]:
        """The state change the request caused, if any."""

@final
class Transition:
    """A breaker state change."""
    @property
    def from_state(self) -> str:
        """The state before."""
    @property
    def to_state(self) -> str:
        """The state after."""
    @property
    def reason(self) -> str:
        """Why (`failure_rate`, `wait_elapsed`, `manual`, …)."""
    @property
    def at(self) -> float:
        """When, in seconds on the monotonic clock."""

@disjoint_base
class Budget:
    """A retry budget shared by reference."""
    def __new__(
        cls,
        config: Optional[_Document] = None,
        *,
        kwargs: Optional[bool] = None,
        share: Optional[Budget] = None,
        overrides: Optional[Dict[str, Any]] = None,
    ) -> Self: ...
    def to_dict(self) -> Dict[str, Any]:
        """The settings as a document."""
    @property
    def name(self) -> str:
        """The budget's name."""
    @property
    def kind(self) -> _BudgetKind:
        """The budget's kind (`token_bucket`, `grpc`, `ratio`, `concurrency`, `finagle`, `adaptive`)."""
    @property
    def refusals(self) -> int:
        """Retries refused so far."""
    @property
    def withdrawals(self) -> int:
        """Retries paid for so far."""
    def level(self, now: Optional[float] = None) -> Dict[str, float]:
        """The level: tokens, or window counts, as a dict."""
    def on_operation_start(self, now: Optional[float] = None) -> None:
        """A logical operation starts (ratio deposit, concurrency call)."""
    def on_operation_end(self, held_retry_slot: Optional[bool] = None) -> None:
        """A logical operation ends."""
    def check(
        self, category: Optional[str] = None, now: Optional[float] = None, refused: Optional[bool] = None, holds_retry_slot: Optional[bool] = None
    ) -> Optional[Refusal]:
        """Checks whether a retry after `category` is affordable: a `Refusal` or None.
        `category` left out (None) is `"server_error"`, as in the shared vectors.
        """
    def withdraw(
        self, category: Optional[str] = None, now: Optional[float] = None, refused: Optional[bool] = None, holds_retry_slot: Optional[bool] = None
    ) -> Tuple[Optional[int], bool]:
        """Pays for a retry that `check` allowed: (token cost or None, took a concurrency slot).
        `category` left out (None) is `"server_error"`.
        """
    def try_withdraw(
        self, category: Optional[str] = None, now: Optional[float] = None, refused: Optional[bool] = None, holds_retry_slot: Optional[bool] = None
    ) -> Optional[Refusal]:
        """Checks and pays in one step under one lock: None when paid, else the `Refusal`.
        `category` left out (None) is `"server_error"`.
        """
    def acquire(self, n: int, now: Optional[float] = None) -> bool:
        """Takes `n` tokens from a token bucket if it holds that many, after its
        refill (smithy-rs `try_acquire_many`, botocore `RetryQuota.acquire`):
        True when taken. Counts no withdrawal or refusal. Another kind of
        budget raises `invalid_state`.
        """
    def release(self, n: int, now: Optional[float] = None) -> None:
        """Gives `n` tokens back to a token bucket, up to its capacity (botocore
        `RetryQuota.release`). Another kind of budget raises `invalid_state`.
        """
    def on_failure(
        self,
        category: Optional[str] = None,
        now: Optional[float] = None,
        counts: Optional[bool] = None,
        reached_backend: Optional[bool] = None,
        declined_pushback: Optional[bool] = None,
        refused: Optional[bool] = None,
    ) -> None:
        """Records a failed attempt; `category` left out (None) is `"server_error"`."""
    def on_success(self, now: Optional[float] = None, retry_cost: Optional[int] = None) -> None:
        """Records a success; `retry_cost` is what the token bucket took for the retry that led to it."""
    def before_attempt(self, now: Optional[float] = None, r: Optional[float] = None) -> Optional[Refusal]:
        """The adaptive throttle before an attempt: a `Refusal` or None. `r`
        is the draw in [0, 1) (default: from the OS).
        """

@final
class Refusal:
    """A budget refusal."""
    def __bool__(self) -> bool: ...
    @property
    def budget(self) -> str:
        """The budget's name."""
    @property
    def reason(self) -> str:
        """A stable code: `insufficient_tokens`, `below_threshold`,
        `ratio_exceeded`, `too_many_retries_in_flight`, `throttled`.
        """
    @property
    def detail(self) -> str:
        """The numbers behind the refusal, as a readable line."""

# ---------------------------------------------------------------- classification and server advice

@final
class Verdict:
    """The outcome of classifying one failure."""
    @property
    def category(self) -> _Category:
        """The category code (`"connection_lost"`, …)."""
    @property
    def retry(self) -> str:
        """`"always"`, `"if_idempotent"` or `"never"`."""
    @property
    def safe(self) -> bool:
        """Repeating the request is safe (method or declaration)."""
    @property
    def retryable(self) -> bool:
        """The rule allows a retry given `safe`, and the server did not decline."""
    @property
    def server_declined(self) -> bool:
        """The server declined a retry."""
    @property
    def server_delay(self) -> Optional[float]:
        """The server's delay in seconds, if any."""
    @property
    def server_delay_source(self) -> Optional[str]:
        """The header it came from."""
    @property
    def status(self) -> Optional[int]:
        """The HTTP status seen, if any."""
    @property
    def error_names(self) -> List[str]:
        """The error names that were classified (the flattened cause chain)."""
    @property
    def refused(self) -> bool:
        """The chain holds a refused connection."""

@final
class ServerAdvice:
    """What response headers say about retrying."""
    @property
    def delay(self) -> Optional[float]:
        """The delay the server asked for, in seconds."""
    @property
    def source(self) -> Optional[str]:
        """The header it came from."""
    @property
    def declined(self) -> bool:
        """A negative or malformed gRPC pushback: don't retry."""
    @property
    def should_retry(self) -> Optional[bool]:
        """`Stripe-Should-Retry` / `x-should-retry`."""
    @property
    def retry_exhausted(self) -> bool:
        """`x-retry-exhausted: 1`."""

def classify(
    failure: Union[BaseException, _Response, _Document, None] = None,
    *,
    policy: Optional[_PolicyLike] = None,
    status: Optional[int] = None,
    grpc_code: Union[int, str, None] = None,
    error_names: Optional[_Strs] = None,
    method: Optional[str] = None,
    idempotent: Optional[bool] = None,
    idempotency_key_sent: Optional[bool] = None,
    headers: Optional[_Headers] = None,
    elapsed: Optional[float] = None,
    wall_now_ms: Optional[int] = None,
    message: Optional[str] = None,
    retryable: Union[bool, _RetryableTrait, None] = None,
    should_retry: Optional[bool] = None,
    verdict: Union[bool, str, None] = None,
) -> Verdict:
    """Classifies an exception, a response or a failure.

    A response is read like a failure: `requests.Response`, `httpx.Response`,
    aiohttp's `ClientResponse`, urllib3's `HTTPResponse` (status, headers and,
    where it has one, the request's method). An exception's method is read
    from `e.request.method` (requests, httpx) or `e.request_info.method`
    (aiohttp) when `method` is not given.

    ``verdict`` is the verdict of your own predicate (docs/classification-rules.md,
    "Host predicates"): ``True`` (retry always), ``False`` (never), a retry rule,
    a category or ``"category:rule"``; it decides after the markers and before
    the policy's rules.
    """
def error_names(e: BaseException) -> List[str]:
    """Returns the flattened cause chain of names of an exception (what classification reads)."""
def server_advice(headers: _Headers, wall_now_ms: Optional[int] = None) -> ServerAdvice:
    """Reads `Retry-After`, `retry-after-ms`, `grpc-retry-pushback-ms` and the retry hints
    (an HTTP-date needs `wall_now_ms`, Unix epoch milliseconds; without it the date is ignored).
    """
def parse_http_date(value: str, wall_now_ms: int) -> Optional[int]:
    """An HTTP-date as Unix seconds, or None when it is not one."""
def parse_duration(text: str) -> float:
    """Parses a duration string (`"250ms"`, `"1.5s"`) into float seconds."""
def format_duration(seconds: float) -> str:
    """Writes float seconds as the shortest exact duration string."""

# ---------------------------------------------------------------- lint, generator, vocabulary

@final
class Finding:
    """One lint finding."""
    @property
    def code(self) -> str:
        """A stable snake_case code (`no_jitter`, …)."""
    @property
    def severity(self) -> str:
        """`info`, `warning` or `error`."""
    @property
    def field(self) -> str:
        """The field concerned (`jitter`, `layers[1].timeout`, …), or `""`."""
    @property
    def message(self) -> str:
        """One line of reason."""

def retry_log_record(event: Mapping[str, Any]) -> Dict[str, Any]:
    """Returns the retry log's record of a retry or give-up event (``level``,
    ``message``, ``fields``: docs/observability.md, "The retry log").
    """
def lint(policy: _PolicyLike, service: Optional[_Document] = None) -> List[Finding]:
    """Lints a policy, optionally with its service description (a dict)."""

@final
class Random:
    """The pinned generator (xoshiro256++ seeded by SplitMix64)."""
    def __new__(cls, seed: int) -> Self: ...
    def next_u64(self) -> int:
        """The next 64-bit output."""
    def random(self) -> float:
        """The next draw in [0, 1): `(x >> 11) · 2⁻⁵³`."""

def host_tables() -> Dict[str, Any]:
    """Every list and table the core shows hosts (kinds, categories, reasons,
    error codes with their families, profiles, limits, defaults), as a dict.
    """

def metric_samples(document: _Document) -> List[Dict[str, Any]]:
    """The samples of `{"names": map, "events": [...]}`: each event's, in order,
    as `{"name", "op", "labels", "value"}` (docs/observability.md, "Exporters").
    """

def evaluate_alerts(document: _Document) -> Dict[str, Any]:
    """Checks the alert rules over `{"interval", "before", "after", "thresholds"?}`
    (the document `retrycore alerts` reads).
    """

# ---------------------------------------------------------------- idempotency

def derive_key(*parts: str) -> str:
    """Joins key parts with `:` (business id, operation, version)."""
def validate_key(key: str, max_len: Optional[int] = None) -> None:
    """Checks a key: 1–`max_len` visible ASCII characters, not starting with `sha256:`."""
def scoped_key(tenant: str, key: str) -> str:
    """`len(tenant) ":" tenant ":" key`."""
def storage_key(key: str, max_len: int) -> str:
    """The key itself when short enough, else `sha256:` + hex."""
def mint_key(entropy: Optional[bytes] = None) -> str:
    """A random UUIDv4 key from 16 bytes (default: from the OS)."""
def format_header(key: str) -> str:
    """The `Idempotency-Key` header value for a key (an RFC 8941 sf-string)."""
def parse_header(value: str, allow_token: Optional[bool] = None) -> str:
    """Reads an `Idempotency-Key` header value; `allow_token=True` also takes Stripe's bare token."""
def canonicalize(value: _Json) -> str:
    """The RFC 8785 canonical JSON of a Python value."""
def canonicalize_json(text: str) -> str:
    """The RFC 8785 canonical form of JSON text."""
def format_number(x: float) -> str:
    """A float as RFC 8785 (ECMAScript) writes it."""
def fingerprint(
    body: _Json = None,
    *,
    method: Optional[str] = None,
    path: Optional[str] = None,
    operation: Optional[str] = None,
    selected: Optional[_Strs] = None,
    canonical: Optional[bool] = None,
) -> str:
    """The fingerprint of a request: lowercase hex SHA-256 of the canonical JSON
    of `{"method", "path", "body"}` or `{"operation", "body"}`.
    """
def fingerprint_json(
    text: str,
    *,
    method: Optional[str] = None,
    path: Optional[str] = None,
    operation: Optional[str] = None,
    selected: Optional[_Strs] = None,
    canonical: Optional[bool] = None,
) -> str:
    """`fingerprint` of a body given as JSON text (duplicate keys and inexact numbers are errors)."""

@final
class RecordConfig:
    """How records are kept: lease, retention and failure handling."""
    def __new__(
        cls,
        *,
        lease: Optional[float] = None,
        retention: Optional[float] = None,
        stripe: Optional[bool] = None,
        failure_handling: Optional[str] = None,
        release_categories: Optional[Sequence[str]] = None,
    ) -> Self: ...
    @property
    def lease(self) -> float:
        """How long a processing record's lease lasts, in seconds."""
    @property
    def retention(self) -> float:
        """How long a record is kept, in seconds."""

def decide(
    record: Optional[_Document],
    key: Optional[str],
    fingerprint: str,
    wall_now_ms: Optional[int] = None,
    config: Optional[RecordConfig] = None,
) -> Dict[str, Any]:
    """Decides what an incoming request gets from its stored record (a dict, or None).
    A `key` of None is a request without the required key (400).
    """
def complete(
    record: _Document,
    fence: int,
    outcome: Dict[str, Any],
    wall_now_ms: Optional[int] = None,
    config: Optional[RecordConfig] = None,
) -> Dict[str, Any]:
    """Completes a record for the holder of `fence`: `outcome` is
    `{"state": "succeeded" | "failed", "category": ..., "response": ...}`.
    """
def renew_lease(
    record: _Document, fence: int, wall_now_ms: Optional[int] = None, config: Optional[RecordConfig] = None
) -> Dict[str, Any]:
    """Renews the lease of a processing record (a heartbeat)."""

@disjoint_base
class Limiter:
    """A limiter: a bulkhead, a rate limiter, an adaptive concurrency limit or
    AWS's adaptive client rate limiter, asked before every attempt."""
    def __new__(cls, config: _Document, now: Optional[float] = None) -> Self: ...
    @property
    def name(self) -> str:
        """The limiter's name (rejections carry it)."""
    @property
    def kind(self) -> str:
        """The limiter's kind (`bulkhead`, `token_bucket`, `fixed_window`, `sliding_window`, `aimd`, `gradient2`, `aws_adaptive`)."""
    @property
    def in_flight(self) -> int:
        """Calls in flight (bulkhead and adaptive kinds; 0 for rate limiters)."""
    def acquire(self, now: Optional[float] = None, attempt: Optional[str] = None, within: Optional[float] = None) -> Dict[str, Any]:
        """Asks whether an attempt may go: a dict whose `decision` is `proceed`,
        `delay` (sleep `wait` seconds, then go; `ticket` to cancel), `queued`
        (wait for `release` to return `ticket`, at most `max_wait` seconds) or
        `reject` (`reason`, `retry_after` seconds or None, `limiter`).
        `attempt` is `initial` (default), `retry` or `retry_after_timeout`;
        `within` is the time the caller has left.
        """
    def release(
        self, now: Optional[float] = None, rtt: Optional[float] = None, signal: Optional[str] = None, category: Optional[str] = None
    ) -> Optional[int]:
        """Reports the end of a call that proceeded (its latency `rtt` in seconds;
        `signal` `success`, `overloaded` or `ignore`, or a failure's `category`):
        the ticket of the waiter that now holds the freed slot, or None.
        """
    def cancel(self, ticket: int, now: Optional[float] = None) -> Dict[str, Any]:
        """Abandons a delay or a queued wait: `{"cancelled": "removed", ...the
        rejection}`, `{"cancelled": "refunded"}` or `{"cancelled": "not_waiting"}`.
        """
    def state(self, now: Optional[float] = None) -> Dict[str, Any]:
        """The observable state as a dict (`in_flight`, `queued`, `limit`, `tokens`, `fill_rate`, ...)."""

@final
class CompensationRun:
    """A saga's compensation run as the core plans it: the completed steps'
    compensations, newest first, each under its own `purpose: compensation`
    policy (`retrycore.saga` runs them)."""
    def __new__(cls, saga: _Document) -> Self: ...
    def next(self) -> Optional[Dict[str, Any]]:
        """The next compensation to run (`index`, `step`, `compensate`, `policy`), or None when every one has an outcome."""
    def record(self, outcome: _Document) -> Optional[Dict[str, Any]]:
        """Records the outcome of the compensation `next` gave (`{"outcome": "compensated", "attempts"}` or
        `{"outcome": "exhausted", "attempts", "error_class", "error_message", "first_failure_ms", "last_failure_ms"}`):
        the dead letter an exhausted one became, as a dict, or None."""
    def result(self) -> Dict[str, Any]:
        """The result: `saga`, `finished`, `compensated`, every step's outcome in saga order, the dead letters."""

@final
class DeadLetterReplay:
    """A dead-letter replay as the core plans it: refusals with their reasons,
    batches that grow while they succeed, the audit record (`retrycore.saga` replays)."""
    def __new__(cls, letters: Sequence[_Document], options: _Document, wall_now_ms: int) -> Self: ...
    def groups(self) -> List[Dict[str, Any]]:
        """The letters grouped by kind of reason (`system`, `data`, `unknown`) and error class."""
    def next_batch(self) -> List[str]:
        """The next batch's letter ids, or an empty list when the replay is over."""
    def record(self, msg_id: str, ok: bool, wall_now_ms: int) -> None:
        """Records a letter's replay; a complete batch decides whether the next grows or the replay stops."""
    def letters(self) -> List[Dict[str, Any]]:
        """The letters as dicts, with their statuses as they now stand."""
    def audit(self) -> Dict[str, Any]:
        """The audit record (schema/dead-letter-replay.schema.json): who, when, the ids replayed, failed, skipped, not attempted."""

@final
class DeadLetter:
    """The envelope of a message whose retries ran out."""
    def __new__(
        cls,
        msg_id: str,
        message: _Json,
        *,
        reason: str,
        attempts: int,
        error: Optional[BaseException] = None,
        error_class: Optional[str] = None,
        error_message: Optional[str] = None,
        first_failure_ms: Optional[int] = None,
        last_failure_ms: Optional[int] = None,
        first_failure_at: Optional[str] = None,
        last_failure_at: Optional[str] = None,
        trace_id: Optional[str] = None,
        topic: Optional[str] = None,
        partition: Optional[int] = None,
        offset: Optional[int] = None,
        target_idempotent: Optional[bool] = None,
    ) -> Self: ...
    @staticmethod
    def from_dict(d: _Document) -> DeadLetter:
        """Reads a letter from a dict (validated)."""
    @staticmethod
    def from_json(text: str) -> DeadLetter:
        """Reads a letter from JSON text (validated)."""
    def to_dict(self) -> Dict[str, Any]:
        """The letter as a JSON-ready dict."""
    def to_json(self) -> str:
        """The letter as JSON text."""
    def mark_replayable(self) -> None:
        """Marks the letter for replay (its target must be idempotent)."""
    def mark_replayed(self) -> None:
        """Records that the letter was replayed (it must be pending and marked replayable)."""
    def discard(self) -> None:
        """Records that the letter was discarded on purpose (it must be pending)."""
    @property
    def msg_id(self) -> str:
        """The message's id."""
    @property
    def status(self) -> str:
        """`pending`, `replayed` or `discarded`."""
    @property
    def replayable(self) -> bool:
        """True once the letter is marked for replay."""

def format_rfc3339_ms(unix_ms: int) -> str:
    """Unix milliseconds as RFC 3339 UTC (`YYYY-MM-DDTHH:MM:SS.mmmZ`)."""
def parse_rfc3339_ms(text: str) -> int:
    """RFC 3339 text as Unix milliseconds (rounded down)."""

def run(runner: Runner, func: Callable[..., _T], /, *args: Any, **kwargs: Any) -> _T:
    """`runner.call(func, args, kwargs)` with the call's arguments as they come: a decorated
    function is `functools.partial(run, runner, func)`, called without a Python frame."""

def mark() -> int:
    """The number of the innermost sync decorated call running on this thread (0: none), kept
    beside a session in `retrycore._context.CURRENT`: a sync call with a larger number began
    inside that session's call."""
def current(var: Optional[Tuple[RetrySession, int]]) -> Optional[RetrySession]:
    """The session `current_attempt()` answers: given the value of `retrycore._context.CURRENT`
    (a session and its `mark()`), the innermost of it and this thread's innermost sync call."""

# ---------------------------------------------------------------- benchmark floors

def noop(a: object = None, b: object = None) -> None:
    """Does nothing (the benchmarks' floor for a call with one int and one float)."""
def noop_obj(a: _T) -> _T:
    """Returns its argument (the benchmarks' floor for a call with one object)."""

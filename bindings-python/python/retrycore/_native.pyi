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

# The core's lists (`retrycore::tables::host_tables()`); tests/python/test_tables.py fails
# when one of these unions differs from the core's.
_Category = Literal[
    "connect", "not_processed", "overloaded", "connection_lost", "timeout", "server_error",
    "resource_exhausted", "conflict", "invalid_request", "auth", "not_found", "open_breaker",
    "retry_exhausted", "cancelled", "programming_error", "unknown",
]
_GiveUpReason = Literal[
    "cancelled", "not_retryable", "server_declined", "attempts_exhausted", "breaker_open",
    "budget_exhausted", "retry_after_too_long", "deadline_exceeded", "throttled",
]
_RejectReason = Literal["breaker_open", "throttled", "deadline_exceeded", "concurrency_limited"]
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
    "classify",
    "error_names",
    "parse_duration",
    "format_duration",
    "server_advice",
    "parse_http_date",
    "lint",
    "host_tables",
    "derive_key",
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
    def __new__(cls, share: _PolicyLike) -> Self: ...
    @staticmethod
    def from_dict(doc: _Document, kwargs: Optional[bool] = None, entropy: Optional[int] = None) -> Policy: ...
    @staticmethod
    def from_json(text: Union[str, bytes], entropy: Optional[int] = None) -> Policy: ...
    def to_dict(self) -> Dict[str, Any]: ...
    def to_json(self) -> str: ...
    @property
    def max_attempts(self) -> int: ...
    @property
    def name(self) -> Optional[str]: ...
    @property
    def breaker(self) -> Optional[CircuitBreaker]: ...
    @property
    def budgets(self) -> List[Budget]: ...
    def _with_breaker(self, breaker: Optional[CircuitBreaker]) -> Policy: ...
    def _with_budgets(self, budgets: Sequence[Union[Budget, _Document]]) -> Policy: ...
    def schedule(self) -> List[ScheduleRow]: ...
    def worst_case(self) -> float: ...
    def delay(self, retry: int, r: float, prev: Optional[float] = None) -> float: ...
    def sample_delays(self, seed: int, count: int) -> List[float]: ...
    def replay_delays(self, draws: _Floats) -> List[float]: ...
    def session(
        self,
        key: Optional[str] = None,
        seed: Optional[int] = None,
        idempotent: Optional[bool] = None,
        idempotency_key_sent: Optional[bool] = None,
        method: Optional[str] = None,
        draws: Optional[_Floats] = None,
    ) -> RetrySession: ...
    def testing(self, attempts: int, max_delay: Optional[float] = None) -> Policy: ...
    def counters(self) -> Dict[str, Any]: ...

@final
class ScheduleRow:
    @property
    def retry(self) -> int: ...
    @property
    def attempt(self) -> int: ...
    @property
    def low(self) -> float: ...
    @property
    def mid(self) -> float: ...
    @property
    def high(self) -> float: ...
    @property
    def cumulative_low(self) -> float: ...
    @property
    def cumulative_high(self) -> float: ...

@final
class Proceed:
    @property
    def attempt(self) -> int: ...
    @property
    def max_attempts(self) -> int: ...
    @property
    def timeout(self) -> Optional[float]: ...

@final
class Reject:
    @property
    def reason(self) -> _RejectReason: ...
    @property
    def retry_after(self) -> Optional[float]: ...
    @property
    def budget(self) -> Optional[str]: ...

@final
class Retry:
    @property
    def retry(self) -> int: ...
    @property
    def attempt(self) -> int: ...
    @property
    def delay(self) -> float: ...
    @property
    def backoff(self) -> float: ...
    @property
    def server_delay(self) -> Optional[float]: ...
    @property
    def capped(self) -> bool: ...
    @property
    def category(self) -> _Category: ...

@final
class GiveUp:
    @property
    def reason(self) -> _GiveUpReason: ...
    @property
    def category(self) -> _Category: ...
    @property
    def exhausted(self) -> bool: ...
    @property
    def attempts(self) -> int: ...
    @property
    def budget(self) -> Optional[str]: ...
    @property
    def budget_reason(self) -> Optional[str]: ...

@final
class RetrySession:
    @property
    def key(self) -> str: ...
    @property
    def key_minted(self) -> bool: ...
    @property
    def attempt(self) -> int: ...
    @property
    def max_attempts(self) -> int: ...
    @property
    def timeout(self) -> Optional[float]: ...
    @property
    def done(self) -> bool: ...
    @property
    def give_up_reason(self) -> Optional[str]: ...
    def before_attempt(self, now: Optional[float] = None) -> Union[Proceed, Reject]: ...
    def on_failure(
        self,
        failure: Union[BaseException, _Document, None] = None,
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
    ) -> Union[Retry, GiveUp]: ...
    def on_success(self, now: Optional[float] = None, elapsed: Optional[float] = None) -> None: ...
    def cancel(self, now: Optional[float] = None) -> None: ...
    def release(self) -> None: ...
    def take_transitions(self) -> List[Transition]: ...

@final
class RetryEvent:
    @property
    def attempt(self) -> int: ...
    @property
    def retry(self) -> Optional[int]: ...
    @property
    def max_attempts(self) -> int: ...
    @property
    def category(self) -> Optional[_Category]: ...
    @property
    def delay(self) -> Optional[float]: ...
    @property
    def reason(self) -> Optional[_GiveUpReason]: ...
    @property
    def budget(self) -> Optional[str]: ...
    @property
    def exception(self) -> Optional[BaseException]: ...
    @property
    def key(self) -> str: ...

@final
class Runner:
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
    ) -> Self: ...
    def call(self, func: Callable[..., _T], args: Tuple[Any, ...], kwargs: Optional[Dict[str, Any]] = None) -> _T: ...
    def start(self, args: Tuple[Any, ...], kwargs: Optional[Dict[str, Any]] = None) -> RetrySession: ...
    def before(self, session: RetrySession) -> Optional[float]: ...
    def failed_attempt(self, session: RetrySession, exc: BaseException) -> float: ...
    def returned_attempt(self, session: RetrySession, value: object) -> Optional[float]: ...
    def cancel(self, session: RetrySession) -> None: ...

def error(code: str, field: str, why: str, domain: Optional[Literal["config", "idempotency"]] = None) -> RetrycoreError: ...

# ---------------------------------------------------------------- breakers and budgets

@disjoint_base
class CircuitBreaker:
    def __new__(
        cls,
        config: Optional[_Document] = None,
        *,
        kwargs: Optional[bool] = None,
        on_state_change: Optional[_StateHook] = None,
        share: Optional[CircuitBreaker] = None,
        overrides: Optional[Dict[str, Any]] = None,
    ) -> Self: ...
    def to_dict(self) -> Dict[str, Any]: ...
    @property
    def name(self) -> Optional[str]: ...
    @property
    def on_state_change(self) -> Optional[_StateHook]: ...
    @property
    def state(self) -> str: ...
    @property
    def rejections(self) -> int: ...
    def totals(self) -> Dict[str, int]: ...
    def try_acquire(self, now: Optional[float] = None) -> Acquired: ...
    def acquire(self, now: Optional[float] = None) -> Permit: ...
    def record(
        self,
        permit: Permit,
        outcome: Union[str, BaseException, None] = None,
        now: Optional[float] = None,
        duration: Optional[float] = None,
    ) -> Optional[Transition]: ...
    def release(self, permit: Permit, now: Optional[float] = None) -> Optional[Transition]: ...
    def call(self, func: Callable[..., _T], args: Tuple[Any, ...], kwargs: Optional[Dict[str, Any]] = None) -> _T: ...
    def transition_to(self, state: str, now: Optional[float] = None) -> Transition: ...
    def reset(self, now: Optional[float] = None) -> Optional[Transition]: ...
    def remaining_open(self, now: Optional[float] = None) -> float: ...
    def snapshot(self, now: Optional[float] = None, wall_now_ms: Optional[int] = None) -> Dict[str, Any]: ...
    def restore(
        self, snapshot: Union[str, _Document], now: Optional[float] = None, wall_now_ms: Optional[int] = None
    ) -> None: ...
    def state_metrics(self, now: Optional[float] = None) -> Dict[str, Union[int, float]]: ...
    def record_without_permit(
        self,
        outcome: Union[str, BaseException, None] = None,
        now: Optional[float] = None,
        duration: Optional[float] = None,
    ) -> Optional[Transition]: ...
    def transition_to_open_for(self, duration: float, now: Optional[float] = None) -> Transition: ...
    def transition_to_open_until(self, until: float, now: Optional[float] = None) -> Transition: ...
    def break_arguments(self, now: Optional[float] = None) -> Dict[str, Union[int, float]]: ...
    def set_break_duration(self, duration: float) -> None: ...

@final
class Permit:
    @property
    def trial(self) -> bool: ...
    @property
    def started(self) -> float: ...

@final
class Acquired:
    @property
    def permitted(self) -> bool: ...
    @property
    def permit(self) -> Optional[Permit]: ...
    @property
    def trial(self) -> bool: ...
    @property
    def state(self) -> str: ...
    @property
    def retry_after(self) -> Optional[float]: ...
    @property
    def transition(self) -> Optional[Transition]: ...

@final
class Transition:
    @property
    def from_state(self) -> str: ...
    @property
    def to_state(self) -> str: ...
    @property
    def reason(self) -> str: ...
    @property
    def at(self) -> float: ...

@disjoint_base
class Budget:
    def __new__(
        cls,
        config: Optional[_Document] = None,
        *,
        kwargs: Optional[bool] = None,
        share: Optional[Budget] = None,
        overrides: Optional[Dict[str, Any]] = None,
    ) -> Self: ...
    def to_dict(self) -> Dict[str, Any]: ...
    @property
    def name(self) -> str: ...
    @property
    def kind(self) -> _BudgetKind: ...
    @property
    def refusals(self) -> int: ...
    @property
    def withdrawals(self) -> int: ...
    def level(self, now: Optional[float] = None) -> Dict[str, float]: ...
    def on_operation_start(self, now: Optional[float] = None) -> None: ...
    def on_operation_end(self, held_retry_slot: Optional[bool] = None) -> None: ...
    def check(
        self, category: Optional[str] = None, now: Optional[float] = None, refused: Optional[bool] = None, holds_retry_slot: Optional[bool] = None
    ) -> Optional[Refusal]: ...
    def withdraw(
        self, category: Optional[str] = None, now: Optional[float] = None, refused: Optional[bool] = None, holds_retry_slot: Optional[bool] = None
    ) -> Tuple[Optional[int], bool]: ...
    def try_withdraw(
        self, category: Optional[str] = None, now: Optional[float] = None, refused: Optional[bool] = None, holds_retry_slot: Optional[bool] = None
    ) -> Optional[Refusal]: ...
    def acquire(self, n: int, now: Optional[float] = None) -> bool: ...
    def release(self, n: int, now: Optional[float] = None) -> None: ...
    def on_failure(
        self,
        category: Optional[str] = None,
        now: Optional[float] = None,
        counts: Optional[bool] = None,
        reached_backend: Optional[bool] = None,
        declined_pushback: Optional[bool] = None,
        refused: Optional[bool] = None,
    ) -> None: ...
    def on_success(self, now: Optional[float] = None, retry_cost: Optional[int] = None) -> None: ...
    def before_attempt(self, now: Optional[float] = None, r: Optional[float] = None) -> Optional[Refusal]: ...

@final
class Refusal:
    def __bool__(self) -> bool: ...
    @property
    def budget(self) -> str: ...
    @property
    def reason(self) -> str: ...
    @property
    def detail(self) -> str: ...

# ---------------------------------------------------------------- classification and server advice

@final
class Verdict:
    @property
    def category(self) -> _Category: ...
    @property
    def retry(self) -> str: ...
    @property
    def safe(self) -> bool: ...
    @property
    def retryable(self) -> bool: ...
    @property
    def server_declined(self) -> bool: ...
    @property
    def server_delay(self) -> Optional[float]: ...
    @property
    def server_delay_source(self) -> Optional[str]: ...
    @property
    def status(self) -> Optional[int]: ...
    @property
    def error_names(self) -> List[str]: ...
    @property
    def refused(self) -> bool: ...

@final
class ServerAdvice:
    @property
    def delay(self) -> Optional[float]: ...
    @property
    def source(self) -> Optional[str]: ...
    @property
    def declined(self) -> bool: ...
    @property
    def should_retry(self) -> Optional[bool]: ...
    @property
    def retry_exhausted(self) -> bool: ...

def classify(
    failure: Union[BaseException, _Document, None] = None,
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
) -> Verdict: ...
def error_names(e: BaseException) -> List[str]: ...
def server_advice(headers: _Headers, wall_now_ms: Optional[int] = None) -> ServerAdvice: ...
def parse_http_date(value: str, wall_now_ms: int) -> Optional[int]: ...
def parse_duration(text: str) -> float: ...
def format_duration(seconds: float) -> str: ...

# ---------------------------------------------------------------- lint, generator, vocabulary

@final
class Finding:
    @property
    def code(self) -> str: ...
    @property
    def severity(self) -> str: ...
    @property
    def field(self) -> str: ...
    @property
    def message(self) -> str: ...

def lint(policy: _PolicyLike, service: Optional[_Document] = None) -> List[Finding]: ...

@final
class Random:
    def __new__(cls, seed: int) -> Self: ...
    def next_u64(self) -> int: ...
    def random(self) -> float: ...

def host_tables() -> Dict[str, Any]: ...

# ---------------------------------------------------------------- idempotency

def derive_key(*parts: str) -> str: ...
def validate_key(key: str, max_len: Optional[int] = None) -> None: ...
def scoped_key(tenant: str, key: str) -> str: ...
def storage_key(key: str, max_len: int) -> str: ...
def mint_key(entropy: Optional[bytes] = None) -> str: ...
def format_header(key: str) -> str: ...
def parse_header(value: str, allow_token: Optional[bool] = None) -> str: ...
def canonicalize(value: _Json) -> str: ...
def canonicalize_json(text: str) -> str: ...
def format_number(x: float) -> str: ...
def fingerprint(
    body: _Json = None,
    *,
    method: Optional[str] = None,
    path: Optional[str] = None,
    operation: Optional[str] = None,
    selected: Optional[_Strs] = None,
    canonical: Optional[bool] = None,
) -> str: ...
def fingerprint_json(
    text: str,
    *,
    method: Optional[str] = None,
    path: Optional[str] = None,
    operation: Optional[str] = None,
    selected: Optional[_Strs] = None,
    canonical: Optional[bool] = None,
) -> str: ...

@final
class RecordConfig:
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
    def lease(self) -> float: ...
    @property
    def retention(self) -> float: ...

def decide(
    record: Optional[_Document],
    key: Optional[str],
    fingerprint: str,
    wall_now_ms: Optional[int] = None,
    config: Optional[RecordConfig] = None,
) -> Dict[str, Any]: ...
def complete(
    record: _Document,
    fence: int,
    outcome: Dict[str, Any],
    wall_now_ms: Optional[int] = None,
    config: Optional[RecordConfig] = None,
) -> Dict[str, Any]: ...
def renew_lease(
    record: _Document, fence: int, wall_now_ms: Optional[int] = None, config: Optional[RecordConfig] = None
) -> Dict[str, Any]: ...

@final
class DeadLetter:
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
    def from_dict(d: _Document) -> DeadLetter: ...
    @staticmethod
    def from_json(text: str) -> DeadLetter: ...
    def to_dict(self) -> Dict[str, Any]: ...
    def to_json(self) -> str: ...
    def mark_replayable(self) -> None: ...
    def mark_replayed(self) -> None: ...
    def discard(self) -> None: ...
    @property
    def msg_id(self) -> str: ...
    @property
    def status(self) -> str: ...
    @property
    def replayable(self) -> bool: ...

def format_rfc3339_ms(unix_ms: int) -> str: ...
def parse_rfc3339_ms(text: str) -> int: ...

# ---------------------------------------------------------------- benchmark floors

def noop(a: object = None, b: object = None) -> None: ...
def noop_obj(a: _T) -> _T: ...

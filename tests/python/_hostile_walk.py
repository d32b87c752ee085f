"""The hostile walk of test_hostile.py, run in a child process (see _isolated.py).

Every public entry point — each name in ``retrycore.__all__`` and ``retrycore._native.__all__``,
and each public method and property of an instance of every class among them — is called
with each hostile value in each of its parameters, the others valid. Entry points are found
by introspection, so a new function, class or method is walked without editing this file;
``VALID`` only supplies a valid value for required parameters that a generic one does not
fit. What may come out: a return, a ``RetrycoreError`` carrying a known ``.code`` (and a
``.field``), or a documented pass-through (``OSError`` from ``RetryPolicy.from_file``).
Anything else — ``PanicException``, ``SystemError``, ``OverflowError``, a plain
``TypeError``/``ValueError``, a ``RecursionError`` — is a violation, reported by name.
"""

from __future__ import annotations

import inspect
import sys
import threading
from typing import Any, Callable, Dict, Iterator, List, Tuple

import retrycore
from retrycore import _native

sys.setrecursionlimit(10_000)

MAX_ITEMS = retrycore.LIMITS["max_items"]
CODES = set(retrycore.error_codes()) | {
    "retry_exhausted",
    "breaker_open",
    "budget_exhausted",
    "mismatch",
    "in_progress",
    "error",
}


# ---------------------------------------------------------------- hostile values


class Boom(Exception):
    """What the hostile objects raise."""


class EndlessList(list):  # type: ignore[type-arg]
    def __iter__(self) -> Iterator[Any]:
        while True:
            yield 1.0


class ThrowingIterList(list):  # type: ignore[type-arg]
    def __iter__(self) -> Iterator[Any]:
        raise Boom("__iter__")


class GrowingList(list):  # type: ignore[type-arg]
    """A list that appends to itself while it is walked (through its items' conversion)."""


class ThrowingInt(int):
    def __index__(self) -> int:
        raise Boom("__index__")

    def __int__(self) -> int:
        raise Boom("__int__")

    def __float__(self) -> float:
        raise Boom("__float__")

    def __eq__(self, other: object) -> bool:
        raise Boom("__eq__")

    def __lt__(self, other: object) -> bool:
        raise Boom("__lt__")

    def __rshift__(self, other: object) -> int:
        raise Boom("__rshift__")

    __hash__ = int.__hash__


class ThrowingFloat(float):
    def __float__(self) -> float:
        raise Boom("__float__")


class ThrowingStr(str):
    def __str__(self) -> str:
        raise Boom("__str__")

    def __eq__(self, other: object) -> bool:
        raise Boom("__eq__")

    def __hash__(self) -> int:
        raise Boom("__hash__")


class ThrowingDict(dict):  # type: ignore[type-arg]
    def keys(self) -> Any:
        raise Boom("keys")

    def items(self) -> Any:
        raise Boom("items")

    def __iter__(self) -> Iterator[Any]:
        raise Boom("__iter__")

    def __getitem__(self, k: Any) -> Any:
        raise Boom("__getitem__")


class Getters:
    """Every attribute read raises."""

    def __getattr__(self, name: str) -> Any:
        raise Boom(name)


class ThrowingException(ConnectionResetError):
    """An exception whose __str__ and duck-typed attributes raise."""

    def __str__(self) -> str:
        raise Boom("__str__")

    @property
    def response(self) -> Any:
        raise Boom("response")

    @property
    def status(self) -> Any:
        raise Boom("status")

    @property
    def headers(self) -> Any:
        raise Boom("headers")


def mutating_dict() -> Dict[str, Any]:
    """A dict that a value's conversion mutates: its int's ``__float__`` (ints past 2**53
    are read as doubles by the fingerprint) and its list's ``__iter__`` clear and refill it."""
    d: Dict[str, Any] = {}

    class Mutator(int):
        def __float__(self) -> float:
            d.clear()
            d.update({str(i): i for i in range(100)})
            return 1.0

    class MutList(list):  # type: ignore[type-arg]
        def __iter__(self) -> Iterator[Any]:
            d.clear()
            d.update({str(i): i for i in range(100)})
            return iter([1, 2])

    d.update({"a": Mutator(2**60 + 1), "b": MutList(), "c": 1, "max_attempts": Mutator(3)})
    return d


def deep(n: int) -> Any:
    v: Any = 1
    for _ in range(n):
        v = [v]
    return v


def cyclic() -> Any:
    a: List[Any] = []
    a.append(a)
    return a


def hostile() -> List[Tuple[str, Callable[[], Any]]]:
    """Each hostile value by a name, made fresh for each call (some are mutated by it)."""
    g = GrowingList([1.0])

    class Grow(float):
        pass

    return [
        ("nan", lambda: float("nan")),
        ("inf", lambda: float("inf")),
        ("-inf", lambda: float("-inf")),
        ("-1", lambda: -1),
        ("-1.0", lambda: -1.0),
        ("0.5", lambda: 0.5),
        ("1e308", lambda: 1e308),
        ("2**64", lambda: 2**64),
        ("2**1000", lambda: 2**1000),
        ("-2**1000", lambda: -(2**1000)),
        ("True", lambda: True),
        ("ThrowingInt", lambda: ThrowingInt(3)),
        ("ThrowingInt(2**60+1)", lambda: ThrowingInt(2**60 + 1)),
        ("ThrowingFloat", lambda: ThrowingFloat(0.5)),
        ("lone surrogate", lambda: "\ud800"),
        ("surrogate key", lambda: {"\udfff": 1}),
        ("ThrowingStr", lambda: ThrowingStr("x")),
        ("huge str", lambda: "x" * (2**21)),
        ("endless list", EndlessList),
        ("throwing __iter__", ThrowingIterList),
        ("huge list", lambda: [0] * (MAX_ITEMS + 1)),
        ("huge tuple", lambda: (0,) * (MAX_ITEMS + 1)),
        ("growing list", lambda: g),
        ("mutating dict", mutating_dict),
        ("throwing dict", lambda: ThrowingDict(a=1)),
        ("non-str keys", lambda: {1: 2}),
        ("deep", lambda: deep(1_000)),
        ("cyclic", cyclic),
        ("set", lambda: {1, 2}),
        ("bytes", lambda: b"\xff\xfe"),
        ("object", object),
        ("getters", Getters),
        ("throwing exception", lambda: ThrowingException("x")),
        ("impossible snapshot", impossible_snapshot),
    ]


def impossible_snapshot() -> Dict[str, Any]:
    b = retrycore.CircuitBreaker(kind="count_based", minimum_number_of_calls=1, sliding_window_size=4)
    s = b.snapshot(now=1.0, wall_now_ms=1)

    def walk(v: Any) -> Any:
        if isinstance(v, dict):
            return {k: walk(x) for k, x in v.items()}
        if isinstance(v, list):
            return [walk(x) for x in v] + [2**64]
        if isinstance(v, bool):
            return v
        if isinstance(v, int):
            return 2**64 + v
        return v

    return walk(s)  # type: ignore[no-any-return]


# ---------------------------------------------------------------- valid values

POLICY = retrycore.RetryPolicy(max_attempts=2, initial=0.0, jitter="none")
LETTER = retrycore.DeadLetter("m1", {"a": 1}, reason="exhausted", attempts=1, error_class="E", error_message="m", first_failure_ms=1, last_failure_ms=2)
RECORD = retrycore.decide(None, "key-1", "f" * 64, wall_now_ms=1_700_000_000_000)["record"]

VALID: Dict[str, Any] = {
    # by parameter name
    "text": "1s",
    "doc": {"max_attempts": 2},
    "document": {"max_attempts": 2},
    "policy": POLICY,
    "key": "key-1",
    "tenant": "t",
    "value": "a",
    "fingerprint": "f" * 64,
    "record": RECORD,
    "fence": 1,
    "outcome": {"state": "succeeded"},
    "msg_id": "m1",
    "message": {"a": 1},
    "reason": "exhausted",
    "attempts": 1,
    "seed": 1,
    "count": 3,
    "retry": 1,
    "r": 0.5,
    "draws": [0.5],
    "max_len": 64,
    "unix_ms": 1_700_000_000_000,
    "wall_now_ms": 1_700_000_000_000,
    "headers": {"retry-after": "1"},
    "state": "open",
    "e": ConnectionResetError(),
    "seconds": 1.0,
    "x": 1.5,
    "max_tokens": 10,
    "token_ratio": 0.1,
    "a": 1,
    "args": (),
    "func": lambda *a, **k: None,
    "fn": lambda *a, **k: None,
    "breaker": None,
    "budgets": [],
    "decision": {"decision": "execute"},
    "snapshot": None,  # filled below
    "path": "/",
    # by qualified name
    "Policy.from_json.text": '{"max_attempts": 2}',
    "RetryPolicy.from_json.text": '{"max_attempts": 2}',
    "RetryPolicy.from_file.path": __file__,
    "DeadLetter.from_json.text": LETTER.to_json(),
    "canonicalize_json.text": "{}",
    "fingerprint_json.text": "{}",
    "parse_rfc3339_ms.text": "2024-01-01T00:00:00.000Z",
    "parse_http_date.value": "Sun, 06 Nov 1994 08:49:37 GMT",
    "error_names.e": ConnectionResetError(),
    "Budget.grpc.max_tokens": 10,
    "RetryPolicy.profile.name": "polly",
}

# Parameters whose hostile value is the caller's own code, documented to propagate.
PASS_THROUGH: Dict[str, Tuple[type, ...]] = {
    "RetryPolicy.from_file": (OSError,),
}


def valid(qual: str, name: str) -> Any:
    for k in (f"{qual}.{name}", f"{qual.rsplit('.', 1)[-1]}.{name}", name):
        if k in VALID:
            return VALID[k]
    return None


# ---------------------------------------------------------------- instances


def instances() -> Dict[str, Callable[[], Any]]:
    """A valid instance of each class, by class name, made fresh per call."""
    def breaker() -> Any:
        return retrycore.CircuitBreaker(kind="consecutive", failure_threshold=2)

    def event() -> Any:
        got: List[Any] = []

        @retrycore.retry(POLICY, on_retry=got.append, idempotent=True)
        def fails() -> None:
            raise ConnectionResetError()

        try:
            fails()
        except Exception:
            pass
        return got[0]

    s = POLICY.session()

    def reject() -> Any:
        b = breaker()
        b.transition_to("forced_open")
        return retrycore.RetryPolicy(breaker=b).session().before_attempt()

    return {
        "RetryPolicy": lambda: retrycore.RetryPolicy(max_attempts=2, initial=0.0, jitter="none"),
        "Policy": lambda: POLICY._p,
        "RetrySession": lambda: POLICY.session(),
        "Runner": lambda: _native.Runner(POLICY),
        "CircuitBreaker": breaker,
        "Budget": lambda: retrycore.Budget.token_bucket(),
        "Permit": lambda: breaker().acquire(),
        "Acquired": lambda: breaker().try_acquire(),
        "Transition": lambda: breaker().transition_to("open"),
        "Random": lambda: retrycore.Random(1),
        "RecordConfig": lambda: retrycore.RecordConfig(),
        "DeadLetter": lambda: retrycore.DeadLetter("m1", {"a": 1}, reason="exhausted", attempts=1, error_class="E", error_message="m", first_failure_ms=1, last_failure_ms=2),
        "Limiter": lambda: retrycore.Limiter(kind="bulkhead", max_concurrent=1, max_wait="1ms"),
        "CompensationRun": lambda: _native.CompensationRun({"saga": "s", "steps": [{"name": "a", "completed": True, "compensate": "u", "policy": {"purpose": "compensation"}}]}),
        "DeadLetterReplay": lambda: _native.DeadLetterReplay([], {"operator": "ops"}, 0),
        "Verdict": lambda: retrycore.classify(status=503),
        "ServerAdvice": lambda: retrycore.server_advice({}),
        "ScheduleRow": lambda: POLICY.schedule()[0],
        "Proceed": lambda: POLICY.session().before_attempt(),
        "Retry": lambda: retrycore.RetryPolicy(max_attempts=3).session().on_failure(status=503)
        if POLICY.session().before_attempt()
        else None,
        "GiveUp": lambda: s.on_failure(status=400) if s.before_attempt() else None,
        "Reject": lambda: reject(),
        "Refusal": lambda: retrycore.Budget(kind="token_bucket", max_tokens=1).try_withdraw(),
        "RetryEvent": event,
        "Finding": lambda: (retrycore.lint(retrycore.RetryPolicy(max_attempts=50)) or [None])[0],
    }


# ---------------------------------------------------------------- the walk


def entry_points() -> List[Tuple[str, Callable[..., Any], Any]]:
    """(qualified name, callable, signature) of every function and method to walk."""
    out: List[Tuple[str, Callable[..., Any], Any]] = []
    seen = set()
    make = instances()
    names = sorted(set(retrycore.__all__) | set(_native.__all__))
    for name in names:
        obj = getattr(retrycore, name, None) or getattr(_native, name, None)
        if obj is None or (isinstance(obj, type) and issubclass(obj, BaseException)):
            continue
        if isinstance(obj, type):
            cls = obj
            if sig(cls) is not None:
                # A class without a constructor (made by the module only) has no signature.
                out.append((cls.__name__, cls, sig(cls)))
            factory = make.get(cls.__name__)
            if factory is None:
                raise AssertionError(f"no factory for class {cls.__name__}: add one to instances()")
            for attr in sorted(dir(cls)):
                if attr.startswith("_"):
                    continue
                raw = inspect.getattr_static(cls, attr)
                if isinstance(raw, property) or type(raw).__name__ == "getset_descriptor":
                    out.append((f"{cls.__name__}.{attr}", lambda f=factory, a=attr: getattr(f(), a), None))
                    continue
                if isinstance(raw, (staticmethod, classmethod)) or type(raw).__name__ in ("builtin_function_or_method", "staticmethod", "classmethod_descriptor"):
                    fn = getattr(cls, attr)
                    key = (cls.__name__, attr)
                    if key not in seen:
                        seen.add(key)
                        out.append((f"{cls.__name__}.{attr}", fn, sig(fn)))
                    continue
                if callable(raw):
                    def bound(*a: Any, f: Any = factory, m: str = attr, **k: Any) -> Any:
                        inst = f()
                        if inst is None:
                            return None
                        return getattr(inst, m)(*a, **k)
                    out.append((f"{cls.__name__}.{attr}", bound, sig(getattr(cls, attr))))
        elif callable(obj):
            out.append((name, obj, sig(obj)))
    return out


def sig(fn: Any) -> Any:
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):
        return None


def allowed(qual: str, e: BaseException) -> bool:
    if isinstance(e, retrycore.RetrycoreError):
        return getattr(e, "code", None) in CODES and isinstance(getattr(e, "field", None), str)
    return isinstance(e, PASS_THROUGH.get(qual, ()))


def call_all(qual: str, fn: Callable[..., Any], signature: Any, violations: List[str], counts: List[int]) -> None:
    def attempt(label: str, f: Callable[[], Any]) -> None:
        counts[0] += 1
        try:
            f()
        except BaseException as e:  # noqa: B902 — PanicException is a BaseException
            if isinstance(e, KeyboardInterrupt):
                raise
            if not allowed(qual, e):
                violations.append(f"{qual} [{label}]: {type(e).__module__}.{type(e).__qualname__}: {e!r:.200}")

    if signature is None:
        attempt("no arguments", fn)
        return
    params = [p for p in signature.parameters.values() if p.name not in ("self", "cls")]
    base_pos: List[Any] = []
    base_kw: Dict[str, Any] = {}
    for p in params:
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        if p.default is p.empty:
            v = valid(qual, p.name)
            if p.kind == p.POSITIONAL_ONLY:
                base_pos.append(v)
            else:
                base_kw[p.name] = v
    attempt("valid", lambda: fn(*base_pos, **base_kw))
    for p in params:
        for label, make in hostile():
            if p.kind == p.VAR_POSITIONAL:
                attempt(f"*{p.name}={label}", lambda m=make: fn(*base_pos, m(), **base_kw))
            elif p.kind == p.VAR_KEYWORD:
                for key in DOCUMENT_KEYS if qual in KWARG_DOCS else ("hostile_key",):
                    attempt(f"{key}={label}", lambda m=make, k=key: fn(*base_pos, **{**base_kw, k: m()}))
            elif p.kind == p.POSITIONAL_ONLY:
                i = [q for q in params if q.kind == q.POSITIONAL_ONLY].index(p)
                attempt(f"{p.name}={label}", lambda m=make, i=i: fn(*base_pos[:i], m(), *base_pos[i + 1 :], **base_kw))
            else:
                attempt(f"{p.name}={label}", lambda m=make, n=p.name: fn(*base_pos, **{**base_kw, n: m()}))


# Keyword-argument documents: the keys worth a hostile value each.
DOCUMENT_KEYS = ("max_attempts", "initial", "deadline", "jitter", "breaker", "budget", "budgets", "classification", "seed")
KWARG_DOCS = {"RetryPolicy", "CircuitBreaker", "Budget", "Budget.token_bucket", "Budget.ratio", "Budget.concurrency", "Budget.finagle", "Budget.adaptive", "Budget.grpc",
              "RetryPolicy.profile"}


def walk() -> Dict[str, Any]:
    VALID["snapshot"] = retrycore.CircuitBreaker(kind="consecutive", failure_threshold=2).snapshot()
    violations: List[str] = []
    counts = [0]
    points = entry_points()
    for qual, fn, signature in points:
        call_all(qual, fn, signature, violations, counts)
    # The decorators: a clock and a key function that return hostile values.
    for label, make in hostile():
        for kw in ("clock", "key"):
            def run(m: Callable[[], Any] = make, k: str = kw) -> Any:
                return retrycore.retry(POLICY, **{k: (lambda *a, **kw2: m())})(lambda: 1)()
            counts[0] += 1
            try:
                run()
            except BaseException as e:  # noqa: B902
                if not allowed(f"retry({kw})", e):
                    violations.append(f"retry({kw}=lambda: {label}): {type(e).__qualname__}: {e!r:.200}")
    return {"points": [q for q, _, _ in points], "calls": counts[0], "violations": violations, "threads": threading.active_count()}

"""Benchmarks of the Python binding against tenacity, stamina, backoff and pybreaker.

Each figure is the median over REPEATS timeit runs, in nanoseconds per call,
all measured in one process. Run with `make -C bindings-python bench`
(BENCH_ARGS=--quick for a short run) on a quiet machine.

How the comparison is kept fair:

- every retrycore decision has a floor: a no-op pyo3 call with the same
  argument types, called the same way (directly, or through the same kind of
  lambda or function), so "× floor" is the cost of the work itself;
- "fails twice" runs every library with its sleep stubbed out: retrycore with
  a zero-delay testing policy (it never calls sleep when the delay is 0), the
  peers with `time.sleep` replaced by a no-op for the measurement (tenacity,
  stamina and backoff call `time.sleep(0)` otherwise, ~75 µs of system call);
- stamina's retry hooks (logging to stderr, Prometheus) are switched off:
  retrycore has no hooks unless you give some;
- the peers' nearest decisions stand beside ours: tenacity's
  `wait_exponential_jitter()(state)` for a delay and its
  `retry_if_exception_type(...)(state)` predicate for a classification (it
  only tests the class; ours reads the whole cause chain, errno and HTTP shapes);
- issue 17's two baselines are hand-rolled and checked in below, verbatim: a
  three-try `for` loop with its sleep stubbed (`hand_rolled_retry`) and a
  consecutive-failure breaker that reads `time.monotonic()` once per call
  (`HandRolledBreaker`). Their rows run interleaved with retrycore's in the
  same rounds (each round times every row once), medians of REPEATS rounds.
"""

from __future__ import annotations

import contextlib
import datetime
import platform
import statistics
import sys
import time
import timeit
from typing import Callable, Dict, Iterator, List, Optional, Tuple

import retrycore
from retrycore import _native

QUICK = "--quick" in sys.argv
REPEATS = 5 if QUICK else 15
NUMBER = 20_000 if QUICK else 100_000

Fn = Callable[[], object]


def ns(fn: Fn, number: int = NUMBER) -> float:
    fn()  # warm up (first-call caches)
    runs = timeit.repeat(fn, number=number, repeat=REPEATS)
    return statistics.median(runs) / number * 1e9


@contextlib.contextmanager
def sleep_stubbed() -> Iterator[None]:
    real = time.sleep
    time.sleep = lambda _s: None  # type: ignore[assignment]
    try:
        yield
    finally:
        time.sleep = real


# One row per operation: retrycore, its floor, its goal, and the peers.
class Row:
    def __init__(self, what: str, goal: str = "") -> None:
        self.what = what
        self.goal = goal
        self.ours: Optional[float] = None
        self.floor: Optional[float] = None
        self.peers: Dict[str, float] = {}


rows: List[Row] = []


def row(what: str, goal: str = "") -> Row:
    r = Row(what, goal)
    rows.append(r)
    return r


# ---------------------------------------------------------------- floors
noop, noop_obj = _native.noop, _native.noop_obj
exc = ConnectionResetError(104, "reset")
body = {"order": 1001, "amount": 12.5, "currency": "EUR", "items": ["a", "b"]}
floor_none = ns(noop)  # f()
floor_int_float = ns(lambda: noop(1, 0.5))  # lambda: f(int, float)
floor_exc = ns(lambda: noop_obj(exc))  # lambda: f(exception)


def floor_two_calls() -> None:  # def: a = f(); f(a, str)
    a = noop()
    noop(a, "success")


floor_cycle = ns(floor_two_calls)
floor_fp = ns(lambda: noop(body, b="/charges"))  # lambda: f(dict, kw=str)

# ---------------------------------------------------------------- decisions
policy = retrycore.RetryPolicy(max_attempts=3, seed=1)
native = policy._p
row_delay = r = row("one delay decision: `policy.delay(1, 0.5)`", "≤ 1.5× floor")
r.ours, r.floor = ns(lambda: native.delay(1, 0.5)), floor_int_float
row_classify = r = row("classify one exception: `classify(ConnectionResetError(…))`", "≤ 1 µs")
classify = retrycore.classify
r.ours, r.floor = ns(lambda: classify(exc)), floor_exc

breaker = retrycore.CircuitBreaker()
acquire, record = breaker.try_acquire, breaker.record


def breaker_cycle() -> None:
    a = acquire()
    record(a.permit, "success")


row_cycle = r = row("breaker `try_acquire()` + `record(permit, \"success\")`", "≤ 1.5× floor")
r.ours, r.floor = ns(breaker_cycle), floor_cycle
budget = retrycore.Budget.token_bucket(capacity=10**9, retry_cost=0)
r = row("budget `try_withdraw()` (token bucket)", "≤ 1.5× floor")
r.ours, r.floor = ns(budget.try_withdraw), floor_none
r = row("`fingerprint(small dict, method=, path=)` (SHA-256)")
fingerprint = retrycore.fingerprint
r.ours, r.floor = ns(lambda: fingerprint(body, method="POST", path="/charges")), floor_fp


def ok() -> int:
    return 1


state = {"n": 0}


def flaky() -> int:
    state["n"] += 1
    if state["n"] % 3:
        raise ConnectionResetError(104, "reset")
    return 1


row_ok = row("decorated call, succeeds first time", "≤ 1.5 µs")
row_ok.ours = ns(retrycore.retry(policy)(ok))
row_fail = row("decorated call, fails twice (sleep stubbed)", "≤ 5 µs")
zero = retrycore.RetryPolicy(max_attempts=3, seed=1).testing(3)
state["n"] = 0
row_fail.ours = ns(retrycore.retry(zero, idempotent=True)(flaky), NUMBER // 10)
row_breaker = row("breaker-guarded call, succeeds", "≤ 250 ns")
row_breaker.ours = ns(breaker(ok))


# ---------------------------------------------------------------- issue 17's hand-rolled baselines
def _no_sleep(_seconds: float) -> None:
    """The baseline's sleep, stubbed (retrycore's first-try success never sleeps either)."""


def hand_rolled_retry(fn: Callable[..., object]) -> Callable[..., object]:
    """What a caller writes instead of a library: three tries, exponential sleep between them."""

    def wrapper(*args: object, **kwargs: object) -> object:
        for attempt in range(3):
            try:
                return fn(*args, **kwargs)
            except ConnectionError:
                if attempt == 2:
                    raise
                _no_sleep(0.1 * 2**attempt)
        raise AssertionError("unreachable")

    return wrapper


class HandRolledBreaker:
    """A consecutive-failure breaker: open after `threshold` failures in a row, for
    `reset_after` seconds; one `time.monotonic()` read per call (in `try_acquire`)."""

    def __init__(self, threshold: int = 5, reset_after: float = 30.0) -> None:
        self.threshold = threshold
        self.reset_after = reset_after
        self.failures = 0
        self.opened_at: Optional[float] = None
        self.now = 0.0

    def try_acquire(self) -> bool:
        self.now = time.monotonic()
        if self.opened_at is not None and self.now - self.opened_at < self.reset_after:
            return False
        return True

    def record(self, success: bool) -> None:
        if success:
            self.failures = 0
            self.opened_at = None
            return
        self.failures += 1
        if self.failures >= self.threshold:
            self.opened_at = self.now


hand_breaker = HandRolledBreaker()


def hand_breaker_cycle() -> None:
    if hand_breaker.try_acquire():
        hand_breaker.record(True)


def interleaved(fns: Dict[str, Fn], number: int = NUMBER) -> Dict[str, float]:
    """Medians of REPEATS rounds, ns per call; each round times every fn once, in order."""
    timers = {k: timeit.Timer(f) for k, f in fns.items()}
    for f in fns.values():
        f()
    runs: Dict[str, List[float]] = {k: [] for k in fns}
    for _ in range(REPEATS):
        for k, t in timers.items():
            runs[k].append(t.timeit(number) / number * 1e9)
    return {k: statistics.median(v) for k, v in runs.items()}


issue17 = interleaved(
    {
        "retrycore: decorated call, ok first try": retrycore.retry(policy)(ok),
        "hand-rolled three-try loop, ok first try": hand_rolled_retry(ok),
        "retrycore: breaker `try_acquire()` + `record()`": breaker_cycle,
        "hand-rolled consecutive breaker": hand_breaker_cycle,
    }
)
row_ok.peers["hand-rolled"] = issue17["hand-rolled three-try loop, ok first try"]
row_cycle.peers["hand-rolled"] = issue17["hand-rolled consecutive breaker"]

# ---------------------------------------------------------------- peers
versions: Dict[str, str] = {}
try:
    import tenacity

    versions["tenacity"] = getattr(tenacity, "__version__", "")
    t_retry = tenacity.Retrying(stop=tenacity.stop_after_attempt(3), wait=tenacity.wait_exponential_jitter())
    rs = tenacity.RetryCallState(t_retry, None, (), {})
    rs.attempt_number = 1
    wait = tenacity.wait_exponential_jitter()
    row_delay.peers["tenacity"] = ns(lambda: wait(rs))
    fs = tenacity.RetryCallState(t_retry, None, (), {})
    fs.set_exception((type(exc), exc, None))
    pred = tenacity.retry_if_exception_type((ConnectionError, TimeoutError))
    row_classify.peers["tenacity"] = ns(lambda: pred(fs))
    row_ok.peers["tenacity"] = ns(tenacity.retry(stop=tenacity.stop_after_attempt(3))(ok))
    state["n"] = 0
    with sleep_stubbed():
        row_fail.peers["tenacity"] = ns(
            tenacity.retry(stop=tenacity.stop_after_attempt(3), wait=tenacity.wait_none())(flaky), NUMBER // 10
        )
except ImportError:
    pass
try:
    import stamina
    import stamina.instrumentation

    versions["stamina"] = ""
    stamina.instrumentation.set_on_retry_hooks([])
    stamina.set_testing(False)
    row_ok.peers["stamina"] = ns(stamina.retry(on=ConnectionResetError, attempts=3)(ok))
    stamina.set_testing(True, attempts=3)
    state["n"] = 0
    with sleep_stubbed():
        row_fail.peers["stamina"] = ns(stamina.retry(on=ConnectionResetError, attempts=3)(flaky), NUMBER // 10)
    stamina.set_testing(False)
except ImportError:
    pass
try:
    import backoff

    versions["backoff"] = ""
    row_ok.peers["backoff"] = ns(backoff.on_exception(backoff.expo, ConnectionResetError, max_tries=3)(ok))
    state["n"] = 0
    with sleep_stubbed():
        row_fail.peers["backoff"] = ns(
            backoff.on_exception(backoff.constant, ConnectionResetError, max_tries=3, interval=0, jitter=None)(flaky),
            NUMBER // 10,
        )
except ImportError:
    pass
try:
    import pybreaker

    versions["pybreaker"] = ""
    row_breaker.peers["pybreaker"] = ns(pybreaker.CircuitBreaker()(ok))
except ImportError:
    pass

# ---------------------------------------------------------------- report
try:
    from importlib.metadata import version as _version

    for name in versions:
        with contextlib.suppress(Exception):
            versions[name] = _version(name)
except ImportError:  # pragma: no cover
    pass


def cpu() -> str:
    with contextlib.suppress(OSError):
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def fmt(v: Optional[float]) -> str:
    if v is None:
        return ""
    return f"{v:,.0f}" if v >= 10 else f"{v:.1f}"


peers = [p for p in ("tenacity", "stamina", "backoff", "pybreaker") if p in versions] + ["hand-rolled"]
print(
    f"# {datetime.date.today().isoformat()} · {cpu()} · {platform.python_implementation()} "
    f"{platform.python_version()} · {platform.system()} {platform.release()} · retrycore {retrycore.__version__}"
    + "".join(f" · {p} {versions[p]}" for p in peers if p in versions)
)
print(f"# ns per call, median of {REPEATS} runs of {NUMBER:,} calls ({NUMBER // 10:,} for failing calls)")
print()
head = ["operation", "retrycore", "pyo3 floor (same signature)", "× floor", "goal"] + peers
print("| " + " | ".join(head) + " |")
print("| " + " | ".join(["---"] + ["---:"] * (len(head) - 1)) + " |")
for r in rows:
    ratio = f"{r.ours / r.floor:.2f}×" if r.ours is not None and r.floor else ""
    cells = [r.what, fmt(r.ours), fmt(r.floor), ratio, r.goal] + [fmt(r.peers.get(p)) for p in peers]
    print("| " + " | ".join(cells) + " |")
print()
print(f"# issue 17: interleaved rounds, median of {REPEATS} rounds of {NUMBER:,} calls, ns per call")
for what, v in issue17.items():
    print(f"  {what:<56} {fmt(v):>8}")
ok_ratio = issue17["retrycore: decorated call, ok first try"] / issue17["hand-rolled three-try loop, ok first try"]
br_ratio = issue17["retrycore: breaker `try_acquire()` + `record()`"] / issue17["hand-rolled consecutive breaker"]
print(f"  decorated ok / hand-rolled loop: {ok_ratio:.2f}× (goal ≤ 2×); breaker pair / hand-rolled breaker: {br_ratio:.2f}× (goal ≤ 2×)")

"""The fault drill's plan: timings, the policy documents every client uses, the
operations of each phase and the seeded fault script of each operation.

One definition for every runtime: the server (server.py) serves it at
``GET /plan``, and the Python, Node (napi) and Node (wasm) clients build their
policies from the documents in it, so all three drive the same operations
through the same faults. See docs/drills.md.
"""

from __future__ import annotations

import random
from typing import Any, Dict, List

# What the server can do to one request (docs/drills.md, "Faults").
OK = "ok"  # execute, answer 200 at once
SLOW = "slow"  # execute, answer 200 after SLOW_MS (within the client's attempt timeout)
UNAVAILABLE = "503"  # answer 503 + Retry-After: 0 without executing
RESET_BEFORE = "reset_before"  # close the socket (RST) without executing or answering
RESET_AFTER = "reset_after"  # execute (and store the result), then close the socket (RST) without answering
TIMEOUT = "timeout"  # execute, hold the answer HOLD_MS (longer than the attempt timeout), then answer
FAULTS = (OK, SLOW, UNAVAILABLE, RESET_BEFORE, RESET_AFTER, TIMEOUT)
WEIGHTS = (30, 10, 20, 15, 15, 10)
SCRIPT_LENGTH = 8  # requests past the script are answered OK

ATTEMPT_TIMEOUT_MS = 300  # the clients' per-attempt timeout (socket timeout / AbortSignal.timeout)
HOLD_MS = 500  # a TIMEOUT holds the answer this long: > ATTEMPT_TIMEOUT_MS, < LEASE_MS
SLOW_MS = 30  # a SLOW answer: < ATTEMPT_TIMEOUT_MS
LEASE_MS = 1200  # the idempotency record's lease: longer than any execution, so no take-over
RETENTION_MS = 60_000
CONCURRENCY = 8  # operations in flight at once, per client

SEEDED_OPS = 40  # per phase, besides the fixed ones

# Operations whose script is fixed, so every run covers every path whatever the seed.
FIXED: Dict[str, List[str]] = {
    # (a) POST without a declared key
    "a-fixed-503-exhaust": [UNAVAILABLE] * SCRIPT_LENGTH,
    "a-fixed-503-then-ok": [UNAVAILABLE, UNAVAILABLE, OK],
    "a-fixed-reset-before": [RESET_BEFORE, OK],
    "a-fixed-reset-after": [RESET_AFTER, OK],
    "a-fixed-timeout": [TIMEOUT, OK],
    "a-fixed-503-then-timeout": [UNAVAILABLE, TIMEOUT, OK],
    "a-fixed-slow": [SLOW],
    # (b) POST with a key the server deduplicates on
    "b-fixed-every-fault": [RESET_BEFORE, UNAVAILABLE, RESET_AFTER, TIMEOUT, SLOW],
    "b-fixed-timeout-then-409": [TIMEOUT, OK],
    "b-fixed-timeout-twice": [TIMEOUT, TIMEOUT, OK],
    "b-fixed-503-exhaust": [UNAVAILABLE] * SCRIPT_LENGTH,
    "b-fixed-ran-then-exhaust": [RESET_AFTER] + [RESET_BEFORE] * (SCRIPT_LENGTH - 1),
}

# The policy documents (the same JSON in every runtime). No `seed`: delays are
# drawn from OS entropy, as in production; nothing in the drill depends on them.
POLICY_NO_KEY: Dict[str, Any] = {
    "version": 1,
    "name": "drill.post-without-key",
    "max_attempts": 4,
    "deadline": "10s",
    "initial": "10ms",
    "max_delay": "40ms",
    "jitter": "full",
}
POLICY_KEYED: Dict[str, Any] = {
    "version": 1,
    "name": "drill.post-with-key",
    "max_attempts": 6,
    "deadline": "12s",
    "initial": "10ms",
    "max_delay": "40ms",
    "jitter": "full",
}
BREAKER_WAIT_MS = 300
POLICY_BREAKER: Dict[str, Any] = {
    "version": 1,
    "name": "drill.breaker",
    "max_attempts": 4,
    "deadline": "5s",
    "initial": "5ms",
    "max_delay": "20ms",
    "jitter": "full",
    "breaker": {
        "kind": "count_based",
        "minimum_number_of_calls": 5,
        "sliding_window_size": 10,
        "failure_rate_threshold": 50,
        "wait_duration_in_open_state": f"{BREAKER_WAIT_MS}ms",
        "permitted_number_of_calls_in_half_open_state": 2,
    },
}
# Phase (c), call by call. During the outage every request gets 503 without
# Retry-After (server_error: retried for a GET). Call 1 makes 4 attempts (4 calls
# in the window, below the minimum of 5): attempts_exhausted. Call 2's first
# failure is the 5th (100 % ≥ 50 %): the breaker opens and the retry gives up
# with breaker_open. Then every call is refused locally (CircuitOpenError) and
# reaches nothing. After the outage and the open wait, two trial calls close it.
BREAKER_REFUSED_CALLS = 10
BREAKER_CALLS_AFTER = 3
BREAKER_EXPECTED = {
    "outage_requests": 5,
    "transitions": [["closed", "open"], ["open", "half_open"], ["half_open", "closed"]],
}


def script(seed: int, op: str) -> List[str]:
    """The faults the server applies to requests 1, 2, … of `op` (then OK)."""
    if op in FIXED:
        return list(FIXED[op])
    rng = random.Random(f"{seed}:{op}")
    return rng.choices(FAULTS, weights=WEIGHTS, k=SCRIPT_LENGTH)


def ops(phase: str) -> List[str]:
    fixed = [op for op in FIXED if op.startswith(phase + "-")]
    return fixed + [f"{phase}-{i}" for i in range(SEEDED_OPS)]


def plan(seed: int) -> Dict[str, Any]:
    return {
        "seed": seed,
        "attempt_timeout_ms": ATTEMPT_TIMEOUT_MS,
        "hold_ms": HOLD_MS,
        "slow_ms": SLOW_MS,
        "lease_ms": LEASE_MS,
        "concurrency": CONCURRENCY,
        "policies": {"a": POLICY_NO_KEY, "b": POLICY_KEYED, "c": POLICY_BREAKER},
        "ops": {"a": ops("a"), "b": ops("b")},
        "breaker": {
            "refused_calls": BREAKER_REFUSED_CALLS,
            "calls_after": BREAKER_CALLS_AFTER,
            "expected": BREAKER_EXPECTED,
        },
    }

#!/usr/bin/env python3
"""Writes tests/vectors/profiles/*.json: each compatibility profile's vectors,
taken from that project's own tests (cited in each case's `source`) or
computed from its own code's formula with stated draws.

Where the anchor is Python (tenacity, stamina) the expectation is computed
here with the anchor's own arithmetic (float seconds, CPython's order),
which is what the library itself computes. `--check` fails when a file
differs from what this script writes (`make test` runs it).
"""
import json
import math
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "profiles"
S = 10**9
MS = 10**6
TICK = 100


def every(r):
    """A session's replayed draws: the same draw for each retry (sessions here retry at
    most 9 times). Replayed draws never cycle: a retry past the last one is refused."""
    return [r] * 9


def p(name, **kw):
    return dict({"version": 1, "profile": name}, **kw)


FILES = {}


def file(name, kind, comment, cases):
    FILES[name] = {"_comment": comment, "kind": kind, "cases": cases}


# ------------------------------------------------------------------ aws-standard
BOTO = "boto/botocore tests/unit/retries/test_standard.py"
LEGACY = "boto/botocore botocore/retryhandler.py delay_exponential(base='rand', growth_factor=2) and botocore/data/_retry.json"
# botocore's legacy mode: 5 attempts, no cap, no quota (docs/profiles.md, "Migrating from each anchor").
LEGACY_DOC = p("aws-standard", max_attempts=5, max_delay="18446744073709551615ns", budgets=[])
file("aws-standard-delays.json", "delay_replay",
     "aws-standard: botocore standard mode delay r·min(1s·2^(n−1), 20s), cap before jitter (botocore/retries/standard.py ExponentialBackoff.delay_amount).",
     [
         {"name": "random() = 1 over nine retries", "source": f"{BOTO} TestExponentialBackoff.test_range_of_exponential_backoff",
          "policy": p("aws-standard", max_attempts=10), "draws": [1.0] * 9, "expect": [x * S for x in [1, 2, 4, 8, 16, 20, 20, 20, 20]]},
         {"name": "r = 0.5", "source": "hand-computed from standard.py delay_amount (docs/profiles-research.md §1.2)",
          "policy": p("aws-standard", max_attempts=8), "draws": [0.5] * 7, "expect": [S // 2, S, 2 * S, 4 * S, 8 * S, 10 * S, 10 * S]},
         {"name": "r = 0.25", "source": "hand-computed from standard.py delay_amount",
          "policy": p("aws-standard", max_attempts=8), "draws": [0.25] * 7, "expect": [S // 4, S // 2, S, 2 * S, 4 * S, 5 * S, 5 * S]},
         {"name": "r = 0 waits nothing", "source": "standard.py: random() * min(...)",
          "policy": p("aws-standard"), "draws": [0.0, 0.0], "expect": [0, 0]},
         {"name": "legacy mode, random() = 1", "source": f"{LEGACY} (5 attempts: rand · 2^(attempts−1) for attempts 1–4)",
          "policy": LEGACY_DOC, "draws": [1.0] * 4, "expect": [S, 2 * S, 4 * S, 8 * S]},
         {"name": "legacy mode, random() = 0.25", "source": f"{LEGACY}; hand-computed",
          "policy": LEGACY_DOC, "draws": [0.25] * 4, "expect": [S // 4, S // 2, S, 2 * S]},
         {"name": "legacy mode has no 20 s cap (9 attempts, random() = 1)", "source": f"{LEGACY}: no max backoff",
          "policy": dict(LEGACY_DOC, max_attempts=9), "draws": [1.0] * 8, "expect": [2**i * S for i in range(8)]},
     ])


def step(op, **kw):
    d = {"op": op}
    d.update(kw)
    return d


F500 = {"status": 500, "method": "GET"}
file("aws-standard-sessions.json", "session",
     "aws-standard sessions: botocore's retry quota (500 tokens, 5 per retry, 10 after a connect/read timeout, refund on success, +1 on a first-try success) with retrycore's gating. Draws are replayed with r = 1.",
     [
         {"name": "a non-timeout error costs 5, a success refunds it", "source": f"{BOTO} TestRetryQuotaChecker.test_can_acquire_quota_non_timeout_error, test_can_release_quota_based_on_context_value_on_success",
          "policy": p("aws-standard"), "session": {"draws": every(1.0)},
          "steps": [step("before_attempt", now=0), step("failure", now=1, failure=F500, expect={"retry": {"delay": S}}),
                    step("budget", expect={"tokens": 495}), step("before_attempt", now=S + 1), step("success", now=S + 2), step("budget", expect={"tokens": 500})]},
         {"name": "a read timeout costs 10", "source": f"{BOTO} TestRetryQuotaChecker.test_can_acquire_quota_for_timeout_error",
          "policy": p("aws-standard"), "session": {"draws": every(1.0)},
          "steps": [step("before_attempt", now=0), step("failure", now=1, failure={"error_names": ["botocore.exceptions.ReadTimeoutError"], "idempotent": True}, expect={"retry": {"category": "timeout"}}),
                    step("budget", expect={"tokens": 490})]},
         {"name": "all retries failed: nothing released", "source": f"{BOTO} TestRetryQuotaChecker.test_dont_release_quota_if_all_retries_failed",
          "policy": p("aws-standard", max_attempts=2), "session": {"draws": every(1.0)},
          "steps": [step("before_attempt", now=0), step("failure", now=1, failure=F500), step("before_attempt", now=S + 1),
                    step("failure", now=S + 2, failure=F500, expect={"give_up": {"reason": "attempts_exhausted"}}), step("budget", expect={"tokens": 495})]},
         {"name": "a success without a retry adds 1", "source": f"{BOTO} TestRetryQuotaChecker.test_can_release_default_quota_if_not_in_context",
          "policy": p("aws-standard"), "session": {"draws": every(1.0)},
          "steps": [step("start", s="a", draws=every(1.0)), step("before_attempt", s="a", now=0), step("failure", s="a", now=1, failure=F500), step("drop", s="a"),
                    step("budget", expect={"tokens": 495}), step("before_attempt", now=2), step("success", now=3), step("budget", expect={"tokens": 496})]},
         {"name": "quota of 5: one retry, then refused", "source": f"{BOTO} TestRetryQuotaChecker.test_acquire_quota_fails",
          "policy": p("aws-standard", max_attempts=5, budget={"kind": "token_bucket", "capacity": 5}), "session": {"draws": every(1.0)},
          "steps": [step("before_attempt", now=0), step("failure", now=1, failure=F500, expect={"retry": {"retry": 1}}), step("before_attempt", now=S + 1),
                    step("failure", now=S + 2, failure=F500, expect={"give_up": {"reason": "budget_exhausted", "budget_reason": "insufficient_tokens"}})]},
         {"name": "a throttling code is overloaded even on a 400", "source": "botocore standard.py ThrottledRetryableChecker._THROTTLED_ERROR_CODES",
          "policy": p("aws-standard"), "session": {"draws": every(1.0)},
          "steps": [step("before_attempt", now=0), step("failure", now=1, failure={"status": 400, "method": "POST", "error_names": ["ThrottlingException"]},
                                                          expect={"retry": {"category": "overloaded", "delay": S}})]},
         {"name": "a POST 500 is not retried (retrycore's gating; botocore retries every call)", "source": "docs/profiles.md deviations",
          "policy": p("aws-standard"), "session": {"draws": every(1.0)},
          "steps": [step("before_attempt", now=0), step("failure", now=1, failure={"status": 500, "method": "POST"}, expect={"give_up": {"reason": "not_retryable"}})]},
     ])

# ------------------------------------------------------------------ aws-2026
SMITHY = "smithy-lang/smithy-typescript packages/core/src/submodules/retry/util-retry/retries.integ.spec.ts"
BOTO21 = "boto/botocore tests/unit/retries/test_standard_retry_v2_1.py"
# botocore 2.1's DynamoDB settings (_DYNAMODB_BASE_SCALE 0.025, _SERVICE_MAX_ATTEMPTS 4) under aws-2026.
DYNAMODB_DOC = p("aws-2026", initial="25ms", max_attempts=4)


def aws26_case(name, source, statuses, expects, max_attempts=3, capacity=None, final=None):
    pol = p("aws-2026", max_attempts=max_attempts)
    if capacity is not None:
        pol["budget"] = {"kind": "token_bucket", "capacity": 500, "retry_cost": 14, "timeout_cost": 14, "throttling_cost": 5}
    steps = []
    t = 0
    for st, exp in zip(statuses, expects):
        steps.append(step("before_attempt", now=t))
        if st == 200:
            steps.append(step("success", now=t + 1))
        else:
            f = {"status": st, "method": "GET"} if st != "throttling" else {"status": 400, "method": "GET", "error_names": ["Throttling"]}
            steps.append(step("failure", now=t + 1, failure=f, expect=exp))
        if exp and "retry" in exp:
            t += 1 + exp["retry"]["delay"]
        else:
            t += 2
    return {"name": name, "source": source, "policy": pol, "session": {"draws": every(1.0)}, "steps": steps}


file("aws-2026-sessions.json", "session",
     "aws-2026: smithy-typescript SMITHY_NEW_RETRIES_2026 (bases 50 ms / 1000 ms for throttling, floor to whole ms, costs 14 / 5, refund on success), replayed with r = 1 as the specification tests mock it; x-amz-retry-after clamp max(t, min(ra, t + 5 s)).",
     [
         {"name": "Retry eventually succeeds", "source": f"{SMITHY} specification tests",
          "policy": p("aws-2026"), "session": {"draws": every(1.0)},
          "steps": [step("before_attempt", now=0), step("failure", now=1, failure=F500, expect={"retry": {"delay": 50 * MS}}), step("budget", expect={"tokens": 486}),
                    step("before_attempt", now=2), step("failure", now=3, failure=F500, expect={"retry": {"delay": 100 * MS}}), step("budget", expect={"tokens": 472}),
                    step("before_attempt", now=4), step("success", now=5), step("budget", expect={"tokens": 486})]},
         {"name": "Fail due to max attempts", "source": f"{SMITHY} specification tests",
          "policy": p("aws-2026"), "session": {"draws": every(1.0)},
          "steps": [step("before_attempt", now=0), step("failure", now=1, failure={"status": 502, "method": "GET"}, expect={"retry": {"delay": 50 * MS}}),
                    step("before_attempt", now=2), step("failure", now=3, failure={"status": 502, "method": "GET"}, expect={"retry": {"delay": 100 * MS}}),
                    step("before_attempt", now=4), step("failure", now=5, failure={"status": 502, "method": "GET"}, expect={"give_up": {"reason": "attempts_exhausted"}}),
                    step("budget", expect={"tokens": 472})]},
         {"name": "Retry Quota reached after a single retry", "source": f"{SMITHY} specification tests (tokens 14)",
          "policy": p("aws-2026", budget={"kind": "token_bucket", "capacity": 14, "retry_cost": 14, "timeout_cost": 14, "throttling_cost": 5}), "session": {"draws": every(1.0)},
          "steps": [step("before_attempt", now=0), step("failure", now=1, failure=F500, expect={"retry": {"delay": 50 * MS}}), step("budget", expect={"tokens": 0}),
                    step("before_attempt", now=2), step("failure", now=3, failure=F500, expect={"give_up": {"reason": "budget_exhausted"}}), step("budget", expect={"tokens": 0})]},
         {"name": "Verifying exponential backoff timing", "source": f"{SMITHY} specification tests (max attempts 5)",
          "policy": p("aws-2026", max_attempts=5), "session": {"draws": every(1.0)},
          "steps": [x for i, (d, q) in enumerate([(50, 486), (100, 472), (200, 458), (400, 444)]) for x in
                    (step("before_attempt", now=10 * i), step("failure", now=10 * i + 1, failure=F500, expect={"retry": {"delay": d * MS}}), step("budget", expect={"tokens": q}))]
          + [step("before_attempt", now=50), step("failure", now=51, failure=F500, expect={"give_up": {"reason": "attempts_exhausted"}}), step("budget", expect={"tokens": 444})]},
         {"name": "Retry Stops After Retry Quota Exhaustion", "source": f"{SMITHY} specification tests (max 5, tokens 20)",
          "policy": p("aws-2026", max_attempts=5, budget={"kind": "token_bucket", "capacity": 20, "retry_cost": 14, "timeout_cost": 14, "throttling_cost": 5}), "session": {"draws": every(1.0)},
          "steps": [step("before_attempt", now=0), step("failure", now=1, failure=F500, expect={"retry": {"delay": 50 * MS}}), step("budget", expect={"tokens": 6}),
                    step("before_attempt", now=2), step("failure", now=3, failure={"status": 502, "method": "GET"}, expect={"give_up": {"reason": "budget_exhausted"}}), step("budget", expect={"tokens": 6})]},
         {"name": "Retry quota Recovery After Successful Responses", "source": f"{SMITHY} specification tests (max 5, tokens 30)",
          "policy": p("aws-2026", max_attempts=5, budget={"kind": "token_bucket", "capacity": 30, "retry_cost": 14, "timeout_cost": 14, "throttling_cost": 5}), "session": {"draws": every(1.0)},
          "steps": [step("before_attempt", now=0), step("failure", now=1, failure=F500, expect={"retry": {"delay": 50 * MS}}), step("budget", expect={"tokens": 16}),
                    step("before_attempt", now=2), step("failure", now=3, failure={"status": 502, "method": "GET"}, expect={"retry": {"delay": 100 * MS}}), step("budget", expect={"tokens": 2}),
                    step("before_attempt", now=4), step("success", now=5), step("budget", expect={"tokens": 16}),
                    step("start", s="b", draws=every(1.0)), step("before_attempt", s="b", now=6), step("failure", s="b", now=7, failure=F500, expect={"retry": {"delay": 50 * MS}}), step("budget", expect={"tokens": 2}),
                    step("before_attempt", s="b", now=8), step("success", s="b", now=9), step("budget", expect={"tokens": 16})]},
         {"name": "Throttling Error Token Bucket Drain (5) and Backoff (1000 ms)", "source": f"{SMITHY} specification tests",
          "policy": p("aws-2026"), "session": {"draws": every(1.0)},
          "steps": [step("before_attempt", now=0), step("failure", now=1, failure={"status": 400, "method": "GET", "error_names": ["Throttling"]}, expect={"retry": {"delay": S, "category": "overloaded"}}),
                    step("budget", expect={"tokens": 495}), step("before_attempt", now=2), step("success", now=3), step("budget", expect={"tokens": 500})]},
         *[{"name": f"x-amz-retry-after {v!r}", "source": f"{BOTO21} TestRetryAfterHeaderInRetries.test_x_amz_retry_after_header_is_honored",
            "policy": p("aws-2026"), "session": {"draws": every(1.0)},
            "steps": [step("before_attempt", now=0), step("failure", now=1, failure={"status": 500, "method": "GET", "headers": [["x-amz-retry-after", v]]}, expect={"retry": {"delay": d}}),
                      step("budget", expect={"tokens": 486})]}
           for v, d in [("1500", 1500 * MS), ("0", 50 * MS), ("10000", 5050 * MS), ("invalid", 50 * MS)]],
         {"name": "DynamoDB (botocore 2.1): three retries of 25, 50, 100 ms, then max attempts", "source": f"{BOTO21} TestServiceSpecificRetries.test_dynamodb_base_backoff_and_increased_retries ((1, 486, 0.025), (2, 472, 0.05), (3, 458, 0.1); attempt 4 not retryable, quota 458)",
          "policy": DYNAMODB_DOC, "session": {"draws": every(1.0)},
          "steps": [x for i, (d, q) in enumerate([(25, 486), (50, 472), (100, 458)]) for x in
                    (step("before_attempt", now=10 * i), step("failure", now=10 * i + 1, failure=F500, expect={"retry": {"delay": d * MS}}), step("budget", expect={"tokens": q}))]
          + [step("before_attempt", now=30), step("failure", now=31, failure=F500, expect={"give_up": {"reason": "attempts_exhausted"}}), step("budget", expect={"tokens": 458})]},
         {"name": "x-amz-retry-after clamp uses the jittered delay (r = 0.5, third retry)", "source": "hand-computed from botocore 2.1 delay_amount: max(0.1, min(10, 5.1))",
          "policy": p("aws-2026", max_attempts=4), "session": {"draws": every(0.5)},
          "steps": [step("before_attempt", now=0), step("failure", now=1, failure=F500, expect={"retry": {"delay": 25 * MS}}),
                    step("before_attempt", now=2), step("failure", now=3, failure=F500, expect={"retry": {"delay": 50 * MS}}),
                    step("before_attempt", now=4), step("failure", now=5, failure={"status": 500, "method": "GET", "headers": [["x-amz-retry-after", "10000"]]}, expect={"retry": {"delay": 5100 * MS}})]},
     ])
file("aws-2026-delays.json", "delay_replay",
     "aws-2026 backoff: floor(r · min(50 ms · 2^(n−1), 20 s)) whole milliseconds (DefaultRetryBackoffStrategy.computeNextBackoffDelay).",
     [
         {"name": "random = 1", "source": "smithy-lang/smithy-typescript DefaultRetryBackoffStrategy.spec.ts (base 50: 50, 100, 200, 400)",
          "policy": p("aws-2026", max_attempts=5), "draws": [1.0] * 4, "expect": [50 * MS, 100 * MS, 200 * MS, 400 * MS]},
         {"name": "the 20 s cap", "source": "DefaultRetryBackoffStrategy.spec.ts (attempts ceil(log2(20000)) → 20000)",
          "policy": p("aws-2026", max_attempts=12), "draws": [1.0] * 11, "expect": [min(50 * 2**i, 20000) * MS for i in range(11)]},
         {"name": "r = 0.5", "source": "hand-computed (docs/profiles-research.md §1.4)",
          "policy": p("aws-2026", max_attempts=6), "draws": [0.5] * 5, "expect": [25 * MS, 50 * MS, 100 * MS, 200 * MS, 400 * MS]},
         {"name": "floor to whole milliseconds", "source": "DefaultRetryBackoffStrategy: Math.floor(t_i)",
          "policy": p("aws-2026"), "draws": [0.333, 0.999], "expect": [16 * MS, 99 * MS]},
         {"name": "DynamoDB (botocore 2.1): base 25 ms, 4 attempts, random = 1", "source": f"{BOTO21} TestServiceSpecificRetries.test_dynamodb_base_backoff_and_increased_retries (0.025, 0.05, 0.1 s)",
          "policy": DYNAMODB_DOC, "draws": [1.0] * 3, "expect": [25 * MS, 50 * MS, 100 * MS]},
     ])

# ------------------------------------------------------------------ grpc
GRPCGO = "grpc-go stream.go (*csAttempt).shouldRetry: cur = min(initial·mult^k, max) · (0.8 + 0.4·rand), int64 ns"


def grpc(initial_ns, mult, mx_ns, r, n):
    out = []
    for k in range(n):
        cur = min(initial_ns * mult**k, mx_ns)  # integer powers of 2 / 1.5 exact in f64 here
        cur = float(cur) * (0.8 + 0.4 * r)
        out.append(int(cur))
    return out


file("grpc-delays.json", "delay_replay",
     "grpc: gRFC A6 as revised in 2024, min(initial·mult^(n−1), max)·U(0.8, 1.2), truncated to whole ns as grpc-go does; may exceed max by 20 %.",
     [
         {"name": f"initial 100 ms, ×{m}, max 1 s, r = {r}", "source": f"{GRPCGO} (hand-computed, docs/profiles-research.md §2.4)",
          "policy": p("grpc", initial="100ms", multiplier=m, max_delay="1s"), "draws": [r] * 4, "expect": grpc(100 * MS, m, S, r, 4)}
         for m in (2, 1.5) for r in (0.0, 0.3, 0.5, 0.999999)
     ] + [
         {"name": "the jittered delay exceeds max by up to 20 %", "source": "grpc/proposal PR #452 review: 'the jitter is applied to the maxBackoff'",
          "policy": p("grpc", initial="1s", max_delay="1s"), "draws": [0.999999], "expect": grpc(S, 2, S, 0.999999, 1)},
     ])
file("grpc-sessions.json", "session",
     "grpc sessions: the pushback alone sets the delay and resets the backoff to initial (gRFC A6 Pushback); a negative pushback declines; maxAttempts above 5 are treated as 5.",
     [
         {"name": "pushback sets the delay and resets the backoff", "source": "grpc/proposal A6-client-retries.md Pushback; grpc-go shouldRetry (numRetriesSincePushback = 0)",
          "policy": p("grpc", idempotent=True, max_attempts=5), "session": {"draws": every(0.5)},
          "steps": [step("before_attempt", now=0), step("failure", now=1, failure={"grpc_code": "UNAVAILABLE"}, expect={"retry": {"delay": 100 * MS}}),
                    step("before_attempt", now=2), step("failure", now=3, failure={"grpc_code": "UNAVAILABLE"}, expect={"retry": {"delay": 200 * MS}}),
                    step("before_attempt", now=4), step("failure", now=5, failure={"grpc_code": "UNAVAILABLE", "headers": [["grpc-retry-pushback-ms", "3000"]]}, expect={"retry": {"delay": 3 * S, "category": "overloaded"}}),
                    step("before_attempt", now=6), step("failure", now=7, failure={"grpc_code": "UNAVAILABLE"}, expect={"retry": {"delay": 100 * MS}})]},
         {"name": "pushback shorter than the backoff still wins", "source": "gRFC A6: 'it will retry after exactly that delay'",
          "policy": p("grpc", idempotent=True, initial="5s", max_delay="10s"), "session": {"draws": every(0.5)},
          "steps": [step("before_attempt", now=0), step("failure", now=1, failure={"grpc_code": "UNAVAILABLE", "headers": [["grpc-retry-pushback-ms", "10"]]}, expect={"retry": {"delay": 10 * MS}})]},
         {"name": "negative pushback: do not retry", "source": "gRFC A6 Pushback; grpc-go strconv.Atoi error or < 0",
          "policy": p("grpc", idempotent=True), "session": {"draws": every(0.5)},
          "steps": [step("before_attempt", now=0), step("failure", now=1, failure={"grpc_code": "UNAVAILABLE", "headers": [["grpc-retry-pushback-ms", "-1"]]}, expect={"give_up": {"reason": "server_declined"}})]},
         {"name": "maxAttempts 10 is treated as 5", "source": "gRFC A6 Limits: values greater than 5 are treated as 5",
          "policy": p("grpc", idempotent=True, max_attempts=10), "session": {"draws": every(0.0)},
          "steps": [x for i in range(4) for x in (step("before_attempt", now=2 * i), step("failure", now=2 * i + 1, failure={"grpc_code": "UNAVAILABLE"}, expect={"retry": {"retry": i + 1}}))]
          + [step("before_attempt", now=8, expect={"proceed": {"attempt": 5, "max_attempts": 5}}), step("failure", now=9, failure={"grpc_code": "UNAVAILABLE"}, expect={"give_up": {"reason": "attempts_exhausted"}})]},
         {"name": "gRPC calls are idempotent only when declared", "source": "docs/classification-rules.md, Idempotency gating; retrycore keeps its gating under every profile (docs/profiles.md)",
          "policy": p("grpc"), "session": {"draws": every(0.5)},
          "steps": [step("before_attempt", now=0), step("failure", now=1, failure={"grpc_code": "UNAVAILABLE"}, expect={"give_up": {"reason": "not_retryable"}})]},
     ])

# ------------------------------------------------------------------ polly
POLLY = "App-vNext/Polly test/Polly.Core.Tests/Retry/RetryHelperTests.cs"
POLLY_DEFAULTS = "App-vNext/Polly src/Polly.Core/Retry/RetryConstants.cs (DefaultRetryCount 3, DefaultBaseDelay 2 s, DefaultBackoffType Constant) as RetryStrategyOptions' defaults (UseJitter false, MaxDelay none)"


def polly_djv2(base_ticks, draws):
    prev = 0.0
    out = []
    for a, r in enumerate(draws):
        t = a + r
        nxt = math.pow(2.0, t) * math.tanh(math.sqrt(4.0 * t))
        v = nxt - prev
        prev = nxt
        out.append(int(min(v * (1 / 1.4) * base_ticks, float(2**63 - 1) - 1000.0)) * TICK)
    return out


file("polly-delays.json", "delay_replay",
     "polly: Polly v8 RetryHelper — 0-based attempt, Constant/Linear/Exponential, UseJitter (±25 % for constant and linear, DecorrelatedJitterV2 for exponential), MaxDelay after jitter, 100 ns ticks.",
     [
         {"name": "defaults: Constant 2 s, no jitter, 3 retries", "source": POLLY_DEFAULTS,
          "policy": p("polly"), "draws": [0.5] * 3, "expect": [2 * S] * 3},
         {"name": "Constant, no jitter", "source": f"{POLLY} Constant_Ok", "policy": p("polly", backoff="constant", initial="1s"), "draws": [0.5] * 3, "expect": [S] * 3},
         {"name": "Linear, no jitter", "source": f"{POLLY} Linear_Ok", "policy": p("polly", backoff="linear", initial="1s"), "draws": [0.5] * 3, "expect": [S, 2 * S, 3 * S]},
         {"name": "Exponential, no jitter", "source": f"{POLLY} Exponential_Ok", "policy": p("polly", backoff="exponential", initial="1s"), "draws": [0.5] * 3, "expect": [S, 2 * S, 4 * S]},
         {"name": "base 0 gives 0", "source": f"{POLLY} Constant_Ok / Exponential_Ok (zero delay)", "policy": p("polly", backoff="exponential", initial="0s", jitter="full"), "draws": [0.5] * 3, "expect": [0, 0, 0]},
         *[{"name": f"Constant with jitter, r = {r}", "source": f"{POLLY} Constant_Jitter_Ok", "policy": p("polly", backoff="constant", initial="1s", jitter="full"), "draws": [r], "expect": [d]}
           for r, d in [(0.0, 750 * MS), (0.4, 950 * MS), (0.6, 1050 * MS), (1.0, 1250 * MS)]],
         *[{"name": f"Linear with jitter, attempt 2, r = {r}", "source": f"{POLLY} Linear_Jitter_Ok", "policy": p("polly", backoff="linear", initial="1s", jitter="full"),
            "draws": [0.5, 0.5, r], "expect": [S, 2 * S, d]}
           for r, d in [(0.0, 2250 * MS), (0.4, 2850 * MS), (0.5, 3 * S), (0.6, 3150 * MS), (1.0, 3750 * MS)]],
         {"name": "MaxDelay below the delay", "source": f"{POLLY} MaxDelay_DelayLessThanMaxDelay_Respected (constant 1 s, max 2 s)",
          "policy": p("polly", backoff="constant", initial="1s", max_delay="2s"), "draws": [0.5], "expect": [S]},
         {"name": "Constant 100 ms, r = 0.3", "source": "hand-computed from RetryHelper.ApplyJitter (docs/profiles-research.md §3.2)",
          "policy": p("polly", backoff="constant", initial="100ms", jitter="full"), "draws": [0.3], "expect": [90 * MS]},
         {"name": "Constant 333 ms, r = 1/3", "source": "hand-computed from RetryHelper.ApplyJitter",
          "policy": p("polly", backoff="constant", initial="333ms", jitter="full"), "draws": [1 / 3], "expect": [3052500 * TICK]},
         *[{"name": f"DecorrelatedJitterV2 {draws}", "source": "Polly RetryHelper.DecorrelatedJitterBackoffV2 (pFactor 4, 1/1.4); computed with CPython math.pow/tanh (±1 tick against .NET)",
            "policy": p("polly", backoff="exponential", initial="1s", jitter="full", max_attempts=len(draws) + 1), "draws": draws, "expect": polly_djv2(10**7, draws)}
           for draws in ([0.5] * 5, [0.0] * 4, [1.0] * 3, [0.25, 0.75, 0.1, 0.9, 0.5])],
     ] + [
         {"name": f"MaxDelay after jitter: {kind}, jitter {j}", "source": f"{POLLY} MaxDelay_Ok (r = 0.5, attempt 2, base 10 s, max 1 s)",
          "policy": p("polly", backoff=kind, initial="10s", max_delay="1s", jitter=j), "draws": [0.5, 0.5, 0.5], "expect": [S, S, S]}
         for kind in ("constant", "linear", "exponential") for j in ("none", "full")
     ])

# Polly's breaker: MinimumThroughput 100, FailureRatio 0.1, SamplingDuration 30 s, BreakDuration 5 s.
PB = {"kind": "sampling"}
calls = lambda n, outcome, t0=0: [{"op": "call", "now": t0 + i, "outcome": outcome} for i in range(n)]
tr = lambda frm, to, reason, at: {"from": frm, "to": to, "reason": reason, "at": at}
file("polly-breaker.json", "breaker",
     "polly breaker (kind sampling): Polly v8 AdvancedCircuitBehavior + RollingHealthMetrics + CircuitStateController — break on a failure when throughput ≥ MinimumThroughput and failure ratio ≥ FailureRatio within SamplingDuration (10 windows); one probe at (not after) the break's end.",
     [
         {"name": "90 successes then 10 failures break at the 10th", "source": "hand-computed from AdvancedCircuitBehavior.OnActionFailure (docs/profiles-research.md §3.3)",
          "config": PB, "steps": calls(90, "success") + calls(9, "failure", 90) + [{"op": "call", "now": 99, "outcome": "failure", "expect": {"transition": tr("closed", "open", "failure_rate", 99)}}]},
         {"name": "89 successes and 10 failures do not break (throughput 99)", "source": "hand-computed from AdvancedCircuitBehavior",
          "config": PB, "steps": calls(89, "success") + calls(10, "failure", 89) + [{"op": "state", "expect": {"state": "closed", "calls": 99, "failures": 10}}]},
         {"name": "successes never break", "source": "AdvancedCircuitBehavior.OnActionSuccess only records",
          "config": dict(PB, minimum_throughput=2, failure_ratio=0.5), "steps": calls(1, "failure") + [{"op": "call", "now": 5, "outcome": "success", "expect": {"transition": None}},
                                                                                                     {"op": "call", "now": 6, "outcome": "failure", "expect": {"transition": tr("closed", "open", "failure_rate", 6)}}]},
         {"name": "the probe is admitted at the break's end", "source": "CircuitStateController.PermitHalfOpenCircuitTest_NeedsLock: now >= _blockedUntil",
          "config": dict(PB, minimum_throughput=2, failure_ratio=0.5), "steps": calls(2, "failure") + [
              {"op": "acquire", "now": 1 + 5 * S - 1, "expect": {"permitted": False, "retry_after": 1}},
              {"op": "acquire", "now": 1 + 5 * S, "expect": {"permitted": True, "trial": True, "transition": tr("open", "half_open", "wait_elapsed", 1 + 5 * S)}},
              {"op": "acquire", "now": 1 + 5 * S, "expect": {"permitted": False, "state": "half_open"}},
              {"op": "result", "now": 2 + 5 * S, "permit": 0, "outcome": "success", "expect": {"transition": tr("half_open", "closed", "trials_passed", 2 + 5 * S)}}]},
         {"name": "a failed probe breaks again for the break duration", "source": "CircuitStateController.OnActionFailureAsync (HalfOpen → OpenCircuit)",
          "config": dict(PB, minimum_throughput=2, failure_ratio=0.5), "steps": calls(2, "failure") + [
              {"op": "acquire", "now": 5 * S + 1}, {"op": "result", "now": 5 * S + 2, "permit": 0, "outcome": "failure", "expect": {"transition": tr("half_open", "open", "trials_failed", 5 * S + 2)}},
              {"op": "acquire", "now": 10 * S + 1, "expect": {"permitted": False, "retry_after": 1}}, {"op": "acquire", "now": 10 * S + 2, "expect": {"permitted": True}}]},
         {"name": "failures older than the sampling duration leave the windows", "source": "RollingHealthMetrics.UpdateCurrentWindow (windows dropped when now − StartedAt ≥ SamplingDuration)",
          "config": dict(PB, minimum_throughput=3, failure_ratio=0.5, sampling_duration="1s"), "steps": calls(2, "failure") + [
              {"op": "call", "now": S, "outcome": "failure", "expect": {"transition": None}}, {"op": "state", "expect": {"calls": 1, "failures": 1}}]},
         {"name": "windows start at the first event after a window's length", "source": "RollingHealthMetrics: a new window when now − current.StartedAt ≥ window (sampling / 10)",
          "config": dict(PB, minimum_throughput=4, failure_ratio=1.0, sampling_duration="1s"), "steps": [
              {"op": "call", "now": 0, "outcome": "failure"}, {"op": "call", "now": 150 * MS, "outcome": "failure"}, {"op": "call", "now": 950 * MS, "outcome": "failure"},
              {"op": "call", "now": 1000 * MS, "outcome": "failure", "expect": {"transition": None}}, {"op": "state", "expect": {"calls": 3}},
              {"op": "call", "now": 1100 * MS, "outcome": "failure", "expect": {"transition": tr("closed", "open", "failure_rate", 1100 * MS)}}]},
         {"name": "a short sampling duration uses one window", "source": "HealthMetrics.Create: below 200 ms, SingleHealthMetrics",
          "config": dict(PB, minimum_throughput=2, failure_ratio=1.0, sampling_duration="100ms"), "steps": [
              {"op": "call", "now": 0, "outcome": "failure"}, {"op": "call", "now": 100 * MS, "outcome": "failure", "expect": {"transition": None}},
              {"op": "state", "expect": {"calls": 1}}, {"op": "call", "now": 150 * MS, "outcome": "failure", "expect": {"transition": tr("closed", "open", "failure_rate", 150 * MS)}}]},
         {"name": "defaults: failure ratio 0.1, throughput 100, 30 s, break 5 s", "source": "Polly CircuitBreakerConstants",
          "config": PB, "steps": calls(90, "success") + calls(10, "failure", 90) + [{"op": "acquire", "now": 100, "expect": {"permitted": False, "retry_after": 5 * S - 1}}]},
         {"name": "config error: failure ratio 0", "source": "Polly option validation", "config": dict(PB, failure_ratio=0), "error": "out_of_range"},
         {"name": "config error: throughput 1", "source": "Polly CircuitBreakerConstants.MinimumValidThroughput = 2", "config": dict(PB, minimum_throughput=1), "error": "out_of_range"},
     ])

# ------------------------------------------------------------------ resilience4j
R4J = "resilience4j-core io/github/resilience4j/core/IntervalFunction.java"
R4J_RETRY = "resilience4j-retry io/github/resilience4j/retry/RetryConfig.java (DEFAULT_MAX_ATTEMPTS 3, DEFAULT_WAIT_DURATION 500, DEFAULT_INTERVAL_FUNCTION = numOfAttempts -> DEFAULT_WAIT_DURATION)"
file("resilience4j-delays.json", "delay_replay",
     "resilience4j: IntervalFunction.ofExponential(Random)Backoff — 1-based attempt, truncation to whole ms at each step, randomize min + r·(max − min + 1) truncated and at least 1, the cap after the randomization.",
     [
         {"name": "ofExponentialBackoff(500, 1.5)", "source": f"{R4J} ofExponentialBackoff (hand-computed, per-step (long) truncation)",
          "policy": p("resilience4j", jitter="none", max_attempts=10), "draws": [0.5] * 9, "expect": [x * MS for x in [500, 750, 1125, 1687, 2530, 3795, 5692, 8538, 12807]]},
         {"name": "ofExponentialBackoff(100, 1.5)", "source": f"{R4J} IntervalFunctionTest.generatesExponentialIntervals (strictly increasing); values hand-computed",
          "policy": p("resilience4j", initial="100ms", jitter="none", max_attempts=10), "draws": [0.5] * 9, "expect": [x * MS for x in [100, 150, 225, 337, 505, 757, 1135, 1702, 2553]]},
         {"name": "per-step truncation is observable: ofExponentialBackoff(333, 1.5)", "source": "hand-computed (docs/profiles-research.md §4.2)",
          "policy": p("resilience4j", initial="333ms", jitter="none", max_attempts=8), "draws": [0.5] * 7, "expect": [x * MS for x in [333, 499, 748, 1122, 1683, 2524, 3786]]},
         {"name": "ofExponentialBackoff(100, 2, 100 000) reaches the cap at attempt 12", "source": f"{R4J}Test.generatesCappedExponentialIntervals",
          "policy": p("resilience4j", initial="100ms", multiplier=2, max_delay="100s", jitter="none", max_attempts=14), "draws": [0.5] * 13,
          "expect": [min(100 * 2**i, 100000) * MS for i in range(13)]},
         {"name": "ofExponentialRandomBackoff(500, 1.5, 0.5), r = 0.5", "source": f"{R4J} randomize (hand-computed)",
          "policy": p("resilience4j", max_attempts=6), "draws": [0.5] * 5, "expect": [x * MS for x in [500, 750, 1125, 1687, 2530]]},
         {"name": "ofExponentialRandomBackoff(500, 1.5, 0.5), r = 0.999999 (the +1)", "source": f"{R4J} randomize with the +1 (hand-computed)",
          "policy": p("resilience4j", max_attempts=6), "draws": [0.999999] * 5, "expect": [x * MS for x in [750, 1125, 1688, 2531, 3795]]},
         {"name": "cap after the randomization: (1000, 2, 0.5, max 3000), r = 0.999999", "source": f"{R4J} ofExponentialRandomBackoff with maxInterval (hand-computed)",
          "policy": p("resilience4j", initial="1s", multiplier=2, max_delay="3s", max_attempts=5), "draws": [0.999999] * 4, "expect": [1500 * MS, 3000 * MS, 3000 * MS, 3000 * MS]},
         {"name": "randomize never returns less than 1 ms", "source": "docs/profiles.md (resilience4j) max(1, ·); resilience4j PR #2152 'always returns a number greater than 1.0'",
          "policy": p("resilience4j", initial="1ms", multiplier=2, max_attempts=2), "draws": [0.2], "expect": [1 * MS]},
         {"name": "RetryConfig's default wait: a fixed 500 ms, 3 attempts (multiplier 1, no jitter)", "source": R4J_RETRY,
          "policy": p("resilience4j", multiplier=1, jitter="none"), "draws": [0.5] * 2, "expect": [500 * MS] * 2},
         *[{"name": f"ofRandomized(500, 0.5) as multiplier 1, r = {r}", "source": f"{R4J} ofRandomized: randomize(interval, factor) at every attempt; DEFAULT_RANDOMIZATION_FACTOR 0.5 (hand-computed: (long)(250 + r · 501))",
            "policy": p("resilience4j", multiplier=1, max_attempts=5), "draws": [r] * 4, "expect": [d * MS] * 4}
           for r, d in [(0.0, 250), (0.25, 375), (0.5, 500), (0.999999, 750)]],
         {"name": "config error: resilience4j randomizes symmetrically", "source": "docs/profiles.md", "policy": p("resilience4j", jitter="full"), "draws": [0.5], "error": "invalid_combination"},
     ])

# ------------------------------------------------------------------ finagle
FIN = "twitter/finagle finagle-core/src/test/scala/com/twitter/finagle/service/RetryBudgetTest.scala"


def finagle_retries(p_, mn, ttl_s, n):
    dep = 0 if p_ == 0 else 1000
    wd = 1 if p_ == 0 else int(1000.0 / p_)
    reserve = mn * ttl_s * wd
    count = reserve
    ok = 0
    for _ in range(n):
        count += dep
        if count >= wd:
            count -= wd
            ok += 1
    return ok


fcases = []
for pct in (0.1, 0.5, 0.25, 0.75, 0.99, 0.999, 0.9999, 0.01, 0.001, 0.0001):
    want = finagle_retries(pct, 0, 60, 10000)
    assert abs(want - int(10000 * pct)) <= 1
    fcases.append({"name": f"10 000 requests, {pct} may retry (ttl 60 s, min 0)", "source": f"{FIN} testBudget(60.seconds, 0, {pct}): retried = (10000·p).toInt ± 1; exact count by Finagle's integer arithmetic",
                   "config": {"kind": "finagle", "ttl": "60s", "min_retries_per_second": 0, "percent_can_retry": pct},
                   "steps": [{"op": "deposit_retry", "now": 0, "times": 10000, "expect": {"allowed": want}}]})
for ttl, mn, pct in ((1, 10, 0.0), (2, 5, 0.0), (1, 10, 0.1), (2, 5, 0.5)):
    want = finagle_retries(pct, mn, ttl, 10000)
    fcases.append({"name": f"reserve of {mn}/s over {ttl} s, {pct}", "source": f"{FIN} testBudget({ttl}.seconds, {mn}, {pct})",
                   "config": {"kind": "finagle", "ttl": f"{ttl}s", "min_retries_per_second": mn, "percent_can_retry": pct},
                   "steps": [{"op": "level", "now": 0, "expect": {"balance": ttl * mn}}, {"op": "deposit_retry", "now": 0, "times": 10000, "expect": {"allowed": want}}]})
fcases += [
    {"name": "percent over 1.0: 10 000 deposits give a balance of 20 000", "source": f"{FIN} 'apply minRetries=0 maxPercentOver greater than 1.0'",
     "config": {"kind": "finagle", "ttl": "60s", "min_retries_per_second": 0, "percent_can_retry": 2.0},
     "steps": [{"op": "start", "now": 0, "times": 10000}, {"op": "level", "now": 0, "expect": {"balance": 20000}}]},
    {"name": "defaults: 100 requests allow 120 retries (100 reserve + 20 %)", "source": "hand-computed from RetryBudget.apply() (docs/profiles-research.md §5.2)",
     "config": {"kind": "finagle"}, "steps": [{"op": "start", "now": 0, "times": 100}, {"op": "retry", "now": 0, "times": 120, "expect": {"allowed": True}},
                                             {"op": "retry", "now": 0, "expect": {"allowed": False, "reason": "insufficient_tokens"}}]},
    {"name": "0.3 withdraws trunc(1000/0.3) = 3333 (not tower's 3)", "source": "RetryBudget.scala withdrawalAmount; tower tps_budget.rs truncation bug",
     "config": {"kind": "finagle", "min_retries_per_second": 0, "percent_can_retry": 0.3},
     "steps": [{"op": "start", "now": 0, "times": 10}, {"op": "level", "now": 0, "expect": {"tokens": 10000, "balance": 3}}]},
    {"name": "deposits expire after the ttl", "source": "twitter/util WindowedAdder (10 slices)",
     "config": {"kind": "finagle", "ttl": "1s", "min_retries_per_second": 0, "percent_can_retry": 0.5},
     "steps": [{"op": "start", "now": 0, "times": 4}, {"op": "level", "now": 0, "expect": {"balance": 2}},
               {"op": "level", "now": 1100 * MS, "expect": {"balance": 0}}]},
    {"name": "config error: ttl 0", "source": f"{FIN} bounds (ttl 0 rejected)", "config": {"kind": "finagle", "ttl": "0s"}, "error": "out_of_range"},
    {"name": "config error: ttl 61 s", "source": f"{FIN} bounds (ttl 61 s rejected)", "config": {"kind": "finagle", "ttl": "61s"}, "error": "out_of_range"},
    {"name": "config error: negative minimum", "source": f"{FIN} bounds (minRetriesPerSec −1 rejected)", "config": {"kind": "finagle", "min_retries_per_second": -1}, "error": "out_of_range"},
    {"name": "config error: negative percent", "source": f"{FIN} bounds (percentCanRetry −1.0 rejected)", "config": {"kind": "finagle", "percent_can_retry": -1.0}, "error": "out_of_range"},
]
file("finagle-budget.json", "budget",
     "finagle: Finagle's RetryBudget — deposits of 1000 per request, withdrawals of trunc(1000/percent), a reserve of min·ttl·withdrawal, over twitter-util's WindowedAdder; time frozen as in Finagle's tests.",
     fcases)

# ------------------------------------------------------------------ tenacity / stamina
TEN = "jd/tenacity tenacity/wait.py"


def ten_exp_jitter(initial, mx, exp_base, jitter, r, n, mn=0.0):
    out = []
    for a in range(1, n + 1):
        j = 0 + (jitter - 0) * r  # random.uniform(0, jitter)
        try:
            result = initial * exp_base ** (a - 1) + j
        except OverflowError:
            result = mx
        out.append(round(max(max(0, mn), min(result, mx)) * 1e9))
    return out


def ten_exp(mult, mx, exp_base, n, mn=0.0):
    return [round(max(max(0, mn), min(mult * exp_base ** (a - 1), mx)) * 1e9) for a in range(1, n + 1)]


def ten_random_exp(mult, mx, r, n, mn=0.0):
    out = []
    for a in range(1, n + 1):
        high = max(max(0, mn), min(mult * 2.0 ** (a - 1), mx))
        out.append(round((mn + (high - mn) * r) * 1e9))
    return out


tcases = [
    {"name": f"wait_exponential_jitter(max=60), r = {r}", "source": f"{TEN} wait_exponential_jitter; tests test_wait_exponential_jitter (attempt n in [2^(n−1), 2^(n−1)+1], then 60)",
     "policy": p("tenacity", max_delay="60s", max_attempts=10), "draws": [r] * 9, "expect": ten_exp_jitter(1.0, 60.0, 2.0, 1.0, r, 9)}
    for r in (0.0, 0.5, 0.999)
] + [
    {"name": "wait_exponential(max=40)", "source": "jd/tenacity tests/test_tenacity.py test_exponential_with_max_wait",
     "policy": p("tenacity", jitter="none", max_delay="40s", max_attempts=10), "draws": [0.5] * 9, "expect": ten_exp(1.0, 40.0, 2.0, 9)},
    {"name": "wait_exponential(min=20)", "source": "jd/tenacity tests/test_tenacity.py test_exponential_with_min_wait",
     "policy": p("tenacity", jitter="none", min_delay="20s", max_attempts=9), "draws": [0.5] * 8, "expect": ten_exp(1.0, float(2**64 - 1) / 1e9, 2.0, 8, 20.0)},
    {"name": "wait_exponential(min=20, multiplier=2)", "source": "jd/tenacity tests/test_tenacity.py test_exponential_with_min_wait_and_multiplier",
     "policy": p("tenacity", jitter="none", initial="2s", min_delay="20s", max_attempts=9), "draws": [0.5] * 8, "expect": ten_exp(2.0, float(2**64 - 1) / 1e9, 2.0, 8, 20.0)},
    {"name": "wait_exponential(min=10, max=100)", "source": "jd/tenacity tests/test_tenacity.py test_exponential_with_min_wait_and_max_wait",
     "policy": p("tenacity", jitter="none", min_delay="10s", max_delay="100s", max_attempts=10), "draws": [0.5] * 9, "expect": ten_exp(1.0, 100.0, 2.0, 9, 10.0)},
    {"name": "wait_random_exponential(0.5, 60), r = 0.5", "source": "jd/tenacity tests/test_tenacity.py test_wait_random_exponential (ranges); values hand-computed",
     "policy": p("tenacity", jitter="full", initial="0.5s", max_delay="60s", max_attempts=10), "draws": [0.5] * 9, "expect": ten_random_exp(0.5, 60.0, 0.5, 9)},
    {"name": "wait_exponential_jitter(10, 5): capped after the jitter", "source": "tenacity tests test_wait_exponential_jitter (wait_exponential_jitter(10, 5) attempt 1 == 5)",
     "policy": p("tenacity", initial="5s", max_delay="5s", max_attempts=2), "draws": [0.7], "expect": [5 * S]},
]
file("tenacity-delays.json", "delay_replay",
     "tenacity: wait_exponential_jitter (additive jitter), wait_random_exponential (full jitter), wait_exponential (no jitter) in float seconds, CPython's order, cap after the jitter; expectations computed here with tenacity's own arithmetic.",
     tcases)
NO_CAP = "18446744073709551.615us"  # u64::MAX ns, "no cap", in its shortest exact unit
BOTO_STD = "boto/botocore botocore/retries/standard.py"
AWS_STD_BUCKET = {"kind": "token_bucket", "name": "token_bucket", "capacity": 500, "retry_cost": 5, "timeout_cost": 10, "throttling_cost": 5, "success_increment": 1}
AWS_2026_BUCKET = {"kind": "token_bucket", "name": "token_bucket", "capacity": 500, "retry_cost": 14, "timeout_cost": 14, "throttling_cost": 5, "success_increment": 1}
R4J_RETRY_PRED = "resilience4j-retry io/github/resilience4j/retry/RetryConfig.java DEFAULT_RECORD_FAILURE_PREDICATE = throwable -> true"
ENVOY_MAX_RETRIES = "envoy api config/cluster/v3/circuit_breaker.proto CircuitBreakers.Thresholds.max_retries ('The maximum number of parallel retries … If not specified, the default is 3')"
ENVOY_MAX_RETRIES_BUDGET = {"kind": "concurrency", "ratio": 0, "min_concurrency": 3}
NORM = {"version": 1, "backoff": "exponential", "honor_retry_after": True, "max_retry_after": "1m", "cap_retry_after": False, "multiplier": 2.0}
STA = "hynek/stamina src/stamina/_core.py (retry → tenacity wait_exponential_jitter(initial=0.1, max=5.0, exp_base=2.0, jitter=1.0))"
file("stamina-delays.json", "delay_replay",
     "stamina: its defaults over tenacity's wait_exponential_jitter — min(0.1·2^(n−1) + 1.0·r, 5.0) s; 10 attempts, 45 s.",
     [{"name": f"defaults, r = {r}", "source": STA, "policy": p("stamina"), "draws": [r] * 9, "expect": ten_exp_jitter(0.1, 5.0, 2.0, 1.0, r, 9)} for r in (0.0, 0.5, 0.999)]
     + [{"name": "wait_max 1 s, wait_jitter 0.25 s", "source": STA, "policy": p("stamina", max_delay="1s", jitter={"kind": "additive", "amount": "250ms"}), "draws": [0.4] * 5,
         "expect": ten_exp_jitter(0.1, 1.0, 2.0, 0.25, 0.4, 5)}])
file("stamina-policy.json", "policy",
     "stamina and other profiles' defaults, normalized.",
     [
         {"name": "stamina defaults", "source": STA, "document": {"profile": "stamina"},
          "expect": {"version": 1, "profile": "stamina", "max_attempts": 10, "deadline": "45s", "backoff": "exponential", "initial": "100ms", "max_delay": "5s", "multiplier": 2.0,
                     "jitter": {"kind": "additive", "amount": "1s"}, "honor_retry_after": True, "max_retry_after": "1m", "cap_retry_after": False}},
         {"name": "grpc caps max_attempts at 5", "source": "gRFC A6 Limits", "document": {"profile": "grpc", "max_attempts": 9},
          "expect": dict(NORM, profile="grpc", max_attempts=5, initial="100ms", max_delay="20s", jitter={"kind": "symmetric", "factor": 0.2})},
         {"name": "envoy defaults", "source": "envoy RetryStateImpl (base 25 ms, max 10 × base), num_retries 1, budget 20 % / min 3", "document": {"profile": "envoy"},
          "expect": dict(NORM, profile="envoy", max_attempts=2, initial="25ms", max_delay="250ms", jitter="full",
                         budgets=[{"kind": "concurrency", "name": "concurrency", "ratio": 0.2, "min_concurrency": 3}])},
         {"name": "aws-standard-2026 is aws-2026", "source": "issue 9 name", "document": {"profile": "aws-standard-2026"},
          "expect": dict(NORM, profile="aws-2026", max_attempts=3, initial="50ms", max_delay="20s", jitter="full",
                         budgets=[{"kind": "token_bucket", "name": "token_bucket", "capacity": 500, "retry_cost": 14, "timeout_cost": 14, "throttling_cost": 5, "success_increment": 1}])},
         {"name": "an unknown profile", "source": "docs/profiles.md", "document": {"profile": "hystrix"}, "error": "invalid_value", "error_field": "profile"},
         {"name": "resilience4j defaults", "source": f"{R4J} DEFAULT_INITIAL_INTERVAL 500, DEFAULT_MULTIPLIER 1.5, DEFAULT_RANDOMIZATION_FACTOR 0.5, no maxInterval; {R4J_RETRY}",
          "document": {"profile": "resilience4j"},
          "expect": dict(NORM, profile="resilience4j", max_attempts=3, initial="500ms", multiplier=1.5, max_delay=NO_CAP, jitter={"kind": "symmetric", "factor": 0.5})},
         {"name": "resilience4j: RetryConfig's fixed 500 ms", "source": R4J_RETRY, "document": {"profile": "resilience4j", "multiplier": 1, "jitter": "none"},
          "expect": dict(NORM, profile="resilience4j", max_attempts=3, initial="500ms", multiplier=1.0, max_delay=NO_CAP, jitter="none")},
         {"name": "resilience4j: ofRandomized(500 ms, 0.5)", "source": f"{R4J} ofRandomized(interval, randomizationFactor)", "document": {"profile": "resilience4j", "multiplier": 1},
          "expect": dict(NORM, profile="resilience4j", max_attempts=3, initial="500ms", multiplier=1.0, max_delay=NO_CAP, jitter={"kind": "symmetric", "factor": 0.5})},
         {"name": "polly defaults", "source": POLLY_DEFAULTS, "document": {"profile": "polly"},
          "expect": {k: v for k, v in dict(NORM, profile="polly", max_attempts=4, backoff="constant", initial="2s", max_delay=NO_CAP, jitter="none").items() if k != "multiplier"}},
         {"name": "aws-standard defaults", "source": f"{BOTO_STD} (DEFAULT_MAX_ATTEMPTS 3, _MAX_BACKOFF 20, random() · 2^(n−1)); botocore/retries/quota.py and standard.py RetryQuotaChecker (500, 5, 10, +1)",
          "document": {"profile": "aws-standard"},
          "expect": dict(NORM, profile="aws-standard", max_attempts=3, initial="1s", max_delay="20s", jitter="full", budgets=[AWS_STD_BUCKET])},
         {"name": "aws-2026 defaults", "source": "smithy-lang/smithy-typescript packages/util-retry/src/retries-2026-config.ts (delay 50 ms, throttling 1000 ms, cost 14, throttling cost 5); DefaultRetryBackoffStrategy (20 s cap)",
          "document": {"profile": "aws-2026"},
          "expect": dict(NORM, profile="aws-2026", max_attempts=3, initial="50ms", max_delay="20s", jitter="full", budgets=[AWS_2026_BUCKET])},
         {"name": "finagle defaults: RetryBudget() over retrycore's backoff", "source": "twitter/finagle finagle-core/src/main/scala/com/twitter/finagle/service/RetryBudget.scala apply(): apply(DefaultTtl = 10.seconds, 10, 0.2)",
          "document": {"profile": "finagle"},
          "expect": dict(NORM, profile="finagle", max_attempts=3, initial="100ms", max_delay="20s", jitter="full",
                         budgets=[{"kind": "finagle", "name": "finagle", "ttl": "10s", "min_retries_per_second": 10, "percent_can_retry": 0.2}])},
         {"name": "botocore legacy mode: no quota survives normalization (budgets: [])", "source": f"{LEGACY}: 5 attempts, no max backoff, no retry quota",
          "document": LEGACY_DOC,
          "expect": dict(NORM, profile="aws-standard", max_attempts=5, initial="1s", max_delay=NO_CAP, jitter="full", budgets=[])},
         {"name": "DynamoDB under aws-2026 (botocore 2.1)", "source": f"{BOTO21} TestServiceSpecificRetries.test_dynamodb_base_backoff_and_increased_retries (base 0.025 s, max_attempts 4)",
          "document": DYNAMODB_DOC,
          "expect": dict(NORM, profile="aws-2026", max_attempts=4, initial="25ms", max_delay="20s", jitter="full", budgets=[AWS_2026_BUCKET])},
         {"name": "envoy: the cluster's max_retries (3) as a concurrency budget", "source": ENVOY_MAX_RETRIES,
          "document": {"profile": "envoy", "budgets": [ENVOY_MAX_RETRIES_BUDGET]},
          "expect": dict(NORM, profile="envoy", max_attempts=2, initial="25ms", max_delay="250ms", jitter="full",
                         budgets=[{"kind": "concurrency", "name": "concurrency", "ratio": 0.0, "min_concurrency": 3}])},
         {"name": "a classification rule without matchers (resilience4j's retry-everything default)", "source": f"{R4J_RETRY_PRED}; docs/classification-rules.md (a rule without matchers matches every failure)",
          "document": {"classification": {"rules": [{"retry": "always"}]}},
          "expect": dict(NORM, max_attempts=3, initial="100ms", max_delay="20s", jitter="full", classification={"defaults": True, "rules": [{"retry": "always"}]})},
         {"name": "a document value wins over the profile's", "source": "docs/profiles.md", "document": {"profile": "aws-standard", "max_attempts": 5},
          "expect": dict(NORM, profile="aws-standard", max_attempts=5, initial="1s", max_delay="20s", jitter="full",
                         budgets=[{"kind": "token_bucket", "name": "token_bucket", "capacity": 500, "retry_cost": 5, "timeout_cost": 10, "throttling_cost": 5, "success_increment": 1}])},
     ])

# ------------------------------------------------------------------ envoy


def envoy(base, mx, r, n):
    out = []
    k, m = 1, base
    for i in range(1, n + 1):
        while k < i and m <= mx and k < 63:
            k += 1
            m = (2**k - 1) * base
        out.append(min(min(int(math.floor(r * m)), m - 1), mx) * MS)
    return out


file("envoy-delays.json", "delay_replay",
     "envoy: the documented fully jittered backoff floor(r·(2^n − 1)·base) ms, growth stopping after the first range past max, capped at max (envoy docs; source/common/common/backoff_strategy.cc JitteredBackOffStrategy as of 18a4509c). Current Envoy caps the interval before jitter instead (see docs/profiles.md).",
     [{"name": f"base 25 ms, max 250 ms, r = {r}", "source": "envoy router docs '[0, (2^N−1)·B)': 0-24, 0-74, 0-174 ms …; hand-computed", "policy": p("envoy", max_attempts=7),
       "draws": [r] * 6, "expect": envoy(25, 250, r, 6)} for r in (0.0, 0.5, 0.999, 0.7)])

ENVOY_BUDGET = "envoy api config/cluster/v3/circuit_breaker.proto CircuitBreakers.Thresholds.RetryBudget (budget_percent default 20 %, min_retry_concurrency default 3)"
file("envoy-budget.json", "budget",
     "envoy: the cluster's retry limits as the concurrency budget — the profile's retry budget (20 % of active requests, at least 3) and the max_retries circuit breaker (3 retries in flight) written as ratio 0, min_concurrency 3.",
     [
         {"name": "max_retries 3: a fourth retry in flight is refused however many calls are active", "source": ENVOY_MAX_RETRIES, "config": ENVOY_MAX_RETRIES_BUDGET,
          "steps": [{"op": "start", "times": 100}, {"op": "retry", "times": 3, "expect": {"allowed": True, "slot": True}},
                    {"op": "retry", "expect": {"allowed": False, "reason": "too_many_retries_in_flight"}}, {"op": "level", "expect": {"calls": 100, "retries": 3}}]},
         {"name": "max_retries 3: a finished retry frees its place", "source": ENVOY_MAX_RETRIES, "config": ENVOY_MAX_RETRIES_BUDGET,
          "steps": [{"op": "start", "times": 10}, {"op": "retry", "times": 3}, {"op": "retry", "expect": {"allowed": False}},
                    {"op": "end", "holds_slot": True}, {"op": "retry", "expect": {"allowed": True, "slot": True}}, {"op": "level", "expect": {"calls": 9, "retries": 3}}]},
         {"name": "the profile's retry budget: 20 of 100 active requests", "source": ENVOY_BUDGET, "config": {"kind": "concurrency", "ratio": 0.2, "min_concurrency": 3},
          "steps": [{"op": "start", "times": 100}, {"op": "retry", "times": 20, "expect": {"allowed": True}},
                    {"op": "retry", "expect": {"allowed": False, "reason": "too_many_retries_in_flight"}}]},
     ])



def sched(lows, mids, highs):
    rows, cum = [], 0
    for i, (lo, mid, hi) in enumerate(zip(lows, mids, highs)):
        cum += hi
        rows.append({"retry": i + 1, "attempt": i + 2, "low": lo, "mid": mid, "high": hi, "cumulative_high": cum})
    return {"rows": rows, "worst_case": cum}


file("anchor-schedules.json", "schedule",
     "Schedules (r at 0, 0.5, 1) of profile defaults and documented reproductions whose defaults show only in behaviour: the number of retries and each delay's range.",
     [
         {"name": "resilience4j RetryConfig default: 3 attempts, a fixed 500 ms", "source": R4J_RETRY,
          "policy": p("resilience4j", multiplier=1, jitter="none"), "expect": sched([500 * MS] * 2, [500 * MS] * 2, [500 * MS] * 2)},
         {"name": "polly defaults: 3 retries of a constant 2 s", "source": POLLY_DEFAULTS,
          "policy": p("polly"), "expect": sched([2 * S] * 3, [2 * S] * 3, [2 * S] * 3)},
         {"name": "botocore legacy mode: 4 retries below 1, 2, 4, 8 s (15 s at worst)", "source": LEGACY,
          "policy": LEGACY_DOC, "expect": sched([0] * 4, [S // 2, S, 2 * S, 4 * S], [S, 2 * S, 4 * S, 8 * S])},
         {"name": "DynamoDB under aws-2026: 3 retries below 25, 50, 100 ms (whole ms)", "source": f"{BOTO21} TestServiceSpecificRetries.test_dynamodb_base_backoff_and_increased_retries; floor(r · t) ms",
          "policy": DYNAMODB_DOC, "expect": sched([0] * 3, [12 * MS, 25 * MS, 50 * MS], [25 * MS, 50 * MS, 100 * MS])},
     ])


def main():
    check = "--check" in sys.argv
    stale = []
    for name, doc in FILES.items():
        text = json.dumps(doc, indent=1, ensure_ascii=False) + "\n"
        path = OUT / name
        if check:
            if not path.exists() or path.read_text() != text:
                stale.append(name)
        else:
            OUT.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    if stale:
        print("profile vectors drifted from tests/vectors/gen/profiles.py: " + ", ".join(stale), file=sys.stderr)
        sys.exit(1)
    print("profile vectors: " + ("match their generator" if check else f"{sum(len(d['cases']) for d in FILES.values())} cases written"))


if __name__ == "__main__":
    main()

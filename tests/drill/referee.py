"""The fault drill's referee: checks what each client reports against what the
server saw, and counts. One definition of the invariants for every runtime
(the server answers ``POST /verdict`` with it). See docs/drills.md.

A client reports, per operation: ``ok`` (bool), ``status`` (of a success),
``error`` (the class of what was raised), ``reason`` (a RetryError's reason, or
null when the error propagated as is), ``category`` (of the last failure) and
``retries`` (how many times its ``on_retry`` hook ran for the operation).
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Dict, List, Mapping, Optional

from plan import RESET_AFTER, RESET_BEFORE, TIMEOUT, UNAVAILABLE

NOTHING_RAN = {UNAVAILABLE, RESET_BEFORE}
AMBIGUOUS = {RESET_AFTER, TIMEOUT}  # something ran, the client cannot know


def failure_kind(entry: Mapping[str, Any]) -> Optional[str]:
    """What the client saw of one request, when it was a failure."""
    fault, result = str(entry["fault"]), entry["result"]
    if fault in (UNAVAILABLE, RESET_BEFORE, RESET_AFTER, TIMEOUT):
        return fault
    if result == "in_progress":
        return "409_in_progress"
    if result == "mismatch":
        return "422_mismatch"
    return None


def verdict(
    phase: str,
    ops: List[str],
    logs: Mapping[str, List[Dict[str, Any]]],
    executions: Mapping[str, int],
    outcomes: Mapping[str, Mapping[str, Any]],
    max_attempts: int,
) -> Dict[str, Any]:
    v: List[str] = []
    retried: Counter[str] = Counter()
    ended: Counter[str] = Counter()
    reasons: Counter[str] = Counter()
    results: Counter[str] = Counter()
    requests = hook_retries = succeeded = failed = honoured = 0
    missing = [op for op in ops if op not in outcomes]
    extra = [op for op in outcomes if op not in ops]
    if missing:
        v.append(f"lost: no client outcome for {missing}")
    if extra:
        v.append(f"unknown operations reported: {extra}")
    for op in ops:
        log = [e for e in logs.get(op, []) if not e.get("forced")]
        out = outcomes.get(op)
        n = len(log)
        requests += n
        ex = executions.get(op, 0)
        ran = sum(1 for e in log if e["result"] == "executed")
        results.update(e["result"] for e in log)
        for e, nxt in zip(log, log[1:]):
            k = failure_kind(e)
            if k is None:
                v.append(f"{op}: a request after a success: {log}")
            else:
                retried[k] += 1
            if k == "409_in_progress":
                # The client saw 409 + Retry-After: the next request waits at least that long.
                waited = nxt["at_ms"] - e["at_ms"]
                if waited < e["retry_after_ms"] - 1:
                    v.append(f"{op}: retried {waited} ms after a 409 with Retry-After {e['retry_after_ms']} ms")
                else:
                    honoured += 1
        if n == 0:
            v.append(f"{op}: never reached the server")
            continue
        last_kind = failure_kind(log[-1])
        if ex != ran:
            v.append(f"{op}: {ex} executions counted, {ran} requests executed")
        if ex > 1:
            v.append(f"{op}: DUPLICATED, executed {ex} times: {log}")
        if out is None:
            continue
        if out.get("retries") != n - 1:
            v.append(f"{op}: the client's on_retry ran {out.get('retries')} times for {n} requests")
        if out["ok"]:
            succeeded += 1
            if out.get("status") != 200:
                v.append(f"{op}: succeeded with status {out.get('status')}")
            if last_kind is not None:
                v.append(f"{op}: the client succeeded but the last request failed ({last_kind})")
            if ex != 1:
                v.append(f"{op}: succeeded but executed {ex} times")
        else:
            failed += 1
            reasons[f"{out.get('error')}:{out.get('reason') or 'propagated'}:{out.get('category')}"] += 1
            if last_kind is None:
                v.append(f"{op}: the client failed ({out}) but the last request succeeded")
            else:
                ended[last_kind] += 1
        if phase == "a":
            # Retried only after a failure where nothing ran and the category is
            # `always` (503 + Retry-After: overloaded). A reset before work is
            # connection_lost (if_idempotent): not retried for a POST either.
            for i, e in enumerate(log[:-1]):
                if e["fault"] != UNAVAILABLE:
                    v.append(f"{op}: request {i + 2} was sent after {failure_kind(e)}: a POST without a key was repeated")
            if not out["ok"]:
                if last_kind == UNAVAILABLE:
                    if out.get("reason") != "attempts_exhausted" or n != max_attempts:
                        v.append(f"{op}: {n} requests ending in 503 gave {out}")
                elif last_kind in AMBIGUOUS | {RESET_BEFORE}:
                    if out.get("reason") not in (None, "not_retryable"):
                        v.append(f"{op}: after {last_kind} the client gave {out}; expected not retried")
                    want = "timeout" if last_kind == TIMEOUT else "connection_lost"
                    if out.get("category") != want:
                        v.append(f"{op}: after {last_kind} the category was {out.get('category')}, expected {want}")
        else:
            # Retried through every fault; the key makes it exactly once.
            if not out["ok"]:
                if out.get("error") != "RetryError" or out.get("reason") not in ("attempts_exhausted", "deadline_exceeded"):
                    v.append(f"{op}: ended with {out}: expected success or a RetryError")
                if out.get("reason") == "attempts_exhausted" and n != max_attempts:
                    v.append(f"{op}: attempts_exhausted after {n} requests (max_attempts {max_attempts})")
        hook_retries += out.get("retries", 0)
    counts: Dict[str, Any] = {
        "phase": phase,
        "operations": len(ops),
        "requests": requests,
        "executions": sum(executions.get(op, 0) for op in ops),
        "succeeded": succeeded,
        "failed": failed,
        "retries": sum(retried.values()),
        "retries_by_fault": dict(sorted(retried.items())),
        "retry_after_409_honoured": honoured,
        "final_failure_by_fault": dict(sorted(ended.items())),
        "failed_by": dict(sorted(reasons.items())),
        "server_results": dict(sorted(results.items())),
    }
    if hook_retries != counts["retries"]:
        v.append(f"the clients' on_retry ran {hook_retries} times, the server saw {counts['retries']} repeated requests")
    return {"counts": counts, "violations": v}

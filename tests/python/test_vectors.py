"""Runs every shared vector file in tests/vectors/ through the Python binding.

A mirror of core/tests/vectors/*.rs: the same inputs, the same expectations,
compared by error `code` (and `field`), never by message. Durations and times
come in nanoseconds; the binding speaks float seconds, so a result `s` is
compared with an expected `ns` as `s == ns / 1e9`. A kind this runner does not
know fails, so a new kind cannot be skipped silently.
"""

from __future__ import annotations

import json
import os
import struct
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

import pytest

import _store_vectors
import retrycore
import retrycore.metrics
from retrycore import _native

# RETRYCORE_VECTORS points the runner at another directory (make parity).
ROOT = Path(os.environ.get("RETRYCORE_VECTORS") or Path(__file__).resolve().parents[2] / "tests" / "vectors")

# Keys whose values are durations or monotonic times (ns in vectors, seconds here).
DURATION_KEYS = {
    "delay", "backoff", "server_delay", "timeout", "retry_after", "at", "wait",
    "low", "mid", "high", "cumulative_low", "cumulative_high", "worst_case",
}


class Mismatch(AssertionError):
    pass


def as_int(v: Any) -> int:
    return int(v) if isinstance(v, str) else v


def ns_to_s(v: Any) -> Optional[float]:
    return None if v is None else as_int(v) / 1e9


def s_ns(v: Any) -> Optional[float]:
    """Nanoseconds (int or decimal string) as seconds for the binding's arguments."""
    return None if v is None else as_int(v) / 1e9


def same(got: Any, want: Any) -> bool:
    if isinstance(want, bool) or isinstance(got, bool):
        return type(got) is type(want) and got == want
    if isinstance(want, str) and isinstance(got, int) and want.isdigit():
        return got == int(want)
    if isinstance(want, (int, float)) and isinstance(got, (int, float)):
        return float(got) == float(want)
    return got == want


def subset(what: str, got: Any, want: Any, key: Optional[str] = None) -> None:
    if isinstance(want, dict):
        for k, w in want.items():
            g = got.get(k) if isinstance(got, dict) else None
            subset(f"{what}.{k}", g, w, k)
        return
    if key in DURATION_KEYS and want is not None and not isinstance(want, (dict, list, bool)):
        if got != ns_to_s(want):
            raise Mismatch(f"{what}: got {got!r} s, want {want} ns")
        return
    if not same(got, want):
        raise Mismatch(f"{what}: got {got!r}, want {want!r}")


def whole(what: str, got: Any, want: Any) -> None:
    """Compares JSON values exactly (as serde_json does: 2 and 2.0 differ)."""
    if json.dumps(got, sort_keys=True) != json.dumps(want, sort_keys=True):
        raise Mismatch(f"{what}: got {json.dumps(got, sort_keys=True)}, want {json.dumps(want, sort_keys=True)}")


def eq(what: str, got: Any, want: Any) -> None:
    if not same(got, want):
        raise Mismatch(f"{what}: got {got!r}, want {want!r}")


def outcome(case: Dict[str, Any], fn: Callable[[], Any], check: Callable[[Any, Any], None]) -> None:
    """Runs `fn`; compares an expected error code (and field), or the result with `check`."""
    code = case.get("error")
    try:
        got = fn()
    except retrycore.RetrycoreError as e:
        if code is None:
            raise Mismatch(f"unexpected error {e.code} ({e})") from e
        eq("error", e.code, code)
        if case.get("error_field") is not None:
            eq("error field", e.field, case["error_field"])
        return
    if code is not None:
        raise Mismatch(f"expected error {code}, got {got!r}")
    check(got, case.get("expect"))


def policy_doc(case: Dict[str, Any], key: str = "policy") -> Dict[str, Any]:
    return case.get(key) or {}


def native_policy(doc: Dict[str, Any]) -> _native.Policy:
    return _native.Policy.from_dict(doc, entropy=0)


# ---------------------------------------------------------------- retry kinds

def k_rng(case: Dict[str, Any]) -> None:
    g = retrycore.Random(as_int(case["seed"]))
    for i, w in enumerate(case.get("u64", [])):
        eq(f"u64[{i}]", g.next_u64(), as_int(w))
    for i, w in enumerate(case.get("f64", [])):
        got = g.random()
        if struct.pack(">d", got) != struct.pack(">d", float(w)):
            raise Mismatch(f"f64[{i}]: got {got!r}, want {w!r}")


def k_duration(case: Dict[str, Any]) -> None:
    outcome(case, lambda: retrycore.parse_duration(case["text"]), lambda g, w: eq("seconds", g, ns_to_s(w)))


def k_policy(case: Dict[str, Any]) -> None:
    def build() -> retrycore.RetryPolicy:
        if isinstance(case.get("text"), str):
            return retrycore.RetryPolicy.from_json(case["text"])
        return retrycore.RetryPolicy.from_dict(case.get("document") or {})

    def check(p: retrycore.RetryPolicy, want: Any) -> None:
        got = p.to_dict()
        if want is not None:
            whole("normalized", got, want)
        back = retrycore.RetryPolicy.from_dict(got).to_dict()
        whole("round trip", back, got)

    outcome(case, build, check)


def k_backoff(case: Dict[str, Any]) -> None:
    def run() -> float:
        p = native_policy(policy_doc(case))
        return p.delay(case["retry"], case["r"], s_ns(case.get("prev")))

    outcome(case, run, lambda g, w: eq("delay", g, ns_to_s(w)))


def k_delay_sequence(case: Dict[str, Any]) -> None:
    p = native_policy(policy_doc(case))
    want = case["expect"]
    got = p.sample_delays(as_int(case["seed"]), len(want))
    eq("delays", got, [ns_to_s(w) for w in want])


def k_delay_replay(case: Dict[str, Any]) -> None:
    def run() -> List[float]:
        return native_policy(policy_doc(case)).replay_delays(case["draws"])

    outcome(case, run, lambda g, w: eq("delays", g, [ns_to_s(x) for x in w]))


def k_schedule(case: Dict[str, Any]) -> None:
    p = native_policy(policy_doc(case))
    rows = [
        {"retry": r.retry, "attempt": r.attempt, "low": r.low, "mid": r.mid, "high": r.high, "cumulative_high": r.cumulative_high}
        for r in p.schedule()
    ]
    want = case["expect"]["rows"]
    # `row_count`, when given, is the length of the listing and `rows` its first rows only.
    eq("row count", len(rows), case["expect"].get("row_count", len(want)))
    for g, w in zip(rows, want):
        subset("row", g, w)
    subset("schedule", {"worst_case": p.worst_case()}, {"worst_case": case["expect"]["worst_case"]})


def failure_kwargs(f: Dict[str, Any]) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    keys = ("status", "grpc_code", "error_names", "method", "idempotent", "idempotency_key_sent", "wall_now_ms")
    for k in keys + ("message", "retryable", "should_retry", "verdict"):
        if f.get(k) is not None:
            out[k] = as_int(f[k]) if k == "wall_now_ms" else f[k]
    if f.get("headers") is not None:
        out["headers"] = [tuple(h) for h in f["headers"]]
    if f.get("elapsed") is not None:
        out["elapsed"] = s_ns(f["elapsed"])
    return out


def k_classify(case: Dict[str, Any]) -> None:
    policy = retrycore.RetryPolicy._wrap(native_policy(case["policy"])) if case.get("policy") else None
    v = retrycore.classify(policy=policy, **failure_kwargs(case["failure"]))
    got = {
        "category": v.category,
        "retry": v.retry,
        "safe": v.safe,
        "retryable": v.retryable,
        "server_declined": v.server_declined,
        "server_delay": v.server_delay,
        "refused": v.refused,
    }
    subset("verdict", got, case.get("expect") or {})


def k_retry_after(case: Dict[str, Any]) -> None:
    wall = case.get("wall_now_ms")
    a = retrycore.server_advice([tuple(h) for h in case.get("headers") or []], None if wall is None else as_int(wall))
    got = {
        "delay": a.delay,
        "source": a.source,
        "declined": a.declined,
        "should_retry": a.should_retry,
        "retry_exhausted": a.retry_exhausted,
    }
    subset("advice", got, case.get("expect") or {})


def k_http_date(case: Dict[str, Any]) -> None:
    eq("unix seconds", retrycore.parse_http_date(case["value"], as_int(case["wall_now_ms"])), case.get("expect"))


def transition(t: Any) -> Any:
    if t is None:
        return None
    return {"from": t.from_state, "to": t.to_state, "reason": t.reason, "at": t.at}


def k_session(case: Dict[str, Any]) -> None:
    policy = native_policy(policy_doc(case))
    sessions: Dict[str, Any] = {}
    for i, step in enumerate(case["steps"]):
        op = step["op"]
        sid = step.get("s", "main")
        now = s_ns(step.get("now", 0))
        want = step.get("expect")
        if op == "start" or (sid not in sessions and op not in ("counters", "breaker", "budget")):
            o = step if op == "start" else (case.get("session") or {})
            sessions[sid] = policy.session(
                key=o.get("key") or "vector-key",
                seed=as_int(o["seed"]) if o.get("seed") is not None else None,
                idempotent=o.get("idempotent"),
                idempotency_key_sent=o.get("idempotency_key_sent"),
                method=o.get("method"),
                draws=o.get("draws"),
            )
            if op == "start":
                continue
        s = sessions.get(sid)
        got: Any
        try:
            if op == "before_attempt":
                g = s.before_attempt(now)
                if isinstance(g, retrycore.Proceed):
                    got = {"proceed": {"attempt": g.attempt, "max_attempts": g.max_attempts, "timeout": g.timeout,
                                       "wait": g.wait}}
                else:
                    lr = s.limiter_rejection or {}
                    got = {"reject": {"reason": g.reason, "retry_after": g.retry_after, "budget": g.budget,
                                      "limiter": lr.get("limiter"), "limiter_reason": lr.get("reason")}}
            elif op == "failure":
                d = s.on_failure(now=now, **failure_kwargs(step.get("failure") or {}))
                if isinstance(d, retrycore.Retry):
                    got = {"retry": {"retry": d.retry, "attempt": d.attempt, "delay": d.delay, "backoff": d.backoff,
                                     "server_delay": d.server_delay, "capped": d.capped, "category": d.category}}
                else:
                    got = {"give_up": {"reason": d.reason, "category": d.category, "exhausted": d.exhausted,
                                       "attempts": d.attempts, "budget": d.budget, "budget_reason": d.budget_reason}}
            elif op == "success":
                s.on_success(now, s_ns(step.get("elapsed")))
                got = {"ok": True}
            elif op == "cancel":
                s.cancel(now)
                got = {"ok": True}
            elif op == "drop":
                sessions.pop(sid).release()
                got = {"ok": True}
            elif op == "key":
                got = s.key
            elif op == "counters":
                got = policy.counters()
            elif op == "breaker":
                b = policy.breaker
                t = b.totals()
                got = {"state": b.state, "calls": t["calls"], "failures": t["failures"]}
            elif op == "budget":
                got = policy.budgets[step.get("index", 0)].level(now)
            else:
                raise Mismatch(f"step {i}: unknown op {op}")
        except retrycore.RetrycoreError as e:
            got = {"error": e.code}
        if want is not None:
            subset(f"step {i} ({op})", got, want)


def k_breaker(case: Dict[str, Any]) -> None:
    config = case.get("config") or {}
    try:
        b = _native.CircuitBreaker(config)
    except retrycore.RetrycoreError as e:
        if case.get("error") is None:
            raise Mismatch(f"unexpected error {e.code} ({e})") from e
        eq("error", e.code, case["error"])
        return
    if case.get("error") is not None:
        raise Mismatch(f"expected error {case['error']}")
    permits: List[Any] = []
    snaps: Dict[str, Any] = {}
    for i, step in enumerate(case["steps"]):
        op = step["op"]
        now = s_ns(step.get("now", 0))
        want = step.get("expect")
        if op == "acquire":
            a = b.try_acquire(now)
            if a.permitted:
                permits.append(a.permit)
                got = {"permitted": True, "trial": a.trial, "permit": len(permits) - 1}
            else:
                got = {"permitted": False, "state": a.state, "retry_after": a.retry_after}
            got["transition"] = transition(a.transition)
        elif op in ("result", "release"):
            p = permits[step["permit"]]
            if op == "result":
                t = b.record(p, step.get("outcome", "success"), now, s_ns(step.get("duration", 0)))
            else:
                t = b.release(p, now)
            got = {"transition": transition(t)}
        elif op == "call":
            a = b.try_acquire(now)
            if a.permitted:
                t2 = b.record(a.permit, step.get("outcome", "success"), now, s_ns(step.get("duration", 0)))
                got = {"permitted": True, "transition": transition(t2 or a.transition)}
            else:
                got = {"permitted": False, "state": a.state, "transition": transition(a.transition)}
        elif op == "state":
            t = b.totals()
            got = {"state": b.state, "calls": t["calls"], "failures": t["failures"], "slow": t["slow"]}
        elif op == "transition_to":
            try:
                got = {"transition": transition(b.transition_to(step["to"], now))}
            except retrycore.RetrycoreError as e:
                got = {"error": e.code}
        elif op == "reset":
            got = {"transition": transition(b.reset(now))}
        elif op == "snapshot":
            got = b.snapshot(now, as_int(step.get("wall_now_ms", 0)))
            snaps[step.get("save_as", "s")] = got
        elif op == "restore":
            snap = step.get("snapshot")
            snap = snaps[snap] if isinstance(snap, str) else snap
            try:
                nb = _native.CircuitBreaker(step["config"]) if step.get("config") is not None else _native.CircuitBreaker(config)
                nb.restore(snap, now, as_int(step.get("wall_now_ms", 0)))
                b = nb
                permits = []
                got = {"state": b.state}
            except retrycore.RetrycoreError as e:
                got = {"error": e.code}
        elif op == "metrics":
            got = b.state_metrics(now)
        elif op == "record":
            t = b.record_without_permit(step.get("outcome", "success"), now, s_ns(step.get("duration", 0)))
            got = {"transition": transition(t)}
        elif op in ("transition_to_open_for", "transition_to_open_until"):
            try:
                if op == "transition_to_open_for":
                    t = b.transition_to_open_for(s_ns(step["duration"]), now)
                else:
                    t = b.transition_to_open_until(s_ns(step["until"]), now)
                got = {"transition": transition(t)}
            except retrycore.RetrycoreError as e:
                got = {"error": e.code}
        elif op == "break_arguments":
            got = b.break_arguments(now)
        elif op == "set_break_duration":
            try:
                b.set_break_duration(s_ns(step["duration"]))
                got = {}
            except retrycore.RetrycoreError as e:
                got = {"error": e.code}
        else:
            raise Mismatch(f"step {i}: unknown op {op}")
        if want is not None:
            subset(f"step {i} ({op})", got, want)


def k_budget(case: Dict[str, Any]) -> None:
    try:
        b = _native.Budget(case.get("config") or {})
    except retrycore.RetrycoreError as e:
        if case.get("error") is None:
            raise Mismatch(f"unexpected error {e.code} ({e})") from e
        eq("error", e.code, case["error"])
        return
    if case.get("error") is not None:
        raise Mismatch(f"expected error {case['error']}")
    for i, step in enumerate(case["steps"]):
        op = step["op"]
        now = s_ns(step.get("now", 0))
        want = step.get("expect")
        cat = step.get("category") or "server_error"
        refused = step.get("refused", False)
        holds = step.get("holds_slot", False)
        got: Any = None
        for _ in range(step.get("times", 1)):
            if op == "start":
                b.on_operation_start(now)
                got = {"ok": True}
            elif op == "end":
                b.on_operation_end(holds)
                got = {"ok": True}
            elif op == "check":
                r = b.check(cat, now, refused, holds)
                got = {"allowed": True} if r is None else {"allowed": False, "reason": r.reason, "budget": r.budget}
            elif op == "withdraw":
                cost, slot = b.withdraw(cat, now, refused, holds)
                got = {"cost": cost, "slot": slot}
            elif op == "retry":
                r = b.check(cat, now, refused, holds)
                if r is None:
                    cost, slot = b.withdraw(cat, now, refused, holds)
                    got = {"allowed": True, "cost": cost, "slot": slot}
                else:
                    got = {"allowed": False, "reason": r.reason}
            elif op == "failure":
                b.on_failure(cat, now, step.get("counts", True), step.get("reached_backend", True),
                             step.get("declined_pushback", False), refused)
                got = {"ok": True}
            elif op == "success":
                b.on_success(now, step.get("cost"))
                got = {"ok": True}
            elif op == "before_attempt":
                r = b.before_attempt(now, step["r"])
                got = {"allowed": True} if r is None else {"allowed": False, "reason": r.reason}
            elif op == "level":
                got = b.level(now)
            elif op == "deposit_retry":
                # One operation starts, then its retry asks the budget (Finagle's test loop).
                b.on_operation_start(now)
                ok = b.check(cat, now, refused, holds) is None
                if ok:
                    b.withdraw(cat, now, refused, holds)
                got = {"allowed": (got or {}).get("allowed", 0) + int(ok)}
            else:
                raise Mismatch(f"step {i}: unknown op {op}")
        if want is not None:
            subset(f"step {i} ({op})", got, want)


def k_lint(case: Dict[str, Any]) -> None:
    policy = retrycore.RetryPolicy.from_dict(policy_doc(case))
    outcome(
        case,
        lambda: retrycore.lint(policy, case.get("service")),
        lambda g, w: eq("findings", sorted(f.code for f in g), sorted(w)),
    )


def k_metric_samples(case: Dict[str, Any]) -> None:
    doc = {k: case[k] for k in ("names", "events") if k in case}
    outcome(case, lambda: retrycore.metrics.samples(doc), lambda g, w: eq("samples", g, case["samples"]))


def k_alerts(case: Dict[str, Any]) -> None:
    d = case["document"]
    outcome(
        case,
        lambda: retrycore.alerts(d["before"], d["after"], d["interval"], d.get("thresholds")),
        lambda g, w: eq("evaluation", g, w),
    )


# ---------------------------------------------------------------- idempotency kinds

def expect_str(got: Any, want: Any) -> None:
    eq("result", got, want)


def k_key_validate(case: Dict[str, Any]) -> None:
    outcome(case, lambda: retrycore.validate_key(case["key"], case.get("max_len", 255)) or True,
            lambda g, w: eq("valid", g, w))


def k_key_derive(case: Dict[str, Any]) -> None:
    outcome(case, lambda: retrycore.derive_key(*case["parts"]), expect_str)


def k_key_scoped(case: Dict[str, Any]) -> None:
    outcome(case, lambda: retrycore.scoped_key(case["tenant"], case["key"]), expect_str)


def k_storage_key(case: Dict[str, Any]) -> None:
    outcome(case, lambda: retrycore.storage_key(case["key"], case["max_len"]), expect_str)


def k_key_mint(case: Dict[str, Any]) -> None:
    eq("key", retrycore.mint_key(bytes.fromhex(case["entropy_hex"])), case["expect"])


def k_header_parse(case: Dict[str, Any]) -> None:
    form = case.get("form", "sf_string")
    if form not in ("sf_string", "sf_string_or_token"):
        raise Mismatch(f"unknown form {form!r}")
    outcome(case, lambda: retrycore.parse_header(case["value"], allow_token=form == "sf_string_or_token"), expect_str)


def k_header_format(case: Dict[str, Any]) -> None:
    outcome(case, lambda: retrycore.format_header(case["key"]), expect_str)


def k_jcs(case: Dict[str, Any]) -> None:
    if isinstance(case.get("text"), str):
        outcome(case, lambda: retrycore.canonicalize_json(case["text"]), expect_str)
    else:
        outcome(case, lambda: retrycore.canonicalize(case["value"]), expect_str)


def k_jcs_number(case: Dict[str, Any]) -> None:
    (x,) = struct.unpack(">d", bytes.fromhex(case["bits"]))

    def run() -> str:
        a = retrycore.canonicalize(x)
        eq("format_number agrees", retrycore.format_number(x), a)
        return a

    outcome(case, run, expect_str)


def k_fingerprint(case: Dict[str, Any]) -> None:
    # Exactly the options the case gives: which go together is the core's rule.
    where: Dict[str, Any] = {"selected": case.get("selected")}
    where.update({k: case[k] for k in ("operation", "method", "path") if k in case})

    def run(canonical: bool) -> str:
        if isinstance(case.get("body_text"), str):
            return retrycore.fingerprint_json(case["body_text"], canonical=canonical, **where)
        return retrycore.fingerprint(case.get("body"), canonical=canonical, **where)

    def check(got: str, want: Any) -> None:
        if case.get("canonical") is not None:
            eq("canonical", run(True), case["canonical"])
        eq("fingerprint", got, want)

    outcome(case, lambda: run(False), check)


RECORD_CONFIG_KEYS = {"lease_ms", "retention_ms", "stripe", "failure_handling", "release_categories"}


def record_config(case: Dict[str, Any]) -> retrycore.RecordConfig:
    c = case.get("config") or {}
    unknown = set(c) - RECORD_CONFIG_KEYS
    if unknown:
        raise Mismatch(f"unknown config keys {sorted(unknown)}")
    d = retrycore.RecordConfig()
    return retrycore.RecordConfig(
        lease=c["lease_ms"] / 1000 if "lease_ms" in c else d.lease,
        retention=c["retention_ms"] / 1000 if "retention_ms" in c else d.retention,
        stripe=c.get("stripe", False),
        failure_handling=c.get("failure_handling"),
        release_categories=c.get("release_categories"),
    )


def http3(h: Any) -> Any:
    return None if h is None else {k: h.get(k) for k in ("status", "error_type", "title", "retry_after_s")}


def k_record_decide(case: Dict[str, Any]) -> None:
    cfg = record_config(case)
    if case.get("key") is None:
        d = dict(retrycore.decide(None, None, "", 0, cfg))
        d["http"] = http3(d["http"])
        whole("decision", d, case["expect"])
        return

    def run() -> Dict[str, Any]:
        d = dict(retrycore.decide(case.get("record"), case["key"], case["fingerprint"], as_int(case["now"]), cfg))
        d.pop("record", None)
        d["http"] = http3(d["http"])
        return d

    outcome(case, run, lambda g, w: whole("decision", g, w))


def k_record_complete(case: Dict[str, Any]) -> None:
    cfg = record_config(case)
    outcome(case, lambda: retrycore.complete(case["record"], as_int(case["fence"]), case["outcome"], as_int(case["now"]), cfg),
            lambda g, w: whole("record", g, w))


def k_record_renew(case: Dict[str, Any]) -> None:
    cfg = record_config(case)
    outcome(case, lambda: retrycore.renew_lease(case["record"], as_int(case["fence"]), as_int(case["now"]), cfg),
            lambda g, w: whole("record", g, w))


def k_dead_letter(case: Dict[str, Any]) -> None:
    ops = case.get("ops") or []
    for op in ops:
        if op not in ("mark_replayable", "mark_replayed", "discard"):
            raise Mismatch(f"unknown op {op!r}")

    def run() -> retrycore.DeadLetter:
        letter = retrycore.DeadLetter.from_dict(case["letter"])
        for op in ops:
            getattr(letter, op)()
        return letter

    def check(letter: retrycore.DeadLetter, want: Any) -> None:
        whole("letter", letter.to_dict(), want)
        whole("read back", retrycore.DeadLetter.from_json(letter.to_json()).to_dict(), letter.to_dict())

    outcome(case, run, check)


def k_rfc3339(case: Dict[str, Any]) -> None:
    if case.get("unix_ms") is not None:
        outcome(case, lambda: retrycore.format_rfc3339_ms(as_int(case["unix_ms"])), expect_str)
    else:
        outcome(case, lambda: retrycore.parse_rfc3339_ms(case["text"]), expect_str)


def k_execute(case: Dict[str, Any]) -> None:
    import _execute

    for mode in ("sync", "async", "call"):
        for n, (got, want) in enumerate(_execute.run(case, mode)):
            if got != want:
                raise Mismatch(f"{mode} call {n + 1}: got {got}, want {want}")


def k_retry_log(case: Dict[str, Any]) -> None:
    import _execute

    for mode in ("sync", "async", "call"):
        for n, (got, want) in enumerate(_execute.run(case, mode, log=True)):
            if got != want:
                raise Mismatch(f"{mode} call {n + 1}: got {got}, want {want}")


LIMITER_DURATIONS = ("wait", "max_wait", "retry_after")


def limiter_subset(what: str, got: Any, want: Any, tol: float) -> None:
    """`want` ⊆ `got`: durations in ns against seconds, floats within `tol` relative."""
    for k, w in want.items():
        g = got.get(k)
        if k in LIMITER_DURATIONS and w is not None:
            w = ns_to_s(w)
        if isinstance(w, float) and isinstance(g, (int, float)) and not isinstance(g, bool):
            if g != w and abs(g - w) > tol * max(abs(g), abs(w)):
                raise Mismatch(f"{what}.{k}: got {g!r}, want {w!r}")
        elif not same(g, w):
            raise Mismatch(f"{what}.{k}: got {g!r}, want {w!r}")


def k_limiter(case: Dict[str, Any]) -> None:
    try:
        lim = _native.Limiter(case.get("config") or {}, s_ns(case.get("created", 0)))
    except retrycore.RetrycoreError as e:
        if case.get("error") is None:
            raise Mismatch(f"unexpected error {e.code} ({e})") from e
        eq("error", e.code, case["error"])
        if case.get("error_field") is not None:
            eq("error_field", e.field, case["error_field"])
        return
    if case.get("error") is not None:
        raise Mismatch(f"expected error {case['error']}")
    tol = case.get("tolerance", 0.0)
    for i, step in enumerate(case["steps"]):
        op, now = step["op"], s_ns(step.get("now", 0))
        got: Any = None
        for _ in range(step.get("times", 1)):
            if op == "acquire":
                got = lim.acquire(now, step.get("attempt"), s_ns(step.get("within")))
            elif op == "release":
                got = {"granted": lim.release(now, s_ns(step.get("rtt")), step.get("signal"))}
            elif op == "cancel":
                got = lim.cancel(step["ticket"], now)
            elif op == "state":
                got = lim.state(now)
            else:
                raise Mismatch(f"step {i}: unknown op {op!r}")
        if step.get("expect") is not None:
            limiter_subset(f"step {i} ({op})", got, step["expect"], tol)


def saga_subset(what: str, got: Any, want: Any) -> None:
    """`want` ⊆ `got`: an object's keys given, a list's every item (and its length)."""
    if isinstance(want, dict):
        if not isinstance(got, dict):
            raise Mismatch(f"{what}: got {got!r}, want {want!r}")
        for k, w in want.items():
            saga_subset(f"{what}.{k}", got.get(k), w)
    elif isinstance(want, list):
        if not isinstance(got, list) or len(got) != len(want):
            raise Mismatch(f"{what}: got {got!r}, want {want!r}")
        for i, (g, w) in enumerate(zip(got, want)):
            saga_subset(f"{what}[{i}]", g, w)
    elif not same(got, want):
        raise Mismatch(f"{what}: got {got!r}, want {want!r}")


def saga_steps(case: Dict[str, Any], make: Callable[[], Any], ops: Dict[str, Callable[[Any, Dict[str, Any]], Any]]) -> None:
    """Builds the run (or checks the case's error), then runs each step against its `expect` or `error`."""
    built: List[Any] = []
    outcome(case, lambda: built.append(make()), lambda got, want: None)
    if not built:
        return
    for i, step in enumerate(case["steps"]):
        op = ops.get(step["op"])
        if op is None:
            raise Mismatch(f"step {i}: unknown op {step['op']!r}")

        def check(got: Any, want: Any, i: int = i, step: Dict[str, Any] = step) -> None:
            if "expect" in step:
                saga_subset(f"step {i} ({step['op']})", got, want)

        outcome(step, lambda op=op, step=step: op(built[0], step), check)


def k_compensation(case: Dict[str, Any]) -> None:
    saga_steps(
        case,
        lambda: _native.CompensationRun(case.get("saga")),
        {
            "next": lambda r, step: r.next(),
            "record": lambda r, step: r.record(step["outcome"]),
            "result": lambda r, step: r.result(),
        },
    )


def k_dead_letter_replay(case: Dict[str, Any]) -> None:
    saga_steps(
        case,
        lambda: _native.DeadLetterReplay(case.get("letters"), case.get("options"), case.get("wall_now_ms", 0)),
        {
            "groups": lambda r, step: r.groups(),
            "next_batch": lambda r, step: r.next_batch(),
            "record": lambda r, step: r.record(step["msg_id"], step["ok"], step["wall_now_ms"]),
            "letters": lambda r, step: r.letters(),
            "audit": lambda r, step: r.audit(),
        },
    )


KINDS: Dict[str, Callable[[Dict[str, Any]], None]] = {
    "rng": k_rng,
    "duration": k_duration,
    "policy": k_policy,
    "backoff": k_backoff,
    "delay_sequence": k_delay_sequence,
    "delay_replay": k_delay_replay,
    "schedule": k_schedule,
    "classify": k_classify,
    "retry_after": k_retry_after,
    "http_date": k_http_date,
    "session": k_session,
    "breaker": k_breaker,
    "budget": k_budget,
    "lint": k_lint,
    "metric_samples": k_metric_samples,
    "key_validate": k_key_validate,
    "key_derive": k_key_derive,
    "key_scoped": k_key_scoped,
    "storage_key": k_storage_key,
    "key_mint": k_key_mint,
    "header_parse": k_header_parse,
    "header_format": k_header_format,
    "jcs": k_jcs,
    "jcs_number": k_jcs_number,
    "fingerprint": k_fingerprint,
    "record_decide": k_record_decide,
    "record_complete": k_record_complete,
    "record_renew": k_record_renew,
    "dead_letter": k_dead_letter,
    "rfc3339": k_rfc3339,
    "execute": k_execute,
    "retry_log": k_retry_log,
    "alerts": k_alerts,
    "store_protocol": _store_vectors.k_store_protocol,
    "store_claim": _store_vectors.k_store_claim,
    "store_row": _store_vectors.k_store_row,
    "limiter": k_limiter,
    "compensation": k_compensation,
    "dead_letter_replay": k_dead_letter_replay,
}


def _files() -> List[Path]:
    return sorted(ROOT.rglob("*.json"))


def _cases() -> List[Any]:
    out = []
    for f in _files():
        doc = json.loads(f.read_text(encoding="utf-8"))
        rel = f.relative_to(ROOT).as_posix()
        defaults = doc.get("defaults") or {}
        for i, raw in enumerate(doc.get("cases") or []):
            case = dict(raw)
            for k, v in defaults.items():
                case.setdefault(k, v)
            name = raw.get("name") or f"#{i}"
            out.append(pytest.param(doc.get("kind"), case, id=f"{rel}::{i}::{name}"[:200]))
    return out


def test_every_file_has_kind_comment_and_cases() -> None:
    files = _files()
    assert files, f"no vector files under {ROOT}"
    for f in files:
        doc = json.loads(f.read_text(encoding="utf-8"))
        assert isinstance(doc.get("kind"), str), f"{f}: no kind"
        assert "_comment" in doc, f"{f}: every vector file has a _comment"
        assert isinstance(doc.get("cases"), list) and doc["cases"], f"{f}: no cases"
        assert doc["kind"] in KINDS, f"{f}: kind {doc['kind']!r} has no runner in tests/python"


@pytest.mark.parametrize("kind,case", _cases())
def test_vector(kind: str, case: Dict[str, Any]) -> None:
    run = KINDS.get(kind)
    if run is None:
        pytest.fail(f"kind {kind!r} has no runner")
    run(case)

"""Eight threads on one shared object while a ninth provokes every StateError (issue 22, item 1).

Each object — a policy, a session, a breaker, a budget, a dead letter, a generator — is
shared by 8 threads calling every public method of it in a loop, while another thread
provokes the object's StateErrors (a session that is not in flight, a refused transition,
a letter in the wrong status) as fast as it can. An error used to be built by Python code
while the object's Rust lock was held; when that code gave up the GIL, a thread waiting
for the lock with the GIL held hung the process. The run is a child process under
``faulthandler.dump_traceback_later(exit=True)``: a hang fails the test (with every thread's
stack) instead of hanging CI. The method lists are checked against the classes'
introspected public methods, so a new method must be added here.
"""

from __future__ import annotations

import os

import _isolated

HERE = os.path.dirname(os.path.abspath(__file__))

CHILD = r"""
import sys, threading, time, warnings
sys.setswitchinterval(1e-6)  # switch threads as often as possible: any lock held across a switch shows
import retrycore
from retrycore import StateError, RetrycoreError

SECONDS = 0.4
warnings.simplefilter("ignore")


def public(obj):
    cls = type(obj)
    return {n for n in dir(cls) if not n.startswith("_")}


def hammer(name, obj, calls, provoke):
    missing = public(obj) - set(calls)
    assert not missing, f"{name}: methods not exercised: {sorted(missing)}"
    stop = time.monotonic() + SECONDS
    errors, counts = [], {"calls": 0, "state_errors": 0}
    lock = threading.Lock()

    def worker(i):
        n = 0
        fns = list(calls.values())
        while time.monotonic() < stop:
            f = fns[(n + i) % len(fns)]
            n += 1
            try:
                f()
            except RetrycoreError:
                pass  # StateError and friends: expected from a shared object
            except BaseException as e:
                errors.append(f"{name}: {type(e).__name__}: {e}")
        with lock:
            counts["calls"] += n

    def provoker():
        # At least one round, however late this thread is scheduled: on a loaded
        # machine it may first run after `stop`, and the test must still provoke.
        while True:
            for p in provoke:
                try:
                    p()
                except StateError:
                    with lock:
                        counts["state_errors"] += 1
                except RetrycoreError:
                    pass
            if time.monotonic() >= stop:
                break

    ts = [threading.Thread(target=worker, args=(i,)) for i in range(8)] + [threading.Thread(target=provoker)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors, errors[:5]
    assert counts["state_errors"] > 0, f"{name}: no StateError provoked"
    return {name: counts}


results = {}
policy = retrycore.RetryPolicy(max_attempts=3, initial=0.0, jitter="none", budget={"kind": "token_bucket"})
session = policy.session()
breaker = retrycore.CircuitBreaker(kind="consecutive", failure_threshold=2, wait_duration_in_open_state=0.0)
budget = retrycore.Budget.token_bucket()
snap = breaker.snapshot()
done = policy.session()
done.before_attempt(); done.on_success()
import retrycore.metrics


class Counting(retrycore.metrics.Exporter):
    def _apply(self, instrument, op, labels, value):
        pass


metered = policy.with_metrics(Counting())


def fresh_breaker_refusal():
    b = retrycore.CircuitBreaker(kind="consecutive")
    b.transition_to("half_open")  # closed -> half_open is refused


results.update(hammer("session", session, {
    "key": lambda: session.key, "key_minted": lambda: session.key_minted, "attempt": lambda: session.attempt,
    "max_attempts": lambda: session.max_attempts, "timeout": lambda: session.timeout, "done": lambda: session.done,
    "give_up_reason": lambda: session.give_up_reason, "before_attempt": lambda: session.before_attempt(),
    "limiter_rejection": lambda: session.limiter_rejection,
    "on_failure": lambda: session.on_failure(status=503), "on_success": lambda: session.on_success(),
    "cancel": lambda: None, "release": lambda: session.release(), "take_transitions": lambda: session.take_transitions(),
}, [lambda: session.on_success(), lambda: done.on_success(), lambda: done.on_failure(status=503)]))

results.update(hammer("policy", policy, {
    "to_dict": policy.to_dict, "to_json": policy.to_json, "max_attempts": lambda: policy.max_attempts,
    "name": lambda: policy.name, "breaker": lambda: policy.breaker, "budgets": lambda: policy.budgets,
    "schedule": policy.schedule, "worst_case": policy.worst_case, "delay": lambda: policy.delay(1, 0.5),
    "sample_delays": lambda: policy.sample_delays(1, 3), "replay_delays": lambda: policy.replay_delays([0.5]),
    "session": lambda: policy.session(), "testing": lambda: policy.testing(2), "counters": policy.counters,
    "call": lambda: policy.call(lambda: 1), "on_retry": lambda: policy.on_retry, "on_give_up": lambda: policy.on_give_up,
    "logger": lambda: policy.logger, "correlation_id": lambda: policy.correlation_id,
    "on_state_change": lambda: policy.on_state_change, "from_dict": lambda: None, "from_json": lambda: None,
    "from_file": lambda: None, "profile": lambda: None,
    "with_metrics": lambda: policy.with_metrics(Counting()), "metered": lambda: metered.call(lambda: 1),
}, [lambda: policy.session().on_success(), lambda: done.on_success()]))


def cycle():
    a = breaker.try_acquire()
    if a.permit is not None:
        breaker.record(a.permit, "failure")


results.update(hammer("breaker", breaker, {
    "to_dict": breaker.to_dict, "name": lambda: breaker.name, "on_state_change": lambda: breaker.on_state_change,
    "state": lambda: breaker.state, "rejections": lambda: breaker.rejections, "totals": breaker.totals,
    "try_acquire": cycle, "acquire": lambda: breaker.release(breaker.acquire()), "record": cycle,
    "release": lambda: breaker.release(breaker.acquire()), "call": lambda: breaker.call(lambda: 1, ()),
    "transition_to": lambda: breaker.transition_to("forced_open"), "reset": breaker.reset,
    "remaining_open": breaker.remaining_open, "snapshot": breaker.snapshot, "restore": lambda: breaker.restore(snap),
    "state_metrics": breaker.state_metrics, "record_without_permit": lambda: breaker.record_without_permit("failure"),
    "transition_to_open_for": lambda: breaker.transition_to_open_for(0.0),
    "transition_to_open_until": lambda: breaker.transition_to_open_until(0.0),
    "break_arguments": breaker.break_arguments, "set_break_duration": lambda: breaker.set_break_duration(0.0),
}, [lambda: breaker.transition_to("half_open"), fresh_breaker_refusal]))

results.update(hammer("budget", budget, {
    "to_dict": budget.to_dict, "name": lambda: budget.name, "kind": lambda: budget.kind,
    "refusals": lambda: budget.refusals, "withdrawals": lambda: budget.withdrawals, "level": budget.level,
    "on_operation_start": budget.on_operation_start, "on_operation_end": budget.on_operation_end,
    "check": budget.check, "withdraw": budget.withdraw, "try_withdraw": budget.try_withdraw,
    "on_failure": budget.on_failure, "on_success": lambda: budget.on_success(retry_cost=5),
    "before_attempt": budget.before_attempt, "token_bucket": lambda: None, "grpc": lambda: None,
    "acquire": lambda: budget.acquire(1), "release": lambda: budget.release(1),
    "ratio": lambda: None, "concurrency": lambda: None, "finagle": lambda: None, "adaptive": lambda: None,
}, [lambda: session.on_success(), fresh_breaker_refusal]))

letter = retrycore.DeadLetter("m1", {"a": 1}, reason="exhausted", attempts=1, error_class="E", error_message="m",
                              first_failure_ms=1, last_failure_ms=2)
results.update(hammer("dead letter", letter, {
    "to_dict": letter.to_dict, "to_json": letter.to_json, "mark_replayable": letter.mark_replayable,
    "mark_replayed": letter.mark_replayed, "discard": letter.discard, "msg_id": lambda: letter.msg_id,
    "status": lambda: letter.status, "replayable": lambda: letter.replayable, "from_dict": lambda: None,
    "from_json": lambda: None,
}, [letter.mark_replayed, letter.mark_replayable]))

rng = retrycore.Random(7)
results.update(hammer("random", rng, {"next_u64": rng.next_u64, "random": rng.random},
                      [lambda: session.on_success()]))
report(results)
"""


def test_eight_threads_on_one_object_while_a_ninth_provokes_state_errors() -> None:
    got = _isolated.run(CHILD, timeout=40)
    assert set(got) == {"session", "policy", "breaker", "budget", "dead letter", "random"}
    for name, c in got.items():
        assert c["calls"] > 0 and c["state_errors"] > 0, (name, c)

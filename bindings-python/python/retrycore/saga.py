"""Compensation runs and dead-letter replays (docs/compensation.md, docs/dead-letters.md).

The core plans and decides (``_native.CompensationRun``, ``_native.DeadLetterReplay``);
this module only calls what it is told to call and reports each outcome back:

- :func:`run_compensations` / :func:`run_compensations_async` undo a saga's
  completed steps newest first, each compensation under its own
  ``purpose: compensation`` policy; one that exhausts its policy becomes a
  dead letter and the run goes on. They return every step's outcome.
- :func:`replay_dead_letters` / :func:`replay_dead_letters_async` replay the
  letters the core accepts, in the batches it hands out (growing while they
  succeed, stopping when a batch fails too often), mark each replayed letter
  and return the audit record. Letters the core refuses (not pending, a
  target that is not idempotent, a data error) are listed in the audit's
  ``skipped`` with the reason, and never called.

Cancelling (``KeyboardInterrupt``, an ``asyncio`` task's cancellation) stops
a run where it is: the exception propagates and nothing further is called.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, Awaitable, Callable, Dict, List, Mapping, Optional, Sequence

from . import _native
from . import RetryError, RetryPolicy, retry

__all__ = ["run_compensations", "run_compensations_async", "replay_dead_letters", "replay_dead_letters_async"]

WallClock = Callable[[], float]


def _wall_ms(wall_clock: Optional[WallClock]) -> int:
    return int(wall_clock() if wall_clock is not None else time.time() * 1000)


class _Calls:
    """Counts a compensation's calls and the times of its failures."""

    def __init__(self, wall_clock: Optional[WallClock]) -> None:
        self.wall_clock = wall_clock
        self.attempts = 0
        self.first_failure_ms: Optional[int] = None
        self.last_failure_ms = 0

    def failed(self) -> None:
        now = _wall_ms(self.wall_clock)
        if self.first_failure_ms is None:
            self.first_failure_ms = now
        self.last_failure_ms = now

    def exhausted(self, e: BaseException) -> Dict[str, Any]:
        """The core's outcome for a compensation that gave up with `e`."""
        last = e.__cause__ if isinstance(e, RetryError) and e.__cause__ is not None else e
        return {
            "outcome": "exhausted",
            "attempts": max(self.attempts, 1),
            "error_class": type(last).__name__,
            "error_message": str(last),
            "first_failure_ms": self.first_failure_ms if self.first_failure_ms is not None else self.last_failure_ms,
            "last_failure_ms": self.last_failure_ms,
        }


def _compensation(compensations: Mapping[str, Callable[..., Any]], planned: Dict[str, Any]) -> Callable[..., Any]:
    fn = compensations.get(planned["compensate"])
    if not callable(fn):
        raise TypeError(f"no callable for the compensation {planned['compensate']!r} (step {planned['step']!r})")
    return fn


def run_compensations(
    saga: Mapping[str, Any],
    compensations: Mapping[str, Callable[[], Any]],
    *,
    sleep: Optional[Callable[[float], Any]] = None,
    wall_clock: Optional[WallClock] = None,
) -> Dict[str, Any]:
    """Runs a saga's compensations (``saga``: ``{"saga", "steps": [{"name",
    "completed", "compensate", "policy"}]}``; ``compensations``: each
    ``compensate`` name's callable) and returns the core's result: every
    step's ``outcome`` (``compensated``, ``dead_lettered``, ``not_completed``,
    ``no_compensation``) and the ``dead_letters``."""
    run = _native.CompensationRun(saga)
    while (planned := run.next()) is not None:
        fn = _compensation(compensations, planned)
        calls = _Calls(wall_clock)

        def attempt(fn: Callable[[], Any] = fn, calls: _Calls = calls) -> Any:
            calls.attempts += 1
            try:
                return fn()
            except Exception:
                calls.failed()
                raise

        policy = RetryPolicy.from_dict(planned["policy"])
        try:
            retry(policy, sleep=sleep, idempotent=True)(attempt)()
        except Exception as e:
            run.record(calls.exhausted(e))
        else:
            run.record({"outcome": "compensated", "attempts": calls.attempts})
    return run.result()


async def run_compensations_async(
    saga: Mapping[str, Any],
    compensations: Mapping[str, Callable[[], Awaitable[Any]]],
    *,
    sleep: Optional[Callable[[float], Awaitable[Any]]] = None,
    wall_clock: Optional[WallClock] = None,
) -> Dict[str, Any]:
    """:func:`run_compensations` for ``async`` compensations (waits with ``asyncio.sleep`` by default)."""
    run = _native.CompensationRun(saga)
    while (planned := run.next()) is not None:
        fn = _compensation(compensations, planned)
        calls = _Calls(wall_clock)

        async def attempt(fn: Callable[[], Awaitable[Any]] = fn, calls: _Calls = calls) -> Any:
            calls.attempts += 1
            try:
                return await fn()
            except Exception:
                calls.failed()
                raise

        policy = RetryPolicy.from_dict(planned["policy"])
        try:
            await retry(policy, sleep=sleep, idempotent=True)(attempt)()
        except Exception as e:
            run.record(calls.exhausted(e))
        else:
            run.record({"outcome": "compensated", "attempts": calls.attempts})
    return run.result()


def _documents(letters: Sequence[Any]) -> List[Dict[str, Any]]:
    """The letters as the core reads them: ``DeadLetter`` objects or their dicts."""
    return [letter.to_dict() if isinstance(letter, _native.DeadLetter) else dict(letter) for letter in letters]


def _mark(letters: Sequence[Any], replay: _native.DeadLetterReplay) -> None:
    """Marks each replayed letter as the core now has it: a ``DeadLetter`` through its methods, a dict in place."""
    for given, now in zip(letters, replay.letters()):
        if now["status"] != "replayed":
            continue
        if isinstance(given, _native.DeadLetter):
            if given.status != "replayed":
                given.mark_replayable()
                given.mark_replayed()
        elif isinstance(given, dict):
            given["status"] = "replayed"
            given["replayable"] = True


def replay_dead_letters(
    letters: Sequence[Any],
    replay: Callable[[Any], Any],
    *,
    operator: str,
    options: Optional[Mapping[str, Any]] = None,
    wall_clock: Optional[WallClock] = None,
) -> Dict[str, Any]:
    """Replays dead letters (``DeadLetter`` objects or their dicts): calls
    ``replay(letter)`` for each letter the core hands out, batch by batch
    (returning is a success, raising a failure); marks the replayed letters;
    returns the audit record. ``options``: ``initial_batch`` (1),
    ``growth`` (2), ``max_batch`` (100), ``max_failure_rate`` (0.1),
    ``include_data_errors`` (False)."""
    plan = _native.DeadLetterReplay(_documents(letters), {**(options or {}), "operator": operator}, _wall_ms(wall_clock))
    by_id = {d["msg_id"]: letter for d, letter in zip(_documents(letters), letters)}
    while batch := plan.next_batch():
        for msg_id in batch:
            try:
                replay(by_id[msg_id])
                ok = True
            except Exception:
                ok = False
            plan.record(msg_id, ok, _wall_ms(wall_clock))
    _mark(letters, plan)
    return plan.audit()


async def replay_dead_letters_async(
    letters: Sequence[Any],
    replay: Callable[[Any], Awaitable[Any]],
    *,
    operator: str,
    options: Optional[Mapping[str, Any]] = None,
    wall_clock: Optional[WallClock] = None,
) -> Dict[str, Any]:
    """:func:`replay_dead_letters` for an ``async`` replay: a batch's letters are replayed concurrently."""
    plan = _native.DeadLetterReplay(_documents(letters), {**(options or {}), "operator": operator}, _wall_ms(wall_clock))
    by_id = {d["msg_id"]: letter for d, letter in zip(_documents(letters), letters)}

    async def one(msg_id: str) -> bool:
        try:
            await replay(by_id[msg_id])
            return True
        except Exception:
            return False

    try:
        while batch := plan.next_batch():
            for msg_id, ok in zip(batch, await asyncio.gather(*(one(m) for m in batch))):
                plan.record(msg_id, ok, _wall_ms(wall_clock))
    finally:
        # A cancelled replay still marks what it replayed before the cancel.
        _mark(letters, plan)
    return plan.audit()

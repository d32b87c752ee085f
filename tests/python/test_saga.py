"""retrycore.saga: compensation runs and dead-letter replays (docs/compensation.md,
docs/dead-letters.md). The core plans and decides; these check that the Python
runners call what it says, in its order, report back, and stop on a cancel."""

from __future__ import annotations

import asyncio
import re
import runpy
from pathlib import Path
from typing import Any, Dict, List

import pytest

import retrycore
from retrycore.saga import replay_dead_letters, replay_dead_letters_async, run_compensations, run_compensations_async

ROOT = Path(__file__).resolve().parents[2]
POLICY = {"purpose": "compensation", "max_attempts": 3, "initial": "0s"}


def saga(*names: str) -> Dict[str, Any]:
    steps = [{"name": n, "completed": True, "compensate": f"undo_{n}", "policy": POLICY} for n in names]
    return {"saga": "s-1", "steps": steps + [{"name": "last", "completed": False}]}


def letter(msg_id: str, error_class: str = "503", idempotent: bool = True) -> Dict[str, Any]:
    return {
        "msg_id": msg_id, "message": {"id": msg_id}, "reason": "attempts_exhausted", "error_class": error_class,
        "error_message": "boom", "attempts": 3, "first_failure_at": "2026-12-02T08:00:00.000Z",
        "last_failure_at": "2026-12-02T08:00:01.000Z", "target_idempotent": idempotent,
    }


def test_compensations_run_newest_first_and_a_failing_one_becomes_a_dead_letter() -> None:
    calls: List[str] = []

    def ok(name: str) -> Any:
        return lambda: calls.append(name)

    def down() -> None:
        calls.append("b")
        raise ConnectionError("refused")

    result = run_compensations(saga("a", "b", "c"), {"undo_a": ok("a"), "undo_b": down, "undo_c": ok("c")}, wall_clock=lambda: 1_000)
    assert calls == ["c", "b", "b", "b", "a"]
    assert [(s["name"], s["outcome"], s.get("attempts")) for s in result["steps"]] == [
        ("a", "compensated", 1), ("b", "dead_lettered", 3), ("c", "compensated", 1), ("last", "not_completed", None)]
    assert result["compensated"] is False and result["finished"] is True
    (dl,) = result["dead_letters"]
    assert (dl["msg_id"], dl["error_class"], dl["error_message"], dl["attempts"]) == ("s-1:b:compensation", "ConnectionError", "refused", 3)
    assert dl["reason"] == "compensation_exhausted" and dl["target_idempotent"] is True


def test_a_compensation_retried_then_successful_counts_its_attempts() -> None:
    tries = iter([ConnectionError("x"), None])

    def flaky() -> None:
        e = next(tries)
        if e is not None:
            raise e

    result = run_compensations(saga("a"), {"undo_a": flaky})
    assert result["steps"][0] == {"name": "a", "outcome": "compensated", "compensate": "undo_a", "attempts": 2}
    assert result["compensated"] is True


def test_a_policy_without_purpose_compensation_is_refused_before_anything_runs() -> None:
    bad = {"saga": "s", "steps": [{"name": "a", "completed": True, "compensate": "u", "policy": {"max_attempts": 2}}]}
    with pytest.raises(retrycore.RetrycoreError) as e:
        run_compensations(bad, {"u": lambda: pytest.fail("ran")})
    assert (e.value.code, e.value.field) == ("invalid_value", "steps[0].policy.purpose")


def test_a_missing_compensation_callable_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="undo_a"):
        run_compensations(saga("a"), {})


def test_async_compensations_and_a_cancel_stops_the_run() -> None:
    calls: List[str] = []

    async def ok_c() -> None:
        calls.append("c")

    async def down() -> None:
        calls.append("b")
        raise ConnectionError("refused")

    async def ok_a() -> None:
        calls.append("a")

    result = asyncio.run(run_compensations_async(saga("a", "b", "c"), {"undo_a": ok_a, "undo_b": down, "undo_c": ok_c}))
    assert calls == ["c", "b", "b", "b", "a"] and [s["outcome"] for s in result["steps"]][:3] == ["compensated", "dead_lettered", "compensated"]

    calls.clear()
    started = asyncio.Event()

    async def hangs() -> None:
        calls.append("c")
        started.set()
        await asyncio.sleep(3600)

    async def main() -> None:
        task = asyncio.ensure_future(run_compensations_async(saga("a", "c"), {"undo_a": ok_a, "undo_c": hangs}))
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert calls == ["c"]  # cancelled: the older step's compensation never ran


def test_replay_grows_batches_refuses_with_reasons_and_marks_letters() -> None:
    letters = [letter(f"m{i}") for i in range(5)] + [letter("post", idempotent=False), letter("bad", "400")]
    dead = retrycore.DeadLetter.from_dict(letter("obj"))
    letters_and_obj: List[Any] = [*letters, dead]
    seen: List[str] = []
    audit = replay_dead_letters(letters_and_obj, lambda l: seen.append(l.msg_id if l is dead else l["msg_id"]), operator="ops", wall_clock=lambda: 1_700_000_000_000)
    assert seen == ["m0", "m1", "m2", "m3", "m4", "obj"]
    assert [b["size"] for b in audit["batches"]] == [1, 2, 3]
    assert audit["skipped"] == [{"msg_id": "post", "reason": "target_not_idempotent"}, {"msg_id": "bad", "reason": "data_error"}]
    assert audit["operator"] == "ops" and audit["started_at"] == "2023-11-14T22:13:20.000Z"
    assert [l.get("status") for l in letters] == ["replayed"] * 5 + [None, None]
    assert dead.status == "replayed"


def test_replay_stops_growing_when_a_batch_fails() -> None:
    letters = [letter(f"m{i}") for i in range(10)]
    seen: List[str] = []

    def target(l: Dict[str, Any]) -> None:
        seen.append(l["msg_id"])
        if l["msg_id"] == "m2":
            raise ConnectionError("still down")

    audit = replay_dead_letters(letters, target, operator="ops")
    assert seen == ["m0", "m1", "m2"]
    assert audit["failed"] == ["m2"] and audit["not_attempted"] == [f"m{i}" for i in range(3, 10)]
    assert re.match(r"failure rate 0\.5 over 0\.1", audit["stopped"])
    assert [l.get("status") for l in letters[:4]] == ["replayed", "replayed", None, None]


def test_async_replay_runs_a_batch_concurrently_and_a_cancel_keeps_what_was_replayed() -> None:
    letters = [letter(f"m{i}") for i in range(7)]
    running = 0
    peak = 0

    async def target(l: Dict[str, Any]) -> None:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(0.001)
        running -= 1

    audit = asyncio.run(replay_dead_letters_async(letters, target, operator="ops", options={"initial_batch": 3, "max_batch": 4}))
    assert [b["size"] for b in audit["batches"]] == [3, 4] and peak == 4

    letters = [letter(f"m{i}") for i in range(7)]
    hung = asyncio.Event()

    async def slow(l: Dict[str, Any]) -> None:
        if l["msg_id"] != "m0":
            hung.set()
            await asyncio.sleep(3600)

    async def main() -> None:
        task = asyncio.ensure_future(replay_dead_letters_async(letters, slow, operator="ops"))
        await hung.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert [l.get("status") for l in letters[:3]] == ["replayed", None, None]


@pytest.mark.parametrize("name", ["compensate.py", "replay.py"])
def test_doc_snippets_run_and_are_the_docs_text(name: str) -> None:
    path = ROOT / "examples" / "saga" / name
    runpy.run_path(str(path), run_name="__main__")
    doc = (ROOT / "docs" / ("compensation.md" if name == "compensate.py" else "dead-letters.md")).read_text(encoding="utf-8")
    assert f"```python\n{path.read_text(encoding='utf-8')}```" in doc

"""Hostile input against every public entry point (issue 22).

The walk (_hostile_walk.py) introspects ``retrycore.__all__`` and ``retrycore._native.__all__``
and every public method and property of their classes, and calls each with hostile values:
huge and endless iterables, mutating containers, throwing ``__str__``/``__float__``/
``__index__``/``__iter__``/getters, lone surrogates, out-of-range numbers (nan, inf, -1, 1e308,
2**64, 2**1000) and impossible snapshots. Only retrycore errors with a ``.code`` may come out
(or a documented pass-through); it runs in a child process, so a crash or a hang fails here.
"""

from __future__ import annotations

import os

import _isolated

HERE = os.path.dirname(os.path.abspath(__file__))


def test_every_entry_point_gives_only_retrycore_errors_under_hostile_input() -> None:
    got = _isolated.run(
        f"""
        import sys
        sys.path.insert(0, {HERE!r})
        import _hostile_walk
        report(_hostile_walk.walk())
        """,
        timeout=120,
    )
    points = set(got["points"])
    # The walk found the entry points by introspection (a sample that must be there).
    for name in ("RetryPolicy.from_json", "RetryPolicy.from_file", "CircuitBreaker.restore", "RetrySession.on_failure",
                 "Budget.on_success", "fingerprint", "Runner.failed_attempt", "DeadLetter.mark_replayable"):
        assert name in points, name
    assert got["calls"] > 5000
    assert got["violations"] == [], "\n".join(got["violations"][:60]) + f"\n… {len(got['violations'])} in all"

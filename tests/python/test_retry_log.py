"""The structured retry log, Python part (docs/observability.md, "The retry log"): a
policy's ``logger`` gets each retry and give-up through ``logging`` with ``extra``
fields, silent by default. The records' fields and messages are pinned in every
runtime by tests/vectors/retry_log; this file checks how they reach ``logging``."""

from __future__ import annotations

import json
import logging
from typing import Any, List

import pytest

import retrycore


class Unavailable(Exception):
    status = 503


def run(policy: retrycore.RetryPolicy, failures: int) -> Any:
    n = 0

    @retrycore.retry(policy, sleep=lambda s: None, key=lambda: "k-1", method="GET")
    def call() -> str:
        nonlocal n
        n += 1
        if n <= failures:
            raise Unavailable("down")
        return "ok"

    try:
        return call()
    except retrycore.RetryError as e:
        return e


def test_silent_by_default(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    assert run(retrycore.RetryPolicy(jitter="none"), 1) == "ok"
    assert caplog.records == []
    assert retrycore.RetryPolicy().logger is None


def test_records_go_to_logging_with_extra_fields(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="retrycore")
    p = retrycore.RetryPolicy(jitter="none", max_attempts=2, logger=logging.getLogger("retrycore"),
                              correlation_id=lambda: "req-9")
    assert isinstance(run(p, 5), retrycore.RetryError)
    got = [(r.name, r.levelname, r.getMessage()) for r in caplog.records]
    name = f"{__name__}.Unavailable"
    assert got == [
        ("retrycore", "WARNING", f"attempt 1 of 2 failed (server_error: {name}); retry 1 in 100ms"),
        ("retrycore", "ERROR", f"gave up after 2 attempts: attempts_exhausted (last failure: server_error: {name})"),
    ]
    r = caplog.records[0]
    fields = {k: getattr(r, k) for k in ("event", "attempt", "max_attempts", "retry", "category", "error", "delay_ms",
                                         "reason", "budget", "idempotency_key", "correlation_id")}
    assert fields == {"event": "retry", "attempt": 1, "max_attempts": 2, "retry": 1, "category": "server_error",
                      "error": name, "delay_ms": 100.0, "reason": None, "budget": None, "idempotency_key": "k-1",
                      "correlation_id": "req-9"}


def test_no_field_clashes_with_a_log_record_attribute() -> None:
    # logging refuses `extra` keys that a LogRecord has ("Attempt to overwrite ...").
    records: List[Any] = []
    run(retrycore.RetryPolicy(jitter="none", logger=records.append), 1)
    (record,) = records
    reserved = set(vars(logging.makeLogRecord({}))) | {"message", "asctime"}
    assert not set(record["fields"]) & reserved
    assert record["level"] == "warn" and record["fields"]["correlation_id"] == "k-1"
    json.dumps(record)  # a callable logger gets plain data


def test_a_disabled_logger_composes_nothing_and_hooks_still_run(caplog: pytest.LogCaptureFixture) -> None:
    quiet = logging.getLogger("retrycore.quiet")
    quiet.setLevel(logging.ERROR + 10)
    seen: List[int] = []
    p = retrycore.RetryPolicy(jitter="none", logger=quiet, on_retry=lambda e: seen.append(e.attempt))
    assert run(p, 1) == "ok"
    assert seen == [1] and caplog.records == []


def test_policy_call_testing_and_copies_keep_the_logger() -> None:
    records: List[Any] = []
    p = retrycore.RetryPolicy(jitter="none", idempotent=True, logger=records.append, correlation_id=lambda: "c")
    t = p.testing(2)
    assert (t.logger, t.correlation_id) == (p.logger, p.correlation_id)
    n = 0

    def flaky() -> str:
        nonlocal n
        n += 1
        if n == 1:
            raise Unavailable("down")
        return "ok"

    assert t.call(flaky) == "ok"
    assert [r["fields"]["correlation_id"] for r in records] == ["c"]


def test_bad_logger_or_correlation_id() -> None:
    with pytest.raises(retrycore.ConfigTypeError) as e:
        retrycore.RetryPolicy(logger=42)
    assert (e.value.code, e.value.field) == ("invalid_type", "logger")
    with pytest.raises(retrycore.ConfigTypeError) as e:
        retrycore.RetryPolicy(correlation_id="req-1")
    assert (e.value.code, e.value.field) == ("invalid_type", "correlation_id")


def test_the_docs_snippet_is_a_tested_file() -> None:
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    snippet = root / "examples" / "observability" / "retry_log.py"
    text = snippet.read_text(encoding="utf-8")
    assert f"```python\n{text}```" in (root / "docs" / "observability.md").read_text(encoding="utf-8")
    out = subprocess.run([sys.executable, str(snippet)], capture_output=True, text=True, timeout=60, check=True)
    shown = text.rsplit("# ", 1)[1].strip()
    assert out.stderr.strip() == shown

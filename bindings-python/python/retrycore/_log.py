# The structured retry log (docs/observability.md, "The retry log"): each retry and give-up
# written to the policy's logger. The record (level, message, fields) is the core's
# (`retrycore::retry_log`); this module only hands it to `logging` or to a callable.

from __future__ import annotations

import logging
from typing import Any, Callable, Optional

from . import _native


def _type_name(e: Optional[BaseException]) -> Optional[str]:
    """The exception's class as the log names it: ``module.qualname``, bare for builtins."""
    if e is None:
        return None
    t = type(e)
    mod = getattr(t, "__module__", None)
    qual = getattr(t, "__qualname__", t.__name__)
    return qual if mod in (None, "builtins") else f"{mod}.{qual}"


class _RetryLog:
    """Writes the record of each hook event to ``logger`` (a ``logging.Logger`` or
    ``LoggerAdapter``: ``logger.log(level, message, extra=fields)``; anything else callable
    gets the record dict)."""

    __slots__ = ("logger", "correlation_id")

    def __init__(self, logger: Any, correlation_id: Optional[Callable[[], Optional[str]]]) -> None:
        self.logger, self.correlation_id = logger, correlation_id

    def write(self, ev: Any, retry: bool) -> None:
        lg = self.logger
        is_logger = isinstance(lg, (logging.Logger, logging.LoggerAdapter))
        # The highest level a record has (error): nothing is composed for a logger that drops even that;
        # `log` drops the others by their level.
        if is_logger and not lg.isEnabledFor(logging.ERROR):
            return
        cid = self.correlation_id() if self.correlation_id is not None else None
        delay = ev.delay
        record = _native.retry_log_record({
            "event": "retry" if retry else "give_up",
            "attempt": ev.attempt,
            "max_attempts": ev.max_attempts,
            "retry": ev.retry,
            "category": ev.category,
            "delay": None if delay is None else round(delay * 1e9),
            "reason": ev.reason,
            "budget": ev.budget,
            "error": _type_name(ev.exception),
            "idempotency_key": ev.key,
            "correlation_id": cid if isinstance(cid, str) else None,
        })
        if is_logger:
            lg.log(logging.getLevelName(record["level"].upper()), record["message"], extra=record["fields"])
        else:
            lg(record)


def _check(logger: Any, correlation_id: Any) -> None:
    if logger is not None and not isinstance(logger, (logging.Logger, logging.LoggerAdapter)) and not callable(logger):
        raise _native.error("invalid_type", "logger", f"must be a logging.Logger or a callable, got {type(logger).__name__}")
    if correlation_id is not None and not callable(correlation_id):
        raise _native.error("invalid_type", "correlation_id", f"must be callable, got {type(correlation_id).__name__}")


def hooks(on_retry: Any, on_give_up: Any, logger: Any, correlation_id: Any) -> "tuple[Any, Any]":
    """The hooks a runner gets: the policy's, after the log's record when a logger is set."""
    if logger is None:
        return on_retry, on_give_up
    log = _RetryLog(logger, correlation_id)

    def retried(ev: Any) -> None:
        log.write(ev, True)
        if on_retry is not None:
            on_retry(ev)

    def gave_up(ev: Any) -> None:
        log.write(ev, False)
        if on_give_up is not None:
            on_give_up(ev)

    return retried, gave_up

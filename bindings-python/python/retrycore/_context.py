"""The attempt a decorated call is running (see ``retrycore.current_attempt``)."""

from __future__ import annotations

from contextvars import ContextVar
from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:
    from ._native import RetrySession

CURRENT: ContextVar[Optional["RetrySession"]] = ContextVar("retrycore_current_attempt", default=None)

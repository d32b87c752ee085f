"""The attempt a decorated call is running (see ``retrycore.current_attempt``): the session of
an async call (or of a sync call while greenlets may switch), with ``_native.mark()`` taken
when it was set; a sync call's session is otherwise kept per thread by the native module."""

from __future__ import annotations

from contextvars import ContextVar
from typing import TYPE_CHECKING, Optional, Tuple

if TYPE_CHECKING:
    from ._native import RetrySession

CURRENT: ContextVar[Optional[Tuple["RetrySession", int]]] = ContextVar("retrycore_current_attempt", default=None)

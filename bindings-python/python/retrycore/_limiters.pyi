"""Limiters: bulkheads, rate limiters, adaptive concurrency limits and AWS's
adaptive client rate limiter, asked before every attempt (docs/limiters.md)."""

from contextlib import AbstractContextManager
from typing import Any, Awaitable, Callable, Mapping, Optional, TypeVar

from . import _native
from ._errors import RetrycoreError

T = TypeVar("T")

class LimiterRejectedError(RetrycoreError):
    """A limiter refused the call (``code`` ``limiter_rejected``).

    ``reason`` is ``bulkhead_full``, ``queue_full``, ``wait_too_long``,
    ``max_wait_exceeded`` or ``limit_reached``; ``retry_after`` the seconds
    after which a permit would be free, when the limiter knows; ``limiter``
    its name.
    """
    limiter: str
    reason: str
    retry_after: Optional[float]
    def __init__(self, message: str = "", *, limiter: str = "", reason: str = "", retry_after: Optional[float] = None) -> None: ...

class Limiter(_native.Limiter):
    """A limiter built from a limiter object (docs/limiters.md), given as a dict
    and/or keyword arguments with the document's keys (durations as strings
    such as ``"250ms"``): ``Limiter(kind="bulkhead", max_concurrent=10,
    max_wait="50ms")``. Share one per downstream among threads and tasks.
    """
    def __new__(cls, config: Optional[Mapping[str, Any]] = None, /, now: Optional[float] = None, **kwargs: Any) -> Limiter: ...
    def release(
        self, now: Optional[float] = None, rtt: Optional[float] = None, signal: Optional[str] = None, category: Optional[str] = None
    ) -> Optional[int]:
        """Reports the end of a call that proceeded and wakes the waiter that takes
        its slot (its ticket is returned)."""
    def wait(self, *, attempt: Optional[str] = None, within: Optional[float] = None) -> None:
        """Asks, then blocks as told: returns when the call may go; raises
        :class:`LimiterRejectedError` when refused or when a queued wait runs out.
        An exception while waiting (``KeyboardInterrupt``) gives the permit back.
        """
    async def wait_async(self, *, attempt: Optional[str] = None, within: Optional[float] = None) -> None:
        """:meth:`wait` for asyncio: cancelling the task gives the permit back."""
    def permit(self, *, attempt: Optional[str] = None, within: Optional[float] = None) -> AbstractContextManager[None]:
        """Waits, then runs the ``with`` block and releases with its latency
        (``success``, or the exception's ``category`` when it has one)."""
    def call(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
        """Calls ``fn(*args, **kwargs)`` inside :meth:`permit`."""
    async def call_async(self, fn: Callable[..., Awaitable[T]], /, *args: Any, **kwargs: Any) -> T:
        """Awaits ``fn(*args, **kwargs)`` after :meth:`wait_async`, then releases."""

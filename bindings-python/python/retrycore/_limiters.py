# Limiters' Python waits (docs/limiters.md); the public contract and docs are in _limiters.pyi.
# The core decides proceed / delay / queue / reject; this module only waits: a sleep for a
# reserved delay, an Event (threads) or a Future (asyncio) that `release` completes for a
# queued slot. An abandoned wait gives its permit back through `cancel`.

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any, Callable, Dict, Iterator, Mapping, Optional, TypeVar, Union
from contextlib import contextmanager

from . import _native
from ._errors import RetrycoreError

T = TypeVar("T")
_Waiter = Union[threading.Event, "asyncio.Future[None]"]


class LimiterRejectedError(RetrycoreError):
    def __init__(self, message: str = "", *, limiter: str = "", reason: str = "", retry_after: Optional[float] = None) -> None:
        super().__init__(message, "limiter_rejected", "")
        self.limiter, self.reason, self.retry_after = limiter, reason, retry_after


def _rejected(d: Mapping[str, Any]) -> LimiterRejectedError:
    after = d.get("retry_after")
    tail = "" if after is None else f"; retry after {after} s"
    msg = f"limiter {d.get('limiter')!r} rejected the call: {d.get('reason')}{tail}"
    return LimiterRejectedError(msg, limiter=str(d.get("limiter")), reason=str(d.get("reason")), retry_after=after)


def _callable(fn: object) -> None:
    if not callable(fn):
        raise _native.error("invalid_type", "fn", f"must be callable, got {type(fn).__name__}")


def _wake(w: _Waiter) -> None:
    if isinstance(w, threading.Event):
        w.set()
    elif not w.done():
        w.get_loop().call_soon_threadsafe(lambda: None if w.done() else w.set_result(None))


class Limiter(_native.Limiter):
    # The queued waiters by ticket; each instance gets its own in __new__.
    _waiters: Dict[int, _Waiter]
    _lock: threading.Lock

    def __new__(cls, config: Optional[Mapping[str, Any]] = None, /, now: Optional[float] = None, **kwargs: Any) -> "Limiter":
        # A mapping and keywords merge; anything else goes to the core as is, which says what is wrong.
        doc: Any = kwargs if config is None else {**config, **kwargs} if kwargs and isinstance(config, Mapping) else config
        self = super().__new__(cls, doc, now)
        self._waiters, self._lock = {}, threading.Lock()
        return self

    def release(self, now: Optional[float] = None, rtt: Optional[float] = None, signal: Optional[str] = None,
                category: Optional[str] = None) -> Optional[int]:
        ticket = super().release(now, rtt, signal, category)
        if ticket is not None:
            with self._lock:
                w = self._waiters.pop(ticket, None)
            if w is not None:
                _wake(w)
        return ticket

    def _give_up(self, ticket: int, timed_out: bool) -> bool:
        """Leaves the queue: True when the slot had been handed over already (then ours)."""
        with self._lock:
            self._waiters.pop(ticket, None)
        c = self.cancel(ticket)
        if c["cancelled"] == "removed":
            if timed_out:
                raise _rejected(c)
            return False
        return True

    def wait(self, *, attempt: Optional[str] = None, within: Optional[float] = None) -> None:
        d = self.acquire(None, attempt, within)
        kind = d["decision"]
        if kind == "proceed":
            return
        if kind == "reject":
            raise _rejected(d)
        ticket = d["ticket"]
        if kind == "delay":
            try:
                time.sleep(d["wait"])
            except BaseException:
                self.cancel(ticket)
                raise
            return
        ev = threading.Event()
        with self._lock:
            self._waiters[ticket] = ev
        try:
            if ev.wait(d["max_wait"]):
                return
        except BaseException:
            if self._give_up(ticket, False):
                self.release(signal="ignore")
            raise
        self._give_up(ticket, True)

    async def wait_async(self, *, attempt: Optional[str] = None, within: Optional[float] = None) -> None:
        d = self.acquire(None, attempt, within)
        kind = d["decision"]
        if kind == "proceed":
            return
        if kind == "reject":
            raise _rejected(d)
        ticket = d["ticket"]
        if kind == "delay":
            try:
                await asyncio.sleep(d["wait"])
            except BaseException:
                self.cancel(ticket)
                raise
            return
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        with self._lock:
            self._waiters[ticket] = fut
        try:
            await asyncio.wait_for(asyncio.shield(fut), d["max_wait"])
            return
        except asyncio.TimeoutError:
            pass
        except BaseException:
            if self._give_up(ticket, False):
                self.release(signal="ignore")
            raise
        self._give_up(ticket, True)

    def _end(self, start: float, error: Optional[BaseException]) -> None:
        rtt = time.monotonic() - start
        category = getattr(error, "category", None) if error is not None else None
        if isinstance(category, str):
            try:
                self.release(rtt=rtt, category=category)
                return
            except RetrycoreError:
                pass  # not one of the core's categories: it says nothing about load
        self.release(rtt=rtt, signal="success" if error is None else "ignore")

    @contextmanager
    def permit(self, *, attempt: Optional[str] = None, within: Optional[float] = None) -> Iterator[None]:
        self.wait(attempt=attempt, within=within)
        start = time.monotonic()
        try:
            yield
        except BaseException as e:
            self._end(start, e)
            raise
        self._end(start, None)

    def call(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
        _callable(fn)
        with self.permit():
            return fn(*args, **kwargs)

    async def call_async(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
        _callable(fn)
        await self.wait_async()
        start = time.monotonic()
        try:
            out = await fn(*args, **kwargs)
        except BaseException as e:
            self._end(start, e)
            raise
        self._end(start, None)
        return out

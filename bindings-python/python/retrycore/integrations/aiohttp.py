"""retrycore for aiohttp (≥ 3.12): a client middleware.

    async with aiohttp.ClientSession(middlewares=(RetryMiddleware(policy),)) as session:
        async with session.get(url) as resp: ...

Every request is one retrycore session: its exceptions and non-2xx responses are answered
by the core (with the request's method; Retry-After read from the response), the delays
slept here with ``asyncio.sleep``; an attempt longer than the policy's
``attempt_timeout`` is cancelled like ``@retry`` cancels it.

aiohttp re-sends a GET, HEAD, OPTIONS, TRACE, PUT or DELETE once by itself after a reset
or a disconnect on a reused connection, and has no public switch for it. The middleware
turns it off (the session's ``_retry_connection``) on the session it first runs in and
raises a ``RetryStackingWarning`` then: that first request may still be re-sent once.
``client_session(policy, ...)`` makes a ``ClientSession`` with the middleware and the
re-send off from the start. Per request: ``retrycore.integrations.overrides(...)``, or
``session.get(url, middlewares=(RetryMiddleware(other),))``, which replaces the session's.
"""

from __future__ import annotations

import asyncio
import warnings
from typing import Any, Awaitable, Callable, Mapping, Optional

import aiohttp

from .. import RetryError, RetryPolicy
from ..exporters.metrics import mark_resend
from . import RetryStackingWarning, _Integration, async_sleep

__all__ = ["RetryMiddleware", "client_session"]

_Handler = Callable[[aiohttp.ClientRequest], Awaitable[aiohttp.ClientResponse]]


class _Seen:
    """What the core reads of a returned ``ClientResponse``: its status and headers, by
    the names it reads on every response (``status_code``, ``headers``)."""

    __slots__ = ("status_code", "headers", "response")

    def __init__(self, response: aiohttp.ClientResponse) -> None:
        self.status_code = response.status
        self.headers = response.headers
        self.response = response


class RetryMiddleware(_Integration):
    """A client middleware running each request in a retrycore session.
    ``idempotency_header``, ``idempotency_key_sent`` and the other keywords: as
    ``RetryAdapter``'s (requests); ``sleep`` is a coroutine function."""

    def __init__(
        self,
        policy: Optional[RetryPolicy] = None,
        *,
        idempotency_header: Optional[str] = None,
        idempotent: Optional[bool] = None,
        idempotency_key_sent: Optional[bool] = None,
        sleep: Optional[Callable[[float], Awaitable[Any]]] = None,
        clock: Optional[Callable[[], float]] = None,
        wall_clock: Optional[Callable[[], float]] = None,
        on_retry: Any = None,
        on_give_up: Any = None,
        on_state_change: Any = None,
    ) -> None:
        super().__init__(
            policy, idempotency_header=idempotency_header, idempotent=idempotent,
            idempotency_key_sent=idempotency_key_sent, sleep=sleep, clock=clock, wall_clock=wall_clock,
            on_retry=on_retry, on_give_up=on_give_up, on_state_change=on_state_change,
        )

    async def __call__(self, request: aiohttp.ClientRequest, handler: _Handler) -> aiohttp.ClientResponse:
        session_of_client = getattr(request, "_session", None)
        if getattr(session_of_client, "_retry_connection", False):
            session_of_client._retry_connection = False  # type: ignore[union-attr]
            warnings.warn(
                "aiohttp's own re-send was on in this ClientSession (turned off for its later requests): "
                "make it with retrycore.integrations.aiohttp.client_session", RetryStackingWarning, stacklevel=2,
            )
        runner = self.runner(request.method, request.headers)
        session = runner.start(())
        self.set_key(request.headers, session)
        sleep = self.sleep or async_sleep
        try:
            while True:
                limit = runner.before(session)
                mark_resend(session.attempt)  # a resent request's span (OpenTelemetry, when installed)
                try:
                    resp = await asyncio.wait_for(handler(request), limit)
                except Exception as e:
                    delay = runner.failed_attempt(session, e)
                else:
                    seen = _Seen(resp)
                    try:
                        again = runner.returned_attempt(session, seen)
                    except RetryError as e:
                        if e.response is seen:
                            e.response = resp
                        raise
                    if again is None:
                        return resp
                    resp.release()  # the discarded response gives its connection back
                    delay = again
                if delay > 0:
                    await sleep(delay)
        except BaseException:
            runner.cancel(session)  # a no-op once the session is done
            raise


def client_session(policy: Optional[RetryPolicy] = None, *, retrycore: Optional[Mapping[str, Any]] = None, **kwargs: Any) -> aiohttp.ClientSession:
    """An ``aiohttp.ClientSession(**kwargs)`` whose requests run through
    ``RetryMiddleware(policy, **retrycore)``, with aiohttp's own re-send off."""
    s = aiohttp.ClientSession(middlewares=(RetryMiddleware(policy, **(retrycore or {})),), **kwargs)
    s._retry_connection = False  # private and the only switch (aiohttp/client.py, IDEMPOTENT_METHODS)
    return s

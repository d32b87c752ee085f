"""retrycore for httpx: transports that wrap httpx's default transport.

    client = httpx.Client(transport=RetryTransport(policy))
    client = httpx.AsyncClient(transport=AsyncRetryTransport(policy))

Every request is one retrycore session: its exceptions and non-2xx responses are answered
by the core (with the request's method; Retry-After read from the response), the delays
slept here. The wrapped transport is ``httpx.HTTPTransport(retries=0)`` unless one is
given; a given one that retries itself raises a ``RetryStackingWarning`` when used.
Per request: ``client.get(url, extensions={"retrycore": {"idempotent": True}})`` (the keys
of ``retrycore.integrations.overrides``), and ``timeout=`` as usual, each part no longer
than the attempt's timeout.
"""

from __future__ import annotations

import asyncio
import time
import warnings
from typing import Any, Callable, Dict, Optional

import httpx

from .. import RetryPolicy
from ..exporters.metrics import mark_resend
from . import RetryStackingWarning, _Integration, async_sleep, shorter

__all__ = ["AsyncRetryTransport", "RetryTransport"]


def _retries_itself(transport: Any) -> bool:
    # httpcore's ConnectionPool(retries=n) re-tries connects (private, httpx 0.28);
    # httpx-retries' RetryTransport retries everything.
    pool = getattr(transport, "_pool", None)
    retries = getattr(pool, "_retries", 0)
    return (type(retries) is int and retries > 0) or type(transport).__module__.startswith("httpx_retries")


def _warn_stacking(transport: Any) -> None:
    if _retries_itself(transport):
        warnings.warn(
            f"{type(transport).__name__} under a retrycore transport retries itself: attempts multiply; "
            "give it retries=0", RetryStackingWarning, stacklevel=3,
        )


def _with_timeout(request: httpx.Request, timeouts: Optional[Dict[str, Optional[float]]], limit: Optional[float]) -> None:
    """Sets the request's timeouts for one attempt: each part no longer than ``limit``."""
    if limit is not None and timeouts is not None:
        request.extensions = {**request.extensions, "timeout": {k: shorter(v, limit) for k, v in timeouts.items()}}


class _Options(_Integration):
    """The options of a transport (``_Integration``'s) and one attempt loop per request."""

    def start(self, request: httpx.Request) -> Any:
        runner = self.runner(request.method, request.headers, request.extensions.get("retrycore"))
        session = runner.start(())
        self.set_key(request.headers, session)
        return runner, session, request.extensions.get("timeout")


class RetryTransport(httpx.BaseTransport):
    """An ``httpx`` transport running each request in a retrycore session around
    ``transport`` (default ``httpx.HTTPTransport(retries=0)``). ``idempotency_header``,
    ``idempotency_key_sent`` and the other keywords: as ``RetryAdapter``'s (requests)."""

    def __init__(self, policy: Optional[RetryPolicy] = None, *, transport: Optional[httpx.BaseTransport] = None, **options: Any) -> None:
        self.transport = transport if transport is not None else httpx.HTTPTransport(retries=0)
        self.retrycore = _Options(policy, **options)

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        _warn_stacking(self.transport)
        request.read()  # a streamed body is buffered once, so every attempt sends it whole
        runner, session, timeouts = self.retrycore.start(request)
        sleep = self.retrycore.sleep or time.sleep
        try:
            while True:
                _with_timeout(request, timeouts, runner.before(session))
                mark_resend(session.attempt)  # a resent request's span (OpenTelemetry, when installed)
                try:
                    resp = self.transport.handle_request(request)
                except Exception as e:
                    delay = runner.failed_attempt(session, e)
                else:
                    again = runner.returned_attempt(session, resp)
                    if again is None:
                        return resp
                    resp.read()  # the discarded response gives its connection back
                    resp.close()
                    delay = again
                if delay > 0:
                    sleep(delay)
        except BaseException:
            runner.cancel(session)  # a no-op once the session is done
            raise

    def close(self) -> None:
        self.transport.close()


class AsyncRetryTransport(httpx.AsyncBaseTransport):
    """``RetryTransport`` for ``httpx.AsyncClient`` (default inner transport
    ``httpx.AsyncHTTPTransport(retries=0)``); sleeps with ``asyncio.sleep`` unless ``sleep``
    (a coroutine function) is given."""

    def __init__(self, policy: Optional[RetryPolicy] = None, *, transport: Optional[httpx.AsyncBaseTransport] = None, **options: Any) -> None:
        self.transport = transport if transport is not None else httpx.AsyncHTTPTransport(retries=0)
        self.retrycore = _Options(policy, **options)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        _warn_stacking(self.transport)
        await request.aread()
        runner, session, timeouts = self.retrycore.start(request)
        sleep = self.retrycore.sleep or async_sleep
        try:
            while True:
                limit = runner.before(session)
                mark_resend(session.attempt)  # a resent request's span (OpenTelemetry, when installed)
                _with_timeout(request, timeouts, limit)
                try:
                    resp = await asyncio.wait_for(self.transport.handle_async_request(request), limit)
                except Exception as e:
                    delay = runner.failed_attempt(session, e)
                else:
                    again = runner.returned_attempt(session, resp)
                    if again is None:
                        return resp
                    await resp.aread()
                    await resp.aclose()
                    delay = again
                if delay > 0:
                    await sleep(delay)
        except BaseException:
            runner.cancel(session)
            raise

    async def aclose(self) -> None:
        await self.transport.aclose()

"""retrycore for requests: an ``HTTPAdapter`` to mount on a ``requests.Session``.

    session = requests.Session()
    session.mount("https://", RetryAdapter(policy))
    session.mount("http://", RetryAdapter(policy))

Every request sent through the session is one retrycore session: its exceptions and its
non-2xx responses are answered by the core (with the request's method, Retry-After read
from the response), the delays slept here. urllib3's own retry stays off
(``max_retries=0``); a ``Retry`` that would still retry raises a ``RetryStackingWarning``
when a request is sent.
"""

from __future__ import annotations

import time
import warnings
from typing import Any, Callable, Optional, Union

from requests import PreparedRequest, Response
from requests.adapters import HTTPAdapter
from requests.utils import rewind_body
from urllib3.util import Timeout

from .. import RetryPolicy
from ..exporters.metrics import mark_resend
from . import RetryStackingWarning, _Integration, shorter

__all__ = ["RetryAdapter"]

class RetryAdapter(HTTPAdapter):
    """An ``HTTPAdapter`` whose ``send`` runs each request in a retrycore session.

    ``idempotency_header`` (e.g. ``"Idempotency-Key"``): every attempt carries the
    session's key in this header (a key the request already carries is kept and used);
    ``idempotency_key_sent=True`` declares that the server deduplicates on it, which lets
    the core retry a POST. ``idempotent``, ``sleep``, ``clock``, ``wall_clock`` and the
    hooks are those of ``retrycore.retry``. The other keywords are ``HTTPAdapter``'s.
    """

    def __init__(
        self,
        policy: Optional[RetryPolicy] = None,
        *,
        idempotency_header: Optional[str] = None,
        idempotent: Optional[bool] = None,
        idempotency_key_sent: Optional[bool] = None,
        sleep: Optional[Callable[[float], Any]] = None,
        clock: Optional[Callable[[], float]] = None,
        wall_clock: Optional[Callable[[], float]] = None,
        on_retry: Any = None,
        on_give_up: Any = None,
        on_state_change: Any = None,
        max_retries: Any = 0,
        **adapter_kwargs: Any,
    ) -> None:
        super().__init__(max_retries=max_retries, **adapter_kwargs)
        self.retrycore = _Integration(
            policy, idempotency_header=idempotency_header, idempotent=idempotent,
            idempotency_key_sent=idempotency_key_sent, sleep=sleep, clock=clock, wall_clock=wall_clock,
            on_retry=on_retry, on_give_up=on_give_up, on_state_change=on_state_change,
        )
        self._sleep = sleep if sleep is not None else time.sleep

    def _stacking(self) -> bool:
        """urllib3's ``Retry`` under this adapter would re-send something itself."""
        r = self.max_retries
        if r.total == 0:
            return False
        counts = (r.total, r.connect, r.read, r.status, getattr(r, "other", None))
        return any(type(c) is int and c > 0 for c in counts)

    def send(
        self,
        request: PreparedRequest,
        stream: bool = False,
        timeout: Any = None,
        verify: Union[bool, str] = True,
        cert: Any = None,
        proxies: Any = None,
    ) -> Response:
        if self._stacking():
            warnings.warn(
                f"urllib3's retry is on under RetryAdapter ({self.max_retries!r}): attempts multiply; "
                "leave max_retries=0", RetryStackingWarning, stacklevel=2,
            )
        replayable = request.body is None or isinstance(request.body, (bytes, str)) or (
            getattr(request, "_body_position", None) is not None
        )
        if not replayable:
            # A one-shot body (a generator) cannot be sent twice: one plain attempt.
            return super().send(request, stream, timeout, verify, cert, proxies)
        it = self.retrycore
        runner = it.runner(request.method, request.headers)
        session = runner.start(())
        it.set_key(request.headers, session)
        last: Optional[Response] = None
        try:
            while True:
                limit = runner.before(session)
                mark_resend(session.attempt)  # a resent request's span (OpenTelemetry, when installed)
                if last is not None:
                    last.close()  # the discarded response gives its connection back
                    last = None
                if session.attempt > 1 and getattr(request, "_body_position", None) is not None:
                    rewind_body(request)  # a file body is read again from where it started
                try:
                    resp = super().send(request, stream, _attempt_timeout(timeout, limit), verify, cert, proxies)
                    if not stream:
                        # What Session.send reads next, read here: a body cut short fails this attempt.
                        resp.content
                except Exception as e:
                    delay = runner.failed_attempt(session, e)
                else:
                    again = runner.returned_attempt(session, resp)
                    if again is None:
                        return resp
                    delay, last = again, resp
                if delay > 0:
                    self._sleep(delay)
        except BaseException:
            # A cancellation, or an error of the host side: the session ends (a no-op once done).
            runner.cancel(session)
            raise


def _attempt_timeout(timeout: Any, limit: Optional[float]) -> Any:
    """The request's timeout, each part no longer than the attempt's ``limit``."""
    if limit is None:
        return timeout
    if isinstance(timeout, Timeout):
        # A part left at urllib3's default (a sentinel) counts as no limit.
        connect, read = (x if isinstance(x, (int, float)) else None for x in (timeout.connect_timeout, timeout.read_timeout))
        return Timeout(connect=shorter(connect, limit), read=shorter(read, limit))
    if isinstance(timeout, tuple):
        connect, read = timeout
        return (shorter(connect, limit), shorter(read, limit))
    return shorter(timeout, limit)

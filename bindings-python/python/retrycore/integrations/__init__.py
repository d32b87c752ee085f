"""One-line integrations of retrycore with HTTP clients (docs/python.md, "HTTP clients").

- ``retrycore.integrations.requests.RetryAdapter`` — an ``HTTPAdapter`` to mount on a
  ``requests.Session``;
- ``retrycore.integrations.httpx.RetryTransport`` / ``AsyncRetryTransport`` — transports
  for ``httpx.Client`` / ``httpx.AsyncClient``;
- ``retrycore.integrations.aiohttp.RetryMiddleware`` — a client middleware (aiohttp ≥ 3.12).

Each is a translator over the session API (``retrycore._native.Runner``, the loop the
``@retry`` decorator runs): it hands the core the request's method, the attempt's
exception or response, and sleeps for the delay the core answers. None of them knows a
status, a method or an error name: the core decides what is retried. Each turns the
client's own retry off (or warns with :class:`RetryStackingWarning` when it finds it on),
so that layers never multiply their attempts (docs/sessions.md, "After a failure").

This module imports no HTTP client; each submodule imports only its own.
"""

from __future__ import annotations

import asyncio
import contextlib
from contextvars import ContextVar
from typing import Any, Callable, Iterator, Mapping, Optional

from .. import _native
from .. import RetryPolicy, _runner_hooks, format_header, parse_header

__all__ = ["RetryStackingWarning", "overrides"]

#: The options a request may override (``overrides(...)``, httpx ``extensions={"retrycore": {...}}``).
OVERRIDE_KEYS = ("policy", "idempotent", "idempotency_key_sent", "key")

_OVERRIDES: "ContextVar[Mapping[str, Any]]" = ContextVar("retrycore_integration_overrides", default={})


class RetryStackingWarning(UserWarning):
    """The HTTP client's own retry is still on under a retrycore integration: every
    retrycore attempt may become several requests (docs/python.md, "HTTP clients")."""


def _checked(options: Mapping[str, Any], field: str) -> Mapping[str, Any]:
    if not isinstance(options, Mapping):
        raise _native.error("invalid_type", field, f"must be a mapping, got {type(options).__name__}")
    for k in options:
        if k not in OVERRIDE_KEYS:
            raise _native.error("unknown_key", f"{field}.{k}", f"unknown option {k!r}")
    return options


@contextlib.contextmanager
def overrides(**options: Any) -> Iterator[None]:
    """Overrides, for the requests made inside the ``with`` block (this thread or task
    only), the integration's ``policy``, ``idempotent``, ``idempotency_key_sent`` or the
    idempotency ``key`` the requests carry."""
    token = _OVERRIDES.set({**_OVERRIDES.get(), **_checked(options, "overrides")})
    try:
        yield
    finally:
        _OVERRIDES.reset(token)


class _Integration:
    """What the three integrations share: the options, and a ``Runner`` per request."""

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
    ) -> None:
        pol = policy if policy is not None else RetryPolicy()
        if not isinstance(pol, RetryPolicy):
            raise _native.error("invalid_type", "policy", f"must be a RetryPolicy, got {type(pol).__name__}")
        if idempotency_header is not None and not isinstance(idempotency_header, str):
            raise _native.error("invalid_type", "idempotency_header", "must be a header name")
        self.policy = pol
        self.idempotency_header = idempotency_header
        self.idempotent = idempotent
        self.idempotency_key_sent = idempotency_key_sent
        self.sleep = sleep
        self.clock = clock
        self.wall_clock = wall_clock
        self.hooks = (on_retry, on_give_up, on_state_change)

    def runner(self, method: Optional[str], headers: Any, extra: Optional[Mapping[str, Any]] = None) -> "_native.Runner":
        """A runner for one request: the integration's options, under the ``overrides``
        in force and ``extra`` (a request's own, e.g. httpx extensions). When the request
        carries the idempotency header, its key is the session's key; else the session's
        key is written into ``headers`` on every attempt (``set_key``)."""
        o: Mapping[str, Any] = {**_OVERRIDES.get(), **(_checked(extra, "retrycore") if extra else {})}
        pol = o.get("policy", self.policy)
        if not isinstance(pol, RetryPolicy):
            raise _native.error("invalid_type", "policy", f"must be a RetryPolicy, got {type(pol).__name__}")
        key = o.get("key")
        name = self.idempotency_header
        if key is None and name is not None and headers.get(name) is not None:
            key = parse_header(headers[name], allow_token=True)
        return _native.Runner(
            pol,
            clock=self.clock,
            **_runner_hooks(pol, *self.hooks),
            key=(lambda: key) if key is not None else None,
            idempotent=o.get("idempotent", self.idempotent),
            idempotency_key_sent=o.get("idempotency_key_sent", self.idempotency_key_sent),
            method=method,
            wall_clock=self.wall_clock,
        )

    def set_key(self, headers: Any, session: "_native.RetrySession") -> None:
        """Writes the session's key (one for every attempt) into the request's headers."""
        if self.idempotency_header is not None:
            headers[self.idempotency_header] = format_header(session.key)


async def async_sleep(delay: float) -> None:
    """``asyncio.sleep`` in parts of at most a day, as ``@retry``'s default async sleep."""
    while delay > 86_400.0:
        await asyncio.sleep(86_400.0)
        delay -= 86_400.0
    await asyncio.sleep(delay)


def shorter(limit: Optional[float], timeout: Optional[float]) -> Optional[float]:
    """The smaller of a client timeout and the attempt's timeout (None: no limit)."""
    if timeout is None:
        return limit
    return timeout if limit is None else min(limit, timeout)

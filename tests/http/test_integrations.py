"""What the integrations promise beside the verdicts of the matrix (docs/python.md, "HTTP
clients"): one idempotency key on every attempt, a caller's own key kept, the body sent
whole each time, the client's own retry off or warned about, per-request overrides, the
attempt's timeout, and a response that succeeds after retries returned with the discarded
ones closed.
"""

from __future__ import annotations

import asyncio
import time
import warnings
from typing import Any, Iterator, List

import aiohttp
import httpx
import pytest
import requests
from faults import FaultServer, RemoteCase

import retrycore
from retrycore.integrations import RetryStackingWarning, overrides
from retrycore.integrations.aiohttp import RetryMiddleware, client_session
from retrycore.integrations.httpx import AsyncRetryTransport, RetryTransport
from retrycore.integrations.requests import RetryAdapter

POLICY = retrycore.RetryPolicy(max_attempts=3, initial=0.001, max_delay=0.002)
BODY = b'{"sku": "a-1"}'
KEY = "order-1001"


@pytest.fixture(scope="module")
def server() -> Iterator[FaultServer]:
    s = FaultServer()
    try:
        yield s
    finally:
        s.close()


def _headers(c: RemoteCase, name: bytes) -> List[bytes]:
    out = []
    for request in c.requests:
        for line in request.split(b"\r\n\r\n", 1)[0].split(b"\r\n")[1:]:
            k, _, v = line.partition(b":")
            if k.strip().lower() == name:
                out.append(v.strip())
    return out


def _bodies(c: RemoteCase) -> List[bytes]:
    return [r.split(b"\r\n\r\n", 1)[1] for r in c.requests]


def _session(**options: Any) -> requests.Session:
    s = requests.Session()
    adapter = RetryAdapter(POLICY, sleep=lambda d: None, **options)
    s.mount("http://", adapter)
    return s


async def _no_sleep(delay: float) -> None:
    pass


# One POST to a 503 with a key the server deduplicates on, per integration: retried, every
# attempt carrying the same key and the whole body.


def _post_requests(c: RemoteCase, headers: Any) -> Any:
    with _session(idempotency_header="Idempotency-Key", idempotency_key_sent=True) as s:
        return s.post(c.url, data=BODY, headers=headers, timeout=5)


def _post_httpx(c: RemoteCase, headers: Any) -> Any:
    t = RetryTransport(POLICY, sleep=lambda d: None, idempotency_header="Idempotency-Key", idempotency_key_sent=True)
    with httpx.Client(transport=t, timeout=5) as client:
        return client.post(c.url, content=BODY, headers=headers)


def _post_httpx_async(c: RemoteCase, headers: Any) -> Any:
    async def run() -> Any:
        t = AsyncRetryTransport(POLICY, sleep=_no_sleep, idempotency_header="Idempotency-Key", idempotency_key_sent=True)
        async with httpx.AsyncClient(transport=t, timeout=5) as client:
            return await client.post(c.url, content=BODY, headers=headers)

    return asyncio.run(run())


def _post_aiohttp(c: RemoteCase, headers: Any) -> Any:
    async def run() -> Any:
        options = {"sleep": _no_sleep, "idempotency_header": "Idempotency-Key", "idempotency_key_sent": True}
        async with client_session(POLICY, retrycore=options) as s, s.post(c.url, data=BODY, headers=headers) as r:
            await r.read()
            return r

    return asyncio.run(run())


POSTS = {"requests": _post_requests, "httpx": _post_httpx, "httpx-async": _post_httpx_async, "aiohttp": _post_aiohttp}


@pytest.mark.parametrize("client", list(POSTS))
def test_one_key_on_every_attempt(server: FaultServer, client: str) -> None:
    c = server.case("503")
    with pytest.raises(retrycore.RetryError) as e:
        POSTS[client](c, None)
    server.collect()
    assert (e.value.reason, e.value.attempts, c.calls) == ("attempts_exhausted", 3, 3)
    keys = _headers(c, b"idempotency-key")
    assert len(keys) == 3 and len(set(keys)) == 1
    assert retrycore.parse_header(keys[0].decode()) == e.value.key
    assert _bodies(c) == [BODY] * 3


@pytest.mark.parametrize("client", list(POSTS))
def test_a_callers_key_is_kept(server: FaultServer, client: str) -> None:
    c = server.case("503_then_ok")
    resp = POSTS[client](c, {"Idempotency-Key": retrycore.format_header(KEY)})
    server.collect()
    assert c.calls == 3
    assert getattr(resp, "status_code", getattr(resp, "status", None)) == 200
    assert _headers(c, b"idempotency-key") == [retrycore.format_header(KEY).encode()] * 3


def test_a_post_without_a_declaration_is_not_retried(server: FaultServer) -> None:
    c = server.case("503")
    with _session(idempotency_header="Idempotency-Key") as s:  # a key, but no word that the server deduplicates
        assert s.post(c.url, data=BODY, timeout=5).status_code == 503
    server.collect()
    assert c.calls == 1


# ---------------------------------------------------------------- the client's own retry


def test_requests_warns_when_urllib3_retries(server: FaultServer) -> None:
    c = server.case("ok")
    s = requests.Session()
    s.mount("http://", RetryAdapter(POLICY, max_retries=3))
    with pytest.warns(RetryStackingWarning, match="max_retries=0"):
        assert s.get(c.url, timeout=5).status_code == 200
    with warnings.catch_warnings():
        warnings.simplefilter("error", RetryStackingWarning)
        assert _session().get(c.url, timeout=5).status_code == 200


def test_httpx_warns_when_the_inner_transport_retries(server: FaultServer) -> None:
    c = server.case("ok")
    with httpx.Client(transport=RetryTransport(POLICY, transport=httpx.HTTPTransport(retries=2))) as client:
        with pytest.warns(RetryStackingWarning, match="retries=0"):
            assert client.get(c.url).status_code == 200
    with warnings.catch_warnings():
        warnings.simplefilter("error", RetryStackingWarning)
        with httpx.Client(transport=RetryTransport(POLICY)) as client:
            assert client.get(c.url).status_code == 200


def test_aiohttp_resend_is_turned_off_and_warned(server: FaultServer) -> None:
    c = server.case("reset_after")

    async def run() -> bool:
        async with aiohttp.ClientSession(middlewares=(RetryMiddleware(POLICY, sleep=_no_sleep),)) as s:
            with pytest.warns(RetryStackingWarning, match="client_session"):
                with pytest.raises(retrycore.RetryError):
                    await s.get(c.url)
            return bool(s._retry_connection)

    assert asyncio.run(run()) is False
    server.collect()
    # retrycore's 3 attempts, plus at most aiohttp's one re-send of the first request (its
    # flag was read before the middleware ran).
    assert c.calls in (3, 4)

    d = server.case("reset_after")

    async def quiet() -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("error", RetryStackingWarning)
            async with client_session(POLICY, retrycore={"sleep": _no_sleep}) as s:
                with pytest.raises(retrycore.RetryError):
                    await s.get(d.url)

    asyncio.run(quiet())
    server.collect()
    assert d.calls == 3


# ---------------------------------------------------------------- per-request options


def test_overrides_declare_a_post_idempotent(server: FaultServer) -> None:
    c = server.case("503_then_ok")
    with _session() as s, overrides(idempotent=True):
        assert s.post(c.url, data=BODY, timeout=5).status_code == 200
    server.collect()
    assert c.calls == 3
    assert _bodies(c) == [BODY] * 3


def test_httpx_extensions_override_per_request(server: FaultServer) -> None:
    c = server.case("503_then_ok")
    with httpx.Client(transport=RetryTransport(POLICY, sleep=lambda d: None)) as client:
        r = client.post(c.url, content=BODY, extensions={"retrycore": {"idempotent": True}})
    server.collect()
    assert (r.status_code, c.calls) == (200, 3)
    with pytest.raises(retrycore.ConfigTypeError) as e:
        with httpx.Client(transport=RetryTransport(POLICY)) as client:
            client.get(c.url, extensions={"retrycore": {"retries": 5}})
    assert (e.value.code, e.value.field) == ("unknown_key", "retrycore.retries")


def test_overrides_refuse_unknown_keys() -> None:
    with pytest.raises(retrycore.ConfigTypeError) as e:
        with overrides(max_attempts=5):
            pass
    assert e.value.code == "unknown_key"


def test_overrides_give_another_policy(server: FaultServer) -> None:
    c = server.case("503")
    with _session() as s, overrides(policy=POLICY.testing(2)):
        with pytest.raises(retrycore.RetryError) as e:
            s.get(c.url, timeout=5)
    server.collect()
    assert (e.value.attempts, c.calls) == (2, 2)


# ---------------------------------------------------------------- timeouts


ATTEMPT_TIMEOUT = retrycore.RetryPolicy(max_attempts=2, initial=0.001, max_delay=0.002, attempt_timeout=0.15)


def test_requests_attempt_timeout_shortens_the_clients(server: FaultServer) -> None:
    c = server.case("hang")
    s = requests.Session()
    s.mount("http://", RetryAdapter(ATTEMPT_TIMEOUT, sleep=lambda d: None))
    t = time.monotonic()
    with pytest.raises(retrycore.RetryError) as e:
        s.get(c.url, timeout=(5, 5))
    assert (e.value.category, e.value.attempts) == ("timeout", 2)
    assert time.monotonic() - t < 2


def test_httpx_attempt_timeout_shortens_the_clients(server: FaultServer) -> None:
    c = server.case("hang")
    t = time.monotonic()
    with httpx.Client(transport=RetryTransport(ATTEMPT_TIMEOUT, sleep=lambda d: None), timeout=5) as client:
        with pytest.raises(retrycore.RetryError) as e:
            client.get(c.url)
    assert (e.value.category, e.value.attempts) == ("timeout", 2)
    assert time.monotonic() - t < 2


def test_aiohttp_attempt_timeout_cancels_the_attempt(server: FaultServer) -> None:
    c = server.case("hang")

    async def run() -> retrycore.RetryError:
        async with client_session(ATTEMPT_TIMEOUT, retrycore={"sleep": _no_sleep}) as s:
            with pytest.raises(retrycore.RetryError) as e:
                await s.get(c.url)
        return e.value

    t = time.monotonic()
    e = asyncio.run(run())
    assert (e.category, e.attempts) == ("timeout", 2)
    assert time.monotonic() - t < 2


# ---------------------------------------------------------------- responses


def test_a_give_up_on_a_response_carries_the_clients_response(server: FaultServer) -> None:
    c = server.case("503")

    async def run() -> Any:
        async with client_session(POLICY, retrycore={"sleep": _no_sleep}) as s:
            with pytest.raises(retrycore.RetryError) as e:
                await s.get(c.url)
        return e.value.response

    resp = asyncio.run(run())
    assert isinstance(resp, aiohttp.ClientResponse) and resp.status == 503


def test_a_generator_body_is_sent_once(server: FaultServer) -> None:
    c = server.case("503")

    def body() -> Iterator[bytes]:
        yield BODY

    with _session() as s, overrides(idempotent=True):
        assert s.post(c.url, data=body(), timeout=5).status_code == 503
    server.collect()
    assert c.calls == 1


def test_httpx_streams_are_buffered_and_sent_whole(server: FaultServer) -> None:
    c = server.case("503_then_ok")

    def body() -> Iterator[bytes]:
        yield BODY[:5]
        yield BODY[5:]

    with httpx.Client(transport=RetryTransport(POLICY, sleep=lambda d: None)) as client:
        r = client.post(c.url, content=body(), extensions={"retrycore": {"idempotent": True}})
    server.collect()
    assert (r.status_code, c.calls) == (200, 3)
    assert all(BODY[:5] in b and BODY[5:] in b for b in _bodies(c))


def test_requests_rewinds_a_file_body(server: FaultServer, tmp_path: Any) -> None:
    c = server.case("reset_after")
    path = tmp_path / "body.json"
    path.write_bytes(BODY)
    with _session() as s, overrides(idempotent=True), open(path, "rb") as f:
        with pytest.raises(retrycore.RetryError):
            s.post(c.url, data=f, timeout=5)
    server.collect()
    assert _bodies(c) == [BODY] * 3

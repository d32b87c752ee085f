"""Issue 15: what the binding reads from the errors and responses of requests, httpx, aiohttp,
urllib3 and urllib.request. The classes here copy what those libraries report (their
`__module__`, MRO, where they keep the cause, method, status and headers; the versions and
chains are in tests/vectors/classify/clients.json), so the reading is tested without the
libraries installed. The attribute paths come from the core (`host_tables()["reads"]`)."""

from __future__ import annotations

import errno
import ssl
import warnings
from typing import Any, Dict, List, Optional

import pytest

import retrycore
from retrycore import _native


def cls(module: str, name: str, *bases: type, **attrs: Any) -> Any:
    """A class reporting `module.name`, as httpx and httpcore rewrite `__module__`."""
    c = type(name, bases or (Exception,), dict(attrs, __module__=module))
    c.__qualname__ = name
    return c


class Request:
    def __init__(self, method: str) -> None:
        self.method = method


def _request(self: Any) -> Any:
    # httpx.RequestError.request: a property that raises when the error has no request.
    if self._request is None:
        raise RuntimeError("The .request property has not been set.")
    return self._request


HttpxError = cls("httpx", "HTTPError")
RequestError = cls("httpx", "RequestError", HttpxError, request=property(_request))
TransportError = cls("httpx", "TransportError", RequestError)
NetworkError = cls("httpx", "NetworkError", TransportError)
ReadError = cls("httpx", "ReadError", NetworkError)
ConnectError = cls("httpx", "ConnectError", NetworkError)
CoreNetworkError = cls("httpcore", "NetworkError")
CoreReadError = cls("httpcore", "ReadError", CoreNetworkError)
CoreConnectError = cls("httpcore", "ConnectError", CoreNetworkError)


def httpx_error(outer: Any, inner: Any, original: BaseException, method: Optional[str] = "GET") -> BaseException:
    """The chain httpx 0.28 raises: httpcore re-raises `from None` with the original as
    `args[0]` (httpcore/_sync/connection_pool.py), httpx raises `from` the httpcore error."""
    try:
        try:
            try:
                raise original
            except BaseException as exc:
                raise inner(exc) from None
        except BaseException as exc:
            e = outer(str(exc))
            e._request = Request(method) if method else None
            raise e from exc
    except BaseException as caught:
        return caught


def test_httpx_reset_is_connection_lost_and_its_method_is_read() -> None:
    e = httpx_error(ReadError, CoreReadError, ConnectionResetError(errno.ECONNRESET, "reset"))
    names = retrycore.error_names(e)
    assert names[:5] == ["httpx.ReadError", "httpx.NetworkError", "httpx.TransportError", "httpx.RequestError",
                         "httpx.HTTPError"]
    # The socket error is reached through httpcore's args[0].
    assert "ECONNRESET" in names and "builtins.ConnectionResetError" in names
    v = retrycore.classify(e)
    assert (v.category, v.safe, v.retryable) == ("connection_lost", True, True)
    # A POST is not retried; the caller's method wins over the one read.
    post = httpx_error(ReadError, CoreReadError, ConnectionResetError(errno.ECONNRESET, "reset"), "POST")
    assert not retrycore.classify(post).retryable
    assert not retrycore.classify(e, method="POST").retryable
    # An error built without a request (the property raises) has no method.
    bare = httpx_error(ReadError, CoreReadError, ConnectionResetError(errno.ECONNRESET, "reset"), None)
    assert (retrycore.classify(bare).category, retrycore.classify(bare).safe) == ("connection_lost", False)


def test_httpx_connect_error_defers_to_its_cause() -> None:
    cert = ssl.SSLCertVerificationError(1, "[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed")
    v = retrycore.classify(httpx_error(ConnectError, CoreConnectError, cert))
    assert (v.category, v.retryable) == ("auth", False)
    refused = httpx_error(ConnectError, CoreConnectError, ConnectionRefusedError(errno.ECONNREFUSED, "refused"), "POST")
    v = retrycore.classify(refused)
    assert (v.category, v.retryable, v.refused) == ("connect", True, True)
    # ssl errors carry errno 1: no EPERM is added.
    assert "EPERM" not in retrycore.error_names(httpx_error(ConnectError, CoreConnectError, cert))


def test_urllib3_protocol_error_keeps_the_socket_error_in_args() -> None:
    ProtocolError = cls("urllib3.exceptions", "ProtocolError")
    e = ProtocolError("Connection aborted.", ConnectionResetError(errno.ECONNRESET, "reset"))
    assert retrycore.error_names(e)[:4] == ["urllib3.exceptions.ProtocolError", "builtins.Exception",
                                            "builtins.BaseException", "ECONNRESET"]


def test_urllib_connect_timeout_is_connect() -> None:
    import urllib.error

    try:
        try:
            raise TimeoutError("timed out")
        except OSError as err:
            raise urllib.error.URLError(err)  # urllib/request.py do_open
    except urllib.error.URLError as e:
        v = retrycore.classify(e, method="POST")
    assert (v.category, v.retryable) == ("connect", True)
    assert retrycore.classify(TimeoutError("read"), method="POST").category == "timeout"


class PreparedRequest:
    method = "GET"


class RequestsResponse:  # requests.Response / httpx.Response
    def __init__(self, status: int, headers: Dict[str, str], method: str = "GET") -> None:
        self.status_code = status
        self.headers = headers
        self.request = Request(method)


RequestException = cls("requests.exceptions", "RequestException", OSError)
RequestsHTTPError = cls("requests.exceptions", "HTTPError", RequestException)


def requests_error(status: int, method: str = "GET", headers: Optional[Dict[str, str]] = None) -> BaseException:
    e = RequestsHTTPError(f"{status} Server Error")
    e.response = RequestsResponse(status, headers or {}, method)
    e.request = Request(method)
    return e


def test_requests_error_gives_method_status_and_headers() -> None:
    v = retrycore.classify(requests_error(503, headers={"Retry-After": "2"}))
    assert (v.status, v.category, v.safe, v.server_delay) == (503, "overloaded", True, 2.0)
    v = retrycore.classify(requests_error(500))
    assert (v.category, v.safe, v.retryable) == ("server_error", True, True)
    assert not retrycore.classify(requests_error(500, "POST")).retryable


class ClientResponseError(Exception):  # aiohttp.ClientResponseError
    def __init__(self, status: int, method: str) -> None:
        super().__init__(status)
        self.status = status
        self.headers = {"Retry-After": "1"}
        self.request_info = Request(method)

    @property
    def code(self) -> int:  # aiohttp/client_exceptions.py: deprecated, warns when read
        warnings.warn("code property is deprecated, use status instead", DeprecationWarning, stacklevel=2)
        return self.status


def test_aiohttp_error_reads_status_and_request_info_never_code() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        v = retrycore.classify(ClientResponseError(502, "GET"))
    assert (v.status, v.category, v.safe, v.retryable) == (502, "server_error", True, True)
    assert caught == []
    assert not retrycore.classify(ClientResponseError(502, "POST")).retryable


class ClientResponse:  # aiohttp.ClientResponse
    def __init__(self, status: int, method: str = "GET") -> None:
        self.status = status
        self.headers = {"Retry-After": "1"}
        self.method = method
        self.request_info = Request(method)
        self.ok = status < 400


class HTTPResponse:  # urllib3.response.HTTPResponse, http.client.HTTPResponse
    def __init__(self, status: int) -> None:
        self.status = status
        self.headers = {"Retry-After": "4"}

    def getheader(self, name: str) -> Optional[str]:
        return self.headers.get(name)


def test_responses_are_accepted_where_a_failure_is() -> None:
    v = retrycore.classify(RequestsResponse(503, {"Retry-After": "2"}))
    assert (v.status, v.category, v.safe, v.server_delay) == (503, "overloaded", True, 2.0)
    v = retrycore.classify(ClientResponse(500))
    assert (v.status, v.category, v.safe) == (500, "server_error", True)
    v = retrycore.classify(HTTPResponse(503))
    assert (v.status, v.category, v.safe, v.server_delay) == (503, "overloaded", False, 4.0)
    # Given fields still win.
    assert not retrycore.classify(ClientResponse(500), method="POST").retryable
    # A 2xx response is classified too (nothing decides it).
    assert retrycore.classify(RequestsResponse(200, {})).category == "unknown"
    # A session's on_failure takes one.
    p = retrycore.RetryPolicy(max_attempts=3, jitter="none", initial=0.01)
    s = p.session()
    s.before_attempt(0.0)
    assert s.on_failure(ClientResponse(503), 0.0).category == "overloaded"

    # Anything else is refused as before: an object with a status but none of the shapes' guards.
    class Shape:
        status = 503
        headers: Dict[str, str] = {}

    for bad in (Shape(), object(), "503"):
        with pytest.raises(retrycore.ConfigTypeError):
            retrycore.classify(bad)  # type: ignore[arg-type]


def decorated(results: List[Any], **kw: Any) -> Any:
    sleeps: List[float] = []
    calls: List[int] = []

    @retrycore.retry(retrycore.RetryPolicy(max_attempts=3, jitter="none", initial=0.01), sleep=sleeps.append, **kw)
    def f() -> Any:
        calls.append(1)
        r = results[min(len(calls), len(results)) - 1]
        if isinstance(r, BaseException):
            raise r
        return r

    return f, calls


def test_a_returned_aiohttp_response_is_classified_like_a_failure() -> None:
    ok = ClientResponse(200)
    f, calls = decorated([ClientResponse(503), ok])
    assert f() is ok and len(calls) == 2
    # A response nothing retries goes back to the caller.
    missing = ClientResponse(404)
    f, calls = decorated([missing])
    assert f() is missing and len(calls) == 1
    # Its method is read: a returned 500 of a POST is not retried.
    post = ClientResponse(500, "POST")
    del post.headers["Retry-After"]
    f, calls = decorated([post])
    assert f() is post and len(calls) == 1


def test_the_method_read_from_the_error_retries_a_get_unless_the_caller_declared_one() -> None:
    f, calls = decorated([requests_error(500), "done"])
    assert f() == "done" and len(calls) == 2
    # The decorator's method is the caller's declaration: it wins over the error's.
    f, calls = decorated([requests_error(500), "done"], method="POST")
    with pytest.raises(RequestsHTTPError):
        f()
    assert len(calls) == 1
    # A session started with a method keeps it; a method given with the failure wins over both.
    p = retrycore.RetryPolicy(max_attempts=3, jitter="none", initial=0.01)
    s = p.session(method="POST")
    s.before_attempt(0.0)
    assert isinstance(s.on_failure(requests_error(500), 0.0), retrycore.GiveUp)
    s = p.session(method="POST")
    s.before_attempt(0.0)
    assert isinstance(s.on_failure(requests_error(500), 0.0, method="GET"), retrycore.Retry)
    s = p.session()
    s.before_attempt(0.0)
    assert isinstance(s.on_failure(requests_error(500), 0.0), retrycore.Retry)


def test_the_paths_read_are_the_cores() -> None:
    reads = _native.host_tables()["reads"]
    assert reads["python"]["error_method"] == ["request.method", "request_info.method"]
    shapes = {r["clients"]: r for r in reads["python"]["responses"]}
    assert shapes["requests, httpx"]["status"] == "status_code"
    assert (shapes["aiohttp"]["status"], shapes["aiohttp"]["guard"]) == ("status", "request_info")
    assert reads["node"]["connect_phase"] == [{"attribute": "event", "values": ["lookup", "connect", "secureConnect"]}]
    assert _native.host_tables()["error_markers"]["connecting"] == "retrycore:connecting"


class AioMetadata:  # grpc.aio.Metadata: items() pairs each key with the list of its values
    def __init__(self, *pairs: Any) -> None:
        self._pairs = pairs

    def items(self) -> List[Any]:
        return [(k, [v]) for k, v in self._pairs]


class AioRpcError(Exception):  # grpc.aio.AioRpcError
    def code(self) -> Any:
        return 14  # UNAVAILABLE

    def trailing_metadata(self) -> AioMetadata:
        return AioMetadata(("grpc-retry-pushback-ms", "250"))


def test_grpc_aio_trailing_metadata_gives_its_pushback() -> None:
    v = retrycore.classify(AioRpcError())
    assert (v.category, v.server_delay, v.server_delay_source) == ("overloaded", 0.25, "grpc-retry-pushback-ms")

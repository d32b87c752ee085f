"""The ASGI and WSGI middleware (retrycore.middleware) on every store: keyed POSTs run
the handler once under concurrent duplicates, a duplicate gets 409 with Retry-After while
the first runs, the stored response is replayed with `Idempotent-Replayed: true` and only
its allow-listed headers, another body under the same key gets 422, the lease is renewed
while a long handler runs, and bad input (a malformed or repeated key, a body over the
limit, a non-JSON body for a JSON fingerprint, a missing key where one is required) gets
the documented 4xx with nothing executed and nothing stored (docs/idempotency.md,
"Middleware"). Plain ASGI and WSGI apps: no framework needed."""

from __future__ import annotations

import asyncio
import io
import json
import threading
import time
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple

import pytest

from _store_backends import Backend
from retrycore import stores
from retrycore.middleware import IdempotencyMiddleware, IdempotencyWSGI

STORES = ["sqlite", "postgresql", "mariadb", "redis"]
Response = Tuple[int, Dict[str, str], bytes]


@pytest.fixture(params=STORES)
def backend(request: Any, servers: Dict[str, str], tmp_path: Path) -> Iterator[Backend]:
    b = Backend(request.param, servers.get(request.param, ""), tmp_path)
    conn = b.connect()
    b.reset(conn)
    b.close(conn)
    yield b


def _options(backend: Backend, **kw: Any) -> Dict[str, Any]:
    """The middleware's store and connections for a backend."""
    if backend.name == "redis":
        return dict(kw, store=backend.store(backend.connect(), **_store_kw(kw)))
    return dict(kw, store=backend.store(None, **_store_kw(kw)), connect=backend.connect)


def _store_kw(kw: Dict[str, Any]) -> Dict[str, Any]:
    return {k: kw.pop(k) for k in ("lease",) if k in kw}


# ---------------------------------------------------------------- ASGI

class AsgiApp:
    """Counts executions; answers 201 JSON with one header to replay and one to drop."""

    def __init__(self, delay: float = 0.0, fail: bool = False) -> None:
        self.calls: List[bytes] = []
        self.delay, self.fail = delay, fail

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        body = b""
        while True:
            m = await receive()
            body += m.get("body", b"")
            if not m.get("more_body"):
                break
        self.calls.append(body)
        await asyncio.sleep(self.delay)
        if self.fail:
            raise RuntimeError("the handler failed")
        headers = [(b"content-type", b"application/json"), (b"x-internal", b"secret")]
        await send({"type": "http.response.start", "status": 201, "headers": headers})
        await send({"type": "http.response.body", "body": b'{"id":', "more_body": True})
        await send({"type": "http.response.body", "body": str(len(self.calls)).encode() + b"}"})


async def asgi(app: Any, body: bytes = b'{"amount": 5}', key: Optional[str] = '"k-1"', method: str = "POST",
               extra: Optional[List[Tuple[bytes, bytes]]] = None, chunk: int = 0) -> Response:
    headers = [(b"content-type", b"application/json")] + (extra or [])
    if key is not None:
        headers.append((b"idempotency-key", key.encode()))
    scope = {"type": "http", "method": method, "path": "/orders", "headers": headers}
    parts = [body[i:i + chunk] for i in range(0, len(body), chunk)] if chunk else [body]
    queue = [{"type": "http.request", "body": p, "more_body": i < len(parts) - 1} for i, p in enumerate(parts)]

    async def receive() -> Any:
        return queue.pop(0) if queue else {"type": "http.disconnect"}

    out: Dict[str, Any] = {"body": b""}

    async def send(m: Any) -> None:
        if m["type"] == "http.response.start":
            out["status"] = m["status"]
            out["headers"] = {k.decode(): v.decode() for k, v in m["headers"]}
        else:
            out["body"] += m.get("body", b"")

    await app(scope, receive, send)
    return out["status"], out["headers"], out["body"]


def test_asgi_concurrent_duplicates_run_once_then_replay(backend: Backend) -> None:
    app = AsgiApp(delay=0.3)
    mw = IdempotencyMiddleware(app, **_options(backend))

    async def main() -> List[Response]:
        return list(await asyncio.gather(*(asgi(mw) for _ in range(8))))

    got = asyncio.run(main())
    assert len(app.calls) == 1
    statuses = sorted(s for s, _, _ in got)
    assert statuses.count(201) >= 1 and set(statuses) <= {201, 409}
    for s, h, b in got:
        if s == 409:
            assert h["content-type"] == "application/problem+json" and int(h["retry-after"]) >= 1
            assert json.loads(b)["title"] == "A request is outstanding for this Idempotency-Key"
    s, h, b = asyncio.run(asgi(mw))
    assert (s, b) == (201, b'{"id":1}') and len(app.calls) == 1
    assert h["idempotent-replayed"] == "true" and h["content-type"] == "application/json"
    assert "x-internal" not in h
    s, h, b = asyncio.run(asgi(mw, body=b'{"amount": 6}'))
    assert s == 422 and json.loads(b)["title"] == "Idempotency-Key is already used"
    assert len(app.calls) == 1


def test_asgi_bad_input_is_refused_before_anything_runs(tmp_path: Path) -> None:
    app = AsgiApp()
    mw = IdempotencyMiddleware(app, path=str(tmp_path / "r.db"), required=True, max_body=64)
    cases = [
        ({"key": None}, 400, "Idempotency-Key is missing"),
        ({"key": '"unterminated'}, 400, "Idempotency-Key is invalid"),
        ({"key": '"a b"'}, 400, "Idempotency-Key is invalid"),
        ({"extra": [(b"idempotency-key", b'"k-2"')]}, 400, "Idempotency-Key is invalid"),
        ({"body": b'{"x": "' + b"y" * 80 + b'"}', "chunk": 16}, 413, "The request body is too large"),
        ({"body": b"{not json"}, 400, "The request body is not what its fingerprint needs"),
        ({"body": b'{"a": 1, "a": 2}'}, 400, "The request body is not what its fingerprint needs"),
    ]
    for kw, status, title in cases:
        s, h, b = asyncio.run(asgi(mw, **kw))
        assert (s, json.loads(b)["title"]) == (status, title), kw
        assert h["content-type"] == "application/problem+json"
    assert app.calls == []
    # Nothing was stored: the same key with a good body runs.
    assert asyncio.run(asgi(mw))[0] == 201 and len(app.calls) == 1
    # A GET is not keyed; without `required`, a POST without a key runs unprotected.
    assert asyncio.run(asgi(mw, method="GET", key=None))[0] == 201
    free = IdempotencyMiddleware(app, path=str(tmp_path / "r.db"))
    assert asyncio.run(asgi(free, key=None))[0] == 201 and len(app.calls) == 3


def test_asgi_a_failed_handler_is_stored_and_replayed(tmp_path: Path) -> None:
    app = AsgiApp(fail=True)
    mw = IdempotencyMiddleware(app, path=str(tmp_path / "r.db"))
    with pytest.raises(RuntimeError):
        asyncio.run(asgi(mw))
    s, h, _ = asyncio.run(asgi(mw))
    assert s == 500 and h["idempotent-replayed"] == "true" and len(app.calls) == 1


def test_asgi_heartbeat_keeps_a_long_handler_from_being_taken_over(tmp_path: Path) -> None:
    app = AsgiApp(delay=1.5)
    mw = IdempotencyMiddleware(app, path=str(tmp_path / "r.db"), store=None, heartbeat=0.1)
    mw.idem.store = stores.SqliteStore(lease=0.5)

    async def main() -> Tuple[Response, Response]:
        first = asyncio.create_task(asgi(mw))
        await asyncio.sleep(1.0)  # twice the lease: without renewals this would take over
        dup = await asgi(mw)
        return await first, dup

    first, dup = asyncio.run(main())
    assert first[0] == 201 and dup[0] == 409 and len(app.calls) == 1


# ---------------------------------------------------------------- WSGI

class WsgiApp:
    def __init__(self, delay: float = 0.0) -> None:
        self.calls: List[bytes] = []
        self.delay = delay
        self.lock = threading.Lock()

    def __call__(self, environ: Dict[str, Any], start_response: Any) -> List[bytes]:
        body = environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
        with self.lock:
            self.calls.append(body)
        time.sleep(self.delay)
        start_response("201 Created", [("Content-Type", "application/json"), ("X-Internal", "secret")])
        return [b'{"id":', str(len(self.calls)).encode(), b"}"]


def wsgi(app: Any, body: bytes = b'{"amount": 5}', key: Optional[str] = '"k-1"') -> Response:
    environ: Dict[str, Any] = {"REQUEST_METHOD": "POST", "PATH_INFO": "/orders", "SCRIPT_NAME": "",
                               "CONTENT_TYPE": "application/json", "CONTENT_LENGTH": str(len(body)),
                               "wsgi.input": io.BytesIO(body)}
    if key is not None:
        environ["HTTP_IDEMPOTENCY_KEY"] = key
    seen: Dict[str, Any] = {}

    def start_response(status: str, headers: List[Tuple[str, str]], exc_info: Any = None) -> None:
        seen["status"], seen["headers"] = int(status.split()[0]), {k.lower(): v for k, v in headers}

    body_out = b"".join(app(environ, start_response))
    return seen["status"], seen["headers"], body_out


def test_wsgi_concurrent_duplicates_run_once_then_replay(backend: Backend) -> None:
    app = WsgiApp(delay=0.3)
    mw = IdempotencyWSGI(app, **_options(backend))
    got: List[Response] = []

    def run() -> None:
        got.append(wsgi(mw))

    threads = [threading.Thread(target=run) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(app.calls) == 1 and len(got) == 8
    assert {s for s, _, _ in got} <= {201, 409} and [s for s, _, _ in got].count(201) >= 1
    s, h, b = wsgi(mw)
    assert (s, b, h["idempotent-replayed"]) == (201, b'{"id":1}', "true") and "x-internal" not in h
    assert wsgi(mw, body=b'{"amount": 6}')[0] == 422
    assert len(app.calls) == 1


def test_wsgi_bad_input_is_refused_before_anything_runs(tmp_path: Path) -> None:
    app = WsgiApp()
    mw = IdempotencyWSGI(app, path=str(tmp_path / "r.db"), required=True, max_body=64)
    assert wsgi(mw, key=None)[0] == 400
    assert wsgi(mw, key='"k-1", "k-2"')[0] == 400  # repeated headers, joined by the server
    assert wsgi(mw, body=b'{"x": "' + b"y" * 80 + b'"}')[0] == 413
    assert wsgi(mw, body=b"{not json")[0] == 400
    assert app.calls == []
    assert wsgi(mw)[0] == 201 and len(app.calls) == 1

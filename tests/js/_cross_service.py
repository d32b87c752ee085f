"""The Python service of tests/js/cross-runtime.test.cjs: a WSGI app behind retrycore's
IdempotencyWSGI on the store named by argv (postgresql URL or redis URL), serving POST
/charges (and /slow, which takes 1.5 s) on a free loopback port, which it prints; it stops
when stdin closes. A third argument `required` refuses a request without a key."""

from __future__ import annotations

import json
import sys
import threading
import time
from socketserver import ThreadingMixIn
from typing import Any, Callable, Dict, Iterable, List
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from retrycore.middleware import IdempotencyWSGI
from retrycore.stores import PostgresStore, RedisStore

RUNS: List[int] = []


def app(environ: Dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    size = int(environ.get("CONTENT_LENGTH") or 0)
    body = json.loads(environ["wsgi.input"].read(size) or b"{}")
    RUNS.append(1)
    if environ.get("PATH_INFO") == "/slow":
        time.sleep(1.5)
    out = json.dumps({"runtime": "python", "amount": body.get("amount"), "run": len(RUNS)}).encode()
    start_response("201 Created", [("Content-Type", "application/json"), ("Content-Length", str(len(out)))])
    return [out]


class ThreadingServer(ThreadingMixIn, WSGIServer):
    """A thread per request, so that a duplicate arrives while the first one runs."""
    daemon_threads = True


class Quiet(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


def main() -> None:
    kind, url = sys.argv[1], sys.argv[2]
    required = sys.argv[3:] == ["required"]
    if kind == "postgresql":
        import psycopg
        wrapped = IdempotencyWSGI(app, PostgresStore(), connect=lambda: psycopg.connect(url), required=required)
    else:
        import redis
        wrapped = IdempotencyWSGI(app, RedisStore(redis.Redis.from_url(url)), required=required)
    server = make_server("127.0.0.1", 0, wrapped, server_class=ThreadingServer, handler_class=Quiet)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(server.server_port, flush=True)
    sys.stdin.read()
    server.shutdown()


if __name__ == "__main__":
    main()

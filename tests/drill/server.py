"""The fault drill's HTTP server: loopback only, one implementation for every
runtime's drill (tests/python/test_drill.py, tests/js/drill.test.cjs).

    python tests/drill/server.py [--seed N] [--max-seconds S]

Binds 127.0.0.1:0, prints ``PORT <n>`` on stdout, and serves until stdin
closes (the test that started it ends), ``--max-seconds`` pass, or
``--max-requests`` are served. It needs the Python binding (``import
retrycore``): the idempotency records are retrycore's own ``decide`` /
``complete`` (docs/idempotency.md, Records), kept in memory under one lock, with leases and fencing
tokens.

Endpoints (docs/drills.md):
  GET  /plan            timings, policy documents, operations (plan.py)
  POST /work            body {"op": id}: one request of a logical operation;
                        the op's seeded script picks the fault; with an
                        Idempotency-Key header the record decides what runs
                        (header X-Drill-Fault: forces a fault, not scripted)
  GET  /breaker?op=id   200 (executes), or 503 without Retry-After during an outage
  POST /outage          body {"on": bool}
  GET  /stats           requests, executions, per-operation logs
  POST /verdict         body {"phase", "outcomes"}: the referee's counts and violations
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import struct
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, List, Optional
from urllib.parse import parse_qs, urlparse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import retrycore  # noqa: E402

import plan as P  # noqa: E402
import referee  # noqa: E402

PATH = "/work"


class State:
    def __init__(self, seed: int, max_requests: int) -> None:
        self.seed = seed
        self.max_requests = max_requests
        self.lock = threading.Lock()
        self.started = time.monotonic()
        self.config = retrycore.RecordConfig(lease=P.LEASE_MS / 1000, retention=P.RETENTION_MS / 1000)
        self.records: Dict[str, Dict[str, Any]] = {}  # the idempotency store: key -> record
        self.requests = 0
        self.executions: Dict[str, int] = {}
        self.logs: Dict[str, List[Dict[str, Any]]] = {}
        self.scripted: Dict[str, int] = {}  # scripted requests received per op
        self.stale_completions = 0
        self.mismatches = 0
        self.outage = False
        self.breaker_requests = 0
        self.breaker_executions = 0
        self.breaker_refused = 0
        self.plan = P.plan(seed)

    def ms(self) -> int:
        return int((time.monotonic() - self.started) * 1000)

    def stats(self) -> Dict[str, Any]:
        with self.lock:
            return {
                "requests": self.requests,
                "executions": sum(self.executions.values()),
                "executions_by_op": dict(self.executions),
                "logs": {k: list(v) for k, v in self.logs.items()},
                "records": len(self.records),
                "stale_completions": self.stale_completions,
                "mismatches": self.mismatches,
                "breaker": {
                    "requests": self.breaker_requests,
                    "executions": self.breaker_executions,
                    "refused_503": self.breaker_refused,
                    "outage": self.outage,
                },
            }


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"  # one request per connection: no keep-alive pool in the way
    server: "Server"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass

    # ------------------------------------------------------------ plumbing

    def _send(self, status: int, body: Any, headers: Optional[List[List[str]]] = None) -> None:
        data = json.dumps(body).encode()
        try:
            self.send_response(status)
            for k, val in headers or []:
                self.send_header(k, val)
            if not any(k.lower() == "content-type" for k, _ in headers or []):
                self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(data)
            self.wfile.flush()
        except OSError:
            pass  # the client gave up (its attempt timed out)

    def _reset(self) -> None:
        """Closes the connection with a RST: the client sees ECONNRESET, no response."""
        try:
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()
        except OSError:
            pass
        self.close_connection = True

    def _body(self) -> Any:
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        return json.loads(raw) if raw else None

    def _count(self) -> bool:
        st = self.server.state
        with st.lock:
            st.requests += 1
            return st.requests <= st.max_requests

    # ------------------------------------------------------------ routes

    def do_GET(self) -> None:  # noqa: N802
        url = urlparse(self.path)
        st = self.server.state
        if url.path == "/plan":
            return self._send(200, st.plan)
        if url.path == "/stats":
            return self._send(200, st.stats())
        if url.path == "/breaker":
            if not self._count():
                return self._reset()
            with st.lock:
                st.breaker_requests += 1
                if st.outage:
                    st.breaker_refused += 1
                    outage = True
                else:
                    st.breaker_executions += 1
                    outage = False
            if outage:
                return self._send(503, {"error": "outage"})  # no Retry-After: server_error
            op = (parse_qs(url.query).get("op") or [""])[0]
            return self._send(200, {"op": op})
        self._send(404, {"error": "not found"})

    def do_POST(self) -> None:  # noqa: N802
        url = urlparse(self.path)
        st = self.server.state
        try:
            body = self._body()
        except (ValueError, OSError):
            return self._send(400, {"error": "bad body"})
        if url.path == PATH:
            return self._work(body)
        if url.path == "/outage":
            with st.lock:
                st.outage = bool(body and body.get("on"))
            return self._send(200, {"outage": st.outage})
        if url.path == "/verdict":
            return self._send(200, self._verdict(body or {}))
        self._send(404, {"error": "not found"})

    def _verdict(self, body: Dict[str, Any]) -> Dict[str, Any]:
        st = self.server.state
        s = st.stats()
        phase = body.get("phase")
        if phase == "b-final":
            # After the client re-sent every failed operation once with its key:
            # every operation has run exactly once, nothing lost, nothing duplicated.
            ops = st.plan["ops"]["b"]
            bad = {op: s["executions_by_op"].get(op, 0) for op in ops if s["executions_by_op"].get(op, 0) != 1}
            v = [f"{op}: executed {n} times after reconciliation" for op, n in bad.items()]
            if s["stale_completions"] or s["mismatches"]:
                v.append(f"stale completions {s['stale_completions']}, mismatches {s['mismatches']}")
            return {
                "counts": {"operations": len(ops), "executions": sum(s["executions_by_op"].get(op, 0) for op in ops)},
                "violations": v,
            }
        if phase not in ("a", "b"):
            return {"counts": {}, "violations": [f"unknown phase {phase!r}"]}
        ops = st.plan["ops"][phase]
        out = referee.verdict(
            phase,
            ops,
            s["logs"],
            s["executions_by_op"],
            body.get("outcomes") or {},
            st.plan["policies"][phase]["max_attempts"],
        )
        if phase == "b" and (s["stale_completions"] or s["mismatches"]):
            out["violations"].append(f"stale completions {s['stale_completions']}, mismatches {s['mismatches']}")
        return out

    # ------------------------------------------------------------ one request of an operation

    def _work(self, body: Any) -> None:
        st = self.server.state
        if not self._count():
            return self._reset()
        if not isinstance(body, dict) or not isinstance(body.get("op"), str):
            return self._send(400, {"error": "body must be {\"op\": id}"})
        op: str = body["op"]
        forced = self.headers.get("X-Drill-Fault")
        with st.lock:
            if forced:
                fault = forced
            else:
                i = st.scripted.get(op, 0)
                st.scripted[op] = i + 1
                s = P.script(st.seed, op)
                fault = s[i] if i < len(s) else P.OK
            entry: Dict[str, Any] = {"fault": fault, "result": "", "at_ms": st.ms()}
            if forced:
                entry["forced"] = True
            st.logs.setdefault(op, []).append(entry)

        # Faults on the way in: nothing runs.
        if fault == P.RESET_BEFORE:
            entry["result"] = "reset"
            return self._reset()
        if fault == P.UNAVAILABLE:
            entry["result"] = "unavailable"
            return self._send(503, {"error": "unavailable"}, [["Retry-After", "0"]])

        header = self.headers.get("Idempotency-Key")
        if header is None:
            status, payload, headers = self._execute(op, fault, entry, None, None)
        else:
            status, payload, headers = self._keyed(op, fault, entry, header, body)

        # Faults on the way out.
        if fault == P.RESET_AFTER:
            return self._reset()
        self._send(status, payload, headers)

    def _execute(
        self, op: str, fault: str, entry: Dict[str, Any], key: Optional[str], fence: Optional[int]
    ) -> "tuple[int, Any, List[List[str]]]":
        st = self.server.state
        with st.lock:
            n = st.executions.get(op, 0) + 1
            st.executions[op] = n
            entry["result"] = "executed"
        # The work: slow, or slower than the client waits. A record stays
        # `processing` meanwhile, so a retry gets 409 + Retry-After.
        if fault == P.TIMEOUT:
            time.sleep(P.HOLD_MS / 1000)
        elif fault == P.SLOW:
            time.sleep(P.SLOW_MS / 1000)
        payload = {"op": op, "execution": n}
        headers = [["Content-Type", "application/json"]]
        if key is not None and fence is not None:
            response = {"status": 200, "headers": headers, "body": payload}
            with st.lock:
                try:
                    st.records[key] = retrycore.complete(
                        st.records[key], fence, {"state": "succeeded", "response": response}, config=st.config
                    )
                except retrycore.FenceError:
                    # Someone took the record over (lease expired): our result is not stored.
                    st.stale_completions += 1
        return 200, payload, headers

    def _keyed(
        self, op: str, fault: str, entry: Dict[str, Any], header: str, body: Any
    ) -> "tuple[int, Any, List[List[str]]]":
        st = self.server.state
        try:
            key = retrycore.parse_header(header)
            retrycore.validate_key(key)
        except retrycore.IdempotencyError as e:
            entry["result"] = "bad_key"
            return 400, {"error": str(e)}, []
        fp = retrycore.fingerprint(body, method="POST", path=PATH)
        with st.lock:
            d = retrycore.decide(st.records.get(key), key, fp, config=st.config)
            kind = d["decision"]
            if kind == "execute":
                st.records[key] = d["record"]
            elif kind == "mismatch":
                st.mismatches += 1
        if kind == "execute":
            return self._execute(op, fault, entry, key, int(d["fence"]))
        # Not executed: the network still delays or drops the answer.
        if fault == P.TIMEOUT:
            time.sleep(P.HOLD_MS / 1000)
        elif fault == P.SLOW:
            time.sleep(P.SLOW_MS / 1000)
        if kind == "replay":
            entry["result"] = "replayed"
            r = d["response"]
            return int(r["status"]), r["body"], list(r["headers"]) + [["Idempotent-Replayed", "true"]]
        http = d.get("http") or {}
        entry["result"] = kind
        headers = []
        if http.get("retry_after_s") is not None:
            headers.append(["Retry-After", str(http["retry_after_s"])])
            entry["retry_after_ms"] = int(http["retry_after_s"]) * 1000
        return int(http.get("status") or 500), {"error": kind, "title": http.get("title")}, headers


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 64

    def __init__(self, state: State) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.state = state

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that went away is part of the drill


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=int(os.environ.get("RETRYCORE_DRILL_SEED", "2024")))
    ap.add_argument("--max-seconds", type=float, default=120.0)
    ap.add_argument("--max-requests", type=int, default=20_000)
    args = ap.parse_args()
    srv = Server(State(args.seed, args.max_requests))
    t = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    t.start()
    print(f"PORT {srv.server_address[1]}", flush=True)

    done = threading.Event()

    def watch_stdin() -> None:
        try:
            while sys.stdin.read(4096):
                pass
        except (OSError, ValueError):
            pass
        done.set()

    threading.Thread(target=watch_stdin, daemon=True).start()
    done.wait(args.max_seconds)
    srv.shutdown()
    srv.server_close()


if __name__ == "__main__":
    main()

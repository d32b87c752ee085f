"""Local fault servers for the real-client matrix (issue 15): one listener per case on
127.0.0.1 with an ephemeral port, served by one asyncio loop in a process of its own (so the
clients' threads never slow its answers down), each counting the connections it accepted
(a connection is one request here: every answer closes it).

Faults (``FAULTS``): a refused connection (a port bound but not listening), a dropped
connect (a ``listen(0)`` socket whose accept queue is filled first and never accepted:
the SYN is dropped and the client's connect times out), a reset before and after reading
the request (``SO_LINGER`` 0, then close: an RST), a close without an answer (a FIN), a hang
past the client's read timeout, statuses (503 with and without ``Retry-After``, 429 with an
HTTP-date, 500, 502, 504, 400, 401, 404, 409), a body cut short (``Content-Length: 100``,
10 bytes, FIN) and plain HTTP answering a TLS client's ClientHello. Beside them,
``503_then_ok`` answers 503 twice and then 200, and any other name 200.
"""

from __future__ import annotations

import asyncio
import email.utils
import multiprocessing
import socket
import struct
import threading
import time
from multiprocessing.connection import Connection
from typing import Any, Dict, List, Optional, Tuple

#: How long the client waits for the connect of ``drop_connect`` and the answer of ``hang``,
#: seconds (the issue: at most 200 ms).
TIMEOUT = 0.2
#: The client's timeout for every other fault: they answer at once, a timeout there would
#: only be a loaded machine's.
PATIENT = 10.0
#: How long a hanging server holds the request: far past TIMEOUT, and past any lateness of the
#: client's timer on a loaded machine (at 2 s, a run beside parallel builds saw undici's
#: "other side closed" before its 200 ms timer fired). Nothing waits for it: the server's loop
#: stops at close.
HANG = 30.0

STATUSES: Dict[str, Tuple[int, str]] = {
    "503": (503, ""),
    "503_retry_after": (503, "Retry-After: 1\r\n"),
    "429_http_date": (429, "Retry-After: {date}\r\n"),
    "500": (500, ""),
    "502": (502, ""),
    "504": (504, ""),
    "400": (400, ""),
    "401": (401, ""),
    "404": (404, ""),
    "409": (409, ""),
}
FAULTS: Tuple[str, ...] = (
    "refused", "drop_connect", "reset_before", "reset_after", "close", "hang", *STATUSES, "truncated", "plain_to_tls",
)
#: Seconds ahead of now that the 429's HTTP-date names (whole seconds: the date has no fraction;
#: far enough ahead that a loaded machine's late reading still finds most of it left).
DATE_AHEAD = 30


def _reset(writer: asyncio.StreamWriter) -> None:
    """Closes with an RST: a zero linger time, then close."""
    sock = writer.get_extra_info("socket")
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()


async def _read_request(reader: asyncio.StreamReader) -> bytes:
    head = await reader.readuntil(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
        if name.strip().lower() == b"transfer-encoding" and b"chunked" in value.lower():
            return head + await reader.readuntil(b"0\r\n\r\n")
    return head + (await reader.readexactly(length) if length else b"")


def timeouts_for(fault: str) -> Tuple[float, float]:
    """The client's (connect, read) timeouts of a case: short in the phase that times out."""
    return (TIMEOUT if fault == "drop_connect" else PATIENT, TIMEOUT if fault == "hang" else PATIENT)


class Case:
    """One listener serving one fault; ``calls`` counts the connections it accepted and
    ``requests`` keeps the requests it read (head and body)."""

    def __init__(self, fault: str) -> None:
        self.fault = fault
        self.calls = 0
        self.requests: List[bytes] = []
        self.port = 0
        self._keep: List[socket.socket] = []

    @property
    def url(self) -> str:
        scheme = "https" if self.fault == "plain_to_tls" else "http"
        return f"{scheme}://127.0.0.1:{self.port}/case"

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.calls += 1
        fault = self.fault
        try:
            if fault == "reset_before":
                # Once the whole request has arrived (so the client is done writing and meets
                # the RST on its read, as when a server resets before handling it), without
                # handling it: from the client's side the same as reset_after.
                await _read_request(reader)
                _reset(writer)
                return
            if fault == "plain_to_tls":
                await reader.read(4096)  # the ClientHello
                writer.write(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                await writer.drain()
                writer.close()
                return
            self.requests.append(await _read_request(reader))
            if fault == "reset_after":
                _reset(writer)
            elif fault == "close":
                writer.close()
            elif fault == "hang":
                await asyncio.sleep(HANG)
                writer.close()
            elif fault == "503_then_ok" and self.calls <= 2:
                writer.write(b"HTTP/1.1 503 X\r\nContent-Length: 2\r\nConnection: close\r\n\r\nno")
                await writer.drain()
                writer.close()
            elif fault == "truncated":
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\nConnection: close\r\n\r\n0123456789")
                await writer.drain()
                await asyncio.sleep(0.02)
                writer.close()
            else:
                status, extra = STATUSES.get(fault, (200, ""))
                date = email.utils.formatdate(time.time() + DATE_AHEAD, usegmt=True)
                body = "ok" if status == 200 else "no"
                writer.write(
                    f"HTTP/1.1 {status} X\r\nContent-Length: 2\r\nConnection: close\r\n{extra.format(date=date)}\r\n{body}".encode()
                )
                await writer.drain()
                writer.close()
        except (ConnectionError, asyncio.IncompleteReadError):
            writer.transport.abort()  # the client gave up first


class _Loop:
    """The asyncio loop in a daemon thread that serves every ``Case`` (in the server's process)."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="fault-server", daemon=True)
        self._thread.start()
        self._servers: List[asyncio.AbstractServer] = []
        self._sockets: List[socket.socket] = []

    def case(self, fault: str) -> Case:
        c = Case(fault)
        if fault == "refused":
            s = socket.socket()
            s.bind(("127.0.0.1", 0))  # bound, never listening: a connect is refused
            self._sockets.append(s)
            c.port = s.getsockname()[1]
        elif fault == "drop_connect":
            c.port = self._full_queue()
        else:
            fut = asyncio.run_coroutine_threadsafe(asyncio.start_server(c.handle, "127.0.0.1", 0), self.loop)
            server = fut.result(5)
            self._servers.append(server)
            c.port = server.sockets[0].getsockname()[1]
        return c

    def _full_queue(self) -> int:
        """A listener with a full accept queue: ``listen(0)``, filled by connects until one
        no longer completes; a further connect's SYN is dropped."""
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        s.listen(0)
        port: int = s.getsockname()[1]
        self._sockets.append(s)
        for _ in range(8):
            f = socket.socket()
            f.settimeout(0.05)
            self._sockets.append(f)
            try:
                f.connect(("127.0.0.1", port))
            except OSError:
                break  # the queue is full: this SYN was dropped
        return port

    def close(self) -> None:
        for server in self._servers:
            self.loop.call_soon_threadsafe(server.close)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(5)
        for s in self._sockets:
            s.close()


def _serve(conn: Connection) -> None:
    """The server process: answers ``(command, argument)`` messages until ``close``."""
    loop = _Loop()
    cases: Dict[int, Case] = {}
    while True:
        command, arg = conn.recv()
        if command == "case":
            c = loop.case(arg)
            cases[c.port] = c
            conn.send(c.port)
        elif command == "seen":
            conn.send({port: (c.calls, c.requests) for port, c in cases.items()})
        else:
            loop.close()
            conn.send(None)
            return


class RemoteCase:
    """A ``Case`` as the tests see it: its fault, URL and (after ``FaultServer.collect``)
    what the server saw."""

    def __init__(self, fault: str, port: int) -> None:
        self.fault = fault
        self.port = port
        self.calls = 0
        self.requests: List[bytes] = []

    url = Case.url

    @property
    def timeouts(self) -> Tuple[float, float]:
        """(connect, read) seconds."""
        return timeouts_for(self.fault)

    @property
    def timeout(self) -> float:
        """One timeout for clients that take one: the shorter."""
        return min(self.timeouts)


class FaultServer:
    """The fault servers' process: ``case(fault)`` opens a listener, ``collect()`` fills
    every case's ``calls`` and ``requests``."""

    def __init__(self) -> None:
        ctx = multiprocessing.get_context("spawn")
        self._conn, child = ctx.Pipe()
        self._process: Any = ctx.Process(target=_serve, args=(child,), name="fault-server", daemon=True)
        self._process.start()
        self._cases: List[RemoteCase] = []

    def case(self, fault: str) -> RemoteCase:
        self._conn.send(("case", fault))
        c = RemoteCase(fault, self._conn.recv())
        self._cases.append(c)
        return c

    def collect(self) -> None:
        self._conn.send(("seen", None))
        seen = self._conn.recv()
        for c in self._cases:
            c.calls, c.requests = seen[c.port]

    def close(self) -> None:
        self._conn.send(("close", None))
        self._conn.recv()
        self._process.join(5)


def drop_connect_verified(port: int, timeout: Optional[float] = TIMEOUT) -> bool:
    """True when a connect to ``port`` times out (the SYN was dropped)."""
    with socket.socket() as s:
        s.settimeout(timeout)
        try:
            s.connect(("127.0.0.1", port))
        except TimeoutError:
            return True
        except OSError:
            return False
        return False

"""Idempotency for WSGI apps (Flask): ``app.wsgi_app = IdempotencyWSGI(app.wsgi_app)``.

The request body is read once up to the limit and handed to the app again as
``wsgi.input``; the response is buffered, stored, then returned; a thread renews the
lease while the app runs (docs/idempotency.md, "Middleware").
"""

from __future__ import annotations

import io
import threading
from http import HTTPStatus
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple

from .._errors import FenceError
from ..stores import Claim, Store
from ._common import Answer, Idempotency, failure_category, stored

StartResponse = Callable[..., Any]
WSGIApp = Callable[[Dict[str, Any], StartResponse], Iterable[bytes]]

class IdempotencyWSGI:
    """Runs a keyed request at most once per key; see `Idempotency` for the options."""

    def __init__(self, app: WSGIApp, store: Optional[Store] = None, **options: Any) -> None:
        self.app = app
        self.idem = Idempotency(store, **options)

    def __call__(self, environ: Dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        method = str(environ.get("REQUEST_METHOD", "GET")).upper()
        if method not in self.idem.methods:
            return self.app(environ, start_response)
        # A WSGI server joins repeated headers with ", ": one value, which the sf-string parser refuses.
        raw = environ.get("HTTP_IDEMPOTENCY_KEY")
        key, refusal = self.idem.key([] if raw is None else [str(raw)])
        if refusal is not None:
            return _answer(start_response, refusal)
        if key is None:
            return self.app(environ, start_response)
        body = _read_body(environ, self.idem.max_body)
        if body is None:
            return _answer(start_response, self.idem.too_large())
        path = str(environ.get("SCRIPT_NAME", "")) + str(environ.get("PATH_INFO", ""))
        fp, refusal = self.idem.fingerprint(method, path, body, str(environ.get("CONTENT_TYPE", "")))
        if refusal is not None:
            return _answer(start_response, refusal)
        environ["wsgi.input"] = io.BytesIO(body)
        environ["CONTENT_LENGTH"] = str(len(body))
        conn = self.idem.connect()
        try:
            claim = self.idem.store.claim(conn, key, fp)
            self.idem.count(claim.decision)
            if not claim.executes:
                return _answer(start_response, self.idem.answer(claim.decision))
            return self._run(claim, environ, start_response)
        finally:
            self.idem.close(conn)

    def _run(self, claim: Claim, environ: Dict[str, Any], start_response: StartResponse) -> List[bytes]:
        seen: Dict[str, Any] = {}

        def capture(status: str, headers: List[Tuple[str, str]], exc_info: Any = None) -> Any:
            seen["status"], seen["headers"] = status, headers
            return start_response(status, headers, exc_info) if exc_info else start_response(status, headers)

        stop = threading.Event()
        beat = threading.Thread(target=self._heartbeat, args=(claim, stop), daemon=True)
        beat.start()
        try:
            result = self.app(environ, capture)
            try:
                chunks = [bytes(c) for c in result]
            finally:
                close = getattr(result, "close", None)
                if close is not None:
                    close()
        except BaseException:
            # Something may have run: the failure is stored and replayed (docs/idempotency.md, "Records").
            self._complete(claim, {"status": 500, "headers": [], "body": None}, "server_error", stop, beat)
            raise
        status = int(str(seen.get("status", "500")).split(" ", 1)[0])
        response = stored(status, seen.get("headers", []), b"".join(chunks))
        self._complete(claim, response, failure_category(status), stop, beat)
        return chunks

    def _complete(self, claim: Claim, response: Dict[str, Any], category: Optional[str], stop: threading.Event,
                  beat: threading.Thread) -> None:
        stop.set()
        beat.join()
        try:
            with claim.transaction():
                claim.complete(response, failure_category=category)
        except FenceError:
            pass  # another request took the key over; it stores its own outcome

    def _heartbeat(self, claim: Claim, stop: threading.Event) -> None:
        conn = self.idem.connect()
        try:
            while not stop.wait(self.idem.heartbeat):
                if not claim.renew(conn):
                    return
        finally:
            self.idem.close(conn)


def _read_body(environ: Dict[str, Any], limit: int) -> Optional[bytes]:
    stream = environ.get("wsgi.input")
    if stream is None:
        return b""
    length = str(environ.get("CONTENT_LENGTH") or "")
    if length.isdigit():
        if int(length) > limit:
            return None
        return bytes(stream.read(int(length)))
    data = bytes(stream.read(limit + 1))  # no length: read to the limit (the server ends the stream)
    return None if len(data) > limit else data


def _answer(start_response: StartResponse, answer: Answer) -> List[bytes]:
    status, headers, body = answer
    try:
        phrase = HTTPStatus(status).phrase
    except ValueError:
        phrase = "Unknown"
    start_response(f"{status} {phrase}", headers + [("content-length", str(len(body)))])
    return [body]

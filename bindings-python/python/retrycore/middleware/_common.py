"""What the ASGI and WSGI middleware share: reading the key and the body, the
fingerprint, the answers that run nothing, and the stored response's format
(``PROTOCOL["response"]``: allow-listed headers, the body as text or base64).

Every rule here is the core's: the header syntax (`parse_header`), the fingerprint
(`fingerprint`, `fingerprint_json`), the status codes and titles (`decide`'s ``http``),
the failure category of a 5xx (`classify`); the middleware only moves bytes.
"""

from __future__ import annotations

import base64
import json
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

from .. import _native
from .._errors import RetrycoreError
from ..stores import RedisStore, SqliteStore, Store
from ..exporters.metrics import _exporters, record_idempotency
from ..stores._protocol import PROTOCOL

#: status, headers (lowercase names), body
Answer = Tuple[int, List[Tuple[str, str]], bytes]

HEADER = "idempotency-key"


class Idempotency:
    """The middleware's settings and steps.

    `store`: a store (default: `SqliteStore` on the file `path`); `connect`: returns a
    connection for it per request (default: a new SQLite connection; none for Redis)
    and `close` closes one; `methods`: the methods that take a key; `required`: answer
    400 to such a request without a key (else it runs unprotected); `max_body`: a larger
    request body is refused with 413 before anything runs; `selected`: RFC 6901 pointers
    of the JSON body fields the fingerprint covers (default: the whole body);
    `allow_token`: accept Stripe's bare token besides the IETF draft's sf-string;
    `heartbeat`: seconds between lease renewals while the handler runs (default: a
    third of the lease); `metrics`: an exporter (or a list of them, `retrycore.metrics`)
    that counts each keyed request by outcome (executed, replayed, in_progress, mismatch)
    under the name `operation`.
    """

    def __init__(self, store: Optional[Store] = None, *, path: str = "idempotency.db",
                 connect: Optional[Callable[[], Any]] = None, close: Optional[Callable[[Any], None]] = None,
                 methods: Sequence[str] = ("POST", "PATCH"), required: bool = False, max_body: int = 1 << 20,
                 selected: Optional[Sequence[str]] = None, allow_token: bool = True,
                 heartbeat: Optional[float] = None, metrics: Any = None, operation: str = "default") -> None:
        if store is None:
            store = SqliteStore()
            conn = SqliteStore.connect(path)
            store.create_schema(conn)
            conn.close()
            if connect is None:
                connect = lambda: SqliteStore.connect(path)  # noqa: E731
        if connect is None and not isinstance(store, RedisStore):
            raise _native_error("missing_field", "connect", "is required with a SQL store other than the default")
        self.store = store
        self.connect: Callable[[], Any] = connect or (lambda: None)
        self.close: Callable[[Any], None] = close or (lambda c: c.close() if c is not None else None)
        self.methods = {m.upper() for m in methods}
        self.required = required
        self.max_body = max_body
        self.selected = None if selected is None else list(selected)
        self.allow_token = allow_token
        self.heartbeat = heartbeat if heartbeat is not None else store.config.lease / 3
        self.metrics = _exporters(metrics)
        if not isinstance(operation, str):
            raise _native_error("invalid_type", "operation", f"must be a str, got {type(operation).__name__}")
        self.operation = operation

    def count(self, decision: Dict[str, Any]) -> None:
        """Counts a keyed request the store answered with `decision` (the core names its outcome)."""
        if self.metrics:
            record_idempotency(self.metrics, self.operation, decision["decision"])

    def key(self, values: Sequence[str]) -> Tuple[Optional[str], Optional[Answer]]:
        """The key from the request's `Idempotency-Key` values, or the answer refusing it."""
        if not values:
            return None, (missing_key(self.store) if self.required else None)
        if len(values) > 1:
            return None, problem(400, "Idempotency-Key is invalid", "the request has more than one")
        try:
            return _native.parse_header(values[0], self.allow_token), None
        except RetrycoreError as e:
            return None, problem(400, "Idempotency-Key is invalid", str(e))

    def fingerprint(self, method: str, path: str, body: bytes, content_type: str) -> Tuple[str, Optional[Answer]]:
        """The request's fingerprint (method, path and body), or the answer refusing the body."""
        try:
            if not body:
                return _native.fingerprint(None, method=method, path=path, selected=self.selected), None
            if _is_json(content_type):
                text = body.decode("utf-8")
                return _native.fingerprint_json(text, method=method, path=path, selected=self.selected), None
            raw = {"base64": base64.b64encode(body).decode("ascii")}
            return _native.fingerprint(raw, method=method, path=path), None
        except (RetrycoreError, UnicodeDecodeError) as e:
            return "", problem(400, "The request body is not what its fingerprint needs", str(e))

    def answer(self, decision: Dict[str, Any]) -> Answer:
        """The answer to a request that does not run: 409, 422 (400 Stripe-style) or the replay."""
        if decision["decision"] == "replay":
            return replay(decision.get("response"))
        http = decision["http"]
        return problem(http["status"], http["title"], None, http.get("retry_after_s"), http.get("error_type"))

    def too_large(self) -> Answer:
        return problem(413, "The request body is too large", f"the limit is {self.max_body} bytes")


def _native_error(code: str, field: str, why: str) -> Exception:
    from .._errors import _from_core
    return _from_core(code, field, why, "config")


def _is_json(content_type: str) -> bool:
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json" or media.endswith("+json")


def missing_key(store: Store) -> Answer:
    http = _native.decide(None, None, "", 0, store.config)["http"]
    return problem(http["status"], http["title"], None)


def problem(status: int, title: str, detail: Optional[str], retry_after_s: Optional[int] = None,
            error_type: Optional[str] = None) -> Answer:
    """An RFC 9457 problem document (the IETF draft's examples use them)."""
    doc: Dict[str, Any] = {"type": "about:blank", "title": title, "status": status}
    if detail is not None:
        doc["detail"] = detail
    if error_type is not None:
        doc["error_type"] = error_type
    headers = [("content-type", "application/problem+json")]
    if retry_after_s is not None:
        headers.append(("retry-after", str(retry_after_s)))
    # Written as JSON.stringify writes it, so both hosts send the same bytes
    # (tests/js/cross-runtime.test.cjs compares them).
    return status, headers, json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode()


def stored(status: int, headers: Iterable[Tuple[str, str]], body: bytes) -> Dict[str, Any]:
    """The response to store: its status, the allow-listed headers, the body as text or base64."""
    keep = set(PROTOCOL["response"]["replayed_headers"])
    kept = [[k.lower(), v] for k, v in headers if k.lower() in keep]
    text: Any = None
    if body:
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            text = {"base64": base64.b64encode(body).decode("ascii")}
    return {"status": status, "headers": kept, "body": text}


def replay(response: Optional[Dict[str, Any]]) -> Answer:
    """A stored response as it is sent again, marked `Idempotent-Replayed: true` (Stripe's header)."""
    r = response or {}
    body = r.get("body")
    data = b"" if body is None else body.encode() if isinstance(body, str) else base64.b64decode(body["base64"])
    name, value = PROTOCOL["response"]["replay_header"]
    headers = [(k, v) for k, v in r.get("headers") or []] + [(name, value)]
    return int(r.get("status") or 200), headers, data


def failure_category(status: int) -> Optional[str]:
    """The category a 5xx is stored with (the core's classification); None for a success."""
    return None if status < 500 else str(_native.classify(status=status).category)

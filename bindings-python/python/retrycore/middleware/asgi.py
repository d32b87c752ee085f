"""Idempotency for ASGI apps (Starlette, FastAPI): ``app.add_middleware(IdempotencyMiddleware)``.

A pure ASGI middleware (not Starlette's ``BaseHTTPMiddleware``, whose ``call_next``
re-streams the body): the request body is read once up to the limit and handed to the
app again; the response is forwarded as it goes and kept for the store; the lease is
renewed while the app runs (docs/idempotency.md, "Middleware").
"""

from __future__ import annotations

import asyncio
from typing import Any, Awaitable, Callable, Dict, List, MutableMapping, Optional, Tuple

from .._errors import FenceError
from ..stores import Claim, Store
from ._common import Answer, Idempotency, failure_category, stored

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


class IdempotencyMiddleware:
    """Runs a keyed request at most once per key; see `Idempotency` for the options."""

    def __init__(self, app: App, store: Optional[Store] = None, **options: Any) -> None:
        self.app = app
        self.idem = Idempotency(store, **options)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"].upper() not in self.idem.methods:
            await self.app(scope, receive, send)
            return
        headers = [(k.decode("latin-1").lower(), v.decode("latin-1")) for k, v in scope["headers"]]
        key, refusal = self.idem.key([v for k, v in headers if k == "idempotency-key"])
        if refusal is not None:
            await _send(send, refusal)
            return
        if key is None:
            await self.app(scope, receive, send)
            return
        body = await _read_body(receive, self.idem.max_body)
        if body is None:
            await _send(send, self.idem.too_large())
            return
        content_type = next((v for k, v in headers if k == "content-type"), "")
        fp, refusal = self.idem.fingerprint(scope["method"].upper(), scope["path"], body, content_type)
        if refusal is not None:
            await _send(send, refusal)
            return
        store = self.idem.store
        conn = await asyncio.to_thread(self.idem.connect)
        try:
            claim = await store.aclaim(conn, key, fp)
            self.idem.count(claim.decision)
            if not claim.executes:
                await _send(send, self.idem.answer(claim.decision))
                return
            await self._run(claim, scope, body, receive, send)
        finally:
            await asyncio.to_thread(self.idem.close, conn)

    async def _run(self, claim: Claim, scope: Scope, body: bytes, receive: Receive, send: Send) -> None:
        sent_body = False

        async def replay_receive() -> Message:
            nonlocal sent_body
            if not sent_body:
                sent_body = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        status = 500
        out_headers: List[Tuple[str, str]] = []
        chunks: List[bytes] = []

        async def capture(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
                out_headers.extend((k.decode("latin-1"), v.decode("latin-1")) for k, v in message.get("headers", []))
            elif message["type"] == "http.response.body":
                chunks.append(bytes(message.get("body", b"")))
            await send(message)

        beat = asyncio.create_task(self._heartbeat(claim))
        try:
            await self.app(scope, replay_receive, capture)
        except BaseException:
            # Something may have run: the failure is stored and replayed (docs/idempotency.md, "Records").
            await self._complete(claim, {"status": 500, "headers": [], "body": None}, "server_error", beat)
            raise
        await self._complete(claim, stored(status, out_headers, b"".join(chunks)), failure_category(status), beat)

    async def _complete(self, claim: Claim, response: Dict[str, Any], category: Optional[str],
                        beat: "asyncio.Task[None]") -> None:
        beat.cancel()
        try:
            async with claim.atransaction():
                await claim.acomplete(response, failure_category=category)
        except FenceError:
            pass  # another request took the key over; it stores its own outcome

    async def _heartbeat(self, claim: Claim) -> None:
        conn = await asyncio.to_thread(self.idem.connect)
        try:
            while True:
                await asyncio.sleep(self.idem.heartbeat)
                if not await claim.arenew(conn):
                    return
        finally:
            await asyncio.to_thread(self.idem.close, conn)


async def _read_body(receive: Receive, limit: int) -> Optional[bytes]:
    parts: List[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return b"".join(parts)
        chunk = bytes(message.get("body", b""))
        size += len(chunk)
        if size > limit:
            return None
        parts.append(chunk)
        if not message.get("more_body", False):
            return b"".join(parts)


async def _send(send: Send, answer: Answer) -> None:
    status, headers, body = answer
    raw = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers]
    raw.append((b"content-length", str(len(body)).encode()))
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body, "more_body": False})

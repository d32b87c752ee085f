"""The idempotency stores (retrycore.stores) against real servers: SQLite in a file,
PostgreSQL 15, MariaDB and Redis 7, started once for this module by
scripts/test-servers.sh unless RETRYCORE_TEST_POSTGRES / _MARIADB / _REDIS name running
ones. What docs/idempotency.md ("Stores") promises: N concurrent requests with one key run
the handler once; a duplicate arriving mid-handler gets 409 at once; a worker that dies
between claim and complete loses the key when its lease ends, the takeover gets fence + 1
and the stale completion is refused (its business writes roll back); cleanup deletes only
expired records; and every store's claim agrees with decide() on the shared claim vectors."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List

import pytest

import retrycore
from _store_backends import Backend
from retrycore import stores

ROOT = Path(__file__).resolve().parents[2]
VECTORS = ROOT / "tests" / "vectors" / "idempotency" / "store_claim.json"
STORES = ["sqlite", "postgresql", "mariadb", "redis"]
FP = "9f2c" + "0" * 60
# Now: a Redis record's TTL runs on the server's clock, so the tests' times are near it. Set
# again before each test: pytest collects every module before it runs the first test, and a
# T0 taken at import was minutes old by this module's tests in a full run, so Redis expired
# a record the test had just claimed ("now + 5 s" was already in the server's past).
T0 = int(time.time() * 1000)


@pytest.fixture(autouse=True)
def _now() -> None:
    global T0
    T0 = int(time.time() * 1000)


@pytest.fixture(params=STORES)
def backend(request: Any, servers: Dict[str, str], tmp_path: Path) -> Iterator[Backend]:
    b = Backend(request.param, servers.get(request.param, ""), tmp_path)
    conn = b.connect()
    b.reset(conn)
    b.close(conn)
    yield b


def _vector_cases() -> List[Dict[str, Any]]:
    doc = json.loads(VECTORS.read_text(encoding="utf-8"))
    return [dict(doc.get("defaults", {}), **c) for c in doc["cases"]]


def _config(c: Dict[str, Any]) -> Dict[str, Any]:
    cfg = c["config"]
    return {"lease": cfg["lease_ms"] / 1000, "retention": cfg["retention_ms"] / 1000,
            "failure_handling": cfg.get("failure_handling"), "release_categories": cfg.get("release_categories")}


def test_every_store_claims_exactly_where_decide_executes(backend: Backend) -> None:
    conn = backend.connect()
    failures = []
    for c in _vector_cases():
        backend.reset(conn)
        store = backend.store(conn, **_config(c))
        if c["record"] is not None:
            backend.put(conn, store, c["record"], under=c["key"])
        claim = store.claim(conn, c["key"], c["fingerprint"], now_ms=c["now"])
        got = {"claimed": claim.executes, "fence": claim.record["fence"] if claim.executes else None,
               "created_ms": claim.record["created_ms"] if claim.executes else None}
        if got != c["expect"]:
            failures.append(f"{c['name']}: got {got}, want {c['expect']}")
    backend.close(conn)
    assert failures == []


def _race(backend: Backend, n: int, body: Callable[[Any, stores.Store, int], Any]) -> List[Any]:
    conns = [backend.connect() for _ in range(n)]
    start = threading.Barrier(n)
    results: List[Any] = [None] * n

    def run(i: int) -> None:
        store = backend.store(conns[i], lease=30)
        start.wait()
        try:
            results[i] = body(conns[i], store, i)
        except Exception as e:  # reported below
            results[i] = e

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for c in conns:
        backend.close(c)
    return results


def test_n_concurrent_requests_with_one_key_execute_once(backend: Backend) -> None:
    executions = []

    def request(conn: Any, store: stores.Store, i: int) -> str:
        claim = store.claim(conn, "order-1:charge:v1", FP)
        if not claim.executes:
            return str(claim.decision["decision"])
        with claim.transaction():
            executions.append(i)
            backend.order(conn, "order-1")
            time.sleep(0.2)
            claim.complete({"status": 201, "headers": [], "body": {"id": 1}})
        return "executed"

    results = _race(backend, 12, request)
    assert [r for r in results if isinstance(r, Exception)] == []
    assert len(executions) == 1
    assert results.count("executed") == 1
    assert set(results) <= {"executed", "in_progress", "replay"}
    conn = backend.connect()
    assert backend.orders(conn) == ([] if backend.name == "redis" else ["order-1"])
    replay = backend.store(conn).claim(conn, "order-1:charge:v1", FP)
    assert replay.decision["decision"] == "replay"
    assert replay.decision["response"]["body"] == {"id": 1}
    backend.close(conn)


def test_a_duplicate_mid_handler_gets_409_at_once(backend: Backend) -> None:
    a, b = backend.connect(), backend.connect()
    first = backend.store(a).claim(a, "k-mid", FP)
    assert first.executes
    with first.transaction():
        backend.order(a, "o-mid")  # the business transaction now holds its locks
        t = time.monotonic()
        dup = backend.store(b).claim(b, "k-mid", FP)
        waited = time.monotonic() - t
        assert dup.decision["decision"] == "in_progress"
        assert dup.http is not None and dup.http["status"] == 409 and dup.http["retry_after_s"] >= 1
        assert waited < 1.0, f"the duplicate waited {waited:.2f}s"
        first.complete({"status": 200, "headers": [], "body": None})
    assert backend.store(b).claim(b, "k-mid", FP).decision["decision"] == "replay"
    mismatch = backend.store(b).claim(b, "k-mid", "ff" * 32)
    assert mismatch.http is not None and mismatch.http["status"] == 422
    backend.close(a)
    backend.close(b)


def test_a_dead_worker_loses_the_key_and_its_stale_completion_is_refused(backend: Backend) -> None:
    a, b = backend.connect(), backend.connect()
    store = backend.store(a, lease=1)
    dead = store.claim(a, "k-dead", FP, now_ms=T0)
    assert dead.executes and dead.fence == 1
    # Still held while the lease runs.
    assert store.claim(b, "k-dead", FP, now_ms=T0 + 999).decision["decision"] == "in_progress"
    taker = store.claim(b, "k-dead", FP, now_ms=T0 + 1000)
    assert taker.executes and taker.fence == 2 and taker.decision["reason"] == "takeover"
    assert taker.record is not None and taker.record["created_ms"] == T0
    # The first worker wakes up: its business writes roll back with its refused completion.
    with pytest.raises(retrycore.FenceError) as e:
        with dead.transaction():
            backend.order(a, "o-stale")
            dead.complete({"status": 201, "headers": [], "body": None}, now_ms=T0 + 1500)
    assert e.value.code == "stale_fence"
    assert not dead.renew(now_ms=T0 + 1500)
    assert not dead.release(now_ms=T0 + 1500)
    with taker.transaction():
        backend.order(b, "o-taker")
        taker.complete({"status": 201, "headers": [], "body": None}, now_ms=T0 + 1600)
    assert backend.orders(b) == ([] if backend.name == "redis" else ["o-taker"])
    backend.close(a)
    backend.close(b)


def test_a_completion_from_before_a_cleanup_is_refused(backend: Backend) -> None:
    """The incarnation check: after a deletion the fence starts again at 1, created_ms does not."""
    conn = backend.connect()
    store = backend.store(conn, lease=1, retention=1)
    old = store.claim(conn, "k-aba", FP, now_ms=T0)
    if isinstance(store, stores.SqlStore):
        assert store.cleanup(conn, now_ms=T0 + 5000) == 1
    else:
        conn.delete(f"{store.prefix}:k-aba")  # Redis: the key's TTL does the cleanup
    new = store.claim(conn, "k-aba", FP, now_ms=T0 + 5000)
    assert (old.fence, new.fence) == (1, 1)
    with pytest.raises(retrycore.FenceError):
        with old.transaction():
            old.complete(None, now_ms=T0 + 5001)
    with new.transaction():
        new.complete(None, now_ms=T0 + 5002)
    backend.close(conn)


def test_renew_and_release(backend: Backend) -> None:
    conn = backend.connect()
    store = backend.store(conn, lease=10)
    c = store.claim(conn, "k-renew", FP, now_ms=T0)
    assert c.renew(now_ms=T0 + 5000)
    assert c.record is not None and c.record["lease_until_ms"] == T0 + 15000
    assert store.claim(conn, "k-renew", FP, now_ms=T0 + 12000).decision["decision"] == "in_progress"
    assert c.release(now_ms=T0 + 13000)
    again = store.claim(conn, "k-renew", FP, now_ms=T0 + 13000)
    assert again.executes and again.fence == 2
    backend.close(conn)


@pytest.mark.parametrize("backend", ["sqlite", "postgresql", "mariadb"], indirect=True)
def test_cleanup_deletes_only_expired_records(backend: Backend) -> None:
    conn = backend.connect()
    store = backend.store(conn)
    assert isinstance(store, stores.SqlStore)
    base = {"fingerprint": FP, "state": "succeeded", "fence": 1, "created_ms": T0, "lease_until_ms": T0,
            "completed_ms": T0, "response": None, "failure_category": None}
    for i, expires in enumerate([T0 + 10, T0 + 20, T0 + 30, T0 + 31, T0 + 1000]):
        backend.put(conn, store, dict(base, key=f"k-{i}", expires_at_ms=expires))
    assert store.cleanup(conn, now_ms=T0 + 30, batch=2) == 3  # two batches; expires_at <= now
    left = [store.claim(conn, f"k-{i}", FP, now_ms=T0 + 30).decision["decision"] for i in range(5)]
    assert left == ["execute", "execute", "execute", "replay", "replay"]
    backend.close(conn)


# ---------------------------------------------------------------- the async API

async def _aconnect(backend: Backend) -> Any:
    """psycopg's AsyncConnection and redis.asyncio; SQLite and PyMySQL have no async driver
    here, so their async API runs the sync connection in a thread."""
    if backend.name == "postgresql":
        import psycopg
        return await psycopg.AsyncConnection.connect(backend.url)
    if backend.name == "redis":
        import redis.asyncio
        return redis.asyncio.Redis.from_url(backend.url)
    return backend.connect()


async def _aclose(conn: Any) -> None:
    closed = conn.aclose() if hasattr(conn, "aclose") else conn.close()
    if closed is not None and hasattr(closed, "__await__"):
        await closed


async def _aorder(backend: Backend, conn: Any, oid: str) -> None:
    if backend.name == "postgresql":
        await conn.execute("INSERT INTO orders (id) VALUES (%s)", [oid])
    elif backend.name != "redis":
        await asyncio.to_thread(backend.order, conn, oid)


def test_async_requests_with_one_key_execute_once(backend: Backend) -> None:
    executions: List[int] = []

    async def request(i: int) -> str:
        conn = await _aconnect(backend)
        try:
            store = backend.store(conn, lease=30)
            claim = await store.aclaim(conn, "order-9:charge:v1", FP)
            if not claim.executes:
                return str(claim.decision["decision"])
            async with claim.atransaction():
                executions.append(i)
                await _aorder(backend, conn, "order-9")
                await asyncio.sleep(0.2)
                await claim.acomplete({"status": 201, "headers": [], "body": {"id": 9}})
            return "executed"
        finally:
            await _aclose(conn)

    async def main() -> List[Any]:
        return list(await asyncio.gather(*(request(i) for i in range(10)), return_exceptions=True))

    results = asyncio.run(main())
    assert [r for r in results if isinstance(r, BaseException)] == []
    assert len(executions) == 1 and results.count("executed") == 1
    conn = backend.connect()
    assert backend.orders(conn) == ([] if backend.name == "redis" else ["order-9"])
    backend.close(conn)


def test_async_stale_completion_is_refused(backend: Backend) -> None:
    async def main() -> None:
        a, b = await _aconnect(backend), await _aconnect(backend)
        store = backend.store(a, lease=1)
        dead = await store.aclaim(a, "k-adead", FP, now_ms=T0)
        taker = await store.aclaim(b, "k-adead", FP, now_ms=T0 + 1000)
        assert (dead.fence, taker.fence) == (1, 2)
        with pytest.raises(retrycore.FenceError):
            async with dead.atransaction():
                await _aorder(backend, a, "o-astale")
                await dead.acomplete(None, now_ms=T0 + 1100)
        assert not await dead.arenew(now_ms=T0 + 1100)
        assert await taker.arenew(now_ms=T0 + 1100)
        async with taker.atransaction():
            await _aorder(backend, b, "o-ataker")
            await taker.acomplete(None, now_ms=T0 + 1200)
        await _aclose(a)
        await _aclose(b)

    asyncio.run(main())
    conn = backend.connect()
    assert backend.orders(conn) == ([] if backend.name == "redis" else ["o-ataker"])
    backend.close(conn)


def test_the_redis_store_refuses_an_evicting_server(servers: Dict[str, str]) -> None:
    import redis

    client = redis.Redis.from_url(servers["redis"], decode_responses=True)
    store = stores.RedisStore(client)
    store.check_server()  # the test server runs with noeviction
    client.config_set("maxmemory-policy", "allkeys-lru")
    try:
        with pytest.raises(retrycore.ConfigError) as e:
            store.check_server()
        assert (e.value.code, e.value.field) == ("invalid_value", "maxmemory-policy")
    finally:
        client.config_set("maxmemory-policy", "noeviction")

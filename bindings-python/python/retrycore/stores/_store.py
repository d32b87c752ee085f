"""The stores: each runs the core's statements (``_protocol.PROTOCOL``) with the host's
own driver, and asks the core (`decide`, `complete`, `renew_lease`) what every answer means.

The two steps of docs/idempotency.md ("Stores"): `store.claim(conn, key, fingerprint)`
commits the claim in its own short transaction, so a concurrent duplicate sees
`processing` at once; then `with claim.transaction(): ...; claim.complete(response)` commits
the business writes and the fenced completion together, and rolls both back when the
completion is refused (another request took over).

Each step is written once, as a generator that yields the I/O it needs (`_Io`: run a
statement, commit, roll back, call a script) and receives the result; `Store._drive`
performs them with a sync driver and `Store._adrive` with an async one, so the sync and
async APIs share every decision.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import threading
import time
from contextlib import asynccontextmanager, contextmanager
from typing import (Any, AsyncIterator, Dict, Generator, Iterator, List, Mapping, Optional, Sequence, Tuple,
                    Union)

from .. import _native
from . import _protocol as P


def _now_ms() -> int:
    return int(time.time() * 1000)


def _now_or(now_ms: Optional[int]) -> int:
    return _now_ms() if now_ms is None else int(now_ms)


def _native_error(code: str, field: str, why: str, cls: Optional[str] = None) -> Exception:
    """The error the core's error tables give `code` (of the class `cls`, default fence or state)."""
    from .._errors import _from_core
    if cls is None:
        cls = "fence" if code in ("stale_fence", "fence_from_future") else "state"
    return _from_core(code, field, why, cls)


class _Io:
    """One I/O request of a step: `kind` is run, commit, rollback or script."""

    __slots__ = ("kind", "op", "values", "skey")

    def __init__(self, kind: str, op: str = "", values: Optional[Mapping[str, Any]] = None, skey: str = "") -> None:
        self.kind, self.op, self.values, self.skey = kind, op, values or {}, skey


class _Result:
    """What a statement gave back: its rows and its count of changed rows."""

    __slots__ = ("rows", "rowcount")

    def __init__(self, rows: List[Any], rowcount: int) -> None:
        self.rows, self.rowcount = rows, rowcount


# A step: yields I/O requests, receives their results, returns its value.
_Step = Generator[_Io, Any, Any]


class Claim:
    """What `claim()` got: the core's decision, and for an executing request the
    fenced claim that `transaction()`, `complete()`, `renew()` and `release()` act on."""

    def __init__(self, store: "Store", conn: Any, key: str, storage_key: str, decision: Dict[str, Any],
                 record: Optional[Dict[str, Any]]) -> None:
        self.store = store
        self.conn = conn
        self.key = key
        self.storage_key = storage_key
        #: The core's decision (``decide``'s dict: ``decision``, ``http``, ...).
        self.decision = decision
        #: The stored record: the claim while executing, the found record otherwise.
        self.record = record
        self.completed = False

    @property
    def executes(self) -> bool:
        """Whether this request holds the key and runs."""
        return bool(self.decision["decision"] == "execute")

    @property
    def http(self) -> Optional[Dict[str, Any]]:
        """The HTTP answer of a request that does not run (409, 422/400), else None."""
        h = self.decision.get("http")
        return None if h is None else dict(h)

    @property
    def fence(self) -> int:
        """The fencing token of the claim."""
        return int(self._held()["fence"])

    def _held(self) -> Dict[str, Any]:
        if not self.executes or self.record is None:
            raise _native_error("invalid_state", "claim", "this request does not hold the key: check claim.executes")
        return self.record

    def _end(self, failed: bool) -> _Step:
        if failed:
            yield _Io("rollback")
            return None
        if not self.completed:
            yield _Io("rollback")
            raise _native_error("invalid_state", "claim", "the transaction ended without claim.complete()")
        yield _Io("commit")
        return None

    @contextmanager
    def transaction(self) -> Iterator["Claim"]:
        """The business transaction: commits when the block ends after `complete()`,
        rolls back on an exception (a refused completion included)."""
        self._held()
        try:
            yield self
        except BaseException:
            self.store._drive(self.conn, self._end(True))
            raise
        self.store._drive(self.conn, self._end(False))

    @asynccontextmanager
    async def atransaction(self) -> AsyncIterator["Claim"]:
        """`transaction()` for an async driver (or a sync one, run in a thread)."""
        self._held()
        try:
            yield self
        except BaseException:
            await self.store._adrive(self.conn, self._end(True))
            raise
        await self.store._adrive(self.conn, self._end(False))

    def _complete(self, response: Optional[Mapping[str, Any]], failure_category: Optional[str],
                  now_ms: Optional[int]) -> _Step:
        held = self._held()
        outcome: Dict[str, Any] = {"state": "succeeded" if failure_category is None else "failed",
                                   "response": None if response is None else dict(response)}
        if failure_category is not None:
            outcome["category"] = failure_category
        done = _native.complete(held, held["fence"], outcome, _now_or(now_ms), self.store.config)
        if not (yield from self.store._complete(self.storage_key, done)):
            yield from self.store._refuse(self.storage_key, held)
        self.completed = True
        self.record = done
        return done

    def complete(self, response: Optional[Mapping[str, Any]] = None, *, failure_category: Optional[str] = None,
                 now_ms: Optional[int] = None) -> Dict[str, Any]:
        """Stores the outcome with the fencing check: succeeded, or failed with
        `failure_category`. Raises the core's `FenceError` when the claim was lost."""
        done: Dict[str, Any] = self.store._drive(self.conn, self._complete(response, failure_category, now_ms))
        return done

    async def acomplete(self, response: Optional[Mapping[str, Any]] = None, *,
                        failure_category: Optional[str] = None, now_ms: Optional[int] = None) -> Dict[str, Any]:
        """`complete()` for an async driver."""
        done: Dict[str, Any] = await self.store._adrive(self.conn, self._complete(response, failure_category, now_ms))
        return done

    def _renew(self, now_ms: Optional[int]) -> _Step:
        held = self._held()
        renewed = _native.renew_lease(held, held["fence"], _now_or(now_ms), self.store.config)
        ok = yield from self.store._renew(self.storage_key, renewed, held)
        if ok:
            self.record = renewed
        return ok

    def renew(self, conn: Any = None, now_ms: Optional[int] = None) -> bool:
        """Extends the lease (a heartbeat; use another connection than the business
        transaction's). False when the claim was lost."""
        return bool(self.store._drive(self.conn if conn is None else conn, self._renew(now_ms)))

    async def arenew(self, conn: Any = None, now_ms: Optional[int] = None) -> bool:
        """`renew()` for an async driver."""
        return bool(await self.store._adrive(self.conn if conn is None else conn, self._renew(now_ms)))

    def release(self, conn: Any = None, now_ms: Optional[int] = None) -> bool:
        """Ends the lease without storing an outcome (nothing ran): the next request
        takes over with fence + 1. False when the claim was lost."""
        step = self.store._release(self.storage_key, self._held(), _now_or(now_ms))
        return bool(self.store._drive(self.conn if conn is None else conn, step))

    async def arelease(self, conn: Any = None, now_ms: Optional[int] = None) -> bool:
        """`release()` for an async driver."""
        step = self.store._release(self.storage_key, self._held(), _now_or(now_ms))
        return bool(await self.store._adrive(self.conn if conn is None else conn, step))


class Store:
    """The parts every store shares: the record configuration and the steps."""

    def __init__(self, *, lease: Optional[float] = None, retention: Optional[float] = None,
                 failure_handling: Optional[str] = None, release_categories: Optional[Sequence[str]] = None,
                 stripe: bool = False) -> None:
        d = P.PROTOCOL["defaults"]
        self.config = _native.RecordConfig(
            lease=d["lease_ms"] / 1000 if lease is None else lease,
            retention=d["retention_ms"] / 1000 if retention is None else retention,
            stripe=stripe, failure_handling=failure_handling, release_categories=release_categories)
        self._release_params = P.release_params(failure_handling, release_categories)

    # ---------------------------------------------------------------- the steps

    def _claim_step(self, key: str, fingerprint: str, now: int) -> _Step:
        fresh = _native.decide(None, key, fingerprint, now, self.config)
        skey = _native.storage_key(key, P.PROTOCOL["key_max_len"])
        values: Dict[str, Any] = {
            "storage_key": skey, "key": key, "fingerprint": fingerprint, "now": now,
            "lease_until_ms": fresh["lease_until_ms"], "expires_at_ms": fresh["expires_at_ms"],
            **self._release_params,
        }
        for _ in range(3):
            # A read first: a duplicate is answered without waiting on a write lock (SQLite
            # has one writer per file; PostgreSQL's upsert locks the row it does not update),
            # and an execute decision names the reason the claim's own result cannot tell.
            found = yield from self._read(skey)
            yield _Io("commit")
            ahead = _native.decide(found, key, fingerprint, now, self.config)
            if ahead["decision"] != "execute":
                return skey, ahead, found
            got = yield from self._claim(values)
            if got is not None:
                fence, created = got
                record = dict(fresh["record"], fence=fence, created_ms=created)
                decision = dict(fresh, fence=fence, created_ms=created, record=record)
                if fence == ahead["fence"]:
                    decision["reason"] = ahead["reason"]
                else:  # someone else changed the record in between
                    decision["reason"] = "new" if fence == 1 else "expired" if created == now else "takeover"
                return skey, decision, record
            current = yield from self._read(skey)
            yield _Io("commit")
            if current is not None:
                d = _native.decide(current, key, fingerprint, now, self.config)
                if d["decision"] != "execute":
                    return skey, d, current
            # The row changed between the claim and the read (deleted, or its lease ended): again.
        raise _native_error("invalid_state", "claim", "the record kept changing under the claim")

    def claim(self, conn: Any, key: str, fingerprint: str, now_ms: Optional[int] = None) -> Claim:
        """Claims `key` for a request with `fingerprint`, committing at once; see `Claim`."""
        skey, decision, record = self._drive(conn, self._claim_step(key, fingerprint, _now_or(now_ms)))
        return Claim(self, conn, key, skey, decision, record)

    async def aclaim(self, conn: Any, key: str, fingerprint: str, now_ms: Optional[int] = None) -> Claim:
        """`claim()` for an async driver (psycopg's `AsyncConnection`, `redis.asyncio`), or a
        sync one run in a thread; then use the claim's `atransaction()`, `acomplete()`, ...."""
        skey, decision, record = await self._adrive(conn, self._claim_step(key, fingerprint, _now_or(now_ms)))
        return Claim(self, conn, key, skey, decision, record)

    def _refuse(self, skey: str, held: Mapping[str, Any]) -> _Step:
        current = yield from self._read(skey)
        if current is not None and int(current["created_ms"]) == int(held["created_ms"]):
            # The same incarnation: the core says why (stale_fence, fence_from_future, invalid_state).
            _native.complete(current, held["fence"], {"state": "succeeded"}, _now_ms(), self.config)
        raise _native_error("stale_fence", "fence", f"{held['fence']} no longer holds the key: "
                            "the record was deleted or claimed anew")

    # Each store writes these as steps.
    def _claim(self, values: Mapping[str, Any]) -> _Step:
        raise NotImplementedError

    def _read(self, skey: str) -> _Step:
        raise NotImplementedError

    def _complete(self, skey: str, done: Mapping[str, Any]) -> _Step:
        raise NotImplementedError

    def _renew(self, skey: str, renewed: Mapping[str, Any], held: Mapping[str, Any]) -> _Step:
        raise NotImplementedError

    def _release(self, skey: str, held: Mapping[str, Any], now: int) -> _Step:
        raise NotImplementedError

    # ---------------------------------------------------------------- drivers

    def _perform(self, conn: Any, io: _Io) -> Any:
        raise NotImplementedError

    async def _aperform(self, conn: Any, io: _Io) -> Any:
        # A sync driver from async code: the call runs in a thread of its own, not in the
        # loop's shared pool, where calls waiting on a lock could take every thread from
        # the call that would release it.
        loop = asyncio.get_running_loop()
        done: "asyncio.Future[Any]" = loop.create_future()

        def settle(value: Any, error: Optional[BaseException]) -> None:
            if done.cancelled():
                return
            if error is not None:
                done.set_exception(error)
            else:
                done.set_result(value)

        def run() -> None:
            try:
                value = self._perform(conn, io)
            except BaseException as e:
                loop.call_soon_threadsafe(settle, None, e)
            else:
                loop.call_soon_threadsafe(settle, value, None)

        threading.Thread(target=run, name="retrycore-store", daemon=True).start()
        return await done

    def _drive(self, conn: Any, step: _Step) -> Any:
        try:
            io = next(step)
            while True:
                try:
                    got = self._perform(conn, io)
                except BaseException as e:
                    io = step.throw(e)
                else:
                    io = step.send(got)
        except StopIteration as stop:
            return stop.value

    async def _adrive(self, conn: Any, step: _Step) -> Any:
        try:
            io = next(step)
            while True:
                try:
                    got = await self._aperform(conn, io)
                except BaseException as e:
                    io = step.throw(e)
                else:
                    io = step.send(got)
        except StopIteration as stop:
            return stop.value


class SqlStore(Store):
    """A store on a SQL database through a DB-API connection (`sqlite3`, psycopg 3, PyMySQL).

    The connection is the caller's, in the driver's default (non-autocommit) mode: the
    store commits after the claim, and `Claim.transaction()` commits the business writes
    with the completion.
    """

    dialect = ""
    style = ""

    def _cursor(self, conn: Any) -> Any:
        return conn.cursor()

    def _execute(self, conn: Any, io: _Io) -> _Result:
        text, names = P.statement(self.dialect, io.op, self.style)
        cur = self._cursor(conn)
        cur.execute(text, P.bind(names, io.values))
        rows = cur.fetchall() if cur.description is not None else []
        return _Result(rows, int(cur.rowcount))

    def _perform(self, conn: Any, io: _Io) -> Any:
        if io.kind == "run":
            try:
                return self._execute(conn, io)
            except BaseException:
                conn.rollback()
                raise
        if io.kind == "commit":
            conn.commit()
        elif io.kind == "rollback":
            conn.rollback()
        return None

    def create_schema(self, conn: Any) -> None:
        """Creates the table and its index when absent (the protocol's schema)."""
        cur = self._cursor(conn)
        for text in P.PROTOCOL["dialects"][self.dialect]["schema"]:
            cur.execute(text)
        conn.commit()

    def _claim(self, values: Mapping[str, Any]) -> _Step:
        got = yield _Io("run", "claim", values)
        yield _Io("commit")
        return (int(got.rows[0][0]), int(got.rows[0][1])) if got.rows else None

    def _read(self, skey: str) -> _Step:
        got = yield _Io("run", "read", {"storage_key": skey})
        return P.from_row(dict(zip(P.column_names(), got.rows[0])))[0] if got.rows else None

    def _complete(self, skey: str, done: Mapping[str, Any]) -> _Step:
        got = yield _Io("run", "complete", P.to_row(done, skey))
        return got.rowcount == 1

    def _still_held(self, skey: str, held: Mapping[str, Any]) -> _Step:
        # Zero changed rows may also mean "nothing to change" (MySQL without CLIENT_FOUND_ROWS): re-read.
        cur = yield from self._read(skey)
        yield _Io("commit")
        return cur is not None and cur["state"] == "processing" and \
            (cur["fence"], cur["created_ms"]) == (held["fence"], held["created_ms"])

    def _held_values(self, skey: str, held: Mapping[str, Any], **more: Any) -> Dict[str, Any]:
        return {"storage_key": skey, "fence": held["fence"], "created_ms": held["created_ms"], **more}

    def _renew(self, skey: str, renewed: Mapping[str, Any], held: Mapping[str, Any]) -> _Step:
        values = self._held_values(skey, held, lease_until_ms=renewed["lease_until_ms"],
                                   expires_at_ms=renewed["expires_at_ms"])
        got = yield _Io("run", "renew", values)
        yield _Io("commit")
        return got.rowcount == 1 or (yield from self._still_held(skey, held))

    def _release(self, skey: str, held: Mapping[str, Any], now: int) -> _Step:
        got = yield _Io("run", "release", self._held_values(skey, held, now=now))
        yield _Io("commit")
        return got.rowcount == 1 or (yield from self._still_held(skey, held))

    def _cleanup(self, now: int, batch: int) -> _Step:
        total = 0
        while True:
            got = yield _Io("run", "cleanup", {"now": now, "limit": batch})
            yield _Io("commit")
            total += got.rowcount
            if got.rowcount < batch:
                return total

    def cleanup(self, conn: Any, now_ms: Optional[int] = None, batch: int = 500) -> int:
        """Deletes expired records (``expires_at_ms <= now``) in batches of `batch`; returns how many."""
        return int(self._drive(conn, self._cleanup(_now_or(now_ms), batch)))

    async def acleanup(self, conn: Any, now_ms: Optional[int] = None, batch: int = 500) -> int:
        """`cleanup()` for an async driver."""
        return int(await self._adrive(conn, self._cleanup(_now_or(now_ms), batch)))


class SqliteStore(SqlStore):
    """SQLite through Python's `sqlite3` (no install needed): the default store.

    SQLite has one writer per file: a duplicate is answered from a read first, which a
    running business transaction does not block; see `connect()` for the connection it
    needs. Its async API runs the calls in a thread.
    """

    dialect = "sqlite"
    style = "qmark"

    @staticmethod
    def connect(path: str, timeout: float = 30.0) -> Any:
        """A connection the store can use: writes begin ``IMMEDIATE`` transactions, waits up to `timeout` for the lock."""
        import sqlite3
        return sqlite3.connect(path, timeout=timeout, isolation_level="IMMEDIATE", check_same_thread=False)


class PostgresStore(SqlStore):
    """PostgreSQL through psycopg 3 (`Connection`, or `AsyncConnection` with the async API);
    the statements' ``$n`` placeholders run on its raw cursors."""

    dialect = "postgresql"
    style = "numbered"

    def _cursor(self, conn: Any) -> Any:
        return importlib.import_module("psycopg").RawCursor(conn)

    async def _aperform(self, conn: Any, io: _Io) -> Any:
        psycopg = importlib.import_module("psycopg")
        if not isinstance(conn, psycopg.AsyncConnection):
            return await super()._aperform(conn, io)
        if io.kind == "commit":
            await conn.commit()
            return None
        if io.kind == "rollback":
            await conn.rollback()
            return None
        text, names = P.statement(self.dialect, io.op, self.style)
        try:
            cur = psycopg.AsyncRawCursor(conn)
            await cur.execute(text, P.bind(names, io.values))
            rows = await cur.fetchall() if cur.description is not None else []
        except BaseException:
            await conn.rollback()
            raise
        return _Result(rows, int(cur.rowcount))


class MariaDBStore(SqlStore):
    """MariaDB or MySQL through PyMySQL (``%s`` placeholders): a plain insert, then on a
    duplicate key a conditional update, as the protocol's ``claim_steps`` say. Its async
    API runs the calls in a thread."""

    dialect = "mysql"
    style = "format"
    _DUPLICATE_KEY = 1062
    _RETRY = (1205, 1213)  # ER_LOCK_WAIT_TIMEOUT, ER_LOCK_DEADLOCK

    def _perform(self, conn: Any, io: _Io) -> Any:
        if io.kind == "insert":
            # The insert's duplicate-key error is an answer, not a failure.
            err = importlib.import_module("pymysql").err
            try:
                self._execute(conn, _Io("run", "claim_insert", io.values))
            except err.IntegrityError as e:
                conn.rollback()  # the duplicate's shared lock goes before the update takes its own
                if not e.args or e.args[0] != self._DUPLICATE_KEY:
                    raise
                return False
            conn.commit()
            return True
        return super()._perform(conn, io)

    def _claim(self, values: Mapping[str, Any]) -> _Step:
        if (yield _Io("insert", values=values)):
            return (1, int(values["now"]))
        try:
            got = yield _Io("run", "claim_update", values)
        except Exception as e:
            # A deadlock or a lock wait timeout (InnoDB picked this claim as the victim; it was
            # rolled back): not claimed; the claim loop reads and tries again.
            if e.args and e.args[0] in self._RETRY:
                return None
            raise
        if got.rowcount != 1:
            yield _Io("commit")
            return None
        row = yield from self._read(str(values["storage_key"]))
        yield _Io("commit")
        return None if row is None else (int(row["fence"]), int(row["created_ms"]))


class RedisStore(Store):
    """Redis 7 through redis-py (`redis.Redis`, or `redis.asyncio.Redis` with the async
    API), with the protocol's Lua scripts (EVALSHA, loading them on NOSCRIPT). The
    connection argument of `claim()` is ignored: the store holds its client.

    Redis cannot share a transaction with a SQL business write: `Claim.transaction()`
    only groups the completion, and a crash after the business commit and before
    `complete()` leaves the claim to be taken over (the handler runs again). The
    server needs ``maxmemory-policy noeviction``: an evicted claim breaks exactly-once.
    """

    def __init__(self, client: Any, prefix: str = "idempotency", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.client = client
        self.prefix = prefix
        scripts = P.PROTOCOL["redis"]["scripts"]
        self._scripts = {op: (client.register_script(s["lua"]), s["args"]) for op, s in scripts.items()}
        self._slack = P.PROTOCOL["redis"]["slack_ms"]

    def check_server(self) -> None:
        """Raises `ConfigError` when the server may evict records: its ``maxmemory-policy`` is
        not the protocol's (``noeviction``). Servers that refuse ``CONFIG GET`` (some managed
        offerings) pass: check their settings by hand. For a sync client."""
        want = P.PROTOCOL["redis"]["maxmemory_policy"]
        try:
            got = self.client.config_get("maxmemory-policy").get("maxmemory-policy")
        except importlib.import_module("redis").exceptions.ResponseError:
            return
        if got is not None and got != want:
            raise _native_error("invalid_value", "maxmemory-policy",
                                f"is {got!r}: records may be evicted; the store needs {want!r}", "config")

    def _key(self, skey: str) -> str:
        return f"{self.prefix}:{skey}"

    def _call(self, io: _Io) -> Any:
        if io.kind == "read":
            return self.client.hgetall(self._key(io.skey))
        if io.kind != "script":
            return None
        script, names = self._scripts[io.op]
        args = ["" if v is None else v for v in P.bind(names, dict(io.values, slack_ms=self._slack))]
        return script(keys=[self._key(io.skey)], args=args)

    def _perform(self, conn: Any, io: _Io) -> Any:
        return self._call(io)

    async def _aperform(self, conn: Any, io: _Io) -> Any:
        if not asyncio.iscoroutinefunction(getattr(self.client, "execute_command", None)):
            return await super()._aperform(conn, io)  # a sync client: in a thread, off the loop
        got = self._call(io)
        return await got if inspect.isawaitable(got) else got

    def _record_of(self, skey: str, fields: Union[Mapping[Any, Any], Sequence[Any]]) -> Optional[Dict[str, Any]]:
        flat: List[Any] = list(fields) if not isinstance(fields, Mapping) else \
            [x for kv in fields.items() for x in kv]
        if not flat:
            return None
        text = [x.decode() if isinstance(x, bytes) else str(x) for x in flat]
        row: Dict[str, Any] = dict(zip(text[0::2], text[1::2]))
        row["storage_key"] = skey
        return P.from_row(row)[0]

    def _claim(self, values: Mapping[str, Any]) -> _Step:
        got = yield _Io("script", "claim", values, str(values["storage_key"]))
        return (int(got[1]), int(got[2])) if int(got[0]) == 1 else None

    def _read(self, skey: str) -> _Step:
        got = yield _Io("read", skey=skey)
        return self._record_of(skey, got)

    def _complete(self, skey: str, done: Mapping[str, Any]) -> _Step:
        got = yield _Io("script", "complete", P.to_row(done, skey), skey)
        return int(got) == 1

    def _renew(self, skey: str, renewed: Mapping[str, Any], held: Mapping[str, Any]) -> _Step:
        values = {"fence": held["fence"], "created_ms": held["created_ms"],
                  "lease_until_ms": renewed["lease_until_ms"], "expires_at_ms": renewed["expires_at_ms"]}
        got = yield _Io("script", "renew", values, skey)
        return int(got) == 1

    def _release(self, skey: str, held: Mapping[str, Any], now: int) -> _Step:
        values = {"fence": held["fence"], "created_ms": held["created_ms"], "now": now}
        got = yield _Io("script", "release", values, skey)
        return int(got) == 1

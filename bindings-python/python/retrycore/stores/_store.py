"""The stores: each runs the core's statements (``_protocol.PROTOCOL``) with the host's
own driver, and asks the core (`decide`, `complete`, `renew_lease`) what every answer means.

The two steps of docs/idempotency.md ("Stores"): `store.claim(conn, key, fingerprint)`
commits the claim in its own short transaction, so a concurrent duplicate sees
`processing` at once; then `with claim.transaction(): ...; claim.complete(response)` commits
the business writes and the fenced completion together, and rolls both back when the
completion is refused (another request took over).
"""

from __future__ import annotations

import importlib
import time
from contextlib import contextmanager
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple

from .. import _native
from . import _protocol as P


def _now_ms() -> int:
    return int(time.time() * 1000)


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
            raise _native_state_error("this request does not hold the key: check claim.executes first")
        return self.record

    @contextmanager
    def transaction(self) -> Iterator["Claim"]:
        """The business transaction: commits when the block ends after `complete()`,
        rolls back on an exception (a refused completion included)."""
        self._held()
        try:
            yield self
        except BaseException:
            self.store._rollback(self.conn)
            raise
        if not self.completed:
            self.store._rollback(self.conn)
            raise _native_state_error("the transaction ended without claim.complete()")
        self.store._commit(self.conn)

    def complete(self, response: Optional[Mapping[str, Any]] = None, *, failure_category: Optional[str] = None,
                 now_ms: Optional[int] = None) -> Dict[str, Any]:
        """Stores the outcome with the fencing check: succeeded, or failed with
        `failure_category`. Raises the core's `FenceError` when the claim was lost."""
        held = self._held()
        outcome: Dict[str, Any] = {"state": "succeeded" if failure_category is None else "failed",
                                   "response": None if response is None else dict(response)}
        if failure_category is not None:
            outcome["category"] = failure_category
        done = _native.complete(held, held["fence"], outcome, _now_or(now_ms), self.store.config)
        if not self.store._complete(self.conn, self.storage_key, done):
            self.store._refuse(self.conn, self.storage_key, held)
        self.completed = True
        self.record = done
        return done

    def renew(self, conn: Any = None, now_ms: Optional[int] = None) -> bool:
        """Extends the lease (a heartbeat; use another connection than the business
        transaction's). False when the claim was lost."""
        held = self._held()
        renewed = _native.renew_lease(held, held["fence"], _now_or(now_ms), self.store.config)
        ok = self.store._renew(conn if conn is not None else self.conn, self.storage_key, renewed, held)
        if ok:
            self.record = renewed
        return ok

    def release(self, conn: Any = None, now_ms: Optional[int] = None) -> bool:
        """Ends the lease without storing an outcome (nothing ran): the next request
        takes over with fence + 1. False when the claim was lost."""
        held = self._held()
        return self.store._release(conn if conn is not None else self.conn, self.storage_key, held,
                                   _now_or(now_ms))


def _now_or(now_ms: Optional[int]) -> int:
    return _now_ms() if now_ms is None else int(now_ms)


def _native_state_error(why: str) -> Exception:
    return _native_error("invalid_state", "claim", why)


def _native_error(code: str, field: str, why: str) -> Exception:
    from .._errors import _from_core
    return _from_core(code, field, why, "fence" if code in ("stale_fence", "fence_from_future") else "state")


class Store:
    """The parts every store shares: the record configuration and the decision steps."""

    def __init__(self, *, lease: Optional[float] = None, retention: Optional[float] = None,
                 failure_handling: Optional[str] = None, release_categories: Optional[Sequence[str]] = None,
                 stripe: bool = False) -> None:
        d = P.PROTOCOL["defaults"]
        self.config = _native.RecordConfig(
            lease=d["lease_ms"] / 1000 if lease is None else lease,
            retention=d["retention_ms"] / 1000 if retention is None else retention,
            stripe=stripe, failure_handling=failure_handling, release_categories=release_categories)
        self._release_params = P.release_params(failure_handling, release_categories)

    def claim(self, conn: Any, key: str, fingerprint: str, now_ms: Optional[int] = None) -> Claim:
        """Claims `key` for a request with `fingerprint`, committing at once; see `Claim`."""
        now = _now_or(now_ms)
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
            found = self._read(conn, skey)
            self._commit(conn)
            ahead = _native.decide(found, key, fingerprint, now, self.config)
            if ahead["decision"] != "execute":
                return Claim(self, conn, key, skey, ahead, found)
            got = self._claim(conn, values)
            if got is not None:
                fence, created = got
                record = dict(fresh["record"], fence=fence, created_ms=created)
                decision = dict(fresh, fence=fence, created_ms=created, record=record)
                if fence == ahead["fence"]:
                    decision["reason"] = ahead["reason"]
                else:  # someone else changed the record in between
                    decision["reason"] = "new" if fence == 1 else "expired" if created == now else "takeover"
                return Claim(self, conn, key, skey, decision, record)
            current = self._read(conn, skey)
            if current is not None:
                d = _native.decide(current, key, fingerprint, now, self.config)
                if d["decision"] != "execute":
                    return Claim(self, conn, key, skey, d, current)
            # The row changed between the claim and the read (deleted, or its lease ended): again.
        raise _native_error("invalid_state", "claim", "the record kept changing under the claim")

    def _refuse(self, conn: Any, skey: str, held: Mapping[str, Any]) -> None:
        current = self._read(conn, skey)
        if current is not None and int(current["created_ms"]) == int(held["created_ms"]):
            # The same incarnation: the core says why (stale_fence, fence_from_future, invalid_state).
            _native.complete(current, held["fence"], {"state": "succeeded"}, _now_ms(), self.config)
        raise _native_error("stale_fence", "fence", f"{held['fence']} no longer holds the key: "
                            "the record was deleted or claimed anew")

    # Each store implements these.
    def _claim(self, conn: Any, values: Mapping[str, Any]) -> Optional[Tuple[int, int]]:
        raise NotImplementedError

    def _read(self, conn: Any, skey: str) -> Optional[Dict[str, Any]]:
        raise NotImplementedError

    def _complete(self, conn: Any, skey: str, done: Mapping[str, Any]) -> bool:
        raise NotImplementedError

    def _renew(self, conn: Any, skey: str, renewed: Mapping[str, Any], held: Mapping[str, Any]) -> bool:
        raise NotImplementedError

    def _release(self, conn: Any, skey: str, held: Mapping[str, Any], now: int) -> bool:
        raise NotImplementedError

    def _commit(self, conn: Any) -> None:
        pass

    def _rollback(self, conn: Any) -> None:
        pass


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

    def _run(self, conn: Any, op: str, values: Mapping[str, Any]) -> Any:
        text, names = P.statement(self.dialect, op, self.style)
        cur = self._cursor(conn)
        cur.execute(text, P.bind(names, values))
        return cur

    def _commit(self, conn: Any) -> None:
        conn.commit()

    def _rollback(self, conn: Any) -> None:
        conn.rollback()

    def create_schema(self, conn: Any) -> None:
        """Creates the table and its index when absent (the protocol's schema)."""
        cur = self._cursor(conn)
        for text in P.PROTOCOL["dialects"][self.dialect]["schema"]:
            cur.execute(text)
        conn.commit()

    def _claim(self, conn: Any, values: Mapping[str, Any]) -> Optional[Tuple[int, int]]:
        try:
            rows = self._run(conn, "claim", values).fetchall()
        except BaseException:
            conn.rollback()
            raise
        conn.commit()
        return (int(rows[0][0]), int(rows[0][1])) if rows else None

    def _read(self, conn: Any, skey: str) -> Optional[Dict[str, Any]]:
        cur = self._run(conn, "read", {"storage_key": skey})
        row = cur.fetchone()
        return None if row is None else P.from_row(dict(zip(P.column_names(), row)))[0]

    def _complete(self, conn: Any, skey: str, done: Mapping[str, Any]) -> bool:
        return bool(self._run(conn, "complete", P.to_row(done, skey)).rowcount == 1)

    def _held_values(self, skey: str, held: Mapping[str, Any]) -> Dict[str, Any]:
        return {"storage_key": skey, "fence": held["fence"], "created_ms": held["created_ms"]}

    def _still_held(self, conn: Any, skey: str, held: Mapping[str, Any]) -> bool:
        # Zero changed rows may also mean "nothing to change" (MySQL without CLIENT_FOUND_ROWS): re-read.
        cur = self._read(conn, skey)
        conn.commit()
        return cur is not None and cur["state"] == "processing" and \
            (cur["fence"], cur["created_ms"]) == (held["fence"], held["created_ms"])

    def _renew(self, conn: Any, skey: str, renewed: Mapping[str, Any], held: Mapping[str, Any]) -> bool:
        values = dict(self._held_values(skey, held), lease_until_ms=renewed["lease_until_ms"],
                      expires_at_ms=renewed["expires_at_ms"])
        n = self._run(conn, "renew", values).rowcount
        conn.commit()
        return n == 1 or self._still_held(conn, skey, held)

    def _release(self, conn: Any, skey: str, held: Mapping[str, Any], now: int) -> bool:
        n = self._run(conn, "release", dict(self._held_values(skey, held), now=now)).rowcount
        conn.commit()
        return n == 1 or self._still_held(conn, skey, held)

    def cleanup(self, conn: Any, now_ms: Optional[int] = None, batch: int = 500) -> int:
        """Deletes expired records (``expires_at_ms <= now``) in batches of `batch`; returns how many."""
        total = 0
        while True:
            n = int(self._run(conn, "cleanup", {"now": _now_or(now_ms), "limit": batch}).rowcount)
            conn.commit()
            total += n
            if n < batch:
                return total


class SqliteStore(SqlStore):
    """SQLite through Python's `sqlite3` (no install needed): the default store.

    SQLite has one writer per file: a duplicate is answered from a read first, which a
    running business transaction does not block; see `connect()` for the connection it needs.
    """

    dialect = "sqlite"
    style = "qmark"

    @staticmethod
    def connect(path: str, timeout: float = 30.0) -> Any:
        """A connection the store can use: writes begin ``IMMEDIATE`` transactions, waits up to `timeout` for the lock."""
        import sqlite3
        return sqlite3.connect(path, timeout=timeout, isolation_level="IMMEDIATE", check_same_thread=False)


class PostgresStore(SqlStore):
    """PostgreSQL through psycopg 3; the statements' ``$n`` placeholders run on its raw cursors."""

    dialect = "postgresql"
    style = "numbered"

    def _cursor(self, conn: Any) -> Any:
        return importlib.import_module("psycopg").RawCursor(conn)



class MariaDBStore(SqlStore):
    """MariaDB or MySQL through PyMySQL (``%s`` placeholders): a plain insert, then on a
    duplicate key a conditional update, as the protocol's ``claim_steps`` say."""

    dialect = "mysql"
    style = "format"
    _DUPLICATE_KEY = 1062

    def _claim(self, conn: Any, values: Mapping[str, Any]) -> Optional[Tuple[int, int]]:
        err = importlib.import_module("pymysql").err
        try:
            self._run(conn, "claim_insert", values)
            conn.commit()
            return (1, int(values["now"]))
        except err.IntegrityError as e:
            conn.rollback()  # the duplicate's shared lock goes before the update takes its own
            if not e.args or e.args[0] != self._DUPLICATE_KEY:
                raise
        try:
            if self._run(conn, "claim_update", values).rowcount != 1:
                conn.commit()
                return None
            row = self._read(conn, str(values["storage_key"]))
            conn.commit()
        except BaseException:
            conn.rollback()
            raise
        return None if row is None else (int(row["fence"]), int(row["created_ms"]))


class RedisStore(Store):
    """Redis 7 through redis-py, with the protocol's Lua scripts (EVALSHA, loading them on NOSCRIPT).

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

    def _key(self, skey: str) -> str:
        return f"{self.prefix}:{skey}"

    def _call(self, op: str, skey: str, values: Mapping[str, Any]) -> Any:
        script, names = self._scripts[op]
        args = ["" if v is None else v for v in P.bind(names, dict(values, slack_ms=self._slack))]
        return script(keys=[self._key(skey)], args=args)

    def _record_of(self, skey: str, flat: Sequence[Any]) -> Optional[Dict[str, Any]]:
        if not flat:
            return None
        text = [x.decode() if isinstance(x, bytes) else str(x) for x in flat]
        row: Dict[str, Any] = dict(zip(text[0::2], text[1::2]))
        row["storage_key"] = skey
        return P.from_row(row)[0]

    def _claim(self, conn: Any, values: Mapping[str, Any]) -> Optional[Tuple[int, int]]:
        got = self._call("claim", str(values["storage_key"]), values)
        return (int(got[1]), int(got[2])) if int(got[0]) == 1 else None

    def _read(self, conn: Any, skey: str) -> Optional[Dict[str, Any]]:
        return self._record_of(skey, _flatten(self.client.hgetall(self._key(skey))))

    def _complete(self, conn: Any, skey: str, done: Mapping[str, Any]) -> bool:
        return int(self._call("complete", skey, P.to_row(done, skey))) == 1

    def _renew(self, conn: Any, skey: str, renewed: Mapping[str, Any], held: Mapping[str, Any]) -> bool:
        values = {"fence": held["fence"], "created_ms": held["created_ms"],
                  "lease_until_ms": renewed["lease_until_ms"], "expires_at_ms": renewed["expires_at_ms"]}
        return int(self._call("renew", skey, values)) == 1

    def _release(self, conn: Any, skey: str, held: Mapping[str, Any], now: int) -> bool:
        values = {"fence": held["fence"], "created_ms": held["created_ms"], "now": now}
        return int(self._call("release", skey, values)) == 1


def _flatten(d: Mapping[Any, Any]) -> List[Any]:
    out: List[Any] = []
    for k, v in d.items():
        out += [k, v]
    return out

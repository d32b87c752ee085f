"""One store and how the suites reach its server (test set-up, not the protocol)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List
from urllib.parse import urlparse

import retrycore
from retrycore import stores
from retrycore.stores import _protocol as P


class Backend:
    """One store and how to open connections to its server, with test-only helpers."""

    def __init__(self, name: str, url: str, tmp: Path) -> None:
        self.name, self.url, self.tmp = name, url, tmp

    def connect(self) -> Any:
        if self.name == "sqlite":
            return stores.SqliteStore.connect(str(self.tmp / "records.db"))
        if self.name == "postgresql":
            import psycopg
            return psycopg.connect(self.url)
        if self.name == "mariadb":
            import pymysql
            u = urlparse(self.url)
            return pymysql.connect(host=u.hostname, port=u.port, user=u.username, database=u.path.lstrip("/"))
        import redis
        return redis.Redis.from_url(self.url)

    def store(self, conn: Any, **kw: Any) -> stores.Store:
        if self.name == "redis":
            return stores.RedisStore(conn, prefix=f"t{id(self)}", **kw)
        cls = {"sqlite": stores.SqliteStore, "postgresql": stores.PostgresStore, "mariadb": stores.MariaDBStore}
        return cls[self.name](**kw)

    def reset(self, conn: Any) -> None:
        """An empty record table and an empty business table (test set-up, not the protocol)."""
        if self.name == "redis":
            conn.flushdb()
            return
        cur = conn.cursor()
        for table in ("idempotency_records", "orders"):
            cur.execute(f"DROP TABLE IF EXISTS {table}")
        cur.execute("CREATE TABLE orders (id VARCHAR(64) PRIMARY KEY)")
        conn.commit()
        self.store(conn).create_schema(conn)  # type: ignore[attr-defined]

    def put(self, conn: Any, store: stores.Store, record: Dict[str, Any], under: str = "") -> None:
        """Stores a record as it is, under the storage key of `under` (default: its own key);
        test set-up: the protocol only claims and completes."""
        skey = retrycore.storage_key(under or record["key"], P.PROTOCOL["key_max_len"])
        row = P.to_row(record, skey)
        if self.name == "redis":
            fields = {k: str(v) for k, v in row.items() if v is not None and k != "storage_key"}
            conn.hset(f"{store.prefix}:{skey}", mapping=fields)  # type: ignore[attr-defined]
            return
        mark = {"sqlite": "?", "postgresql": "%s", "mariadb": "%s"}[self.name]
        cur = conn.cursor()
        cur.execute(f"INSERT INTO idempotency_records ({', '.join(row)}) VALUES ({', '.join([mark] * len(row))})",
                    list(row.values()))
        conn.commit()

    def order(self, conn: Any, oid: str) -> None:
        """A business write (inside the claim's transaction)."""
        if self.name != "redis":
            mark = "?" if self.name == "sqlite" else "%s"
            conn.cursor().execute(f"INSERT INTO orders (id) VALUES ({mark})", [oid])

    def orders(self, conn: Any) -> List[str]:
        if self.name == "redis":
            return []
        cur = conn.cursor()
        cur.execute("SELECT id FROM orders ORDER BY id")
        out = [r[0] for r in cur.fetchall()]
        conn.commit()
        return out

    def close(self, conn: Any) -> None:
        conn.close()

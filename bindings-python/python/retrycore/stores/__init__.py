"""Idempotency stores: SQLite (the default, Python's `sqlite3`), PostgreSQL (psycopg 3),
MariaDB/MySQL (PyMySQL) and Redis (redis-py), each running only the core's store protocol
(docs/idempotency.md, "Stores")."""

from ._protocol import PROTOCOL
from ._store import Claim, MariaDBStore, PostgresStore, RedisStore, SqliteStore, SqlStore, Store

__all__ = ["PROTOCOL", "Claim", "Store", "SqlStore", "SqliteStore", "PostgresStore", "MariaDBStore", "RedisStore"]

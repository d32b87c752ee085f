'use strict';
// The stores the JS suites run on (tests/js/stores.test.cjs, examples-idempotency.test.cjs):
// SQLite (better-sqlite3), PostgreSQL (pg), MariaDB (mysql2), Redis (ioredis) on the servers
// scripts/test-servers.sh started, and the in-memory store. The napi package only.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { root, pkgRequire, servers } = require('./_servers.cjs');

const S = require(path.join(root, 'bindings-node', 'lib', 'stores', 'index.cjs'));

/** Each backend: a store factory, connect/close, and whether it shares a SQL transaction. */
function backends() {
  const u = servers();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'retrycore-js-sqlite.'));
  const pg = pkgRequire('pg');
  const mysql = pkgRequire('mysql2/promise');
  const Redis = pkgRequire('ioredis');
  const pgPool = new pg.Pool({ connectionString: u.postgresql, max: 40 });
  const myPool = mysql.createPool({ uri: u.mariadb, connectionLimit: 40 });
  const redis = new Redis(u.redis);
  const sqlite = S.SqliteStore.connect(path.join(dir, 'records.db'));
  const list = {
    sqlite: { make: (o) => new S.SqliteStore(o), connect: () => sqlite, close: () => undefined, sql: true },
    postgresql: { make: (o) => new S.PostgresStore(o), connect: () => pgPool.connect(), close: (c) => c.release(), sql: true },
    mariadb: { make: (o) => new S.MariaDBStore(o), connect: () => myPool.getConnection(), close: (c) => c.release(), sql: true },
    redis: { make: (o) => new S.RedisStore(redis, o), connect: () => null, close: () => undefined, sql: false },
    memory: { make: (o) => new S.MemoryStore(o), connect: () => null, close: () => undefined, sql: false },
  };
  const end = async () => {
    await pgPool.end();
    await myPool.end();
    redis.disconnect();
    sqlite.close();
    fs.rmSync(dir, { recursive: true, force: true });
  };
  return { list, end };
}

module.exports = { backends };

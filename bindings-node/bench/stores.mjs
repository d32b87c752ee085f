// The idempotency stores under load (make bench-stores; BENCHMARKS.md, "Idempotency
// stores"): for SQLite, PostgreSQL, MariaDB and Redis, the Node package's store
// (retrycore/stores: one atomic claim, then the fenced completion) against a naive
// select-then-insert on the same table (the same keyspace for Redis):
//
//   latency      one request at a time: claim and complete, p50 and p99 (µs)
//   throughput   CONCURRENCY requests in flight, each on its own key (requests/s)
//   duplicates   DUP_KEYS keys, DUPS concurrent duplicates of each, a handler of
//                HANDLER_MS: how many times the handler ran (the store: once per key)
//
// The servers are the ones RETRYCORE_TEST_POSTGRES / _MARIADB / _REDIS name, else started
// for this run by scripts/test-servers.sh (tests/js/_servers.cjs). Sizes come from the
// environment: OPS (default 2000), CONCURRENCY (16), DUP_KEYS (50), DUPS (8), HANDLER_MS
// (5); `--quick` is a smoke run (tiny sizes: figures mean nothing). Prints a Markdown
// table, and the figures as JSON with `--json`.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
const { servers, pkgRequire } = require('../../tests/js/_servers.cjs');
const S = require('../lib/stores/index.cjs');
const rc = require('../index.cjs');

const quick = process.argv.includes('--quick');
const size = (name, normal, small) => (quick ? small : Number(process.env[name] ?? normal));
const OPS = size('OPS', 2000, 20);
const CONCURRENCY = size('CONCURRENCY', 16, 4);
const DUP_KEYS = size('DUP_KEYS', 50, 3);
const DUPS = size('DUPS', 8, 4);
const HANDLER_MS = size('HANDLER_MS', 5, 5);

const run = crypto.randomBytes(4).toString('hex');
let n = 0;
const freshKey = (what) => `bench-${run}-${what}-${++n}`;
const FP = 'ab'.repeat(32);
const RESPONSE = { status: 201, headers: [['content-type', 'application/json']], body: '{"id":"ch_1"}' };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const now = () => process.hrtime.bigint();
const micros = (t0, t1) => Number(t1 - t0) / 1000;

function percentile(xs, p) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
}

/** Each backend: its store, a connection per request, and the naive baseline's two steps. */
function backends() {
  const u = servers();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'retrycore-bench-sqlite.'));
  const pg = pkgRequire('pg');
  const mysql = pkgRequire('mysql2/promise');
  const Redis = pkgRequire('ioredis');
  const pgPool = new pg.Pool({ connectionString: u.postgresql, max: Math.max(CONCURRENCY, DUPS) + 2 });
  const myPool = mysql.createPool({ uri: u.mariadb, connectionLimit: Math.max(CONCURRENCY, DUPS) + 2 });
  const redis = new Redis(u.redis);
  const sqlite = S.SqliteStore.connect(path.join(dir, 'records.db'));
  const table = S.PROTOCOL.table;
  // The naive baseline: read the row; when there is none, run, then insert the record (a
  // duplicate-key error from a concurrent insert is ignored: the handler already ran).
  const sql = (query, mark) => ({
    async exists(conn, skey) {
      return (await query(conn, `SELECT fence FROM ${table} WHERE storage_key = ${mark(1)}`, [skey])).length > 0;
    },
    async insert(conn, row) {
      const cols = Object.keys(row);
      const text = `INSERT INTO ${table} (${cols.join(', ')}) VALUES (${cols.map((_, i) => mark(i + 1)).join(', ')})`;
      try {
        await query(conn, text, Object.values(row));
      } catch (e) {
        if (!/duplicate|unique|constraint/i.test(String(e.message))) throw e;
      }
    },
  });
  const q = () => '?';
  const list = {
    sqlite: {
      store: new S.SqliteStore(),
      connect: () => sqlite,
      close: () => undefined,
      naive: sql(async (c, text, args) => (text.startsWith('SELECT') ? c.prepare(text).all(...args) : c.prepare(text).run(...args)), q),
    },
    postgresql: {
      store: new S.PostgresStore(),
      connect: () => pgPool.connect(),
      close: (c) => c.release(),
      naive: sql(async (c, text, args) => (await c.query(text, args)).rows, (i) => `$${i}`),
    },
    mariadb: {
      store: new S.MariaDBStore(),
      connect: () => myPool.getConnection(),
      close: (c) => c.release(),
      naive: sql(async (c, text, args) => (await c.query(text, args))[0], q),
    },
    redis: {
      store: new S.RedisStore(redis),
      connect: () => null,
      close: () => undefined,
      naive: {
        exists: async (_, skey) => (await redis.exists(`retrycore-bench-naive:${skey}`)) === 1,
        insert: async (_, row) => {
          const { storage_key: skey, ...fields } = row;
          const flat = Object.entries(fields).filter(([, v]) => v !== null).flatMap(([k, v]) => [k, String(v)]);
          await redis.hset(`retrycore-bench-naive:${skey}`, ...flat);
        },
      },
    },
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

/** One request through the store: [claim µs, complete µs, ran]. */
async function viaStore(b, key, handler) {
  const conn = await b.connect();
  try {
    const t0 = now();
    const claim = await b.store.claim(conn, key, FP);
    const t1 = now();
    if (!claim.executes) return [micros(t0, t1), 0, false];
    await handler();
    const t2 = now();
    await claim.transaction(async () => {
      await claim.complete(RESPONSE);
    });
    return [micros(t0, t1), micros(t2, now()), true];
  } finally {
    await b.close(conn);
  }
}

/** One request through the naive baseline: [select µs, insert µs, ran]. */
async function viaNaive(b, key, handler) {
  const conn = await b.connect();
  try {
    const skey = rc.storageKey(key, S.PROTOCOL.key_max_len);
    const t0 = now();
    const found = await b.naive.exists(conn, skey);
    const t1 = now();
    if (found) return [micros(t0, t1), 0, false];
    await handler();
    // The record the store would have written, so both write the same row.
    const rec = { key, fingerprint: FP, state: 'succeeded', fence: 1, created_ms: Date.now(), lease_until_ms: Date.now(), completed_ms: Date.now(), expires_at_ms: Date.now() + 86_400_000, response: RESPONSE, failure_category: null };
    const t2 = now();
    await b.naive.insert(conn, S.toRow(rec, skey));
    return [micros(t0, t1), micros(t2, now()), true];
  } finally {
    await b.close(conn);
  }
}

const WAYS = { store: viaStore, naive: viaNaive };

async function latency(b, way) {
  const claim = [];
  const complete = [];
  for (let i = 0; i < OPS; i++) {
    const [c, d] = await way(b, freshKey('lat'), async () => undefined);
    claim.push(c);
    complete.push(d);
  }
  return { claimP50: percentile(claim, 50), claimP99: percentile(claim, 99), completeP50: percentile(complete, 50), completeP99: percentile(complete, 99) };
}

async function throughput(b, way) {
  let left = OPS;
  const t0 = now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (left-- > 0) await way(b, freshKey('tput'), async () => undefined);
    }),
  );
  return OPS / (micros(t0, now()) / 1e6);
}

async function duplicates(b, way) {
  let ran = 0;
  const handler = async () => {
    ran++;
    await sleep(HANDLER_MS);
  };
  for (let k = 0; k < DUP_KEYS; k++) {
    const key = freshKey('dup');
    await Promise.all(Array.from({ length: DUPS }, () => way(b, key, handler)));
  }
  return { executions: ran, extra: ran - DUP_KEYS };
}

async function main() {
  const B = backends();
  const rows = [];
  try {
    for (const [name, b] of Object.entries(B.list)) {
      if (name !== 'redis') {
        const conn = await b.connect();
        await b.store.createSchema(conn);
        await b.close(conn);
      }
      for (const [wayName, way] of Object.entries(WAYS)) {
        const lat = await latency(b, way);
        const rps = await throughput(b, way);
        const dup = await duplicates(b, way);
        rows.push({ store: name, way: wayName, ...lat, rps, ...dup });
      }
    }
  } finally {
    await B.end();
  }
  const f = (x) => (x >= 100 ? x.toFixed(0) : x.toFixed(1));
  console.log(`OPS=${OPS} CONCURRENCY=${CONCURRENCY} DUP_KEYS=${DUP_KEYS} DUPS=${DUPS} HANDLER_MS=${HANDLER_MS}${quick ? ' (--quick: a smoke run, not figures)' : ''}\n`);
  console.log('| store | way | claim p50 (µs) | claim p99 (µs) | complete p50 (µs) | complete p99 (µs) | requests/s | handler runs | duplicates let through |');
  console.log('|---|---|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of rows) {
    const way = r.way === 'store' ? 'retrycore store' : 'select-then-insert';
    console.log(`| ${r.store} | ${way} | ${f(r.claimP50)} | ${f(r.claimP99)} | ${f(r.completeP50)} | ${f(r.completeP99)} | ${f(r.rps)} | ${r.executions} / ${DUP_KEYS} keys | ${r.extra} |`);
  }
  if (process.argv.includes('--json')) console.log(JSON.stringify({ OPS, CONCURRENCY, DUP_KEYS, DUPS, HANDLER_MS, rows }));
  const broken = rows.filter((r) => r.way === 'store' && r.extra !== 0);
  if (broken.length) throw new Error(`a store ran a handler more than once per key: ${broken.map((r) => r.store).join(', ')}`);
}

await main();

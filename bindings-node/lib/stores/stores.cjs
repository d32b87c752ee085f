'use strict';
// The idempotency stores: each runs the core's statements (`hostTables().store_protocol`)
// with the host's own driver, and asks the core (`decideRecord`, `completeRecord`,
// `renewLease`) what every answer means. A store keeps no SQL of its own.
//
// The two steps of docs/idempotency.md ("Stores"): `await store.claim(conn, key, fingerprint)`
// commits the claim on its own (autocommit), so a concurrent duplicate sees `processing`
// at once; then `await claim.transaction(async (tx) => { ...; await claim.complete(response) })`
// commits the business writes and the fenced completion together, and rolls both back when
// the completion is refused (another request took over).
//
// Drivers: better-sqlite3 12.x (optional peer dependency), pg, mysql2/promise, ioredis
// (its `defineCommand` runs EVALSHA and loads the script on NOSCRIPT, also in pipelines;
// node-redis 5+ changed its script API, so ioredis is the stable choice).

// No Node module is required here: `index.cjs` binds these stores to the Node package's
// API with `use(api)`, and a runtime without Node-API (Workers, Deno) can bind them to the
// wasm package's API the same way.
let rc = null;
/** The store protocol document, read once from the core by `use()`. */
let PROTOCOL = null;

/** Binds the stores to a retrycore API (the Node or the wasm package's); returns this module's exports. */
function use(api) {
  rc = api;
  PROTOCOL = api.hostTables().store_protocol;
  module.exports.PROTOCOL = PROTOCOL;
  return module.exports;
}

/** The text of `op` in `dialect` with `style` placeholders, and the values to bind in order. */
function statement(dialect, op, style, values) {
  const form = PROTOCOL.dialects[dialect].statements[op][style];
  return [form.text, form.params.map((n) => (values[n] === undefined ? null : values[n]))];
}

/** A record (the core's document) as a row: column name → value. */
function toRow(record, storageKey) {
  const row = {};
  for (const col of PROTOCOL.columns) {
    let v = col.field === null ? storageKey : record[col.field];
    if (col.type === 'json' && v !== null && v !== undefined) v = rc.canonicalJSON(v);
    row[col.name] = v === undefined ? null : v;
  }
  return row;
}

/** A row (column name → value; integers may be decimal strings or BigInts) as a record. */
function fromRow(row) {
  const record = {};
  for (const col of PROTOCOL.columns) {
    let v = row[col.name];
    if (v === undefined) v = null;
    if (v !== null && col.type === 'integer') v = Number(v);
    else if (v !== null && col.type === 'json') v = JSON.parse(typeof v === 'string' ? v : String(v));
    if (col.field !== null) record[col.field] = v;
  }
  return record;
}

function idemError(code, field, message) {
  return new rc.IdempotencyError(`${field}: ${message}`, code, field);
}

const nowOr = (nowMs) => (nowMs === undefined || nowMs === null ? Date.now() : Number(nowMs));

/**
 * What `claim()` got: the core's decision, and for an executing request the fenced
 * claim that `transaction()`, `complete()`, `renew()` and `release()` act on.
 */
class Claim {
  constructor(store, conn, key, storageKey, decision, record) {
    this.store = store;
    this.conn = conn;
    this.key = key;
    this.storageKey = storageKey;
    /** The core's decision (`decideRecord`'s result). */
    this.decision = decision;
    /** The stored record: the claim while executing, the found record otherwise. */
    this.record = record;
    this.completed = false;
  }

  /** Whether this request holds the key and runs. */
  get executes() {
    return this.decision.decision === 'execute';
  }

  /** The HTTP answer of a request that does not run (409, 422/400), else null. */
  get http() {
    return this.decision.http ?? null;
  }

  /** The fencing token of the claim. */
  get fence() {
    return Number(this.held().fence);
  }

  held() {
    if (!this.executes || !this.record) {
      throw idemError('invalid_state', 'claim', 'this request does not hold the key: check claim.executes');
    }
    return this.record;
  }

  /**
   * The business transaction on the claim's connection: `fn(tx)` runs in it (`tx` is the
   * connection) and must call `complete()`; commits after it, rolls back when it throws
   * (a refused completion included). Returns what `fn` returns.
   */
  async transaction(fn) {
    this.held();
    return this.store._transaction(this.conn, async (tx) => {
      const value = await fn(tx);
      if (!this.completed) throw idemError('invalid_state', 'claim', 'the transaction ended without claim.complete()');
      return value;
    });
  }

  /**
   * Stores the outcome with the fencing check: succeeded, or failed with
   * `options.failureCategory`. Throws the core's `IdempotencyError` (`stale_fence`) when the
   * claim was lost. Inside `transaction()` it is the transaction's last statement.
   */
  async complete(response = null, options = {}) {
    const held = this.held();
    const failed = options.failureCategory !== undefined && options.failureCategory !== null;
    const outcome = { state: failed ? 'failed' : 'succeeded', response };
    if (failed) outcome.category = options.failureCategory;
    const done = rc.completeRecord(held, held.fence, outcome, nowOr(options.nowMs), this.store.config);
    if (!(await this.store._complete(this.conn, this.storageKey, done))) {
      await this.store._refuse(this.conn, this.storageKey, held);
    }
    this.completed = true;
    this.record = done;
    return done;
  }

  /** Extends the lease (a heartbeat; pass another connection than the business transaction's). False when the claim was lost. */
  async renew(conn = this.conn, nowMs) {
    const held = this.held();
    const renewed = rc.renewLease(held, held.fence, nowOr(nowMs), this.store.config);
    const ok = await this.store._renew(conn ?? this.conn, this.storageKey, renewed, held);
    if (ok) this.record = renewed;
    return ok;
  }

  /** Ends the lease without storing an outcome (nothing ran): the next request takes over with fence + 1. */
  async release(conn = this.conn, nowMs) {
    return this.store._release(conn ?? this.conn, this.storageKey, this.held(), nowOr(nowMs));
  }
}

/** The parts every store shares: the record configuration and the claim's steps. */
class Store {
  /**
   * `options`: `leaseMs`, `retentionMs` (defaults: the protocol's), `failureHandling`,
   * `releaseCategories`, `stripe` — the core's `RecordConfig`.
   */
  constructor(options = {}) {
    const d = PROTOCOL.defaults;
    this.config = {
      leaseMs: options.leaseMs ?? d.lease_ms,
      retentionMs: options.retentionMs ?? d.retention_ms,
      stripe: options.stripe ?? false,
      failureHandling: options.failureHandling ?? d.failure_handling,
      releaseCategories: options.releaseCategories ?? d.release_categories,
    };
    this.releaseParams = {
      failure_handling: this.config.failureHandling,
      release_categories: this.config.releaseCategories.join(','),
    };
  }

  /** Claims `key` for a request with `fingerprint`, committing at once; see `Claim`. */
  async claim(conn, key, fingerprint, nowMs) {
    const now = nowOr(nowMs);
    const [skey, decision, record] = await this._serial(conn, () => this._claimFlow(conn, key, fingerprint, now));
    return new Claim(this, conn, key, skey, decision, record);
  }

  async _claimFlow(conn, key, fingerprint, now) {
    const fresh = rc.decideRecord(null, key, fingerprint, now, this.config);
    const skey = rc.storageKey(key, PROTOCOL.key_max_len);
    const values = {
      storage_key: skey,
      key,
      fingerprint,
      now,
      lease_until_ms: fresh.leaseUntilMs,
      expires_at_ms: fresh.expiresAtMs,
      ...this.releaseParams,
    };
    for (let i = 0; i < 3; i++) {
      // A read first: a duplicate is answered without waiting on a write lock (SQLite has
      // one writer per file; PostgreSQL's upsert locks the row it does not update), and an
      // execute decision names the reason the claim's own result cannot tell.
      const found = await this._read(conn, skey);
      const ahead = rc.decideRecord(found, key, fingerprint, now, this.config);
      if (ahead.decision !== 'execute') return [skey, ahead, found];
      const got = await this._claim(conn, values);
      if (got) {
        const [fence, created] = got;
        const record = { ...fresh.record, fence, created_ms: created };
        const decision = { ...fresh, fence, createdMs: created, record };
        if (fence === ahead.fence) decision.reason = ahead.reason;
        else decision.reason = fence === 1 ? 'new' : created === now ? 'expired' : 'takeover';
        return [skey, decision, record];
      }
      const current = await this._read(conn, skey);
      if (current) {
        const d = rc.decideRecord(current, key, fingerprint, now, this.config);
        if (d.decision !== 'execute') return [skey, d, current];
      }
      // The row changed between the claim and the read (deleted, or its lease ended): again.
    }
    throw idemError('invalid_state', 'claim', 'the record kept changing under the claim');
  }

  async _refuse(conn, skey, held) {
    const current = await this._read(conn, skey);
    if (current && Number(current.created_ms) === Number(held.created_ms)) {
      // The same incarnation: the core says why (stale_fence, fence_from_future, invalid_state).
      rc.completeRecord(current, held.fence, { state: 'succeeded' }, Date.now(), this.config);
    }
    throw idemError('stale_fence', 'fence', `${held.fence} no longer holds the key: the record was deleted or claimed anew`);
  }

  // Runs `fn` alone on `conn` when the driver needs it (SQLite: see SqliteStore).
  async _serial(conn, fn) {
    return fn();
  }
}

/** A store on a SQL database; subclasses say how to run a statement and a transaction. */
class SqlStore extends Store {
  /** Creates the table and its index when absent (the protocol's schema). */
  async createSchema(conn) {
    for (const text of PROTOCOL.dialects[this.dialect].schema) await this._exec(conn, text, []);
  }

  async _run(conn, op, values) {
    const [text, params] = statement(this.dialect, op, this.style, values);
    return this._exec(conn, text, params);
  }

  async _transaction(conn, fn) {
    return this._serial(conn, async () => {
      await this._exec(conn, this.begin, []);
      try {
        const value = await fn(conn);
        await this._exec(conn, 'COMMIT', []);
        return value;
      } catch (e) {
        await this._exec(conn, 'ROLLBACK', []);
        throw e;
      }
    });
  }

  async _claim(conn, values) {
    const got = await this._run(conn, 'claim', values);
    return got.rows.length ? [Number(got.rows[0].fence), Number(got.rows[0].created_ms)] : null;
  }

  async _read(conn, skey) {
    const got = await this._run(conn, 'read', { storage_key: skey });
    return got.rows.length ? fromRow(got.rows[0]) : null;
  }

  async _complete(conn, skey, done) {
    return (await this._run(conn, 'complete', toRow(done, skey))).count === 1;
  }

  // Zero changed rows may also mean "nothing to change" (MySQL without CLIENT_FOUND_ROWS): re-read.
  async _stillHeld(conn, skey, held) {
    const cur = await this._read(conn, skey);
    return Boolean(cur && cur.state === 'processing' && cur.fence === held.fence && cur.created_ms === held.created_ms);
  }

  async _renew(conn, skey, renewed, held) {
    return this._serial(conn, async () => {
      const values = { storage_key: skey, fence: held.fence, created_ms: held.created_ms, lease_until_ms: renewed.lease_until_ms, expires_at_ms: renewed.expires_at_ms };
      return (await this._run(conn, 'renew', values)).count === 1 || this._stillHeld(conn, skey, held);
    });
  }

  async _release(conn, skey, held, now) {
    return this._serial(conn, async () => {
      const values = { storage_key: skey, fence: held.fence, created_ms: held.created_ms, now };
      return (await this._run(conn, 'release', values)).count === 1 || this._stillHeld(conn, skey, held);
    });
  }

  /** Deletes expired records (`expires_at_ms <= now`) in batches of `batch`; returns how many. */
  async cleanup(conn, nowMs, batch = 500) {
    const now = nowOr(nowMs);
    let total = 0;
    for (;;) {
      const n = await this._serial(conn, async () => (await this._run(conn, 'cleanup', { now, limit: batch })).count);
      total += n;
      if (n < batch) return total;
    }
  }
}

/**
 * SQLite through better-sqlite3 12.x (an optional peer dependency; 13.x needs Node 22):
 * the default store. better-sqlite3 is synchronous and SQLite has one writer per file, so
 * the store runs the steps on one connection one at a time (a business transaction waits
 * for none but the claims of its own process: keep it short); other processes wait on
 * the file lock (`busy_timeout`). A duplicate is answered from a read first.
 */
class SqliteStore extends SqlStore {
  get dialect() {
    return 'sqlite';
  }
  get style() {
    return 'qmark';
  }
  get begin() {
    return 'BEGIN IMMEDIATE';
  }

  /** A connection the store can use: WAL, waits up to `timeoutMs` for the file lock. */
  static connect(path, timeoutMs = 30000) {
    let Database;
    try {
      Database = require('better-sqlite3');
    } catch (e) {
      throw idemError('missing_dependency', 'better-sqlite3', 'the SQLite store needs better-sqlite3 12.x: npm install better-sqlite3@12 (or pass another store)');
    }
    const db = new Database(path, { timeout: timeoutMs });
    db.pragma('journal_mode = WAL');
    return db;
  }

  async _exec(db, text, params) {
    const stmt = db.prepare(text);
    if (stmt.reader) return { rows: stmt.all(...params), count: 0 };
    return { rows: [], count: stmt.run(...params).changes };
  }

  async _serial(db, fn) {
    const queue = SqliteStore.queues.get(db) ?? Promise.resolve();
    const run = queue.then(fn, fn);
    SqliteStore.queues.set(db, run.then(() => undefined, () => undefined));
    return run;
  }
}
SqliteStore.queues = new WeakMap();

/** PostgreSQL through `pg` (a `Client`, or a `PoolClient` from `pool.connect()`); `$n` placeholders natively. */
class PostgresStore extends SqlStore {
  get dialect() {
    return 'postgresql';
  }
  get style() {
    return 'numbered';
  }
  get begin() {
    return 'BEGIN';
  }

  async _exec(client, text, params) {
    const got = await client.query(text, params);
    return { rows: got.rows ?? [], count: got.rowCount ?? 0 };
  }
}

/**
 * MariaDB or MySQL through `mysql2/promise` (`?` placeholders): a plain insert, then on a
 * duplicate key a conditional update, as the protocol's `claim_steps` say.
 */
class MariaDBStore extends SqlStore {
  get dialect() {
    return 'mysql';
  }
  get style() {
    return 'qmark';
  }
  get begin() {
    return 'START TRANSACTION';
  }

  async _exec(conn, text, params) {
    const [got] = await conn.query(text, params);
    return Array.isArray(got) ? { rows: got, count: 0 } : { rows: [], count: got.affectedRows };
  }

  async _claim(conn, values) {
    try {
      await this._run(conn, 'claim_insert', values);
      return [1, Number(values.now)];
    } catch (e) {
      if (e.errno !== 1062) throw e; // ER_DUP_ENTRY is an answer, not a failure
    }
    await this._exec(conn, 'START TRANSACTION', []);
    try {
      const got = await this._run(conn, 'claim_update', values);
      const row = got.count === 1 ? await this._read(conn, values.storage_key) : null;
      await this._exec(conn, 'COMMIT', []);
      return row ? [row.fence, row.created_ms] : null;
    } catch (e) {
      await this._exec(conn, 'ROLLBACK', []);
      // A deadlock or lock wait timeout (InnoDB picked this claim as the victim): not
      // claimed; the claim loop reads and tries again.
      if (e.errno === 1213 || e.errno === 1205) return null;
      throw e;
    }
  }
}

/**
 * Redis 7 through ioredis, with the protocol's Lua scripts (`defineCommand`: EVALSHA,
 * loading the script on NOSCRIPT). The connection argument is ignored: the store holds
 * its client. Redis cannot share a transaction with a SQL business write:
 * `claim.transaction()` only groups the completion, and a crash after the business
 * commit and before `complete()` leaves the claim to be taken over (the handler runs
 * again). The server needs `maxmemory-policy noeviction` (`checkServer()`).
 */
class RedisStore extends Store {
  constructor(client, options = {}) {
    super(options);
    this.client = client;
    this.prefix = options.prefix ?? 'idempotency';
    this.slack = PROTOCOL.redis.slack_ms;
    for (const [op, s] of Object.entries(PROTOCOL.redis.scripts)) {
      const name = `retrycoreV${PROTOCOL.version}_${op}`;
      if (typeof client[name] !== 'function') client.defineCommand(name, { numberOfKeys: 1, lua: s.lua });
    }
  }

  /** Throws when the server may evict records (`maxmemory-policy` other than the protocol's). */
  async checkServer() {
    const want = PROTOCOL.redis.maxmemory_policy;
    let got;
    try {
      got = (await this.client.config('GET', 'maxmemory-policy'))[1];
    } catch {
      return; // a server refusing CONFIG GET (some managed offerings): check it by hand
    }
    if (got !== undefined && got !== want) {
      const why = `is ${JSON.stringify(got)}: records may be evicted; the store needs ${JSON.stringify(want)}`;
      throw new rc.RetrycoreError(`maxmemory-policy: ${why}`, 'invalid_value', 'maxmemory-policy');
    }
  }

  _key(skey) {
    return `${this.prefix}:${skey}`;
  }

  async _script(op, skey, values) {
    const names = PROTOCOL.redis.scripts[op].args;
    const args = names.map((n) => {
      const v = n === 'slack_ms' ? this.slack : values[n];
      return v === null || v === undefined ? '' : v;
    });
    return this.client[`retrycoreV${PROTOCOL.version}_${op}`](this._key(skey), ...args);
  }

  async _transaction(conn, fn) {
    return fn(conn);
  }

  async _claim(conn, values) {
    const got = await this._script('claim', values.storage_key, values);
    return Number(got[0]) === 1 ? [Number(got[1]), Number(got[2])] : null;
  }

  async _read(conn, skey) {
    const fields = await this.client.hgetall(this._key(skey));
    if (!fields || Object.keys(fields).length === 0) return null;
    return fromRow({ ...fields, storage_key: skey });
  }

  async _complete(conn, skey, done) {
    return Number(await this._script('complete', skey, toRow(done, skey))) === 1;
  }

  async _renew(conn, skey, renewed, held) {
    const values = { fence: held.fence, created_ms: held.created_ms, lease_until_ms: renewed.lease_until_ms, expires_at_ms: renewed.expires_at_ms };
    return Number(await this._script('renew', skey, values)) === 1;
  }

  async _release(conn, skey, held, now) {
    return Number(await this._script('release', skey, { fence: held.fence, created_ms: held.created_ms, now })) === 1;
  }
}

/**
 * Records in this process's memory, for tests and for runtimes without a database driver
 * (Workers, Deno): every step reads, decides with the core and writes synchronously, so
 * no other request runs in between. Lost when the process ends; not shared between
 * processes or isolates.
 */
class MemoryStore extends Store {
  constructor(options = {}) {
    super(options);
    this.rows = new Map();
  }

  async _transaction(conn, fn) {
    return fn(conn);
  }

  async _read(conn, skey) {
    const r = this.rows.get(skey);
    return r ? { ...r } : null;
  }

  async _claim(conn, v) {
    const d = rc.decideRecord(this.rows.get(v.storage_key) ?? null, v.key, v.fingerprint, v.now, this.config);
    if (d.decision !== 'execute') return null;
    this.rows.set(v.storage_key, d.record);
    return [d.record.fence, d.record.created_ms];
  }

  _holds(skey, held) {
    const r = this.rows.get(skey);
    return r && r.state === 'processing' && r.fence === held.fence && r.created_ms === held.created_ms ? r : null;
  }

  async _complete(conn, skey, done) {
    if (!this._holds(skey, done)) return false;
    this.rows.set(skey, { ...done });
    return true;
  }

  async _renew(conn, skey, renewed, held) {
    const r = this._holds(skey, held);
    if (!r) return false;
    r.lease_until_ms = Math.max(r.lease_until_ms, renewed.lease_until_ms);
    r.expires_at_ms = Math.max(r.expires_at_ms, renewed.expires_at_ms);
    return true;
  }

  async _release(conn, skey, held, now) {
    const r = this._holds(skey, held);
    if (!r) return false;
    r.lease_until_ms = Math.min(r.lease_until_ms, now);
    return true;
  }

  /** Deletes expired records (`expires_at_ms <= now`); returns how many. */
  async cleanup(conn, nowMs) {
    const now = nowOr(nowMs);
    let n = 0;
    for (const [k, r] of this.rows) {
      if (r.expires_at_ms <= now) {
        this.rows.delete(k);
        n++;
      }
    }
    return n;
  }
}

module.exports = { use, PROTOCOL, Claim, Store, SqlStore, SqliteStore, PostgresStore, MariaDBStore, RedisStore, MemoryStore, toRow, fromRow };

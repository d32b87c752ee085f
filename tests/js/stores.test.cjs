'use strict';
// The Node idempotency stores (bindings-node/lib/stores) and middleware
// (bindings-node/lib/middleware) against real servers: SQLite (better-sqlite3), PostgreSQL
// (pg), MariaDB (mysql2) and Redis (ioredis), plus the in-memory store.
// Exactly one execution under N concurrent duplicates; a duplicate mid-handler gets 409 at
// once; a dead worker's lease expires, the takeover gets fence + 1 and the stale completion
// (with its business write) is refused; cleanup deletes only expired rows; bad input gets
// the documented 4xx with nothing stored and nothing executed.
// The stores belong to the napi package: under RETRYCORE_IMPL=wasm this file is skipped.
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const crypto = require('node:crypto');
const impl = require('./impl.cjs');
const { root, pkgRequire } = require('./_servers.cjs');
const { backends } = require('./_store_backends.cjs');

const onNode = impl.IMPL === 'node';
const S = onNode ? require(path.join(root, 'bindings-node', 'lib', 'stores', 'index.cjs')) : null;
const M = onNode ? require(path.join(root, 'bindings-node', 'lib', 'middleware', 'index.cjs')) : null;
const rc = impl;

const run = crypto.randomBytes(4).toString('hex');
let n = 0;
const freshKey = () => `js-${run}-${++n}`;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const FP = 'ab'.repeat(32);
const BIZ = 'CREATE TABLE IF NOT EXISTS retrycore_js_business (k VARCHAR(100) NOT NULL)';

let B;
test.before(async () => {
  if (!onNode) return;
  B = backends();
  for (const [name, b] of Object.entries(B.list)) {
    if (!b.sql) continue;
    const conn = await b.connect();
    await b.make().createSchema(conn);
    await conn[name === 'sqlite' ? 'exec' : 'query'](BIZ);
    await b.close(conn);
  }
});
test.after(async () => B && B.end());

const names = ['sqlite', 'postgresql', 'mariadb', 'redis', 'memory'];

/** A fetch-style app around `handler` with the backend's store. */
function app(b, handler, options = {}) {
  const { storeOptions, ...rest } = options;
  return M.withIdempotency(handler, { store: b.make(storeOptions), connect: b.connect, close: b.close, ...rest });
}
const post = (key, body = '{"amount": 10}', headers = {}) =>
  new Request('http://app.test/charges', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key === null ? {} : { 'idempotency-key': `"${key}"` }), ...headers },
    body,
  });

for (const name of names) {
  test(`${name}: N concurrent requests with one key execute once; the rest get 409 or the replay`, { skip: !onNode && 'napi only' }, async () => {
    const b = B.list[name];
    let runs = 0;
    const handler = async () => {
      runs++;
      await sleep(300);
      return new Response('{"charged":true}', { status: 201, headers: { 'content-type': 'application/json', 'x-private': 'no' } });
    };
    const f = app(b, handler);
    const key = freshKey();
    const got = await Promise.all(Array.from({ length: 16 }, () => f(post(key))));
    assert.equal(runs, 1);
    const statuses = got.map((r) => r.status).sort();
    assert.equal(statuses.filter((s) => s === 201).length >= 1, true, String(statuses));
    assert.ok(statuses.every((s) => s === 201 || s === 409), String(statuses));
    const again = await f(post(key));
    assert.equal(again.status, 201);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.equal(again.headers.get('x-private'), null, 'only allow-listed headers replay');
    assert.equal(await again.text(), '{"charged":true}');
    assert.equal(runs, 1);
  });

  test(`${name}: a duplicate mid-handler gets 409 with Retry-After at once`, { skip: !onNode && 'napi only' }, async () => {
    const b = B.list[name];
    let release;
    const gate = new Promise((r) => (release = r));
    let runs = 0;
    const f = app(b, async () => {
      runs++;
      await gate;
      return new Response('ok', { status: 200 });
    });
    const key = freshKey();
    const first = f(post(key));
    while (runs === 0) await sleep(5);
    const t0 = Date.now();
    const dup = await f(post(key));
    assert.equal(dup.status, 409);
    assert.ok(Number(dup.headers.get('retry-after')) > 0);
    assert.ok(Date.now() - t0 < 2000, 'answered without waiting for the first');
    const mismatch = await f(post(key, '{"amount": 11}'));
    assert.equal(mismatch.status, 422);
    release();
    assert.equal((await first).status, 200);
    assert.equal(runs, 1);
  });

  test(`${name}: a dead worker's lease expires; the takeover gets fence + 1; the stale completion is refused`, { skip: !onNode && 'napi only' }, async () => {
    const b = B.list[name];
    const store = b.make({ leaseMs: 300 });
    const key = freshKey();
    const c1conn = await b.connect();
    const c2conn = await b.connect();
    try {
      const dead = await store.claim(c1conn, key, FP);
      assert.equal(dead.executes, true);
      assert.equal(dead.fence, 1);
      assert.equal((await store.claim(c2conn, key, FP)).decision.decision, 'in_progress');
      await sleep(400);
      const next = await store.claim(c2conn, key, FP);
      assert.equal(next.executes, true);
      assert.equal(next.fence, 2);
      assert.equal(next.decision.reason, 'takeover');
      assert.equal(await dead.renew(c1conn), false, 'a lost claim cannot renew');
      await assert.rejects(
        dead.transaction(async (tx) => {
          if (b.sql) await exec(name, tx, `INSERT INTO retrycore_js_business (k) VALUES ('${key}')`);
          await dead.complete({ status: 200, headers: [], body: 'stale' });
        }),
        (e) => e instanceof rc.IdempotencyError && e.code === 'stale_fence',
      );
      await next.transaction(async () => {
        await next.complete({ status: 200, headers: [], body: 'fresh' });
      });
      const replay = await store.claim(c2conn, key, FP);
      assert.equal(replay.decision.decision, 'replay');
      assert.equal(replay.record.fence, 2);
      assert.equal(replay.record.response.body, 'fresh');
      if (b.sql) assert.equal(await countBusiness(name, c2conn, key), 0, 'the stale business write rolled back');
    } finally {
      await b.close(c1conn);
      await b.close(c2conn);
    }
  });

  test(`${name}: renew extends the lease; release lets the next request take over`, { skip: !onNode && 'napi only' }, async () => {
    const b = B.list[name];
    const store = b.make({ leaseMs: 1000 });
    const conn = await b.connect();
    try {
      const key = freshKey();
      const now = Date.now();
      const c = await store.claim(conn, key, FP, now);
      assert.equal(await c.renew(conn, now + 900), true);
      assert.equal((await store.claim(conn, key, FP, now + 1500)).decision.decision, 'in_progress');
      assert.equal(await c.release(conn, now + 1600), true);
      const t = await store.claim(conn, key, FP, now + 1700);
      assert.equal(t.executes, true);
      assert.equal(t.fence, 2);
    } finally {
      await b.close(conn);
    }
  });

  if (name !== 'redis') {
    // Redis expires keys by itself (PEXPIREAT): it has no cleanup.
    test(`${name}: cleanup deletes only expired records`, { skip: !onNode && 'napi only' }, async () => {
      const b = B.list[name];
      const store = b.make({ leaseMs: 1000, retentionMs: 1000 });
      const conn = await b.connect();
      try {
        const now = Date.now();
        const old = freshKey();
        const live = freshKey();
        const o = await store.claim(conn, old, FP, now - 10 * 86400000);
        await o.transaction(async () => o.complete({ status: 200, headers: [], body: null }, { nowMs: now - 10 * 86400000 }));
        await store.claim(conn, live, FP, now);
        assert.ok((await store.cleanup(conn, now, 2)) >= 1);
        assert.equal(await store._read(conn, rc.storageKey(old, 255)), null);
        assert.notEqual(await store._read(conn, rc.storageKey(live, 255)), null);
      } finally {
        await b.close(conn);
      }
    });
  }

  test(`${name}: bad input gets the documented 4xx; nothing is stored or executed`, { skip: !onNode && 'napi only' }, async () => {
    const b = B.list[name];
    let runs = 0;
    const f = app(b, async () => {
      runs++;
      return new Response('ran');
    }, { maxBody: 64, required: true });
    const stored = async (key) => {
      const conn = await b.connect();
      try {
        return await f.idempotency.store._read(conn, rc.storageKey(key, 255));
      } finally {
        await b.close(conn);
      }
    };
    assert.equal((await f(post('k'.repeat(300)))).status, 400, 'an oversized key');
    assert.equal((await f(post(null, '{}', { 'idempotency-key': '"unterminated' }))).status, 400, 'a malformed header');
    const missing = await f(post(null));
    assert.equal(missing.status, 400, 'a missing key where one is required');
    assert.equal((await missing.json()).status, 400);
    const big = freshKey();
    assert.equal((await f(post(big, JSON.stringify({ pad: 'x'.repeat(100) })))).status, 413, 'a body over the limit');
    const notJson = freshKey();
    assert.equal((await f(post(notJson, '{not json'))).status, 400, 'a non-JSON body for a JSON fingerprint');
    assert.equal(runs, 0);
    assert.equal(await stored(big), null);
    assert.equal(await stored(notJson), null);
  });
}

test('a failing handler is stored and replayed (a 5xx by the core\'s category); an exception stores a 500', { skip: !onNode && 'napi only' }, async () => {
  const b = B.list.memory;
  let runs = 0;
  const f = app(b, async () => {
    runs++;
    return new Response('down', { status: 500 });
  });
  const key = freshKey();
  assert.equal((await f(post(key))).status, 500);
  const again = await f(post(key));
  assert.equal(again.status, 500);
  assert.equal(again.headers.get('idempotent-replayed'), 'true');
  assert.equal(runs, 1);
  const g = app(b, async () => {
    throw new Error('boom');
  });
  const k2 = freshKey();
  await assert.rejects(g(post(k2)), /boom/);
  assert.equal((await g(post(k2))).status, 500);
});

test('the heartbeat renews the lease while a long handler runs', { skip: !onNode && 'napi only' }, async () => {
  const b = B.list.postgresql;
  let runs = 0;
  const f = app(b, async () => {
    runs++;
    await sleep(900);
    return new Response('slow');
  }, { storeOptions: { leaseMs: 300 }, heartbeatMs: 100 });
  const key = freshKey();
  const first = f(post(key));
  await sleep(600); // two leases later: still held
  assert.equal((await f(post(key))).status, 409);
  assert.equal((await first).status, 200);
  assert.equal(runs, 1);
});

function exec(name, conn, text) {
  return name === 'sqlite' ? conn.exec(text) : conn.query(text);
}

async function countBusiness(name, conn, key) {
  const text = `SELECT COUNT(*) AS n FROM retrycore_js_business WHERE k = '${key}'`;
  if (name === 'sqlite') return conn.prepare(text).get().n;
  const got = await conn.query(text);
  return Number(name === 'postgresql' ? got.rows[0].n : got[0][0].n);
}

// ------------------------------------------------------------ Express

/** An Express app with the middleware on the backend's store, listening on loopback. */
async function expressApp(b, route, options = {}) {
  const express = pkgRequire('express');
  const app = express();
  if (options.raw) app.use(express.raw({ type: '*/*' }));
  app.use(M.idempotency({ store: b.make(), connect: b.connect, close: b.close, maxBody: 64 }));
  app.post('/charges', route);
  const server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const url = `http://127.0.0.1:${server.address().port}/charges`;
  const stop = () => {
    server.closeAllConnections();
    return new Promise((r) => server.close(r));
  };
  const send = (key, body = '{"amount": 10}') =>
    fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...(key ? { 'idempotency-key': key } : {}) }, body });
  return { send, stop };
}

for (const name of ['postgresql', 'mariadb', 'redis']) {
  test(`Express on ${name}: concurrent duplicates run once, a duplicate mid-handler gets 409, bad input runs nothing`, { skip: !onNode && 'napi only' }, async () => {
    const b = B.list[name];
    let runs = 0;
    let release;
    let gate = Promise.resolve();
    const a = await expressApp(b, async (req, res) => {
      runs++;
      await gate;
      res.status(201).set('x-private', 'no').json({ amount: req.body.amount, run: runs });
    });
    try {
      const key = freshKey();
      const got = await Promise.all(Array.from({ length: 8 }, () => a.send(key)));
      assert.equal(runs, 1);
      assert.ok(got.every((r) => r.status === 201 || r.status === 409), got.map((r) => r.status).join());
      const again = await a.send(key);
      assert.equal(again.headers.get('idempotent-replayed'), 'true');
      assert.equal(again.headers.get('x-private'), null);
      assert.deepEqual(await again.json(), { amount: 10, run: 1 });

      gate = new Promise((r) => (release = r));
      const k2 = freshKey();
      const first = a.send(k2);
      while (runs === 1) await sleep(5);
      const dup = await a.send(k2);
      assert.equal(dup.status, 409);
      assert.ok(Number(dup.headers.get('retry-after')) > 0);
      release();
      assert.equal((await first).status, 201);

      assert.equal((await a.send(`"${'k'.repeat(300)}"`)).status, 400);
      assert.equal((await a.send('"unterminated')).status, 400);
      assert.equal((await a.send(freshKey(), JSON.stringify({ pad: 'x'.repeat(100) }))).status, 413);
      assert.equal((await a.send(freshKey(), '{not json')).status, 400);
      assert.equal(runs, 2);
    } finally {
      await a.stop();
    }
  });
}

test('Express: a thrown error is stored as a 500 and replayed; express.raw() mounted first is used as it is', { skip: !onNode && 'napi only' }, async () => {
  const b = B.list.postgresql;
  let runs = 0;
  const failing = await expressApp(b, () => {
    runs++;
    throw new Error('boom');
  });
  try {
    const key = freshKey();
    assert.equal((await failing.send(key)).status, 500);
    const again = await failing.send(key);
    assert.equal(again.status, 500);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.equal(runs, 1);
  } finally {
    await failing.stop();
  }
  const raw = await expressApp(b, (req, res) => {
    runs++;
    res.status(201).send(Buffer.isBuffer(req.body) ? 'buffer' : typeof req.body);
  }, { raw: true });
  try {
    const key = freshKey();
    assert.equal(await (await raw.send(key)).text(), 'buffer');
    assert.equal((await raw.send(key, '{"amount": 11}')).status, 422, 'the fingerprint covers the raw body');
    assert.equal(runs, 2);
  } finally {
    await raw.stop();
  }
});

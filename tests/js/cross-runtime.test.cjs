'use strict';
// One table for every runtime (issue 19): a Python service (retrycore's WSGI middleware,
// psycopg / redis-py) and a Node service (retrycore/middleware, pg / ioredis) on one
// PostgreSQL table and one Redis see and replay each other's records: the same storage
// key, row codec, fingerprint and stored-response format.
// The Python side is the interpreter in RETRYCORE_TEST_PYTHON (default: the venv
// `make -C bindings-python test` builds) with retrycore, psycopg and redis installed; when
// there is none the test is skipped, unless RETRYCORE_CROSS_REQUIRE=1 (`make test`).
// The napi package only: skipped under RETRYCORE_IMPL=wasm.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');
const crypto = require('node:crypto');
const { spawn } = require('node:child_process');
const impl = require('./impl.cjs');
const { root, pkgRequire, servers } = require('./_servers.cjs');

const python = process.env.RETRYCORE_TEST_PYTHON || path.join(root, 'bindings-python', '.venv', 'test', 'bin', 'python');
const required = process.env.RETRYCORE_CROSS_REQUIRE === '1';
const skip = impl.IMPL !== 'node' ? 'napi only' : !required && !fs.existsSync(python) ? `no Python at ${python}` : false;

/** Starts the Python service (`extra`: `['required']`); resolves with its base URL and a stop(). */
function pythonService(kind, url, extra = []) {
  return new Promise((resolve, reject) => {
    const child = spawn(python, [path.join(__dirname, '_cross_service.py'), kind, url, ...extra], { stdio: ['pipe', 'pipe', 'inherit'] });
    child.on('error', reject);
    child.on('exit', (code) => reject(new Error(`the Python service exited with ${code}`)));
    child.stdout.once('data', (d) => {
      const stop = () => new Promise((r) => {
        child.removeAllListeners('exit');
        child.once('exit', r);
        child.stdin.end();
      });
      resolve({ base: `http://127.0.0.1:${String(d).trim()}`, stop });
    });
  });
}

/** The Node service: retrycore/middleware around a handler, served by node:http (/slow takes 1.5 s, as in Python's). */
async function nodeService(store, connect, close, required = false) {
  const { withIdempotency } = require(path.join(root, 'bindings-node', 'lib', 'middleware', 'index.cjs'));
  let runs = 0;
  const handler = withIdempotency(async (req) => {
    const body = await req.json();
    runs++;
    if (new URL(req.url).pathname === '/slow') await new Promise((r) => setTimeout(r, 1500));
    return new Response(JSON.stringify({ runtime: 'node', amount: body.amount, run: runs }), { status: 201, headers: { 'content-type': 'application/json' } });
  }, { store, connect, close, required });
  const server = http.createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const r = await handler(new Request(`http://127.0.0.1${req.url}`, { method: req.method, headers: req.headers, body: Buffer.concat(chunks) }));
    res.writeHead(r.status, [...r.headers].flat());
    res.end(Buffer.from(await r.arrayBuffer()));
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return { base: `http://127.0.0.1:${server.address().port}`, runs: () => runs, stop: () => new Promise((r) => server.close(r)) };
}

const post = (base, key, amount) =>
  fetch(`${base}/charges`, { method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': `"${key}"` }, body: JSON.stringify({ amount }) });

async function both(kind, makeStore, connect, close) {
  const u = servers();
  const py = await pythonService(kind, u[kind]);
  const node = await nodeService(makeStore(), connect, close);
  const run = crypto.randomBytes(4).toString('hex');
  try {
    // Python runs the first key; Node replays its record, byte for byte.
    const k1 = `cross-${run}-1`;
    const first = await post(py.base, k1, 5);
    assert.equal(first.status, 201);
    const firstBody = await first.text();
    assert.equal(JSON.parse(firstBody).runtime, 'python');
    const replayed = await post(node.base, k1, 5);
    assert.equal(replayed.status, 201);
    assert.equal(replayed.headers.get('idempotent-replayed'), 'true');
    assert.equal(await replayed.text(), firstBody);
    assert.equal((await post(node.base, k1, 6)).status, 422, "Node computes Python's fingerprint");
    assert.equal(node.runs(), 0);
    // Node runs the second; Python replays it.
    const k2 = `cross-${run}-2`;
    const second = await post(node.base, k2, 7);
    assert.equal(second.status, 201);
    const secondBody = await second.text();
    assert.equal(JSON.parse(secondBody).runtime, 'node');
    const back = await post(py.base, k2, 7);
    assert.equal(back.status, 201);
    assert.equal(back.headers.get('idempotent-replayed'), 'true');
    assert.equal(await back.text(), secondBody);
    assert.equal((await post(py.base, k2, 8)).status, 422, "Python computes Node's fingerprint");
    assert.equal(node.runs(), 1);
  } finally {
    await node.stop();
    await py.stop();
  }
}

test('a Python and a Node service on one PostgreSQL table replay each other\'s records', { skip }, async () => {
  const S = require(path.join(root, 'bindings-node', 'lib', 'stores', 'index.cjs'));
  const pg = pkgRequire('pg');
  const pool = new pg.Pool({ connectionString: servers().postgresql });
  try {
    const c = await pool.connect();
    await new S.PostgresStore().createSchema(c);
    c.release();
    await both('postgresql', () => new S.PostgresStore(), () => pool.connect(), (c) => c.release());
  } finally {
    await pool.end();
  }
});

test('a Python and a Node service on one Redis replay each other\'s records', { skip }, async () => {
  const S = require(path.join(root, 'bindings-node', 'lib', 'stores', 'index.cjs'));
  const Redis = pkgRequire('ioredis');
  const client = new Redis(servers().redis);
  try {
    await both('redis', () => new S.RedisStore(client), undefined, undefined);
  } finally {
    client.disconnect();
  }
});

/** What a client sees of an answer: status, the headers the middleware decides, the body (parsed when JSON, and a problem document's bytes). */
async function seen(res) {
  const text = await res.text();
  const type = res.headers.get('content-type');
  return {
    status: res.status,
    contentType: String(type).includes('json') && !String(type).startsWith('application/json') ? type : undefined,
    retryAfter: res.headers.get('retry-after'),
    replayed: res.headers.get('idempotent-replayed'),
    // The handlers' own bodies differ (each names its runtime): replays are compared to them below.
    body: type && type.startsWith('application/problem+json') ? JSON.parse(text) : undefined,
    // A problem document's bytes too: both hosts send the same text, not only the same JSON.
    problemText: type && type.startsWith('application/problem+json') ? text : undefined,
    text,
  };
}

/** Sends the same requests (each service its own keys) and returns what each answer was. */
async function script(base, run) {
  const send = (p, headers, body) => fetch(`${base}${p}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  const key = (n) => ({ 'idempotency-key': `"parity-${run}-${n}"` });
  const out = {};
  out.missing = await seen(await send('/charges', {}, '{"amount":1}'));
  out.invalid = await seen(await send('/charges', { 'idempotency-key': 'not a key' }, '{"amount":1}'));
  out.empty = await seen(await send('/charges', { 'idempotency-key': '""' }, '{"amount":1}'));
  out.tooLarge = await seen(await send('/charges', key(0), JSON.stringify({ pad: 'x'.repeat(1 << 20) })));
  out.first = await seen(await send('/charges', key(1), '{"amount":1}'));
  out.replay = await seen(await send('/charges', key(1), '{"amount":1}'));
  out.mismatch = await seen(await send('/charges', key(1), '{"amount":2}'));
  const slow = send('/slow', key(2), '{"amount":3}');
  await new Promise((r) => setTimeout(r, 400));
  out.inProgress = await seen(await send('/slow', key(2), '{"amount":3}'));
  out.slow = await seen(await slow);
  out.slowReplay = await seen(await send('/slow', key(2), '{"amount":3}'));
  return out;
}

test('the Python and the Node middleware answer the same requests alike: status, Retry-After, Idempotent-Replayed, problem bodies', { skip }, async () => {
  const S = require(path.join(root, 'bindings-node', 'lib', 'stores', 'index.cjs'));
  const Redis = pkgRequire('ioredis');
  const client = new Redis(servers().redis);
  const py = await pythonService('redis', servers().redis, ['required']);
  const node = await nodeService(new S.RedisStore(client), undefined, undefined, true);
  const run = crypto.randomBytes(4).toString('hex');
  try {
    const [p, n] = [await script(py.base, `py-${run}`), await script(node.base, `node-${run}`)];
    for (const out of [p, n]) {
      assert.equal(out.replay.text, out.first.text, 'a replay sends the stored body');
      assert.equal(out.slowReplay.text, out.slow.text, 'a replay sends the stored body');
      for (const a of [out.first, out.replay, out.slow, out.slowReplay]) delete a.text;
    }
    const problems = (out) => Object.fromEntries(Object.entries(out).map(([k, { text, ...a }]) => [k, a]));
    assert.deepEqual(problems(n), problems(p));
    // Pinned, so that the two agreeing on something wrong fails too.
    assert.deepEqual(p.missing.body, { type: 'about:blank', title: 'Idempotency-Key is missing', status: 400 });
    assert.equal(p.inProgress.status, 409);
    assert.equal(p.inProgress.body.title, 'A request is outstanding for this Idempotency-Key');
    assert.match(p.inProgress.retryAfter, /^[1-9][0-9]*$/);
    assert.deepEqual([p.mismatch.status, p.mismatch.body.title], [422, 'Idempotency-Key is already used']);
    assert.deepEqual([p.replay.status, p.replay.replayed, p.first.replayed], [201, 'true', null]);
    assert.deepEqual([p.slowReplay.replayed, p.tooLarge.status, p.invalid.status], ['true', 413, 400]);
  } finally {
    await node.stop();
    await py.stop();
    client.disconnect();
  }
});

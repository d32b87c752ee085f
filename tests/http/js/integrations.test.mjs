// The integrations and readers of issue 15 beyond the matrix: the response shapes and error
// fields read through the core's table, per-request overrides, a request's own key,
// AbortSignal and attempt timeouts, and the warning when a client still retries itself.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import http from 'node:http';

const require = createRequire(import.meta.url);
const rc = require('../../js/impl.cjs');
const { wrapFetch, interceptor, axiosAdapter, gotExtend, kyExtend, STACKING_CODE } = require('../../../bindings-node/dist/integrations/index.js');
const undici = require('undici');
const axios = require('axios');
const { default: got } = await import('got');
const { default: ky } = await import('ky');

/** A local server: `/<status>` answers that status (with Retry-After: 0 when `ra`), `/hang` never answers; every request is kept. */
const seen = [];
const server = http.createServer((req, res) => {
  seen.push({ url: req.url, method: req.method, key: req.headers['idempotency-key'] });
  if (req.url.startsWith('/hang')) return;
  const status = Number(req.url.split('/')[1]) || 200;
  res.writeHead(status, req.url.includes('ra') ? { 'retry-after': '0' } : {}).end('x');
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const base = `http://127.0.0.1:${server.address().port}`;
after(() => server.close());
const policy = (extra = {}) => new rc.RetryPolicy({ maxAttempts: 3, initial: 1, maxDelay: 2, ...extra });
const calls = (path) => seen.filter((s) => s.url === path);

async function warnings(f) {
  const got = [];
  const on = (w) => got.push(w);
  process.on('warning', on);
  try {
    await f();
    await new Promise((r) => setImmediate(r));
  } finally {
    process.off('warning', on);
  }
  return got.filter((w) => w.code === STACKING_CODE).map((w) => w.name);
}

test('responses of every shape are read: status and Retry-After', async () => {
  const undiciShape = { statusCode: 503, headers: { 'retry-after': '2' }, body: {} };
  assert.deepEqual([rc.classify(undiciShape).category, rc.classify(undiciShape).serverDelay], ['overloaded', 2000]);
  const axiosShape = { status: 503, headers: { 'retry-after': '3' }, config: { method: 'post' } };
  assert.deepEqual([rc.classify(axiosShape).category, rc.classify(axiosShape).serverDelay], ['overloaded', 3000]);
  const msg = await new Promise((resolve) => http.get(`${base}/503/ra`, (res) => res.resume().on('end', () => resolve(res))));
  assert.deepEqual([rc.classify(msg).category, rc.classify(msg).serverDelay], ['overloaded', 0]);
  const f = rc.describeFailure(msg);
  assert.equal(f.status, 503);
  assert.deepEqual(f.headers.find(([k]) => k === 'retry-after'), ['retry-after', '0']);
});

test("an error's method is read when the caller declares none; the caller's wins", () => {
  const reset = (m) => Object.assign(new Error('socket hang up'), { code: 'ECONNRESET', config: { method: m } });
  assert.equal(rc.classify(reset('get')).retryable, true);
  assert.equal(rc.classify(reset('post')).retryable, false);
  assert.equal(rc.classify(reset('post'), { method: 'GET' }).retryable, true);
  const kyErr = Object.assign(new Error('Request timed out'), { name: 'TimeoutError', request: { method: 'POST' } });
  assert.equal(rc.classify(kyErr).retryable, false);
});

test("got's connect-phase event says the request never left", () => {
  const e = (event) => Object.assign(new Error('Timeout'), { name: 'TimeoutError', code: 'ETIMEDOUT', event, options: { method: 'POST' } });
  for (const event of ['lookup', 'connect', 'secureConnect']) {
    assert.ok(rc.errorNames(e(event)).includes('retrycore:connecting'), event);
    assert.deepEqual([rc.classify(e(event)).category, rc.classify(e(event)).retryable], ['connect', true], event);
  }
  assert.deepEqual([rc.classify(e('response')).category, rc.classify(e('response')).retryable], ['timeout', false]);
});

test('execute retries an undici result and an IncomingMessage it is returned', async () => {
  const p = policy();
  const r = await p.execute(() => undici.request(`${base}/503/ra/u`), { method: 'GET' }).catch((e) => e);
  assert.ok(r instanceof rc.RetryError && r.attempts === 3, String(r));
  assert.equal(calls('/503/ra/u').length, 3);
  const m = await p.execute(() => new Promise((resolve) => http.get(`${base}/404/h`, (res) => res.resume().on('end', () => resolve(res)))));
  assert.equal(m.statusCode, 404); // not retried: the response is the answer
  assert.equal(calls('/404/h').length, 1);
});

test('per-request overrides: idempotencyKeySent lets a POST be retried; an unknown key is refused', async () => {
  const f = wrapFetch(fetch, policy(), { idempotencyHeader: 'Idempotency-Key' });
  assert.equal((await f(`${base}/500/o1`, { method: 'POST', body: 'x' })).status, 500);
  assert.equal(calls('/500/o1').length, 1);
  const e = await f(`${base}/500/o2`, { method: 'POST', body: 'x', retrycore: { idempotencyKeySent: true } }).catch((x) => x);
  assert.ok(e instanceof rc.RetryError, String(e));
  assert.equal(calls('/500/o2').length, 3);
  assert.equal(new Set(calls('/500/o2').map((s) => s.key)).size, 1);
  await assert.rejects(() => f(`${base}/200/o3`, { retrycore: { retries: 2 } }), { code: 'unknown_key' });
});

test("a request's own Idempotency-Key is the session's key", async () => {
  const c = axios.create({ adapter: axiosAdapter(axios, policy(), { idempotencyHeader: 'Idempotency-Key' }) });
  await assert.rejects(() => c.post(`${base}/503/ra/k`, 'x', { headers: { 'Idempotency-Key': '"k-1"' } }), rc.RetryError);
  assert.deepEqual(calls('/503/ra/k').map((s) => s.key), ['"k-1"', '"k-1"', '"k-1"']);
});

test('the caller’s AbortSignal stops the session; attemptTimeout aborts each attempt', async () => {
  const f = wrapFetch(fetch, policy({ attemptTimeout: 100 }));
  const e = await f(`${base}/hang/t`).catch((x) => x);
  assert.ok(e instanceof rc.RetryError && e.category === 'timeout', String(e));
  assert.equal(calls('/hang/t').length, 3);
  const ac = new AbortController();
  setTimeout(() => ac.abort(new Error('stop')), 50);
  await assert.rejects(() => wrapFetch(fetch, policy())(`${base}/hang/a`, { signal: ac.signal }), /stop/);
});

test('a client that still retries itself warns, with our code', async () => {
  const p = policy();
  assert.deepEqual(await warnings(() => gotExtend(got, p)(`${base}/200/w1`, { retry: { limit: 2 } })), ['RetryStackingWarning']);
  assert.deepEqual(await warnings(() => gotExtend(got, p)(`${base}/200/w2`)), []);
  assert.deepEqual(await warnings(() => kyExtend(ky, p)(`${base}/200/w3`, { retry: 2 })), ['RetryStackingWarning']);
  assert.deepEqual(await warnings(() => kyExtend(ky, p)(`${base}/200/w4`)), []);
  const c = axios.create({ adapter: axiosAdapter(axios, p) });
  assert.deepEqual(await warnings(() => c.get(`${base}/200/w5`, { 'axios-retry': { retries: 3 } })), ['RetryStackingWarning']);
  const d = new undici.Agent().compose(interceptor(p));
  assert.deepEqual(await warnings(() => undici.request(`${base}/200/w6`, { dispatcher: d, retryOptions: {} }).then((r) => r.body.text())), ['RetryStackingWarning']);
  await d.close();
});

test('attemptTimeout aborts each attempt of every integration', async () => {
  const p = policy({ attemptTimeout: 100 });
  const d = new undici.Agent().compose(interceptor(p));
  const clients = {
    undici: (url) => undici.request(url, { dispatcher: d }),
    axios: (url) => axios.create({ adapter: axiosAdapter(axios, p) }).get(url),
    got: (url) => gotExtend(got, p)(url),
    ky: (url) => kyExtend(ky, p)(url, { timeout: false }),
  };
  for (const [name, call] of Object.entries(clients)) {
    const e = await call(`${base}/hang/${name}`).catch((x) => x);
    assert.ok(e instanceof rc.RetryError && e.attempts === 3, `${name}: ${e}`);
    assert.equal(calls(`/hang/${name}`).length, 3, name);
  }
  await d.destroy();
});

'use strict';
// The knobs tenacity, axios-retry and got users set (issue 15, item 3), JS part: retryIfResult /
// retryIfError (host predicates whose verdict the core decides on), before / after hooks, the
// give-up fallback, and policy.fetch — against either implementation (RETRYCORE_IMPL=node | wasm).
// The shared behaviour is pinned by tests/vectors/execute/predicates.json; these are the JS idioms.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');
const rc = require('./impl.cjs');

const policy = () => new rc.RetryPolicy({ maxAttempts: 3, initial: 1, jitter: 'none' }).testing(3);

test('the docs/js.md snippet runs as written', async () => {
  const text = fs.readFileSync(path.join(__dirname, '..', '..', 'docs', 'js.md'), 'utf8');
  const blocks = [...text.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]).filter((b) => b.includes('retryIfResult'));
  assert.equal(blocks.length, 1);
  const states = ['pending', 'pending', 'done'];
  const jobState = async () => states.shift();
  const AsyncFunction = (async () => {}).constructor;
  const run = new AsyncFunction('policy', 'jobState', 'id', `${blocks[0]}\nreturn state;`);
  assert.equal(await run(policy(), jobState, 'job-1'), 'done');
});

test('retryIfResult: a truthy verdict (or a promise of one) makes the value a failure', async () => {
  const values = [null, null, 42];
  const got = await policy().execute(() => values.shift(), { retryIfResult: async (v) => v === null });
  assert.equal(got, 42);
  const e = await policy().execute(() => 'pending', { retryIfResult: (v) => v === 'pending' }).catch((x) => x);
  assert.ok(e instanceof rc.RetryError);
  assert.equal(e.reason, 'attempts_exhausted');
  assert.equal(e.cause, 'pending');
});

test('retryIfResult with a category keeps idempotency gating: a POST value goes back as is', async () => {
  let calls = 0;
  const got = await policy().execute(() => (calls++, 'half done'), { method: 'POST', retryIfResult: () => 'server_error' });
  assert.deepEqual([got, calls], ['half done', 1]);
});

test('retryIfError: its verdict goes to the core, what it throws reaches the caller', async () => {
  const quota = Object.assign(new Error('slow down'), { code: 'QUOTA' });
  const outcomes = [quota, 'ok'];
  const seen = [];
  const p = policy();
  p.onRetry = (i) => seen.push(i.category);
  const got = await p.execute(() => {
    const o = outcomes.shift();
    if (o instanceof Error) throw o;
    return o;
  }, { method: 'POST', retryIfError: (e) => (e.code === 'QUOTA' ? 'overloaded' : undefined) });
  assert.equal(got, 'ok');
  assert.deepEqual(seen, ['overloaded']);
  const broke = new RangeError('predicate broke');
  const e = await policy().execute(() => { throw new Error('x'); }, { retryIfError: () => { throw broke; } }).catch((x) => x);
  assert.equal(e, broke);
});

test('a bad verdict or option is a TypeError naming its field', async () => {
  const e = await policy().execute(() => { throw new Error('x'); }, { retryIfError: () => 3 }).catch((x) => x);
  assert.ok(e instanceof TypeError);
  assert.equal(e.code, 'invalid_type');
  const bad = await policy().execute(() => 1, { fallback: 'cached' }).catch((x) => x);
  assert.deepEqual([bad.code, bad.field], ['invalid_type', 'fallback']);
  assert.throws(() => rc.classify({ status: 500, verdict: 'sometimes' }), (x) => x.code === 'invalid_value' && x.field === 'verdict');
  const v = rc.classify(500, { method: 'POST', verdict: true });
  assert.deepEqual([v.category, v.retry, v.retryable], ['server_error', 'always', true]);
});

test('fallback: its value (or promise) instead of the error, which it receives', async () => {
  let info;
  const got = await policy().execute(() => { throw Object.assign(new Error('reset'), { code: 'ECONNRESET' }); }, {
    method: 'GET',
    fallback: async (i) => ((info = i), 'cached'),
  });
  assert.equal(got, 'cached');
  assert.equal(info.reason, 'attempts_exhausted');
  assert.equal(info.attempt, 3);
  assert.ok(info.error instanceof rc.RetryError);
  // Never for an abort.
  const ac = new AbortController();
  const e = await policy().execute(() => { ac.abort(); throw ac.signal.reason; }, { signal: ac.signal, fallback: () => 'no' }).catch((x) => x);
  assert.equal(e, ac.signal.reason);
});

test('before and after fire around each attempt, after before onRetry', async () => {
  const log = [];
  const p = policy();
  p.onRetry = (i) => log.push(['onRetry', i.retry]);
  const outcomes = [Object.assign(new Error('reset'), { code: 'ECONNRESET' }), 'ok'];
  await p.execute(() => {
    const o = outcomes.shift();
    if (o instanceof Error) throw o;
    return o;
  }, { method: 'GET', before: (i) => log.push(['before', i.attempt]), after: (i) => log.push(['after', i.attempt, i.category]) });
  assert.deepEqual(log, [['before', 1], ['after', 1, 'connection_lost'], ['onRetry', 1], ['before', 2]]);
});

test('policy.fetch retries a GET the core retries and sends a POST once', async (t) => {
  let hits = 0;
  const server = http.createServer((req, res) => {
    hits++;
    req.resume();
    res.writeHead(hits % 3 === 0 ? 200 : 503, { 'content-type': 'text/plain' }).end('x');
  });
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
  t.after(() => server.close());
  const url = `http://127.0.0.1:${server.address().port}/`;
  const res = await policy().fetch(url);
  assert.deepEqual([res.status, hits], [200, 3]);
  hits = 0;
  const post = await policy().fetch(url, { method: 'POST', body: 'charge' });
  // 503 without Retry-After waits for idempotency: returned as is after one request.
  assert.deepEqual([post.status, hits], [503, 1]);
});

'use strict';
// Issue 20, JS part: the retry log (a `logger` option: a function, or a pino /
// console-like object) and the alert evaluator `alerts()`, against either
// implementation (RETRYCORE_IMPL=node | wasm, see impl.cjs). The records'
// fields and the alerts' checks are pinned in every runtime by the vectors
// (tests/vectors/retry_log, tests/vectors/alerts); this file checks the host's
// part: how the record reaches a logger, and what alerts() accepts.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const rc = require('./impl.cjs');

/** A policy that retries at once (no timers) and fails `n` times with `err` before it returns 'ok'. */
async function run(options, failures, err = new TypeError('fetch failed')) {
  const p = new rc.RetryPolicy({ jitter: 'none', initial: 0, maxAttempts: 3, ...options });
  let n = 0;
  try {
    return await p.execute(() => {
      if (n++ < failures) throw err;
      return 'ok';
    }, { key: 'k-1', method: 'GET' });
  } catch (e) {
    return e;
  }
}

test('silent by default: no logger, no record and nothing on the console', async () => {
  const seen = [];
  const orig = { warn: console.warn, error: console.error, info: console.info, log: console.log };
  for (const k of Object.keys(orig)) console[k] = (...a) => seen.push(a);
  try {
    assert.equal(await run({}, 1), 'ok');
    assert.equal(new rc.RetryPolicy().logger, null);
  } finally {
    Object.assign(console, orig);
  }
  assert.deepEqual(seen, []);
});

test('a pino-like logger gets logger[level](fields, message), warn for a retry and error for a give-up', async () => {
  const calls = [];
  const logger = {};
  for (const level of ['trace', 'debug', 'info', 'warn', 'error', 'fatal']) logger[level] = (obj, msg) => calls.push([level, obj, msg]);
  const e = await run({ logger, correlationId: () => 'req-9' }, 3);
  assert.ok(e instanceof rc.RetryError, String(e));
  assert.deepEqual(calls.map((c) => c[0]), ['warn', 'warn', 'error']);
  const [, fields, msg] = calls[0];
  assert.equal(msg, 'attempt 1 of 3 failed (connection_lost: TypeError); retry 1 in 0s');
  assert.deepEqual(fields, {
    event: 'retry', attempt: 1, max_attempts: 3, retry: 1, category: 'connection_lost', error: 'TypeError', delay_ms: 0,
    reason: null, budget: null, idempotency_key: 'k-1', correlation_id: 'req-9',
  });
  assert.equal(calls[2][2], 'gave up after 3 attempts: attempts_exhausted (last failure: connection_lost: TypeError)');
  assert.equal(calls[2][1].reason, 'attempts_exhausted');
});

test('a logger without a method of the level gets warn; a function gets the record', async () => {
  const warned = [];
  await run({ logger: { warn: (o, m) => warned.push(m) } }, 3);
  assert.equal(warned.length, 3, 'two retries and the give-up, all through warn');
  const records = [];
  await run({ logger: (r) => records.push(r) }, 1);
  assert.deepEqual(records.map((r) => [r.level, r.fields.event, r.fields.correlation_id]), [['warn', 'retry', 'k-1']]);
});

test("the error's name: its class's when its name is the generic Error; null for a response", async () => {
  class UpstreamUnavailable extends Error {}
  const errs = [];
  const p = new rc.RetryPolicy({ jitter: 'none', initial: 0, logger: (r) => errs.push(r.fields.error) });
  let n = 0;
  const outcomes = [
    () => {
      const e = new UpstreamUnavailable('x');
      e.code = 'ECONNRESET';
      throw e;
    },
    () => new Response('', { status: 503 }),
    () => 'ok',
  ];
  assert.equal(await p.execute(() => outcomes[n++](), { method: 'GET' }), 'ok');
  assert.deepEqual(errs, ['UpstreamUnavailable', null]);
});

test('what the logger or correlationId throws is reported as a hook error, never met by the caller', async () => {
  const warnings = [];
  const onWarning = (w) => warnings.push(w);
  process.on('warning', onWarning);
  try {
    assert.equal(await run({ logger: () => { throw new Error('disk full'); } }, 1), 'ok');
    assert.equal(await run({ logger: () => {}, correlationId: () => { throw new Error('no context'); } }, 1), 'ok');
    await new Promise((r) => setImmediate(r));
  } finally {
    process.off('warning', onWarning);
  }
  assert.deepEqual(warnings.map((w) => w.name), ['RetrycoreHookWarning', 'RetrycoreHookWarning']);
});

test('a logger that is neither a function nor has warn is refused; testing() keeps the logger', () => {
  for (const bad of [42, 'console', {}, { info() {} }]) {
    assert.throws(() => new rc.RetryPolicy({ logger: bad }), (e) => e instanceof TypeError && e.code === 'invalid_type' && e.field === 'logger');
  }
  assert.throws(() => new rc.RetryPolicy({ correlationId: 'req-1' }), (e) => e.code === 'invalid_type' && e.field === 'correlationId');
  const logger = () => {};
  const cid = () => 'x';
  const t = new rc.RetryPolicy({ logger, correlationId: cid }).testing(2);
  assert.equal(t.logger, logger);
  assert.equal(t.correlationId, cid);
});

test("alerts() answers the CLI's checks for docs/observability.md's example", () => {
  const page = fs.readFileSync(path.join(__dirname, '..', '..', 'docs', 'observability.md'), 'utf8');
  const doc = JSON.parse(page.split('```json\n')[1].split('```')[0]);
  const e = rc.alerts(doc.before, doc.after, rc.parseDuration(doc.interval));
  assert.equal(e.interval, '5m');
  assert.equal(e.alerts, 3);
  assert.deepEqual(e.checks.map((c) => [c.level, c.rule, c.subject, c.status]), [
    ['critical', 'breaker_open', 'payments', 'firing'],
    ['error', 'exhausted_rate', 'payments', 'firing'],
    ['warn', 'retry_rate', 'payments', 'firing'],
    ['warn', 'duplicate_rate', 'orders', 'ok'],
  ]);
  // The CLI's lines are these messages (docs/observability.md, "Checking two snapshots").
  for (const c of e.checks) assert.ok(page.includes(c.message), c.message);
  // JSON text works as well as objects.
  assert.deepEqual(rc.alerts(JSON.stringify(doc.before), JSON.stringify(doc.after), 300000), e);
});

test("alerts() reads a policy's counters() as they are, and refuses bad input naming the field", async () => {
  const p = new rc.RetryPolicy({ jitter: 'none', initial: 0 });
  const before = p.counters();
  for (let i = 0; i < 100; i++) {
    let n = 0;
    await p.execute(() => {
      if (n++ === 0 && i < 20) throw new TypeError('fetch failed');
      return 'ok';
    }, { method: 'GET' });
  }
  const e = rc.alerts({ policies: { p: before } }, { policies: { p: p.counters() } }, 60000);
  const c = e.checks.find((x) => x.rule === 'retry_rate');
  assert.deepEqual([c.status, c.count, c.volume, c.value], ['firing', 20, 100, 0.2]);
  assert.throws(() => rc.alerts({}, { breakers: { x: 'ajar' } }, 60000), (err) => err.code === 'invalid_value' && err.field === 'after.breakers.x');
  assert.throws(() => rc.alerts({}, {}, 0), (err) => err.code === 'invalid_duration' && err.field === 'intervalMs');
  assert.throws(() => rc.alerts({}, {}, 60000, { retry_rate: { above: 2 } }), (err) => err.code === 'out_of_range' && err.field === 'thresholds.retry_rate.above');
  assert.throws(() => rc.alerts(null, {}, 60000), (err) => err.code === 'invalid_type');
});

test("docs/observability.md's JS snippet is examples/observability/retry-log.mjs, and it runs", async () => {
  const root = path.join(__dirname, '..', '..');
  const text = fs.readFileSync(path.join(root, 'examples', 'observability', 'retry-log.mjs'), 'utf8');
  assert.ok(fs.readFileSync(path.join(root, 'docs', 'observability.md'), 'utf8').includes('```js\n' + text + '```'), 'docs/observability.md quotes it');
  // The snippet imports 'retrycore' and assert; run it against the implementation under test.
  const body = text.replace(/^import \{([^}]*)\} from 'retrycore';$/m, (_, names) => `const {${names}} = rc;`).replace(/^import assert from 'node:assert\/strict';$/m, '');
  await new Function('rc', 'assert', `return (async () => {\n${body}\n})();`)(rc, assert);
});

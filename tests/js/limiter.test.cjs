'use strict';
// Limiters under concurrency (docs/limiters.md): many tasks on one bulkhead
// never exceed its limit; a cancelled wait leaves the queue and gives its
// permit back; a wait that runs out rejects with a LimiterRejectedError.
const test = require('node:test');
const assert = require('node:assert/strict');
const rc = require('./impl.cjs');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

test('200 tasks on one bulkhead never run more than its limit at once, and all finish', async () => {
  const lim = new rc.Limiter({ kind: 'bulkhead', maxConcurrent: 3, maxWait: 5000, queueLimit: 1000 });
  let active = 0;
  let peak = 0;
  const tasks = Array.from({ length: 200 }, (_, i) =>
    lim.run(async () => {
      active++;
      peak = Math.max(peak, active);
      assert.ok(lim.inFlight <= 3);
      await sleep(i % 3);
      active--;
      return i;
    }),
  );
  const done = await Promise.all(tasks);
  assert.equal(done.length, 200);
  assert.ok(peak <= 3, `peak ${peak}`);
  assert.equal(peak, 3);
  assert.deepEqual(lim.state(), { inFlight: 0, queued: 0, kind: 'bulkhead' });
});

test('an aborted queued wait leaves the queue; the slot it would have had goes to nobody', async () => {
  const lim = new rc.Limiter({ kind: 'bulkhead', maxConcurrent: 1, maxWait: 10_000 });
  await lim.wait();
  const ac = new AbortController();
  const waiting = lim.wait({ signal: ac.signal });
  assert.equal(lim.state().queued, 1);
  ac.abort();
  await assert.rejects(waiting, (e) => e.name === 'AbortError');
  assert.equal(lim.state().queued, 0);
  lim.release();
  assert.equal(lim.inFlight, 0);
});

test('an aborted delay gives its reserved token back', async () => {
  const lim = new rc.Limiter({ kind: 'token_bucket', tokenLimit: 1, tokensPerPeriod: 1, period: 60_000, queueLimit: 5 });
  await lim.wait();
  const ac = new AbortController();
  const waiting = lim.wait({ signal: ac.signal });
  assert.equal(lim.state().queued, 1);
  ac.abort(new Error('stop'));
  await assert.rejects(waiting, /stop/);
  assert.equal(lim.state().queued, 0);
});

test('a wait that runs out rejects with LimiterRejectedError (max_wait_exceeded), a retrycore error', async () => {
  const lim = new rc.Limiter({ kind: 'bulkhead', maxConcurrent: 1, maxWait: 20 });
  await lim.wait();
  await assert.rejects(lim.wait(), (e) => {
    assert.ok(e instanceof rc.LimiterRejectedError);
    assert.ok(rc.isRetrycoreError(e));
    assert.equal(e.code, 'limiter_rejected');
    assert.equal(e.reason, 'max_wait_exceeded');
    assert.equal(e.retryAfter, null);
    return true;
  });
  assert.equal(lim.state().queued, 0);
  // A full rate limiter says when to come back.
  const rate = new rc.Limiter({ kind: 'fixed_window', permitLimit: 1, window: '1s' });
  await rate.wait();
  await assert.rejects(rate.wait(), (e) => e.reason === 'queue_full' && e.retryAfter > 0 && e.retryAfter <= 1000);
});

test('a release hands the slot to the oldest waiter', async () => {
  const lim = new rc.Limiter({ kind: 'bulkhead', maxConcurrent: 1, maxWait: 10_000 });
  await lim.wait();
  const order = [];
  const a = lim.wait().then(() => order.push('a'));
  const b = lim.wait().then(() => order.push('b'));
  lim.release();
  await a;
  lim.release();
  await b;
  assert.deepEqual(order, ['a', 'b']);
});

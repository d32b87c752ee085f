'use strict';
// A limiter in a policy (docs/limiters.md, "In a policy"): many tasks through
// one policy with a bulkhead never run more calls at once than its limit; a
// refused first attempt rejects with LimiterRejectedError; the wait a limiter
// reserved is slept before the call, and an aborted wait gives the permit back.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const rc = require('./impl.cjs');

const ROOT = path.join(__dirname, '..', '..');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

test('200 tasks through one policy with a bulkhead of 3 never run more than 3 calls at once', async () => {
  const policy = new rc.RetryPolicy({ jitter: 'none', limiter: { kind: 'bulkhead', maxConcurrent: 3 } });
  let active = 0;
  let peak = 0;
  const work = async (i) => {
    active++;
    peak = Math.max(peak, active);
    await sleep(i % 3);
    active--;
    return i;
  };
  const out = await Promise.allSettled(Array.from({ length: 200 }, (_, i) => policy.execute(() => work(i))));
  const passed = out.filter((r) => r.status === 'fulfilled');
  const refused = out.filter((r) => r.status === 'rejected');
  assert.equal(passed.length + refused.length, 200);
  assert.equal(peak, 3);
  for (const r of refused) {
    assert.ok(r.reason instanceof rc.LimiterRejectedError, String(r.reason));
    assert.deepEqual([r.reason.code, r.reason.reason, r.reason.limiter, r.reason.retryAfter], ['limiter_rejected', 'bulkhead_full', 'bulkhead', null]);
  }
  // Every slot came back.
  for (let i = 0; i < 3; i++) assert.equal(await policy.execute(() => work(i)), i);
  const c = policy.counters();
  assert.equal(c.rejected_total, refused.length);
  assert.equal(c.retry_exhausted_total.limiter_rejected, refused.length);
});

const BUCKET = { kind: 'token_bucket', tokenLimit: 1, tokensPerPeriod: 1, period: 200, queueLimit: 5 };

/** A policy on an injected clock whose sleep records each wait and parks until its signal aborts. */
function parked(options) {
  const policy = new rc.RetryPolicy(options);
  const clock = { now: 0, waits: [], parked: null };
  policy._clock = {
    now: () => clock.now,
    wallNow: () => null,
    sleep: (ms, signal) => {
      clock.waits.push(ms);
      return new Promise((_, reject) => {
        const stop = () => reject(signal.reason);
        if (signal.aborted) stop();
        else signal.addEventListener('abort', stop, { once: true });
        if (clock.parked) clock.parked();
      });
    },
  };
  return { policy, clock };
}

test('an aborted wait releases the attempt: the next call waits for the same period, not the next', async () => {
  const { policy, clock } = parked({ limiter: BUCKET });
  assert.equal(await policy.execute(async () => 'ok'), 'ok'); // the only token
  for (let i = 0; i < 2; i++) {
    const ac = new AbortController();
    const waiting = new Promise((r) => (clock.parked = r));
    const call = policy.execute(async () => 'never', { signal: ac.signal });
    await waiting;
    ac.abort(new Error('stop'));
    await assert.rejects(call, /stop/);
  }
  assert.deepEqual(clock.waits, [200, 200]);
  assert.equal(policy.counters().retry_exhausted_total.cancelled, 2);
});

test('the wait is slept before the call; a refused first attempt is a LimiterRejectedError with retryAfter', async () => {
  const policy = new rc.RetryPolicy({ limiter: BUCKET });
  const clock = { now: 0, waits: [] };
  policy._clock = {
    now: () => clock.now,
    wallNow: () => null,
    sleep: (ms) => {
      clock.waits.push(ms);
      clock.now += ms;
      return Promise.resolve();
    },
  };
  assert.equal(await policy.execute(async () => clock.now), 0);
  assert.equal(await policy.execute(async () => clock.now), 200);
  assert.deepEqual(clock.waits, [200]);
  const refusing = new rc.RetryPolicy({ limiter: { kind: 'fixed_window', permitLimit: 1, window: '1s' } });
  refusing._clock = { now: () => 250, wallNow: () => null, sleep: () => Promise.resolve() };
  assert.equal(await refusing.execute(async () => 'ok'), 'ok');
  const e = await refusing.execute(async () => 'ok').then(() => null, (x) => x);
  assert.ok(e instanceof rc.LimiterRejectedError);
  assert.deepEqual([e.code, e.reason, e.limiter, e.retryAfter], ['limiter_rejected', 'queue_full', 'fixed_window', 750]);
  assert.equal(e.message, 'limiter "fixed_window" rejected the call: queue_full; retry after 750ms');
});

test("docs/limiters.md's JS snippet is examples/limiters/policy.mjs, and it runs", async () => {
  const file = path.join(ROOT, 'examples', 'limiters', 'policy.mjs');
  const text = fs.readFileSync(file, 'utf8');
  assert.ok(fs.readFileSync(path.join(ROOT, 'docs', 'limiters.md'), 'utf8').includes('```js\n' + text + '```'), 'docs/limiters.md quotes examples/limiters/policy.mjs');
  // The snippet imports 'retrycore'; run it against the implementation under test.
  const body = text.replace(/^import \{([^}]*)\} from 'retrycore';$/m, (_, names) => `const {${names}} = rc;`);
  await new Function('rc', 'assert', `return (async () => {\n${body}\n})();`)(rc, assert);
});

'use strict';
// CircuitBreaker.execute skips the crossings the core says change nothing
// but the breaker's clock (issue 17: CircuitBreaker::free_admission and
// free_success, the backend's `succeed`): these tests hold it to what every
// call would have done, against either implementation (impl.cjs).
const test = require('node:test');
const assert = require('node:assert/strict');
const { CircuitBreaker, CircuitOpenError, RetryPolicy } = require('./impl.cjs');

const ok = () => 1;
const reset = () => {
  throw Object.assign(new Error('reset'), { code: 'ECONNRESET' });
};

test('a success after a failure is reported: consecutive failures restart from it', async () => {
  const b = new CircuitBreaker({ kind: 'consecutive', failureThreshold: 2, waitDurationInOpenState: 60_000 });
  // Successes until the core answers that the next ones change nothing.
  for (let i = 0; i < 5; i++) await b.execute(ok);
  await assert.rejects(b.execute(reset));
  assert.equal(b.metrics().failures, 1);
  await b.execute(ok);
  assert.equal(b.metrics().failures, 0, 'the success restarted the count');
  await assert.rejects(b.execute(reset));
  assert.equal(b.state, 'closed');
  await assert.rejects(b.execute(reset));
  assert.equal(b.state, 'open');
  await assert.rejects(b.execute(ok), (e) => e instanceof CircuitOpenError);
});

test('a count_based window keeps counting what it must: slow successes, and the calls after a failure', async () => {
  const b = new CircuitBreaker({ kind: 'count_based', slidingWindowSize: 4, minimumNumberOfCalls: 4, failureRateThreshold: 50, slowCallDurationThreshold: 20, slowCallRateThreshold: 50 });
  for (let i = 0; i < 8; i++) await b.execute(ok);
  assert.deepEqual([b.metrics().calls, b.metrics().failures, b.metrics().slow], [4, 0, 0]);
  // A slow success (past 20 ms) counts as slow even when the window was full of fast ones.
  await b.execute(() => {
    const t = performance.now();
    while (performance.now() - t < 30);
  });
  assert.deepEqual([b.metrics().calls, b.metrics().slow], [4, 1]);
  await assert.rejects(b.execute(reset));
  assert.deepEqual([b.metrics().calls, b.metrics().failures, b.metrics().slow], [4, 1, 1]);
  // Three successes push the slow call out of the window, a fourth the failure.
  for (let i = 0; i < 3; i++) await b.execute(ok);
  assert.deepEqual([b.metrics().calls, b.metrics().failures, b.metrics().slow], [4, 1, 0]);
  await b.execute(ok);
  assert.deepEqual([b.metrics().calls, b.metrics().failures, b.metrics().slow], [4, 0, 0]);
  assert.equal(b.state, 'closed');
});

test('a change by hand, by a restore or by a sharing policy ends the skipping', async () => {
  const b = new CircuitBreaker({ kind: 'consecutive', failureThreshold: 1, waitDurationInOpenState: 60_000 });
  for (let i = 0; i < 3; i++) await b.execute(ok);
  b.transitionTo('open');
  await assert.rejects(b.execute(ok), (e) => e instanceof CircuitOpenError);
  b.reset();
  for (let i = 0; i < 3; i++) await b.execute(ok);
  const open = new CircuitBreaker({ kind: 'consecutive', failureThreshold: 1, waitDurationInOpenState: 60_000 });
  await assert.rejects(open.execute(reset));
  b.restore(open.snapshot());
  await assert.rejects(b.execute(ok), (e) => e instanceof CircuitOpenError);

  // A policy sharing the breaker opens it: the breaker's own calls see it at once.
  const c = new CircuitBreaker({ kind: 'consecutive', failureThreshold: 1, waitDurationInOpenState: 60_000 });
  for (let i = 0; i < 3; i++) await c.execute(ok);
  const p = new RetryPolicy({ maxAttempts: 1, breaker: c });
  for (let i = 0; i < 3; i++) await c.execute(ok);
  await assert.rejects(p.execute(reset));
  assert.equal(c.state, 'open');
  await assert.rejects(c.execute(ok), (e) => e instanceof CircuitOpenError);

  // The breaker a policy holds is shared: its wrapper sees the policy's transitions too.
  const q = new RetryPolicy({ maxAttempts: 1, breaker: { kind: 'consecutive', failureThreshold: 1, waitDurationInOpenState: 60_000 } });
  const qb = q.breaker;
  for (let i = 0; i < 3; i++) await qb.execute(ok);
  await assert.rejects(q.execute(reset));
  await assert.rejects(qb.execute(ok), (e) => e instanceof CircuitOpenError);
});

test('the clock the skipped calls read reaches the breaker before anything else does', async () => {
  const b = new CircuitBreaker({ kind: 'consecutive', failureThreshold: 5 });
  for (let i = 0; i < 3; i++) await b.execute(ok);
  const before = performance.now();
  for (let i = 0; i < 3; i++) await b.execute(ok);
  // A snapshot at an earlier `now` is taken at the breaker's clock: at least the last call's reading.
  const s = b.snapshot(0, 1_000_000);
  assert.ok(s.elapsed_in_state_ns >= before * 1e6, `${s.elapsed_in_state_ns} < ${before * 1e6}`);
});

test('onStateChange sees every transition of calls made through execute', async () => {
  const seen = [];
  const b = new CircuitBreaker({ kind: 'consecutive', failureThreshold: 2, waitDurationInOpenState: 60_000, onStateChange: (t) => seen.push(`${t.from}>${t.to}`) });
  for (let i = 0; i < 4; i++) await b.execute(ok);
  await assert.rejects(b.execute(reset));
  await assert.rejects(b.execute(reset));
  assert.deepEqual(seen, ['closed>open']);
  b.reset();
  for (let i = 0; i < 4; i++) await b.execute(ok);
  assert.deepEqual(seen, ['closed>open', 'open>closed']);
  assert.equal(b.metrics().transitions, 2);
});

// A failing call that leaves the breaker closed lets the next call skip asking (the backend's `fail`
// answers as `succeed` does): a breaker whose every call asks (`_native` before each) must end the same.
test('calls after a failure skip asking, and count as if each had asked: errors of every shape', async () => {
  let flips = 0;
  const shapes = [
    () => { throw Object.assign(new Error('reset'), { code: 'ECONNRESET' }); },
    () => { throw Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' }); },
    () => { throw new TypeError('fetch failed'); },
    () => { throw Object.assign(new Error('unavailable'), { status: 503 }); },
    () => { throw Object.assign(new Error('bad request'), { status: 400 }); },
    () => { throw Object.assign(new Error('ignored by name'), { code: 'EIGNORED' }); },
    // A hostile getter, a proxy, and an error whose code changes from one call to the next.
    () => { throw Object.defineProperty(new Error('hostile'), 'code', { get() { throw new Error('no'); } }); },
    () => { throw new Proxy(Object.assign(new Error('proxy'), { code: 'ECONNRESET' }), { get: (t, k) => (k === 'status' ? 502 : t[k]) }); },
    () => { throw Object.defineProperty(new Error('flip'), 'code', { get: () => (flips++ % 2 ? 'ECONNRESET' : 'EIGNORED') }); },
    () => { throw 'a string'; },
    () => 1,
  ];
  const configs = [
    { kind: 'consecutive', failureThreshold: 9, waitDurationInOpenState: 60_000, count: [{ name: 'EIGNORED', count: 'ignored' }, { status: 400, count: 'success' }] },
    { kind: 'count_based', slidingWindowSize: 20, minimumNumberOfCalls: 20, failureRateThreshold: 90, waitDurationInOpenState: 60_000, count: [{ name: 'EIGNORED', count: 'ignored' }] },
  ];
  for (const config of configs) {
    const seen = { skipping: [], asking: [] };
    const b = new CircuitBreaker({ ...config, onStateChange: (t) => seen.skipping.push(`${t.from}>${t.to}`) });
    const ref = new CircuitBreaker({ ...config, onStateChange: (t) => seen.asking.push(`${t.from}>${t.to}`) });
    // A fixed pseudo-random script: runs of one shape, then of another.
    let x = 7;
    for (let i = 0; i < 300; i++) {
      x = (x * 1103515245 + 12345) % 2 ** 31;
      const f = shapes[(x >> 8) % shapes.length];
      const runs = 1 + ((x >> 4) % 4);
      for (let j = 0; j < runs; j++) {
        flips = 0;
        const r1 = await b.execute(f).then(() => 'ok', (e) => (e instanceof CircuitOpenError ? 'refused' : 'threw'));
        flips = 0;
        void ref._native; // every call asks
        const r2 = await ref.execute(f).then(() => 'ok', (e) => (e instanceof CircuitOpenError ? 'refused' : 'threw'));
        assert.equal(r1, r2, `call ${i}.${j}`);
      }
    }
    assert.deepEqual(seen.skipping, seen.asking);
    const m = (c) => { const { calls, failures, slow, state, transitions, rejections } = c.metrics(); return { calls, failures, slow, state, transitions, rejections }; };
    assert.deepEqual(m(b), m(ref), config.kind);
  }
});

'use strict';
// The hot calls go through functions bound to the native object (issue 17:
// in the napi package, `bound()`; no `this` is unwrapped per call): the
// methods' answers and errors.
const test = require('node:test');
const assert = require('node:assert/strict');
const rc = require('./impl.cjs');

test('delay answers as the native method, errors included', () => {
  const p = new rc.RetryPolicy({ jitter: 'full', maxDelay: '5s' });
  // Through the methods first, then (napi) through the bound functions once the policy proved used.
  for (let k = 0; k < 5; k++) {
    for (const retry of [1, 2, 3, 10, 2 ** 40]) {
      for (const r of [0, 0.25, 0.5, 1]) assert.equal(p.delay(retry, r), p._native.delay(retry, r, undefined));
    }
  }
  const fails = (f, cls, code, field) =>
    assert.throws(f, (e) => e instanceof cls && e.code === code && e.field === field);
  fails(() => p.delay(0, 0.5), RangeError, 'out_of_range', 'retry');
  fails(() => p.delay(1.5, 0.5), RangeError, 'out_of_range', 'retry');
  fails(() => p.delay('1', 0.5), TypeError, 'invalid_type', 'retry');
  fails(() => p.delay(1, null), TypeError, 'invalid_type', 'r');
  fails(() => p.delay(1, 0.5, 'x'), TypeError, 'invalid_type', 'prev');
  // A second policy's bound function answers for its own policy.
  const q = new rc.RetryPolicy({ initialDelay: '1s', jitter: 'none' });
  assert.equal(q.delay(1, 0.5), 1000);
  assert.equal(p.delay(1, 0), p._native.delay(1, 0, undefined));
});

test('the bound functions answer and fail as the methods (napi)', { skip: rc.IMPL === 'wasm' }, () => {
  const b = new rc.CircuitBreaker({ kind: 'consecutive', failureThreshold: 1 })._native;
  const h = b.bound();
  const permit = h.tryAcquire(1);
  assert.ok(permit >= 0);
  assert.equal(h.record(permit, 1, 1, 2), true);
  assert.equal(b.state, 'open');
  assert.equal(h.tryAcquire(3), -1);
  for (const f of [() => h.tryAcquire('x'), () => b.tryAcquire('x')]) {
    assert.throws(f, (e) => e instanceof Error && e.code === 'NumberExpected');
  }
  const p = new rc.RetryPolicy()._native.bound();
  assert.throws(() => p.delay(0, 0.5), (e) => e instanceof RangeError && e.code === 'out_of_range' && e.field === 'retry');
  assert.throws(() => p.retried(12345), (e) => e.code !== undefined);
});

test('objects whose hot calls were bound are still collected', async () => {
  // A bound function holds its object (bindings-node/src/bound.rs) until the function itself is
  // collected: a policy, breaker or budget that bound its calls must still go once nothing holds it.
  const v8 = require('node:v8');
  const vm = require('node:vm');
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc');
  const made = 150;
  // Past the calls an object makes through its methods before it binds them (BIND_AFTER, 64).
  const calls = 80;
  let collected = 0;
  const registry = new FinalizationRegistry(() => collected++);
  for (let i = 0; i < made; i++) {
    const p = new rc.RetryPolicy();
    for (let k = 0; k < calls; k++) p.delay(1, 0.5);
    if (rc.IMPL !== 'wasm') assert.notEqual(p._hot(), p._native, 'the policy bound its hot calls');
    registry.register(p._native, i);
    const b = new rc.CircuitBreaker();
    for (let k = 0; k < calls; k++) await b.execute(() => 1);
    registry.register(b._native, i);
    const u = new rc.Budget({ kind: 'token_bucket' });
    for (let k = 0; k < calls; k++) u.tryWithdraw();
    registry.register(u._native, i);
  }
  for (let i = 0; i < 30 && collected < made * 2; i++) {
    gc();
    await new Promise((resolve) => setImmediate(resolve));
  }
  assert.ok(collected >= made * 2, `${collected} of ${made * 3} native objects collected`);
  // The registry must outlive the loop above: a registry that is itself collected calls back no more.
  registry.unregister(registry);
});

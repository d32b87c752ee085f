'use strict';
// Issue 17: a session's failure of names alone crosses as `failNames`, whose answer packs the
// retry decision (bindings-js/src/policy.rs); any other failure crosses as `fail` and its
// decision is read as before. Both must give the same decisions.
const test = require('node:test');
const assert = require('node:assert/strict');
const rc = require('./impl.cjs');

const reset = Object.assign(new Error('reset'), { code: 'ECONNRESET' });

/** Every gate and decision of a seeded session failing with `failure(i)` at each step. */
function steps(options, failure) {
  const s = new rc.RetryPolicy(options).session({ seed: '7' });
  const out = [];
  for (let i = 0; i < 60; i++) {
    const g = s.beforeAttempt(1000 * i);
    out.push(g);
    if (g.action !== 'proceed') break;
    const d = s.onFailure(failure(i), 1000 * i + 5);
    out.push(d);
    if (d.action === 'give_up') break;
  }
  return out;
}

test('a session decides the same whether a failure crosses as names alone or with other fields', () => {
  for (const options of [
    { maxAttempts: 40, idempotent: true },
    { maxAttempts: 5 },
    // Delays past 2^47 ns: the packed answer gives way to the decision's JSON.
    { maxAttempts: 30, idempotent: true, initial: '1h', maxDelay: '1000000h' },
  ]) {
    const names = steps(options, () => reset);
    // `elapsed` sends the failure through `fail`: the same decisions, read the other way.
    const full = steps(options, () => ({ errorNames: rc.errorNames(reset), elapsed: 0 }));
    assert.deepEqual(names, full);
    if (options.idempotent) assert.ok(names.length > 4);
    // Mixed: names alone, then a status, then names alone again.
    const mixed = steps(options, (i) => (i % 3 === 1 ? { status: 503 } : reset));
    const mixedFull = steps(options, (i) => (i % 3 === 1 ? { status: 503 } : { errorNames: rc.errorNames(reset), elapsed: 0 }));
    assert.deepEqual(mixed, mixedFull);
  }
});

test('a finished or released session refuses a failure of names alone as before', () => {
  const s = new rc.RetryPolicy({ maxAttempts: 2, idempotent: true }).session();
  s.beforeAttempt(0);
  assert.throws(() => s.beforeAttempt(1), { code: 'invalid_state' });
  assert.equal(s.onFailure(reset, 2).action, 'retry');
  assert.throws(() => s.onFailure(reset, 3), { code: 'invalid_state' });
  s.release();
  assert.throws(() => s.onFailure(reset, 4), { code: 'invalid_state' });
});

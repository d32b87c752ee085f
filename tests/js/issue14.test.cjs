'use strict';
// Issue 14, JS part: what a host shows is the core's decision, never a copy
// of a core rule (docs/hosts.md). Each test pins one item the JS layer used
// to decide alone, against either implementation (RETRYCORE_IMPL=node |
// wasm, see impl.cjs); the Python side is tests/python/test_issue14.py.
const test = require('node:test');
const assert = require('node:assert/strict');
const rc = require('./impl.cjs');

const { RetryPolicy } = rc;

const err = (code) => Object.assign(new Error(code), { code });

test('the decision carries what on_retry and on_give_up show (surface::RetryNumbers, fires_on_give_up)', () => {
  const p = new RetryPolicy({ maxAttempts: 2, jitter: 'none', breaker: { kind: 'consecutive', failureThreshold: 2, waitDurationInOpenState: 60_000 } });
  const s = p.session({ key: 'k', method: 'GET' });
  s.beforeAttempt(0);
  const d = s.onFailure({ status: 503 }, 10);
  assert.equal(d.action, 'retry');
  // Retry n follows call n: the hook's attempt is the call that failed.
  assert.deepEqual(d.onRetry, { attempt: 1, retry: 1 });
  assert.equal(d.attempt, 2);
  s.beforeAttempt(110);
  const g = s.onFailure({ status: 503 }, 120);
  assert.equal(g.action, 'give_up');
  assert.equal(g.onGiveUp, true);
  // The breaker is open now: a refused first attempt fires no on_give_up.
  const r = p.session({ key: 'k2', method: 'GET' }).beforeAttempt(130);
  assert.equal(r.action, 'reject');
  assert.equal(r.onGiveUp, false);
});

test('execute: onRetry numbers and onGiveUp firing follow the core', async () => {
  const events = [];
  const p = new RetryPolicy({
    maxAttempts: 3, initial: 1, maxDelay: 2, jitter: 'none',
    breaker: { kind: 'consecutive', failureThreshold: 3, waitDurationInOpenState: 60_000 },
    onRetry: (i) => events.push(['retry', i.attempt, i.retry]),
    onGiveUp: (i) => events.push(['give_up', i.attempt, i.reason]),
  });
  await assert.rejects(p.execute(() => { throw err('ECONNREFUSED'); }));
  assert.deepEqual(events, [['retry', 1, 1], ['retry', 2, 2], ['give_up', 3, 'attempts_exhausted']]);
  events.length = 0;
  // Refused before the first attempt (the breaker opened): no on_give_up.
  await assert.rejects(p.execute(() => 'never'), (e) => e.code === 'breaker_open');
  assert.deepEqual(events, []);
});

test('sampleDelays takes at most limits::MAX_ITEMS, as in Python', () => {
  const p = new RetryPolicy({ jitter: 'none' });
  const max = rc.hostTables().limits.max_items;
  assert.equal(max, 65_536);
  assert.equal(p.sampleDelays(1, max).length, max);
  for (const n of [max + 1, 100_000, 2 ** 32 - 1]) {
    assert.throws(() => p.sampleDelays(1, n), (e) => e instanceof RangeError && e.code === 'out_of_range' && e.field === 'count');
  }
});

test('fingerprint: an error code takes the class the core\'s family table gives it', () => {
  const classes = rc.hostTables().js_error_classes;
  assert.equal(classes.invalid_value, 'range');
  assert.throws(
    () => rc.fingerprint({ a: 1 }, { operation: 'op', method: 'POST', path: '/x' }),
    (e) => e instanceof RangeError && e.code === 'invalid_value' && e.field === 'operation',
  );
});

test('gRPC code 17 is the core\'s invalid_value, as in Python', () => {
  for (const g of [17, 255, '17', 'NOPE']) {
    assert.throws(() => rc.classify({ grpcCode: g }), (e) => e instanceof RangeError && e.code === 'invalid_value' && e.field === 'grpcCode');
  }
  assert.equal(rc.classify({ grpcCode: 14 }).category, rc.classify({ grpcCode: 'UNAVAILABLE' }).category);
});

test('tables the JS layer used to copy come from the core', () => {
  const t = rc.hostTables();
  assert.equal(rc.DEFAULT_MAX_KEY_LENGTH, t.max_key_length);
  assert.deepEqual(t.breaker_outcomes, ['success', 'failure', 'ignored']);
  assert.deepEqual(t.breaker_states, ['closed', 'open', 'half_open', 'disabled', 'forced_open', 'metrics_only']);
  // A name is its index's number: a failure opens a breaker of threshold 1, the others do not.
  const mk = () => new rc.CircuitBreaker({ kind: 'consecutive', failureThreshold: 1 });
  t.breaker_outcomes.forEach((name, i) => {
    assert.equal(mk().recordWithoutPermit(name, 1, 0), name === 'failure');
    assert.equal(mk().recordWithoutPermit(i, 1, 0), name === 'failure');
  });
  assert.throws(() => mk().recordWithoutPermit('nope', 1, 0), (e) => e instanceof RangeError && e.code === 'invalid_value' && e.field === 'outcome');
});

test('option readers the JS layer used to copy are the core\'s', () => {
  // The core's reader names the value it refuses (idempotency::FailureHandling::parse).
  assert.throws(
    () => rc.decideRecord(null, 'k', 'a'.repeat(64), 0, { failureHandling: 'nope' }),
    (e) => e instanceof RangeError && e.code === 'invalid_value' && e.field === 'failureHandling' && e.message.includes('"nope"'),
  );
  // backoff::check_r.
  const adaptive = new rc.Budget({ kind: 'adaptive' });
  for (const r of [-0.1, 1.5, NaN]) {
    assert.throws(() => adaptive.beforeAttempt(r, 0), (e) => e instanceof RangeError && e.code === 'out_of_range' && e.field === 'r');
  }
});

test('a record outcome is read by the core: no state is missing_field, as in Python', () => {
  const fp = rc.fingerprint({ amount: 1 }, { operation: 'pay' });
  const d = rc.decideRecord(null, 'k1', fp, 1000);
  for (const [outcome, code] of [[{}, 'missing_field'], [{ category: 'timeout' }, 'missing_field'], [{ state: 'done' }, 'invalid_value'], [{ state: 1 }, 'invalid_type']]) {
    assert.throws(() => rc.completeRecord(d.record, d.fence, outcome, 2000), (e) => e.code === code && e.field === 'outcome.state', JSON.stringify(outcome));
  }
  assert.equal(rc.completeRecord(d.record, d.fence, { state: 'failed', category: 'timeout' }, 2000).state, 'failed');
});

test('a maximum key length takes any whole number, as in Python', () => {
  assert.equal(rc.validateKey('k-1', 2e9), true);
  assert.equal(rc.validateKey('k-1', 2 ** 53), true);
  assert.equal(rc.storageKey('k-1', 1e12), 'k-1');
  assert.throws(() => rc.validateKey('k-1', 0), (e) => e.code === 'out_of_range');
  assert.throws(() => rc.validateKey('k-1', 1.5), (e) => e.code === 'out_of_range');
});

test('a refused first attempt has no category and carries the session key, as in Python', async () => {
  const b = new rc.Budget({ kind: 'adaptive' });
  // Many requests, no accepts: the throttle refuses first attempts with high probability.
  for (let i = 0; i < 200; i++) b.beforeAttempt(0.99, 0);
  const p = new RetryPolicy({ budget: b, maxAttempts: 1 });
  let refused = 0;
  for (let i = 0; i < 50; i++) {
    const e = await p.execute(() => { throw err('ECONNREFUSED'); }, { key: `k-${i}` }).catch((x) => x);
    if (e instanceof rc.BudgetExhaustedError && e.attempts === 0) {
      refused++;
      assert.equal(e.category, null);
      assert.equal(e.key, `k-${i}`);
    }
  }
  assert.ok(refused > 0);
});

test('a status attribute outside the core\'s range is ignored, as in Python', () => {
  assert.deepEqual(rc.hostTables().seen_status, [100, 999]);
  for (const status of [42, 1200, 65535]) {
    assert.equal(rc.classify(Object.assign(err('ECONNREFUSED'), { status })).category, 'connect');
  }
  assert.notEqual(rc.classify(Object.assign(err('ECONNREFUSED'), { status: 503 })).category, 'connect');
});

// The class of an error is the core's (`ErrorCode::class`: the code's family and
// the domain it is raised in), each host mapping the core's class to its idiom
// (`hostTables().js_classes`). The same calls as in tests/python/test_issue14.py
// give the same code and the same core class. Before, a record's invalid_state
// was an IdempotencyError here and a StateError in Python.
const completeWith = (done, fence, outcome) => {
  const d = rc.decideRecord(null, 'k1', rc.fingerprint({ amount: 1 }, { operation: 'pay' }), 1000);
  const record = done ? rc.completeRecord(d.record, d.fence, { state: 'succeeded' }, 2000) : d.record;
  return rc.completeRecord(record, fence ?? d.fence, outcome, 3000);
};
const deep = () => {
  const d = {};
  let x = d;
  for (let i = 0; i < 200; i++) x = x.a = {};
  return d;
};
const SAME_CALLS = [
  // [what, call, code, domain, the core's class]
  ['complete a completed record', () => completeWith(true, null, { state: 'failed' }), 'invalid_state', 'idempotency', 'state'],
  ['complete with a stale fence', () => completeWith(true, 0, { state: 'failed' }), 'stale_fence', 'idempotency', 'fence'],
  ['complete without a state', () => completeWith(false, null, {}), 'missing_field', 'idempotency', 'idempotency_type'],
  ['fingerprint with a number as operation', () => rc.fingerprint({ a: 1 }, { operation: 5 }), 'invalid_type', 'idempotency', 'idempotency_type'],
  ['fingerprint with operation and method', () => rc.fingerprint({ a: 1 }, { operation: 'op', method: 'POST', path: '/x' }), 'invalid_value', 'idempotency', 'idempotency'],
  ['canonical JSON of NaN', () => rc.canonicalJSON(NaN), 'invalid_number', 'idempotency', 'fingerprint'],
  ['a policy document too deep', () => RetryPolicy.fromJSON(deep()), 'too_deep', 'config', 'config'],
  ['validate an empty key', () => rc.validateKey(''), 'invalid_key', 'idempotency', 'key'],
];
// The JS class of each core class (docs/js.md, "Errors").
const JS_CLASS = {
  type: (e) => e instanceof TypeError,
  range: (e) => e instanceof RangeError,
  idempotency: (e) => e instanceof rc.IdempotencyError,
  state: (e) => e instanceof rc.RetrycoreError && !(e instanceof rc.IdempotencyError),
};

test('the class of an error is the core\'s, as in Python', () => {
  const T = rc.hostTables();
  const classes = Object.fromEntries(T.error_codes.map((c) => [c.code, c.classes]));
  for (const [what, call, code, domain, cls] of SAME_CALLS) {
    assert.equal(classes[code][domain], cls, what);
    const kind = T.js_classes[cls];
    assert.throws(call, (e) => e.code === code && JS_CLASS[kind](e) && rc.isRetrycoreError(e), what);
    // The idiom both hosts share: a wrong type is a TypeError, any other bad
    // argument a RangeError (Python ValueError), a refused state neither.
    assert.equal(kind === 'type', cls.endsWith('_type'), what);
  }
});

// ---- issue 14, second part: rules both hosts wrote (docs/hosts.md, "Moved into the core").
// tests/python/test_issue14.py makes the same calls.

test('a null option is refused by the core\'s typed reader, as in Python', () => {
  const NULL_TEXT = 'must not be null or None (leave it out for the default)';
  for (const [call, field] of [
    [() => new RetryPolicy({ maxAttempts: null }), 'maxAttempts'],
    [() => new RetryPolicy({ budgets: [{ kind: 'ratio', window: null }] }), 'budgets[0].window'],
    [() => new rc.CircuitBreaker({ waitDurationInOpenState: null }), 'waitDurationInOpenState'],
    [() => new rc.Budget({ kind: 'ratio', window: null }), 'window'],
  ]) {
    assert.throws(call, (e) => e instanceof TypeError && e.code === 'invalid_type' && e.field === field && e.message.includes(NULL_TEXT), field);
  }
  // A document still reads null as "not given".
  assert.equal(RetryPolicy.fromJSON({ max_attempts: null }).toJSON().max_attempts, new RetryPolicy().toJSON().max_attempts);
});

test('a given status is 0 to 999 by the core\'s check, as in Python', () => {
  for (const status of [-1, 1000, 2 ** 70]) {
    assert.throws(() => rc.classify({ status }), (e) => e instanceof RangeError && e.code === 'out_of_range' && e.field === 'status' && e.message.includes('must be a whole number from 0 to 999'), String(status));
  }
  assert.equal(rc.classify({ status: 0 }).category, 'unknown');
  assert.equal(rc.classify({ status: 999 }).category, 'unknown');
});

test('the options of a fingerprint are read by the core, as in Python', () => {
  // Python said invalid_value on operation for a method without a path, JS invalid_type on path.
  for (const [options, code, field] of [
    [{ method: 'POST' }, 'missing_field', 'path'],
    [{ path: '/v1/charges' }, 'missing_field', 'method'],
    [{}, 'missing_field', 'operation'],
    [{ operation: 'op', method: 'POST' }, 'invalid_value', 'operation'],
  ]) {
    assert.throws(() => rc.fingerprint({ a: 1 }, options), (e) => e.code === code && e.field === field, JSON.stringify(options));
  }
});

test('a cyclic body is invalid_type, as in Python', () => {
  const a = [];
  a.push(a);
  const d = { a: 1 };
  d.self = d;
  for (const body of [a, d]) {
    assert.throws(() => rc.fingerprint(body, { operation: 'op' }), (e) => e instanceof TypeError && e.code === 'invalid_type' && e.message.includes('a cyclic structure is not JSON'));
  }
  assert.throws(() => new RetryPolicy({ classification: d }), (e) => e instanceof TypeError && e.code === 'invalid_type');
});

test('the message of an ending is the core\'s, as in Python', async () => {
  const p = new RetryPolicy({ maxAttempts: 2, initial: 0, jitter: 'none' });
  const e = await p.execute(() => { throw err('ECONNRESET'); }, { idempotent: true }).then(() => assert.fail('resolved'), (x) => x);
  assert.ok(e instanceof rc.RetryError);
  assert.equal(e.message, `gave up after 2 attempts: attempts_exhausted (last failure: ${e.category})`);
  assert.equal(e.cause.code, 'ECONNRESET');
  const b = new rc.CircuitBreaker({ name: 'payments' });
  b.transitionTo('forced_open');
  const o = await new RetryPolicy({ breaker: b }).execute(() => 'never').then(() => assert.fail('resolved'), (x) => x);
  assert.ok(o instanceof rc.CircuitOpenError);
  assert.equal(o.message, 'circuit breaker "payments" is forced_open');
  // The breaker on its own says the same (it wrote "the circuit breaker is forced_open").
  const own = await b.execute(() => 'never').then(() => assert.fail('resolved'), (x) => x);
  assert.ok(own instanceof rc.CircuitOpenError);
  assert.equal(own.message, 'circuit breaker "payments" is forced_open');
});

test('a refused first attempt\'s CircuitOpenError has the state its message names (surface::after_reject), as in Python', async () => {
  const b = new rc.CircuitBreaker({ name: 'payments' });
  b.transitionTo('forced_open');
  const o = await new RetryPolicy({ breaker: b }).execute(() => 'never').then(() => assert.fail('resolved'), (x) => x);
  assert.ok(o instanceof rc.CircuitOpenError);
  assert.equal(o.state, 'forced_open');
  assert.equal(o.retryAfter, Infinity);
  b.transitionTo('open');
  const open = await new RetryPolicy({ breaker: b }).execute(() => 'never').then(() => assert.fail('resolved'), (x) => x);
  assert.equal(open.state, 'open');
  assert.ok(open.message.startsWith('circuit breaker "payments" is open; retry after '), open.message);
});

test('a value that throws while read is named and quoted, as in Python', () => {
  const body = [1];
  Object.defineProperty(body, 0, { get() { throw new Error('boom'); } });
  assert.throws(() => rc.fingerprint(body, { operation: 'op' }), (e) => e instanceof TypeError && e.code === 'invalid_type' && e.message.includes('could not be read: Error: boom') && e.cause instanceof Error);
});

test('only an exhausted RetryError is marked in a cause chain, as in Python', async () => {
  const init = { reason: 'attempts_exhausted', attempts: 3, category: 'connection_lost', exhausted: true, key: 'k' };
  assert.ok(rc.errorNames(new rc.RetryError('gave up', init)).includes('retrycore:retry_exhausted'));
  const plain = new rc.RetryError('not retried', { ...init, reason: 'not_retryable', exhausted: false, cause: err('ECONNRESET') });
  assert.ok(!rc.errorNames(plain).includes('retrycore:retry_exhausted'));
  assert.equal(rc.classify(plain).category, rc.classify(err('ECONNRESET')).category);
  // Every give-up retrycore raises is marked by the core's Ending.
  const e = await new RetryPolicy({ maxAttempts: 1 }).execute(() => { throw err('ECONNRESET'); }, { idempotent: true }).then(() => assert.fail('resolved'), (x) => x);
  assert.ok(e.exhausted && rc.errorNames(e).includes('retrycore:retry_exhausted'));
});

test('hook payloads carry maxAttempts and the refusing budget, as Python\'s event does', async () => {
  const events = [];
  const budget = new rc.Budget({ kind: 'token_bucket', capacity: 10, retryCost: 5, name: 'b' });
  const p = new RetryPolicy({
    maxAttempts: 5, initial: 0, jitter: 'none', budget,
    onRetry: (i) => events.push(['retry', i.attempt, i.maxAttempts, i.budget]),
    onGiveUp: (i) => events.push(['give_up', i.attempt, i.maxAttempts, i.budget, i.reason]),
  });
  await assert.rejects(p.execute(() => { throw err('ECONNRESET'); }, { idempotent: true }), (e) => e.code === 'budget_exhausted');
  assert.deepEqual(events, [['retry', 1, 5, null], ['retry', 2, 5, null], ['give_up', 3, 5, 'b', 'budget_exhausted']]);
});

'use strict';
// Hostile inputs: every one gives a TypeError or RangeError with a code (or
// a retrycore error), never a crash, a string thrown, or an abort of the
// process; afterwards the implementation still answers.
const test = require('node:test');
const assert = require('node:assert/strict');
const rc = require('./impl.cjs');

const { HUGE, cyclic, deep, deepObj, throwing } = require('./hostile-values.cjs');

const HOSTILE = [NaN, Infinity, -Infinity, -0, -1, 2 ** 53 + 1, 1e308, 10n, 2n ** 70n, undefined, null, true, '', 'abc', HUGE, [], {}, () => 1, Symbol('s'), cyclic(), deep(100_000), new Date(0), new Map()];

/** Calls `f` and checks that it either returns or throws an Error object with a string code. */
function survives(what, f) {
  let r;
  try {
    r = f();
  } catch (e) {
    assert.ok(e instanceof Error, `${what}: threw a non-Error ${String(e)}`);
    assert.ok(typeof e.code === 'string' && e.code.length > 0, `${what}: error without a code: ${e.message}`);
    assert.ok(!/panick/i.test(e.message), `${what}: a panic: ${e.message}`);
    return e;
  }
  if (r && typeof r.then === 'function') r.catch(() => {});
  return r;
}

function expectCode(what, f, cls, code) {
  const e = survives(what, f);
  assert.ok(e instanceof Error, `${what}: did not throw`);
  assert.ok(e instanceof cls, `${what}: ${e.constructor.name} (${e.code}: ${e.message}), want ${cls.name}`);
  assert.equal(e.code, code, `${what}: ${e.message}`);
}

test('fingerprint: cycles, depth 100 000, non-finite numbers, BigInt, non-plain values', () => {
  const o = { method: 'POST', path: '/x' };
  expectCode('cycle', () => rc.fingerprint(cyclic(), o), TypeError, 'invalid_type');
  expectCode('deep array', () => rc.fingerprint(deep(100_000), o), RangeError, 'too_deep');
  expectCode('deep object', () => rc.fingerprint(deepObj(100_000), o), RangeError, 'too_deep');
  expectCode('depth 129', () => rc.fingerprint(deep(129), o), RangeError, 'too_deep');
  assert.match(rc.fingerprint(deep(127), o), /^[0-9a-f]{64}$/);
  expectCode('NaN', () => rc.fingerprint({ x: NaN }, o), RangeError, 'invalid_number');
  expectCode('Infinity', () => rc.fingerprint([Infinity], o), RangeError, 'invalid_number');
  expectCode('BigInt', () => rc.fingerprint({ x: 1n }, o), TypeError, 'invalid_type');
  expectCode('undefined', () => rc.fingerprint({ x: undefined }, o), TypeError, 'invalid_type');
  expectCode('function', () => rc.fingerprint([() => 1], o), TypeError, 'invalid_type');
  expectCode('Date', () => rc.fingerprint({ d: new Date() }, o), TypeError, 'invalid_type');
  expectCode('lone surrogate', () => rc.fingerprint({ s: '\ud800' }, o), RangeError, 'invalid_string');
  assert.equal(rc.fingerprint({ x: -0 }, o), rc.fingerprint({ x: 0 }, o));
  assert.equal(rc.fingerprint({ x: 2 ** 53 + 1 }, o), rc.fingerprint({ x: 2 ** 53 }, o), 'a double cannot tell them apart');
  expectCode('missing path', () => rc.fingerprint({}, { method: 'GET' }), TypeError, 'missing_field'); // the core's FingerprintOf::read (issue 14)
  expectCode('unknown option', () => rc.fingerprint({}, { ...o, methd: 'x' }), TypeError, 'unknown_key');
  assert.match(rc.fingerprint({ big: HUGE }, o), /^[0-9a-f]{64}$/);
});

test('policy options: hostile values give TypeError/RangeError with codes', () => {
  expectCode('NaN', () => new rc.RetryPolicy({ maxAttempts: NaN }), RangeError, 'out_of_range');
  expectCode('Infinity initial', () => new rc.RetryPolicy({ initial: Infinity }), RangeError, 'out_of_range');
  expectCode('2^53+1 attempts', () => new rc.RetryPolicy({ maxAttempts: 2 ** 53 + 1 }), RangeError, 'out_of_range');
  expectCode('BigInt', () => new rc.RetryPolicy({ maxAttempts: 3n }), TypeError, 'invalid_type');
  expectCode('cycle', () => new rc.RetryPolicy({ classification: cyclic() }), TypeError, 'invalid_type');
  expectCode('deep', () => new rc.RetryPolicy({ classification: deepObj(100_000) }), RangeError, 'too_deep');
  expectCode('huge', () => new rc.RetryPolicy({ name: HUGE }), RangeError, 'too_large');
  expectCode('huge doc', () => rc.RetryPolicy.fromJSON(JSON.stringify({ name: HUGE })), RangeError, 'too_large');
  expectCode('string', () => new rc.RetryPolicy('{}'), TypeError, 'invalid_type');
  expectCode('array', () => new rc.RetryPolicy([]), TypeError, 'invalid_type');
  expectCode('number doc', () => rc.RetryPolicy.fromJSON(5), TypeError, 'invalid_type');
  expectCode('function value', () => new rc.RetryPolicy({ name: () => 1 }), TypeError, 'invalid_type');
  // -0 is zero; undefined is "not given".
  assert.equal(new rc.RetryPolicy({ initial: -0, jitter: 'none' }).toJSON().initial, '0s');
  assert.equal(new rc.RetryPolicy({ initial: undefined }).toJSON().initial, '100ms');
  // Seeds past 2^53: BigInt or string, not an inexact number.
  assert.equal(new rc.RetryPolicy({ seed: 2n ** 63n }).toJSON().seed, '9223372036854775808');
  expectCode('seed 2^53+1', () => new rc.RetryPolicy({ seed: 2 ** 53 + 1 }), RangeError, 'out_of_range');
  expectCode('seed 2^64', () => new rc.RetryPolicy({ seed: 2n ** 64n }), RangeError, 'out_of_range');
});

test('hot paths: hostile numbers', () => {
  const p = new rc.RetryPolicy();
  for (const [what, f, cls, code] of [
    ['retry NaN', () => p.delay(NaN, 0.5), RangeError, 'out_of_range'],
    ['retry 0', () => p.delay(0, 0.5), RangeError, 'out_of_range'],
    ['retry -1', () => p.delay(-1, 0.5), RangeError, 'out_of_range'],
    ['retry 1.5', () => p.delay(1.5, 0.5), RangeError, 'out_of_range'],
    ['retry string', () => p.delay('1', 0.5), TypeError, 'invalid_type'],
    ['retry BigInt', () => p.delay(1n, 0.5), TypeError, 'invalid_type'],
    ['r NaN', () => p.delay(1, NaN), RangeError, 'out_of_range'],
    ['r 2', () => p.delay(1, 2), RangeError, 'out_of_range'],
    ['prev -1', () => p.delay(1, 0.5, -1), RangeError, 'out_of_range'],
    ['status NaN', () => rc.classify(NaN), RangeError, 'out_of_range'],
    ['status 1e9', () => rc.classify(1e9), RangeError, 'out_of_range'],
    ['status -0', () => rc.classify({ status: 'x' }), TypeError, 'invalid_type'],
    ['now NaN', () => new rc.CircuitBreaker().tryAcquire(NaN), RangeError, 'out_of_range'],
    ['now -5', () => new rc.Budget({ kind: 'token_bucket' }).tryWithdraw('server_error', -5), RangeError, 'out_of_range'],
    ['now string', () => new rc.CircuitBreaker().tryAcquire('1'), TypeError, 'invalid_type'],
    ['permit NaN', () => new rc.CircuitBreaker().record(NaN, 'success'), RangeError, 'out_of_range'],
    ['permit 2^53+1', () => new rc.CircuitBreaker().record(2 ** 53 + 2, 'success'), RangeError, 'out_of_range'],
    ['category', () => new rc.Budget({ kind: 'token_bucket' }).tryWithdraw({}), RangeError, 'invalid_value'],
    ['sample count', () => p.sampleDelays(1, 1e9), RangeError, 'out_of_range'],
    ['sample seed', () => p.sampleDelays(-1, 1), RangeError, 'out_of_range'],
  ]) {
    expectCode(what, f, cls, code);
  }
  // Retry numbers past u32 saturate (docs/backoff.md), -0 and 2^53+1 are numbers like any other.
  assert.equal(p.delay(2 ** 53 + 1, 1), 20000);
  assert.equal(p.delay(1, -0), 0);
  assert.equal(rc.classify(-0).category, 'unknown');
});

test('keys and headers: huge and invisible input', () => {
  expectCode('huge key', () => rc.validateKey(HUGE), rc.IdempotencyError, 'invalid_key');
  expectCode('NUL', () => rc.validateKey('a\u0000b'), rc.IdempotencyError, 'invalid_key');
  expectCode('emoji', () => rc.deriveKey('a', '😀'), rc.IdempotencyError, 'invalid_key');
  expectCode('number key', () => rc.validateKey(5), TypeError, 'invalid_type');
  expectCode('max NaN', () => rc.validateKey('a', NaN), RangeError, 'out_of_range');
  expectCode('max -1', () => rc.storageKey('a', -1), RangeError, 'out_of_range');
  expectCode('huge header', () => rc.parseIdempotencyHeader('"' + HUGE), rc.IdempotencyError, 'invalid_header');
  expectCode('session key', () => new rc.RetryPolicy().session({ key: HUGE }), rc.IdempotencyError, 'invalid_key');
  expectCode('huge json text', () => rc.canonicalJSONText('['.repeat(100_000)), RangeError, 'too_deep');
  expectCode('huge record', () => rc.decideRecord({ key: HUGE }, 'k', 'f', 0), TypeError, 'missing_field');
});

test('every exported function and method survives every hostile value', async () => {
  const targets = [];
  for (const [name, v] of Object.entries(rc)) {
    if (typeof v !== 'function' || /^[A-Z]/.test(name) || name === 'setBackend') continue;
    targets.push([name, v, null]);
  }
  const objects = {
    policy: new rc.RetryPolicy({ breaker: {}, budget: { kind: 'token_bucket' } }),
    breaker: new rc.CircuitBreaker(),
    budget: new rc.Budget({ kind: 'concurrency' }),
    rng: new rc.Rng(1),
  };
  objects.session = objects.policy.session();
  for (const [oname, o] of Object.entries(objects)) {
    for (const m of Object.getOwnPropertyNames(Object.getPrototypeOf(o))) {
      if (m === 'constructor' || typeof o[m] !== 'function' || m.startsWith('_')) continue;
      targets.push([`${oname}.${m}`, o[m], o]);
    }
  }
  let calls = 0;
  for (const [name, f, self] of targets) {
    for (const h of HOSTILE) {
      for (let pos = 0; pos < 3; pos++) {
        const args = [1, 0.5, 1];
        args[pos] = h;
        const r = survives(`${name}(${pos}: ${typeof h})`, () => f.apply(self, args));
        if (r && typeof r.then === 'function') await r.catch(() => {});
        calls++;
      }
    }
    for (const C of [rc.RetryPolicy, rc.CircuitBreaker, rc.Budget]) {
      for (const h of HOSTILE) survives(`new ${C.name}(${typeof h})`, () => new C(h));
    }
  }
  assert.ok(calls > 1000);
  // Still answering.
  assert.equal(new rc.RetryPolicy({ jitter: 'none' }).delay(1, 0), 100);
  assert.equal(rc.classify(503).category, 'server_error');
});

test('errorNames survives hostile errors', () => {
  for (const e of [throwing, Object.create(null), { code: 5, name: {}, cause: 'x' }, { code: 'E'.repeat(10_000) }, new Error('x', { cause: throwing })]) {
    assert.ok(Array.isArray(rc.errorNames(e)));
    survives('classify hostile error', () => rc.classify(e));
  }
});

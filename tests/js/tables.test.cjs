'use strict';
// The JS view of the core's tables (issue 14, items 4 and 5): every list,
// width, class, limit and default the TS layer shows equals what the core's
// `host_tables()` says (the backend's `hostTables()`), and each drift the
// issue found has its regression here. Runs against either implementation
// (RETRYCORE_IMPL=node | wasm, see impl.cjs).
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const rc = require('./impl.cjs');

const T = rc.hostTables();
const codes = (list) => list.map((x) => x.code);

test('kind unions: the exported lists are the core lists, and the typings derive from them', () => {
  const lists = {
    BACKOFF_KINDS: T.backoff_kinds,
    JITTERS: T.jitters,
    BREAKER_KINDS: T.breaker_kinds,
    BUDGET_KINDS: T.budget_kinds,
    CATEGORIES: codes(T.categories),
    GIVE_UP_REASONS: codes(T.give_up_reasons),
    REJECT_REASONS: T.reject_reasons,
    PROFILES: T.profiles,
  };
  for (const [name, want] of Object.entries(lists)) assert.deepEqual([...rc[name]], want, name);
  assert.ok(rc.BREAKER_KINDS.includes('sampling'), 'the breaker kinds once missed sampling');
  const dts = fs.readFileSync(path.join(__dirname, '..', '..', 'bindings-node', 'index.d.ts'), 'utf8');
  for (const [type, list] of [
    ['BackoffKind', 'BACKOFF_KINDS'],
    ['JitterKind', 'JITTERS'],
    ['BreakerKind', 'BREAKER_KINDS'],
    ['BudgetKind', 'BUDGET_KINDS'],
    ['Category', 'CATEGORIES'],
    ['Profile', 'PROFILES'],
  ]) {
    assert.match(dts, new RegExp(`export type ${type} = \\(typeof ${list}\\)\\[number\\];`), type);
  }
  for (const [key, type] of [['kind\\?', 'BreakerKind'], ['kind', 'BudgetKind'], ['backoff\\?', 'BackoffKind'], ['profile\\?', 'Profile']]) {
    assert.match(dts, new RegExp(`\\n\\s+${key}: ${type};`), `${key}: ${type}`);
  }
});

test('error classes: each code maps to the JS class of the class the core names for it', () => {
  // The JS idiom of each core error class (docs/js.md, "Errors"); a new class in
  // the core fails here until the JS layer maps it.
  const JS = {
    config: 'range',
    config_type: 'type',
    idempotency: 'range',
    idempotency_type: 'type',
    state: 'state',
    snapshot: 'state',
    key: 'idempotency',
    fingerprint: 'range',
    fence: 'idempotency',
    dead_letter: 'idempotency',
  };
  assert.deepEqual(T.error_classes, Object.keys(JS));
  assert.deepEqual(T.js_classes, JS);
  const classes = T.js_error_classes;
  assert.deepEqual(Object.keys(classes).sort(), codes(T.error_codes).sort());
  for (const c of T.error_codes) {
    assert.deepEqual(Object.keys(c.classes).sort(), ['config', 'idempotency']);
    // The same JS class wherever the code is raised: `coreError` takes no domain.
    for (const [domain, name] of Object.entries(c.classes)) assert.equal(classes[c.code], JS[name], `${c.code} in ${domain}`);
    assert.equal(classes[c.code] === 'type', c.type_error, c.code);
  }
  // And the thrown objects are those classes.
  const thrown = (f) => {
    try {
      f();
    } catch (e) {
      return e;
    }
    assert.fail('did not throw');
  };
  assert.ok(thrown(() => new rc.RetryPolicy({ maxAttempts: 'x' })) instanceof TypeError);
  assert.ok(thrown(() => new rc.RetryPolicy({ maxAttempts: 0 })) instanceof RangeError);
  assert.ok(thrown(() => rc.validateKey('')) instanceof rc.IdempotencyError);
  assert.ok(thrown(() => rc.canonicalJSON(NaN)) instanceof RangeError);
});

test('limits: the core limits bound the JS walks', () => {
  let e = new Error('leaf');
  for (let i = 0; i < T.limits.max_chain + 10; i++) e = Object.assign(new Error('x'), { code: `E${i}X`, cause: e });
  assert.ok(rc.errorNames(e).length <= T.limits.max_error_names);
  let v = 1;
  for (let i = 0; i < T.limits.max_depth; i++) v = [v];
  rc.canonicalJSON(v);
  assert.throws(() => rc.canonicalJSON([v]), { code: 'too_deep' });
  assert.throws(() => rc.deriveKey(Array.from({ length: T.limits.max_items + 1 }, () => 'a')), { code: 'too_large' });
});

test('verdict packing: the category width is the core one, and every status decodes as its full verdict', () => {
  assert.equal(2 ** T.category_bits >= T.categories.length, true);
  const src = fs.readFileSync(path.join(__dirname, '..', '..', 'bindings-node', 'lib', 'retrycore.ts'), 'utf8');
  const unpack = src.slice(src.indexOf('function unpackVerdict'), src.indexOf('function statusFlags'));
  assert.match(unpack, /CATEGORY_BITS/);
  assert.doesNotMatch(unpack, /& 15\b|>> 4\b|& 64\b/, 'no literal 4-bit packing');
  const keys = ['category', 'retry', 'safe', 'retryable', 'serverDeclined'];
  for (let s = 0; s < 1000; s++) {
    for (const idempotent of [undefined, true, false]) {
      const packed = rc.classify(s, { idempotent });
      const full = rc.classify({ status: s, idempotent });
      for (const k of keys) assert.equal(packed[k], full[k], `status ${s} idempotent ${idempotent}: ${k}`);
    }
  }
});

test('fetch failures and network codes: the core rule', () => {
  for (const m of T.fetch_failure_messages) assert.ok(rc.errorNames(new TypeError(m)).includes('FetchNetworkError'), m);
  assert.ok(!rc.errorNames(new TypeError('x is not a function')).includes('FetchNetworkError'));
  const re = new RegExp(T.network_code_pattern);
  const withCode = (code) => rc.errorNames(new TypeError('request failed', { cause: { code } })).includes('FetchNetworkError');
  for (const ok of ['ECONNRESET', 'EAI_AGAIN', 'UND_ERR_SOCKET', 'EPIPE', 'E2BIG']) assert.ok(re.test(ok) && withCode(ok), ok);
  for (const bad of ['E', 'econnreset', 'UND_ERR_', 'EAI_', 'ERR_SSL_WRONG_VERSION_NUMBER', 'ABORT_ERR', 'EAI_again']) assert.ok(!re.test(bad) && !withCode(bad), bad);
});

test('idempotency keys: the core default length', () => {
  assert.equal(rc.DEFAULT_MAX_KEY_LENGTH, T.max_key_length);
  assert.equal(rc.validateKey('k'.repeat(T.max_key_length)), true);
  assert.throws(() => rc.validateKey('k'.repeat(T.max_key_length + 1)), { code: 'invalid_key' });
});

test('defaults: a policy, breaker and budget built without settings show the core defaults', () => {
  const policy = new rc.RetryPolicy().toJSON();
  for (const [k, v] of Object.entries(T.defaults.policy)) assert.deepEqual(policy[k], v, `policy.${k}`);
  const breaker = new rc.CircuitBreaker().toJSON();
  for (const [k, v] of Object.entries(T.defaults.breaker)) assert.deepEqual(breaker[k], v, `breaker.${k}`);
  for (const [kind, want] of Object.entries(T.defaults.budgets)) {
    if (want === null) {
      assert.throws(() => new rc.Budget({ kind }), { code: 'missing_field' }, kind);
    } else {
      assert.deepEqual(new rc.Budget({ kind }).toJSON(), want, kind);
    }
  }
});

test('drift: a sampling breaker reads its duration from typed options', () => {
  const b = new rc.CircuitBreaker({ kind: 'sampling', samplingDuration: 30_000 });
  assert.equal(b.toJSON().sampling_duration, '30s');
  assert.throws(() => new rc.CircuitBreaker({ kind: 'sampling', samplingDuration: -1 }), { code: 'out_of_range', field: 'samplingDuration' });
});

test('drift: RetryPolicy.profile builds every profile docs/profiles.md lists, with overrides', () => {
  for (const name of T.profiles) {
    assert.deepEqual(rc.RetryPolicy.profile(name).toJSON(), rc.RetryPolicy.fromJSON({ version: 1, profile: name }).toJSON(), name);
  }
  const p = rc.RetryPolicy.profile('polly', { maxAttempts: 5, initial: 250 });
  assert.deepEqual(p.toJSON(), rc.RetryPolicy.fromJSON({ version: 1, profile: 'polly', max_attempts: 5, initial: '250ms' }).toJSON());
  assert.throws(() => rc.RetryPolicy.profile('hystrix'), { code: 'invalid_value' });
  assert.throws(() => rc.RetryPolicy.profile('polly', 5), { code: 'invalid_type' });
});

test('drift: a budget give-up after an attempt is a BudgetExhaustedError with code budget_exhausted', async () => {
  const policy = new rc.RetryPolicy({ maxAttempts: 5, jitter: 'none', budget: { kind: 'token_bucket', capacity: 5, retryCost: 5 } });
  let now = 0;
  policy._clock = { now: () => now, wallNow: () => null, sleep: (ms) => ((now += ms), Promise.resolve()) };
  const calls = [];
  const err = await policy
    .execute(() => {
      calls.push(now);
      throw Object.assign(new Error('reset'), { code: 'ECONNRESET' });
    }, { idempotent: true })
    .then(() => assert.fail('resolved'), (e) => e);
  assert.ok(err instanceof rc.BudgetExhaustedError, `${err && err.name}: ${err && err.message}`);
  assert.equal(err.code, 'budget_exhausted');
  assert.equal(err.reason, 'budget_exhausted');
  assert.equal(err.attempts, calls.length);
  assert.equal(calls.length, 2);
});

test('drift: null in typed options is invalid_type, not silently the default (leaving the key out is)', () => {
  assert.equal(new rc.RetryPolicy({ maxAttempts: undefined }).toJSON().max_attempts, T.defaults.policy.max_attempts);
  for (const [make, key] of [
    [(o) => new rc.RetryPolicy(o), 'maxAttempts'],
    [(o) => new rc.RetryPolicy(o), 'breaker'],
    [(o) => new rc.RetryPolicy(o), 'budget'],
    [(o) => new rc.CircuitBreaker(o), 'waitDurationInOpenState'],
    [(o) => new rc.Budget({ kind: 'ratio', ...o }), 'window'],
  ]) {
    assert.throws(() => make({ [key]: null }), (e) => e instanceof TypeError && e.code === 'invalid_type' && e.field === key, key);
  }
  assert.throws(() => new rc.RetryPolicy({ breaker: { kind: 'consecutive', name: null } }), { code: 'invalid_type', field: 'breaker.name' });
  assert.equal(new rc.RetryPolicy({ onRetry: null }).onRetry, null, 'a hook may be null');
});

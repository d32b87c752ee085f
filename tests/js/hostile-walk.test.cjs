'use strict';
// The hostile-input walk (issue 22): every public export, static method,
// instance method and accessor of the package under test (RETRYCORE_IMPL=node
// | wasm) — enumerated from the module and the prototypes, so a new method is
// walked without editing this file — called with each family of hostile
// values at each argument position, bare and inside an option bag. Only
// retrycore's own errors (with `.code` and `.field`) may come out: never an
// engine error without a code, a string, a hang or a crash.
const test = require('node:test');
const assert = require('node:assert/strict');
const rc = require('./impl.cjs');
const { HUGE, cyclic, deep, deepObj, throwing, revoked, getterArray, arrayProxy, sparse } = require('./hostile-values.cjs');

const trap = () => {
  throw new Error('trap');
};

const nullProto = Object.create(null);
const nullProtoKeys = Object.assign(Object.create(null), { status: 503, method: 'GET', kind: 'token_bucket' });

/** The families of issue 22, by name. */
const FAMILIES = {
  'sparse array': sparse(),
  'huge array': new Array(65_537).fill('a'),
  'getter array': getterArray,
  'length-lying proxy': arrayProxy,
  'throwing getter': {
    get status() {
      return trap();
    },
    get method() {
      return trap();
    },
  },
  'throwing valueOf': { valueOf: trap },
  'throwing toString': { toString: trap },
  'throwing toPrimitive': { [Symbol.toPrimitive]: trap },
  'revoked proxy': revoked,
  'throwing proxy': throwing,
  'lone high surrogate': 'GET\ud800',
  'lone low surrogate': '\udc00k',
  NaN: NaN,
  Infinity: Infinity,
  '-Infinity': -Infinity,
  '-1': -1,
  '0.5': 0.5,
  '2**32': 2 ** 32,
  '2**53': 2 ** 53,
  '1e308': 1e308,
  'null prototype': nullProto,
  'null prototype with keys': nullProtoKeys,
  'deep array': deep(100_000),
  'deep object': deepObj(100_000),
  cyclic: cyclic(),
  'impossible snapshot': { version: 1, state: 'open', calls: -1, failures: 7, slow: 2 ** 40 },
  'impossible snapshot text': '{"version":1,"state":"half_open","calls":1,"failures":5}',
  'huge string': HUGE,
  undefined: undefined,
  null: null,
  BigInt: 2n ** 70n,
  symbol: Symbol('s'),
  function: () => 1,
  Date: new Date(0),
};

/** Option keys the surface reads, to carry hostile values inside a bag. */
const BAG_KEYS = [
  'status', 'grpcCode', 'errorNames', 'method', 'idempotent', 'idempotencyKeySent', 'headers', 'elapsed', 'wallNowMs',
  'key', 'seed', 'draws', 'signal', 'path', 'operation', 'selected', 'bodyText', 'token',
  'leaseMs', 'retentionMs', 'stripe', 'failureHandling', 'releaseCategories', 'refused', 'holdsSlot', 'counts',
  'maxAttempts', 'initial', 'breaker', 'budget', 'budgets', 'classification', 'onRetry', 'kind', 'name', 'msgId', 'error', 'state', 'response',
];
const BAG_VALUES = ['sparse array', 'throwing getter', 'throwing toString', 'revoked proxy', 'lone high surrogate', 'NaN', '1e308', 'null prototype', 'deep array'];

/** Reasonable arguments, so that a hostile value at one position meets valid ones elsewhere. */
const BASE = {
  execute: [() => 'ok', undefined],
  fingerprint: [{ a: 1 }, { method: 'POST', path: '/x' }],
  fingerprintCanonical: [{ a: 1 }, { method: 'POST', path: '/x' }],
  fingerprintText: ['{}', { operation: 'op' }],
  decideRecord: [null, 'k', 'f'.repeat(64), 0, undefined],
  record: [0, 'success', 0, 1],
};

function isCoded(e) {
  return e instanceof Error && rc.isRetrycoreError(e) && typeof e.code === 'string' && e.code.length > 0 && typeof e.field === 'string';
}

let calls = 0;
const failures = [];
function check(what, how, e) {
  if (!isCoded(e)) failures.push(`${what}: ${how} ${e instanceof Error ? `${e.constructor.name} without a retrycore code: ${e.message}` : String(e)}`);
  else if (/panick/i.test(e.message)) failures.push(`${what}: a panic: ${e.message}`);
}

/** Calls `f`; a throw or a rejection must be a retrycore error (collected in `failures`). */
async function survives(what, f) {
  calls++;
  let r;
  try {
    r = f();
  } catch (e) {
    check(what, 'threw', e);
    return;
  }
  if (r && typeof r.then === 'function') {
    let timer;
    const hang = new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: still pending after 5 s`)), 5000);
    });
    try {
      await Promise.race([r, hang]);
    } catch (e) {
      check(what, 'rejected with', e);
    } finally {
      clearTimeout(timer);
    }
  }
}

const ERROR_CLASSES = new Set(['RetrycoreError', 'RetryError', 'CircuitOpenError', 'BudgetExhaustedError', 'IdempotencyError', 'LimiterRejectedError']);

/** Every callable of the public surface: [name, call(args)] pairs. */
function surface() {
  const out = [];
  const fresh = {
    RetryPolicy: () => new rc.RetryPolicy({ breaker: {}, budget: { kind: 'concurrency' }, maxAttempts: 2, initial: 0 }),
    CircuitBreaker: () => new rc.CircuitBreaker(),
    Budget: () => new rc.Budget({ kind: 'token_bucket' }),
    Rng: () => new rc.Rng(1),
    DeadLetter: () => rc.DeadLetter.create({ msgId: 'm-1', message: { a: 1 }, reason: 'attempts_exhausted', attempts: 1, firstFailureAt: 0, lastFailureAt: 1 }),
    Session: () => fresh.RetryPolicy().session(),
    Limiter: () => new rc.Limiter({ kind: 'bulkhead', maxConcurrent: 1, maxWait: 1 }),
  };
  for (const [name, v] of Object.entries(rc)) {
    if (name === 'setBackend' || name === 'IMPL' || ERROR_CLASSES.has(name)) continue;
    if (typeof v !== 'function') continue;
    if (/^[A-Z]/.test(name)) {
      // A class: its constructor and its static methods.
      out.push([`new ${name}`, (a) => new v(...a)]);
      for (const s of Object.getOwnPropertyNames(v)) {
        if (['length', 'name', 'prototype', '_wrap'].includes(s) || typeof v[s] !== 'function') continue;
        out.push([`${name}.${s}`, (a) => v[s](...a)]);
      }
      continue;
    }
    out.push([name, (a) => v(...a)]);
  }
  for (const [cls, make] of Object.entries(fresh)) {
    const proto = rc[cls].prototype;
    for (const m of Object.getOwnPropertyNames(proto)) {
      if (m === 'constructor' || m.startsWith('_')) continue;
      const d = Object.getOwnPropertyDescriptor(proto, m);
      if (typeof d.value === 'function') out.push([`${cls}#${m}`, (a) => { const o = make(); return o[m](...a); }, m]);
      if (d.get) out.push([`${cls}#get ${m}`, () => make()[m]]);
      if (d.set) out.push([`${cls}#set ${m}`, (a) => { make()[m] = a[0]; }]);
    }
  }
  return out;
}

test('every export, method and accessor survives every hostile family, bare and in option bags', { timeout: 120_000 }, async () => {
  const targets = surface();
  // The enumeration found the surface (a new method is walked by construction).
  const names = new Set(targets.map((t) => t[0]));
  for (const n of ['fingerprint', 'classify', 'RetryPolicy#execute', 'RetryPolicy#session', 'Session#onFailure', 'CircuitBreaker#execute', 'CircuitBreaker#restore', 'Budget#recordSuccess', 'DeadLetter.create', 'CircuitBreaker.fromJSON', 'new Rng']) {
    assert.ok(names.has(n), `walked: ${n}`);
  }
  const bags = [];
  for (const k of BAG_KEYS) for (const v of BAG_VALUES) bags.push([`{${k}: ${v}}`, { [k]: FAMILIES[v] }]);
  for (const [name, call, method] of targets) {
    const base = BASE[method ?? name] ?? BASE[name] ?? [1, 0.5, 1];
    const arity = Math.max(base.length, 3);
    for (let pos = 0; pos < arity; pos++) {
      for (const [fam, h] of Object.entries(FAMILIES)) {
        const args = base.slice();
        args[pos] = h;
        await survives(`${name}(arg ${pos}: ${fam})`, () => call(args));
      }
      for (const [bag, h] of bags) {
        const args = base.slice();
        args[pos] = h;
        await survives(`${name}(arg ${pos}: ${bag})`, () => call(args));
      }
    }
  }
  assert.deepEqual(failures.slice(0, 40), [], `${failures.length} of ${calls} calls failed`);
  assert.ok(calls > 50_000, `${calls} calls`);
  // Still answering.
  assert.equal(new rc.RetryPolicy({ jitter: 'none' }).delay(1, 0), 100);
  assert.equal(rc.classify(503).category, 'server_error');
  assert.equal(await new rc.RetryPolicy().execute(() => 'still'), 'still');
});

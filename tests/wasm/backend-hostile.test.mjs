// Hostile values straight into the wasm module — below the TypeScript
// layer's own checks (tests/js/hostile.test.cjs covers the public API).
//
// A Rust panic in WebAssembly traps (`RuntimeError: unreachable`) and can
// leave the instance inconsistent: a RefCell or object borrow never released,
// the shadow stack pointer never restored. So the crate is written to have
// none, and errors leave by return value, never by unwinding. This test
// drives every export — module functions, constructors, statics, methods and
// getters, raw and as adapted by backend.js — with every hostile value in
// every argument position, and then checks that the instance still answers:
// the same results as before, no object stuck "borrowed", and a hundred
// thousand error returns later the shadow stack is where it was.
import test from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { createRequire } from 'node:module';
import { DIST } from './harness/server.mjs';

const require = createRequire(import.meta.url);
const glue = require(path.join(DIST, 'node', 'retrycore_wasm.js'));
const { adapt } = require(path.join(DIST, 'cjs', 'backend.js'));

const { HUGE, cyclic, deep, throwing, revoked, getterArray, arrayProxy, sparse } = require('../js/hostile-values.cjs');

const HOSTILE = [
  NaN, Infinity, -Infinity, -0, -1, 0.5, 2 ** 32, 2 ** 53 + 1, 1e308, 10n, 2n ** 70n, undefined, null, true, false,
  '', 'abc', '-1', HUGE, '\ud800', 'a\udc00b', '\u0000', [], ['a', 1], ['a', 'b', 'c'], new Array(100_000).fill('x'),
  {}, { length: 3 }, () => 1, Symbol('s'), cyclic(), deep(100_000), new Date(0), new Map(), new Uint8Array(4),
  throwing, revoked, getterArray, arrayProxy, Object.create(null),
];

/** What each argument position gets when it is not the hostile one. */
const BASE = [1, 0.5, 1, 0, undefined, undefined, undefined, undefined, undefined, undefined, undefined];

const isTrap = (e) => e instanceof WebAssembly.RuntimeError;

/** Every callable of the module: [name, fn, receiver-maker]. */
function targets(w) {
  const out = [];
  const objects = {
    NativePolicy: () => w.NativePolicy.fromJson('{"breaker": {}, "budgets": [{"kind": "token_bucket"}, {"kind": "concurrency"}]}', '1'),
    NativeBreaker: () => new w.NativeBreaker('{}', false),
    NativeBudget: () => new w.NativeBudget('{"kind": "concurrency"}', false),
    NativeRng: () => new w.NativeRng('1'),
  };
  for (const [name, v] of Object.entries(w)) {
    if (typeof v !== 'function' || ['initSync', 'default', 'setErrorFactory', 'takeError'].includes(name)) continue;
    if (name in objects) {
      out.push([`new ${name}`, (...a) => new v(...a), null]);
      for (const s of Object.getOwnPropertyNames(v)) {
        if (typeof v[s] === 'function' && !['length', 'name', 'prototype', '__wrap'].includes(s) && !s.startsWith('__')) out.push([`${name}.${s}`, v[s], null]);
      }
      for (const m of Object.getOwnPropertyNames(v.prototype)) {
        const d = Object.getOwnPropertyDescriptor(v.prototype, m);
        if (m === 'constructor' || m.startsWith('__')) continue;
        // wasm-bindgen's own free() destroys the object (NativePolicy's free is the session one).
        if (m === 'free' && name !== 'NativePolicy') continue;
        if (d.get) out.push([`${name}#${m}`, function () { return d.get.call(this); }, objects[name]]);
        else if (typeof d.value === 'function') out.push([`${name}#${m}`, d.value, objects[name]]);
      }
    } else {
      out.push([name, v, null]);
    }
  }
  return out;
}

/** Answers that must not change: computed before the barrage and after it. */
function answers(w) {
  const p = w.NativePolicy.fromJson('{"jitter": "none", "budgets": [{"kind": "token_bucket"}]}', '7');
  const id = p.begin('k-1', '5', true, undefined, 'GET', undefined);
  const out = {
    delay: p.delay(3, 0.5, undefined),
    status: p.classifyStatus(503, 1),
    before: p.before(id, 0),
    fail: p.fail(id, 1, 503, undefined, ['ECONNRESET'], 'GET', true, false, ['retry-after', '2'], 5, 1_700_000_000_000),
    decision: p.decision(id),
    key: p.key(id),
    fp: w.fingerprint('POST', '/v1/x', undefined, '{"b":[1,2],"a":"\u00e9"}', undefined, false),
    canon: w.canonicalize(JSON.stringify(deep(100))),
    rng: new w.NativeRng('18446744073709551615').nextU64(),
    verdict: w.classify(undefined, 'UNAVAILABLE', ['x'], undefined, undefined, undefined, ['grpc-retry-pushback-ms', '10'], undefined),
    lint: w.lint('{"seed": "1"}', undefined).map((f) => f.code),
  };
  p.free(id);
  return out;
}

function barrage(label, w, t) {
  let calls = 0;
  let returned = 0;
  const codes = new Set();
  const traps = [];
  const nonErrors = [];
  for (const [name, f, make] of targets(w)) {
    const self = make ? make() : null;
    const arity = Math.max(f.length, 1);
    for (let pos = 0; pos < arity; pos++) {
      for (const h of HOSTILE) {
        const args = BASE.slice(0, Math.max(arity, pos + 1));
        args[pos] = h;
        calls++;
        try {
          f.apply(self, args);
          returned++;
        } catch (e) {
          if (isTrap(e)) traps.push(`${name}(arg ${pos} = ${typeof h}): ${e.message}`);
          else if (!(e instanceof Error)) nonErrors.push(`${name}(arg ${pos} = ${typeof h}) threw ${String(e)}`);
          else if (typeof e.code === 'string') codes.add(e.code);
        }
      }
    }
  }
  t.diagnostic(`${label}: ${calls} calls, ${returned} returned, codes: ${[...codes].sort().join(' ')}`);
  assert.deepEqual(traps, [], `${label}: traps (a panic or an abort in wasm)`);
  assert.deepEqual(nonErrors, [], `${label}: non-Error throws`);
  assert.ok(calls > 5_000, `${label}: only ${calls} calls`);
}

test('every export survives every hostile value, and the instance still answers', async (t) => {
  // The glue's errors come from the JS layer's factory; first without one
  // (the crate's own TypeError/RangeError/Error with .code), then with one that throws.
  glue.setErrorFactory(undefined);
  const before = answers(glue);
  assert.equal(before.delay, 400);

  await t.test('raw exports, no error factory', (tt) => barrage('raw', glue, tt));
  await t.test('raw exports, an error factory that throws', (tt) => {
    glue.setErrorFactory(() => {
      throw new Error('factory');
    });
    barrage('raw, throwing factory', glue, tt);
  });
  await t.test('the instance still answers: the same results, nothing stuck borrowed', () => {
    assert.deepEqual(answers(glue), before);
    // Every receiver kind takes calls again (a borrow left set would throw "recursive use").
    const b = new glue.NativeBreaker('{}', false);
    const permit = b.tryAcquire(0);
    assert.equal(b.record(permit, 0, 1, 1), 0);
    assert.equal(b.state, 'closed');
    assert.ok(new glue.NativeBudget('{"kind": "token_bucket"}', false).tryWithdraw(0, 0) >= 0);
    assert.equal(new glue.NativeRng('1').nextF64() < 1, true);
  });

  await t.test('errors return, never unwind: 200 000 failing calls leave the shadow stack where it was', () => {
    const p = glue.NativePolicy.fromJson('{}', '1');
    for (let i = 0; i < 100_000; i++) {
      assert.ok(Number.isNaN(p.delay(NaN, 0.5, undefined))); // hot path: NaN + stashed error
      glue.takeError();
      try {
        glue.parseDuration('nope'); // Result path: the glue throws after the call returned
      } catch (e) {
        assert.equal(e.code, 'invalid_duration');
      }
    }
    // A leaked frame per error would have exhausted the 1 MiB stack long ago;
    // deep recursion (the JSON parser, 127 levels) still works.
    assert.equal(glue.canonicalize(JSON.stringify(deep(127))), JSON.stringify(deep(127)));
    assert.deepEqual(answers(glue), before);
  });

  await t.test('a getter that re-enters the object mid-call gets an Error; the outer call completes', () => {
    const p = glue.NativePolicy.fromJson('{}', '1');
    const id = p.begin('k', undefined, undefined, undefined, undefined, undefined);
    const names = [];
    let inner = 0;
    Object.defineProperty(names, 0, {
      get() {
        try {
          p.before(id, 1); // the outer call holds the object: wasm-bindgen refuses
        } catch (e) {
          assert.ok(e instanceof Error && !isTrap(e), String(e));
          inner++;
        }
        return 'ECONNRESET';
      },
    });
    // classify answers a packed verdict (bindings-js/src/verdict.rs, `pack_all`): its low bits are the category's index.
    const { categories, category_bits: bits } = require(path.join(DIST, 'cjs', 'generated.js')).INFO.tables;
    const serverError = categories.findIndex((c) => c.code === 'server_error');
    for (let i = 0; i < 50_000; i++) {
      assert.equal(p.classify(503, undefined, names, undefined, undefined, undefined, undefined, undefined) & ((1 << bits) - 1), serverError);
    }
    assert.equal(inner, 50_000);
    assert.equal(p.before(id, 2), 1);
    assert.deepEqual(answers(glue), before);
  });

  await t.test('adapted exports (backend.js), the TS layer factory', (tt) => {
    const rc = require(path.join(DIST, 'index.cjs')); // installs the real factory and adapts the glue
    barrage('adapted', adapt(glue), tt);
    assert.deepEqual(answers(glue), before);
    assert.equal(new rc.RetryPolicy({ jitter: 'none' }).delay(1, 0), 100);
    assert.equal(rc.classify(503).category, 'server_error');
  });
});

// Issue 22 item 2, below the TS layer: every array parameter the crate reads
// itself checks `length` against the core's MAX_ITEMS before reading an
// element. (A sparse array given where a number is expected is not here: the
// wasm ABI's ToNumber joins it, which is the engine's coercion, and the TS
// layer never passes one.)
test('item 2: array parameters refuse a sparse array of length 2**32-1 before reading it', () => {
  const w = glue;
  const p = w.NativePolicy.fromJson('{}', '1');
  const b = new w.NativeBreaker('{}', false);
  const too = (what, f) => {
    const t0 = Date.now();
    assert.throws(f, (e) => e instanceof Error && e.code === 'too_large', what);
    assert.ok(Date.now() - t0 < 1000, `${what}: refused without a walk`);
  };
  const id = p.begin('k', '1', true, undefined, 'GET', undefined);
  p.before(id, 0);
  too('replayDelays', () => p.replayDelays(sparse()));
  too('begin draws', () => {
    if (Number.isNaN(p.begin('k', '1', true, undefined, 'GET', sparse()))) throw w.takeError();
  });
  too('deriveKey parts', () => w.deriveKey(sparse()));
  too('serverAdvice headers', () => w.serverAdvice(sparse(), undefined));
  // classify is a hot path: NaN, then the error from takeError.
  const hot = (x) => {
    if (Number.isNaN(x)) throw w.takeError();
  };
  too('classify names', () => hot(w.classify(undefined, undefined, sparse(), undefined, undefined, undefined, undefined, undefined)));
  too('classify headers', () => hot(w.classify(503, undefined, undefined, undefined, undefined, undefined, sparse(), undefined)));
  too('fingerprint selected', () => w.fingerprint('POST', '/x', undefined, '{}', sparse(), false));
  too('deadLetter ops', () => w.deadLetter('{}', sparse()));
  too('recordFailure headers', () => {
    if (Number.isNaN(b.recordFailure(0, 0, 0, 503, undefined, undefined, sparse()))) throw w.takeError();
  });
  too('fail headers', () => {
    if (Number.isNaN(p.fail(id, 1, 503, undefined, undefined, undefined, undefined, undefined, sparse(), undefined, undefined))) throw w.takeError();
  });
  p.free(id);
});

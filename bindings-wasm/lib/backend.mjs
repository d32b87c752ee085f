// The wasm module as the low-level backend of lib/retrycore.ts.
//
// wasm-bindgen's glue already has the surface of bindings-node/native.d.ts,
// name for name (the crate's exports are named after it). What is left to
// this file: the hot paths (delay, classifyStatus, session steps, breaker
//   acquire/record/release, budget withdraw and bookkeeping) return a plain
//   number and NaN on failure, because wasm-bindgen returns a `Result` as a
//   multi-value array that costs ~20 ns per call in Node 20. Here each such
//   method throws `takeError()` on NaN and turns the number into the
//   boolean / void the surface promises. A `now` of -1 ("read the clock") is
//   filled in with performance.now() here, cheaper than from inside wasm.
//
// Decides nothing. Written once as an ES module; the build derives the
// CommonJS copy (dist/cjs/backend.js).

const WRAPPED = Symbol.for('retrycore.wasm.adapted');

/** The names `adapt` wraps, by class ('' = module functions). */
export const HOT = Object.freeze({
  '': ['classifyStatus'],
  NativePolicy: ['delay', 'classifyStatus', 'begin', 'start', 'finish', 'before', 'fail', 'succeed', 'cancel'],
  NativeBreaker: ['tryAcquire', 'record', 'release'],
  NativeBudget: ['tryWithdraw', 'start', 'onFailure', 'onSuccess'],
});

/** Names of the glue that are not part of the backend surface. */
export const INTERNAL = Object.freeze(['default', 'initSync', 'takeError', '__wbg_set_wasm', '__wbindgen_start']);

/**
 * Returns the backend object for `setBackend` from the wasm-bindgen module
 * `w` (its namespace or its CommonJS exports). Patches the glue's classes in
 * place, once.
 */
export function adapt(w) {
  const take = w.takeError;
  if (typeof take !== 'function') throw new Error('retrycore-wasm: the wasm module has no takeError (a stale build?)');
  // The same rule as `now_ns` in bindings-js/src/host.rs (-1: the host's clock),
  // read here because performance.now() from JS is cheaper than from inside wasm.
  const now = (t) => (t === -1 ? performance.now() : t);
  const fail = () => {
    throw take();
  };

  const P = w.NativePolicy.prototype;
  const B = w.NativeBreaker.prototype;
  const U = w.NativeBudget.prototype;
  if (!P[WRAPPED]) {
    const raw = {};
    for (const [cls, names] of Object.entries(HOT)) {
      if (cls === '') continue;
      const proto = w[cls].prototype;
      raw[cls] = {};
      for (const n of names) {
        if (typeof proto[n] !== 'function') throw new Error(`retrycore-wasm: the wasm module has no ${cls}.${n}`);
        raw[cls][n] = proto[n];
      }
    }
    const p = raw.NativePolicy;
    const b = raw.NativeBreaker;
    const u = raw.NativeBudget;
    // Explicit arities: V8 inlines these wrappers into their callers.
    P.delay = function (retry, r, prev) {
      const x = p.delay.call(this, retry, r, prev);
      return x === x ? x : fail();
    };
    P.classifyStatus = function (status, flags) {
      const x = p.classifyStatus.call(this, status, flags);
      return x === x ? x : fail();
    };
    P.begin = function (key, seed, idempotent, keySent, method, draws) {
      const x = p.begin.call(this, key, seed, idempotent, keySent, method, draws);
      return x === x ? x : fail();
    };
    P.start = function (t, key, idempotent, keySent, method) {
      const x = p.start.call(this, now(t), key, idempotent, keySent, method);
      return x === x ? x : fail();
    };
    P.finish = function (id, t) {
      if (p.finish.call(this, id, now(t)) !== 0) fail();
    };
    P.before = function (id, t) {
      const x = p.before.call(this, id, now(t));
      return x === x ? x : fail();
    };
    P.fail = function (id, t, status, grpc, names, method, idempotent, keySent, headers, elapsed, wall, message, retryable, shouldRetry) {
      const x = p.fail.call(this, id, now(t), status, grpc, names, method, idempotent, keySent, headers, elapsed, wall, message, retryable, shouldRetry);
      return x === x ? x : fail();
    };
    P.succeed = function (id, t, elapsed) {
      if (p.succeed.call(this, id, now(t), elapsed) !== 0) fail();
    };
    P.cancel = function (id, t) {
      if (p.cancel.call(this, id, now(t)) !== 0) fail();
    };
    B.tryAcquire = function (t) {
      const x = b.tryAcquire.call(this, now(t));
      return x === x ? x : fail();
    };
    B.record = function (permit, outcome, duration, t) {
      const x = b.record.call(this, permit, outcome, duration, now(t));
      return x === 1 ? true : x === 0 ? false : fail();
    };
    B.release = function (permit, t) {
      const x = b.release.call(this, permit, now(t));
      return x === 1 ? true : x === 0 ? false : fail();
    };
    U.tryWithdraw = function (t, category) {
      const x = u.tryWithdraw.call(this, now(t), category);
      return x === x ? x : fail();
    };
    U.start = function (t) {
      if (u.start.call(this, now(t)) !== 0) fail();
    };
    U.onFailure = function (t, category, counts, reachedBackend, declinedPushback, refused) {
      if (u.onFailure.call(this, now(t), category, counts, reachedBackend, declinedPushback, refused) !== 0) fail();
    };
    U.onSuccess = function (t, cost) {
      if (u.onSuccess.call(this, now(t), cost) !== 0) fail();
    };
    Object.defineProperty(P, WRAPPED, { value: true });
  }

  const backend = {};
  for (const k of Object.keys(w)) {
    if (!INTERNAL.includes(k) && !k.startsWith('__')) backend[k] = w[k];
  }
  const classifyStatus = w.classifyStatus;
  backend.classifyStatus = function (status, flags) {
    const x = classifyStatus(status, flags);
    return x === x ? x : fail();
  };
  return backend;
}

/**
 * The backend installed until the module is loaded (browsers before
 * `init()`): any call throws an Error with code `not_initialized` that says
 * what to do, instead of a TypeError about `null`.
 */
export function notLoaded() {
  const fail = () => {
    const e = new Error('retrycore-wasm: the WebAssembly module is not loaded yet: `await init()` (or `initSync({ module })`) first');
    e.code = 'not_initialized';
    e.field = '';
    // retrycore's brand (lib/retrycore.ts, `kBrand`): the layer passes it through as its own error.
    Object.defineProperty(e, Symbol.for('retrycore.error'), { value: true });
    throw e;
  };
  // The limits are the core's: none is known before the module is loaded, so reading one fails like any call.
  const limits = new Proxy({}, { get: (_, k) => (typeof k === 'string' ? fail() : undefined) });
  const tables = { limits, categories: [], category_bits: 0, fetch_failure_messages: [], network_code_pattern: '(?!)' };
  const info = { version: '', tables, retryRules: [], lintCodes: [], states: [] };
  return new Proxy(
    {},
    {
      get(_, k) {
        if (k === 'setErrorFactory' || k === 'calibrate') return () => {};
        if (k === 'info') return () => info;
        if (typeof k !== 'string') return undefined;
        return fail();
      },
    },
  );
}

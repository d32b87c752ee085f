// The wasm module as the low-level backend of lib/retrycore.ts.
//
// wasm-bindgen's glue already has the surface of bindings-node/native.d.ts,
// name for name (the crate's exports are named after it). What is left: the
// hot paths (the members declared `hot` in bindings-js/src/surface.rs:
// delay, classifyStatus, session steps, breaker acquire/record/release,
// budget withdraw and bookkeeping) return a plain number and NaN on failure,
// because wasm-bindgen returns a `Result` as a multi-value array that costs
// ~20 ns per call in Node 20. Their wrappers (`HOT`, `wrapHot`) are
// generated from those declarations by scripts/package.mjs, which puts them
// before this file in dist/{esm,cjs}/backend.js: each throws `takeError()`
// on NaN and turns the number into the boolean / void the surface promises.
// A `now` of -1 ("read the clock") is filled in with performance.now()
// there, cheaper than from inside wasm.
//
// Decides nothing. Written once as an ES module; the build derives the
// CommonJS copy (dist/cjs/backend.js).

const WRAPPED = Symbol.for('retrycore.wasm.adapted');

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
  const backend = {};
  for (const k of Object.keys(w)) {
    if (!INTERNAL.includes(k) && !k.startsWith('__')) backend[k] = w[k];
  }
  wrapHot(w, backend, now, fail);
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

// retrycore-wasm for browsers, Web Workers, Deno and edge runtimes (the
// `browser`, `worker` and `default` conditions, and `retrycore-wasm/web`):
// the public API of lib/retrycore.ts over wasm-bindgen's web target.
//
//   await init();                          // fetches web/retrycore_wasm_bg.wasm next to this file
//   await init(urlOrResponseOrBytes);      // or from where you say
//   initSync({ module: bytesOrModule });    // synchronously (edge runtimes: a compiled WebAssembly.Module)
//
// Until then every call throws an Error with code `not_initialized`.
import * as glue from './web/retrycore_wasm.js';
import * as api from './esm/retrycore.js';
import { adapt, notLoaded } from './esm/backend.js';

let loaded = false;
api.setBackend(notLoaded());

function install() {
  if (!loaded) {
    api.setBackend(adapt(glue));
    loaded = true;
  }
}

const plain = (x) => x !== null && typeof x === 'object' && Object.getPrototypeOf(x) === Object.prototype;

/**
 * Loads the WebAssembly module: from `input` (a URL or path string, a
 * `Request`, a `Response` or a promise of one, bytes, a compiled
 * `WebAssembly.Module`, or `{ module_or_path }`), else fetched from next to
 * this file. Resolves at once when already loaded.
 */
export async function init(input) {
  if (loaded) return;
  await glue.default(input === undefined ? undefined : plain(input) ? input : { module_or_path: input });
  install();
}

/**
 * Loads the WebAssembly module synchronously from bytes or a compiled
 * `WebAssembly.Module` (or `{ module }`): what edge runtimes that import
 * `.wasm` files as modules need.
 */
export function initSync(input) {
  if (loaded) return;
  glue.initSync(plain(input) ? input : { module: input });
  install();
}

export * from './esm/retrycore.js';
export default { ...api, init, initSync };

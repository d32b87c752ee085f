// retrycore-wasm for Deno (the `deno` condition): wasm-bindgen's bundler
// target, whose .wasm Deno imports as a module (no file or network
// permission needed). Ready at once; init() and initSync() are no-ops here.
import * as glue from './bundler/retrycore_wasm.js';
import * as api from './esm/retrycore.js';
import { adapt } from './esm/backend.js';

api.setBackend(adapt(glue));

/** Loads the WebAssembly module: already loaded under Deno. */
export async function init() {}
/** Loads the WebAssembly module synchronously: already loaded under Deno. */
export function initSync() {}

export * from './esm/retrycore.js';
export default { ...api, init, initSync };

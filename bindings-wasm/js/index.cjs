'use strict';
// retrycore-wasm for Node's require(): the public API of lib/retrycore.ts
// (the very TypeScript of the `retrycore` package) over the wasm module,
// loaded synchronously (wasm-bindgen's nodejs target). Ready at once;
// init() and initSync() are no-ops here, for code shared with browsers.
const api = require('./cjs/retrycore.js');
const { adapt } = require('./cjs/backend.js');

api.setBackend(adapt(require('./node/retrycore_wasm.js')));

/** Loads the WebAssembly module: already loaded under Node. */
async function init() {}
/** Loads the WebAssembly module synchronously: already loaded under Node. */
function initSync() {}

module.exports = Object.assign({}, api, { init, initSync });

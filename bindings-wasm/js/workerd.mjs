// retrycore-wasm for Cloudflare Workers / workerd (the `workerd` condition,
// which wrangler and miniflare resolve): imports the .wasm as a compiled
// module, the way these runtimes load WebAssembly, and instantiates it at
// import. Ready at once; init() and initSync() are no-ops here.
import wasm from './web/retrycore_wasm_bg.wasm';
import { initSync } from './web.mjs';

initSync({ module: wasm });

export * from './web.mjs';
export { default } from './web.mjs';

// A Cloudflare Worker module (workerd through miniflare; tests/wasm/idempotency-workerd.test.mjs)
// whose fetch handler is `withIdempotency(handler, { store: new MemoryStore() })`, with the
// package, its stores and its middleware imported by name and bound at global scope, as
// docs/idempotency.md shows.
import * as rc from 'retrycore-wasm';
import stores from 'retrycore-wasm/stores';
import middleware from 'retrycore-wasm/middleware';
import { makeApp } from './harness/idempotency.mjs';

export default { fetch: makeApp(rc, stores, middleware) };

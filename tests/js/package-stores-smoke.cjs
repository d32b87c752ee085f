'use strict';
// The installed tarball's `retrycore/stores` and `retrycore/middleware` (run by
// `make -C bindings-node pack-test` in a directory with nothing but the tarball): they load
// without the optional better-sqlite3, the default store says what to install, and the
// fetch wrapper runs a keyed request once on the in-memory store.
const assert = require('node:assert/strict');
const { MemoryStore, SqliteStore } = require('retrycore/stores');
const { withIdempotency } = require('retrycore/middleware');

(async () => {
  assert.throws(() => SqliteStore.connect(':memory:'), (e) => e.code === 'missing_dependency' && /better-sqlite3@12/.test(e.message));
  let runs = 0;
  const f = withIdempotency(async () => new Response(String(++runs), { status: 201 }), { store: new MemoryStore() });
  const req = () => new Request('http://x/p', { method: 'POST', headers: { 'idempotency-key': 'k-1' }, body: 'a' });
  assert.equal(await (await f(req())).text(), '1');
  const again = await f(req());
  assert.equal(again.headers.get('idempotent-replayed'), 'true');
  assert.equal(await again.text(), '1');
  assert.equal(runs, 1);
  console.log('stores and middleware load from the tarball; the memory store runs a key once');
})().catch((e) => {
  console.error(e);
  process.exit(1);
});

'use strict';
// Loads the installed package with require() (make pack-test).
const assert = require('node:assert/strict');
const rc = require('retrycore');
const p = new rc.RetryPolicy({ jitter: 'none' });
assert.equal(p.delay(2, 0.5), 200);
assert.equal(rc.classify(503).category, 'server_error');
assert.throws(() => new rc.RetryPolicy({ retries: 3 }), (e) => e instanceof TypeError && e.code === 'unknown_key');
assert.equal(typeof rc.RetryError, 'function');
console.log('require: ok');

// retrycore/integrations as installed (both packages; the name is spelled so that the wasm
// package's run renames it): its exports, and one instance with the API (wrapFetch accepts
// a policy of the main entry), and policy.fetch.
const pkg = 'retrycore';
const integrations = require(`${pkg}/integrations`);
assert.deepEqual(Object.keys(integrations).sort(), ['STACKING_CODE', 'axiosAdapter', 'gotExtend', 'interceptor', 'kyExtend', 'wrapFetch']);
assert.equal(typeof integrations.wrapFetch(async () => new Response('ok'), p), 'function');
assert.equal(typeof p.fetch, 'function');
console.log('integrations: ok');

// The benchmarks' no-op floor (cargo feature `bench`, only `make bench`
// builds it) is not in the shipped package: no function or method named floor*.
const fs = require('node:fs');
const path = require('node:path');
const dir = path.dirname(require.resolve('retrycore'));
const lowLevel = ['native.cjs', 'node/retrycore_wasm.js'].map((f) => path.join(dir, f)).filter((f) => fs.existsSync(f));
assert.equal(lowLevel.length, 1, `one low-level module in ${dir}`);
const floors = [];
const backend = require(lowLevel[0]);
for (const [name, v] of Object.entries(backend)) {
  if (/^floor/i.test(name)) floors.push(name);
  if (typeof v === 'function' && v.prototype) {
    for (const m of [...Object.getOwnPropertyNames(v), ...Object.getOwnPropertyNames(v.prototype)]) {
      if (/^floor/i.test(m)) floors.push(`${name}.${m}`);
    }
  }
}
assert.deepEqual(floors, []);
console.log('no floor: ok');

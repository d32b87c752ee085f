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

// Loads the installed package with import (make pack-test): named and default exports, one instance.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import rc, { RetryPolicy, classify, CircuitBreaker } from 'retrycore';

const required = createRequire(import.meta.url)('retrycore');
assert.equal(RetryPolicy, required.RetryPolicy, 'import and require share one instance');
assert.equal(rc.classify, classify);
assert.equal(new RetryPolicy({ jitter: 'none' }).delay(3, 0), 400);
assert.equal(new CircuitBreaker().state, 'closed');
console.log('import: ok');

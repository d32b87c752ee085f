// Loads the installed package with import (make pack-test): named and default exports, one instance.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import rc, { RetryPolicy, classify, CircuitBreaker } from 'retrycore';

const required = createRequire(import.meta.url)('retrycore');
assert.equal(RetryPolicy, required.RetryPolicy, 'import and require share one instance');
assert.equal(rc.classify, classify);
assert.equal(new RetryPolicy({ jitter: 'none' }).delay(3, 0), 400);
assert.equal(new CircuitBreaker().state, 'closed');
// retrycore/integrations by import (the name spelled so that the wasm package's run renames it).
const pkg = 'retrycore';
const { wrapFetch, STACKING_CODE } = await import(`${pkg}/integrations`);
assert.equal(STACKING_CODE, 'RETRYCORE_RETRY_STACKING');
const res = await wrapFetch(async () => new Response('ok'), new RetryPolicy())('http://127.0.0.1/');
assert.equal(await res.text(), 'ok');
console.log('import: ok');

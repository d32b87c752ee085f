import { RetryPolicy } from 'retrycore';
import assert from 'node:assert/strict';

// pino(), a bunyan logger, console, or anything with warn(fields, message); or a function of the record.
const lines = [];
const logger = { warn: (fields, message) => lines.push({ message, ...fields }) };
const policy = new RetryPolicy({ jitter: 'none', initial: '1ms', logger, correlationId: () => 'req-42' });

let calls = 0;
await policy.execute(() => {
  if (++calls === 1) throw new TypeError('fetch failed');
  return 'ok';
}, { key: 'order-1001:charge:v1', method: 'GET' });

assert.deepEqual(lines, [{
  message: 'attempt 1 of 3 failed (connection_lost: TypeError); retry 1 in 1ms',
  event: 'retry', attempt: 1, max_attempts: 3, retry: 1, category: 'connection_lost', error: 'TypeError', delay_ms: 1,
  reason: null, budget: null, idempotency_key: 'order-1001:charge:v1', correlation_id: 'req-42',
}]);

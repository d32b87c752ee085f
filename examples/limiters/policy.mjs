import { RetryPolicy, LimiterRejectedError } from 'retrycore';

// AWS's adaptive client rate limiter in front of every attempt: off until the
// first throttling error, then each attempt waits for a token (slept before the call).
const aws = new RetryPolicy({ profile: 'aws-standard', limiter: 'aws-adaptive' });
assert.equal(await aws.execute(async () => 'item'), 'item');

// A bulkhead: one call at a time; a second call is refused before it is made.
const payments = new RetryPolicy({ limiter: { kind: 'bulkhead', maxConcurrent: 1 } });
const charge = async () => {
  try {
    return await payments.execute(async () => 'charged'); // a second call while this one runs
  } catch (e) {
    if (e instanceof LimiterRejectedError) return `${e.limiter}: ${e.reason}`;
    throw e;
  }
};
assert.equal(await payments.execute(charge), 'bulkhead: bulkhead_full');
assert.equal(await payments.execute(async () => 'charged'), 'charged'); // the slot came back

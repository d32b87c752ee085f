'use strict';
// Issue 16, JS part: the failure inputs the core gained (an error's message
// for message rules, Smithy's @retryable trait, a per-error shouldRetry)
// and the token bucket's raw acquire/release, against either implementation
// (RETRYCORE_IMPL=node | wasm, see impl.cjs). The shared vectors
// (tests/vectors/classify/failure-inputs.json) run in vectors.test.cjs.
const test = require('node:test');
const assert = require('node:assert/strict');
const rc = require('./impl.cjs');

/** go-retryablehttp's refusals (client.go baseRetryPolicy), as message rules. */
const MESSAGE_RULES = {
  rules: [
    { message: ['*stopped after * redirects', 'unsupported protocol scheme'], retry: 'never' },
    { name: '*', retry: 'always' },
  ],
};

/** An error whose `message` getter counts its reads. */
function countingError(message) {
  const e = new Error('');
  let reads = 0;
  Object.defineProperty(e, 'message', {
    get() {
      reads++;
      return message;
    },
    configurable: true,
  });
  return { e, reads: () => reads };
}

test('a policy without a message rule never reads an error message; one with a rule does', () => {
  const plain = new rc.RetryPolicy({ classification: { rules: [{ name: '*', retry: 'always' }] } });
  const ruled = new rc.RetryPolicy({ classification: MESSAGE_RULES });
  const a = countingError('Get "http://a": stopped after 10 redirects');
  assert.equal(plain.classify(a.e).retry, 'always');
  const s = plain.session();
  s.beforeAttempt(0);
  assert.equal(s.onFailure(a.e, 1).action, 'retry');
  assert.equal(a.reads(), 0, 'the message was read for a policy that has no message rule');

  const b = countingError('Get "http://a": stopped after 10 redirects');
  assert.equal(ruled.classify(b.e).retry, 'never');
  assert.ok(b.reads() > 0);
  assert.equal(ruled.classify(new Error('Get "ftp://a": unsupported protocol scheme "ftp"')).retry, 'never');
  assert.equal(ruled.classify(new Error('stopped after 10 redirects, then more')).retry, 'always', 'the glob matches the whole message');
  const t = ruled.session();
  t.beforeAttempt(0);
  const d = t.onFailure(new Error('stopped after 3 redirects'), 1);
  assert.equal(d.action, 'give_up');
  assert.equal(d.reason, 'not_retryable');
  // A Failure object's own message follows the same rule.
  assert.equal(ruled.classify({ errorNames: ['url.Error'], message: 'stopped after 2 redirects' }).retry, 'never');
  assert.equal(plain.classify({ errorNames: ['url.Error'], message: 'stopped after 2 redirects' }).retry, 'always');
});

test('execute reads the message only for a policy with a message rule', async () => {
  const run = async (classification) => {
    let calls = 0;
    const p = new rc.RetryPolicy({ maxAttempts: 3, initialDelay: 0, jitter: 'none', classification });
    await assert.rejects(
      p.execute(() => {
        calls++;
        throw new Error('x509: certificate is not trusted');
      }),
    );
    return calls;
  };
  assert.equal(await run({ rules: [{ message: 'certificate is not trusted', retry: 'never' }, { name: '*', retry: 'always' }] }), 1);
  assert.equal(await run({ rules: [{ name: '*', retry: 'always' }] }), 3);
});

test('an error message is cut to the core limit before a rule reads it', () => {
  const max = rc.hostTables().limits.max_message_bytes;
  assert.equal(max, 8192);
  const p = new rc.RetryPolicy({ classification: { rules: [{ message: '*tail', retry: 'never' }, { name: '*', retry: 'always' }] } });
  assert.equal(p.classify(new Error('short tail')).retry, 'never');
  assert.equal(p.classify(new Error(`${'a'.repeat(max)} tail`)).retry, 'always', 'the tail lies past the limit');
  // A lone surrogate has no UTF-8 form: the error's message is not sent, the rest of it still is.
  assert.equal(p.classify(Object.assign(new Error('\uD800 tail'), { status: 503 })).category, 'server_error');
  assert.equal(p.classify(new Error('\uD800 tail')).retry, 'always');
});

test("an error's $retryable (AWS SDK v3, Smithy's @retryable) is read; Failure fields and options carry retryable and shouldRetry", () => {
  const throttle = Object.assign(new Error('SlowDown'), { $retryable: { throttling: true }, $metadata: { httpStatusCode: 400 }, status: 400 });
  const v = rc.classify(throttle, { method: 'POST' });
  assert.equal(v.category, 'overloaded');
  assert.equal(v.retry, 'always');
  assert.equal(rc.classify(Object.assign(new Error('x'), { status: 500, $retryable: {} }), { method: 'POST' }).retry, 'always');
  assert.equal(rc.classify(Object.assign(new Error('x'), { status: 400 })).category, 'invalid_request', 'no trait');
  assert.deepEqual(rc.describeFailure(throttle).retryable, { throttling: true });

  assert.equal(rc.classify({ status: 400, retryable: true }).category, 'server_error');
  assert.equal(rc.classify(400, { retryable: { throttling: true } }).category, 'overloaded');
  assert.equal(rc.classify({ status: 400 }, { retryable: true }).retryable, true);
  assert.equal(rc.classify({ status: 400, retryable: false }, { retryable: true }).category, 'invalid_request', "the failure's own field wins");

  const lost = { errorNames: ['ECONNRESET'], method: 'POST' };
  assert.equal(rc.classify(lost).retry, 'if_idempotent');
  assert.equal(rc.classify({ ...lost, shouldRetry: true }).retry, 'always');
  assert.equal(rc.classify(lost, { shouldRetry: true }).retry, 'always');
  const declined = rc.classify({ errorNames: ['ECONNRESET'], method: 'GET', shouldRetry: false });
  assert.equal(declined.retryable, false);
  assert.equal(declined.serverDeclined, true);

  const p = new rc.RetryPolicy({});
  const s = p.session();
  s.beforeAttempt(0);
  assert.equal(s.onFailure({ errorNames: ['ECONNRESET'], method: 'GET', shouldRetry: false }, 1).action, 'give_up');
  const t = p.session({ method: 'POST' });
  t.beforeAttempt(0);
  assert.equal(t.onFailure({ errorNames: ['ECONNRESET'], method: 'POST', shouldRetry: true }, 1).action, 'retry');
});

test('retryable and shouldRetry are checked', () => {
  const bad = (f, code, field) => {
    assert.throws(
      () => rc.classify(f),
      (e) => e.code === code && e.field === field,
      `${JSON.stringify(f)}: want ${code} at ${field}`,
    );
  };
  bad({ status: 400, retryable: { throttling: 'yes' } }, 'invalid_type', 'retryable.throttling');
  bad({ status: 400, retryable: { throttle: true } }, 'unknown_key', 'retryable.throttle');
  bad({ status: 400, retryable: 1 }, 'invalid_type', 'retryable');
  bad({ status: 400, shouldRetry: 'no' }, 'invalid_type', 'shouldRetry');
  bad({ status: 400, message: 5 }, 'invalid_type', 'message');
  assert.throws(() => rc.classify(400, { retryable: 'yes' }), { code: 'invalid_type', field: 'retryable' });
});

test("a breaker's counting rule on messages reads the message; without one it is never read", () => {
  const b = new rc.CircuitBreaker({ minimumNumberOfCalls: 1, slidingWindowSize: 1, count: [{ message: 'certificate', count: 'ignored' }] });
  let p = b.tryAcquire(1);
  b.record(p, Object.assign(new Error('x509: certificate is not trusted'), { status: 503 }), 1, 2);
  assert.equal(b.metrics().calls, 0, 'ignored by the message rule');
  p = b.tryAcquire(3);
  b.record(p, { status: 503, message: 'certificate' }, 1, 4);
  assert.equal(b.metrics().calls, 0, "a Failure's message");

  const plain = new rc.CircuitBreaker({ minimumNumberOfCalls: 10 });
  const a = countingError('x509: certificate is not trusted');
  a.e.status = 503;
  p = plain.tryAcquire(1);
  plain.record(p, a.e, 1, 2);
  assert.equal(plain.metrics().failures, 1);
  assert.equal(a.reads(), 0);
  // The @retryable trait makes a 400 a throttle, which counts as a failure.
  p = plain.tryAcquire(3);
  plain.record(p, { status: 400 }, 1, 4);
  assert.equal(plain.metrics().failures, 1, 'a client error counts as a success');
  p = plain.tryAcquire(5);
  plain.record(p, { status: 400, retryable: { throttling: true } }, 1, 6);
  assert.equal(plain.metrics().failures, 2);

  // A policy's breaker with a message rule makes the policy send messages.
  const pol = new rc.RetryPolicy({ breaker: b, classification: { rules: [{ name: '*', retry: 'always' }] } });
  const c = countingError('x509: certificate is not trusted');
  const s = pol.session();
  s.beforeAttempt(10);
  s.onFailure(c.e, 11);
  assert.ok(c.reads() > 0);
  assert.equal(b.metrics().calls, 0);
});

test('Budget.acquire / release take and return raw token-bucket tokens', () => {
  const b = new rc.Budget({ kind: 'token_bucket', capacity: 10 });
  assert.equal(b.acquire(7, 1), true);
  assert.equal(b.acquire(4, 1), false, 'only 3 left');
  b.release(2, 1);
  assert.equal(b.acquire(5, 1), true);
  b.release(100, 1);
  assert.equal(b.level(1).tokens, 10, 'up to the capacity');
  assert.equal(b.acquire(0), true);
  assert.deepEqual(b.stats(), { refusals: 0, withdrawals: 0 }, 'counts no withdrawal or refusal');
  const empty = new rc.Budget({ kind: 'token_bucket', capacity: 5, initialTokens: 0 });
  assert.equal(empty.acquire(1, 1), false);

  assert.throws(() => b.acquire(-1), (e) => e instanceof RangeError && e.code === 'out_of_range' && e.field === 'amount');
  assert.throws(() => b.release(0.5), (e) => e instanceof RangeError && e.code === 'out_of_range' && e.field === 'amount');
  assert.throws(() => b.acquire('1'), (e) => e instanceof TypeError && e.code === 'invalid_type' && e.field === 'amount');
  for (const options of [{ kind: 'ratio' }, { kind: 'grpc', maxTokens: 10, tokenRatio: 0.1 }, { kind: 'concurrency' }]) {
    const kind = options.kind;
    const other = new rc.Budget(options);
    for (const f of [() => other.acquire(1), () => other.release(1)]) {
      assert.throws(f, (e) => e instanceof rc.RetrycoreError && e.code === 'invalid_state' && e.field === 'kind', kind);
    }
  }
});

test('policy.delay refuses a retry whose delay needs a history it is not given (as Python does)', () => {
  // Polly's DecorrelatedJitterV2 depends on every earlier draw: only retry 1 stands alone.
  const polly = rc.RetryPolicy.fromJSON({ profile: 'polly', backoff: 'exponential', initial: '1s', jitter: 'full' });
  assert.equal(polly.delay(1, 0.5), polly.replayDelays([0.5])[0]);
  for (const prev of [undefined, 1000]) {
    assert.throws(() => polly.delay(2, 0.5, prev), (e) => e instanceof RangeError && e.code === 'invalid_combination' && e.field === 'prev');
  }
  // Decorrelated jitter draws from the previous delay: after retry 1 it needs prev.
  const dec = rc.RetryPolicy.fromJSON({ backoff: 'decorrelated', initial: '100ms', max_delay: '10s' });
  assert.throws(() => dec.delay(2, 0.5), (e) => e instanceof TypeError && e.code === 'missing_field' && e.field === 'prev');
  const first = dec.delay(1, 0.5);
  assert.equal(dec.delay(2, 0.5, first), dec.replayDelays([0.5, 0.5])[1]);
  // A backoff without history needs no prev.
  const plain = rc.RetryPolicy.fromJSON({ backoff: 'exponential', jitter: 'full' });
  assert.equal(typeof plain.delay(3, 0.5), 'number');
  const pollyPlain = rc.RetryPolicy.fromJSON({ profile: 'polly', backoff: 'exponential', jitter: 'none' });
  assert.equal(typeof pollyPlain.delay(3, 0.5), 'number');
});

test("policy.classify honours the policy's idempotent for a failure that does not say (as its sessions and Python do)", () => {
  const timeout = Object.assign(new Error('timed out'), { name: 'TimeoutError' });
  const p = new rc.RetryPolicy({ idempotent: true });
  assert.equal(p.classify(timeout, { method: 'POST' }).retryable, true);
  assert.equal(p.classify(timeout, { method: 'POST', idempotent: false }).retryable, false);
  // A non-idempotent policy makes a GET unsafe.
  const q = new rc.RetryPolicy({ idempotent: false });
  assert.equal(q.classify({ status: 503, method: 'GET' }).safe, false);
  assert.equal(new rc.RetryPolicy({}).classify({ status: 503, method: 'GET' }).safe, true);
  // The packed status path (a status alone, no method) takes the policy's declaration too.
  assert.equal(p.classify(503).safe, true);
  assert.equal(new rc.RetryPolicy({}).classify(503).safe, rc.classify(503).safe);
  assert.equal(rc.classify(503).safe, false);
});

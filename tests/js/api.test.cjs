'use strict';
// The public JS API: execute (timers, AbortSignal, Response, Retry-After),
// errors, hooks, breakers, budgets, sessions, error inspection, idempotency.
// Runs against the implementation RETRYCORE_IMPL selects (impl.cjs).
const test = require('node:test');
const assert = require('node:assert/strict');
const rc = require('./impl.cjs');

const { RetryPolicy, RetryError, CircuitBreaker, CircuitOpenError, Budget, BudgetExhaustedError, IdempotencyError } = rc;

const err = (code, message = code) => Object.assign(new Error(message), { code });
const fast = (extra = {}) => new RetryPolicy({ maxAttempts: 3, initial: 1, maxDelay: 2, jitter: 'none', ...extra });

/** Counts timers started while `f` runs. */
async function countTimers(f) {
  const orig = globalThis.setTimeout;
  let n = 0;
  globalThis.setTimeout = (...a) => {
    n++;
    return orig(...a);
  };
  try {
    await f();
  } finally {
    globalThis.setTimeout = orig;
  }
  return n;
}

function response(status, headers = {}) {
  return new Response(status === 204 ? null : 'body', { status, headers });
}

// ------------------------------------------------------------ options and errors

test('typed options map one to one to the document (camelCase, ms)', () => {
  const p = new RetryPolicy({ maxAttempts: 5, initial: 250, maxDelay: 1500.5, jitter: { kind: 'proportional', factor: 0.5 }, deadline: '30s', attemptTimeout: 1000 });
  const d = p.toJSON();
  assert.equal(d.max_attempts, 5);
  assert.equal(d.initial, '250ms');
  assert.equal(d.max_delay, '1500.5ms');
  assert.equal(d.deadline, '30s');
  assert.equal(d.attempt_timeout, '1s');
  assert.deepEqual(d.jitter, { kind: 'proportional', factor: 0.5 });
  // The same document through fromJSON gives the same policy.
  assert.deepEqual(RetryPolicy.fromJSON(d).toJSON(), d);
  assert.deepEqual(RetryPolicy.fromJSON(JSON.stringify(d)).toJSON(), d);
});

test('milliseconds convert round half to even', () => {
  // 0.0000005 ms = 0.5 ns -> 0 ns; 0.0000015 ms = 1.5 ns -> 2 ns.
  assert.equal(new RetryPolicy({ initial: 0.0000015, jitter: 'none' }).toJSON().initial, '2ns');
  assert.equal(new RetryPolicy({ initial: 0.0000025, jitter: 'none' }).toJSON().initial, '2ns');
});

test('nested typed options: breaker, budgets, classification rules', () => {
  const p = new RetryPolicy({
    breaker: { kind: 'consecutive', failureThreshold: 3, waitDurationInOpenState: 5000 },
    budgets: [{ kind: 'token_bucket', capacity: 50 }],
    classification: { rules: [{ status: 409, retry: 'never' }] },
  });
  const d = p.toJSON();
  assert.equal(d.breaker.kind, 'consecutive');
  assert.equal(d.breaker.wait_duration_in_open_state, '5s');
  assert.equal(d.budgets[0].capacity, 50);
  assert.equal(p.breaker.state, 'closed');
  assert.equal(p.budgets[0].kind, 'token_bucket');
});

test('bad options: TypeError / RangeError with the core code and the JS field', () => {
  const cases = [
    [{ retries: 3 }, TypeError, 'unknown_key', 'retries'],
    [{ max_attempts: 3 }, TypeError, 'unknown_key', 'max_attempts'],
    [{ maxAttempts: 0 }, RangeError, 'out_of_range', 'maxAttempts'],
    [{ initial: -5 }, RangeError, 'out_of_range', 'initial'],
    [{ initial: 5000, maxDelay: 1000 }, RangeError, 'invalid_combination', 'initial'],
    [{ deadline: 'soon' }, RangeError, 'invalid_duration', 'deadline'],
    [{ jitter: 1.5 }, RangeError, 'out_of_range', 'jitter'],
    [{ maxAttempts: '3' }, TypeError, 'invalid_type', 'maxAttempts'],
    [{ breaker: { failureRateThreshold: 0 } }, RangeError, 'out_of_range', 'breaker.failureRateThreshold'],
  ];
  for (const [opts, cls, code, field] of cases) {
    assert.throws(() => new RetryPolicy(opts), (e) => {
      assert.ok(e instanceof cls, `${JSON.stringify(opts)}: ${e.constructor.name}`);
      assert.equal(e.code, code, JSON.stringify(opts));
      assert.equal(e.field, field, JSON.stringify(opts));
      assert.ok(rc.isRetrycoreError(e));
      return true;
    });
  }
  // Documents reject bare numbers for durations (docs/policy.md) and unknown versions.
  assert.throws(() => RetryPolicy.fromJSON({ deadline: 30 }), (e) => e instanceof RangeError && e.code === 'invalid_duration' && e.field === 'deadline');
  assert.throws(() => RetryPolicy.fromJSON('{"version": 2}'), (e) => e.code === 'unknown_version');
  assert.throws(() => RetryPolicy.fromJSON('{'), (e) => e instanceof TypeError && e.code === 'invalid_json');
  assert.equal(rc.isRetrycoreError(new Error('x')), false);
});

test('error classes carry codes and are retrycore errors', () => {
  for (const [E, args, code] of [
    [RetryError, ['m', { reason: 'attempts_exhausted', attempts: 3, category: 'timeout', exhausted: true, key: 'k' }], 'retry_exhausted'],
    [CircuitOpenError, ['m', 10, 'open'], 'breaker_open'],
    [BudgetExhaustedError, ['m', 'b', 'throttled'], 'budget_exhausted'],
    [IdempotencyError, ['m', 'invalid_key', 'key'], 'invalid_key'],
  ]) {
    const e = new E(...args);
    assert.ok(e instanceof Error && e instanceof rc.RetrycoreError);
    assert.equal(e.code, code);
    assert.equal(e.name, E.name);
    assert.ok(rc.isRetrycoreError(e));
  }
});

// ------------------------------------------------------------ execute

test('execute resolves at once without a timer', async () => {
  const p = new RetryPolicy();
  let ctx;
  const timers = await countTimers(async () => {
    assert.equal(await p.execute((c) => ((ctx = c), 42)), 42);
  });
  assert.equal(timers, 0);
  assert.equal(ctx.attempt, 1);
  assert.match(ctx.key, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.equal(p.counters().success_first_try_total, 1);
});

test('execute retries with the same key and passes attempt numbers', async () => {
  const p = fast();
  const seen = [];
  const out = await p.execute(({ attempt, key }) => {
    seen.push([attempt, key]);
    if (attempt < 3) throw err('ECONNRESET');
    return 'done';
  }, { method: 'GET' });
  assert.equal(out, 'done');
  assert.deepEqual(seen.map((s) => s[0]), [1, 2, 3]);
  assert.equal(new Set(seen.map((s) => s[1])).size, 1);
  assert.equal(p.counters().retry_success_after_retry_total, 1);
});

test('execute keeps a caller key', async () => {
  const key = rc.deriveKey('order-1001', 'charge', 'v1');
  const keys = [];
  await fast().execute(({ key: k, attempt }) => {
    keys.push(k);
    if (attempt === 1) throw err('ECONNREFUSED');
  }, { key });
  assert.deepEqual(keys, [key, key]);
});

test('no timer at all when the delay is 0 (policy.testing)', async () => {
  const p = new RetryPolicy({ maxAttempts: 10, initial: 1000 }).testing(4, 0);
  let n = 0;
  const timers = await countTimers(async () => {
    await assert.rejects(p.execute(() => { n++; throw err('ECONNREFUSED'); }), (e) => e instanceof RetryError && e.reason === 'attempts_exhausted' && e.attempts === 4);
  });
  assert.equal(n, 4);
  assert.equal(timers, 0);
});

test('RetryError: reason, attempts, cause, exhausted, key', async () => {
  const boom = err('ECONNRESET', 'socket hang up');
  const e = await fast().execute(() => { throw boom; }, { idempotent: true }).catch((x) => x);
  assert.ok(e instanceof RetryError);
  assert.equal(e.code, 'retry_exhausted');
  assert.equal(e.reason, 'attempts_exhausted');
  assert.equal(e.attempts, 3);
  assert.equal(e.cause, boom);
  assert.equal(e.category, 'connection_lost');
  assert.equal(e.exhausted, true);
  assert.equal(typeof e.key, 'string');
  // An outer layer does not retry it again (retry at one layer only: docs/sessions.md).
  assert.equal(rc.classify(e).category, 'retry_exhausted');
  assert.deepEqual(rc.errorNames(e).slice(0, 1), ['retrycore:retry_exhausted']);
});

test('a POST that timed out is not retried without a declared key', async () => {
  let n = 0;
  const thrown = err('ETIMEDOUT');
  const e = await fast().execute(() => { n++; throw thrown; }, { method: 'POST' }).catch((x) => x);
  assert.equal(n, 1);
  // Nothing retries it: the error itself propagates, unwrapped and unmarked (docs/sessions.md).
  assert.equal(e, thrown);
  n = 0;
  await assert.rejects(fast().execute(() => { n++; throw err('ETIMEDOUT'); }, { method: 'POST', idempotencyKeySent: true }));
  assert.equal(n, 3);
});

test('a programming error is never retried', async () => {
  let n = 0;
  const e = await fast().execute(() => { n++; null.x; }).catch((x) => x);
  assert.equal(n, 1);
  assert.ok(e instanceof TypeError && !rc.isRetrycoreError(e), 'the programming error itself');
  assert.equal(rc.classify(e).category, 'programming_error');
});

test('a Response with a retryable status is retried, honouring Retry-After', async () => {
  const p = new RetryPolicy({ maxAttempts: 3, initial: 1, jitter: 'none' });
  const delays = [];
  p.onRetry = (i) => delays.push([i.delay, i.category]);
  let n = 0;
  const t0 = performance.now();
  const res = await p.execute(() => (++n < 3 ? response(503, { 'retry-after-ms': '30' }) : response(200)));
  assert.equal(res.status, 200);
  assert.equal(n, 3);
  assert.deepEqual(delays, [[30, 'overloaded'], [30, 'overloaded']]);
  assert.ok(performance.now() - t0 >= 55, 'slept the server delay');
});

test('a Response nothing retries is returned; an exhausted one rejects', async () => {
  const p = fast();
  const res = await p.execute(() => response(404));
  assert.equal(res.status, 404);
  const e = await p.execute(() => response(503), { method: 'GET' }).catch((x) => x);
  assert.ok(e instanceof RetryError);
  assert.equal(e.reason, 'attempts_exhausted');
  assert.equal(e.cause.status, 503);
});

test('an error carrying a response with Retry-After is honoured', async () => {
  const p = new RetryPolicy({ maxAttempts: 2, initial: 1, jitter: 'none', maxRetryAfter: 1000 });
  const axiosLike = Object.assign(new Error('Request failed with status code 429'), { response: { status: 429, headers: { 'retry-after-ms': '25' } } });
  const infos = [];
  p.onRetry = (i) => infos.push(i);
  let n = 0;
  await p.execute(() => { if (++n === 1) throw axiosLike; return 'ok'; });
  assert.equal(infos[0].delay, 25);
  assert.equal(infos[0].category, 'overloaded');
  // A server delay beyond maxRetryAfter gives up.
  const long = Object.assign(new Error('429'), { status: 429, response: { headers: { 'retry-after': '3600' } } });
  const e = await p.execute(() => { throw long; }).catch((x) => x);
  assert.equal(e.reason, 'retry_after_too_long');
});

test('AbortSignal: aborting during the wait rejects with the reason and releases the session', async () => {
  const p = new RetryPolicy({ maxAttempts: 5, initial: 10_000, jitter: 'none', breaker: { kind: 'consecutive', failureThreshold: 100 } });
  const ac = new AbortController();
  const reason = new Error('stop');
  setTimeout(() => ac.abort(reason), 20);
  const t0 = performance.now();
  await assert.rejects(p.execute(() => { throw err('ECONNREFUSED'); }, { signal: ac.signal }), (e) => e === reason);
  assert.ok(performance.now() - t0 < 5000);
  assert.equal(p.counters().retry_exhausted_total.cancelled, 1);
});

test('AbortSignal: an already aborted signal rejects with AbortError before calling', async () => {
  const ac = new AbortController();
  ac.abort();
  let n = 0;
  await assert.rejects(new RetryPolicy().execute(() => n++, { signal: ac.signal }), (e) => e.name === 'AbortError');
  assert.equal(n, 0);
});

test('AbortSignal: aborting during an attempt stops at once; fn gets the signal', async () => {
  const ac = new AbortController();
  let got;
  const pending = new RetryPolicy().execute(({ signal }) => { got = signal; return new Promise(() => {}); }, { signal: ac.signal });
  setTimeout(() => ac.abort(), 5);
  await assert.rejects(pending, (e) => e.name === 'AbortError');
  assert.equal(got, ac.signal);
});

test('attemptTimeout aborts an attempt with a TimeoutError, classified timeout', async () => {
  const p = new RetryPolicy({ maxAttempts: 2, initial: 1, jitter: 'none', attemptTimeout: 20 });
  const cats = [];
  p.onRetry = (i) => cats.push(i.category);
  let n = 0;
  const out = await p.execute(({ signal }) => {
    n++;
    if (n === 1) return new Promise((_, rej) => signal.addEventListener('abort', () => rej(signal.reason)));
    return 'second';
  }, { idempotent: true });
  assert.equal(out, 'second');
  assert.deepEqual(cats, ['timeout']);
});

test('hooks: onRetry before each sleep, onGiveUp once', async () => {
  const events = [];
  const p = fast({ onRetry: (i) => events.push(['retry', i.attempt, i.retry, i.delay]), onGiveUp: (i) => events.push(['give_up', i.attempt, i.reason]) });
  await assert.rejects(p.execute(() => { throw err('ECONNREFUSED'); }));
  // onRetry's attempt is the call that failed (retry n follows call n; docs/sessions.md).
  assert.deepEqual(events, [['retry', 1, 1, 1], ['retry', 2, 2, 2], ['give_up', 3, 'attempts_exhausted']]);
});

test('onStateChange reports the policy breaker transitions; an open breaker rejects with CircuitOpenError', async () => {
  const changes = [];
  const p = new RetryPolicy({ maxAttempts: 1, breaker: { kind: 'consecutive', failureThreshold: 2, waitDurationInOpenState: 60_000 }, onStateChange: (t) => changes.push(`${t.from}->${t.to}:${t.reason}`) });
  for (let i = 0; i < 2; i++) await assert.rejects(p.execute(() => { throw err('ECONNREFUSED'); }));
  assert.deepEqual(changes, ['closed->open:consecutive_failures']);
  const e = await p.execute(() => 'never').catch((x) => x);
  assert.ok(e instanceof CircuitOpenError);
  assert.equal(e.code, 'breaker_open');
  assert.ok(e.retryAfter > 59_000 && e.retryAfter <= 60_000);
  assert.deepEqual(rc.errorNames(e), ['retrycore:breaker_open']);
});

test('an adaptive throttle refusing the first attempt rejects with BudgetExhaustedError', async () => {
  const b = new Budget({ kind: 'adaptive' });
  // Many requests, no accepts: the throttle rejects with high probability.
  for (let i = 0; i < 200; i++) b.beforeAttempt(0.99, 0);
  const p = new RetryPolicy({ budget: b });
  let refused = 0;
  for (let i = 0; i < 50; i++) {
    await p.execute(() => { throw err('ECONNREFUSED'); }).catch((e) => { if (e instanceof BudgetExhaustedError) { refused++; assert.equal(e.reason, 'throttled'); } });
  }
  assert.ok(refused > 0);
});

test('execute argument checks', async () => {
  await assert.rejects(new RetryPolicy().execute('nope'), (e) => e instanceof TypeError && e.code === 'invalid_type');
  await assert.rejects(new RetryPolicy().execute(() => 1, { signals: 1 }), (e) => e instanceof TypeError && e.code === 'unknown_key');
  await assert.rejects(new RetryPolicy().execute(() => 1, { signal: 5 }), (e) => e instanceof TypeError);
});

// ------------------------------------------------------------ sessions and pure functions

test('a session driven by hand', () => {
  const p = new RetryPolicy({ jitter: 'none' });
  const s = p.session({ key: 'k-1', method: 'GET' });
  assert.equal(s.key, 'k-1');
  assert.deepEqual(s.beforeAttempt(0), { action: 'proceed', attempt: 1, maxAttempts: 3, timeout: null, wait: null });
  const d = s.onFailure({ status: 503 }, 10);
  assert.equal(d.action, 'retry');
  assert.equal(d.delay, 100);
  s.beforeAttempt(110);
  s.onSuccess(120);
  assert.throws(() => s.beforeAttempt(130), (e) => e instanceof rc.RetrycoreError && e.code === 'invalid_state');
  s.release();
  assert.throws(() => s.key, (e) => e.code === 'invalid_state');
});

test('delay, schedule, sampleDelays, testing, counters', () => {
  const p = new RetryPolicy({ jitter: 'full', maxAttempts: 4 });
  assert.equal(p.delay(1, 0.5), 50);
  assert.equal(p.delay(3, 1), 400);
  assert.throws(() => p.delay(1, 1.5), (e) => e instanceof RangeError && e.code === 'out_of_range');
  const s = p.schedule();
  assert.equal(s.rows.length, 3);
  assert.equal(s.worstCase, 700);
  assert.deepEqual(p.sampleDelays(7n, 3), p.sampleDelays('7', 3));
  assert.equal(p.testing(2).toJSON().max_attempts, 2);
  assert.equal(typeof p.counters().retry_attempts_total, 'number');
});

test('classify: status fast path, errors, Responses, failures', () => {
  assert.equal(rc.classify(429).retry, 'always');
  assert.equal(rc.classify(503, { idempotent: true }).retryable, true);
  assert.equal(rc.classify(503, { method: 'GET' }).retryable, true);
  assert.equal(rc.classify(503).retryable, false);
  assert.equal(rc.classify(response(503, { 'retry-after': '1' })).category, 'overloaded');
  assert.equal(rc.classify(err('ECONNREFUSED')).refused, true);
  assert.equal(rc.classify(Object.assign(new Error('x'), { statusCode: 404 })).category, 'not_found');
  assert.equal(rc.classify({ grpcCode: 'UNAVAILABLE' }).category, 'connection_lost');
  assert.equal(rc.classify(Object.assign(new Error('x'), { code: 14, details: 'unavailable' })).category, 'connection_lost');
  assert.equal(rc.classify(new DOMException('t', 'TimeoutError')).category, 'timeout');
  assert.equal(rc.classify(new DOMException('a', 'AbortError')).category, 'cancelled');
  assert.throws(() => rc.classify({ statis: 503 }), (e) => e instanceof TypeError && e.code === 'unknown_key');
  const p = new RetryPolicy({ classification: { rules: [{ status: 404, retry: 'always' }] } });
  assert.equal(p.classify(404).retry, 'always');
});

test('only an exhausted RetryError is marked retry_exhausted (docs/sessions.md)', async () => {
  const policy = fast({ maxAttempts: 2 });
  // A POST reset nothing would retry: the reset itself propagates, unmarked, and decides an outer layer.
  const gaveUp = await policy.execute(() => { throw err('ECONNRESET'); }, { method: 'POST' }).catch((e) => e);
  assert.ok(!(gaveUp instanceof RetryError) && gaveUp.code === 'ECONNRESET');
  assert.ok(!rc.errorNames(gaveUp).includes('retrycore:retry_exhausted'));
  assert.equal(rc.classify(gaveUp, { method: 'GET' }).category, 'connection_lost');
  // A RetryError not marked exhausted (built by hand) is transparent: its cause decides.
  const transparent = new RetryError('x', { reason: 'not_retryable', attempts: 1, category: 'connection_lost', exhausted: false, key: '', cause: err('ECONNRESET') });
  assert.ok(!rc.errorNames(transparent).includes('retrycore:retry_exhausted'));
  // Attempts ran out: marked, so an outer layer does not retry it again.
  const exhausted = await policy.execute(() => { throw err('ECONNRESET'); }, { method: 'GET' }).catch((e) => e);
  assert.ok(exhausted instanceof RetryError && exhausted.reason === 'attempts_exhausted' && exhausted.exhausted === true);
  assert.equal(rc.errorNames(exhausted)[0], 'retrycore:retry_exhausted');
  assert.equal(rc.classify(exhausted, { method: 'GET' }).category, 'retry_exhausted');
});

test('errorNames flattens the cause chain (docs/classification-rules.md)', () => {
  class HttpError extends Error {}
  class ServiceError extends HttpError {}
  const e = new ServiceError('x', { cause: err('ECONNRESET') });
  assert.deepEqual(rc.errorNames(e), ['Error', 'ServiceError', 'HttpError', 'ECONNRESET', 'Error']);
  // fetch network TypeError: outer names dropped, FetchNetworkError appended after the chain.
  const undici = new TypeError('fetch failed', { cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) });
  assert.deepEqual(rc.errorNames(undici), ['ECONNREFUSED', 'Error', 'FetchNetworkError']);
  assert.equal(rc.classify(undici).category, 'connect');
  const browser = new TypeError('Failed to fetch');
  assert.deepEqual(rc.errorNames(browser), ['FetchNetworkError']);
  assert.equal(rc.classify(browser, { method: 'GET' }).retryable, true);
  assert.equal(rc.classify(new TypeError('x is not a function')).category, 'programming_error');
  const socket = new TypeError('terminated', { cause: Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET', name: 'SocketError' }) });
  assert.equal(rc.classify(socket, { method: 'GET' }).category, 'connection_lost');
  assert.deepEqual(rc.errorNames(new DOMException('t', 'TimeoutError')), ['DOMException:TimeoutError']);
  // Cycles and long chains are bounded.
  const a = new Error('a');
  const b = new Error('b', { cause: a });
  a.cause = b;
  assert.ok(rc.errorNames(a).length <= 4);
  let deep = new Error('0');
  for (let i = 0; i < 1000; i++) deep = new Error(String(i), { cause: deep });
  assert.ok(rc.errorNames(deep).length <= 32);
  assert.deepEqual(rc.errorNames('a string'), []);
  assert.deepEqual(rc.errorNames(undefined), []);
});

test('readServerAdvice and parseHttpDate', () => {
  assert.deepEqual(rc.readServerAdvice([['Retry-After', '2']]), { delay: 2000, source: 'retry-after', declined: false, shouldRetry: null, retryExhausted: false });
  assert.equal(rc.readServerAdvice(new Headers({ 'retry-after-ms': '15' })).delay, 15);
  assert.equal(rc.readServerAdvice({ 'x-should-retry': 'false' }).shouldRetry, false);
  assert.equal(rc.parseHttpDate('Sun, 06 Nov 1994 08:49:37 GMT', 0), 784111777);
  assert.equal(rc.parseDuration('1.5s'), 1500);
  assert.equal(rc.formatDuration(1500), '1.5s');
});

// ------------------------------------------------------------ breakers and budgets

test('CircuitBreaker: acquire/record, open, retryAfter, snapshot/restore, manual transitions', () => {
  const b = new CircuitBreaker({ kind: 'count_based', minimumNumberOfCalls: 2, slidingWindowSize: 2, waitDurationInOpenState: 1000 });
  const changes = [];
  b.onStateChange = (t) => changes.push(t);
  for (let i = 0; i < 2; i++) {
    const p = b.tryAcquire(i);
    assert.ok(p >= 0);
    b.record(p, 'failure', 1, i);
  }
  assert.equal(b.state, 'open');
  assert.equal(b.tryAcquire(10), -1);
  assert.equal(b.retryAfter, 991.000001);
  const snap = b.snapshot(10, 1_000_000);
  const b2 = new CircuitBreaker({ kind: 'count_based', minimumNumberOfCalls: 2, slidingWindowSize: 2, waitDurationInOpenState: 1000 });
  b2.restore(snap, 0, 1_000_500);
  assert.equal(b2.state, 'open');
  assert.ok(b2.tryAcquire(600) >= 0, 'the stored half second counts as waited');
  assert.equal(b.transitionTo('forced_open', 20).to, 'forced_open');
  // resilience4j's StateTransition table: no closed → half_open (a state to itself is legal).
  assert.throws(() => new CircuitBreaker().transitionTo('half_open', 21), (e) => e.code === 'invalid_transition');
  assert.deepEqual(changes.map((t) => t.to), ['open', 'forced_open']);
  assert.throws(() => b.record(0, 'maybe'), (e) => e instanceof RangeError && e.code === 'invalid_value');
  b.reset(30);
  assert.equal(b.state, 'closed');
});

test('CircuitBreaker.execute counts failures by the counting rules and rejects when open', async () => {
  const b = new CircuitBreaker({ kind: 'consecutive', failureThreshold: 2, waitDurationInOpenState: 60_000 });
  await assert.rejects(b.execute(() => { throw Object.assign(new Error('404'), { status: 404 }); }));
  assert.equal(b.metrics().failures, 0, 'a client error counts as a success');
  for (let i = 0; i < 2; i++) await assert.rejects(b.execute(() => { throw err('ECONNRESET'); }));
  assert.equal(b.state, 'open');
  await assert.rejects(b.execute(() => 1), (e) => e instanceof CircuitOpenError && e.retryAfter > 0);
  const ok = new CircuitBreaker();
  assert.equal(await ok.execute(async () => 7), 7);
});

test('a shared breaker and budget are shared by reference', async () => {
  const breaker = new CircuitBreaker({ kind: 'consecutive', failureThreshold: 1 });
  const budget = new Budget({ kind: 'token_bucket', capacity: 100 });
  const a = new RetryPolicy({ maxAttempts: 1, breaker, budget });
  const b = new RetryPolicy({ maxAttempts: 1, breaker, budgets: [budget] });
  await assert.rejects(a.execute(() => { throw err('ECONNRESET'); }));
  assert.equal(breaker.state, 'open');
  await assert.rejects(b.execute(() => 1), (e) => e instanceof CircuitOpenError);
  assert.equal(b.budgets[0].level().tokens, 100);
});

test('Budget kinds: token bucket, ratio, concurrency, grpc, adaptive', () => {
  const t = new Budget({ kind: 'token_bucket', capacity: 10 });
  assert.equal(t.tryWithdraw('server_error', 0), true);
  assert.equal(t.tryWithdraw('timeout', 0), false, 'a timeout costs 10 of the 5 left');
  assert.deepEqual(t.check('timeout', 0), { budget: 'token_bucket', reason: 'insufficient_tokens' });
  t.recordSuccess(1, 5);
  assert.equal(t.level(1).tokens, 10);
  const r = new Budget({ kind: 'ratio', ratio: 0.5, minRetriesPerSecond: 0 });
  r.start(0);
  r.start(0);
  assert.equal(r.tryWithdraw('server_error', 0), true);
  assert.equal(r.tryWithdraw('server_error', 0), false);
  const c = new Budget({ kind: 'concurrency' });
  c.start(0);
  assert.deepEqual(c.level(0), { calls: 1, retries: 0 });
  const g = new Budget({ kind: 'grpc', maxTokens: 10, tokenRatio: 0.1 });
  g.recordFailure('server_error', 0);
  assert.equal(g.level(0).tokens, 9);
  const a = new Budget({ kind: 'adaptive' });
  assert.equal(a.beforeAttempt(0.5, 0), null);
  assert.throws(() => t.tryWithdraw('weird'), (e) => e instanceof RangeError && e.code === 'invalid_value');
  assert.throws(() => new Budget({ kind: 'grpc' }), (e) => e.code === 'missing_field');
});

test('lint', () => {
  const codes = rc.lint({ jitter: 'none', max_attempts: 8 }).map((f) => f.code);
  assert.ok(codes.includes('no_jitter'));
  assert.ok(new RetryPolicy({ seed: 1n }).lint().some((f) => f.severity === 'error' || f.code.includes('seed')));
});

// ------------------------------------------------------------ idempotency

test('keys and the Idempotency-Key header', () => {
  assert.equal(rc.deriveKey('order-1001', 'charge', 'v1'), 'order-1001:charge:v1');
  assert.equal(rc.deriveKey(['a', 'b']), 'a:b');
  assert.throws(() => rc.deriveKey('a:b', 'c'), (e) => e instanceof IdempotencyError && e.code === 'invalid_key' && e.field === 'parts[0]');
  assert.equal(rc.validateKey('abc'), true);
  assert.throws(() => rc.validateKey('a b'), (e) => e instanceof IdempotencyError && /position/.test(e.message));
  assert.equal(rc.scopedKey('acme', 'k'), '4:acme:k');
  assert.match(rc.storageKey('x'.repeat(300), 64), /^sha256:[0-9a-f]{57}$/);
  assert.match(rc.mintKey(), /^[0-9a-f-]{36}$/);
  assert.notEqual(rc.mintKey(), rc.mintKey());
  assert.equal(rc.formatIdempotencyHeader('k"1'), '"k\\"1"');
  assert.equal(rc.parseIdempotencyHeader('"k\\"1"'), 'k"1');
  assert.equal(rc.parseIdempotencyHeader('tok_1', { token: true }), 'tok_1');
  assert.throws(() => rc.parseIdempotencyHeader('tok_1'), (e) => e.code === 'invalid_header');
});

test('fingerprint: key order, number spelling and -0 do not matter', () => {
  const o = { method: 'POST', path: '/v1/charges' };
  const a = rc.fingerprint({ amount: 1000, currency: 'usd', meta: { b: 1, a: [1, 2] } }, o);
  const b = rc.fingerprint({ meta: { a: [1, 2], b: 1.0 }, currency: 'usd', amount: 1e3 }, o);
  assert.equal(a, b);
  assert.match(a, /^[0-9a-f]{64}$/);
  assert.equal(rc.fingerprint({ x: -0 }, o), rc.fingerprint({ x: 0 }, o));
  assert.notEqual(rc.fingerprint({ amount: 1001 }, o), rc.fingerprint({ amount: 1000 }, o));
  assert.equal(rc.fingerprintText('{"amount": 1000}', o), rc.fingerprint({ amount: 1000 }, o));
  assert.equal(rc.fingerprintCanonical({ b: 1, a: 2 }, { operation: 'op' }), '{"body":{"a":2,"b":1},"operation":"op"}');
  assert.equal(rc.canonicalJSON({ b: [true, null, 'x'], a: 1.5 }), '{"a":1.5,"b":[true,null,"x"]}');
});

test('records: claim, complete, replay', () => {
  const fp = rc.fingerprint({ amount: 1 }, { method: 'POST', path: '/pay' });
  const d = rc.decideRecord(null, 'k1', fp, 1000, { leaseMs: 30_000 });
  assert.equal(d.decision, 'execute');
  assert.equal(d.fence, 1);
  assert.equal(d.record.state, 'processing');
  const busy = rc.decideRecord(d.record, 'k1', fp, 2000, { leaseMs: 30_000 });
  assert.equal(busy.decision, 'in_progress');
  assert.equal(busy.http.status, 409);
  const done = rc.completeRecord(d.record, 1, { state: 'succeeded', response: { status: 201, headers: [], body: { id: 7 } } }, 3000);
  assert.equal(done.state, 'succeeded');
  const replay = rc.decideRecord(done, 'k1', fp, 4000);
  assert.equal(replay.decision, 'replay');
  assert.deepEqual(replay.response.body, { id: 7 });
  assert.equal(rc.decideRecord(done, 'k1', 'f'.repeat(64), 4000).decision, 'mismatch');
  assert.throws(() => rc.completeRecord(done, 0, { state: 'succeeded' }, 5000), (e) => e instanceof IdempotencyError);
  assert.equal(rc.decideRecord(null, null, fp, 0).decision, 'missing_key');
});

test('dead letters', () => {
  const l = rc.DeadLetter.create({ msgId: 'm-1', message: { order: 1 }, reason: 'attempts_exhausted', error: new TypeError('boom'), attempts: 5, firstFailureAt: 0, lastFailureAt: 1000, topic: 'orders', partition: 3, offset: 42, targetIdempotent: true });
  assert.equal(l.status, 'pending');
  assert.equal(l.toJSON().first_failure_at, '1970-01-01T00:00:00.000Z');
  assert.equal(l.markReplayable().toJSON().replayable, true);
  assert.equal(l.markReplayed().status, 'replayed');
  assert.throws(() => rc.DeadLetter.fromJSON({ msg_id: 'x' }), (e) => rc.isRetrycoreError(e));
  assert.equal(rc.parseRfc3339(rc.formatRfc3339(1_700_000_000_123)), 1_700_000_000_123);
});

test('Rng reproduces the shared generator', () => {
  const g = new rc.Rng(0n);
  const x = g.nextU64();
  assert.equal(typeof x, 'bigint');
  const f = g.nextFloat();
  assert.ok(f >= 0 && f < 1);
  assert.throws(() => new rc.Rng(-1), (e) => e instanceof RangeError);
});

test('the built backend has no bench-only floor exports (cargo feature `bench`)', (t) => {
  const path = require('node:path');
  const root = path.join(__dirname, '..', '..');
  const file = { node: 'bindings-node/native.cjs', wasm: 'bindings-wasm/dist/node/retrycore_wasm.js' }[rc.IMPL];
  if (!file) return t.skip('an installed package: package-smoke.cjs checks it');
  const backend = require(path.join(root, file));
  const names = [];
  for (const [name, v] of Object.entries(backend)) {
    names.push(name);
    if (typeof v === 'function' && v.prototype) {
      for (const m of [...Object.getOwnPropertyNames(v), ...Object.getOwnPropertyNames(v.prototype)]) names.push(`${name}.${m}`);
    }
  }
  assert.ok(names.includes('NativePolicy.delay'), 'the walk sees the classes');
  assert.deepEqual(names.filter((n) => /(^|\.)floor/i.test(n)), []);
});

'use strict';
// Regressions of issue 22 ("No hang, no leak, no wrong wait"), JS part: one
// test per numbered item, named after it, against either implementation
// (RETRYCORE_IMPL=node | wasm, see impl.cjs). Nothing here waits for real
// time: long timers are checked by replacing setTimeout with a recorder.
const test = require('node:test');
const assert = require('node:assert/strict');
const rc = require('./impl.cjs');
const { revoked, throwing, deep, sparse } = require('./hostile-values.cjs');

const MAX_TIMER = 2 ** 31 - 1;
const HOUR = 3600e3;

function rejects(what, f, cls, code, field) {
  let err;
  try {
    f();
  } catch (e) {
    err = e;
  }
  assert.ok(err !== undefined, `${what}: did not throw`);
  assert.ok(err instanceof cls, `${what}: ${err && err.constructor && err.constructor.name} (${err && err.code}: ${err && err.message}), want ${cls.name}`);
  assert.equal(err.code, code, `${what}: ${err.message}`);
  if (field !== undefined) assert.equal(err.field, field, `${what}: field`);
  return err;
}

/** Replaces setTimeout / clearTimeout with a recorder for the duration of `body`; timers fire only by `fire()`. */
async function withFakeTimers(body) {
  const real = { set: globalThis.setTimeout, clear: globalThis.clearTimeout };
  const timers = new Map();
  const log = [];
  let next = 1;
  globalThis.setTimeout = (f, ms, ...args) => {
    const id = next++;
    timers.set(id, { f, ms, args });
    log.push(ms);
    return id;
  };
  globalThis.clearTimeout = (id) => {
    timers.delete(id);
  };
  const clock = {
    log,
    pending: () => [...timers.values()].map((t) => t.ms),
    /** Fires the earliest-registered pending timer. */
    fire() {
      const [id, t] = timers.entries().next().value;
      timers.delete(id);
      t.f(...t.args);
      return t.ms;
    },
    /** Lets promise callbacks run (real macrotask turn). */
    turn: () => new Promise((r) => real.set(r, 0)),
  };
  try {
    return await body(clock);
  } finally {
    globalThis.setTimeout = real.set;
    globalThis.clearTimeout = real.clear;
  }
}

/** Collects the warnings `process.emitWarning` gets while `body` runs. */
async function collectWarnings(body) {
  const got = [];
  const real = process.emitWarning;
  process.emitWarning = (w) => got.push(w);
  try {
    await body();
  } finally {
    process.emitWarning = real;
  }
  return got;
}

test('item 2: sparse arrays of length 2**32-1 are refused with too_large before any walk', () => {
  const t0 = Date.now();
  const p = new rc.RetryPolicy();
  const o = { method: 'POST', path: '/x' };
  for (const [what, f] of [
    ['replayDelays', () => p.replayDelays(sparse())],
    ['session draws', () => p.session({ draws: sparse() })],
    ['fingerprint selected', () => rc.fingerprint({}, { ...o, selected: sparse() })],
    ['fingerprint body', () => rc.fingerprint(sparse(), o)],
    ['canonicalJSON', () => rc.canonicalJSON({ a: sparse() })],
    ['header value', () => rc.classify({ headers: [['retry-after', sparse()]] })],
    ['header value (object)', () => rc.classify({ headers: { 'retry-after': sparse() } })],
    ['header list', () => rc.readServerAdvice(sparse())],
    ['errorNames', () => rc.classify({ errorNames: sparse() })],
    ['deriveKey', () => rc.deriveKey(sparse())],
    ['releaseCategories', () => rc.decideRecord(null, 'k', 'f'.repeat(64), 0, { releaseCategories: sparse() })],
    ['policy options', () => new rc.RetryPolicy({ classification: { rules: sparse() } })],
    ['policy document', () => rc.RetryPolicy.fromJSON({ classification: { rules: sparse() } })],
    ['session onFailure headers', () => p.session().onFailure({ status: 503, headers: [['a', sparse()]] })],
  ]) {
    rejects(what, f, RangeError, 'too_large');
  }
  // One more than the core's MAX_ITEMS is refused; a long dense list within it is read.
  const long = new Array(65_537).fill(0.5);
  rejects('65 537 draws', () => p.replayDelays(long), RangeError, 'too_large', 'draws');
  assert.equal(new rc.RetryPolicy({ maxAttempts: 70_000 }).replayDelays(long.slice(1)).length, 65_536);
  assert.ok(Date.now() - t0 < 5000, 'refused without walking');
});

test('item 5: delays above 2**31-1 ms are chained timers, never a 1 ms clamp', async () => {
  // A 700 h backoff.
  await withFakeTimers(async (clock) => {
    const p = new rc.RetryPolicy({ backoff: 'constant', initial: 700 * HOUR, maxDelay: 800 * HOUR, jitter: 'none', maxAttempts: 2 });
    let calls = 0;
    const run = p.execute(() => {
      calls++;
      if (calls === 1) throw Object.assign(new Error('unavailable'), { status: 503 });
      return 'ok';
    }, { idempotent: true });
    await clock.turn();
    let waited = 0;
    while (calls === 1) {
      assert.equal(clock.pending().length, 1, 'one timer at a time');
      waited += clock.fire();
      await clock.turn();
      if (waited < 700 * HOUR) assert.equal(calls, 1, `retried after ${waited} ms of 700 h`);
    }
    assert.equal(await run, 'ok');
    assert.equal(waited, 700 * HOUR);
    assert.ok(clock.log.every((ms) => ms <= MAX_TIMER), `every timer within setTimeout's range: ${clock.log}`);
  });
  // A 30-day Retry-After with maxRetryAfter raised.
  await withFakeTimers(async (clock) => {
    const p = new rc.RetryPolicy({ maxRetryAfter: 31 * 24 * HOUR, maxDelay: 31 * 24 * HOUR, maxAttempts: 2 });
    let calls = 0;
    let decided = null;
    p.onRetry = (info) => {
      decided = info.delay;
    };
    const run = p.execute(() => {
      calls++;
      if (calls === 1) throw Object.assign(new Error('busy'), { status: 503, response: { status: 503, headers: { 'retry-after': String(30 * 86400) } } });
      return 'ok';
    }, { idempotent: true });
    await clock.turn();
    assert.equal(decided, 30 * 24 * HOUR);
    let waited = 0;
    while (calls === 1) {
      waited += clock.fire();
      await clock.turn();
    }
    assert.equal(await run, 'ok');
    assert.equal(waited, 30 * 24 * HOUR);
    assert.ok(clock.log.every((ms) => ms <= MAX_TIMER));
  });
  // A 700 h deadline: the attempt's timeout timer is chained too.
  await withFakeTimers(async (clock) => {
    const p = new rc.RetryPolicy({ deadline: 700 * HOUR });
    let resolve;
    const run = p.execute(({ signal }) => {
      assert.equal(signal.aborted, false);
      return new Promise((r) => {
        resolve = r;
      });
    });
    await clock.turn();
    assert.ok(clock.pending().length === 1 && clock.pending()[0] <= MAX_TIMER, `timeout timer ${clock.pending()}`);
    clock.fire(); // the first link of the chain: not the timeout yet
    await clock.turn();
    resolve('done');
    assert.equal(await run, 'done');
    assert.deepEqual(clock.pending(), [], 'the timeout chain is cleared');
    assert.ok(clock.log.every((ms) => ms <= MAX_TIMER));
  });
});

test('item 6: a hook that throws never changes breaker or budget state, and the call goes on', async () => {
  const boom = new Error('hook boom');
  // open -> half_open with maxWaitDurationInHalfOpenState 0: the trial permit must not be lost.
  const warnings = await collectWarnings(async () => {
    const b = new rc.CircuitBreaker({
      kind: 'consecutive',
      failureThreshold: 1,
      waitDurationInOpenState: 10,
      permittedNumberOfCallsInHalfOpenState: 1,
      maxWaitDurationInHalfOpenState: 0,
    });
    b.onStateChange = (t) => {
      if (t.to === 'half_open') throw boom;
    };
    const p0 = b.tryAcquire(0);
    b.record(p0, 'failure', 0, 1);
    assert.equal(b.state, 'open');
    const trial = b.tryAcquire(20);
    assert.ok(trial >= 0 && rc.CircuitBreaker.isTrialPermit(trial), 'the trial permit reaches the caller');
    assert.equal(b.state, 'half_open');
    b.record(trial, 'success', 0, 21);
    assert.equal(b.state, 'closed', 'not refusing forever');
    // The same through execute (its own clock).
    const b2 = new rc.CircuitBreaker({ kind: 'consecutive', failureThreshold: 1, waitDurationInOpenState: 1, permittedNumberOfCallsInHalfOpenState: 1, maxWaitDurationInHalfOpenState: 0 });
    b2.onStateChange = () => {
      throw boom;
    };
    await assert.rejects(b2.execute(() => Promise.reject(Object.assign(new Error('x'), { code: 'ECONNRESET' }))));
    assert.equal(b2.state, 'open');
    await new Promise((r) => setTimeout(r, 5));
    assert.equal(await b2.execute(() => 'ok'), 'ok');
    assert.equal(b2.state, 'closed');
  });
  assert.ok(warnings.length >= 3, `warnings: ${warnings.length}`);
  assert.ok(warnings.every((w) => w instanceof Error && w.cause === boom), 'the hook error is the warning cause');

  // Policy hooks: onRetry, onGiveUp, onStateChange throwing leave execute's answer and the budget alone.
  const budget = new rc.Budget({ kind: 'concurrency', ratio: 0, minConcurrency: 1 });
  const p = new rc.RetryPolicy({ maxAttempts: 2, initial: 0, jitter: 'none', budget, breaker: { kind: 'consecutive', failureThreshold: 1 } });
  for (const h of ['onRetry', 'onGiveUp', 'onStateChange']) {
    p[h] = () => {
      throw boom;
    };
  }
  const w2 = await collectWarnings(async () => {
    await assert.rejects(
      p.execute(() => {
        throw Object.assign(new Error('down'), { status: 503 });
      }, { idempotent: true }),
      (e) => e instanceof rc.RetryError,
    );
  });
  assert.ok(w2.length >= 2, `warnings: ${w2.length}`);
  assert.deepEqual(budget.level(), { calls: 0, retries: 0 }, 'the retry slot went back');
});

test('item 7: CircuitBreaker.execute rethrows any thrown value as is and always returns the permit', async () => {
  const values = [{ code: 'ECONNRESET' }, { status: 'x' }, { nope: 1 }, 'a string', 42, 1e9, null, undefined, throwing, revoked, new Proxy({}, {}), Object.create(null)];
  for (const v of values) {
    const b = new rc.CircuitBreaker({ kind: 'consecutive', failureThreshold: 1, permittedNumberOfCallsInHalfOpenState: 1 });
    b.transitionTo('open'); // closed → half_open is not in resilience4j's table
    b.transitionTo('half_open');
    let got = Symbol('none');
    try {
      await b.execute(() => {
        throw v;
      });
    } catch (e) {
      got = e;
    }
    assert.ok(Object.is(got, v), `rethrown as is: ${typeof v}`);
    // The trial permit was recorded (a transition) or released (the next trial is admitted).
    assert.ok(b.state !== 'half_open' || b.tryAcquire() >= 0, `permit returned for ${typeof v}`);
  }
  // A plain object is a failure with its fields: {code: 'ECONNRESET'} counts as a failure.
  const b = new rc.CircuitBreaker({ kind: 'consecutive', failureThreshold: 1 });
  await assert.rejects(b.execute(() => Promise.reject({ code: 'ECONNRESET' })), (e) => e.code === 'ECONNRESET');
  assert.equal(b.state, 'open');
  // Policy execute classifies it too (a reset is retried for an idempotent call).
  let calls = 0;
  const p = new rc.RetryPolicy({ maxAttempts: 2, initial: 0, jitter: 'none' });
  const thrown = { code: 'ECONNRESET' };
  await assert.rejects(
    p.execute(() => {
      calls++;
      throw thrown;
    }, { idempotent: true }),
    (e) => e instanceof rc.RetryError && e.cause === thrown,
  );
  assert.equal(calls, 2);
});

test('item 8: finished sessions give their slot back; abandoned ones do not hold budget slots past their lease', () => {
  const budget = new rc.Budget({ kind: 'concurrency', ratio: 0, minConcurrency: 2 });
  const p = new rc.RetryPolicy({ maxAttempts: 3, initial: 10, jitter: 'none', budget });
  // Finished sessions are freed at once, and still answer key and status.
  const done = [];
  for (let i = 0; i < 20_000; i++) {
    const s = p.session({ key: `k${i}`, method: 'GET' });
    s.beforeAttempt(i);
    s.onSuccess(i);
    if (i % 1000 === 0) done.push([s, `k${i}`]);
  }
  for (const [s, k] of done) {
    assert.equal(s.key, k);
    assert.equal(s.status().done, true);
    s.release();
    assert.throws(() => s.key, (e) => e.code === 'invalid_state');
  }
  assert.deepEqual(budget.level(0), { calls: 0, retries: 0 });
  // Cancel and give-up release the retry slot.
  const c = p.session({ method: 'GET' });
  c.beforeAttempt(0);
  assert.equal(c.onFailure(503, 1).action, 'retry');
  assert.equal(budget.level(1).retries, 1);
  c.cancel(2);
  assert.equal(budget.level(2).retries, 0);

  // 10 000 sessions abandoned mid-retry (still referenced: no GC): once their
  // lease has passed (the core's, issue 22 item 8), later retries are not
  // refused with budget_exhausted.
  const keep = [];
  for (let i = 0; i < 10_000; i++) {
    const s = p.session({ method: 'GET' });
    s.beforeAttempt(0);
    s.onFailure(503, 1);
    keep.push(s);
  }
  const later = 10 * 24 * HOUR;
  let refused = 0;
  for (let i = 0; i < 100; i++) {
    const s = p.session({ method: 'GET' });
    s.beforeAttempt(later + i);
    const d = s.onFailure(503, later + i);
    if (d.action === 'give_up' && d.reason === 'budget_exhausted') refused++;
    s.cancel(later + i);
  }
  assert.equal(refused, 0, `${refused} of 100 later retries refused with budget_exhausted after the leases ended`);
  assert.equal(keep.length, 10_000);
});

test('item 9: strings with lone surrogates are refused with invalid_string, naming the field', async () => {
  const p = new rc.RetryPolicy();
  for (const [what, f, field] of [
    ['session key', () => p.session({ key: 'k\ud800' }), 'key'],
    ['session method', () => p.session({ method: 'G\udc00T' }), 'method'],
    ['fingerprint method', () => rc.fingerprint({}, { method: '\ud800', path: '/' }), 'method'],
    ['fingerprint path', () => rc.fingerprint({}, { method: 'GET', path: '/\udfff' }), 'path'],
    ['fingerprint operation', () => rc.fingerprint({}, { operation: 'op\ud800' }), 'operation'],
    ['validateKey', () => rc.validateKey('a\ud800'), 'key'],
    ['deriveKey', () => rc.deriveKey('a', 'b\udc00'), 'parts[1]'],
    ['scopedKey tenant', () => rc.scopedKey('t\ud800', 'k'), 'tenant'],
    ['header value', () => rc.classify({ status: 503, headers: [['retry-after', '1\ud800']] }), 'headers'],
    ['header name', () => rc.readServerAdvice({ 'retry\udc00after': '1' }), 'headers'],
    ['failure method', () => rc.classify({ status: 503, method: 'P\ud800' }), 'method'],
    ['decideRecord key', () => rc.decideRecord(null, 'k\ud800', 'f'.repeat(64), 0), 'key'],
    ['policy document text', () => rc.RetryPolicy.fromJSON('{"name": "\ud800"}'), ''],
    ['transitionTo', () => new rc.CircuitBreaker().transitionTo('open\ud800'), 'state'],
  ]) {
    rejects(what, f, RangeError, 'invalid_string', field);
  }
  await assert.rejects(p.execute(() => 1, { method: 'GET\ud800' }), (e) => e instanceof RangeError && e.code === 'invalid_string' && e.field === 'method');
  // Well-formed pairs are not refused as strings (the key rules decide).
  assert.equal(rc.fingerprint({}, { method: 'GET', path: '/\ud83d\ude00' }).length, 64);
  rejects('emoji key', () => rc.validateKey('\ud83d\ude00'), rc.IdempotencyError, 'invalid_key');
});

test('item 13: every numeric argument is range-checked, never wrapped by ToUint32', () => {
  const b = new rc.Budget({ kind: 'token_bucket', capacity: 10 });
  const before = b.level(0);
  for (const bad of [-1, NaN, 0.5, 2 ** 32, Infinity, -Infinity, 2 ** 53, 1e308]) {
    rejects(`recordSuccess cost ${bad}`, () => b.recordSuccess(0, bad), RangeError, 'out_of_range', 'cost');
  }
  assert.deepEqual(b.level(0), before, 'no refill from a refused cost');
  const p = new rc.RetryPolicy();
  for (const bad of [-1, NaN, 0.5, 2 ** 32, 1e308]) {
    rejects(`sampleDelays count ${bad}`, () => p.sampleDelays(1, bad), RangeError, 'out_of_range', 'count');
    rejects(`testing attempts ${bad}`, () => p.testing(bad), RangeError, 'out_of_range');
    // Retry numbers past 2^32 saturate (docs/backoff.md); below 1 or fractional they are refused.
    if (!(bad >= 2 ** 32)) rejects(`delay retry ${bad}`, () => p.delay(bad, 0.5), RangeError, 'out_of_range');
    // A maximum key length is any whole number below 2^64, as in Python (issue 14): 2^32 is taken whole.
    if (bad !== 2 ** 32) rejects(`storageKey max ${bad}`, () => rc.storageKey('k', bad), RangeError, 'out_of_range');
    if (bad !== 2 ** 32) rejects(`validateKey max ${bad}`, () => rc.validateKey('k', bad), RangeError, 'out_of_range');
    rejects(`record outcome ${bad}`, () => new rc.CircuitBreaker().record(0, bad), RangeError, 'invalid_value', 'outcome');
    if (bad !== 2 ** 32) rejects(`formatRfc3339 ${bad}`, () => rc.formatRfc3339(bad), RangeError, 'out_of_range');
  }
});

test('item 17: a now or wallNow past 2**64 ns is invalid_time, never a saturated clock', () => {
  const b = new rc.CircuitBreaker();
  const u = new rc.Budget({ kind: 'token_bucket' });
  const s = new rc.RetryPolicy().session();
  for (const bad of [1e308, 2 ** 64, Infinity, 18_446_744_073_709.6]) {
    rejects(`tryAcquire ${bad}`, () => b.tryAcquire(bad), RangeError, 'invalid_time', 'now');
    rejects(`remainingOpen ${bad}`, () => b.remainingOpen(bad), RangeError, 'invalid_time', 'now');
    rejects(`transitionTo ${bad}`, () => b.transitionTo('open', bad), RangeError, 'invalid_time', 'now');
    rejects(`budget start ${bad}`, () => u.start(bad), RangeError, 'invalid_time', 'now');
    rejects(`budget tryWithdraw ${bad}`, () => u.tryWithdraw('server_error', bad), RangeError, 'invalid_time', 'now');
    rejects(`session beforeAttempt ${bad}`, () => s.beforeAttempt(bad), RangeError, 'invalid_time', 'now');
    rejects(`snapshot wallNowMs ${bad}`, () => b.snapshot(0, bad), RangeError, 'invalid_time', 'wallNowMs');
    rejects(`readServerAdvice wallNowMs ${bad}`, () => rc.readServerAdvice({ 'retry-after': '1' }, bad), RangeError, 'invalid_time', 'wallNowMs');
    rejects(`decideRecord nowMs ${bad}`, () => rc.decideRecord(null, 'k', 'f'.repeat(64), bad), RangeError, 'invalid_time');
  }
  // The breaker's clock was not pinned: it still opens and waits.
  assert.equal(b.state, 'closed');
  assert.ok(b.tryAcquire(5) >= 0);
});

test('item 18: null option bags, null signals, revoked proxies, nested and null-prototype headers give coded errors; a bare number is a status', async () => {
  const p = new rc.RetryPolicy({ maxAttempts: 1 });
  assert.equal(await p.execute(() => 'ok', { signal: null }), 'ok');
  assert.equal(await new rc.CircuitBreaker().execute(() => 'ok', { signal: null }), 'ok');
  assert.equal(await new rc.CircuitBreaker().execute(() => 'ok', null), 'ok');
  const u = new rc.Budget({ kind: 'token_bucket' });
  assert.equal(u.check('server_error', 0, null), null);
  u.recordFailure('server_error', 0, null);
  assert.ok(p.session(null));
  assert.equal(rc.classify(503, null).category, 'server_error');
  for (const [what, f] of [
    ['revoked options', () => new rc.RetryPolicy(revoked)],
    ['revoked breaker options', () => new rc.CircuitBreaker(revoked)],
    ['revoked session options', () => p.session(revoked)],
    ['revoked fingerprint options', () => rc.fingerprint({}, revoked)],
    ['revoked failure', () => rc.classify({ status: 503, headers: revoked })],
    ['revoked body', () => rc.fingerprint({ a: revoked }, { operation: 'x' })],
    ['revoked draws', () => p.replayDelays(revoked)],
    ['throwing options', () => new rc.Budget(throwing)],
    ['throwing option value', () => new rc.RetryPolicy({ breaker: throwing })],
    ['nested header arrays', () => rc.classify({ status: 503, headers: [['retry-after', deep(100_000)]] })],
    ['nested header object', () => rc.classify({ status: 503, headers: { 'retry-after': deep(100_000) } })],
    ['null-prototype header value', () => rc.classify({ status: 503, headers: { 'retry-after': Object.create(null) } })],
    ['symbol header value', () => rc.readServerAdvice([['retry-after', Symbol('s')]])],
    ['throwing toString header', () => rc.readServerAdvice({ 'retry-after': { toString() { throw new Error('no'); } } })],
    ['revoked signal', () => new rc.CircuitBreaker().execute(() => 1, { signal: revoked })],
  ]) {
    let err;
    try {
      const r = f();
      if (r && typeof r.then === 'function') await r;
    } catch (e) {
      err = e;
    }
    assert.ok(err instanceof TypeError || err instanceof RangeError, `${what}: ${err && err.message}`);
    assert.ok(rc.isRetrycoreError(err) && typeof err.code === 'string' && typeof err.field === 'string', `${what}: no code (${err && err.message})`);
  }
  await assert.rejects(p.execute(() => 1, { signal: revoked }), (e) => e instanceof TypeError && e.code === 'invalid_type' && e.field === 'signal');
  // session.onFailure(503) reads a status.
  const s = new rc.RetryPolicy({ maxAttempts: 3 }).session({ method: 'GET' });
  s.beforeAttempt(0);
  const d = s.onFailure(503, 1);
  assert.equal(d.action, 'retry');
  assert.equal(d.category, 'server_error');
});

test('item 19: one document limit everywhere, from the core; a 10**6-member object is refused fast', () => {
  const big = JSON.stringify({ name: 'x'.repeat(1 << 20) });
  rejects('CircuitBreaker.fromJSON', () => rc.CircuitBreaker.fromJSON(big), RangeError, 'too_large');
  rejects('Budget.fromJSON', () => rc.Budget.fromJSON(JSON.stringify({ kind: 'token_bucket', name: 'x'.repeat(1 << 20) })), RangeError, 'too_large');
  // A snapshot has its own, larger limit (max_snapshot_bytes): a busy 100 000-second window is ~5 MB.
  rejects('restore', () => new rc.CircuitBreaker().restore(' '.repeat(rc.hostTables().limits.max_snapshot_bytes + 1)), RangeError, 'too_large');
  rejects('RetryPolicy.fromJSON', () => rc.RetryPolicy.fromJSON(big), RangeError, 'too_large');
  const parts = [];
  for (let i = 0; i < 1_000_000; i++) parts.push(`"k${i}":${i}`);
  const text = `{${parts.join(',')}}`;
  let t0 = Date.now();
  rejects('breaker text of 10^6 members', () => rc.CircuitBreaker.fromJSON(text), RangeError, 'too_large');
  rejects('budget text of 10^6 members', () => rc.Budget.fromJSON(text), RangeError, 'too_large');
  assert.ok(Date.now() - t0 < 1500, `text refused in ${Date.now() - t0} ms`);
  // As an object, the count is checked before any member is converted (the
  // engine's own key enumeration, ~1 s for 10^6 members, is the floor).
  const members = JSON.parse(text);
  t0 = Date.now();
  rejects('breaker object of 10^6 members', () => rc.CircuitBreaker.fromJSON(members), RangeError, 'too_large');
  assert.ok(Date.now() - t0 < 5000, `object refused in ${Date.now() - t0} ms`);
});

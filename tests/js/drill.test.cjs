'use strict';
// The fault drill (issue 10, item 5) for the JS packages — napi (RETRYCORE_IMPL=node)
// and wasm (RETRYCORE_IMPL=wasm): real fetch over loopback against
// tests/drill/server.py, which injects resets (before and after the work),
// timeouts, 503 + Retry-After and slow answers by a seeded script, and
// deduplicates keyed requests with retrycore's own record decisions.
//
//   (a) a POST without a declared key is repeated only after 503 + Retry-After
//       (nothing ran); never after a reset or a timeout;
//   (b) a POST with a key the server deduplicates on is retried through every
//       fault and runs exactly once;
//   (c) a breaker opens on an outage, fails fast without reaching the server,
//       and closes again after the outage.
//
// The invariants are checked by the referee (tests/drill/referee.py), the same
// for every runtime; the counts are printed and recorded in docs/drills.md.
const { describe, test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { loadImpl, pythonOrSkip, startServer, pool } = require('../drill/harness.cjs');

const { rc, which, skip: implSkip } = loadImpl();
const { python, skip: pySkip } = implSkip ? { python: null, skip: null } : pythonOrSkip();
const skip = implSkip || pySkip || false;

describe(`fault drill (${which})`, { skip }, () => {
  let drill;
  before(async () => {
    drill = await startServer(python);
  });
  after(async () => {
    await drill?.stop();
  });

  const report = (t, title, counts) => {
    const line = `[drill ${which}] ${title}: ${JSON.stringify(counts, Object.keys(flatKeys(counts)).sort())}`;
    t.diagnostic(line);
    if (process.env.RETRYCORE_DRILL_VERBOSE) console.log(line);
  };

  /** One attempt: POST /work with fetch, its own AbortSignal.timeout. */
  async function postWork(op, key, forced) {
    const headers = { 'content-type': 'application/json' };
    if (key !== undefined) headers['idempotency-key'] = rc.formatIdempotencyHeader(key);
    if (forced !== undefined) headers['x-drill-fault'] = forced;
    const res = await fetch(`${drill.base}/work`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ op }),
      signal: AbortSignal.timeout(drill.plan.attempt_timeout_ms),
    });
    await res.arrayBuffer(); // read the body within the attempt; a non-ok Response goes back to execute
    return res;
  }

  async function runPhase(phase) {
    const keyed = phase === 'b';
    const policy = rc.RetryPolicy.fromJSON(drill.plan.policies[phase]);
    const keys = new Map();
    const opOfKey = new Map();
    for (const op of drill.plan.ops[phase]) {
      const k = rc.deriveKey('drill', op, which);
      keys.set(op, k);
      opOfKey.set(k, op);
    }
    const retries = new Map();
    policy.onRetry = (info) => {
      const op = opOfKey.get(info.key);
      retries.set(op, (retries.get(op) ?? 0) + 1);
    };
    const outcomes = {};
    await pool(drill.plan.ops[phase], drill.plan.concurrency, async (op) => {
      let out;
      try {
        const res = await policy.execute(
          (ctx) => {
            assert.equal(ctx.key, keys.get(op)); // the same key on every attempt
            return postWork(op, keyed ? ctx.key : undefined);
          },
          keyed ? { method: 'POST', idempotencyKeySent: true, key: keys.get(op) } : { method: 'POST', key: keys.get(op) },
        );
        // A response nothing would retry comes back as is: the referee sees its status.
        out = { ok: res.ok, status: res.status };
        if (!res.ok) out = { ok: false, error: `HTTP ${res.status}`, reason: null, category: rc.classify(res.status).category };
      } catch (e) {
        out = e instanceof rc.RetryError
          ? { ok: false, error: 'RetryError', reason: e.reason, category: e.category }
          : { ok: false, error: e?.name ?? String(e), reason: null, category: rc.classify(e, { method: 'POST' }).category };
      }
      out.retries = retries.get(op) ?? 0;
      outcomes[op] = out;
    });
    return { outcomes, keys };
  }

  test('(a) a POST without a key is never repeated after an ambiguous failure', async (t) => {
    // What the classification says, asserted so the drill's expectations are the documented ones.
    const post = { method: 'POST' };
    assert.equal(rc.classify({ status: 503, headers: { 'retry-after': '0' }, method: 'POST' }).retry, 'always');
    const reset = new TypeError('fetch failed', { cause: Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }) });
    assert.equal(rc.classify(reset, post).retryable, false);
    assert.equal(rc.classify(new DOMException('timed out', 'TimeoutError'), post).retryable, false);
    const t0 = performance.now();
    const { outcomes } = await runPhase('a');
    const v = await drill.post('/verdict', { phase: 'a', outcomes });
    report(t, `(a) POST without a key, ${((performance.now() - t0) / 1000).toFixed(1)}s`, v.counts);
    assert.deepEqual(v.violations, []);
    assert.deepEqual(Object.keys(v.counts.retries_by_fault), ['503']);
    for (const k of ['503', 'reset_after', 'reset_before', 'timeout']) assert.ok(k in v.counts.final_failure_by_fault, k);
    // What a JS client sees: not retried, so the failure itself, unwrapped (docs/sessions.md, "What the caller observes").
    for (const o of Object.values(outcomes)) if (!o.ok && o.category !== 'overloaded') assert.ok(o.error !== 'RetryError' && o.reason === null, JSON.stringify(o));
  });

  test('(b) a POST with a key runs exactly once', async (t) => {
    const t0 = performance.now();
    const { outcomes, keys } = await runPhase('b');
    const v = await drill.post('/verdict', { phase: 'b', outcomes });
    report(t, `(b) POST with a key, ${((performance.now() - t0) / 1000).toFixed(1)}s`, v.counts);
    assert.deepEqual(v.violations, []);
    for (const k of ['409_in_progress', '503', 'reset_after', 'reset_before', 'timeout']) assert.ok(k in v.counts.retries_by_fault, k);
    assert.equal(v.counts.succeeded + v.counts.failed, v.counts.operations);
    assert.ok(v.counts.failed > 0);
    // Nothing lost: each failed operation, sent once more with its key, runs or
    // replays — and still exactly once. (Forced OK: outside the seeded script.)
    const reconcile = rc.RetryPolicy.fromJSON({ ...drill.plan.policies.b, name: 'drill.reconcile' });
    const failed = Object.keys(outcomes).filter((op) => !outcomes[op].ok);
    for (const op of failed) {
      const res = await reconcile.execute((ctx) => postWork(op, ctx.key, 'ok'), { method: 'POST', idempotencyKeySent: true, key: keys.get(op) });
      assert.equal(res.status, 200);
    }
    const final = await drill.post('/verdict', { phase: 'b-final' });
    report(t, `(b) after re-sending the ${failed.length} failed operations`, final.counts);
    assert.deepEqual(final.violations, []);
    assert.equal(final.counts.executions, final.counts.operations);
  });

  test('(c) the breaker opens, fails fast and recovers', async (t) => {
    const bp = drill.plan.breaker;
    const policy = rc.RetryPolicy.fromJSON(drill.plan.policies.c);
    const transitions = [];
    policy.onStateChange = (tr) => transitions.push([tr.from, tr.to]);
    const get = (op) =>
      policy.execute(
        async () => {
          const res = await fetch(`${drill.base}/breaker?op=${op}`, { signal: AbortSignal.timeout(drill.plan.attempt_timeout_ms) });
          await res.arrayBuffer();
          return res;
        },
        { method: 'GET' },
      );
    const outcome = async (op) => {
      try {
        return (await get(op)).status;
      } catch (e) {
        if (e instanceof rc.RetryError || e instanceof rc.CircuitOpenError) return e;
        throw e;
      }
    };
    const breakerRequests = async () => (await drill.get('/stats')).breaker.requests;

    await drill.post('/outage', { on: true });
    const first = await outcome('c-1');
    const second = await outcome('c-2');
    assert.ok(first instanceof rc.RetryError && first.reason === 'attempts_exhausted', String(first));
    assert.ok(second instanceof rc.RetryError && second.reason === 'breaker_open', String(second));
    assert.equal(policy.breaker.state, 'open');
    const during = await breakerRequests();
    assert.equal(during, bp.expected.outage_requests);
    const refused = [];
    for (let i = 0; i < bp.refused_calls; i++) refused.push(await outcome(`c-refused-${i}`));
    assert.ok(refused.every((e) => e instanceof rc.CircuitOpenError), String(refused));
    assert.equal(await breakerRequests(), during); // failed fast: not one request reached the server
    await drill.post('/outage', { on: false });
    const wait = Math.max(...refused.map((e) => e.retryAfter));
    await new Promise((r) => setTimeout(r, wait + 50));
    const afterRecovery = [];
    for (let i = 0; i < 2 + bp.calls_after; i++) afterRecovery.push(await outcome(`c-after-${i}`));
    assert.deepEqual(afterRecovery, afterRecovery.map(() => 200));
    assert.equal(policy.breaker.state, 'closed');
    assert.deepEqual(transitions, bp.expected.transitions);
    const total = await breakerRequests();
    assert.equal(total, during + afterRecovery.length);
    report(t, '(c) breaker', {
      outage_requests: during,
      retry_errors: { [first.reason]: 1, [second.reason]: 1 },
      circuit_open_errors: refused.length,
      requests_while_open: 0,
      calls_after_recovery: afterRecovery.length,
      requests_total: total,
      transitions: transitions.map(([a, b]) => `${a}->${b}`),
    });
  });
});

/** Every key at any depth, for a JSON.stringify replacer list that sorts keys. */
function flatKeys(o, acc = {}) {
  if (o && typeof o === 'object' && !Array.isArray(o)) for (const [k, v] of Object.entries(o)) {
    acc[k] = true;
    flatKeys(v, acc);
  }
  return acc;
}

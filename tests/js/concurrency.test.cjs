'use strict';
// Worker threads (issue 10, item 4), for the napi package (RETRYCORE_IMPL=node)
// and the wasm package (RETRYCORE_IMPL=wasm).
//
// Neither JS package can share a live breaker or budget between worker
// threads: a CircuitBreaker / Budget is an object of one JS realm (the napi
// addon's native object belongs to one Node environment; each worker loads its
// own wasm instance), and structured cloning does not carry it. Each thread
// owns its objects — the documented design — and state crosses threads only as
// a snapshot (`snapshot` / `restore`), which the last test exercises.
//
// So: 4 workers each own a breaker and a budget and hammer them (100 000
// acquire/record and 100 000 withdraw/deposit steps each, with explicit
// monotonic times so every run is deterministic) while the main thread runs
// the same sequences as the reference. Every count, every transition (with its
// time) and the final levels must be identical; the hook must see exactly the
// transitions the breaker counted; errors thrown inside a worker must be that
// worker's own typed errors; and everything must finish (no deadlock).
const { isMainThread, Worker, workerData, parentPort } = require('node:worker_threads');
const { loadImpl } = require('../drill/harness.cjs');

const WORKERS = 4;
const STEPS = 100_000;

/** One owner's run: deterministic for a seed. */
function hammer(rc, seed, steps) {
  const transitions = [];
  const breaker = new rc.CircuitBreaker({
    kind: 'count_based',
    minimumNumberOfCalls: 10,
    slidingWindowSize: 20,
    failureRateThreshold: 50,
    waitDurationInOpenState: 5,
    permittedNumberOfCallsInHalfOpenState: 3,
    onStateChange: (t) => transitions.push(`${t.from}>${t.to}@${t.at}`),
  });
  const budget = new rc.Budget({ kind: 'token_bucket' });
  let x = seed >>> 0;
  let permitted = 0, rejected = 0, recordedTransitions = 0, withdrawn = 0, refused = 0, deposits = 0, typedErrors = 0;
  let now = 0;
  for (let i = 0; i < steps; i++) {
    now = i * 0.25; // ms
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    const r = x >>> 24; // 0..255
    // Breaker: outages of 300 steps in every 1000 (90 % failures), else 8 %.
    const p = breaker.tryAcquire(now);
    if (p >= 0) {
      permitted++;
      const failing = i % 1000 < 300 ? r < 230 : r < 20;
      if (breaker.record(p, failing ? 'failure' : 'success', 0, now)) recordedTransitions++;
    } else {
      rejected++;
    }
    // Budget: a retry (withdraw 5) half of the time, else a success (+1, capped).
    if ((x & 0xff) < 128) {
      if (budget.tryWithdraw('server_error', now)) withdrawn++;
      else refused++;
    } else {
      budget.recordSuccess(now);
      deposits++;
    }
    // Errors made inside this thread are this thread's typed errors.
    if (i % 10_000 === 0) {
      try {
        breaker.record(-5, 'success', 0, now);
      } catch (e) {
        if (e instanceof RangeError && e.code === 'out_of_range' && rc.isRetrycoreError(e)) typedErrors++;
      }
    }
  }
  return {
    permitted,
    rejected,
    recordedTransitions,
    withdrawn,
    refused,
    deposits,
    typedErrors,
    transitions,
    metrics: breaker.metrics(),
    stats: budget.stats(),
    level: budget.level(now),
  };
}

if (!isMainThread) {
  const { rc } = loadImpl(); // the same RETRYCORE_IMPL as the main thread (env is inherited)
  if (workerData.kind === 'hammer') {
    parentPort.postMessage(hammer(rc, workerData.seed, workerData.steps));
  } else if (workerData.kind === 'restore') {
    const b = new rc.CircuitBreaker(workerData.options);
    b.restore(workerData.snapshot, 0, workerData.wallNowMs);
    parentPort.postMessage({ state: b.state, remaining: b.remainingOpen(0), refused: b.tryAcquire(0) < 0 });
  }
} else {
  const { describe, test } = require('node:test');
  const assert = require('node:assert/strict');
  const { rc, which, skip } = loadImpl();

  const runWorker = (data, timeoutMs = 60_000) =>
    new Promise((resolve, reject) => {
      const w = new Worker(__filename, { workerData: data });
      const timer = setTimeout(() => {
        w.terminate();
        reject(new Error(`deadlock? worker ${JSON.stringify(data)} did not finish in ${timeoutMs} ms`));
      }, timeoutMs);
      w.once('message', (m) => {
        clearTimeout(timer);
        resolve(m);
      });
      w.once('error', (e) => {
        clearTimeout(timer);
        reject(e);
      });
      w.once('exit', (code) => {
        clearTimeout(timer);
        if (code !== 0) reject(new Error(`worker exited with ${code}`));
      });
    });

  describe(`worker threads (${which})`, { skip: skip || false }, () => {
    test(`${WORKERS} workers × ${STEPS} steps, each owning a breaker and a budget: exact, deterministic, no lost transition`, { timeout: 120_000 }, async (t) => {
      const seeds = Array.from({ length: WORKERS }, (_, k) => 0x9e3779b9 ^ (k * 7919));
      const t0 = performance.now();
      const running = seeds.map((seed) => runWorker({ kind: 'hammer', seed, steps: STEPS }));
      // Meanwhile the main thread computes the reference, contending for the same cores and addon.
      const reference = seeds.map((seed) => hammer(rc, seed, STEPS));
      const results = await Promise.all(running);
      const ms = performance.now() - t0;
      const totals = { steps: 0, permitted: 0, rejected: 0, transitions: 0, withdrawn: 0, refused: 0, deposits: 0 };
      results.forEach((r, k) => {
        const ref = reference[k];
        assert.deepEqual(r, ref, `worker ${k} differs from the main thread's run of the same sequence`);
        // Exact counts against the breaker's and the budget's own counters.
        assert.equal(r.permitted + r.rejected, STEPS);
        assert.equal(r.metrics.rejections, r.rejected);
        assert.equal(r.transitions.length, r.metrics.transitions, 'the hook saw every transition the breaker counted');
        assert.ok(r.recordedTransitions <= r.transitions.length);
        assert.equal(r.stats.withdrawals, r.withdrawn);
        assert.equal(r.stats.refusals, r.refused);
        assert.equal(r.withdrawn + r.refused + r.deposits, STEPS);
        assert.equal(r.typedErrors, STEPS / 10_000);
        // The transitions form one chain from closed, ending in the final state.
        let state = 'closed';
        for (const tr of r.transitions) {
          const [from, to] = tr.split('@')[0].split('>');
          assert.equal(from, state, `a transition was lost before ${tr}`);
          state = to;
        }
        assert.equal(state, r.metrics.state);
        assert.ok(r.transitions.length > 100 && r.refused > 0 && r.rejected > 0, 'the run exercised opening and refusals');
        totals.steps += STEPS;
        totals.permitted += r.permitted;
        totals.rejected += r.rejected;
        totals.transitions += r.transitions.length;
        totals.withdrawn += r.withdrawn;
        totals.refused += r.refused;
        totals.deposits += r.deposits;
      });
      t.diagnostic(`[concurrency ${which}] ${JSON.stringify(totals)} in ${(ms / 1000).toFixed(2)}s`);
    });

    test('a live breaker is not shared across threads; its state crosses as a snapshot', { timeout: 60_000 }, async () => {
      const options = { kind: 'consecutive', failureThreshold: 2, waitDurationInOpenState: 60_000 };
      const b = new rc.CircuitBreaker(options);
      for (let i = 0; i < 2; i++) b.record(b.tryAcquire(0), 'failure', 0, 0);
      assert.equal(b.state, 'open');
      // Structured cloning (what postMessage does) does not carry a breaker.
      assert.ok(!(structuredClone(b) instanceof rc.CircuitBreaker));
      const wallNowMs = Date.now();
      const snapshot = b.snapshot(1000, wallNowMs);
      const got = await runWorker({ kind: 'restore', options, snapshot, wallNowMs });
      assert.equal(got.state, 'open');
      assert.equal(got.refused, true);
      assert.equal(got.remaining, b.remainingOpen(1000)); // the same 59 s left, resolved against the worker's now
    });
  });
}

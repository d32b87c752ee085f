// The rows of issue 17's table ("Node and wasm hot paths ahead of cockatiel"),
// shared by bindings-node/bench/bench.mjs (napi) and bindings-wasm/bench/bench.mjs
// (wasm and napi): every implementation and every peer runs in the same process
// and the same rounds — each round times every row once, in order, so a slow
// spell on the machine lands on all rows alike — and a row's figure is the
// median of its rounds, in ns per operation.
//
// The peers come in as arguments (each bench package pins its own copies):
// cockatiel 3.2.1, opossum 9.0.0, fast-json-stable-stringify 2.1.0, and
// optionally p-retry 7.1.1; sha256 is node:crypto's.
import { createHash } from 'node:crypto';
import { QUICK, fmt } from './harness.mjs';

export const ROUNDS = QUICK ? 5 : 15;
// Each row's n is calibrated so that one round of it takes about this long.
const ROUND_NS = QUICK ? 5e6 : 40e6;

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

async function timeRun(row, n) {
  const { fn } = row;
  const t0 = process.hrtime.bigint();
  if (row.async) for (let i = 0; i < n; i++) await fn(i);
  else for (let i = 0; i < n; i++) fn(i);
  return Number(process.hrtime.bigint() - t0) / n;
}

/**
 * impls: [['napi', retrycorePackage], ['wasm', retrycoreWasmPackage], ...]
 * peers: { cockatiel, Opossum, stableStringify, pRetry? }
 * Returns the rows with their medians; prints the table.
 */
export async function runIssue17(impls, peers) {
  const { cockatiel, Opossum, stableStringify, pRetry } = peers;
  const rows = []; // { op, who, async, fn, n, samples }
  const add = (op, who, fn, async = false) => rows.push({ op, who, fn, async, samples: [] });
  let sink = 0;

  const ok = () => 1;
  // One error object, made once: the rows measure reading it, not capturing a stack.
  const reset = Object.assign(new Error('reset'), { code: 'ECONNRESET' });
  const fail = () => {
    throw reset;
  };
  const swallow = () => {};
  const body = { amount: 1000, currency: 'usd', customer: 'cus_42', items: [{ sku: 'a', qty: 2 }] };
  const fpOpts = { method: 'POST', path: '/v1/charges' };

  // ---- execute(fn), ok first try
  for (const [who, rc] of impls) {
    const p = new rc.RetryPolicy({ maxAttempts: 3 });
    add('execute(fn), ok first try', who, () => p.execute(ok), true);
  }
  const cockRetry = cockatiel.retry(cockatiel.handleAll, { maxAttempts: 2, backoff: new cockatiel.ExponentialBackoff() });
  add('execute(fn), ok first try', 'cockatiel retry(handleAll).execute', () => cockRetry.execute(ok), true);
  if (pRetry) add('execute(fn), ok first try', 'p-retry pRetry(fn, {retries: 2})', () => pRetry(ok, { retries: 2 }), true);

  // ---- breaker-guarded success
  for (const [who, rc] of impls) {
    const b = new rc.CircuitBreaker({ kind: 'consecutive', failureThreshold: 5 });
    add('breaker-guarded success (consecutive)', who, () => b.execute(ok), true);
  }
  const cockCons = cockatiel.circuitBreaker(cockatiel.handleAll, { halfOpenAfter: 10_000, breaker: new cockatiel.ConsecutiveBreaker(5) });
  add('breaker-guarded success (consecutive)', 'cockatiel ConsecutiveBreaker(5)', () => cockCons.execute(ok), true);
  for (const [who, rc] of impls) {
    const b = new rc.CircuitBreaker();
    add('breaker-guarded success (default count_based)', who, () => b.execute(ok), true);
  }
  const cockSamp = cockatiel.circuitBreaker(cockatiel.handleAll, { halfOpenAfter: 10_000, breaker: new cockatiel.SamplingBreaker({ threshold: 0.5, duration: 10_000 }) });
  add('breaker-guarded success (default count_based)', 'cockatiel SamplingBreaker', () => cockSamp.execute(ok), true);
  const opoOk = new Opossum(async () => 1, { timeout: false, errorThresholdPercentage: 50, resetTimeout: 30_000 });
  add('breaker-guarded success (default count_based)', 'opossum fire()', () => opoOk.fire(), true);

  // ---- breaker-guarded failing call that stays closed (a threshold never reached)
  for (const [who, rc] of impls) {
    const b = new rc.CircuitBreaker({ kind: 'consecutive', failureThreshold: 2 ** 31 - 1 });
    add('breaker-guarded failing call (stays closed)', who, () => b.execute(fail).catch(swallow), true);
  }
  const cockFail = cockatiel.circuitBreaker(cockatiel.handleAll, { halfOpenAfter: 10_000, breaker: new cockatiel.ConsecutiveBreaker(2 ** 31 - 1) });
  add('breaker-guarded failing call (stays closed)', 'cockatiel ConsecutiveBreaker(2^31-1)', () => cockFail.execute(fail).catch(swallow), true);
  const opoFail = new Opossum(async () => fail(), { timeout: false, errorThresholdPercentage: 101, volumeThreshold: 1e9, resetTimeout: 30_000 });
  opoFail.on('failure', swallow);
  add('breaker-guarded failing call (stays closed)', 'opossum fire() failing', () => opoFail.fire().catch(swallow), true);

  // ---- call rejected by an open breaker
  const toClose = [opoFail, opoOk];
  for (const [who, rc] of impls) {
    const b = new rc.CircuitBreaker({ kind: 'consecutive', failureThreshold: 1, waitDurationInOpenState: '1h' });
    await b.execute(fail).catch(swallow);
    if (b.state !== 'open') throw new Error(`${who}: the breaker did not open (${b.state})`);
    add('call rejected by an open breaker', who, () => b.execute(ok).catch(swallow), true);
  }
  const opoOpen = new Opossum(async () => 1, { timeout: false, resetTimeout: 3_600_000 });
  opoOpen.open();
  toClose.push(opoOpen);
  add('call rejected by an open breaker', 'opossum fire() while open', () => opoOpen.fire().catch(swallow), true);
  const cockOpen = cockatiel.circuitBreaker(cockatiel.handleAll, { halfOpenAfter: 3_600_000, breaker: new cockatiel.ConsecutiveBreaker(1) });
  await cockOpen.execute(fail).catch(swallow);
  add('call rejected by an open breaker', 'cockatiel ConsecutiveBreaker(1) while open', () => cockOpen.execute(ok).catch(swallow), true);

  // ---- classify(Error{code: 'ECONNRESET'}) and reading its names alone
  for (const [who, rc] of impls) add("classify(err), Error with code 'ECONNRESET'", who, () => { sink += rc.classify(reset).retryable ? 1 : 0; });
  for (const [who, rc] of impls) add("errorNames(err) alone, same Error", who, () => { sink += rc.errorNames(reset).length; });

  // ---- a session's retry step: beforeAttempt() + onFailure(err) -> retry
  // (idempotent, so ECONNRESET is retried; a session that gives up is replaced)
  for (const [who, rc] of impls) {
    const p = new rc.RetryPolicy({ maxAttempts: 1000, idempotent: true });
    let s = p.session();
    add('session beforeAttempt() + onFailure(err)', who, () => {
      s.beforeAttempt();
      if (s.onFailure(reset).action === 'give_up') s = p.session();
    });
  }

  // ---- one delay decision
  for (const [who, rc] of impls) {
    const p = new rc.RetryPolicy();
    add('delay(3, 0.5)', who, () => { sink += p.delay(3, 0.5); });
  }
  // cockatiel's backoffs are chains: the third delay is one next() from the second.
  const second = new cockatiel.ExponentialBackoff().next().next();
  add('delay(3, 0.5)', 'cockatiel ExponentialBackoff: third next().duration', () => { sink += second.next().duration; });

  // ---- fingerprint of a small object
  for (const [who, rc] of impls) add('fingerprint of a small object', who, () => { sink += rc.fingerprint(body, fpOpts).length; });
  add('fingerprint of a small object', 'fast-json-stable-stringify + sha256', () => {
    sink += createHash('sha256').update(`${fpOpts.method} ${fpOpts.path}\n`).update(stableStringify(body)).digest('hex').length;
  });

  // ---- warm up and calibrate each row, then the rounds
  for (const row of rows) {
    let n = 64;
    let per = await timeRun(row, n);
    while (per * n < 20e6 && n < 1e7) {
      n *= 4;
      per = await timeRun(row, n);
    }
    row.n = Math.max(100, Math.round(ROUND_NS / per));
  }
  for (let r = 0; r < ROUNDS; r++) for (const row of rows) row.samples.push(await timeRun(row, row.n));
  for (const o of toClose) o.shutdown();
  if (sink === 42) console.log('');

  console.log(`\n## issue 17: ns per operation, median of ${ROUNDS} rounds (every row in every round, same process)`);
  let op = null;
  for (const row of rows) {
    row.median = median(row.samples);
    if (row.op !== op) console.log(`\n${(op = row.op)}`);
    const spread = `${fmt(Math.min(...row.samples))} .. ${fmt(Math.max(...row.samples))}`;
    console.log(`  ${row.who.padEnd(56)} ${fmt(row.median).padStart(10)}   (min..max ${spread}, n=${row.n})`);
  }
  return rows;
}

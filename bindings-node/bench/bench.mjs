// Per-call costs of the retrycore Node binding, against the raw Node-API
// floor of the same signature and against pure-JS peers (cockatiel, opossum,
// p-retry, exponential-backoff). An hrtime loop, best of 7 runs, after warm-up.
//
//   make -C bindings-node bench          (BENCH_QUICK=1 for a short run)
//
// Issue 17's rows (bench/issue17.mjs: medians of 15 rounds, peers in the same
// rounds) run first; BENCH_ONLY=issue17 stops after them.
import { createRequire } from 'node:module';
import { QUICK, RUNS, createBench } from './harness.mjs';
import * as cockatiel from 'cockatiel';
import CircuitBreakerOpossum from 'opossum';
import pRetry from 'p-retry';
import { backOff } from 'exponential-backoff';
import stableStringify from 'fast-json-stable-stringify';
import { runIssue17 } from './issue17.mjs';

const require = createRequire(import.meta.url);
const rc = require('../index.cjs');
const N = require('../native.cjs');
const floor = N.floor();

console.log(`retrycore ${rc.coreVersion()} on Node ${process.version}`);
await runIssue17([['napi', rc]], { cockatiel, Opossum: CircuitBreakerOpossum, stableStringify, pRetry });
if (process.env.BENCH_ONLY === 'issue17') process.exit(0);

const { sync, async_, section, printRows } = createBench();
let sink = 0;
const ratio = (a, b) => `${(a / b).toFixed(2)}x`;

// ------------------------------------------------------------ decisions vs the floor

section('decisions vs the raw Node-API floor of the same signature (explicit now)');
const policy = new rc.RetryPolicy({ jitter: 'full' });
const nativePolicy = N.NativePolicy.fromJson('{}', '1');
nativePolicy.floorDelay = floor.delay;
const fDelay = sync('floor: method(number, number, number?) -> number', (i) => { sink += nativePolicy.floorDelay(1 + (i & 7), 0.5); });
const dDelay = sync('policy.delay(retry, r)', (i) => { sink += policy.delay(1 + (i & 7), 0.5); });

const fClass = sync('floor: fn(number, number) -> number', () => { sink += floor.classify(503, 0); });
const dClass = sync('classify(503) (cached verdict)', () => { sink += rc.classify(503).retryable ? 1 : 0; });

const breaker = new rc.CircuitBreaker({ kind: 'count_based', minimumNumberOfCalls: 100, failureRateThreshold: 100 });
const nb = new N.NativeBreaker('{}', false);
nb.floorAcquire = floor.acquire;
nb.floorRecord = floor.record;
const fBr = sync('floor: acquire(number) + record(number, number, number, number)', (i) => { const p = nb.floorAcquire(i); nb.floorRecord(p, 0, 1, i); });
const dBr = sync('breaker.tryAcquire(now) + record(p, Outcome.success, ms, now)', (i) => { const p = breaker.tryAcquire(i); breaker.record(p, 0, 1, i); });

const budget = new rc.Budget({ kind: 'token_bucket', capacity: 500, retryCost: 0 });
const nbu = new N.NativeBudget('{"kind":"token_bucket"}', false);
nbu.floorWithdraw = floor.withdraw;
const fBu = sync('floor: method(number, number) -> number', (i) => { sink += nbu.floorWithdraw(i, 5); });
const dBu = sync("budget.tryWithdraw('server_error', now)", (i) => { sink += budget.tryWithdraw('server_error', i) ? 1 : 0; });

const body = { amount: 1000, currency: 'usd', customer: 'cus_42', items: [{ sku: 'a', qty: 2 }] };
const bodyText = JSON.stringify(body);
const fFp = sync('floor: fn(string, string, string, undefined, bool) -> string(64)', () => { sink += floor.fingerprint('POST', '/v1/charges', bodyText, undefined, false).length; });
const dFp = sync('fingerprint(small object, {method, path})', () => { sink += rc.fingerprint(body, { method: 'POST', path: '/v1/charges' }).length; });

section('the same decisions with now omitted (performance.now() filled in)');
sync('breaker.tryAcquire() + record(p, 0)', () => { const p = breaker.tryAcquire(); breaker.record(p, 0); });
sync("budget.tryWithdraw('server_error')", () => { sink += budget.tryWithdraw('server_error') ? 1 : 0; });
sync('performance.now() alone', () => { sink += performance.now(); });

section('peers, synchronous decisions');
const expo = new cockatiel.ExponentialBackoff({ initialDelay: 100, maxDelay: 20_000 });
sync('cockatiel ExponentialBackoff.next(ctx).duration', () => { sink += expo.next({ attempt: 1 }).duration; });

// ------------------------------------------------------------ execute, success path

section('execute on a function that resolves at once (await per call)');
const ok = () => 1;
const exec = new RetryPolicy3();
function RetryPolicy3() {
  return new rc.RetryPolicy({ maxAttempts: 3 });
}
const eRc = await async_('retrycore policy.execute(fn)', () => exec.execute(ok));
const cockRetry = cockatiel.retry(cockatiel.handleAll, { maxAttempts: 2, backoff: new cockatiel.ExponentialBackoff() });
const eCock = await async_('cockatiel retry(handleAll).execute(fn)', () => cockRetry.execute(ok));
await async_('p-retry pRetry(fn, {retries: 2})', () => pRetry(ok, { retries: 2 }));
await async_('exponential-backoff backOff(fn)', () => backOff(ok, { numOfAttempts: 3 }));
await async_('baseline: await (async () => fn())()', async () => ok());

section('a breaker-guarded call, success path');
const brExec = new rc.CircuitBreaker({ kind: 'consecutive', failureThreshold: 5 });
const bRc = await async_('retrycore breaker.execute(fn) (consecutive)', () => brExec.execute(ok));
const cockCons = cockatiel.circuitBreaker(cockatiel.handleAll, { halfOpenAfter: 10_000, breaker: new cockatiel.ConsecutiveBreaker(5) });
const bCock = await async_('cockatiel ConsecutiveBreaker execute(fn)', () => cockCons.execute(ok));
const cockSamp = cockatiel.circuitBreaker(cockatiel.handleAll, { halfOpenAfter: 10_000, breaker: new cockatiel.SamplingBreaker({ threshold: 0.5, duration: 10_000 }) });
await async_('cockatiel SamplingBreaker execute(fn)', () => cockSamp.execute(ok));
const opo = new CircuitBreakerOpossum(async () => 1, { timeout: false, errorThresholdPercentage: 50, resetTimeout: 30_000 });
await async_('opossum fire()', () => opo.fire());

// ------------------------------------------------------------ failure path vs traffic

section('failure path after N calls in the window (constant cost wanted)');
for (const calls of [100, 10_000]) {
  const b = new rc.CircuitBreaker({ kind: 'time_based', slidingWindowSize: 60, minimumNumberOfCalls: 100_000, failureRateThreshold: 100 });
  for (let i = 0; i < calls; i++) b.record(b.tryAcquire(i * 0.001), 0, 1, i * 0.001);
  const t = calls * 0.001;
  sync(`retrycore record(failure) with ${calls} calls in the window`, () => { const p = b.tryAcquire(t); b.record(p, 1, 1, t); }, QUICK ? 2e4 : 2e5);
  const o = new CircuitBreakerOpossum(async () => { throw new Error('x'); }, { timeout: false, errorThresholdPercentage: 101, rollingCountTimeout: 60_000, volumeThreshold: 1e9 });
  o.on('failure', () => {});
  for (let i = 0; i < calls; i++) await o.fire().catch(() => {});
  await async_(`opossum fire() failing with ${calls} calls in the window`, () => o.fire().catch(() => {}), 200);
  o.shutdown();
}

// ------------------------------------------------------------ zero-delay retries

section('one zero-delay retry, then success (no timer wanted)');
const zero = new rc.RetryPolicy({ maxAttempts: 3 }).testing(3, 0);
const flaky = () => { let n = 0; return () => { if (n++ === 0) throw Object.assign(new Error('reset'), { code: 'ECONNREFUSED' }); return 1; }; };
await async_('retrycore testing(3, 0).execute(flaky)', () => zero.execute(flaky()), QUICK ? 2e3 : 2e4);
const cockZero = cockatiel.retry(cockatiel.handleAll, { maxAttempts: 2, backoff: new cockatiel.ConstantBackoff(0) });
await async_('cockatiel retry ConstantBackoff(0)', () => cockZero.execute(flaky()), QUICK ? 100 : 300);
await async_('exponential-backoff startingDelay 0', () => backOff(flaky(), { numOfAttempts: 3, startingDelay: 0, jitter: 'none' }), QUICK ? 100 : 300);
await async_('p-retry minTimeout 0', () => pRetry(flaky(), { retries: 2, minTimeout: 0, randomize: false }), QUICK ? 100 : 300);

// ------------------------------------------------------------ report

console.log(`retrycore ${rc.coreVersion()} on Node ${process.version}; ns per call, best of ${RUNS}\n`);
printRows();
console.log('\nratios to the floor of the same signature (goal <= 1.5x):');
console.log(`  delay ${ratio(dDelay, fDelay)}, classify ${ratio(dClass, fClass)}, breaker acquire+record ${ratio(dBr, fBr)}, budget withdraw ${ratio(dBu, fBu)}, fingerprint ${ratio(dFp, fFp)}`);
console.log(`execute vs cockatiel retry: ${ratio(eRc, eCock)}; breaker.execute vs cockatiel ConsecutiveBreaker: ${ratio(bRc, bCock)}`);
if (sink === 42) console.log('');

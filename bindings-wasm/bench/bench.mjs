// Per-call costs of retrycore-wasm in Node, in one run against:
//   - the wasm-bindgen floor: a no-op export of the same signature (floor()),
//     i.e. what crossing into this very module costs before anything is decided;
//   - the napi binding (the `retrycore` package, bindings-node) and its raw
//     Node-API floor;
//   - pure-JS peers: cockatiel and exponential-backoff.
// An hrtime loop, best of 7 runs, after warm-up.
//
//   make -C bindings-wasm bench          (BENCH_QUICK=1 for a short run)
//
// Issue 17's rows (bindings-node/bench/issue17.mjs: napi, wasm and the peers —
// cockatiel, opossum, fast-json-stable-stringify + sha256 — in the same rounds,
// medians of 15) run first; BENCH_ONLY=issue17 stops after them.
import { createRequire } from 'node:module';
import { QUICK, RUNS, createBench, fmt } from '../../bindings-node/bench/harness.mjs';
import * as cockatiel from 'cockatiel';
import { backOff } from 'exponential-backoff';
import CircuitBreakerOpossum from 'opossum';
import stableStringify from 'fast-json-stable-stringify';
import { runIssue17 } from '../../bindings-node/bench/issue17.mjs';

const require = createRequire(import.meta.url);
// RETRYCORE_WASM_DIST: another build of the package (e.g. one built with WASM_OPT_LEVEL=3).
const DIST = process.env.RETRYCORE_WASM_DIST || new URL('../dist', import.meta.url).pathname;
const W = require(`${DIST}/index.cjs`); // the wasm package (Node entry)
const glue = require(`${DIST}/node/retrycore_wasm.js`); // its wasm module, adapted by index.cjs
const N = require('../../bindings-node/index.cjs'); // the napi package
const napi = require('../../bindings-node/native.cjs');
const napiFloor = napi.floor();
// The floor exports exist only in the bench build (cargo feature `bench`, bench/floor.rs).
const wFloor = {
  delay: glue.NativePolicy.prototype.floorDelay,
  classify: glue.floorClassify,
  acquire: glue.NativeBreaker.prototype.floorAcquire,
  record: glue.NativeBreaker.prototype.floorRecord,
  withdraw: glue.NativeBudget.prototype.floorWithdraw,
  fingerprint: glue.floorFingerprint,
};
if (typeof wFloor.classify !== 'function') throw new Error(`${DIST} is not a bench build (make -C bindings-wasm bench builds one)`);

console.log(`retrycore-wasm ${W.coreVersion()} (${DIST}) and retrycore (napi) on Node ${process.version}`);
await runIssue17([['napi', N], ['wasm', W]], { cockatiel, Opossum: CircuitBreakerOpossum, stableStringify });
if (process.env.BENCH_ONLY === 'issue17') process.exit(0);

const { sync, async_, section, printRows } = createBench();
let sink = 0;
const ratios = [];

// ------------------------------------------------------------ decisions

section('decisions (explicit now): wasm floor | wasm | napi floor | napi');

const wPolicy = new W.RetryPolicy({ jitter: 'full' });
const nPolicy = new N.RetryPolicy({ jitter: 'full' });
const wNative = glue.NativePolicy.fromJson('{}', '1');
wNative.floorDelay = wFloor.delay;
const nNative = napi.NativePolicy.fromJson('{}', '1');
nNative.floorDelay = napiFloor.delay;
const fDelay = sync('wasm floor: method(number, number, number?) -> number', (i) => { sink += wNative.floorDelay(1 + (i & 7), 0.5); });
const dDelay = sync('wasm  policy.delay(retry, r)', (i) => { sink += wPolicy.delay(1 + (i & 7), 0.5); });
sync('napi floor: method(number, number, number?) -> number', (i) => { sink += nNative.floorDelay(1 + (i & 7), 0.5); });
const nDelay = sync('napi  policy.delay(retry, r)', (i) => { sink += nPolicy.delay(1 + (i & 7), 0.5); });
ratios.push(['delay', dDelay, fDelay, nDelay]);

const fClass = sync('wasm floor: fn(number, number) -> number', () => { sink += wFloor.classify(503, 0); });
const dClass = sync('wasm  classify(503) (cached verdict)', () => { sink += W.classify(503).retryable ? 1 : 0; });
sync('napi floor: fn(number, number) -> number', () => { sink += napiFloor.classify(503, 0); });
const nClass = sync('napi  classify(503) (cached verdict)', () => { sink += N.classify(503).retryable ? 1 : 0; });
ratios.push(['classify', dClass, fClass, nClass]);

const opts = { kind: 'count_based', minimumNumberOfCalls: 100, failureRateThreshold: 100 };
const wBreaker = new W.CircuitBreaker(opts);
const nBreaker = new N.CircuitBreaker(opts);
const wnb = new glue.NativeBreaker('{}', false);
wnb.floorAcquire = wFloor.acquire;
wnb.floorRecord = wFloor.record;
const nnb = new napi.NativeBreaker('{}', false);
nnb.floorAcquire = napiFloor.acquire;
nnb.floorRecord = napiFloor.record;
const fBr = sync('wasm floor: acquire(number) + record(number ×4)', (i) => { const p = wnb.floorAcquire(i); wnb.floorRecord(p, 0, 1, i); });
const dBr = sync('wasm  breaker.tryAcquire(now) + record(p, Outcome.success, ms, now)', (i) => { const p = wBreaker.tryAcquire(i); wBreaker.record(p, 0, 1, i); });
sync('napi floor: acquire(number) + record(number ×4)', (i) => { const p = nnb.floorAcquire(i); nnb.floorRecord(p, 0, 1, i); });
const nBr = sync('napi  breaker.tryAcquire(now) + record(p, Outcome.success, ms, now)', (i) => { const p = nBreaker.tryAcquire(i); nBreaker.record(p, 0, 1, i); });
ratios.push(['breaker acquire+record', dBr, fBr, nBr]);

const bopts = { kind: 'token_bucket', capacity: 500, retryCost: 0 };
const wBudget = new W.Budget(bopts);
const nBudget = new N.Budget(bopts);
const wnu = new glue.NativeBudget('{"kind":"token_bucket"}', false);
wnu.floorWithdraw = wFloor.withdraw;
const nnu = new napi.NativeBudget('{"kind":"token_bucket"}', false);
nnu.floorWithdraw = napiFloor.withdraw;
const fBu = sync('wasm floor: method(number, number) -> number', (i) => { sink += wnu.floorWithdraw(i, 5); });
const dBu = sync("wasm  budget.tryWithdraw('server_error', now)", (i) => { sink += wBudget.tryWithdraw('server_error', i) ? 1 : 0; });
sync('napi floor: method(number, number) -> number', (i) => { sink += nnu.floorWithdraw(i, 5); });
const nBu = sync("napi  budget.tryWithdraw('server_error', now)", (i) => { sink += nBudget.tryWithdraw('server_error', i) ? 1 : 0; });
ratios.push(['budget withdraw', dBu, fBu, nBu]);

const body = { amount: 1000, currency: 'usd', customer: 'cus_42', items: [{ sku: 'a', qty: 2 }] };
const bodyText = JSON.stringify(body);
const fo = { method: 'POST', path: '/v1/charges' };
const fFp = sync('wasm floor: fn(string, string, string, undefined, bool) -> string(64)', () => { sink += wFloor.fingerprint('POST', '/v1/charges', bodyText, undefined, false).length; });
const dFp = sync('wasm  fingerprint(small object, {method, path})', () => { sink += W.fingerprint(body, fo).length; });
sync('napi floor: fn(string, string, string, undefined, bool) -> string(64)', () => { sink += napiFloor.fingerprint('POST', '/v1/charges', bodyText, undefined, false).length; });
const nFp = sync('napi  fingerprint(small object, {method, path})', () => { sink += N.fingerprint(body, fo).length; });
ratios.push(['fingerprint', dFp, fFp, nFp]);

section('the same with now omitted (performance.now() filled in)');
sync('wasm  breaker.tryAcquire() + record(p, 0)', () => { const p = wBreaker.tryAcquire(); wBreaker.record(p, 0); });
sync('napi  breaker.tryAcquire() + record(p, 0)', () => { const p = nBreaker.tryAcquire(); nBreaker.record(p, 0); });
sync("wasm  budget.tryWithdraw('server_error')", () => { sink += wBudget.tryWithdraw('server_error') ? 1 : 0; });
sync('performance.now() alone', () => { sink += performance.now(); });

section('peers, synchronous decisions');
const expo = new cockatiel.ExponentialBackoff({ initialDelay: 100, maxDelay: 20_000 });
sync('cockatiel ExponentialBackoff.next(ctx).duration', () => { sink += expo.next({ attempt: 1 }).duration; });

// ------------------------------------------------------------ execute, success path

section('execute on a function that resolves at once (await per call)');
const ok = () => 1;
const wExec = new W.RetryPolicy({ maxAttempts: 3 });
const nExec = new N.RetryPolicy({ maxAttempts: 3 });
const eW = await async_('wasm  policy.execute(fn)', () => wExec.execute(ok));
const eN = await async_('napi  policy.execute(fn)', () => nExec.execute(ok));
const cockRetry = cockatiel.retry(cockatiel.handleAll, { maxAttempts: 2, backoff: new cockatiel.ExponentialBackoff() });
const eC = await async_('cockatiel retry(handleAll).execute(fn)', () => cockRetry.execute(ok));
await async_('exponential-backoff backOff(fn)', () => backOff(ok, { numOfAttempts: 3 }));
await async_('baseline: await (async () => fn())()', async () => ok());

section('a breaker-guarded call, success path');
const wBrExec = new W.CircuitBreaker({ kind: 'consecutive', failureThreshold: 5 });
const nBrExec = new N.CircuitBreaker({ kind: 'consecutive', failureThreshold: 5 });
const bW = await async_('wasm  breaker.execute(fn) (consecutive)', () => wBrExec.execute(ok));
await async_('napi  breaker.execute(fn) (consecutive)', () => nBrExec.execute(ok));
const cockCons = cockatiel.circuitBreaker(cockatiel.handleAll, { halfOpenAfter: 10_000, breaker: new cockatiel.ConsecutiveBreaker(5) });
const bC = await async_('cockatiel ConsecutiveBreaker execute(fn)', () => cockCons.execute(ok));

section('one zero-delay retry, then success (no timer wanted)');
const flaky = () => {
  let n = 0;
  return () => {
    if (n++ === 0) throw Object.assign(new Error('refused'), { code: 'ECONNREFUSED' });
    return 1;
  };
};
const wZero = new W.RetryPolicy({ maxAttempts: 3 }).testing(3, 0);
const nZero = new N.RetryPolicy({ maxAttempts: 3 }).testing(3, 0);
await async_('wasm  testing(3, 0).execute(flaky)', () => wZero.execute(flaky()), QUICK ? 2e3 : 2e4);
await async_('napi  testing(3, 0).execute(flaky)', () => nZero.execute(flaky()), QUICK ? 2e3 : 2e4);
const cockZero = cockatiel.retry(cockatiel.handleAll, { maxAttempts: 2, backoff: new cockatiel.ConstantBackoff(0) });
await async_('cockatiel retry ConstantBackoff(0)', () => cockZero.execute(flaky()), QUICK ? 100 : 300);
await async_('exponential-backoff startingDelay 0', () => backOff(flaky(), { numOfAttempts: 3, startingDelay: 0, jitter: 'none' }), QUICK ? 100 : 300);

// ------------------------------------------------------------ report

const wasmBytes = require('node:fs').statSync(`${DIST}/node/retrycore_wasm_bg.wasm`).size;
console.log(`retrycore-wasm ${W.coreVersion()} (${DIST}, .wasm ${wasmBytes} bytes) on Node ${process.version}; ns per call, best of ${RUNS}\n`);
printRows();
console.log('\n| decision | wasm | wasm floor | wasm / floor (goal ≤ 2×) | napi |');
console.log('| --- | --- | --- | --- | --- |');
for (const [name, d, f, n] of ratios) console.log(`| ${name} | ${fmt(d)} | ${fmt(f)} | ${(d / f).toFixed(2)}× | ${fmt(n)} |`);
console.log(`\ndelay decision: ${fmt(dDelay)} (goal ≤ 15 ns)`);
console.log(`execute: wasm ${fmt(eW)}, napi ${fmt(eN)}, cockatiel ${fmt(eC)}; breaker.execute: wasm ${fmt(bW)}, cockatiel ${fmt(bC)}`);
if (sink === 42) console.log('');

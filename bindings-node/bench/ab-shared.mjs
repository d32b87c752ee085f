// One build, before/after in one process: a breaker a policy shares takes the old path
// (tryAcquire + a reported success every call); an unshared one skips what the core allows.
import { createRequire } from 'node:module';
import * as cockatiel from 'cockatiel';
const require = createRequire(import.meta.url);
const rc = require(process.env.IMPL === 'wasm' ? '../../bindings-wasm/dist/index.cjs' : '../index.cjs');
const ok = () => 1;
const rows = [];
const add = (who, fn) => rows.push({ who, fn, samples: [] });
for (const [kind, opts] of [['consecutive', { kind: 'consecutive', failureThreshold: 5 }], ['count_based', {}]]) {
  const shared = new rc.CircuitBreaker(opts);
  globalThis[`keep_${kind}`] = new rc.RetryPolicy({ breaker: shared });
  add(`${kind}: shared (old path)`, () => shared.execute(ok));
  const own = new rc.CircuitBreaker(opts);
  add(`${kind}: unshared (new)`, () => own.execute(ok));
}
const cc = cockatiel.circuitBreaker(cockatiel.handleAll, { halfOpenAfter: 10_000, breaker: new cockatiel.ConsecutiveBreaker(5) });
add('cockatiel ConsecutiveBreaker(5)', () => cc.execute(ok));
const cs = cockatiel.circuitBreaker(cockatiel.handleAll, { halfOpenAfter: 10_000, breaker: new cockatiel.SamplingBreaker({ threshold: 0.5, duration: 10_000 }) });
add('cockatiel SamplingBreaker', () => cs.execute(ok));
async function run(row, n) { const t0 = process.hrtime.bigint(); for (let i = 0; i < n; i++) await row.fn(); return Number(process.hrtime.bigint() - t0) / n; }
for (const r of rows) await run(r, 200000);
for (let k = 0; k < 9; k++) for (const r of rows) r.samples.push(await run(r, 200000));
for (const r of rows) { const s = [...r.samples].sort((a, b) => a - b); console.log(`${r.who.padEnd(34)} ${s[4].toFixed(0).padStart(5)} ns (min ${s[0].toFixed(0)}, max ${s[8].toFixed(0)})`); }

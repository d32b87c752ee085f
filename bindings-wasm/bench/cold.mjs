// Cold start in Node: import + first decision, retrycore-wasm against cockatiel
// (and the napi package), each in fresh processes, alternating, medians.
// The time is taken inside the child, from before the import to after the
// first decision, so Node's own start-up is not in it.
//
//   node bench/cold.mjs            (RUNS=n, default 21 per package)
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(new URL('.', import.meta.url));
const DIST = process.env.RETRYCORE_WASM_DIST || fileURLToPath(new URL('../dist', import.meta.url));
const RUNS = Number(process.env.RUNS || 21);

const children = {
  // The CommonJS entry (what `require('retrycore-wasm')` loads in Node): it compiles the module synchronously.
  'retrycore-wasm': `const t0 = performance.now(); const rc = require(${JSON.stringify(DIST + '/index.cjs')});
    const d = new rc.RetryPolicy({ maxAttempts: 3 }).delay(1, 0.5); const t1 = performance.now();
    if (!(d >= 0)) throw new Error('no decision'); console.log(t1 - t0);`,
  retrycore: `const t0 = performance.now(); const rc = require(${JSON.stringify(here + '../../bindings-node/index.cjs')});
    const d = new rc.RetryPolicy({ maxAttempts: 3 }).delay(1, 0.5); const t1 = performance.now();
    if (!(d >= 0)) throw new Error('no decision'); console.log(t1 - t0);`,
  cockatiel: `const t0 = performance.now(); const c = require('cockatiel');
    const d = new c.ExponentialBackoff().next({ attempt: 1, result: undefined }).duration; const t1 = performance.now();
    if (!(d >= 0)) throw new Error('no decision'); console.log(t1 - t0);`,
};

const times = Object.fromEntries(Object.keys(children).map((k) => [k, []]));
for (let i = 0; i < RUNS; i++) {
  for (const [name, code] of Object.entries(children)) {
    const out = execFileSync(process.execPath, ['-e', code], { cwd: here, encoding: 'utf8' });
    times[name].push(Number(out.trim()));
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const peer = median(times.cockatiel);
console.log(`cold start in Node ${process.version}: import + first decision, median of ${RUNS} fresh processes`);
for (const [name, xs] of Object.entries(times)) {
  const m = median(xs);
  console.log(`  ${name.padEnd(16)} ${m.toFixed(1).padStart(7)} ms  (range ${Math.min(...xs).toFixed(1)}–${Math.max(...xs).toFixed(1)})  ${(m / peer).toFixed(2)}× cockatiel`);
}

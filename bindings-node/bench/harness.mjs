// The hrtime loop both JS benches use (bindings-node/bench/bench.mjs and
// bindings-wasm/bench/bench.mjs): warm up, then the best of RUNS timed runs,
// in ns per call. BENCH_QUICK=1 shortens every loop.
export const QUICK = process.env.BENCH_QUICK === '1';
export const RUNS = QUICK ? 3 : 7;

export function createBench() {
  const rows = [];
  function sync(name, fn, n = QUICK ? 2e5 : 2e6) {
    for (let i = 0; i < 1e5; i++) fn(i);
    let best = Infinity;
    for (let r = 0; r < RUNS; r++) {
      const t0 = process.hrtime.bigint();
      for (let i = 0; i < n; i++) fn(i);
      best = Math.min(best, Number(process.hrtime.bigint() - t0) / n);
    }
    rows.push([name, best]);
    return best;
  }
  async function async_(name, fn, n = QUICK ? 2e4 : 2e5, warm = Math.min(n, 2e4)) {
    for (let i = 0; i < warm; i++) await fn(i);
    let best = Infinity;
    for (let r = 0; r < RUNS; r++) {
      const t0 = process.hrtime.bigint();
      for (let i = 0; i < n; i++) await fn(i);
      best = Math.min(best, Number(process.hrtime.bigint() - t0) / n);
    }
    rows.push([name, best]);
    return best;
  }
  const section = (t) => rows.push([`## ${t}`, null]);
  function printRows() {
    for (const [name, v] of rows) {
      if (v === null) console.log(`\n${name}`);
      else console.log(`  ${name.padEnd(72)} ${fmt(v)}`);
    }
  }
  return { sync, async_, section, printRows };
}

export const fmt = (v) => (v >= 1000 ? `${(v / 1000).toFixed(2)} µs` : `${v.toFixed(1)} ns`);

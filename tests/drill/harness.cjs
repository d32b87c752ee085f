'use strict';
// Helpers of the JS drill and concurrency tests (tests/js/drill.test.cjs,
// tests/js/concurrency.test.cjs):
//   loadImpl()     the implementation RETRYCORE_IMPL selects (tests/js/impl.cjs), or a
//                  reason to skip when RETRYCORE_IMPL=wasm and the wasm package is not built
//   startServer()  tests/drill/server.py (the one drill server, Python) as a child process
//
// The server needs a Python that can `import retrycore`: RETRYCORE_DRILL_PYTHON, else the
// venv `make -C bindings-python test` builds (bindings-python/.venv/test), else python3.
// Without one the drill is skipped with a message saying so — or fails when
// RETRYCORE_DRILL_REQUIRE=1 (set it where the Python binding is built first, as `make test` does).
const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const readline = require('node:readline');

const root = path.join(__dirname, '..', '..');

function loadImpl() {
  const which = process.env.RETRYCORE_IMPL || 'node';
  if (which === 'wasm') {
    const dist = path.join(root, 'bindings-wasm', 'dist');
    const need = ['index.cjs', 'cjs/retrycore.js', 'node/retrycore_wasm.js'].map((f) => path.join(dist, f));
    const missing = need.filter((f) => !fs.existsSync(f));
    if (missing.length > 0) {
      return { rc: null, which, skip: `RETRYCORE_IMPL=wasm but the wasm package is not built (missing ${missing.map((f) => path.relative(root, f)).join(', ')}): run make -C bindings-wasm build` };
    }
  }
  return { rc: require(path.join(root, 'tests', 'js', 'impl.cjs')), which, skip: null };
}

/** A Python that imports retrycore, or null. */
function findPython() {
  const candidates = [
    process.env.RETRYCORE_DRILL_PYTHON,
    path.join(root, 'bindings-python', '.venv', 'test', 'bin', 'python'),
    'python3',
  ].filter(Boolean);
  for (const py of candidates) {
    const r = spawnSync(py, ['-c', 'import retrycore'], { stdio: 'ignore', timeout: 20_000 });
    if (r.status === 0) return py;
  }
  return null;
}

/** Why the drill cannot run here (no Python binding), or null. Throws when RETRYCORE_DRILL_REQUIRE=1. */
function pythonOrSkip() {
  const py = findPython();
  if (py !== null) return { python: py, skip: null };
  const why = 'the drill server (tests/drill/server.py) needs a Python that can `import retrycore`: run make -C bindings-python test, or set RETRYCORE_DRILL_PYTHON';
  if (process.env.RETRYCORE_DRILL_REQUIRE === '1') throw new Error(why);
  return { python: null, skip: why };
}

/** Starts the drill server; resolves to {base, plan, get, post, stop}. */
async function startServer(python, args = []) {
  const child = spawn(python, [path.join(__dirname, 'server.py'), '--max-seconds', '90', ...args], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const line = await new Promise((resolve, reject) => {
    const rl = readline.createInterface({ input: child.stdout });
    const timer = setTimeout(() => reject(new Error('the drill server did not print its port within 20 s')), 20_000);
    rl.once('line', (l) => {
      clearTimeout(timer);
      rl.close();
      resolve(l);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the drill server exited with ${code} before printing its port`));
    });
  });
  const m = /^PORT (\d+)$/.exec(line);
  if (!m) throw new Error(`the drill server printed ${JSON.stringify(line)}`);
  const base = `http://127.0.0.1:${m[1]}`;
  const get = async (p) => (await fetch(base + p, { signal: AbortSignal.timeout(10_000) })).json();
  const post = async (p, body) =>
    (await fetch(base + p, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' }, signal: AbortSignal.timeout(10_000) })).json();
  const stop = () =>
    new Promise((resolve) => {
      if (child.exitCode !== null) return resolve();
      const t = setTimeout(() => child.kill('SIGKILL'), 10_000);
      child.once('exit', () => {
        clearTimeout(t);
        resolve();
      });
      child.stdin.end(); // the server stops when its stdin closes
    });
  return { base, plan: await get('/plan'), get, post, stop };
}

/** Runs `f` over `items`, `n` at a time; resolves to the results in order. */
async function pool(items, n, f) {
  const out = new Array(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await f(items[i], i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, lane));
  return out;
}

module.exports = { root, loadImpl, findPython, pythonOrSkip, startServer, pool };

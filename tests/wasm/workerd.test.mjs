// workerd (the npm package `miniflare`, which runs the `workerd` binary from
// npm): a Worker module imports the package by name — the module list is
// built the way wrangler resolves it, through the exports map's `workerd`
// entry, the .wasm as a CompiledWasm module — and is exercised over loopback
// HTTP: a policy decision, every vector file, and policy.execute with a real
// fetch from inside the Worker to the test server.
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Miniflare } from 'miniflare';
import { startServer, DIST, REPO, vectorFiles } from './harness/server.mjs';
import { wrapCjs } from './harness/wrap.mjs';
import { checkVectors, checkExecute } from './harness/check.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const ROOT = '/worker'; // module names are paths below this virtual root

/** The package's files below node_modules/retrycore-wasm, as workerd modules. */
function packageModules() {
  const pkg = JSON.parse(fs.readFileSync(path.join(DIST, 'package.json'), 'utf8'));
  const entry = pkg.exports['.'].workerd;
  assert.ok(entry, 'the exports map has a workerd entry');
  const mods = [];
  const seen = new Set();
  const add = (rel) => {
    rel = path.posix.normalize(rel);
    if (seen.has(rel)) return;
    seen.add(rel);
    const file = path.join(DIST, rel);
    const name = `${ROOT}/node_modules/retrycore-wasm/${rel}`;
    if (rel.endsWith('.wasm')) {
      mods.push({ type: 'CompiledWasm', path: name, contents: fs.readFileSync(file) });
      return;
    }
    const text = fs.readFileSync(file, 'utf8');
    mods.push({ type: 'ESModule', path: name, contents: text });
    // Follow the module's relative imports, as a bundler would.
    for (const m of text.matchAll(/(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s*['"](\.{1,2}\/[^'"]+)['"]|(?:^|\n)\s*import\s*['"](\.{1,2}\/[^'"]+)['"]/g)) {
      add(path.posix.join(path.posix.dirname(rel), m[1] ?? m[2]));
    }
  };
  add(entry);
  // The bare specifier `retrycore-wasm` names the entry, as the resolver maps it.
  mods.push({
    type: 'ESModule',
    path: `${ROOT}/retrycore-wasm`,
    contents: `export * from './node_modules/retrycore-wasm/${path.posix.normalize(entry)}';\nexport { default } from './node_modules/retrycore-wasm/${path.posix.normalize(entry)}';\n`,
  });
  return { entry, mods };
}

test('workerd', { timeout: 180_000 }, async (t) => {
  const server = await startServer();
  const { entry, mods } = packageModules();
  t.diagnostic(`exports["."].workerd = ${entry}; ${mods.length} modules`);
  const mf = new Miniflare({
    compatibilityDate: '2026-04-01',
    host: '127.0.0.1',
    port: 0,
    modulesRoot: ROOT,
    modules: [
      { type: 'ESModule', path: `${ROOT}/worker.mjs`, contents: fs.readFileSync(path.join(here, 'workerd', 'worker.mjs'), 'utf8') },
      { type: 'ESModule', path: `${ROOT}/harness/suite.mjs`, contents: fs.readFileSync(path.join(here, 'harness', 'suite.mjs'), 'utf8') },
      { type: 'ESModule', path: `${ROOT}/gen/vectors.test.mjs`, contents: wrapCjs(fs.readFileSync(path.join(REPO, 'tests', 'js', 'vectors.test.cjs'), 'utf8')) },
      { type: 'Text', path: `${ROOT}/gen/vectors.txt`, contents: JSON.stringify(vectorFiles()) },
      ...mods,
    ],
  });
  try {
    const base = await mf.ready; // http://127.0.0.1:<port>/ — real loopback HTTP below, not dispatchFetch
    await t.test('a request answered with a policy decision', async () => {
      const r = await fetch(new URL('/decide?status=503&retryAfter=2', base));
      const body = await r.json();
      assert.ok(!body.error, body.error);
      assert.equal(r.status, 503);
      assert.equal(r.headers.get('retry-after'), '2');
      assert.equal(body.gate.action, 'proceed');
      assert.equal(body.decision.action, 'retry');
      assert.equal(body.decision.category, 'overloaded');
      assert.equal(body.decision.delay, 2000);
      assert.equal(body.key, 'order-1001:charge:v1');
      assert.equal(body.verdict.category, 'server_error');
      const r2 = await fetch(new URL('/decide?status=404', base));
      assert.equal(r2.status, 200);
      const b2 = await r2.json();
      assert.equal(b2.decision.action, 'give_up');
      assert.equal(b2.decision.reason, 'not_retryable');
    });
    await t.test('every vector file', async (tt) => {
      const v = await (await fetch(new URL('/vectors', base))).json();
      assert.ok(!v.error, v.error);
      tt.diagnostic(checkVectors('workerd', v));
    });
    await t.test('execute with a real fetch from the Worker', async (tt) => {
      const target = `${server.url}/flaky/workerd`;
      const e = await (await fetch(new URL(`/execute?target=${encodeURIComponent(target)}`, base))).json();
      tt.diagnostic(checkExecute('workerd', e, server.flaky.get('workerd')));
    });
  } finally {
    await mf.dispose();
    await server.close();
  }
});

// The idempotency middleware in workerd (the npm package `miniflare`, as workerd.test.mjs
// runs it): a Worker whose fetch handler is withIdempotency + MemoryStore, the package and
// its `./stores` and `./middleware` entries resolved by name through the exports map (the
// `workerd` condition, else `import`), driven over loopback HTTP with the scenario of
// harness/idempotency.mjs (concurrent duplicates run once, 409 mid-handler, replay).
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Miniflare } from 'miniflare';
import { DIST } from './harness/server.mjs';
import { scenario, checkScenario } from './harness/idempotency.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const ROOT = '/worker'; // module names are paths below this virtual root

/** The modules of the package's entries `specs` (bare names), each with what it imports. */
function packageModules(specs) {
  const pkg = JSON.parse(fs.readFileSync(path.join(DIST, 'package.json'), 'utf8'));
  const mods = [];
  const seen = new Set();
  const add = (rel) => {
    rel = path.posix.normalize(rel);
    if (seen.has(rel)) return;
    seen.add(rel);
    const name = `${ROOT}/node_modules/retrycore-wasm/${rel}`;
    if (rel.endsWith('.wasm')) {
      mods.push({ type: 'CompiledWasm', path: name, contents: fs.readFileSync(path.join(DIST, rel)) });
      return;
    }
    const text = fs.readFileSync(path.join(DIST, rel), 'utf8');
    mods.push({ type: 'ESModule', path: name, contents: text });
    for (const m of text.matchAll(/(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s*['"](\.{1,2}\/[^'"]+)['"]|(?:^|\n)\s*import\s*['"](\.{1,2}\/[^'"]+)['"]/g)) {
      add(path.posix.join(path.posix.dirname(rel), m[1] ?? m[2]));
    }
  };
  const entries = {};
  for (const spec of specs) {
    const sub = spec === 'retrycore-wasm' ? '.' : `.${spec.slice('retrycore-wasm'.length)}`;
    const e = pkg.exports[sub];
    assert.ok(e, `the exports map has ${sub}`);
    const entry = path.posix.normalize(e.workerd ?? e.import);
    entries[spec] = entry;
    add(entry);
    const target = `./${path.posix.relative(path.posix.dirname(spec), `node_modules/retrycore-wasm/${entry}`)}`;
    mods.push({ type: 'ESModule', path: `${ROOT}/${spec}`, contents: `export * from '${target}';\nexport { default } from '${target}';\n` });
  }
  return { entries, mods };
}

test('idempotency middleware in workerd', { timeout: 180_000 }, async (t) => {
  const { entries, mods } = packageModules(['retrycore-wasm', 'retrycore-wasm/stores', 'retrycore-wasm/middleware']);
  t.diagnostic(`entries ${JSON.stringify(entries)}; ${mods.length} modules`);
  const mf = new Miniflare({
    compatibilityDate: '2026-04-01',
    host: '127.0.0.1',
    port: 0,
    modulesRoot: ROOT,
    modules: [
      { type: 'ESModule', path: `${ROOT}/worker.mjs`, contents: fs.readFileSync(path.join(here, 'idempotency', 'worker.mjs'), 'utf8') },
      { type: 'ESModule', path: `${ROOT}/harness/idempotency.mjs`, contents: fs.readFileSync(path.join(here, 'harness', 'idempotency.mjs'), 'utf8') },
      ...mods,
    ],
  });
  try {
    const base = String(await mf.ready).replace(/\/$/, ''); // real loopback HTTP, not dispatchFetch
    const out = await scenario((req) => fetch(req), base, 'workerd-');
    t.diagnostic(checkScenario(assert, 'workerd', out));
  } finally {
    await mf.dispose();
  }
});

// The idempotency middleware in Deno (the npm package `deno`, as deno.test.mjs runs it):
// withIdempotency + MemoryStore bound to the wasm package with use(api), loaded from the
// package's files and by bare specifier through its exports map; the scenario of
// harness/idempotency.mjs (concurrent duplicates run once, 409 mid-handler, replay).
import test from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { DIST } from './harness/server.mjs';
import { checkScenario } from './harness/idempotency.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const DENO = path.join(here, 'node_modules', '.bin', 'deno');
const run = promisify(execFile);

test("the package's file list ships the stores and middleware, both ways", async () => {
  const { stdout } = await run('npm', ['pack', '--dry-run', '--json'], { cwd: DIST, maxBuffer: 16 << 20 });
  const files = JSON.parse(stdout)[0].files.map((f) => f.path);
  for (const f of ['stores.mjs', 'middleware.mjs', 'lib/stores/stores.cjs', 'lib/middleware/middleware.cjs']) assert.ok(files.includes(f), `${f} is not packed`);
  const pkg = JSON.parse(fs.readFileSync(path.join(DIST, 'package.json'), 'utf8'));
  for (const f of Object.values(pkg.exports).flatMap((e) => (typeof e === 'string' ? [e] : Object.values(e)))) {
    assert.ok(files.includes(path.posix.normalize(f)), `the exports map names ${f}, which is not packed`);
  }
});

test('idempotency middleware in deno', { timeout: 240_000 }, async (t) => {
  assert.ok(fs.existsSync(DENO), 'npm deno is missing: make -C bindings-wasm deps');
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'retrycore-deno-idem-'));
  fs.mkdirSync(path.join(tmp, 'node_modules'));
  fs.symlinkSync(DIST, path.join(tmp, 'node_modules', 'retrycore-wasm'), 'dir');
  fs.writeFileSync(path.join(tmp, 'deno.json'), JSON.stringify({ nodeModulesDir: 'manual' }));
  fs.copyFileSync(path.join(here, 'idempotency', 'deno.mjs'), path.join(tmp, 'run-package.mjs'));
  const env = { ...process.env, DENO_DIR: path.join(tmp, '.deno'), DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1' };
  const harness = pathToFileURL(path.join(here, 'harness', 'idempotency.mjs')).href;
  const deno = async (script, cwd, mode) => {
    const args = ['run', '--quiet', '--no-lock', `--allow-read=${DIST},${here},${tmp}`, script, harness, mode];
    const { stdout } = await run(DENO, args, { cwd, env, maxBuffer: 16 << 20, timeout: 120_000 });
    return JSON.parse(stdout.trim().split('\n').pop());
  };
  try {
    await t.test("the package's files (deno.mjs, stores.mjs, middleware.mjs)", async (tt) => {
      const r = await deno(path.join(here, 'idempotency', 'deno.mjs'), here, 'files');
      tt.diagnostic(checkScenario(assert, 'deno files', r.out));
    });
    await t.test('retrycore-wasm/stores and retrycore-wasm/middleware by name', async (tt) => {
      const r = await deno(path.join(tmp, 'run-package.mjs'), tmp, 'package');
      assert.match(r.resolved[0], /deno\.mjs$/, r.resolved[0]);
      assert.match(r.resolved[1], /stores\.mjs$/, r.resolved[1]);
      assert.match(r.resolved[2], /middleware\.mjs$/, r.resolved[2]);
      tt.diagnostic(checkScenario(assert, 'deno package', r.out));
    });
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
});

// Deno (the npm package `deno`, no download outside the registry): imports
// the web build (initSync with bytes, and init() with its default URL), the
// `deno` entry (the bundler build), and the package by name through
// node_modules and its exports map; each runs every vector file, and one a
// real-fetch execute against the loopback server.
import test from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { startServer, DIST } from './harness/server.mjs';
import { checkVectors, checkExecute } from './harness/check.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const DENO = path.join(here, 'node_modules', '.bin', 'deno');
const run = promisify(execFile);

test('deno', { timeout: 240_000 }, async (t) => {
  assert.ok(fs.existsSync(DENO), 'npm deno is missing: make -C bindings-wasm deps');
  const server = await startServer();
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'retrycore-deno-'));
  // A project whose node_modules holds the package, for the bare-specifier case.
  fs.mkdirSync(path.join(tmp, 'node_modules'));
  fs.symlinkSync(DIST, path.join(tmp, 'node_modules', 'retrycore-wasm'), 'dir');
  fs.writeFileSync(path.join(tmp, 'deno.json'), JSON.stringify({ nodeModulesDir: 'manual' }));
  fs.copyFileSync(path.join(here, 'deno', 'run.mjs'), path.join(tmp, 'run-package.mjs'));
  const env = { ...process.env, DENO_DIR: path.join(tmp, '.deno'), DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1' };
  const host = `127.0.0.1:${server.port}`;
  const deno = async (script, cwd, mode, exec) => {
    const args = ['run', '--quiet', '--no-lock', `--allow-net=${host}`, `--allow-import=${host}`, `--allow-read=${DIST},${here},${tmp}`, script, server.url, mode];
    if (exec) args.push('exec');
    const { stdout } = await run(DENO, args, { cwd, env, maxBuffer: 64 << 20, timeout: 120_000 });
    return JSON.parse(stdout.trim().split('\n').pop());
  };
  try {
    const { stdout } = await run(DENO, ['--version'], { env });
    t.diagnostic(stdout.split('\n')[0]);
    await t.test('web build, initSync(bytes): every vector file, execute with fetch', async (tt) => {
      const r = await deno(path.join(here, 'deno', 'run.mjs'), here, 'web-bytes', true);
      tt.diagnostic(checkVectors('deno web initSync', r.vectors));
      tt.diagnostic(checkExecute('deno web initSync', r.exec, server.flaky.get('deno-web-bytes')));
    });
    await t.test('web build, init() with its default URL: every vector file', async (tt) => {
      const r = await deno(path.join(here, 'deno', 'run.mjs'), here, 'web-init');
      tt.diagnostic(checkVectors('deno web init()', r.vectors));
    });
    await t.test('deno entry (bundler build, .wasm imported as a module): every vector file', async (tt) => {
      const r = await deno(path.join(here, 'deno', 'run.mjs'), here, 'deno-entry');
      tt.diagnostic(checkVectors('deno entry', r.vectors));
    });
    await t.test("import 'retrycore-wasm' resolves the `deno` condition", async (tt) => {
      const r = await deno(path.join(tmp, 'run-package.mjs'), tmp, 'package');
      assert.match(r.resolved, /retrycore-wasm\/deno\.mjs$|bindings-wasm\/dist\/deno\.mjs$/, `resolved to ${r.resolved}`);
      tt.diagnostic(checkVectors(`deno package (${path.basename(r.resolved)})`, r.vectors));
    });
  } finally {
    await server.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
});

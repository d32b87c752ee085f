// The package as a user gets it: `npm pack` of dist/, installed into a fresh
// directory, then loaded through its exports map — require and import (one
// instance), the shared smoke tests of the Node package with the name
// changed, the README quick start, the entry each condition resolves to
// (browser, worker, workerd, deno), initSync with bytes under `browser`,
// and the `types` entry type-checked by tsc.
import test from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { DIST, REPO } from './harness/server.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const run = promisify(execFile);
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const TSC = path.join(REPO, 'bindings-wasm', 'node_modules', '.bin', 'tsc');

test('package', { timeout: 180_000 }, async (t) => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'retrycore-wasm-pack-'));
  const node = async (args, opts = {}) => (await run(process.execPath, args, { cwd: tmp, timeout: 60_000, ...opts })).stdout.trim();
  try {
    const { stdout } = await run(npm, ['pack', DIST, '--pack-destination', tmp, '--loglevel=error'], { cwd: tmp });
    const tarball = stdout.trim().split('\n').pop();
    const size = fs.statSync(path.join(tmp, tarball)).size;
    t.diagnostic(`${tarball}: ${size} bytes`);
    await run(npm, ['init', '-y'], { cwd: tmp });
    await run(npm, ['install', '--no-audit', '--no-fund', '--loglevel=error', `./${tarball}`], { cwd: tmp });
    const installed = path.join(tmp, 'node_modules', 'retrycore-wasm');
    const files = fs.readdirSync(installed, { recursive: true }).filter((f) => fs.statSync(path.join(installed, f)).isFile());
    t.diagnostic(`${files.length} files: ${files.sort().join(' ')}`);

    // The Node package's own smoke tests, with the package name changed.
    for (const f of ['package-smoke.cjs', 'package-smoke.mjs']) {
      fs.writeFileSync(path.join(tmp, f), fs.readFileSync(path.join(REPO, 'tests', 'js', f), 'utf8').replaceAll("'retrycore'", "'retrycore-wasm'"));
    }
    fs.copyFileSync(path.join(here, 'quickstart.mjs'), path.join(tmp, 'quickstart.mjs'));

    await t.test('require()', async () => assert.match(await node(['package-smoke.cjs']), /require: ok/));
    await t.test('import, one instance with require()', async () => assert.match(await node(['package-smoke.mjs']), /import: ok/));
    await t.test('README quick start (browsers and edge)', async (tt) => {
      const out = await node(['quickstart.mjs']);
      tt.diagnostic(out);
      assert.match(out, /^200 created, key [0-9a-f-]{36}$/m);
      assert.match(out, /quickstart: ok/);
    });

    await t.test('each condition resolves its entry', async () => {
      const resolve = (cond, spec = 'retrycore-wasm') =>
        node([...(cond ? [`--conditions=${cond}`] : []), '--input-type=module', '-e', `console.log(import.meta.resolve(${JSON.stringify(spec)}))`]);
      const tail = async (cond, spec) => path.relative(installed, fileURLToPath(await resolve(cond, spec)));
      assert.equal(await tail(null), 'index.mjs');
      assert.equal(await node(['-e', "console.log(require.resolve('retrycore-wasm'))"]).then((p) => path.relative(installed, p)), 'index.cjs');
      assert.equal(await tail('browser'), 'web.mjs');
      assert.equal(await tail('worker'), 'web.mjs');
      assert.equal(await tail('workerd'), 'workerd.mjs');
      assert.equal(await tail('deno'), 'deno.mjs');
      assert.equal(await tail(null, 'retrycore-wasm/web'), 'web.mjs');
      assert.equal(await tail(null, 'retrycore-wasm/retrycore_wasm_bg.wasm'), path.join('web', 'retrycore_wasm_bg.wasm'));
    });

    await t.test('browser entry: not_initialized until initSync(bytes), then the API', async () => {
      const script = `
        import fs from 'node:fs';
        import { createRequire } from 'node:module';
        import * as rc from 'retrycore-wasm';
        let code = null;
        try { new rc.RetryPolicy(); } catch (e) { code = e.code; }
        const wasm = fs.readFileSync(new URL(import.meta.resolve('retrycore-wasm/retrycore_wasm_bg.wasm')));
        rc.initSync({ module: wasm });
        rc.initSync({ module: wasm }); // a second call is a no-op
        console.log(JSON.stringify({ code, delay: new rc.RetryPolicy({ jitter: 'none' }).delay(2, 0), cat: rc.classify(429).category, dflt: typeof rc.default.RetryPolicy }));`;
      const out = JSON.parse(await node(['--conditions=browser', '--input-type=module', '-e', script]));
      assert.deepEqual(out, { code: 'not_initialized', delay: 200, cat: 'overloaded', dflt: 'function' });
    });

    await t.test('types: a TypeScript user of the package type-checks', async () => {
      fs.writeFileSync(
        path.join(tmp, 'check.mts'),
        `import { init, initSync, RetryPolicy, CircuitBreaker, RetryError, type PolicyOptions, type Verdict } from 'retrycore-wasm';
         await init();
         const o: PolicyOptions = { maxAttempts: 3, initial: 100, jitter: 'full' };
         const p = new RetryPolicy(o);
         const v: Verdict = p.classify(503);
         const d: number = p.delay(1, 0.5);
         const b = new CircuitBreaker({ kind: 'consecutive', failureThreshold: 5 });
         const permit: number = b.tryAcquire();
         const e = new RetryError('x', { reason: 'r', attempts: 1, category: 'c', exhausted: true, key: 'k' });
         // retrycore-wasm/stores and /middleware: typed once bound to the API with use(api).
         import * as api from 'retrycore-wasm';
         import storesModule from 'retrycore-wasm/stores';
         import middlewareModule from 'retrycore-wasm/middleware';
         const stores = storesModule.use(api);
         const store = new stores.MemoryStore();
         const claim = await store.claim(null, 'k', 'fp');
         if (claim.executes) await claim.transaction(async () => { await claim.complete({ status: 201, body: 'x' }); });
         // @ts-expect-error a status is a number: the declarations are not \`any\`
         await claim.complete({ status: '201' });
         const handler = middlewareModule.use(api).withIdempotency(async (req: Request) => new Response(req.url), { store });
         const answered: Promise<Response> = handler(new Request('http://x'));
         export { v, d, permit, e, initSync, answered };\n`,
      );
      const options = { noEmit: true, strict: true, module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', lib: ['es2022', 'dom'], types: [] };
      fs.writeFileSync(path.join(tmp, 'tsconfig.json'), JSON.stringify({ compilerOptions: options, files: ['check.mts'] }));
      await run(TSC, ['-p', 'tsconfig.json'], { cwd: tmp }).catch((e) => {
        throw new Error(`tsc: ${e.stdout}${e.stderr}`);
      });
    });
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
});

// Headless Chromium (Debian's /usr/bin/chromium driven by playwright-core,
// which never downloads a browser): a page served from 127.0.0.1 loads the
// web build with init(), runs every vector file through the shared runner
// and a policy.execute with a real fetch (503 + Retry-After twice, then
// 200); a module Web Worker of that page does the same with initSync().
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { startServer } from './harness/server.mjs';
import { checkVectors, checkExecute } from './harness/check.mjs';

const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';

test('chromium', { timeout: 180_000 }, async (t) => {
  assert.ok(fs.existsSync(CHROMIUM), `${CHROMIUM} is missing: run scripts/install-wasm-toolchain.sh`);
  const server = await startServer();
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'retrycore-chromium-'));
  const ctx = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-quic', '--no-first-run', '--disable-component-update', '--disable-sync'],
  });
  let result;
  const logs = [];
  try {
    const page = await ctx.newPage();
    page.on('console', (m) => logs.push(`[console.${m.type()}] ${m.text()}`));
    page.on('pageerror', (e) => logs.push(`[pageerror] ${e.message}`));
    await page.goto(`${server.url}/browser/index.html`);
    result = await page.waitForFunction(() => window.__result, null, { timeout: 150_000, polling: 200 }).then((h) => h.jsonValue());
    t.diagnostic(`${ctx.browser()?.version?.() ?? ''} ${result.userAgent ?? ''}`);
  } finally {
    await ctx.close();
    await server.close();
    fs.rmSync(profile, { recursive: true, force: true });
  }
  if (logs.length) t.diagnostic(logs.join('\n').slice(0, 4000));
  assert.ok(!result.error, `the page failed: ${result.error}`);

  await t.test('page: init() fetches the .wasm; calls before it throw not_initialized', () => {
    assert.equal(result.page.beforeInit?.code, 'not_initialized');
    assert.ok(result.page.hasDocument);
  });
  await t.test('page: every vector file', (tt) => tt.diagnostic(checkVectors('chromium page', result.page.vectors)));
  await t.test('page: execute with a real fetch', (tt) => tt.diagnostic(checkExecute('chromium page', result.page.exec, server.flaky.get('page'))));
  await t.test('web worker: initSync with a compiled module, no DOM', () => {
    assert.ok(!result.worker.error, `the worker failed: ${result.worker.error}`);
    assert.equal(result.worker.hasDocument, false);
  });
  await t.test('web worker: every vector file', (tt) => tt.diagnostic(checkVectors('chromium worker', result.worker.vectors)));
  await t.test('web worker: execute with a real fetch', (tt) => tt.diagnostic(checkExecute('chromium worker', result.worker.exec, server.flaky.get('worker'))));
});

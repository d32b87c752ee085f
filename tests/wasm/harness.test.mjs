// The harness the browser, Deno and workerd tests run the vectors with
// (harness/suite.mjs: the shared runner over stand-ins for node:test,
// node:assert, node:fs, …) is itself checked here, in Node: over the wasm
// package it passes what `node --test tests/js/vectors.test.cjs` passes, and
// it fails when the implementation is wrong — a stand-in that passed
// everything would prove nothing.
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { DIST, REPO, vectorFiles, vectorList } from './harness/server.mjs';
import { runVectors, assertShim } from './harness/suite.mjs';
import { wrapCjs } from './harness/wrap.mjs';

const require = createRequire(import.meta.url);
const rc = require(path.join(DIST, 'index.cjs'));
const files = vectorFiles();
const runner = async () => {
  const src = wrapCjs(fs.readFileSync(path.join(REPO, 'tests', 'js', 'vectors.test.cjs'), 'utf8'));
  return (await import(`data:text/javascript,${encodeURIComponent(src)}`)).default;
};

test('over the wasm package: every vector file passes', async () => {
  const r = await runVectors({ api: rc, files, runner: await runner() });
  assert.deepEqual(r.failures, []);
  assert.equal(r.tests, vectorList().length + 1);
});

test('a wrong implementation fails', async () => {
  const wrong = { ...rc, parseDuration: (t) => rc.parseDuration(t) + 1e-9, classify: (...a) => ({ ...rc.classify(...a), category: 'unknown' }) };
  const r = await runVectors({ api: wrong, files, runner: await runner() });
  const failed = r.failures.map((f) => f.name.split(' ')[0]).sort();
  assert.ok(failed.some((n) => n.includes('duration')), failed.join());
  assert.ok(failed.some((n) => n.startsWith('classify')), failed.join());
});

test('assert stand-ins are as strict as node:assert/strict', () => {
  const cases = [
    [0, -0],
    [NaN, NaN],
    [{ a: 1 }, { a: 1, b: undefined }],
    [[1, 2], [1, 2]],
    [{ a: [1, { b: 2 }] }, { a: [1, { b: 3 }] }],
    [Object.create(null), {}],
    ['1', 1],
  ];
  for (const [a, b] of cases) {
    for (const m of ['equal', 'deepEqual']) {
      let node = true;
      let shim = true;
      try {
        assert[m](a, b);
      } catch {
        node = false;
      }
      try {
        assertShim[m](a, b);
      } catch {
        shim = false;
      }
      assert.equal(shim, node, `${m} of case ${cases.indexOf(cases.find((c) => c[0] === a))}`);
    }
  }
});

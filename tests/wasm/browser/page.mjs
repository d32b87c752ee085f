// The page: loads the web build with init() (which fetches the .wasm next to
// web.mjs), runs every vector file and a real-fetch execute, then the same
// inside a module Web Worker (no DOM). Reports through window.__result.
import * as rc from '/pkg/web.mjs';
import { loadVectorFiles, runAll } from '/harness/suite.mjs';
import runner from '/gen/vectors.test.mjs';

async function main() {
  let beforeInit = null;
  try {
    rc.classify(503);
  } catch (e) {
    beforeInit = { code: e.code, message: e.message };
  }
  await rc.init();
  await rc.init(); // twice is fine
  const files = await loadVectorFiles(location.origin);
  const page = await runAll({ rc, files, runner, flakyUrl: `${location.origin}/flaky/page` });
  page.beforeInit = beforeInit;
  page.hasDocument = typeof document !== 'undefined';
  page.files = Object.keys(files).length;
  const worker = await new Promise((resolve, reject) => {
    const w = new Worker('/browser/worker.mjs', { type: 'module' });
    w.onmessage = (e) => resolve(e.data);
    w.onerror = (e) => reject(new Error(`worker: ${e.message}`));
  });
  return { page, worker, userAgent: navigator.userAgent };
}

const out = document.getElementById('out');
main().then(
  (r) => {
    window.__result = r;
    out.textContent = JSON.stringify(r, null, 1);
  },
  (e) => {
    window.__result = { error: String((e && e.stack) || e) };
    out.textContent = window.__result.error;
  },
);

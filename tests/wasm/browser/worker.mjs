// A module Web Worker (edge-like: no DOM): compiles the .wasm itself and
// hands the module to initSync(), as edge runtimes do, then runs the same
// vectors and real-fetch execute as the page.
import * as rc from '/pkg/web.mjs';
import { loadVectorFiles, runAll } from '/harness/suite.mjs';
import runner from '/gen/vectors.test.mjs';

try {
  const module = await WebAssembly.compileStreaming(fetch('/pkg/web/retrycore_wasm_bg.wasm'));
  rc.initSync({ module });
  const files = await loadVectorFiles(self.location.origin);
  const r = await runAll({ rc, files, runner, flakyUrl: `${self.location.origin}/flaky/worker` });
  r.hasDocument = typeof document !== 'undefined';
  r.files = Object.keys(files).length;
  self.postMessage(r);
} catch (e) {
  self.postMessage({ error: String((e && e.stack) || e) });
}

// Runs in Deno: loads the package one way (argv[1]), runs every vector file
// through the shared runner and, with `exec`, a real-fetch execute; prints
// the result as JSON. Started by tests/wasm/deno.test.mjs.
//
//   web-bytes   dist/web.mjs + initSync(the .wasm's bytes read with Deno.readFile)
//   web-init    dist/web.mjs + await init()  (fetches the file: URL next to web.mjs)
//   deno-entry  dist/deno.mjs (the bundler build: Deno imports the .wasm as a module)
//   package     the bare specifier `retrycore-wasm`, resolved by Deno through
//               node_modules and the package's exports map (the `deno` condition)
const [base, mode, exec] = Deno.args;
const dist = new URL('../../../bindings-wasm/dist/', import.meta.url);
let rc;
let resolved = null;
if (mode === 'web-bytes') {
  rc = await import(new URL('web.mjs', dist).href);
  rc.initSync(await Deno.readFile(new URL('web/retrycore_wasm_bg.wasm', dist)));
} else if (mode === 'web-init') {
  rc = await import(new URL('web.mjs', dist).href);
  await rc.init();
} else if (mode === 'deno-entry') {
  rc = await import(new URL('deno.mjs', dist).href);
} else if (mode === 'package') {
  const spec = 'retrycore-wasm';
  resolved = import.meta.resolve(spec);
  rc = await import(spec);
} else {
  throw new Error(`unknown mode ${mode}`);
}
const { loadVectorFiles, runVectors, executeFlaky } = await import(new URL('/harness/suite.mjs', base).href);
const runner = (await import(new URL('/gen/vectors.test.mjs', base).href)).default;
const files = await loadVectorFiles(base);
const out = { mode, deno: Deno.version.deno, resolved, vectors: await runVectors({ api: rc, files, runner }) };
if (exec) out.exec = await executeFlaky(rc, new URL(`/flaky/deno-${mode}`, base).href);
console.log(JSON.stringify(out));

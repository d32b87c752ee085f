// Assembles the npm package `retrycore-wasm` in dist/ from the build:
//
//   dist/{web,bundler,node}/   wasm-bindgen's three targets (scripts/build-wasm.sh)
//   dist/cjs/retrycore.js      lib/retrycore.ts of bindings-node compiled by tsc (CommonJS)
//   dist/esm/retrycore.js      the same, as an ES module
//   dist/{cjs,esm}/generated.js  its lib/generated.ts (the core's kind lists), which it imports
//
//   dist/lib/{stores,middleware}/*.cjs  bindings-node's stores and middleware, unbound (use(api)),
//                              and dist/{stores,middleware}.mjs wrapping them as ES modules
//
// and writes: dist/{cjs,esm}/backend.js (lib/backend.mjs after the hot-path
// wrappers generated from bindings-js/src/surface.rs), the entry
// files (js/*: index.cjs, web.mjs, deno.mjs, workerd.mjs; index.mjs is
// generated with every public name), index.d.ts (bindings-node/lib/api.d.ts,
// the hand-written public declarations both packages ship, plus the wasm-only
// init/initSync block), README.md and
// package.json with the `exports` map.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.join(root, 'dist');
const read = (p) => fs.readFileSync(path.join(root, p), 'utf8');
const write = (p, text) => fs.writeFileSync(path.join(dist, p), text);

for (const need of ['web/retrycore_wasm.js', 'bundler/retrycore_wasm.js', 'node/retrycore_wasm.js', 'cjs/retrycore.js', 'esm/retrycore.js', 'cjs/generated.js', 'esm/generated.js']) {
  if (!fs.existsSync(path.join(dist, need))) throw new Error(`dist/${need} is missing: run \`make -C bindings-wasm build\``);
}

// ------------------------------------------------------------ the glue's string guard
//
// wasm-bindgen's release glue copies a string argument into linear memory
// with passStringToWasm0 without checking that it is a string: given a
// number or an object it reallocates a zero-size (dangling) allocation, and
// dlmalloc then writes outside its heap — a trap, or a silently corrupted
// instance. The TS layer checks every string before it reaches the backend,
// and this guard makes the backend itself safe too (tests/wasm/
// backend-hostile.test.mjs): a TypeError with code `invalid_type` before
// anything is allocated. It costs one typeof per string argument.
const GUARD_AT = 'function passStringToWasm0(arg, malloc, realloc) {\n';
const GUARD =
  "    if (typeof arg !== 'string') { const e = new TypeError(`expected a string argument, got ${arg === null ? 'null' : typeof arg}`); e.code = 'invalid_type'; throw e; }\n";
for (const glue of ['web/retrycore_wasm.js', 'bundler/retrycore_wasm_bg.js', 'node/retrycore_wasm.js']) {
  const file = path.join(dist, glue);
  const text = fs.readFileSync(file, 'utf8');
  if (text.includes(GUARD_AT + GUARD)) continue;
  const n = text.split(GUARD_AT).length - 1;
  if (n !== 1) throw new Error(`dist/${glue}: expected passStringToWasm0 once, found ${n} (a new wasm-bindgen?)`);
  fs.writeFileSync(file, text.replace(GUARD_AT, GUARD_AT + GUARD));
}

// ------------------------------------------------------------ backend.js, entries

// The hot-path wrappers of lib/backend.mjs are generated from the members
// declared `hot` in bindings-js/src/surface.rs (the surface's one
// declaration): wasm answers those as a number, NaN on error; each wrapper
// throws `takeError()` then, turns 1 / 0 into the boolean and 0 into the
// void the surface promises, and fills in a `now` of -1.
function hotWrappers(declarations) {
  const hot = {};
  const members = [];
  let cls = '';
  for (const raw of declarations.split('\n')) {
    const line = raw.trim();
    const open = /^class (\w+) =/.exec(line);
    if (open) cls = open[1];
    else if (line === 'end') cls = '';
    const m = /^(?:fn|ref|mut) (\w+)\((.*)\) -> hot (\(\)|\w+)/.exec(line);
    if (!m) continue;
    // A group `Path{a: kind, …; absent, …}` passes its fields before `;` as parameters.
    const flat = m[2].replace(/\w+(?:::\w+)*\{([^;}]*)(?:;[^}]*)?\}/g, '$1');
    const params = flat.split(',').map((p) => p.split(':')[0].trim()).filter(Boolean);
    (hot[cls] ||= []).push(m[1]);
    members.push({ cls, name: m[1], params, ret: m[3] });
  }
  const letters = { '': 'f', NativePolicy: 'P', NativeBreaker: 'B', NativeBudget: 'U' };
  const body = members.map(({ cls, name, params, ret }) => {
    const target = `${cls ? letters[cls] : 'backend'}.${name} = function`;
    const raw = cls ? `${letters[cls].toLowerCase()}.${name}.call(this, ${params.map((p) => (p === 'now' ? 'now(t)' : p)).join(', ')})` : `f.${name}(${params.join(', ')})`;
    const sig = params.map((p) => (p === 'now' ? 't' : p)).join(', ');
    const end =
      ret === '()' ? `if (${raw} !== 0) fail();` : ret === 'bool' ? `const x = ${raw};\n    return x === 1 ? true : x === 0 ? false : fail();` : `const x = ${raw};\n    return x === x ? x : fail();`;
    if (!letters[cls] && cls) throw new Error(`bindings-js/src/surface.rs: no wrapper prefix for the hot paths of ${cls}`);
    return `  ${target} (${sig}) {\n    ${end}\n  };`;
  });
  const classes = Object.keys(hot).filter((c) => c);
  if (!classes.includes('NativePolicy')) throw new Error('bindings-js/src/surface.rs: the adapter marks NativePolicy as wrapped, which has no hot path');
  const [fns, methods] = [body.filter((_, i) => !members[i].cls), body.filter((_, i) => members[i].cls)];
  return (
    '// @generated by bindings-wasm/scripts/package.mjs from the `hot` members of\n' +
    '// bindings-js/src/surface.rs, followed by lib/backend.mjs; do not edit.\n\n' +
    "/** The names `adapt` wraps, by class ('' = module functions). */\n" +
    `export const HOT = Object.freeze(${JSON.stringify(hot).replaceAll('"', "'").replaceAll(',', ', ').replaceAll(':', ': ')});\n\n` +
    '/** Wraps the hot paths: the glue\'s classes in place (once), the module functions in `backend`. */\n' +
    'function wrapHot(w, backend, now, fail) {\n' +
    '  const f = {};\n' +
    `  for (const n of HOT[''] || []) f[n] = w[n];\n` +
    fns.join('\n') +
    '\n' +
    `  const [${classes.map((c) => letters[c]).join(', ')}] = [${classes.map((c) => `w.${c}.prototype`).join(', ')}];\n` +
    '  if (P[WRAPPED]) return;\n' +
    '  const raw = {};\n' +
    '  for (const cls of Object.keys(HOT).filter((c) => c)) {\n' +
    '    raw[cls] = {};\n' +
    '    for (const n of HOT[cls]) {\n' +
    "      if (typeof w[cls].prototype[n] !== 'function') throw new Error(`retrycore-wasm: the wasm module has no ${cls}.${n}`);\n" +
    '      raw[cls][n] = w[cls].prototype[n];\n' +
    '    }\n' +
    '  }\n' +
    `  const [${classes.map((c) => letters[c].toLowerCase()).join(', ')}] = [${classes.map((c) => `raw.${c}`).join(', ')}];\n` +
    '  // Explicit arities: V8 inlines these wrappers into their callers.\n' +
    methods.join('\n') +
    '\n  Object.defineProperty(P, WRAPPED, { value: true });\n}\n\n'
  );
}

const backend = hotWrappers(fs.readFileSync(path.join(root, '..', 'bindings-js', 'src', 'surface.rs'), 'utf8')) + read('lib/backend.mjs');
write('esm/backend.js', backend);
const names = [...backend.matchAll(/^export (?:function|const) (\w+)/gm)].map((m) => m[1]);
write(
  'cjs/backend.js',
  "'use strict';\n" + backend.replace(/^export (function|const) /gm, '$1 ') + `\nmodule.exports = { ${names.join(', ')} };\n`,
);
write('cjs/package.json', '{ "type": "commonjs" }\n');
write('esm/package.json', '{ "type": "module" }\n');
for (const f of ['index.cjs', 'web.mjs', 'deno.mjs', 'workerd.mjs']) write(f, read(`js/${f}`));

// ------------------------------------------------------------ stores and middleware
//
// bindings-node/lib/stores/stores.cjs and lib/middleware/middleware.cjs take the API with
// `use(api)` and need no Node module for MemoryStore, a store passed in, and the fetch
// wrapper: `(await import('retrycore-wasm/middleware')).default.use(api)` on Workers and Deno
// (docs/idempotency.md). They ship as they are (require) and wrapped as ES modules (import),
// one instance each way: the middleware's `require('../stores/stores.cjs')` is the stores
// module beside it.
const UNBOUND = [
  ['stores', 'bindings-node/lib/stores/stores.cjs', null],
  ['middleware', 'bindings-node/lib/middleware/middleware.cjs', ['../stores/stores.cjs', './stores.mjs']],
];
for (const [name, src, dep] of UNBOUND) {
  const text = fs.readFileSync(path.join(root, '..', src), 'utf8');
  fs.mkdirSync(path.join(dist, 'lib', name), { recursive: true });
  write(`lib/${name}/${path.basename(src)}`, text);
  const exported = /\nmodule\.exports = \{ ([\w, ]+) \};\n$/.exec(text);
  if (!exported) throw new Error(`${src}: expected a last line \`module.exports = { ... };\``);
  const needs = dep
    ? `import dep from '${dep[1]}';\n` +
      `const require = (id) => {\n  if (id === '${dep[0]}') return dep;\n  throw new Error(\`retrycore-wasm/${name}: \${id} cannot be loaded here\`);\n};\n`
    : `const require = (id) => {\n  throw new Error(\`retrycore-wasm/${name}: \${id} cannot be loaded here (pass a store)\`);\n};\n`;
  write(
    `${name}.mjs`,
    `// ${src} as an ES module (retrycore-wasm/${name}); generated by scripts/package.mjs.\n` +
      needs +
      'const module = { exports: {} };\n' +
      `(function (module, exports, require) {\n${text}})(module, module.exports, require);\n` +
      'export default module.exports;\n' +
      // PROTOCOL is set by use(): read it from what use() returns, not as a binding.
      `export const { ${exported[1].split(', ').filter((n) => n !== 'PROTOCOL').join(', ')} } = module.exports;\n`,
  );
}

// Their declarations: bindings-node's (lib/{stores,middleware}/index.d.ts, the bound modules'
// types) beside the sources, and at the top a module whose `use(api)` returns them.
for (const [name] of UNBOUND) {
  write(`lib/${name}/index.d.ts`, read(`../bindings-node/lib/${name}/index.d.ts`));
  write(
    `${name}.d.ts`,
    `// retrycore-wasm/${name}: bindings-node's retrycore/${name}, unbound; generated by scripts/package.mjs.\n` +
      `// \`use(api)\` binds it to this package's API: (await import('retrycore-wasm/${name})).default.use(api).\n` +
      `import type * as Bound from './lib/${name}/index';\n` +
      'export declare function use(api: unknown): typeof Bound;\n' +
      'declare const unbound: { use: typeof use };\n' +
      'export default unbound;\n',
  );
}

const require = createRequire(import.meta.url);
const api = require(path.join(dist, 'index.cjs'));
const publicNames = Object.keys(api).filter((n) => !n.startsWith('_') && n !== 'setBackend').sort();
write(
  'index.mjs',
  '// retrycore-wasm for Node\'s import: the same single instance as index.cjs.\n' +
    '// Generated by scripts/package.mjs (make build).\n' +
    "import api from './index.cjs';\n\n" +
    `export const {\n${publicNames.map((n) => `  ${n},`).join('\n')}\n} = api;\n\nexport default api;\n`,
);

// ------------------------------------------------------------ index.d.ts

export const WASM_BLOCK_START = '// ---- retrycore-wasm only: loading the WebAssembly module';
const dts =
  '// bindings-node/lib/api.d.ts (make -C bindings-wasm build): the same declarations as the\n' +
  '// `retrycore` package, plus init/initSync at the end.\n' +
  read('../bindings-node/lib/api.d.ts') +
  `
${WASM_BLOCK_START}
/** Where the WebAssembly module comes from. */
export type InitInput = string | URL | Request | Response | BufferSource | WebAssembly.Module;
/**
 * Loads the WebAssembly module: from \`input\` (a URL, a \`Request\`, a
 * \`Response\` or a promise of one, bytes, a compiled \`WebAssembly.Module\`,
 * or \`{ module_or_path }\`), else fetched from next to the package's web
 * entry. Resolves at once where it is already loaded (Node, Deno, workerd).
 */
export declare function init(input?: InitInput | Promise<InitInput> | { module_or_path: InitInput | Promise<InitInput> }): Promise<void>;
/**
 * Loads the WebAssembly module synchronously from bytes or a compiled
 * \`WebAssembly.Module\` (edge runtimes import \`.wasm\` files as modules).
 */
export declare function initSync(input: BufferSource | WebAssembly.Module | { module: BufferSource | WebAssembly.Module }): void;
`;
write('index.d.ts', dts);
// retrycore/integrations' declarations, verbatim (they import the API's types from './index').
write('integrations.d.ts', read('../bindings-node/integrations.d.ts'));

// ------------------------------------------------------------ package.json, README

const cargo = fs.readFileSync(path.join(root, '..', 'Cargo.toml'), 'utf8');
const version = /\[workspace\.package\][^[]*?\nversion = "([^"]+)"/.exec(cargo)?.[1];
if (!version) throw new Error('no [workspace.package] version in Cargo.toml');
// retrycore/integrations (bindings-node/lib/integrations), compiled with the API by the Makefile.
const INTEGRATIONS = fs.readdirSync(path.join(dist, 'cjs', 'integrations')).filter((f) => f.endsWith('.js') && f !== 'conforms.js').sort();
const pkg = {
  name: 'retrycore-wasm',
  version,
  description:
    'One retry-policy engine for every runtime: backoff with jitter, failure classification, Retry-After, retry budgets, circuit breakers and idempotency keys (WebAssembly build of the Rust core for browsers, Deno, edge runtimes and Node).',
  license: 'MIT OR Apache-2.0',
  repository: 'https://github.com/retrycore/retrycore',
  keywords: ['retry', 'backoff', 'circuit-breaker', 'idempotency', 'resilience', 'wasm', 'cloudflare-workers', 'deno'],
  main: './index.cjs',
  module: './web.mjs',
  types: './index.d.ts',
  exports: {
    '.': {
      types: './index.d.ts',
      workerd: './workerd.mjs',
      deno: './deno.mjs',
      browser: './web.mjs',
      worker: './web.mjs',
      import: './index.mjs',
      require: './index.cjs',
      default: './web.mjs',
    },
    './web': { types: './index.d.ts', default: './web.mjs' },
    './stores': { types: './stores.d.ts', import: './stores.mjs', require: './lib/stores/stores.cjs', default: './stores.mjs' },
    './middleware': {
      types: './middleware.d.ts',
      import: './middleware.mjs',
      require: './lib/middleware/middleware.cjs',
      default: './middleware.mjs',
    },
    // Node (import and require): the CommonJS build, one instance with index.cjs; elsewhere the ES modules of web.mjs.
    './integrations': { types: './integrations.d.ts', node: './cjs/integrations/index.js', default: './esm/integrations/index.js' },
    './retrycore_wasm_bg.wasm': './web/retrycore_wasm_bg.wasm',
    './package.json': './package.json',
  },
  files: [
    'index.cjs',
    'index.mjs',
    'index.d.ts',
    'integrations.d.ts',
    'web.mjs',
    'deno.mjs',
    'workerd.mjs',
    'stores.mjs',
    'middleware.mjs',
    'stores.d.ts',
    'middleware.d.ts',
    'lib/stores/stores.cjs',
    'lib/stores/index.d.ts',
    'lib/middleware/middleware.cjs',
    'lib/middleware/index.d.ts',
    'cjs/retrycore.js',
    'cjs/generated.js',
    'cjs/limiters.js',
    'cjs/reads.js',
    'cjs/saga.js',
    'cjs/backend.js',
    'cjs/package.json',
    ...INTEGRATIONS.map((f) => `cjs/integrations/${f}`),
    'esm/retrycore.js',
    'esm/generated.js',
    'esm/limiters.js',
    'esm/reads.js',
    'esm/saga.js',
    'esm/backend.js',
    'esm/package.json',
    ...INTEGRATIONS.map((f) => `esm/integrations/${f}`),
    'web/retrycore_wasm.js',
    'web/retrycore_wasm_bg.wasm',
    'web/package.json',
    'bundler/retrycore_wasm.js',
    'bundler/retrycore_wasm_bg.js',
    'bundler/retrycore_wasm_bg.wasm',
    'bundler/package.json',
    'node/retrycore_wasm.js',
    'node/retrycore_wasm_bg.wasm',
    'node/package.json',
  ],
  engines: { node: '>=18' },
};
write('package.json', JSON.stringify(pkg, null, 2) + '\n');
write(
  'README.md',
  `# retrycore-wasm

The WebAssembly build of [retrycore](https://github.com/retrycore/retrycore):
one retry-policy engine (backoff with jitter, failure classification,
Retry-After, retry budgets, circuit breakers, idempotency keys) for browsers,
Web Workers, Deno, Cloudflare Workers and Node, with the same API as the
\`retrycore\` Node package.

\`\`\`js
import { init, RetryPolicy } from 'retrycore-wasm';

await init(); // browsers: fetches the .wasm; a no-op where it is already loaded
const policy = new RetryPolicy({ maxAttempts: 4, initial: 200 });
const res = await policy.execute(({ key, signal }) =>
  fetch('/api/orders', { method: 'POST', headers: { 'Idempotency-Key': key }, signal }),
);
\`\`\`

See docs/js.md in the repository for the entry points of each runtime.
`,
);
console.log(`package.mjs: retrycore-wasm ${version} assembled in dist/ (${publicNames.length} public names)`);

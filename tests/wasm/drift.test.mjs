// The wasm package's surfaces cannot drift from the Node package's:
//
// 1. the public API: dist/index.d.ts says what bindings-node/index.d.ts
//    says (both are tsc's declarations of bindings-node/lib/retrycore.ts),
//    line for line, apart from the header comment and the wasm-only
//    init/initSync block; names, option keys and error codes are also
//    compared one by one so that a failure says what drifted;
// 2. the runtime exports: the names index.cjs exports are those of
//    bindings-node/index.mjs, plus init and initSync;
// 3. the low-level backend: the wasm module, as adapted by backend.js,
//    has every function, class, method, getter and static of
//    bindings-node/native.d.ts, and its generated .d.ts has the same
//    parameters (names, optionality, types) and return types.
// The core's tables (categories, error codes, lint codes, …) are not the
// backends': both packages read them from bindings-node/lib/generated.ts,
// which bindings-js/tests/surface.rs holds to retrycore_js::info().
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { DIST, REPO } from './harness/server.mjs';

const require = createRequire(import.meta.url);
const NODE_PKG = path.join(REPO, 'bindings-node');
const read = (p) => fs.readFileSync(p, 'utf8');

// ------------------------------------------------------------ the public .d.ts

const WASM_BLOCK = '// ---- retrycore-wasm only: loading the WebAssembly module';

/** The declarations without the generated-file header (leading // lines). */
function body(text) {
  const lines = text.split('\n');
  let i = 0;
  while (i < lines.length && lines[i].startsWith('//')) i++;
  return lines.slice(i).join('\n');
}

/** Exported names, and the keys of every exported interface, of a .d.ts. */
function publicSurface(text) {
  const names = new Set();
  const interfaces = {};
  const noComments = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  for (const m of noComments.matchAll(/^export (?:declare )?(?:abstract )?(?:function|class|const|let|type|interface|enum) (\w+)/gm)) names.add(m[1]);
  for (const m of noComments.matchAll(/^export (?:declare )?interface (\w+)[^{]*\{([\s\S]*?)^\}/gm)) {
    interfaces[m[1]] = [...m[2].matchAll(/^\s+(?:readonly )?(\w+)\??:/gm)].map((k) => k[1]).sort();
  }
  return { names, interfaces };
}

/** The string literals passed as error codes in the shared TS layer. */
function tsErrorCodes(ts) {
  const codes = new Set();
  for (const m of ts.matchAll(/coreError\('([a-z_]+)'/g)) codes.add(m[1]);
  for (const m of ts.matchAll(/super\(message, '([a-z_]+)'/g)) codes.add(m[1]);
  return codes;
}

test('public .d.ts: the same declarations as the Node package', () => {
  const nodeDts = read(path.join(NODE_PKG, 'index.d.ts'));
  const wasmDts = read(path.join(DIST, 'index.d.ts'));
  const at = wasmDts.indexOf(WASM_BLOCK);
  assert.ok(at > 0, 'dist/index.d.ts has the wasm-only block');
  const wasmShared = wasmDts.slice(0, at).replace(/\n+$/, '\n');
  const a = publicSurface(body(nodeDts));
  const b = publicSurface(body(wasmShared));
  const missing = [...a.names].filter((n) => !b.names.has(n));
  const extra = [...b.names].filter((n) => !a.names.has(n));
  assert.deepEqual({ missing, extra }, { missing: [], extra: [] }, 'exported names');
  for (const [iface, keys] of Object.entries(a.interfaces)) {
    assert.deepEqual(b.interfaces[iface], keys, `option keys of ${iface}`);
  }
  assert.ok(Object.keys(a.interfaces).length > 10 && a.interfaces.PolicyOptions.includes('maxAttempts'), 'the parser sees the option interfaces');
  // And the whole text, line for line.
  assert.equal(body(wasmShared), body(nodeDts), 'dist/index.d.ts drifted from bindings-node/index.d.ts (are both built from the current lib/retrycore.ts? make -C bindings-node build)');
  // The wasm-only block declares exactly init and initSync (and their input type).
  const own = publicSurface(wasmDts.slice(at)).names;
  assert.deepEqual([...own].sort(), ['InitInput', 'init', 'initSync']);
});

test('error codes: the TS layer and the core are shared', () => {
  const ts = read(path.join(NODE_PKG, 'lib', 'retrycore.ts'));
  const codes = tsErrorCodes(ts);
  assert.ok(codes.has('invalid_type') && codes.has('retry_exhausted') && codes.has('breaker_open'), [...codes].join());
  // The compiled copies of both packages carry the same literals.
  for (const f of [path.join(DIST, 'cjs', 'retrycore.js'), path.join(DIST, 'esm', 'retrycore.js')]) {
    const js = read(f);
    for (const c of codes) assert.ok(js.includes(`'${c}'`), `${path.relative(REPO, f)} lacks the code ${c}`);
  }
});

// ------------------------------------------------------------ runtime exports

test('runtime exports: the Node package names, plus init and initSync', () => {
  const mjs = read(path.join(NODE_PKG, 'index.mjs'));
  const list = /export const \{([\s\S]*?)\}/.exec(mjs)[1].split(',').map((s) => s.trim()).filter(Boolean);
  const wasm = require(path.join(DIST, 'index.cjs'));
  const names = Object.keys(wasm).filter((n) => !n.startsWith('_') && n !== 'setBackend');
  assert.deepEqual(names.filter((n) => n !== 'init' && n !== 'initSync').sort(), list.sort());
  assert.equal(typeof wasm.init, 'function');
  assert.equal(typeof wasm.initSync, 'function');
  // index.mjs (generated) exports the same names.
  const wmjs = read(path.join(DIST, 'index.mjs'));
  const wlist = /export const \{([\s\S]*?)\}/.exec(wmjs)[1].split(',').map((s) => s.trim()).filter(Boolean);
  assert.deepEqual(wlist.sort(), names.sort());
});

// ------------------------------------------------------------ the backend surface

/** Splits `a, b: X<y, z>, c` at top-level commas. */
function splitTop(s, sep = ',') {
  const out = [];
  let depth = 0;
  let cur = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if ('(<[{'.includes(c)) depth++;
    else if (')>]}'.includes(c) && !(c === '>' && s[i - 1] === '=')) depth--;
    if (depth === 0 && s.startsWith(sep, i)) {
      out.push(cur.trim());
      cur = '';
      i += sep.length - 1;
      continue;
    }
    cur += c;
  }
  if (cur.trim()) out.push(cur.trim());
  return out;
}

const normName = (n) => n.replace(/_/g, '').toLowerCase();

/** A type, normalized: members of a union sorted, `undefined` dropped where the parameter is optional. */
function normType(t, optional) {
  const parts = splitTop(t.replace(/\s+/g, ' ').trim(), '|').map((p) => p.trim());
  return parts.filter((p) => !(optional && p === 'undefined')).sort().join(' | ');
}

function normParams(s) {
  return splitTop(s).map((p) => {
    const m = /^(\.\.\.)?(\w+)(\?)?\s*:\s*([\s\S]+)$/.exec(p);
    assert.ok(m, `cannot read the parameter ${p}`);
    return { name: normName(m[2]), optional: Boolean(m[3]), type: normType(m[4], Boolean(m[3])) };
  });
}

/** `{ functions: {name: {params, ret}}, classes: {name: {ctor, methods, statics, getters}} }` of a .d.ts. */
function backendSurface(text) {
  const src = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  const functions = {};
  for (const m of src.matchAll(/^export (?:declare )?function (\w+)\(([^\n]*)\)\s*:\s*([^;\n]+);?$/gm)) {
    functions[m[1]] = { params: normParams(m[2]), ret: normType(m[3], false) };
  }
  const classes = {};
  for (const m of src.matchAll(/^export (?:declare )?class (\w+) \{([\s\S]*?)^\}/gm)) {
    const c = { ctor: null, methods: {}, statics: {}, getters: {} };
    for (const line of m[2].split('\n').map((l) => l.trim()).filter(Boolean)) {
      let x;
      if (line === 'private constructor();') continue; // no JS constructor (static factories only)
      else if ((x = /^constructor\((.*)\);?$/.exec(line))) c.ctor = normParams(x[1]);
      else if ((x = /^static (\w+)\((.*)\)\s*:\s*(.+?);?$/.exec(line))) c.statics[x[1]] = { params: normParams(x[2]), ret: normType(x[3], false) };
      else if ((x = /^get (\w+)\(\)\s*:\s*(.+?);?$/.exec(line))) c.getters[x[1]] = normType(x[2], false);
      else if ((x = /^readonly (\w+)\s*:\s*(.+?);?$/.exec(line))) c.getters[x[1]] = normType(x[2], false);
      else if (line === 'free(): void;' || line.startsWith('[Symbol.dispose]')) continue; // wasm-bindgen's own
      else if ((x = /^(\w+)\((.*)\)\s*:\s*(.+?);?$/.exec(line))) c.methods[x[1]] = { params: normParams(x[2]), ret: normType(x[3], false) };
      else assert.fail(`cannot read the class member: ${line}`);
    }
    classes[m[1]] = c;
  }
  return { functions, classes };
}

test('backend surface: the wasm module implements bindings-node/native.d.ts', async (t) => {
  const native = backendSurface(read(path.join(NODE_PKG, 'native.d.ts')));
  const glue = backendSurface(read(path.join(DIST, 'node', 'retrycore_wasm.d.ts')));
  const { HOT, INTERNAL } = require(path.join(DIST, 'cjs', 'backend.js'));
  const hot = (cls, name) => (HOT[cls] || []).includes(name);
  // napi only: `bound()`, the hot methods as functions bound to their object (bindings-node/src/bound.rs,
  // issue 17), which spare a Node-API call the unwrap of `this`; a wasm-bindgen call has none to spare, and
  // lib/retrycore.ts calls the methods where the backend has no `bound`.
  const napiOnly = (m) => m === 'bound';
  const backend = require(path.join(DIST, 'cjs', 'backend.js')).adapt(require(path.join(DIST, 'node', 'retrycore_wasm.js')));
  // As many classes as native.d.ts declares (seven today: NativeRng, NativeBreaker, NativeBudget, NativePolicy, NativeLimiter,
  // NativeCompensationRun, NativeDeadLetterReplay).
  const declared = (read(path.join(NODE_PKG, 'native.d.ts')).match(/^export declare class /gm) || []).length;
  assert.ok(Object.keys(native.functions).length > 20 && declared >= 7 && Object.keys(native.classes).length === declared, 'the parser sees native.d.ts');

  // Every difference is collected, so that one run names them all.
  const show = (x) => JSON.stringify(x);
  const same = (problems, what, a, b) => {
    if (show(a) !== show(b)) problems.push(`${what}:\n    native.d.ts ${show(b)}\n    wasm        ${show(a)}`);
  };

  await t.test('functions', () => {
    const problems = [];
    for (const [name, f] of Object.entries(native.functions)) {
      if (typeof backend[name] !== 'function') problems.push(`backend.${name} is missing`);
      const g = glue.functions[name];
      if (!g) {
        problems.push(`the wasm module does not export ${name}`);
        continue;
      }
      same(problems, `${name}: parameters`, g.params, f.params);
      if (!hot('', name)) same(problems, `${name}: return type`, g.ret, f.ret);
    }
    for (const n of Object.keys(glue.functions)) {
      if (!(n in native.functions) && !INTERNAL.includes(n)) problems.push(`the wasm module exports ${n}, which native.d.ts does not have`);
    }
    assert.deepEqual(problems, []);
  });

  await t.test('classes', () => {
    const problems = [];
    for (const [cls, c] of Object.entries(native.classes)) {
      const g = glue.classes[cls];
      const C = backend[cls];
      if (!g || typeof C !== 'function') {
        problems.push(`the wasm module does not export class ${cls}`);
        continue;
      }
      same(problems, `${cls} constructor`, g.ctor, c.ctor);
      for (const [s, f] of Object.entries(c.statics)) {
        if (typeof C[s] !== 'function' || !g.statics[s]) {
          problems.push(`${cls}.${s} is missing`);
          continue;
        }
        same(problems, `${cls}.${s}: parameters`, g.statics[s].params, f.params);
        same(problems, `${cls}.${s}: return type`, g.statics[s].ret, f.ret);
      }
      for (const [m, f] of Object.entries(c.methods)) {
        if (napiOnly(m)) continue;
        if (typeof C.prototype[m] !== 'function' || !g.methods[m]) {
          problems.push(`${cls}.prototype.${m} is missing`);
          continue;
        }
        same(problems, `${cls}.${m}: parameters`, g.methods[m].params, f.params);
        if (!hot(cls, m)) same(problems, `${cls}.${m}: return type`, g.methods[m].ret, f.ret);
        else if (C.prototype[m].length !== f.params.length) problems.push(`${cls}.${m}: the adapted method takes ${C.prototype[m].length} parameters`);
      }
      for (const [gname, type] of Object.entries(c.getters)) {
        if (typeof Object.getOwnPropertyDescriptor(C.prototype, gname)?.get !== 'function') problems.push(`${cls}.${gname} is not a getter`);
        same(problems, `${cls}.${gname}: type`, g.getters[gname], type);
      }
      for (const n of [...Object.keys(g.methods), ...Object.keys(g.statics), ...Object.keys(g.getters)]) {
        if (!(n in c.methods) && !(n in c.statics) && !(n in c.getters)) problems.push(`${cls}.${n} is not in native.d.ts`);
      }
    }
    assert.deepEqual(problems, []);
  });

  await t.test('NativePolicy.free(id) frees a session, never the policy', () => {
    const p = backend.NativePolicy.fromJson('{}', '1');
    const id = p.begin('k', undefined, undefined, undefined, undefined, undefined);
    p.free(id);
    p.free(id);
    assert.throws(() => p.key(id), (e) => e.code === 'invalid_state');
    assert.equal(p.delay(1, 0, undefined), 0);
  });
});

'use strict';
// The public declarations (bindings-node/lib/api.d.ts, shipped as index.d.ts
// by both packages) and the implementation (lib/retrycore.ts) cannot
// disagree: lib/conforms.ts makes tsc fail when they do. Proven here on a
// copy of lib/: it compiles as it is, and each kind of disagreement fails
// with the name of what disagrees.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const root = path.join(__dirname, '..', '..');
const node = path.join(root, 'bindings-node');
const tsc = ['bindings-node', 'bindings-wasm'].map((d) => path.join(root, d, 'node_modules', 'typescript', 'lib', 'tsc.js')).find((p) => fs.existsSync(p));

/** Compiles a copy of lib/ after `edit(dir)`; answers tsc's status and output. */
function compile(edit) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'retrycore-conforms-'));
  try {
    fs.cpSync(path.join(node, 'lib'), path.join(dir, 'lib'), { recursive: true });
    fs.copyFileSync(path.join(node, 'tsconfig.json'), path.join(dir, 'tsconfig.json'));
    edit(dir);
    const r = spawnSync(process.execPath, [tsc, '-p', dir, '--noEmit', '--skipLibCheck', 'false'], { encoding: 'utf8' });
    return { status: r.status, out: r.stdout + r.stderr };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function replace(dir, file, from, to) {
  const p = path.join(dir, 'lib', file);
  const text = fs.readFileSync(p, 'utf8');
  assert.ok(text.includes(from), `${file} no longer contains ${JSON.stringify(from)}: update this test`);
  fs.writeFileSync(p, text.replace(from, to));
}

test('the TypeScript compiler is installed (make -C bindings-node deps)', () => {
  assert.ok(tsc, 'typescript is in neither bindings-node/node_modules nor bindings-wasm/node_modules');
});

test('lib/ compiles as it is', { skip: !tsc }, () => {
  const r = compile(() => {});
  assert.equal(r.status, 0, r.out);
});

test('a declared method the implementation lacks fails', { skip: !tsc }, () => {
  const r = compile((d) => replace(d, 'retrycore.ts', '  recordWithoutPermit(', '  recordWithoutPermitRenamed('));
  assert.notEqual(r.status, 0);
  assert.match(r.out, /conforms\.ts.*TS2344/);
  assert.match(r.out, /recordWithoutPermitRenamed/);
});

test('a declared parameter type the implementation does not accept fails', { skip: !tsc }, () => {
  const r = compile((d) => replace(d, 'api.d.ts', 'export declare function validateKey(key: string', 'export declare function validateKey(key: string | number'));
  assert.notEqual(r.status, 0);
  assert.match(r.out, /conforms\.ts.*TS2344/);
  assert.match(r.out, /validateKey/);
});

test('an undeclared public export or member fails', { skip: !tsc }, () => {
  const r = compile((d) => {
    fs.appendFileSync(path.join(d, 'lib', 'retrycore.ts'), '\nexport function undeclaredHelper(): void {}\n');
    replace(d, 'retrycore.ts', '  toJSON(): Record<string, unknown> {', '  undeclaredMember(): void {}\n  toJSON(): Record<string, unknown> {');
  });
  assert.notEqual(r.status, 0);
  assert.match(r.out, /"undeclaredHelper"/);
  assert.match(r.out, /"undeclaredMember"/);
});

test('an implementation answering more than its declared type fails', { skip: !tsc }, () => {
  const r = compile((d) => replace(d, 'retrycore.ts', 'export function coreVersion(): string {', 'export function coreVersion(): string | number {'));
  assert.notEqual(r.status, 0);
  assert.match(r.out, /conforms\.ts.*TS2344/);
});

test('a generated wrapper is held to the declarations too', { skip: !tsc }, () => {
  const r = compile((d) => replace(d, 'generated.ts', '  level(now?: unknown): Record<string, number> {', '  level(now?: unknown): Record<string, string> {'));
  assert.notEqual(r.status, 0);
  assert.match(r.out, /conforms\.ts.*TS2344/);
});

'use strict';
// The declarations of retrycore/stores and retrycore/middleware (bindings-node/lib/*/index.d.ts)
// type a typical use, and refuse a wrong one: tsc --strict over both.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const impl = require('./impl.cjs');
const { root } = require('./_servers.cjs');

const lib = path.join(root, 'bindings-node', 'lib');
const tsc = path.join(root, 'bindings-node', 'node_modules', 'typescript', 'bin', 'tsc');

const source = (extra) => `
import { MemoryStore, PostgresStore } from ${JSON.stringify(path.join(lib, 'stores', 'index'))};
import { withIdempotency, idempotency } from ${JSON.stringify(path.join(lib, 'middleware', 'index'))};
export async function f(conn: unknown): Promise<Response> {
  const store = new PostgresStore({ leaseMs: 1000 });
  const claim = await store.claim(conn, 'k', 'fp');
  if (claim.executes) {
    await claim.transaction(async () => {
      await claim.complete({ status: 201, headers: [['content-type', 'text/plain']], body: 'x' });
    });
  }
  const h = withIdempotency(async (req: Request, env: string) => new Response(env), { store: new MemoryStore() });
  idempotency({ maxBody: 1024 });
  ${extra}
  return h(new Request('http://x'), 'env');
}
`;

function compile(text) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'retrycore-types.'));
  try {
    fs.writeFileSync(path.join(dir, 'use.ts'), text);
    const args = [tsc, '--noEmit', '--strict', '--target', 'es2022', '--module', 'commonjs', '--lib', 'es2022,dom', path.join(dir, 'use.ts')];
    return spawnSync(process.execPath, args, { encoding: 'utf8' });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

test('the stores and middleware declarations type a typical use and refuse a wrong one', { skip: impl.IMPL !== 'node' && 'napi only' }, () => {
  const good = compile(source(''));
  assert.equal(good.status, 0, good.stdout + good.stderr);
  const bad = compile(source("await claim.complete({ status: '201' });"));
  assert.notEqual(bad.status, 0);
  assert.match(bad.stdout, /TS2322/);
});
